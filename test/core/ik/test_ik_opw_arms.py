"""The shipped OPW arms (core/ik/opw_arms.py) against independent evidence, and `robokin ik` solving them.

Evidence: the joint origins and axes of ROS-Industrial's URDFs of the same arms (kuka_experimental
kuka_kr6_support/urdf/kr6r700sixx_macro.xacro, abb abb_irb2400_support/urdf/irb2400_macro.xacro; the numbers
below, meshes left out), loaded by Pinocchio; and the makers' datasheet reach.
"""
import dataclasses
import math

import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.ik.opw_arms import OPW_ARMS, opw_arm
from robokin_ros.core.errors import ModelError
from robokin_ros.core.robot import RobotModel
from robokin_ros.tools.robokin_cli import main as robokin

# (joint origin xyz, axis) per joint, and the flange -> tool0 rpy, as the ROS-Industrial URDFs give them
ROS_INDUSTRIAL_CHAINS = {
    "kr6_r700": ([((0, 0, 0.4), (0, 0, -1)), ((0.025, 0, 0), (0, 1, 0)), ((0.315, 0, 0), (0, 1, 0)),
                  ((0, 0, 0.035), (-1, 0, 0)), ((0.365, 0, 0), (0, 1, 0)), ((0.080, 0, 0), (-1, 0, 0))],
                 (0, math.pi / 2, 0)),
    "irb2400": ([((0, 0, 0), (0, 0, 1)), ((0.1, 0, 0.615), (0, 1, 0)), ((0, 0, 0.705), (0, 1, 0)),
                 ((0.258, 0, 0.135), (1, 0, 0)), ((0.497, 0, 0), (0, 1, 0)), ((0.085, 0, 0), (1, 0, 0))],
                (0, 0, 0)),
}
# OPW's flange has z out of the flange; ROS-I's tool0 of the IRB 2400 has x out of it (the KR6's tool0 is OPW's)
FLANGE_IN_TOOL0 = {"kr6_r700": np.eye(3), "irb2400": pin.rpy.rpyToMatrix(0, math.pi / 2, 0)}


def ros_industrial_model(name: str) -> RobotModel:
    joints, tool_rpy = ROS_INDUSTRIAL_CHAINS[name]
    arm = opw_arm(name)
    body = "".join(f'<link name="link_{i}"/>' for i in range(7)) + '<link name="tool0"/>'
    for i, (xyz, axis) in enumerate(joints):
        body += (f'<joint name="{arm.joint_names[i]}" type="revolute"><parent link="link_{i}"/>'
                 f'<child link="link_{i + 1}"/><origin xyz="{" ".join(map(repr, xyz))}" rpy="0 0 0"/>'
                 f'<axis xyz="{" ".join(map(repr, axis))}"/><limit lower="{float(arm.geometry.lower[i])!r}" '
                 f'upper="{float(arm.geometry.upper[i])!r}" effort="1" velocity="1"/></joint>')
    body += (f'<joint name="flange_tool0" type="fixed"><parent link="link_6"/><child link="tool0"/>'
             f'<origin xyz="0 0 0" rpy="{" ".join(map(repr, tool_rpy))}"/></joint>')
    return RobotModel.from_urdf_string(f'<robot name="{name}">{body}</robot>', "link_0", "tool0")


@pytest.fixture(scope="module", params=sorted(OPW_ARMS))
def arm_and_urdf(request):
    arm, model = opw_arm(request.param), ros_industrial_model(request.param)
    to_flange = FLANGE_IN_TOOL0[request.param]

    def urdf_flange(q) -> pin.SE3:          # the URDF's pose of OPW's flange frame
        tool0 = model.fk(q)
        return pin.SE3(tool0.rotation @ to_flange, tool0.translation)
    return arm, model, urdf_flange


def test_opw_forward_kinematics_equals_the_ros_industrial_urdf(arm_and_urdf):
    arm, model, urdf_flange = arm_and_urdf
    for q in np.random.default_rng(3).uniform(arm.geometry.lower, arm.geometry.upper, (200, 6)):
        opw, urdf = arm.geometry.fk(q), urdf_flange(q)
        assert np.linalg.norm(opw.translation - urdf.translation) < 1e-12
        assert np.abs(opw.rotation - urdf.rotation).max() < 1e-12
    # control: opw_kinematics' own offsets (subtracted there, added here) put the arm elsewhere
    theirs = dataclasses.replace(arm.geometry, offsets=tuple(-o for o in arm.geometry.offsets))
    assert np.linalg.norm(theirs.fk(np.zeros(6)).translation - urdf_flange(np.zeros(6)).translation) > 0.5


def test_wrist_centre_reach_within_the_joint_limits_is_the_datasheets(arm_and_urdf):
    """KUKA states 706.7 mm, ABB 1.55 m: the horizontal reach of the wrist centre (axis 3 limits bind on the IRB)."""
    g = arm_and_urdf[0].geometry
    q2, q3 = np.meshgrid(np.linspace(g.lower[1], g.upper[1], 721), np.linspace(g.lower[2], g.upper[2], 721))
    t2, t3 = g.signs[1] * q2 + g.offsets[1], g.signs[2] * q3 + g.offsets[2]
    psi3, k = math.atan2(g.a2, g.c3), math.hypot(g.a2, g.c3)
    reach = np.abs(g.c2 * np.sin(t2) + k * np.sin(t2 + t3 + psi3) + g.a1).max()
    assert reach == pytest.approx(arm_and_urdf[0].datasheet_reach, abs=5e-4)


def test_every_solution_reaches_the_target_by_the_urdf(arm_and_urdf):
    arm, model, urdf_flange = arm_and_urdf
    g = dataclasses.replace(arm.geometry, verify_fk=urdf_flange)        # the FK error below is the URDF's
    rng = np.random.default_rng(4)
    for _ in range(300):
        q = rng.uniform(g.lower + 1e-3, g.upper - 1e-3)
        result = g.solve(urdf_flange(q), seed=q)
        np.testing.assert_allclose(result.solutions[0].positions, q, atol=1e-7)
        assert all(s.fk_error < 1e-9 for s in result.solutions)
        assert all(np.all(s.positions >= g.lower) and np.all(s.positions <= g.upper) for s in result.solutions)


@pytest.mark.parametrize("name", sorted(OPW_ARMS))
def test_robokin_ik_solves_the_opw_arms(name, capsys):
    q = ["0.1", "-0.3", "0.2", "0.5", "-0.6", "0.7"]
    assert robokin(["ik", "--robot", name, "--from-q", *q, "--seed", *q]) == 0
    out = capsys.readouterr().out
    assert opw_arm(name).title in out and "FK error by the OPW forward kinematics" in out
    rows = [line.split() for line in out.splitlines() if "shoulder=" in line]
    assert len(rows) >= 2
    np.testing.assert_allclose([float(v) for v in rows[0][4:10]], [float(v) for v in q], atol=1e-4)
    assert all(float(row[10]) < 1e-9 for row in rows)
    assert robokin(["ik", "--robot", name, "--pose", "3", "0", "0.5", "0", "0", "0"]) == 1
    assert "unreachable: the wrist centre is out of the arm's reach" in capsys.readouterr().out


def test_an_unknown_opw_arm_lists_the_known():
    with pytest.raises(ModelError, match=r"no OPW arm named 'kr5'; known: \['irb2400', 'kr6_r700'\]"):
        opw_arm("kr5")
