"""Timing a multi-tip path: downsampling checked on every tip, one toppra run, true deviation per tip.

The joint path is one (all tips move on one parameter), so it is timed once: the joint limits as for one tip, and
each tip's tool speed bounded by the same limit (`tips_chain.TipsSpeeds`: the largest speed of any tip is bounded),
so the tips reach every sample, hence every waypoint, at the same time. The downsampling keeps the knots until the
spline through them stays within the tolerances for every tip (and the held relative pose); the verification plays
the timed points as a joint_trajectory_controller does (`deviation.controller_positions`) and measures each tip
against its own requested geometry (`deviation.played_deviation`) and the relative pose of a carried object.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from robokin_ros.core.limits import MotionLimits
from robokin_ros.core.path.budget import UNLIMITED, PlanningBudget
from robokin_ros.core.path.chain import pose_error_norms
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.deviation import controller_positions, played_deviation
from robokin_ros.core.path.downsample import path_parameter, refinement_spline
from robokin_ros.core.path.limit_schedule import LimitSchedule
from robokin_ros.core.path.result import DownsampleResult
from robokin_ros.core.path.jerk_timing import time_section_profile
from robokin_ros.core.path.timing import TimedTrajectory
from robokin_ros.core.path.tips_geometry import TipsPath
from robokin_ros.core.path.tips_solver import ALL_AXES, TipsIkSolver, relative_errors
from robokin_ros.core.path.toppra_constraints import ToolSpeedLimit
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays, sample_times

_MAX_ROUNDS = 60


def tips_downsample(positions: np.ndarray, path: TipsPath, solver: TipsIkSolver, config: PathConfig,
                    budget: PlanningBudget = UNLIMITED) -> DownsampleResult:
    """Indices of the dense samples (N, n) to keep so the spline through them stays within the joint tolerance and,
    for every tip, the Cartesian tolerances at the samples and midpoints (`downsample.downsample`'s refinement)."""
    c = config
    count = len(positions)
    ss = path_parameter(positions)
    mid_ss = 0.5 * (ss[1:] + ss[:-1])
    keep = np.zeros(count, dtype=bool)
    keep[[0, count - 1]] = True
    if count > 2:
        keep[count // 2] = True
    stops = np.r_[np.flatnonzero(np.diff(path.lead.segment) != 0) + 1, np.arange(0, count, 32)]
    keep[stops[stops < count]] = True
    refs = [(np.concatenate([p.rotations, p.mid_rotations]), np.concatenate([p.positions, p.mid_positions]))
            for p in path.paths]
    for round_ in range(_MAX_ROUNDS + 1):
        budget.check("downsampling", round_, _MAX_ROUNDS)
        if round_ == _MAX_ROUNDS:
            keep[:] = True
        idx = np.flatnonzero(keep)
        spline = refinement_spline(ss[idx], positions[idx])
        fitted = spline(ss)
        joint_err = np.abs(fitted - positions).max(axis=1)
        both = np.vstack([fitted, spline(mid_ss)])
        score = joint_err / c.downsample_joint_tolerance
        worst_p, worst_r, poses = 0.0, 0.0, []
        for fk, (R_ref, p_ref) in zip(solver.fks, refs):
            R, p = fk(both)
            poses.append((R[:count], p[:count]))
            pos, rot = pose_error_norms(R, p, R_ref, p_ref, ALL_AXES)
            pos = np.maximum(pos[:count], np.r_[0.0, pos[count:]])
            rot = np.maximum(rot[:count], np.r_[0.0, rot[count:]])
            worst_p, worst_r = max(worst_p, float(pos.max())), max(worst_r, float(rot.max()))
            score = np.maximum.reduce([score, pos / c.downsample_position_tolerance,
                                       rot / c.downsample_orientation_tolerance])
        rel_p, rel_r = relative_errors(poses, path.relative, count)
        score = np.maximum.reduce([score, rel_p / c.downsample_position_tolerance,
                                   rel_r / c.downsample_orientation_tolerance])
        if score.max() <= 1.0 or round_ == _MAX_ROUNDS:
            return DownsampleResult(idx, float(joint_err.max()), worst_p, worst_r)
        interval = np.searchsorted(idx, np.arange(count), side="right")
        order = np.lexsort((-score, interval))
        first_of_interval = order[np.r_[True, interval[order][1:] != interval[order][:-1]]]
        keep[[i for i in first_of_interval if score[i] > 1.0]] = True
    raise AssertionError("unreachable: the last round keeps every sample")  # pragma: no cover


class TipsDeviation(NamedTuple):
    """Largest deviations of the played trajectory, per tip and of the held relative pose."""

    positions: tuple[float, ...]       # [m] per tip, from its requested geometry
    orientations: tuple[float, ...]    # [rad]
    relative_position: float = 0.0     # [m] drift of the second tip in the first tip's frame (carried object)
    relative_orientation: float = 0.0  # [rad]


def tips_deviation(trajectory: JointTrajectoryArrays, path: TipsPath, solver: TipsIkSolver, config: PathConfig,
                   budget: PlanningBudget = UNLIMITED, times: np.ndarray | None = None) -> TipsDeviation:
    """The played trajectory (at the control rate, or at `times` [s]) against every tip's path: the true
    deviation per tip (`deviation.played_deviation`) and the relative pose's drift."""
    c = config
    if times is None:
        times = sample_times(trajectory.duration, c.control_rate_hz) if trajectory.duration > 0 else np.zeros(1)
    positions, orientations = [], []
    for fk, dense in zip(solver.fks, path.paths):
        played = played_deviation(trajectory, times, dense, fk, ALL_AXES, c.sample_step / c.sample_angle_step,
                                  "quintic", budget)
        positions.append(played.position)
        orientations.append(played.orientation)
    rel = (0.0, 0.0)
    if path.relative is not None:
        q = controller_positions(trajectory, times)
        drift = relative_errors([fk(q) for fk in solver.fks[:2]], path.relative, len(times))
        rel = (float(drift[0].max()), float(drift[1].max()))
    return TipsDeviation(tuple(positions), tuple(orientations), *rel)


class TimedTipsSection(NamedTuple):
    """A rest-to-rest stretch of a multi-tip path, downsampled, timed and verified."""

    reduced: DownsampleResult          # kept dense indices of the section
    timed: TimedTrajectory
    deviation: TipsDeviation
    schedule: LimitSchedule            # the moves' limits along the section (for `stretch_reports`)


def time_tips_section(Q: np.ndarray, path: TipsPath, labels: np.ndarray, move_limits: np.ndarray,
                      solver: TipsIkSolver, limits: MotionLimits, config: PathConfig,
                      budget: PlanningBudget = UNLIMITED) -> TimedTipsSection:
    """Downsample and time dense samples Q (N, n) of `path` (the same N, rest to rest) in one toppra run.

    labels: (N,) the move each sample belongs to; move_limits: (moves, 4) per move the joint speed and acceleration
    fractions and the tool speed [m/s] and angular speed [rad/s] every tip keeps to (0 = none)."""
    c = config
    reduced = tips_downsample(Q, path, solver, c, budget)
    ss = path_parameter(Q)
    starts = np.flatnonzero(np.r_[True, np.diff(labels) != 0])
    rows = move_limits[labels[starts].astype(int)]
    schedule = LimitSchedule(np.r_[ss[starts], ss[-1]], rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3])
    v_max, a_max = limits.velocity, limits.acceleration
    timed = time_section_profile(ss[reduced.indices], Q[reduced.indices], solver.robot.joint_names, v_max, a_max,
                                 1.0, 1.0, c.trajectory_rate_hz, c.control_rate_hz, ToolSpeedLimit(solver.speeds),
                                 schedule=schedule, played=True, budget=budget, jerk=limits.jerk)
    budget.check("verification")
    t0 = time.perf_counter()
    deviation = tips_deviation(timed.arrays, path, solver, c, budget)
    report = replace(timed.report, max_position_deviation=max(deviation.positions),
                     max_orientation_deviation=max(deviation.orientations),
                     verify_time=timed.report.verify_time + time.perf_counter() - t0)
    return TimedTipsSection(reduced, TimedTrajectory(timed.arrays, report, timed.trajectory), deviation, schedule)
