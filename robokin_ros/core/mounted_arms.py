"""Several copies of one arm's URDF on a shared base: a two-arm table or a torso, generated, never hand-edited.

Each copy's links and joints are renamed with its mount's prefix (`left_panda_link1`), so the copies stay apart in
one tree. The copies hang from a root link (`world`) by fixed joints at the mounts' poses, or, with a torso, from a
`torso` link that one revolute joint (`torso_joint`, about z) turns: then both arms share that joint, as a real
torso's arms do. The arm's SRDF is prefixed the same way, so every arm keeps its own allowed collisions and arm
against arm is checked.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

from robokin_ros.core.errors import ModelError

ROOT_LINK = "world"
TORSO_LINK = "torso"
TORSO_JOINT = "torso_joint"


@dataclass(frozen=True)
class Mount:
    """Where one copy of the arm stands: its name prefix and its base pose in the root (or torso) link."""

    prefix: str                              # "left_": every link and joint name of this copy starts with it
    xyz: tuple[float, float, float]          # [m]
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)    # [rad]


@dataclass(frozen=True)
class Torso:
    """A revolute joint about z between the root link and the link the arms stand on."""

    lower: float = -2.8          # [rad]
    upper: float = 2.8           # [rad]
    velocity: float = 1.0        # [rad/s]
    effort: float = 100.0        # [N m]


def _numbers(values) -> str:
    return " ".join(repr(float(v)) for v in values)


def _renamed(element: ET.Element, prefix: str, links: set[str], joints: set[str]) -> ET.Element:
    """A deep copy of a <link> or <joint> with its own name and every link or joint it names prefixed."""
    copy = ET.fromstring(ET.tostring(element))
    copy.set("name", prefix + copy.get("name"))
    for tag, names in (("parent", links), ("child", links)):
        for child in copy.iter(tag):
            if child.get("link") in names:
                child.set("link", prefix + child.get("link"))
    for mimic in copy.iter("mimic"):
        if mimic.get("joint") in joints:
            mimic.set("joint", prefix + mimic.get("joint"))
    return copy


def _root_link(links: set[str], joints: list[ET.Element]) -> str:
    children = {joint.find("child").get("link") for joint in joints if joint.find("child") is not None}
    roots = sorted(links - children)
    if len(roots) != 1:
        raise ModelError(f"the arm's URDF must have one root link to mount it, found {roots}")
    return roots[0]


def _clashing_names(names: list[str], what: str) -> None:
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ModelError(f"the mounted arms' {what} names clash after prefixing: {repeated} (choose prefixes that "
                         f"keep every copy apart from the others and from '{ROOT_LINK}', '{TORSO_LINK}')")


def mounted_arms_urdf(arm_xml: str, mounts: tuple[Mount, ...], name: str, torso: Torso | None = None) -> str:
    """One URDF with a copy of the arm (`arm_xml`) at each mount, under `world` (or a torso on `world`).

    Raises:
        ModelError: the arm's URDF cannot be parsed or is not a <robot>, has no single root link, no mount is
            given, two mounts share a prefix, or a prefixed name clashes with another generated name.
    """
    try:
        arm = ET.fromstring(arm_xml)
    except ET.ParseError as err:
        raise ModelError(f"cannot parse the arm's URDF to mount it: {err}") from None
    if arm.tag != "robot":
        raise ModelError(f"the arm's URDF must be a <robot> document to mount it, its root element is <{arm.tag}>")
    if not mounts:
        raise ModelError("mounting arms needs at least one mount")
    if len({mount.prefix for mount in mounts}) != len(mounts):
        raise ModelError(f"mount prefixes must differ: {[mount.prefix for mount in mounts]}")
    arm_links = arm.findall("link")
    arm_joints = arm.findall("joint")
    unnamed = [element.tag for element in (*arm_links, *arm_joints) if not element.get("name")]
    if unnamed:
        raise ModelError(f"the arm's URDF has {len(unnamed)} <link>/<joint> elements without a name: {unnamed}")
    link_names = {link.get("name") for link in arm_links}
    joint_names = {joint.get("name") for joint in arm_joints}
    arm_root = _root_link(link_names, arm_joints)
    robot = ET.Element("robot", name=name)
    for material in arm.findall("material"):       # shared by all copies: defined once
        robot.append(ET.fromstring(ET.tostring(material)))
    ET.SubElement(robot, "link", name=ROOT_LINK)
    stand = ROOT_LINK
    if torso is not None:
        ET.SubElement(robot, "link", name=TORSO_LINK)
        joint = ET.SubElement(robot, "joint", name=TORSO_JOINT, type="revolute")
        ET.SubElement(joint, "parent", link=ROOT_LINK)
        ET.SubElement(joint, "child", link=TORSO_LINK)
        ET.SubElement(joint, "origin", xyz="0 0 0", rpy="0 0 0")
        ET.SubElement(joint, "axis", xyz="0 0 1")
        ET.SubElement(joint, "limit", lower=repr(torso.lower), upper=repr(torso.upper),
                      velocity=repr(torso.velocity), effort=repr(torso.effort))
        stand = TORSO_LINK
    for mount in mounts:
        joint = ET.SubElement(robot, "joint", name=f"{mount.prefix}mount", type="fixed")
        ET.SubElement(joint, "parent", link=stand)
        ET.SubElement(joint, "child", link=mount.prefix + arm_root)
        ET.SubElement(joint, "origin", xyz=_numbers(mount.xyz), rpy=_numbers(mount.rpy))
        for element in (*arm_links, *arm_joints):
            robot.append(_renamed(element, mount.prefix, link_names, joint_names))
    _clashing_names([link.get("name") for link in robot.findall("link")], "link")
    _clashing_names([joint.get("name") for joint in robot.findall("joint")], "joint")
    return ET.tostring(robot, encoding="unicode")


def mounted_arms_srdf(arm_srdf: str, mounts: tuple[Mount, ...], name: str) -> str:
    """An SRDF with each arm's <disable_collisions> entries once per mount, prefixed; pairs across arms stay
    checked (groups and states are left out: robokin reads only the disabled pairs)."""
    try:
        arm = ET.fromstring(arm_srdf)
    except ET.ParseError as err:
        raise ModelError(f"cannot parse the arm's SRDF to mount it: {err}") from None
    entries = arm.findall("disable_collisions")
    incomplete = [ET.tostring(entry, encoding="unicode").strip() for entry in entries
                  if not entry.get("link1") or not entry.get("link2")]
    if incomplete:
        raise ModelError(f"the arm's SRDF has <disable_collisions> entries without link1 and link2: {incomplete}")
    robot = ET.Element("robot", name=name)
    for mount in mounts:
        for entry in entries:
            ET.SubElement(robot, "disable_collisions", link1=mount.prefix + entry.get("link1"),
                          link2=mount.prefix + entry.get("link2"), reason=entry.get("reason", ""))
    return ET.tostring(robot, encoding="unicode")
