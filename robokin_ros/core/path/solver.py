"""Incremental path IK: one bounded damped-least-squares step per dense sample, seeded from the previous one.

Each sample's pose error (dt = 1) is the task velocity of the shared DLS kernel (`core.dls`, its Cholesky
variant `bounded_dls_fast_into`, called from the compiled block loop of `ik_kernel`), so
a sample is reached from the previous solution in one step (1 mm apart: the linearization error is
~1e-7 m) and the arm can never jump to another IK branch. Joint position limits (with margin) are velocity
bounds of that kernel, enforced at every step.

Checks run on every dense sample and every joint-space midpoint, in blocks of `CHECK_BLOCK` samples with
batched FK (`ChainFk`): the serial loop stays lean, the reported failure is the first failing sample, and
at most one block of extra work is done after it. Tolerances are never relaxed.
"""
from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.limits import avoidance_zone_widths
from robokin_ros.core.path.budget import UNLIMITED, PlanningBudget
from robokin_ros.core.path.chain import ChainFk
from robokin_ros.core.path.checks import AxisSelection, BlockCheck, check_block
from robokin_ros.core.path.config import PathConfig, axis_mask_problems
from robokin_ros.core.path.geometry import DensePath
from robokin_ros.core.path.ik_kernel import KernelSettings, solve_path_block
from robokin_ros.core.path.reach import arm_reach
from robokin_ros.core.path.result import Deviations, PathIkResult, PathStatus
from robokin_ros.core.path.stuck import why_stuck
from robokin_ros.core.robot import RobotModel

CHECK_BLOCK = 64


class _Settings(NamedTuple):
    axes: AxisSelection
    kernel: KernelSettings


