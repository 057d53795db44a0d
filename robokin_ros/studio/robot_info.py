"""The info panel: model, brand, reach, rated payload where known, degrees of freedom, joint limits.

Reach is measured, not quoted: the largest horizontal radius of the tool from the base z axis over sampled
configurations within the joint limits (`core.classroom.workspace`), so it holds for any URDF. Brand, product name
and rated payload come from the model's own names: the studio's robot name (an embedded name, or a URDF file's
stem) and then the URDF's `<robot name>`, matched against the arms example-robot-data and the built-in UR
descriptions ship. A robot none of them names shows "—" for the brand and the payload, and its own name as model.

A robot with several tips (two arms on a table, a torso) has a reach per tip: the largest horizontal radius of that
tip from the vertical line through the first joint of its chain (its arm's mount, or the torso), over the same
sampled configurations; the panel shows each and the tips.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from robokin_ros.core.classroom.workspace import reach_envelope, sample_positions, sample_workspace
from robokin_ros.core.robot import RobotModel

REACH_SAMPLES = 4000
UNKNOWN = "—"
RATED_PAYLOAD_KG = {      # [kg] manufacturers' data sheets, by product (as KNOWN_PRODUCTS names it)
    "Panda": 3.0,
    "UR3 (CB3)": 3.0,
    "UR5 (CB3)": 5.0,
    "UR10 (CB3)": 10.0,
    "xArm 7": 3.5,
}


@dataclass(frozen=True)
class Product:
    """What a robot is, as its maker sells it."""

    brand: str
    model: str


def _ur(match: re.Match) -> Product:
    size, eseries = match.group(1), match.group(2)
    if eseries:
        return Product("Universal Robots", f"UR{size}e")
    # example-robot-data's ur3/ur5/ur10 are the CB3 arms; UR20 and UR30 have no "e" in their names
    return Product("Universal Robots", f"UR{size} (CB3)" if size in ("3", "5", "10") else f"UR{size}")


# a robot or URDF name (lower case) -> its product: example-robot-data's descriptions, the built-in UR e-series
KNOWN_PRODUCTS = (
    (re.compile(r"panda"), lambda m: Product("Franka Emika", "Panda")),
    (re.compile(r"ur(3|5|10|16|20|30)(e)?(?:_|$)"), _ur),
    (re.compile(r"xarm(\d)"), lambda m: Product("UFactory", f"xArm {m.group(1)}")),
    (re.compile(r"uf_robot$"), lambda m: Product("UFactory", "xArm")),
    (re.compile(r"z1(?:_|$)"), lambda m: Product("Unitree", "Z1")),
    (re.compile(r"so10([01])(?:_|$)"), lambda m: Product("The Robot Studio", f"SO-10{m.group(1)}")),
    (re.compile(r"kinova|j2[ns]\d"), lambda m: Product("Kinova", "Jaco Gen2")),
    (re.compile(r"baxter"), lambda m: Product("Rethink Robotics", "Baxter")),
)


def urdf_robot_name(xml: str) -> str:
    """The `<robot name="...">` of a URDF document ("" when there is none)."""
    found = re.search(r"<robot\b[^>]*\bname\s*=\s*[\"']([^\"']*)[\"']", xml or "")
    return found.group(1) if found else ""


def product_of(*names: str) -> Product | None:
    """The product the first name that matches one (whole name, from its start) calls for, else None."""
    for name in names:
        for pattern, product in KNOWN_PRODUCTS:
            found = pattern.match(name.strip().lower())
            if found:
                return product(found)
    return None


@dataclass(frozen=True)
class RobotInfo:
    """What the info panel shows about a robot."""

    name: str
    brand: str                # the maker, "—" when unknown
    model: str                # the product ("Panda"), or the robot's own name when unknown
    base_frame: str
    tip_frame: str
    dof: int
    reach: float              # [m] largest sampled tool radius from the base z axis
    payload: float | None     # [kg] rated payload, None when unknown
    joints: tuple[tuple[str, float, float, float, float], ...]   # name, lower, upper, velocity, effort
    tip_reaches: tuple[tuple[str, float], ...] = ()   # several tips: (tip, reach [m]) each, see the docstring

    def markdown(self) -> str:
        payload = f"{self.payload:g} kg (rated)" if self.payload is not None else UNKNOWN
        lines = [f"**{self.name}**: {self.dof} DOF, {self.base_frame} → {self.tip_frame}", "",
                 "| | |", "|---|---|", f"| Model | {self.model} |", f"| Brand | {self.brand} |",
                 *([f"| Reach | {self.reach * 1e3:.0f} mm |"] if not self.tip_reaches else
                   [f"| Reach of {tip} | {reach * 1e3:.0f} mm |" for tip, reach in self.tip_reaches]),
                 f"| Payload | {payload} |", f"| DOF | {self.dof} |", "",
                 "| joint | range [deg] | vel [deg/s] | effort [N m] |", "|---|---|---|---|"]
        for name, lower, upper, velocity, effort in self.joints:
            span = (f"{math.degrees(lower):.0f} … {math.degrees(upper):.0f}" if math.isfinite(lower)
                    and math.isfinite(upper) else "continuous")
            speed = f"{math.degrees(velocity):.0f}" if math.isfinite(velocity) else "–"
            torque = f"{effort:g}" if math.isfinite(effort) else "–"
            lines.append(f"| {name} | {span} | {speed} | {torque} |")
        return "\n".join(lines)


def robot_info(robot: RobotModel, samples: int = REACH_SAMPLES) -> RobotInfo:
    """The info of `robot` (its reach sampled with a fixed seed, so it is the same every time)."""
    tip_reaches = ()
    if len(robot.tip_frames) > 1:
        tip_reaches = tuple(zip(robot.tip_frames, tips_reach(robot, samples)))
        reach = max(r for _, r in tip_reaches)
    else:
        reach = reach_envelope(sample_workspace(robot, samples, seed=0).points).max_radius
    limits = robot.limits
    joints = tuple((name, float(limits.lower[j]), float(limits.upper[j]), float(limits.velocity[j]),
                    float(limits.effort[j])) for j, name in enumerate(robot.joint_names))
    product = product_of(robot.name, urdf_robot_name(getattr(robot, "urdf_xml", "")))
    brand, model = (product.brand, product.model) if product else (UNKNOWN, robot.name)
    tips = ", ".join(robot.tip_frames)
    return RobotInfo(robot.name, brand, model, robot.base_frame, tips, robot.n, reach,
                     RATED_PAYLOAD_KG.get(model) if product else None, joints, tip_reaches)


def tips_reach(robot: RobotModel, samples: int = REACH_SAMPLES) -> list[float]:
    """[m] per tip of `robot.tip_frames`: the largest horizontal distance of the tip from the vertical line through
    the first joint of its chain, over `samples` configurations (seed 0)."""
    positions = sample_positions(robot, samples, False, 0)
    model, data = robot.model, robot.model.createData()
    base_T_world = robot.world_T_base.inverse()
    axes_at = []
    for indices in robot.tip_joint_indices:
        pin.forwardKinematics(model, data, robot.to_pinocchio_q(robot.home()))
        first = model.getJointId(robot.joint_names[int(min(indices))])
        axes_at.append(base_T_world.act(data.oMi[first].translation)[:2])
    radii = np.zeros((len(robot.tip_frames), len(positions)))
    for k, q in enumerate(positions):
        pin.framesForwardKinematics(model, data, robot.to_pinocchio_q(q))
        for i, frame_id in enumerate(robot.tip_frame_ids):
            radii[i, k] = np.linalg.norm(base_T_world.act(data.oMf[frame_id].translation)[:2] - axes_at[i])
    return [float(r) for r in radii.max(axis=1)]
