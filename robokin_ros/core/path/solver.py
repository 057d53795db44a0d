"""Incremental path IK: one bounded damped-least-squares step per dense sample, seeded from the previous one.

Each sample's pose error (dt = 1) is the task velocity of the shared DLS kernel (`core.dls`, its Cholesky
variant `_bounded_dls_fast_into`, called from the compiled block loop of `ik_kernel`), so
a sample is reached from the previous solution in one step (1 mm apart: the linearization error is
~1e-7 m) and the arm can never jump to another IK branch. Joint position limits (with margin) are velocity
bounds of that kernel, enforced at every step.

Checks run on every dense sample and every joint-space midpoint, in blocks of `CHECK_BLOCK` samples with
batched FK (`ChainFk`): the serial loop stays lean, the reported failure is the first failing sample, and
at most one block of extra work is done after it. Tolerances are never relaxed.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.path.chain import ChainFk
from robokin_ros.core.path.checks import BlockCheck, check_block
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.geometry import DensePath
from robokin_ros.core.path.ik_kernel import solve_path_block
from robokin_ros.core.path.result import Deviations, PathIkResult, PathStatus
from robokin_ros.core.robot import RobotModel

CHECK_BLOCK = 64


@dataclass(frozen=True)
class _Settings:
    rows: np.ndarray          # constrained axis indices
    tool_axes: bool
    iterations: int
    tol: float
    lower: np.ndarray         # (n,) limits with margin
    upper: np.ndarray
    sigma: float
    damping: float
    jl_gain: float
    jl_zone: np.ndarray       # (n,) zone width [rad]
    posture_gain: float
    home: np.ndarray


class PathIkSolver:
    """Solves dense paths for one robot and tool frame; reuse it across paths (it caches batched FK)."""

    def __init__(self, robot: RobotModel, config: PathConfig | None = None, tip_frame: str = "") -> None:
        self.robot = robot
        self.config = config or PathConfig()
        self.config.check_joint_lists(robot.joint_names)
        self.frame_id = robot.frame_id(tip_frame) if tip_frame else robot.tip_frame_id
        self.fk = ChainFk(robot, self.frame_id)
        self._chain = self.fk.arrays()
        self._world_R_base = np.ascontiguousarray(robot.world_T_base.rotation)

    def _settings(self, axis_mask, axis_frame: str) -> _Settings:
        c, lim = self.config, self.robot.limits
        mask = c.axis_mask if axis_mask is None else axis_mask
        if isinstance(mask, str):
            mask = [ch == "1" for ch in mask] if set(mask) <= {"0", "1"} else [None]
        mask = np.asarray(mask)
        if mask.dtype != bool:
            raise InvalidInputError(f"axis_mask={mask.tolist()} must be 6 booleans (or six 0/1 digits)")
        if mask.shape != (6,) or not mask.any():
            raise InvalidInputError(f"axis_mask={mask.tolist()} needs 6 entries with at least one true")
        if axis_frame not in ("tool", "base"):
            raise InvalidInputError(f"axis_mask_frame='{axis_frame}' must be 'tool' or 'base'")
        span = np.where(np.isfinite(lim.upper - lim.lower), lim.upper - lim.lower, 2 * np.pi)
        home = np.asarray(c.home_positions, float) if c.home_positions else self.robot.home()
        return _Settings(np.flatnonzero(mask), axis_frame == "tool", c.max_optimizer_iterations,
                         c.convergence_tolerance, lim.lower + c.joint_limit_margin,
                         lim.upper - c.joint_limit_margin, c.singularity_sigma_threshold, c.max_damping,
                         c.joint_limit_avoidance_gain, c.joint_limit_avoidance_zone * span, c.posture_gain, home)

    def solve(self, path: DensePath, start_positions: np.ndarray, axis_mask=None,
              axis_frame: str | None = None) -> PathIkResult:
        """Solve every dense sample of `path` starting from `start_positions` (n,) [rad | m].

        Args:
            path: dense geometric path in the base frame; sample 0 should be FK(start_positions).
            start_positions: current joint positions.
            axis_mask: 6 booleans (vx, vy, vz, wx, wy, wz) or six 0/1 digits, None = config.
            axis_frame: "tool" or "base", None = config.

        Returns:
            PathIkResult: SUCCESS with every sample, or the failure reason with the solved prefix.
        """
        t0 = time.perf_counter()
        q0 = self.robot.check_positions(start_positions, "start positions")
        s = self._settings(axis_mask, axis_frame or self.config.axis_mask_frame)
        start_issue = self._start_outside_limits(q0, s)
        Q = np.empty((path.size, self.robot.n))
        Q[0] = q0
        sigma = np.full(path.size, np.inf)
        worst = Deviations()
        bad = BlockCheck() if start_issue is None else start_issue
        k = 1
        while bad.index < 0 and k < path.size:
            end = min(k + CHECK_BLOCK, path.size)
            self._solve_block(path, Q, sigma, k, end, s)
            bad, worst = check_block(self.fk, path, Q, k, end, s.rows, s.tool_axes, self.config,
                                     self.robot.n, worst)
            k = end
        return self._result(path, Q, sigma, bad, worst, s, time.perf_counter() - t0)

    def _start_outside_limits(self, q0: np.ndarray, s: _Settings) -> BlockCheck | None:
        lim = self.robot.limits
        outside = np.flatnonzero((q0 < lim.lower) | (q0 > lim.upper))
        if len(outside) == 0:
            return None
        j = int(outside[0])
        limit = lim.lower[j] if q0[j] < lim.lower[j] else lim.upper[j]
        return BlockCheck(0, PathStatus.JOINT_LIMIT, joint=j, value=float(q0[j]), limit=float(limit),
                          detail="the start state is outside the joint limits")

    def _solve_block(self, path: DensePath, Q, sigma, k0: int, k1: int, s: _Settings) -> None:
        """Serial DLS steps for samples k0..k1-1 in one compiled call (`ik_kernel.solve_path_block`).

        Tool axes: the Jacobian rotated into the tool with the body-frame error (R^T (p_t - p),
        log3(R^T R_t)); base axes: (p_t - p, log3(R_t R^T)). With all six axes constrained the DLS step is
        the same in any axes (an orthogonal change of coordinates of J and b), so it is solved in base axes.
        """
        full = len(s.rows) == 6
        solve_path_block(Q, sigma, k0, k1, path.positions[k0:k1], path.rotations[k0:k1], self._chain,
                         s.rows, s.tool_axes and not full, self._world_R_base, s.iterations, s.tol,
                         s.lower, s.upper, s.sigma, s.damping, s.jl_gain > 0.0 or s.posture_gain > 0.0,
                         s.jl_gain, s.jl_zone, s.posture_gain, s.home)

    @staticmethod
    def _null_space_push(q: np.ndarray, s: _Settings) -> np.ndarray:
        """Per-sample secondary motion: away from the outer zone of each range, toward the posture."""
        into_low = np.clip(s.lower + s.jl_zone - q, 0.0, None)
        into_high = np.clip(q - (s.upper - s.jl_zone), 0.0, None)
        return s.jl_gain * (into_low - into_high) + s.posture_gain * (s.home - q)

    def _result(self, path, Q, sigma, bad: BlockCheck, worst: Deviations, s: _Settings,
                elapsed: float) -> PathIkResult:
        if bad.index < 0:
            return PathIkResult(PathStatus.SUCCESS, f"path solved: {path.size} samples, "
                                f"{path.length * 1e3:.1f} mm", Q, path, 1.0, path.length, worst,
                                compute_time=elapsed)
        k = bad.index
        status, joint, value, limit = bad.status, bad.joint, bad.value, bad.limit
        if status in (PathStatus.PATH_DEVIATION, PathStatus.JOINT_JUMP) and k > 0:
            limited = self._limited_joint(Q[k], s)
            if limited is not None:
                status, (joint, value, limit) = PathStatus.JOINT_LIMIT, limited
            elif sigma[k] < s.sigma:
                status = PathStatus.SINGULARITY
        good = max(k - 1, 0)
        name = self.robot.joint_names[joint] if joint >= 0 else ""
        message = _failure_message(status, k, path, bad.detail, name, value, limit, sigma[k])
        return PathIkResult(status, message, Q[:good + 1].copy(), path, float(path.progress[good]),
                            float(path.arc_length[good]), worst, k, path.pose(k), name,
                            value, limit, elapsed)

    def _limited_joint(self, q: np.ndarray, s: _Settings):
        """(index, value, limit) of the joint closest to (or at) its margin-shrunk limit, if any is at it."""
        gap_low, gap_high = q - s.lower, s.upper - q
        j = int(np.argmin(np.minimum(gap_low, gap_high)))
        if min(gap_low[j], gap_high[j]) > 1e-9:
            return None
        limit = s.lower[j] if gap_low[j] <= gap_high[j] else s.upper[j]
        return j, float(q[j]), float(limit)


def _failure_message(status: PathStatus, k: int, path: DensePath, detail: str, joint: str, value: float,
                     limit: float, sigma: float) -> str:
    where = (f"at dense sample {k} of {path.size} ({path.arc_length[k] * 1e3:.1f} mm, "
             f"{path.progress[k] * 100:.1f} % of the path)")
    text = f"{status.sentence} {where}"
    if status == PathStatus.JOINT_LIMIT:
        text += f": joint '{joint}' at {value:.4f} reaches its limit {limit:.4f} (margin included)"
    elif status == PathStatus.SINGULARITY:
        text += f": smallest singular value {sigma:.2e}"
    if detail:
        text += f"; {detail}"
    return text
