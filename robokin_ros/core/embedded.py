"""Robots known by short name (`panda`, `ur5e`, ...), resolved offline from installed or built-in descriptions.

Built in: the UR e-series (`ur3e`, `ur5e`, `ur10e`, `ur16e`, `ur20`, `ur30`) in ROS 2 frames, generated from
Universal Robots' DH tables by `core.classroom.ur_eseries` into `core/ur_eseries_urdf.py` (no file to install).

For every other name the search order is, first hit wins (`urdf_candidates` lists it, the error repeats it):

1. A ROS description package that ships a plain URDF, found through the ament index (every prefix of
   `AMENT_PREFIX_PATH` whose `share/ament_index/resource_index/packages/<package>` marker exists, in order).
   The Panda comes from `moveit_resources_panda_description` (`urdf/panda.urdf`). The UR arms have no such
   entry: `ur_description` ships only xacro, which is not looked up by name (give the xacro file's path instead:
   `RobotModel.load` and the nodes expand it, see `core.model_source`).
2. The `example-robot-data` wheel (`cmeel.prefix/share/example-robot-data/robots` on `sys.path`), then
   `<sys.prefix>/share/example-robot-data/robots`.

`ur3`, `ur5` and `ur10` are the CB3 arms of example-robot-data in ROS 1 frames (their `base_link` is the DH base
frame, without ROS 2 ur_description's 180 deg yaw): kept under those names for the classroom toolbox and existing
configurations, and under `ur3_cb3_ros1`, `ur5_cb3_ros1`, `ur10_cb3_ros1`, which say what they are. A node that
loads one by its short name logs the difference (`EmbeddedRobot.note`).

The two Panda descriptions differ: moveit_resources has no `panda_hand_tcp` frame (it is added here, at the
same 0.1034 m offset example-robot-data uses) and slightly wider joint and velocity limits.

Robots with several arms load with all their tips (`tip_frames`):
- `dual_panda`: two Pandas on a table, 0.6 m apart, generated from the Panda found above with the prefixes
  `left_` and `right_` (`core.mounted_arms`); `dual_panda_torso` stands them on a torso joint both arms share.
- `baxter`: Rethink's Baxter of example-robot-data, hands `left_gripper` and `right_gripper` (`head_pan` and the
  grippers are locked).
"""
from __future__ import annotations

import os
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

from robokin_ros.core.errors import ModelError
from robokin_ros.core.model_source import robot_file_xml
from robokin_ros.core.mounted_arms import Mount, Torso, mounted_arms_srdf, mounted_arms_urdf

ERD_ROBOTS = Path("share") / "example-robot-data" / "robots"
BUILT_IN_PLACE = "built in: robokin_ros/core/ur_eseries_urdf.py (generated from Universal Robots' DH table)"


@dataclass(frozen=True)
class FixedFrame:
    """A frame some copies of a description lack: a link on a fixed joint under `parent`."""

    name: str
    parent: str
    xyz: tuple[float, float, float]      # [m] in the parent link


@dataclass(frozen=True)
class AmentUrdf:
    """A plain URDF installed by a ROS package: `share/<package>/<path>`."""

    package: str
    path: str


@dataclass(frozen=True)
class EmbeddedRobot:
    """Where an embedded robot's URDF lives and which chain a servo drives by default."""

    urdf: str                    # relative to the robots/ folder of example-robot-data ("" when built in)
    base_frame: str
    tip_frame: str
    home: tuple[float, ...]      # a well-conditioned start configuration [rad | m], chain order
    ament: tuple[AmentUrdf, ...] = ()    # ROS description packages to try first, in order
    added_frames: tuple[FixedFrame, ...] = ()   # added when a description lacks them
    built_in: str = ""           # key of the generated URDF in core.ur_eseries_urdf (then nothing is searched)
    note: str = ""               # what a user of this name should know (a node logs it as a warning)
    tip_frames: tuple[str, ...] = ()    # every tip of a robot with several arms (the first is `tip_frame`)
    mounted: MountedArms | None = None  # copies of another embedded arm, generated (then `urdf` is unused)


