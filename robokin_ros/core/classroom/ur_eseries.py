"""UR e-series arms (ur3e, ur5e, ur10e, ur16e, ur20, ur30) in ROS 2 frames, from Universal Robots' DH tables.

Kinematics: Universal Robots' published standard DH table ("DH parameters for calculations of kinematics and
dynamics"): alpha = (pi/2, 0, 0, pi/2, -pi/2, 0), a = (0, a2, a3, 0, 0, 0), d = (d1, 0, 0, d4, d5, d6), no theta
offsets. These are the figures ur_description's `config/<type>/default_kinematics.yaml` is built from (its
x/y/z/roll/pitch/yaw per joint reproduce the same chain to 1e-10 m).

Frames, named as ur_description (ROS 2, `urdf/ur_macro.xacro`) names them:

* `base_link`: the root. `base` (the controller's base frame, DH frame 0) is `base_link` turned by a 180 deg yaw
  (ur_description's fixed joint `base_link-base_fixed_joint`). ROS 1's ur_description and example-robot-data's
  `ur5` lack this yaw: there `base_link` is the DH base frame.
* `tool0`: DH frame 6, the tool flange as the controller reports it (ur_description's `wrist_3_link` and
  `tool0` coincide). `flange`: `tool0` turned so that x points out of the flange (ur_description's
  `wrist_3-flange` origin, rpy (0, -pi/2, -pi/2)); here it hangs under `tool0` rather than beside it.
* joints `shoulder_pan_joint` ... `wrist_3_joint`, zero where the controller reads zero.

The links in between are the DH toolbox's (`dh_link<i>` on joint i's axis, `dh_frame<i>` at DH frame i): they are
*not* ur_description's `shoulder_link` ... `wrist_3_link`, whose origins sit elsewhere, so they carry other names.
Inertias are the toolbox's placeholders (the DH table has no mass data).

Joint limits: ur_description's `config/<type>/joint_limits.yaml` (position +-360 deg, the elbow +-180 deg, the
UR3e's wrist 3 unlimited; velocity and effort per joint).

The URDF text is generated once, by `python -m robokin_ros.core.classroom.ur_eseries`, into
`robokin_ros/core/ur_eseries_urdf.py`, which `core.embedded` serves by name (the shared core cannot import the
classroom toolbox); test/core/classroom/test_ur_eseries.py fails whenever that file is not what this module generates.
"""
from __future__ import annotations

import math
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import NamedTuple

from robokin_ros.core.classroom.dh import DhRobot, DhRow
from robokin_ros.core.classroom.dh_urdf import dh_to_urdf
from robokin_ros.core.classroom.transforms import pose, rot_z
from robokin_ros.core.errors import ModelError

JOINT_NAMES = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
               "wrist_3_joint")
ALPHA = (math.pi / 2, 0.0, 0.0, math.pi / 2, -math.pi / 2, 0.0)
BASE_LINK_T_BASE = rot_z(math.pi)                                       # (4, 4) base_link -> base: 180 deg yaw
TOOL0_T_FLANGE = pose((0.0, 0.0, 0.0), (0.0, -math.pi / 2, -math.pi / 2))  # (4, 4) ur_macro.xacro wrist_3-flange
HOME = (0.0, -1.571, 1.571, -1.571, -1.571, 0.0)     # [rad] arm up, tool down: well away from every singularity
GENERATED_MODULE = Path(__file__).resolve().parents[1] / "ur_eseries_urdf.py"


class UrDh(NamedTuple):
    """The non-zero lengths of a UR DH table [m]."""

    d1: float
    a2: float
    a3: float
    d4: float
    d5: float
    d6: float


class UrLimits(NamedTuple):
    """Per-joint limits of ur_description's joint_limits.yaml, shoulder pan first."""

    velocity_deg: tuple[float, ...]      # [deg/s]
    effort: tuple[float, ...]            # [N m]
    wrist_3_unlimited: bool = False      # ur3e: wrist 3 turns endlessly (a continuous joint)


DH: dict[str, UrDh] = {
    "ur3e": UrDh(0.15185, -0.24355, -0.2132, 0.13105, 0.08535, 0.0921),
    "ur5e": UrDh(0.1625, -0.425, -0.3922, 0.1333, 0.0997, 0.0996),
    "ur10e": UrDh(0.1807, -0.6127, -0.57155, 0.17415, 0.11985, 0.11655),
    "ur16e": UrDh(0.1807, -0.4784, -0.36, 0.17415, 0.11985, 0.11655),
    "ur20": UrDh(0.2363, -0.862, -0.7287, 0.201, 0.1593, 0.1543),
    "ur30": UrDh(0.2363, -0.637, -0.5037, 0.201, 0.1593, 0.1543),
}
LIMITS: dict[str, UrLimits] = {
    "ur3e": UrLimits((180.0, 180.0, 180.0, 360.0, 360.0, 360.0), (54.0, 54.0, 28.0, 9.0, 9.0, 9.0), True),
    "ur5e": UrLimits((180.0,) * 6, (150.0, 150.0, 150.0, 28.0, 28.0, 28.0)),
    "ur10e": UrLimits((120.0, 120.0, 180.0, 180.0, 180.0, 180.0), (330.0, 330.0, 150.0, 54.0, 54.0, 54.0)),
    "ur16e": UrLimits((120.0, 120.0, 180.0, 180.0, 180.0, 180.0), (330.0, 330.0, 150.0, 54.0, 54.0, 54.0)),
    "ur20": UrLimits((120.0, 120.0, 150.0, 210.0, 210.0, 210.0), (738.0, 738.0, 433.0, 107.0, 107.0, 107.0)),
    "ur30": UrLimits((120.0, 120.0, 150.0, 210.0, 210.0, 210.0), (738.0, 738.0, 433.0, 107.0, 107.0, 107.0)),
}
UR_TYPES = tuple(DH)


