"""The info panel's figures (reach recomputed with Pinocchio FK) and the joint range colours."""
import math
import re

import numpy as np
import pytest

from robokin_ros.core.classroom.workspace import sample_positions
from robokin_ros.core.robot import RobotModel
from robokin_ros.studio.joint_colours import LOCKED, NEUTRAL, joint_shades, range_colour
from robokin_ros.studio.robot_info import RATED_PAYLOAD_KG, UNKNOWN, product_of, robot_info

SAMPLES = 800


@pytest.mark.parametrize("name", ["panda", "ur5"])
def test_reach_is_the_largest_sampled_radius_from_the_base_axis(request, name):
    robot = request.getfixturevalue(name)
    info = robot_info(robot, SAMPLES)
    # the same seeded samples, placed one by one with Pinocchio instead of the batched chain product
    radii = [np.hypot(*robot.fk(q).translation[:2]) for q in sample_positions(robot, SAMPLES, seed=0)]
    assert info.reach == pytest.approx(max(radii), abs=1e-9)
    assert robot_info(robot, SAMPLES).reach == info.reach                     # seeded: the same every time


def test_payload_known_for_embedded_arms_and_none_otherwise(panda, ur5):
    assert robot_info(panda, 50).payload == RATED_PAYLOAD_KG["Panda"] == 3.0
    assert robot_info(ur5, 50).payload == 5.0
    # the same arm under another name still says what it is (its URDF's <robot name="panda">) ...
    renamed = RobotModel.from_urdf_string(panda.urdf_xml, panda.base_frame, panda.tip_frame, name="my_arm")
    assert robot_info(renamed, 50).brand == "Franka Emika"
    # ... a URDF no known description names does not
    xml = re.sub(r'<robot name="[^"]*"', '<robot name="lab_arm"', panda.urdf_xml, count=1)
    unknown = RobotModel.from_urdf_string(xml, panda.base_frame, panda.tip_frame, name="my_arm")
    info = robot_info(unknown, 50)
    assert info.payload is None and info.brand == UNKNOWN and info.model == "my_arm"
    assert f"| Payload | {UNKNOWN} |" in info.markdown() and f"| Brand | {UNKNOWN} |" in info.markdown()


@pytest.mark.parametrize("name, brand, model", [
    ("panda", "Franka Emika", "Panda"), ("ur5", "Universal Robots", "UR5 (CB3)"),
    ("ur10e", "Universal Robots", "UR10e"), ("xarm7", "UFactory", "xArm 7"), ("z1", "Unitree", "Z1"),
    ("so101", "The Robot Studio", "SO-101"), ("kinova", "Kinova", "Jaco Gen2")])
def test_the_info_names_the_brand_and_model_of_the_embedded_arms(name, brand, model):
    """Issue 24 item 12: the panel showed no brand."""
    robot = RobotModel.from_name(name)
    info = robot_info(robot, 50)
    assert (info.brand, info.model) == (brand, model)
    text = info.markdown()
    assert f"| Brand | {brand} |" in text and f"| Model | {model} |" in text
    assert f"| Reach | {info.reach * 1e3:.0f} mm |" in text and f"| DOF | {robot.n} |" in text


@pytest.mark.parametrize("names, brand", [
    (("ur5_robot", "ur5"), "Universal Robots"),           # example-robot-data file stems and <robot name>s
    (("my_copy", "UF_ROBOT"), "UFactory"), (("arm", "z1_description"), "Unitree"),
    (("so101_new_calib",), "The Robot Studio"), (("baxter",), "Rethink Robotics"),
    (("lab_arm", "robot"), None), (("uranus", ""), None)])
def test_product_is_found_from_file_stem_or_urdf_name(names, brand):
    product = product_of(*names)
    assert (product.brand if product else None) == brand


def test_markdown_lists_every_joint_with_its_limits_in_degrees(panda):
    info = robot_info(panda, 50)
    text = info.markdown()
    assert f"{panda.n} DOF" in text and "| Payload | 3 kg (rated) |" in text
    assert f"| Reach | {info.reach * 1e3:.0f} mm |" in text
    for j, name in enumerate(panda.joint_names):
        row = next(line for line in text.splitlines() if line.startswith(f"| {name} |"))
        numbers = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", row.split("|", 2)[2])]
        lower, upper, speed, effort = numbers
        assert lower == pytest.approx(math.degrees(panda.limits.lower[j]), abs=0.5)
        assert upper == pytest.approx(math.degrees(panda.limits.upper[j]), abs=0.5)
        assert speed == pytest.approx(math.degrees(panda.limits.velocity[j]), abs=0.5)
        assert effort == pytest.approx(panda.limits.effort[j])


def test_range_colour_is_green_mid_red_at_limits_and_monotone():
    green, red = range_colour(0.5), range_colour(0.0)
    assert green[1] > 200 and green[0] < 60                                   # green
    assert red[0] > 200 and red[1] < 60                                       # red
    assert range_colour(1.0) == red and range_colour(-0.3) == red and range_colour(1.7) == red
    shares = np.linspace(0.0, 0.5, 51)
    reds = [range_colour(s)[0] for s in shares]
    greens = [range_colour(s)[1] for s in shares]
    # towards the middle red never rises and green never falls, and both change somewhere
    assert all(b <= a for a, b in zip(reds, reds[1:])) and reds[0] > reds[-1]
    assert all(b >= a for a, b in zip(greens, greens[1:])) and greens[-1] > greens[0]
    for s in shares:                                                          # symmetric about mid-range
        assert range_colour(s) == range_colour(1.0 - s)


def test_joint_shades_share_locked_and_continuous(panda, ur5):
    q = panda.mid_range()
    q[0] = panda.limits.upper[0]
    shades = joint_shades(panda, q, locked_joints=("panda_joint3",))
    assert [s.name for s in shades] == list(panda.joint_names)
    assert shades[0].share == pytest.approx(1.0) and shades[0].rgb == range_colour(0.0)
    assert shades[1].share == pytest.approx(0.5) and shades[1].rgb == range_colour(0.5)
    assert shades[2].locked and shades[2].rgb == LOCKED
    assert not any(s.locked for i, s in enumerate(shades) if i != 2)
    # a continuous joint (no limits) has no share and stays neutral
    xml = re.sub(r'<joint name="shoulder_pan_joint" type="revolute"', '<joint name="shoulder_pan_joint" '
                 'type="continuous"', ur5.urdf_xml)
    spinning = RobotModel.from_urdf_string(xml, ur5.base_frame, ur5.tip_frame)
    assert not np.isfinite(spinning.limits.lower[0])
    shade = joint_shades(spinning, np.full(spinning.n, 0.3))[0]
    assert math.isnan(shade.share) and shade.rgb == NEUTRAL and not shade.locked
