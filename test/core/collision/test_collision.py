"""Collision geometry: which pairs are checked (SRDF lists, adjacency fallback), and clear errors.

Expected pair sets are derived here from the SRDF and URDF XML themselves (ElementTree), not from Pinocchio's
SRDF reader, so a wrong filter in the code cannot hide behind the same library call.
"""
import itertools
import xml.etree.ElementTree as ET
from pathlib import Path

import coal
import pinocchio as pin
import pytest

from robokin_ros.core.collision.geometry import build_robot_geometry, default_package_dirs, link_name
from robokin_ros.core.embedded import EMBEDDED_ROBOTS, embedded_robot, embedded_srdf
from robokin_ros.core.errors import ModelError
from robokin_ros.core.robot import RobotModel

# A planar three-link arm with primitive collision shapes; `tip` is rigidly attached to `hand`.
BOXES_URDF = """<?xml version="1.0"?>
<robot name="boxes">
  <link name="base"><collision><origin xyz="0 0 0.05"/><geometry><box size="0.2 0.2 0.1"/></geometry></collision>
  </link>
  <link name="arm"><collision><origin xyz="0.25 0 0"/><geometry><box size="0.5 0.1 0.1"/></geometry></collision>
  </link>
  <link name="forearm"><collision><origin xyz="0.15 0 0"/><geometry><box size="0.3 0.06 0.06"/></geometry>
  </collision></link>
  <link name="hand"><collision><geometry><sphere radius="0.04"/></geometry></collision></link>
  <link name="tip"><collision><origin xyz="0.05 0 0"/><geometry><sphere radius="0.01"/></geometry></collision>
  </link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.3"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" velocity="2" effort="10"/></joint>
  <joint name="j2" type="revolute"><parent link="arm"/><child link="forearm"/><origin xyz="0.5 0 0"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" velocity="2" effort="10"/></joint>
  <joint name="j3" type="revolute"><parent link="forearm"/><child link="hand"/><origin xyz="0.3 0 0"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" velocity="2" effort="10"/></joint>
  <joint name="tip_joint" type="fixed"><parent link="hand"/><child link="tip"/></joint>
</robot>"""


def name_pairs(geometry):
    names = geometry.names
    return {frozenset((names[a], names[b])) for a, b in geometry.self_pairs}


def srdf_disabled(path):
    return {frozenset((e.get("link1"), e.get("link2"))) for e in ET.parse(path).getroot().iter("disable_collisions")}


def test_panda_pairs_are_all_cross_body_pairs_minus_the_srdf_list(panda):
    geometry = build_robot_geometry(panda)
    srdf = embedded_srdf("panda")
    disabled = srdf_disabled(srdf)
    assert len(disabled) == 35
    objects = geometry.geometry_model.geometryObjects
    expected = set()
    for a, b in itertools.combinations(objects, 2):
        links = frozenset((link_name(panda.model, a), link_name(panda.model, b)))
        if a.parentJoint != b.parentJoint and links not in disabled:
            expected.add(frozenset((a.name, b.name)))
    assert name_pairs(geometry) == expected
    assert len(expected) == 44 and "SRDF" in geometry.pair_filter
    assert frozenset(("panda_link0_0", "panda_link5_0")) in expected          # enabled in the SRDF
    assert frozenset(("panda_link3_0", "panda_link7_0")) not in expected      # "Never" in the SRDF
    # the locked fingers ride on joint 7 with the hand: one rigid body, never paired with it
    assert not any({"panda_hand_0", "panda_leftfinger_0"} <= pair for pair in expected)


def test_urdf_without_srdf_skips_adjacent_links_and_rigidly_joined_links():
    robot = RobotModel.from_urdf_string(BOXES_URDF, "base", "tip")
    geometry = build_robot_geometry(robot)
    assert geometry.pair_filter == "adjacent links (no SRDF)"
    # base-arm, arm-forearm, forearm-hand are adjacent; hand and tip are one body (fixed joint)
    assert name_pairs(geometry) == {frozenset(p) for p in [("base_0", "forearm_0"), ("base_0", "hand_0"),
                                                           ("base_0", "tip_0"), ("arm_0", "hand_0"),
                                                           ("arm_0", "tip_0")]}