@dataclass(frozen=True)
class MountedArms:
    """An embedded robot made of copies of another embedded arm (`core.mounted_arms`)."""

    arm: str                     # the embedded arm's name
    mounts: tuple[Mount, ...]
    torso: Torso | None = None


PANDA_TCP = FixedFrame("panda_hand_tcp", "panda_hand", (0.0, 0.0, 0.1034))
PANDA_HOME = (0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785)
# Two Pandas side by side facing +x, 0.6 m apart: their workspaces overlap over a 0.6 m wide strip in front
TWO_PANDAS = (Mount("left_", (0.0, 0.3, 0.0)), Mount("right_", (0.0, -0.3, 0.0)))
UR_HOME = (0.0, -1.571, 1.571, -1.571, -1.571, 0.0)
UR_ESERIES = ("ur3e", "ur5e", "ur10e", "ur16e", "ur20", "ur30")
UR_CB3_ROS1 = {short: EmbeddedRobot(f"ur_description/urdf/{short}_robot.urdf", "base_link", "tool0", UR_HOME)
               for short in ("ur3", "ur5", "ur10")}


def _cb3_alias(short: str) -> EmbeddedRobot:
    note = (f"robot '{short}' is the CB3 {short.upper()} of example-robot-data in ROS 1 frames (also named "
            f"'{short}_cb3_ros1'): its base_link lacks ROS 2 ur_description's 180 deg yaw, so poses in base_link "
            f"differ from a ROS 2 UR driver's; next to one use '{short}e' (e-series) or the driver's "
            "/robot_description")
    return replace(UR_CB3_ROS1[short], note=note)


EMBEDDED_ROBOTS: dict[str, EmbeddedRobot] = {
    "panda": EmbeddedRobot("panda_description/urdf/panda.urdf", "panda_link0", "panda_hand_tcp", PANDA_HOME,
                           ament=(AmentUrdf("moveit_resources_panda_description", "urdf/panda.urdf"),),
                           added_frames=(PANDA_TCP,)),
    "dual_panda": EmbeddedRobot("", "world", "left_panda_hand_tcp", PANDA_HOME * 2,
                                tip_frames=("left_panda_hand_tcp", "right_panda_hand_tcp"),
                                mounted=MountedArms("panda", TWO_PANDAS)),
    "dual_panda_torso": EmbeddedRobot("", "world", "left_panda_hand_tcp", (0.0, *PANDA_HOME * 2),
                                      tip_frames=("left_panda_hand_tcp", "right_panda_hand_tcp"),
                                      mounted=MountedArms("panda", TWO_PANDAS, Torso())),
    "baxter": EmbeddedRobot("baxter_description/urdf/baxter.urdf", "base", "left_gripper",
                            (0.0, -0.55, 0.0, 0.75, 0.0, 1.26, 0.0) * 2, tip_frames=("left_gripper", "right_gripper")),
    **{ur_type: EmbeddedRobot("", "base_link", "tool0", UR_HOME, built_in=ur_type) for ur_type in UR_ESERIES},
    **{f"{short}_cb3_ros1": robot for short, robot in UR_CB3_ROS1.items()},
    **{short: _cb3_alias(short) for short in UR_CB3_ROS1},
    "xarm7": EmbeddedRobot("xarm_description/urdf/xarm7.urdf", "link_base", "link_eef",
                           (0.0, -0.3, 0.0, 0.6, 0.0, 0.9, 0.0)),
    "z1": EmbeddedRobot("z1_description/urdf/z1.urdf", "link00", "link06",
                        (0.0, 1.0, -1.0, 0.0, 0.0, 0.0)),
    "so101": EmbeddedRobot("so_arm_description/urdf/so101.urdf", "base_link", "gripper_frame_link",
                           (0.0, -0.5, 0.5, 0.5, 0.0)),
    "kinova": EmbeddedRobot("kinova_description/robots/kinova.urdf", "j2s6s200_link_base",
                            "j2s6s200_end_effector", (0.0, 2.9, 1.3, -2.07, 1.4, 0.0)),
}


