"""Incremental path IK: one bounded damped-least-squares step per dense sample, seeded from the previous one.

Each sample's pose error (dt = 1) is the task velocity of the shared DLS kernel (`core.dls`, its Cholesky
variant `bounded_dls_fast_into`, called from the compiled block loop `solve_path_block` below), so
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
from typing import NamedTuple

import numpy as np
from numba import njit

from robokin_ros.core.dls import bounded_dls_fast_into, scratch_size
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.limits import avoidance_zone_widths, nullspace_velocity
from robokin_ros.core.path.budget import UNLIMITED, PlanningBudget
from robokin_ros.core.path.chain import ChainFk, chain_pose_jacobian_into
from robokin_ros.core.path.config import PathConfig, axis_mask_problems
from robokin_ros.core.path.deviation import AxisSelection, pose_errors
from robokin_ros.core.path.geometry import DensePath
from robokin_ros.core.path.reach import arm_reach
from robokin_ros.core.path.result import Deviations, PathIkResult, PathStatus
from robokin_ros.core.path.stuck import why_stuck
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.so3 import log3_into

CHECK_BLOCK = 64


@dataclass(frozen=True)
class BlockCheck:
    """First failing sample of a block (index -1 = none) and why."""

    index: int = -1
    status: PathStatus = PathStatus.SUCCESS
    joint: int = -1
    value: float = float("nan")
    limit: float = float("nan")
    detail: str = ""


class BlockOutcome(NamedTuple):
    """What `check_block` found: the first failure (index -1 = none) and the running maxima."""

    failure: BlockCheck
    worst: Deviations


def check_block(fk: ChainFk, path: DensePath, Q: np.ndarray, k0: int, k1: int, axes: AxisSelection,
                config: PathConfig, worst: Deviations) -> BlockOutcome:
    """Check samples k0..k1-1 and the midpoints before them; return the first failure and updated maxima."""
    m = k1 - k0
    mids = 0.5 * (Q[k0 - 1:k1 - 1] + Q[k0:k1])                            # (m, n)
    R, p = fk(np.vstack([Q[k0:k1], mids]))
    pos, rot = pose_errors(R[:m], p[:m], path.rotations[k0:k1], path.positions[k0:k1], axes)
    mpos, mrot = pose_errors(R[m:], p[m:], path.mid_rotations[k0 - 1:k1 - 1], path.mid_positions[k0 - 1:k1 - 1],
                             axes)
    step = np.abs(Q[k0:k1] - Q[k0 - 1:k1 - 1])                             # (m, n)
    step_max = step.max(axis=1)
    tp, tr = config.max_position_deviation, config.max_orientation_deviation
    failing = (pos > tp) | (rot > tr) | (mpos > tp) | (mrot > tr) | (step_max > config.max_joint_step)
    first = int(np.argmax(failing)) if failing.any() else m
    if first > 0:
        worst = Deviations(max(worst.position, float(pos[:first].max())),
                           max(worst.orientation, float(rot[:first].max())),
                           max(worst.mid_position, float(mpos[:first].max())),
                           max(worst.mid_orientation, float(mrot[:first].max())),
                           max(worst.joint_step, float(step_max[:first].max())))
    if first == m:
        return BlockOutcome(BlockCheck(), worst)
    i = first
    k = k0 + i
    if step_max[i] > config.max_joint_step:
        j = int(np.argmax(step[i]))
        return BlockOutcome(BlockCheck(k, PathStatus.JOINT_JUMP, joint=j, value=float(Q[k, j]), limit=float("nan"),
                                       detail=f"joint step {step[i, j]:.4f} rad > jump bound "
                                              f"{config.max_joint_step}"), worst)
    parts = []
    if pos[i] > tp or rot[i] > tr:
        parts.append(f"deviation at the sample {pos[i] * 1e3:.3f} mm / {rot[i] * 1e3:.3f} mrad")
    if mpos[i] > tp or mrot[i] > tr:
        parts.append(f"deviation at the midpoint before it {mpos[i] * 1e3:.3f} mm / {mrot[i] * 1e3:.3f} mrad")
    detail = ", ".join(parts) + f" (tolerance {tp * 1e3:.3f} mm / {tr * 1e3:.3f} mrad)"
    return BlockOutcome(BlockCheck(k, PathStatus.PATH_DEVIATION, detail=detail), worst)


class KernelSettings(NamedTuple):
    """Everything `solve_path_block` needs besides the chain and targets; built once per solve."""

    rows: np.ndarray             # (m,) int64 constrained axes, 0-2 linear, 3-5 angular
    tool_axes: bool              # error and Jacobian in the tool's axes (partial masks only), else base axes
    world_R_base: np.ndarray     # (3, 3) the convergence test (iterations > 1) reads the error in world axes
    iterations: int              # DLS steps per sample at most
    tol: float                   # [m | rad] convergence tolerance of the pose error
    lower: np.ndarray            # (n,) [rad | m] position limits with margin
    upper: np.ndarray            # (n,)
    sigma_threshold: float       # [m/rad] damping starts below this smallest singular value
    max_damping: float           # damping at sigma_min = 0
    null_space: bool             # False: no secondary motion (both gains are 0)
    limit_gain: float            # [1/sample] limit-avoidance push per dense sample
    zone_width: np.ndarray       # (n,) [rad | m] avoidance band inside each limit (`limits.avoidance_zone_widths`)
    posture_gain: float          # [1/sample] pull toward `home` per dense sample
    home: np.ndarray             # (n,) [rad | m] posture target


@njit(cache=True)
def _pose_error(R, p, Rt, pt, tool_axes, D, e, b):
    """b = (R^T (p_t - p), log3(R^T R_t)) in tool axes, else (p_t - p, log3(R_t R^T)) in base axes."""
    if tool_axes:
        for i in range(3):
            b[i] = R[0, i] * (pt[0] - p[0]) + R[1, i] * (pt[1] - p[1]) + R[2, i] * (pt[2] - p[2])
            for j in range(3):
                D[i, j] = R[0, i] * Rt[0, j] + R[1, i] * Rt[1, j] + R[2, i] * Rt[2, j]
    else:
        for i in range(3):
            b[i] = pt[i] - p[i]
            for j in range(3):
                D[i, j] = Rt[i, 0] * R[j, 0] + Rt[i, 1] * R[j, 1] + Rt[i, 2] * R[j, 2]
    log3_into(D, e)
    b[3], b[4], b[5] = e[0], e[1], e[2]


@njit(cache=True)
def _converged(b, tool_axes, world_R_base, tol):
    """Largest world-axes component of the error below `tol` (tool-axes errors are tested as they are)."""
    err = 0.0
    for h in range(2):
        for i in range(3):
            v = b[3 * h + i]
            if not tool_axes:
                v = (world_R_base[i, 0] * b[3 * h] + world_R_base[i, 1] * b[3 * h + 1]
                     + world_R_base[i, 2] * b[3 * h + 2])
            err = max(err, abs(v))
    return err < tol


@njit(cache=True)
def _masked_task(R, J, b, rows, tool_axes, A, bm):
    """The constrained rows of the error and of the Jacobian (rotated into tool axes block by block)."""
    n = J.shape[1]
    for r in range(rows.shape[0]):
        row = rows[r]
        bm[r] = b[row]
        h = 3 * (row // 3)
        i = row - h
        for j in range(n):
            if tool_axes:
                A[r, j] = R[0, i] * J[h, j] + R[1, i] * J[h + 1, j] + R[2, i] * J[h + 2, j]
            else:
                A[r, j] = J[row, j]


@njit(cache=True)
def solve_path_block(Q, sigma, k0, k1, P_t, R_t, chain, settings):
    """One bounded DLS step (up to `settings.iterations`) per dense sample k0..k1-1, each seeded from Q[k - 1].

    Args:
        Q: (N, n) positions, rows k0..k1-1 written. sigma: (N,) sigma_min of the first step per sample,
            or a certified lower bound >= sigma_threshold when it is above the threshold.
        P_t, R_t: (k1 - k0, 3), (k1 - k0, 3, 3) targets in the base frame.
        chain: `ChainArrays` of the tool frame. settings: `KernelSettings`.
    """
    n = Q.shape[1]
    m = settings.rows.shape[0]
    c = chain.place_t.shape[0]
    Rc, Rn, pc, W, org = np.empty((3, 3)), np.empty((3, 3)), np.empty(3), np.empty((c, 3)), np.empty((c, 3))
    R, p, J = np.empty((3, 3)), np.empty(3), np.empty((6, n))
    D, e, b = np.empty((3, 3)), np.empty(3), np.empty(6)
    A, bm = np.empty((m, n)), np.empty(m)
    z, lo, hi, dq = np.zeros(n), np.empty(n), np.empty(n), np.empty(n)
    fixed = np.zeros(n, dtype=np.int8)
    scratch = np.empty(scratch_size(n))
    lower, upper = settings.lower, settings.upper
    q = Q[k0 - 1].copy()
    for k in range(k0, k1):
        for it in range(settings.iterations):
            chain_pose_jacobian_into(q, chain, R, p, J, Rc, Rn, pc, W, org)
            _pose_error(R, p, R_t[k - k0], P_t[k - k0], settings.tool_axes, D, e, b)
            if it > 0 and _converged(b, settings.tool_axes, settings.world_R_base, settings.tol):
                break
            _masked_task(R, J, b, settings.rows, settings.tool_axes, A, bm)
            for j in range(n):
                lo[j] = lower[j] - q[j]
                hi[j] = upper[j] - q[j]
            if settings.null_space:
                nullspace_velocity(q, lower, upper, settings.zone_width, settings.limit_gain, settings.home,
                                   settings.posture_gain, z)
            s_min = bounded_dls_fast_into(A, bm, z, lo, hi, settings.sigma_threshold, settings.max_damping,
                                          dq, fixed, scratch)
            for j in range(n):
                q[j] += dq[j]
            if it == 0:
                sigma[k] = s_min
        for j in range(n):
            Q[k, j] = q[j]


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
        """Serial DLS steps for samples k0..k1-1 in one compiled call (`solve_path_block`)."""
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
