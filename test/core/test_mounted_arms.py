"""Arms mounted on a table or a torso (`core.mounted_arms`): the generated URDF and SRDF, and the robot on them."""
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from robokin_ros.core.collision.geometry import build_robot_geometry, link_name
from robokin_ros.core.embedded import embedded_robot, embedded_srdf_text
from robokin_ros.core.errors import ModelError
from robokin_ros.core.mounted_arms import (ROOT_LINK, TORSO_JOINT, TORSO_LINK, Mount, Torso, mounted_arms_srdf,
                                           mounted_arms_urdf)
from robokin_ros.core.robot import RobotModel

TWO = (Mount("left_", (0.0, 0.3, 0.0)), Mount("right_", (0.0, -0.3, 0.0)))
PREFIXES = ("left_", "right_")

# A three-link arm with a mimic joint and a material: small enough to read every generated name
TOY_ARM = """<robot name="toy">
  <material name="grey"><color rgba="0.5 0.5 0.5 1"/></material>
  <link name="base"/>
  <link name="upper"><visual><geometry><box size="0.1 0.1 0.1"/></geometry><material name="grey"/></visual></link>
  <link name="finger_a"/>
  <link name="finger_b"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" velocity="1" effort="1"/></joint>
  <joint name="finger_a_joint" type="prismatic"><parent link="upper"/><child link="finger_a"/><axis xyz="0 1 0"/>
    <limit lower="0" upper="0.04" velocity="0.1" effort="10"/></joint>
  <joint name="finger_b_joint" type="prismatic"><parent link="upper"/><child link="finger_b"/><axis xyz="0 -1 0"/>
    <limit lower="0" upper="0.04" velocity="0.1" effort="10"/><mimic joint="finger_a_joint"/></joint>
</robot>"""

TOY_SRDF = """<robot name="toy">
  <group name="arm"><chain base_link="base" tip_link="upper"/></group>
  <disable_collisions link1="base" link2="upper" reason="Adjacent"/>
  <disable_collisions link1="finger_a" link2="finger_b" reason="Never"/>
</robot>"""


@pytest.fixture(scope="module")
def toy_pair():
    return ET.fromstring(mounted_arms_urdf(TOY_ARM, TWO, "toys"))


@pytest.fixture(scope="module")
def toy_torso():
    return ET.fromstring(mounted_arms_urdf(TOY_ARM, TWO, "toys", Torso()))


def _names(root, tag):
    return [element.get("name") for element in root.findall(tag)]


# ---- the generated URDF --------------------------------------------------------------------------------------
def test_every_name_is_prefixed_per_arm(toy_pair):
    assert toy_pair.get("name") == "toys"
    assert sorted(_names(toy_pair, "link")) == sorted(
        [ROOT_LINK] + [p + n for p in PREFIXES for n in ("base", "upper", "finger_a", "finger_b")])
    assert sorted(_names(toy_pair, "joint")) == sorted(
        [p + n for p in PREFIXES for n in ("mount", "shoulder", "finger_a_joint", "finger_b_joint")])
    joints = {j.get("name"): j for j in toy_pair.findall("joint")}
    for p in PREFIXES:
        shoulder = joints[p + "shoulder"]
        assert shoulder.find("parent").get("link") == p + "base"
        assert shoulder.find("child").get("link") == p + "upper"
        assert joints[p + "finger_b_joint"].find("mimic").get("joint") == p + "finger_a_joint"
        mount = joints[p + "mount"]
        assert mount.get("type") == "fixed"
        assert mount.find("parent").get("link") == ROOT_LINK
        assert mount.find("child").get("link") == p + "base"
    assert [float(v) for v in joints["left_mount"].find("origin").get("xyz").split()] == [0.0, 0.3, 0.0]
    assert [float(v) for v in joints["right_mount"].find("origin").get("xyz").split()] == [0.0, -0.3, 0.0]
    # the shared material is defined once, and the links' references to it are left as they are
    assert _names(toy_pair, "material") == ["grey"]
    assert toy_pair.find("link[@name='left_upper']/visual/material").get("name") == "grey"


def _root_links(root):
    children = {j.find("child").get("link") for j in root.findall("joint")}
    return sorted(set(_names(root, "link")) - children)


def test_one_root_link_world(toy_pair, toy_torso):
    assert _root_links(toy_pair) == [ROOT_LINK]
    assert _root_links(toy_torso) == [ROOT_LINK]


