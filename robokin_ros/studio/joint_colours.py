"""Each joint's share of its range, as a colour for the links it moves.

Green in the middle of the range, through yellow, to red at a limit; a joint the servo has locked at a limit is
drawn in a colour of its own, so the reason the arm stopped following the gizmo is visible on the arm itself.
Joints without limits (continuous) stay neutral.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from robokin_ros.core.robot import RobotModel

Rgb = tuple[int, int, int]
NEUTRAL: Rgb = (205, 205, 212)
LOCKED: Rgb = (170, 40, 255)          # violet: far from the green-yellow-red scale


class JointShade(NamedTuple):
    """One joint's place in its range and the colour of its links."""

    name: str
    share: float          # (q - lower) / (upper - lower) in [0, 1]; nan without limits
    locked: bool
    rgb: Rgb


def range_colour(share: float) -> Rgb:
    """Green at 0.5, yellow at 0.25 / 0.75, red at 0 and 1 (clipped outside)."""
    closeness = 1.0 - min(1.0, abs(2.0 * min(max(share, 0.0), 1.0) - 1.0))      # 1 mid-range, 0 at a limit
    red = 1.0 if closeness < 0.5 else 2.0 * (1.0 - closeness)
    green = 1.0 if closeness >= 0.5 else 2.0 * closeness
    return int(round(40 + 200 * red)), int(round(40 + 180 * green)), 50


def joint_shades(robot: RobotModel, positions: npt.ArrayLike, locked_joints: tuple[str, ...] = ()) -> list[JointShade]:
    """A shade per chain joint at `positions` (n,) [rad | m]; `locked_joints` are the servo's locked names."""
    q = np.asarray(positions, float)
    lower, upper = robot.limits.lower, robot.limits.upper
    shades = []
    for j, name in enumerate(robot.joint_names):
        bounded = np.isfinite(lower[j]) and np.isfinite(upper[j]) and upper[j] > lower[j]
        share = float((q[j] - lower[j]) / (upper[j] - lower[j])) if bounded else float("nan")
        locked = name in locked_joints
        rgb = LOCKED if locked else (range_colour(share) if bounded else NEUTRAL)
        shades.append(JointShade(name, share, locked, rgb))
    return shades