def _known(ur_type: str) -> tuple[UrDh, UrLimits]:
    if ur_type not in DH:
        raise ModelError(f"no UR e-series type '{ur_type}'; known: {list(UR_TYPES)}")
    return DH[ur_type], LIMITS[ur_type]


def ur_dh_robot(ur_type: str) -> DhRobot:
    """The DH table of `ur_type` framed base_link -> flange: base = the 180 deg yaw, tool = tool0 -> flange."""
    dh, limits = _known(ur_type)
    a, d = (0.0, dh.a2, dh.a3, 0.0, 0.0, 0.0), (dh.d1, 0.0, 0.0, dh.d4, dh.d5, dh.d6)
    rows = []
    for i in range(6):
        bound = math.pi if i == 2 else 2 * math.pi
        if i == 5 and limits.wrist_3_unlimited:
            bound = math.inf
        rows.append(DhRow(a=a[i], alpha=ALPHA[i], d=d[i], lower=-bound, upper=bound,
                          velocity=math.radians(limits.velocity_deg[i]), effort=limits.effort[i]))
    return DhRobot(tuple(rows), "standard", base=BASE_LINK_T_BASE, tool=TOOL0_T_FLANGE, name=ur_type)


def _renames() -> tuple[dict[str, str], dict[str, str]]:
    """(links, joints): the DH toolbox's names -> this module's (see the module docstring)."""
    links = {"base": "base_link", "frame0": "base", "frame6": "tool0", "tool": "flange"}
    links.update({f"link{i}": f"dh_link{i}" for i in range(1, 7)})
    links.update({f"frame{i}": f"dh_frame{i}" for i in range(1, 6)})
    joints = {"base_fixed": "base_link-base_fixed_joint", "frame6_fixed": "dh_link6-tool0",
              "tool_fixed": "tool0-flange"}
    joints.update({f"joint{i}": name for i, name in enumerate(JOINT_NAMES, start=1)})
    joints.update({f"frame{i}_fixed": f"dh_link{i}-dh_frame{i}" for i in range(1, 6)})
    return links, joints


def ur_urdf(ur_type: str) -> str:
    """The URDF document of `ur_type` (the toolbox's DH -> URDF, links and joints renamed)."""
    root = ET.fromstring(dh_to_urdf(ur_dh_robot(ur_type)))
    links, joints = _renames()
    for link in root.iter("link"):
        link.set("name", links[link.get("name")])
    for joint in root.iter("joint"):
        joint.set("name", joints[joint.get("name")])
        for end in ("parent", "child"):
            element = joint.find(end)
            element.set("link", links[element.get("link")])
    ET.indent(root, "  ")
    return ET.tostring(root, encoding="unicode") + "\n"


def generated_module() -> str:
    """The text of `robokin_ros/core/ur_eseries_urdf.py`: every type's URDF as a string constant."""
    lines = ['"""GENERATED by `python -m robokin_ros.core.classroom.ur_eseries`: do not edit (see that module).',
             "",
             "The UR e-series URDFs in ROS 2 frames, built from Universal Robots' DH tables; core.embedded serves them",
             "by name. test/core/classroom/test_ur_eseries.py fails when this file is not what the generator writes.",
             '"""',
             "",
             "URDF = {"]
    for ur_type in UR_TYPES:
        text = ur_urdf(ur_type)
        if '"""' in text or "\\" in text:
            raise ModelError(f"{ur_type}: the URDF text cannot be written as a plain triple-quoted string")
        lines.append(f'    "{ur_type}": """\\\n{text}""",')
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the generated module (or, with --check, exit 1 when it is stale)."""
    argv = sys.argv[1:] if argv is None else argv
    text = generated_module()
    if "--check" in argv:
        current = GENERATED_MODULE.read_text() if GENERATED_MODULE.is_file() else ""
        print(f"{GENERATED_MODULE}: {'up to date' if current == text else 'STALE'}")
        return 0 if current == text else 1
    GENERATED_MODULE.write_text(text)
    print(f"wrote {GENERATED_MODULE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