def ament_share_dir(package: str) -> Path | None:
    """`<prefix>/share/<package>` of the first AMENT_PREFIX_PATH prefix that registers `package`, else None.

    The same rule as ament_index_python's get_package_share_directory, written out because the core imports
    no ROS package.
    """
    for prefix in filter(None, os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)):
        if (Path(prefix) / "share" / "ament_index" / "resource_index" / "packages" / package).is_file():
            return Path(prefix) / "share" / package
    return None


def example_robot_data_dirs() -> list[Path]:
    """Where the example-robot-data robots/ folder may be, in search order (existing or not)."""
    candidates = [Path(p) / "cmeel.prefix" / ERD_ROBOTS for p in sys.path if p]
    candidates.append(Path(sys.prefix) / ERD_ROBOTS)
    return list(dict.fromkeys(candidates))


def example_robot_data_dir() -> Path:
    """The robots/ folder of the example-robot-data wheel (its Python import is broken in 6.0.0)."""
    for candidate in example_robot_data_dirs():
        if candidate.is_dir():
            return candidate
    raise ModelError("example-robot-data is not installed: no robots/ folder found on sys.path "
                     "(pip install example-robot-data, or run scripts/setup.sh)")


def urdf_candidates(name: str) -> list[str]:
    """Every place `embedded_robot(name)` looks, in order, as readable strings (for errors and docs)."""
    robot = _known(name)
    if robot.built_in:
        return [BUILT_IN_PLACE]
    if robot.mounted is not None:
        return [f"generated from embedded robot '{robot.mounted.arm}' (core.mounted_arms), found at: "
                f"{urdf_candidates(robot.mounted.arm)}"]
    places = []
    for entry in robot.ament:
        share = ament_share_dir(entry.package)
        places.append(str(share / entry.path) if share else f"ament package {entry.package} (not in "
                      f"AMENT_PREFIX_PATH)")
    places += [str(folder / robot.urdf) for folder in example_robot_data_dirs()]
    return places


class EmbeddedUrdf(NamedTuple):
    """An embedded robot and the URDF file it is loaded from (None, and `text` set, for a built-in one)."""

    robot: EmbeddedRobot
    urdf: Path | None
    text: str | None = None

    @property
    def xml(self) -> str:
        """The URDF document, with the robot's `added_frames` that this copy lacks."""
        if self.text is not None:
            return self.text
        return with_frames(self.urdf.read_text(), self.robot.added_frames)


def embedded_robot(name: str) -> EmbeddedUrdf:
    """Look up an embedded robot by name (see the module docstring for the search order).

    Raises:
        ModelError: an unknown name (the message lists the known ones), or no installed copy (the message
            lists every place searched).
    """
    robot = _known(name)
    if robot.built_in:
        from robokin_ros.core.ur_eseries_urdf import URDF
        return EmbeddedUrdf(robot, None, URDF[robot.built_in])
    if robot.mounted is not None:
        arm = robot.mounted
        return EmbeddedUrdf(robot, None, mounted_arms_urdf(embedded_robot(arm.arm).xml, arm.mounts, name, arm.torso))
    for entry in robot.ament:
        share = ament_share_dir(entry.package)
        if share is not None and (share / entry.path).is_file():
            return EmbeddedUrdf(robot, share / entry.path)
    for folder in example_robot_data_dirs():
        if (folder / robot.urdf).is_file():
            return EmbeddedUrdf(robot, folder / robot.urdf)
    raise ModelError(f"embedded robot '{name}': no URDF installed; searched, in order: {urdf_candidates(name)} "
                     "(install a listed ROS package or `pip install example-robot-data`, or give a URDF path)")