def test_the_torso_joint_carries_both_arms(toy_torso):
    joints = {j.get("name"): j for j in toy_torso.findall("joint")}
    torso = joints[TORSO_JOINT]
    assert torso.get("type") == "revolute"
    assert torso.find("parent").get("link") == ROOT_LINK and torso.find("child").get("link") == TORSO_LINK
    assert [float(v) for v in torso.find("axis").get("xyz").split()] == [0.0, 0.0, 1.0]
    limit = torso.find("limit")
    assert (float(limit.get("lower")), float(limit.get("upper"))) == (Torso().lower, Torso().upper)
    for p in PREFIXES:
        assert joints[p + "mount"].find("parent").get("link") == TORSO_LINK


def test_the_toy_pair_loads_in_pinocchio_with_both_arms():
    robot = RobotModel.from_urdf_string(mounted_arms_urdf(TOY_ARM, TWO, "toys", Torso()), ROOT_LINK,
                                        ["left_finger_a", "right_finger_a"])
    assert robot.joint_names[0] == TORSO_JOINT
    assert set(robot.joint_names) == {TORSO_JOINT, "left_shoulder", "left_finger_a_joint", "right_shoulder",
                                      "right_finger_a_joint"}


# ---- refused input -------------------------------------------------------------------------------------------
def test_duplicate_prefixes_are_refused():
    with pytest.raises(ModelError, match="prefixes must differ"):
        mounted_arms_urdf(TOY_ARM, (Mount("a_", (0, 0, 0)), Mount("a_", (1, 0, 0))), "toys")


def test_a_urdf_that_is_not_xml_is_refused():
    with pytest.raises(ModelError, match="cannot parse the arm's URDF"):
        mounted_arms_urdf("this is not xml <", TWO, "toys")


def test_a_document_that_is_not_a_urdf_is_refused():
    with pytest.raises(ModelError, match="<robot>"):
        mounted_arms_urdf(TOY_SRDF.replace("robot", "srdf"), TWO, "toys")


def test_an_arm_with_two_root_links_is_refused():
    two_roots = TOY_ARM.replace('<link name="finger_b"/>', '<link name="finger_b"/><link name="loose"/>')
    with pytest.raises(ModelError, match=r"one root link.*\['base', 'loose'\]"):
        mounted_arms_urdf(two_roots, TWO, "toys")


def test_an_unnamed_link_is_refused():
    with pytest.raises(ModelError, match="without a name"):
        mounted_arms_urdf(TOY_ARM.replace('<link name="finger_b"/>', '<link/>'), TWO, "toys")


def test_names_that_clash_after_prefixing_are_refused():
    # an arm whose own root is called `world`, mounted without a prefix, would shadow the table's root link
    with pytest.raises(ModelError, match="'world'"):
        mounted_arms_urdf(TOY_ARM.replace('"base"', '"world"'), (Mount("", (0, 0, 0)),), "toys")


def test_no_mounts_is_refused():
    with pytest.raises(ModelError, match="at least one mount"):
        mounted_arms_urdf(TOY_ARM, (), "toys")


# ---- the SRDF --------------------------------------------------------------------------------------------------
def _pairs(srdf: str) -> set[frozenset]:
    return {frozenset((e.get("link1"), e.get("link2"))) for e in ET.fromstring(srdf).findall("disable_collisions")}


def test_the_prefixed_srdf_keeps_each_arms_pairs_and_disables_none_across_arms():
    pairs = _pairs(mounted_arms_srdf(TOY_SRDF, TWO, "toys"))
    assert pairs == {frozenset((p + a, p + b)) for p in PREFIXES for a, b in (("base", "upper"),
                                                                              ("finger_a", "finger_b"))}


def test_a_malformed_srdf_is_refused():
    with pytest.raises(ModelError, match="cannot parse the arm's SRDF"):
        mounted_arms_srdf("<robot", TWO, "toys")
    with pytest.raises(ModelError, match="link2"):
        mounted_arms_srdf('<robot><disable_collisions link1="a"/></robot>', TWO, "toys")


def test_the_dual_panda_srdf_is_the_panda_srdf_once_per_arm():
    panda_pairs = _pairs(embedded_srdf_text("panda")[0])
    dual_pairs = _pairs(embedded_srdf_text("dual_panda")[0])
    assert panda_pairs
    assert dual_pairs == {frozenset(p + link for link in pair) for p in PREFIXES for pair in panda_pairs}
    assert not any(len({link.split("_", 1)[0] for link in pair}) > 1 for pair in dual_pairs)


