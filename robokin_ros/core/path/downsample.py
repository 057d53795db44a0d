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
from scipy.interpolate import CubicSpline

from robokin_ros.core.path.budget import UNLIMITED, PlanningBudget
from robokin_ros.core.path.chain import ChainFk
from robokin_ros.core.path.checks import AxisSelection, pose_errors
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
    ss = path_parameter(positions)
    mid_ss = 0.5 * (ss[1:] + ss[:-1])
    keep = np.zeros(count, dtype=bool)
    keep[[0, count - 1]] = True
    if count > 2:
        keep[count // 2] = True          # three points give the spline a curved first guess
    if initial is not None:
        keep[np.asarray(initial, dtype=int)] = True
    for round_ in range(_MAX_ROUNDS + 1):
        budget.check("downsampling", round_, _MAX_ROUNDS)
        if round_ == _MAX_ROUNDS:
            keep[:] = True                # give up reducing: every dense sample is kept
        idx = np.flatnonzero(keep)
        through_kept = spline(ss[idx], positions[idx])
        fitted = through_kept(ss)                                                # (N, n)
        joint_err = np.abs(fitted - positions).max(axis=1)
        R, p = fk(np.vstack([fitted, through_kept(mid_ss)]))
        pos, rot = pose_errors(R, p, np.concatenate([path.rotations[:count], path.mid_rotations[:count - 1]]),
                               np.concatenate([path.positions[:count], path.mid_positions[:count - 1]]),
                               axes)
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
