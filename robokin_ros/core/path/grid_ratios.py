"""toppra's solution at its own grid points over the limits: which limit each grid interval runs at (the report's
`limited_by`, the limit schedule's per-stretch names) and whether any speed limit is touched at all (what lets a
derated run be the first solution stretched, core/path/toppra_run.py)."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from robokin_ros.core.path.const_accel import ConstAccelTrajectory
from robokin_ros.core.path.toppra_constraints import LimitLookup, ToolSpeedLimit, limit_vector, tool_speeds

ACTIVE = 1e-2           # a limit binds an interval when it is used to within 1 %


class GridRatios(NamedTuple):
    """toppra's solution at its grid points over the limits: speeds per point, accelerations per interval."""

    speed: np.ndarray          # (N, n [+ 2]) |qd| / v_max per joint [, tool speed / limit, angular / limit]
    accel: np.ndarray          # (N - 1, n) |qdd| / a_max, the larger of the interval's two ends

    def binding(self) -> np.ndarray:
        """`binding_limits`' labels (N - 1,)."""
        n = self.accel.shape[1]
        speed = np.minimum(self.speed[:-1], self.speed[1:])                            # (N - 1, .)
        ratios = np.hstack([speed[:, :n], self.accel, speed[:, n:]])                   # joint v, joint a, tool
        label = ratios.argmax(axis=1)
        return np.where(ratios.max(axis=1) >= 1.0 - ACTIVE, label, -1)

    def speeds_free(self) -> bool:
        """No velocity nor tool speed limit within 1 % of its bound at any grid point: the solution is then
        the acceleration-limited optimum, which lower acceleration limits only slow down uniformly."""
        return bool(self.speed.size == 0 or self.speed.max() < 1.0 - ACTIVE)


def grid_ratios(trajectory: ConstAccelTrajectory, v_max, a_max, tool: ToolSpeedLimit | None,
                schedule: LimitLookup | None) -> GridRatios:
    """The ratios of toppra's (unstretched) solution; with a schedule, each grid point against its own limits."""
    ss, sd, us = trajectory.ss, trajectory.sd, trajectory.us
    dq, ddq = trajectory.path(ss, 1), trajectory.path(ss, 2)                           # (N, n)
    tool_limits = None if tool is None else limit_vector(tool)
    if schedule is not None:
        v_max, a_max, tool_limits = schedule.limits_at(ss, v_max, a_max)                # (N, n), (N, n), (N, 2)
    per_s = np.abs(dq) / v_max
    if tool is not None:
        known = getattr(trajectory, "grid_tool_speeds", None)
        speeds = (known[1] if known is not None and known[0] is tool.chain
                  else tool_speeds(tool.chain, trajectory.path(ss), dq))                       # (N, 2)
        per_s = np.hstack([per_s, speeds / tool_limits])
    a_max = np.broadcast_to(a_max, dq.shape)
    accel = np.maximum(np.abs(ddq[:-1] * sd[:-1, None] ** 2 + dq[:-1] * us[:, None]) / a_max[:-1],
                       np.abs(ddq[1:] * sd[1:, None] ** 2 + dq[1:] * us[:, None]) / a_max[1:])
    return GridRatios(per_s * sd[:, None], accel)


def binding_limits(trajectory: ConstAccelTrajectory, v_max, a_max, tool: ToolSpeedLimit | None = None,
                   schedule: LimitLookup | None = None):
    """The limit each grid interval of toppra's solution runs at (within 1 %), shape (N - 1,) int:
    j = velocity of joint j, n + j = acceleration of joint j, 2n = tool speed, 2n + 1 = tool angular speed,
    -1 = none. A velocity binds an interval when it is at its limit at both ends; an acceleration when it
    is at its limit at either end (toppra's interpolation scheme constrains both). With a schedule, each grid
    point is measured against its own limits (the tool's limits are then the schedule's)."""
    return grid_ratios(trajectory, v_max, a_max, tool, schedule).binding()


def limit_name(label: int, joint_names) -> str:
    """A `binding_limits` label in words ("" for -1)."""
    n = len(joint_names)
    if label < 0:
        return ""
    if label < 2 * n:
        return f"{('velocity', 'acceleration')[label // n]} of {joint_names[label % n]}"
    return ("tool speed", "tool angular speed")[label - 2 * n]


def limited_by(trajectory: ConstAccelTrajectory, labels: np.ndarray, joint_names) -> str:
    """The limit that binds the longest share of the duration ("" when none binds), from `binding_limits`."""
    weights = np.bincount(labels + 1, weights=np.diff(trajectory.ts))                  # slot 0 = none
    if len(weights) < 2 or weights[1:].max() <= 0:
        return ""
    return limit_name(int(weights[1:].argmax()), joint_names)
