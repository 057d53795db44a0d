"""Downsample a dense joint path by tolerance, verified on the spline the timing will actually follow.

Greedy refinement: start from the two end samples; fit the cubic spline (not-a-knot, the interpolant the
time parameterization uses) through the kept samples over the cumulative joint distance; wherever the spline
misses a dense sample by more than the joint tolerance, or its FK misses the geometric path by more than the
Cartesian tolerances (at the dense samples and at the geometric midpoints between them), keep the worst
sample of that interval; repeat until every dense sample passes. `path` may be a section of a longer path
(see `DensePath.section`).
"""
from __future__ import annotations

import numpy as np
from scipy.interpolate import CubicSpline, PPoly
from scipy.linalg import solve_banded

from robokin_ros.core.path.budget import UNLIMITED, PlanningBudget
from robokin_ros.core.path.chain import ChainFk, chain_fk, pose_error_norms
from robokin_ros.core.path.deviation import AxisSelection
from robokin_ros.core.path.geometry import DensePath
from robokin_ros.core.path.result import DownsampleResult

_MAX_ROUNDS = 60


def path_parameter(positions: np.ndarray) -> np.ndarray:
    """Cumulative joint-space distance along dense positions (N, n), strictly increasing [rad]."""
    step = np.linalg.norm(np.diff(positions, axis=0), axis=1)
    # a zero step (pure null-space hold) would break strict monotonicity; 1e-9 rad keeps order
    return np.concatenate([[0.0], np.cumsum(np.maximum(step, 1e-9))])


def spline(ss: np.ndarray, positions: np.ndarray) -> CubicSpline:
    """The interpolant shared by downsampling and timing: toppra's SplineInterpolator is this spline."""
    return CubicSpline(ss, positions, bc_type="not-a-knot")


def refinement_spline(ss: np.ndarray, positions: np.ndarray) -> PPoly:
    """`spline(ss, positions)` for strictly increasing ss, built without CubicSpline's input checks and
    dispatch: the refinement fits one per round and those checks were most of their cost. The same not-a-knot
    cubic, equal to it to rounding; fewer than 4 knots go to CubicSpline (its special cases)."""
    count = len(ss)
    if count < 4:
        return spline(ss, positions)
    dx = np.diff(ss)                                                                   # (M - 1,)
    slope = np.diff(positions, axis=0) / dx[:, None]                                   # (M - 1, n)
    # the slopes d at the knots: continuity of the second derivative at the inner knots, and of the third at
    # the second and the second-to-last knot (not-a-knot), a tridiagonal system
    bands = np.zeros((3, count))
    rhs = np.empty((count, positions.shape[1]))
    bands[1, 1:-1] = 2.0 * (dx[:-1] + dx[1:])
    bands[0, 2:] = dx[:-1]
    bands[2, :-2] = dx[1:]
    rhs[1:-1] = 3.0 * (dx[1:, None] * slope[:-1] + dx[:-1, None] * slope[1:])
    d0, d1 = dx[0], dx[1]
    bands[1, 0], bands[0, 1] = d1, d0 + d1
    rhs[0] = ((d0 + 2.0 * (d0 + d1)) * d1 * slope[0] + d0 * d0 * slope[1]) / (d0 + d1)
    e0, e1 = dx[-1], dx[-2]
    bands[1, -1], bands[2, -2] = e1, e0 + e1
    rhs[-1] = (e0 * e0 * slope[-2] + (2.0 * (e1 + e0) + e0) * e1 * slope[-1]) / (e1 + e0)
    d = solve_banded((1, 1), bands, rhs, overwrite_ab=True, overwrite_b=True, check_finite=False)   # (M, n)
    # the cubic Hermite piece of each interval, in powers of (s - ss[i]), highest first
    curve = (d[:-1] + d[1:] - 2.0 * slope) / dx[:, None]
    c = np.empty((4, count - 1, positions.shape[1]))
    c[0] = curve / dx[:, None]
    c[1] = (slope - d[:-1]) / dx[:, None] - curve
    c[2], c[3] = d[:-1], positions[:-1]
    return PPoly.construct_fast(c, ss, extrapolate=True)


FK_BLOCK = 32768          # configurations per FK call between budget checks inside a round (~10 ms)