def test_ur3_adjacency_matches_its_urdf_joint_list():
    robot = RobotModel.from_name("ur3")
    assert embedded_srdf("ur3") is None
    root = ET.fromstring(robot.urdf_xml)
    parent_of = {j.find("child").get("link"): (j.find("parent").get("link"), j.get("type"))
                 for j in root.findall("joint")}

    def body(link):            # follow fixed joints up to the link a moving joint carries
        while link in parent_of and parent_of[link][1] == "fixed":
            link = parent_of[link][0]
        return link
    adjacent = {frozenset((body(parent), child)) for child, (parent, kind) in parent_of.items() if kind != "fixed"}
    geometry = build_robot_geometry(robot)
    links = {g.name: body(link_name(robot.model, g)) for g in geometry.geometry_model.geometryObjects}
    expected = {frozenset(p) for p in itertools.combinations(links, 2)
                if links[p[0]] != links[p[1]] and frozenset((links[p[0]], links[p[1]])) not in adjacent}
    assert name_pairs(geometry) == expected and len(expected) == 20


def test_an_srdf_without_disable_entries_falls_back_to_adjacency():
    geometry = build_robot_geometry(RobotModel.from_name("z1"))
    assert geometry.pair_filter.startswith("adjacent links (SRDF") and "disables no pair" in geometry.pair_filter


def test_an_srdf_given_as_text_is_applied(panda):
    srdf = '<robot name="panda"><disable_collisions link1="panda_link0" link2="panda_link5"/></robot>'
    pairs = name_pairs(build_robot_geometry(panda, srdf))
    assert frozenset(("panda_link0_0", "panda_link5_0")) not in pairs
    assert frozenset(("panda_link3_0", "panda_link7_0")) in pairs      # no longer disabled


def test_srdf_links_the_urdf_lacks_are_reported_and_skipped(panda):
    srdf = ('<robot name="panda"><disable_collisions link1="panda_link0" link2="gripper_base"/>'
            '<disable_collisions link1="panda_link0" link2="panda_link5"/></robot>')
    geometry = build_robot_geometry(panda, srdf)
    assert geometry.unknown_srdf_links == ("gripper_base",)
    assert frozenset(("panda_link0_0", "panda_link5_0")) not in name_pairs(geometry)


@pytest.mark.parametrize("srdf, words", [
    ("<robot><disable_collisions link1='panda_link0'", "malformed SRDF"),
    ("<robot><disable_collisions link1='panda_link0'/></robot>", "needs link1 and link2"),
])
def test_a_malformed_srdf_is_a_model_error(panda, srdf, words):
    with pytest.raises(ModelError, match=words):
        build_robot_geometry(panda, srdf)


def test_a_missing_srdf_file_is_a_model_error(panda, tmp_path):
    with pytest.raises(ModelError, match="SRDF file not found"):
        build_robot_geometry(panda, tmp_path / "nope.srdf")


def test_a_missing_mesh_is_a_model_error_naming_the_mesh_and_the_search_path(panda):
    xml = panda.urdf_xml.replace("collision/link3.stl", "collision/no_such_link3.stl")
    with pytest.raises(ModelError, match=r"no_such_link3\.stl.*looked up in"):
        build_robot_geometry(panda, urdf_xml=xml)


def test_a_urdf_of_another_chain_is_refused(panda):
    with pytest.raises(ModelError, match="differ from the robot's"):
        build_robot_geometry(panda, urdf_xml=BOXES_URDF)


def test_a_robot_without_urdf_text_asks_for_it():
    robot = RobotModel(pin.buildModelFromXML(BOXES_URDF), "base", "tip")
    assert robot.urdf_xml is None
    with pytest.raises(ModelError, match="pass urdf_xml"):
        build_robot_geometry(robot)
    assert len(build_robot_geometry(robot, urdf_xml=BOXES_URDF).self_pairs) == 5


def test_meshes_become_convex_hulls_and_primitives_stay(panda):
    shapes = {g.name: g.geometry for g in build_robot_geometry(panda).geometry_model.geometryObjects}
    assert isinstance(shapes["panda_link3_0"], coal.ConvexBase)
    assert isinstance(shapes["panda_leftfinger_0"], coal.Box)
    meshes = {g.name: g.geometry for g in build_robot_geometry(panda, convex=False).geometry_model.geometryObjects}
    assert isinstance(meshes["panda_link3_0"], coal.BVHModelBase)


def test_embedded_srdfs_exist_and_name_links_of_their_urdf():
    for name in EMBEDDED_ROBOTS:
        path = embedded_srdf(name)
        if path is None:
            continue
        links = {link.get("name") for link in ET.fromstring(embedded_robot(name).xml).iter("link")}
        named = {e.get(k) for e in ET.parse(path).getroot().iter("disable_collisions") for k in ("link1", "link2")}
        assert named <= links, f"{name}: {sorted(named - links)}"
    with pytest.raises(ModelError, match="known"):
        embedded_srdf("no_such_robot")


def test_default_package_dirs_hold_example_robot_data():
    assert any((Path(d) / "example-robot-data").is_dir() for d in default_package_dirs())