# ---- the embedded two-Panda robots ---------------------------------------------------------------------------
def test_dual_panda_is_twice_the_panda():
    panda, dual = RobotModel.load("panda"), RobotModel.load("dual_panda")
    assert dual.n == 2 * panda.n
    assert dual.joint_names == tuple(p + j for p in PREFIXES for j in panda.joint_names)
    for i, p in enumerate(PREFIXES):
        cols = dual.tip_joint_indices[i]
        np.testing.assert_array_equal(dual.limits.lower[cols], panda.limits.lower)
        np.testing.assert_array_equal(dual.limits.upper[cols], panda.limits.upper)
        np.testing.assert_array_equal(dual.limits.velocity[cols], panda.limits.velocity)
    np.testing.assert_array_equal(dual.home(), np.concatenate([panda.home(), panda.home()]))
    torso = RobotModel.load("dual_panda_torso")
    assert torso.n == 2 * panda.n + 1
    np.testing.assert_array_equal(torso.home(), np.concatenate([[0.0], panda.home(), panda.home()]))


def test_the_generated_urdf_is_the_panda_urdf_renamed():
    panda = ET.fromstring(embedded_robot("panda").xml)
    dual = ET.fromstring(embedded_robot("dual_panda").xml)
    assert sorted(_names(dual, "link")) == sorted([ROOT_LINK] + [p + n for p in PREFIXES
                                                                 for n in _names(panda, "link")])
    assert _root_links(dual) == [ROOT_LINK]


def test_collision_geometry_checks_left_against_right():
    dual = RobotModel.load("dual_panda")
    geometry = build_robot_geometry(dual)
    assert geometry.pair_filter.startswith("SRDF")
    sides = []
    for a, b in geometry.self_pairs:
        objects = geometry.geometry_model.geometryObjects
        sides.append({link_name(dual.model, objects[i]).split("_", 1)[0] for i in (a, b)})
    across = sum(1 for s in sides if s == {"left", "right"})
    within = sum(1 for s in sides if len(s) == 1)
    assert across > 0 and within > 0
    # every link of one arm against every link of the other, but the two bases (both fixed to the table: one body)
    objects = geometry.geometry_model.geometryObjects
    movable_across = {frozenset((a, b)) for a in range(len(objects)) for b in range(len(objects))
                      if link_name(dual.model, objects[a]).startswith("left_")
                      and link_name(dual.model, objects[b]).startswith("right_")
                      and objects[a].parentJoint != objects[b].parentJoint}
    assert {frozenset(pair) for pair in geometry.self_pairs if frozenset(pair) in movable_across} == movable_across
    assert across == len(movable_across) > 16 * 16


def test_dual_panda_from_an_installed_panda_description_gets_the_added_tcp_frames(tmp_path, monkeypatch):
    """moveit_resources' Panda (found first through the ament index) has no panda_hand_tcp: every copy gets it."""
    import re

    from robokin_ros.core.embedded import example_robot_data_dir
    wheel_xml = (example_robot_data_dir() / "panda_description" / "urdf" / "panda.urdf").read_text()
    no_tcp = re.sub(r'<link name="panda_hand_tcp">.*?</link>|<joint name="panda_hand_tcp_joint".*?</joint>', "",
                    wheel_xml, flags=re.S)
    assert "panda_hand_tcp" not in no_tcp
    package = "moveit_resources_panda_description"
    (tmp_path / "share" / package / "urdf").mkdir(parents=True)
    (tmp_path / "share" / package / "urdf" / "panda.urdf").write_text(no_tcp)
    marker = tmp_path / "share" / "ament_index" / "resource_index" / "packages" / package
    marker.parent.mkdir(parents=True)
    marker.write_text("")
    from_wheel = RobotModel.load("dual_panda")
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path))
    assert embedded_robot("panda").urdf == tmp_path / "share" / package / "urdf" / "panda.urdf"
    from_ament = RobotModel.load("dual_panda")
    assert from_ament.tip_frames == from_wheel.tip_frames
    q = from_wheel.home()
    for tip in from_wheel.tip_frames:
        np.testing.assert_allclose(from_ament.fk(q, tip).homogeneous, from_wheel.fk(q, tip).homogeneous, atol=1e-9)