def _pose_errors(fk, Q: np.ndarray, R_ref: np.ndarray, p_ref: np.ndarray, axes: AxisSelection,
                 budget: PlanningBudget, round_: int) -> tuple[np.ndarray, np.ndarray]:
    """Position and orientation error norms (K,) of the configurations Q (K, n) against the reference poses, in
    blocks with a budget check before each: a round over a long section is seconds of FK."""
    pos, rot = np.empty(len(Q)), np.empty(len(Q))
    for first in range(0, len(Q), FK_BLOCK):
        budget.check("downsampling", round_, _MAX_ROUNDS)
        block = slice(first, first + FK_BLOCK)
        R, p = fk(Q[block])
        pos[block], rot[block] = pose_error_norms(R, p, R_ref[block], p_ref[block], axes)
    return pos, rot


def downsample(positions: np.ndarray, path: DensePath, fk: ChainFk, joint_tolerance: float,
               position_tolerance: float, orientation_tolerance: float,
               axes: AxisSelection = AxisSelection(np.arange(6), True),
               budget: PlanningBudget = UNLIMITED, initial: np.ndarray | None = None) -> DownsampleResult:
    """Indices of dense samples to keep so the spline through them stays within every tolerance.

    Args:
        positions: dense IK solution (N, n) [rad | m].
        path: the geometric path it solves (same N).
        fk: batched FK of the path's tool frame.
        joint_tolerance: max |spline - dense| per joint [rad | m].
        position_tolerance: max tool position deviation [m] on the constrained axes.
        orientation_tolerance: max tool orientation deviation [rad] on the constrained axes.
        axes: constrained axes, as for the solver.
        budget: checked before every refinement round (PlanningStopped).
        initial: dense indices kept from the start, e.g. where the geometry changes (a corner blend begins): the
            refinement would find them, one round per halving.
    """
    count = len(positions)
    fk = chain_fk(fk)               # compiled when fk is a ChainFk: the rounds' FK was most of their cost
    ss = path_parameter(positions)
    mid_ss = 0.5 * (ss[1:] + ss[:-1])
    keep = np.zeros(count, dtype=bool)
    keep[[0, count - 1]] = True
    if count > 2:
        keep[count // 2] = True          # three points give the spline a curved first guess
    if initial is not None:
        keep[np.asarray(initial, dtype=int)] = True
    # the geometry the spline's samples and midpoints are checked against, the same every round
    R_ref = np.concatenate([path.rotations[:count], path.mid_rotations[:count - 1]])
    p_ref = np.concatenate([path.positions[:count], path.mid_positions[:count - 1]])
    for round_ in range(_MAX_ROUNDS + 1):
        budget.check("downsampling", round_, _MAX_ROUNDS)
        if round_ == _MAX_ROUNDS:
            keep[:] = True                # give up reducing: every dense sample is kept
        idx = np.flatnonzero(keep)
        through_kept = refinement_spline(ss[idx], positions[idx])
        fitted = through_kept(ss)                                                # (N, n)
        joint_err = np.abs(fitted - positions).max(axis=1)
        pos, rot = _pose_errors(fk, np.vstack([fitted, through_kept(mid_ss)]), R_ref, p_ref, axes, budget, round_)
        # a midpoint miss is charged to the sample after it (both ends of its interval are candidates)
        pos = np.maximum(pos[:count], np.r_[0.0, pos[count:]])
        rot = np.maximum(rot[:count], np.r_[0.0, rot[count:]])
        score = np.maximum.reduce([joint_err / joint_tolerance, pos / position_tolerance,
                                   rot / orientation_tolerance])
        if score.max() <= 1.0 or round_ == _MAX_ROUNDS:
            return DownsampleResult(idx, float(joint_err.max()), float(pos.max()), float(rot.max()))
        interval = np.searchsorted(idx, np.arange(count), side="right")        # sample -> interval id
        bad = score > 1.0
        # worst violating sample of every interval that has one
        order = np.lexsort((-score, interval))
        first_of_interval = order[np.r_[True, interval[order][1:] != interval[order][:-1]]]
        keep[[i for i in first_of_interval if bad[i]]] = True
    raise AssertionError("unreachable: the last round keeps every sample")  # pragma: no cover