class PathIkSolver:
    """Solves dense paths for one robot and tool frame; reuse it across paths (it caches batched FK)."""

    def __init__(self, robot: RobotModel, config: PathConfig | None = None, tip_frame: str = "") -> None:
        self.robot = robot
        self.config = c = config or PathConfig()
        self.config.check_joint_lists(robot.joint_names)
        self.frame_id = robot.frame_id(tip_frame) if tip_frame else robot.tip_frame_id
        self.fk = ChainFk(robot, self.frame_id)
        self._chain = self.fk.arrays()
        lim = robot.limits
        limit_gain, posture_gain = float(c.joint_limit_avoidance_gain_per_sample), float(c.posture_gain_per_sample)
        # the avoidance band is a share of the full range; the margin only moves the hard bounds
        self._kernel = KernelSettings(
            np.arange(6), False, np.ascontiguousarray(robot.world_T_base.rotation), int(c.max_optimizer_iterations),
            float(c.convergence_tolerance), lim.lower + c.joint_limit_margin, lim.upper - c.joint_limit_margin,
            float(c.singularity_sigma_threshold), float(c.max_damping), limit_gain > 0.0 or posture_gain > 0.0,
            limit_gain, avoidance_zone_widths(lim.lower, lim.upper, c.joint_limit_avoidance_zone), posture_gain,
            np.asarray(c.home_positions, float) if c.home_positions else robot.home())

    def axes(self, axis_mask: np.ndarray | None = None, axis_frame: str | None = None) -> AxisSelection:
        """The constrained axes of a request: a bool (6,) mask (vx, vy, vz, wx, wy, wz) and "tool" or "base";
        None = the config's.

        Raises:
            InvalidInputError: a mask that is not six booleans with at least one true, or another frame.
        """
        axis_frame = axis_frame or self.config.axis_mask_frame
        if axis_mask is None:
            mask = np.array(self.config.axis_mask, dtype=bool)       # validated with the config
        else:
            mask = np.asarray(axis_mask)
            problems = axis_mask_problems(mask.tolist() if mask.dtype == bool else axis_mask)
            if problems:
                raise InvalidInputError(problems[0])
        if axis_frame not in ("tool", "base"):
            raise InvalidInputError(f"axis_mask_frame='{axis_frame}' must be 'tool' or 'base'")
        return AxisSelection(np.flatnonzero(mask), axis_frame == "tool")

    def _settings(self, axis_mask, axis_frame: str | None) -> _Settings:
        # a planner validates a request's mask once (`axes`) and passes the selection on
        axes = axis_mask if isinstance(axis_mask, AxisSelection) else self.axes(axis_mask, axis_frame)
        # with all six axes constrained the DLS step is the same in any axes (an orthogonal change of
        # coordinates of J and b), so it is solved in base axes
        kernel = self._kernel._replace(rows=axes.rows, tool_axes=axes.tool_axes and len(axes.rows) < 6)
        return _Settings(axes, kernel)

    def solve(self, path: DensePath, start_positions: np.ndarray, axis_mask=None,
              axis_frame: str | None = None, budget: PlanningBudget = UNLIMITED) -> PathIkResult:
        """Solve every dense sample of `path` starting from `start_positions` (n,) [rad | m].

        Args:
            path: dense geometric path in the base frame; sample 0 should be FK(start_positions).
            start_positions: current joint positions.
            axis_mask: bool (6,) constrained axes (vx, vy, vz, wx, wy, wz), None = config, or the
                `AxisSelection` `axes` made of them.
            axis_frame: "tool" or "base", None = config.
            budget: checked before every block of CHECK_BLOCK samples.

        Returns:
            PathIkResult: SUCCESS with every sample, or the failure reason with the solved prefix.

        Raises:
            PlanningStopped: the budget's caller canceled or its time ran out.
        """
        t0 = time.perf_counter()
        q0 = self.robot.check_positions(start_positions, "start positions")
        s = self._settings(axis_mask, axis_frame)
        start_issue = self._start_outside_limits(q0)
        Q = np.empty((path.size, self.robot.n))
        Q[0] = q0
        sigma = np.full(path.size, np.inf)
        worst = Deviations()
        bad = BlockCheck() if start_issue is None else start_issue
        k = 1
        while bad.index < 0 and k < path.size:
            budget.check("IK", k - 1, path.size - 1)
            end = min(k + CHECK_BLOCK, path.size)
            self._solve_block(path, Q, sigma, k, end, s)
            bad, worst = check_block(self.fk, path, Q, k, end, s.axes, self.config, worst)
            k = end
        return self._result(path, Q, sigma, bad, worst, s, time.perf_counter() - t0)

    def _start_outside_limits(self, q0: np.ndarray) -> BlockCheck | None:
        lim = self.robot.limits
        outside = np.flatnonzero((q0 < lim.lower) | (q0 > lim.upper))
        if len(outside) == 0:
            return None
        j = int(outside[0])
        limit = lim.lower[j] if q0[j] < lim.lower[j] else lim.upper[j]
        return BlockCheck(0, PathStatus.JOINT_LIMIT, joint=j, value=float(q0[j]), limit=float(limit),
                          detail="the start state is outside the joint limits")

    def _solve_block(self, path: DensePath, Q, sigma, k0: int, k1: int, s: _Settings) -> None:
        """Serial DLS steps for samples k0..k1-1 in one compiled call (`ik_kernel.solve_path_block`)."""
        solve_path_block(Q, sigma, k0, k1, path.positions[k0:k1], path.rotations[k0:k1], self._chain, s.kernel)

    def _result(self, path, Q, sigma, bad: BlockCheck, worst: Deviations, s: _Settings,
                elapsed: float) -> PathIkResult:
        if bad.index < 0:
            return PathIkResult(PathStatus.SUCCESS, f"path solved: {path.size} samples, "
                                f"{path.length * 1e3:.1f} mm", Q, path, 1.0, path.length, worst,
                                compute_time=elapsed)
        k = bad.index
        status, joint, value, limit = bad.status, bad.joint, bad.value, bad.limit
        good = max(k - 1, 0)
        reason = ""
        if status in (PathStatus.PATH_DEVIATION, PathStatus.JOINT_JUMP) and k > 0:
            limited = self._limited_joint(Q[k])
            if limited is not None:
                status, (joint, value, limit) = PathStatus.JOINT_LIMIT, limited
            elif sigma[k] < s.kernel.sigma_threshold:
                status = PathStatus.SINGULARITY
            else:
                reason = why_stuck(self.robot, self.frame_id, arm_reach(self.robot, self.frame_id), Q[0], Q[good],
                                   path.positions[k], s.axes)
                status = PathStatus.SINGULARITY if reason else status
        name = self.robot.joint_names[joint] if joint >= 0 else ""
        message = _failure_message(status, k, path, bad.detail, name, value, limit, sigma[k], reason)
        return PathIkResult(status, message, Q[:good + 1].copy(), path, float(path.progress[good]),
                            float(path.arc_length[good]), worst, k, path.pose(k), name,
                            value, limit, elapsed)

    def _limited_joint(self, q: np.ndarray):
        """(index, value, limit) of the joint closest to (or at) its margin-shrunk limit, if any is at it."""
        lower, upper = self._kernel.lower, self._kernel.upper
        gap_low, gap_high = q - lower, upper - q
        j = int(np.argmin(np.minimum(gap_low, gap_high)))
        if min(gap_low[j], gap_high[j]) > 1e-9:
            return None
        limit = lower[j] if gap_low[j] <= gap_high[j] else upper[j]
        return j, float(q[j]), float(limit)


def _failure_message(status: PathStatus, k: int, path: DensePath, detail: str, joint: str, value: float,
                     limit: float, sigma: float, reason: str = "") -> str:
    where = (f"at dense sample {k} of {path.size} ({path.arc_length[k] * 1e3:.1f} mm of "
             f"{path.length * 1e3:.1f} mm, {path.progress[k] * 100:.1f} % of the path)")
    text = f"{status.sentence} {where}"
    if status == PathStatus.JOINT_LIMIT:
        text += f": joint '{joint}' at {value:.4f} reaches its limit {limit:.4f} (margin included)"
    elif reason:
        text += f": {reason}"
    elif status == PathStatus.SINGULARITY:
        text += f": smallest singular value {sigma:.2e}"
    if detail:
        text += f"; {detail}"
    return text
