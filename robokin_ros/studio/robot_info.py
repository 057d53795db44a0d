"""The info panel: model, degrees of freedom, reach, rated payload where known, joint limits.

Reach is measured, not quoted: the largest horizontal radius of the tool from the base z axis over sampled
configurations within the joint limits (`core.classroom.workspace`), so it holds for any URDF. Rated payloads are
the manufacturers' published figures for the embedded arms; other robots say "unknown".
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from robokin_ros.core.classroom.workspace import reach_envelope, sample_workspace
from robokin_ros.core.robot import RobotModel

REACH_SAMPLES = 4000
RATED_PAYLOAD_KG = {      # [kg] manufacturers' data sheets
    "panda": 3.0,
    "ur3": 3.0,
    "ur5": 5.0,
    "ur10": 10.0,
    "xarm7": 3.5,
}


@dataclass(frozen=True)
class RobotInfo:
    """What the info panel shows about a robot."""

    name: str
    base_frame: str
    tip_frame: str
    dof: int
    reach: float              # [m] largest sampled tool radius from the base z axis
    payload: float | None     # [kg] rated payload, None when unknown
    joints: tuple[tuple[str, float, float, float, float], ...]   # name, lower, upper, velocity, effort

    def markdown(self) -> str:
        payload = f"{self.payload:g} kg (rated)" if self.payload is not None else "unknown"
        lines = [f"**{self.name}**: {self.dof} DOF, {self.base_frame} → {self.tip_frame}  ",
                 f"reach {self.reach * 1e3:.0f} mm, payload {payload}", "",
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
    envelope = reach_envelope(sample_workspace(robot, samples, seed=0).points)
    limits = robot.limits
    joints = tuple((name, float(limits.lower[j]), float(limits.upper[j]), float(limits.velocity[j]),
                    float(limits.effort[j])) for j, name in enumerate(robot.joint_names))
    return RobotInfo(robot.name, robot.base_frame, robot.tip_frame, robot.n, envelope.max_radius,
                     RATED_PAYLOAD_KG.get(robot.name), joints)