def urdf_xml(robot: str, xacro_args: str = "") -> str:
    """The URDF document of `robot`: an embedded name (with its added frames), the path of a URDF file, or of a
    xacro file (expanded with `xacro_args`, "name:=value ..."; see `core.model_source`)."""
    if robot in EMBEDDED_ROBOTS:
        return embedded_robot(robot).xml
    if not Path(robot).is_file():
        raise ModelError(f"robot '{robot}' is neither an embedded robot {sorted(EMBEDDED_ROBOTS)} nor a URDF or "
                         "xacro file")
    return robot_file_xml(robot, xacro_args)


def default_base_frame(robot: str) -> str:
    """The embedded robot's base frame; "" for a URDF path (its base_frame must be given)."""
    return EMBEDDED_ROBOTS[robot].base_frame if robot in EMBEDDED_ROBOTS else ""


def with_frames(xml: str, frames: tuple[FixedFrame, ...]) -> str:
    """`xml` with each frame it lacks appended as a link on a fixed joint; unchanged when none is missing."""
    root = ET.fromstring(xml)
    links = {link.get("name") for link in root.iter("link")}
    missing = [frame for frame in frames if frame.name not in links]
    if not missing:
        return xml
    for frame in missing:
        if frame.parent not in links:
            raise ModelError(f"cannot add frame '{frame.name}': parent link '{frame.parent}' is not in the URDF")
        ET.SubElement(root, "link", name=frame.name)
        joint = ET.SubElement(root, "joint", name=f"{frame.name}_joint", type="fixed")
        ET.SubElement(joint, "parent", link=frame.parent)
        ET.SubElement(joint, "child", link=frame.name)
        ET.SubElement(joint, "origin", xyz=" ".join(repr(v) for v in frame.xyz), rpy="0 0 0")
    return ET.tostring(root, encoding="unicode")


def _known(name: str) -> EmbeddedRobot:
    try:
        return EMBEDDED_ROBOTS[name]
    except KeyError:
        raise ModelError(f"no embedded robot named '{name}'; known: {sorted(EMBEDDED_ROBOTS)}") from None


# SRDF files of the embedded robots, relative to example-robot-data's robots/ folder (a srdf/ folder next to each
# description's urdf/). Their link names also match the moveit_resources Panda. Robots not listed ship none.
EMBEDDED_SRDFS: dict[str, str] = {
    "panda": "panda_description/srdf/panda.srdf",
    "ur5": "ur_description/srdf/ur5.srdf",
    "ur5_cb3_ros1": "ur_description/srdf/ur5.srdf",
    "xarm7": "xarm_description/srdf/xarm7.srdf",
    "z1": "z1_description/srdf/z1.srdf",
    "kinova": "kinova_description/srdf/kinova.srdf",
    "baxter": "baxter_description/srdf/baxter_manipulation.srdf",
}


def embedded_srdf(name: str) -> Path | None:
    """The SRDF installed for embedded robot `name`, or None when it has none (or example-robot-data is missing).

    Raises:
        ModelError: an unknown robot name (the message lists the known ones).
    """
    _known(name)
    relative = EMBEDDED_SRDFS.get(name)
    if relative is None:
        return None
    return next((folder / relative for folder in example_robot_data_dirs() if (folder / relative).is_file()), None)


def embedded_srdf_text(name: str) -> tuple[str, str]:
    """(SRDF XML, where it came from) for embedded robot `name`; ("", "") when it has none. A robot of mounted
    arms gets its arm's SRDF once per arm, prefixed (`core.mounted_arms.mounted_arms_srdf`).

    Raises:
        ModelError: an unknown robot name (the message lists the known ones).
    """
    robot = _known(name)
    if robot.mounted is not None:
        xml, place = embedded_srdf_text(robot.mounted.arm)
        if not xml:
            return "", ""
        return (mounted_arms_srdf(xml, robot.mounted.mounts, name),
                f"{place}, once per arm ({', '.join(m.prefix for m in robot.mounted.mounts)})")
    found = embedded_srdf(name)
    return (found.read_text(), str(found)) if found else ("", "")
