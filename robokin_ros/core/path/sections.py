"""Timing a solved waypoint path: every rest-to-rest section downsampled and timed under one pair of scalings, the
sections joined, and the joined trajectory verified against the dense path.

A waypoint path stops only where its geometry says (`DensePath.stops`: unblended corners sharper than
`geometry.unstopped_turn_limit`), so its sections, unlike a program's runs, are cut by the geometry, not by the moves.
"""
from __future__ import annotations

import dataclasses
import time
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from robokin_ros.core.limits import MotionLimits
from robokin_ros.core.path.budget import UNLIMITED, PlanningBudget
from robokin_ros.core.path.checks import AxisSelection
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.deviation import trajectory_deviation
from robokin_ros.core.path.downsample import downsample, path_parameter
from robokin_ros.core.path.geometry import DUPLICATE_TOLERANCE, DensePath, resting_path
from robokin_ros.core.path.result import Deviations, DownsampleResult, PathIkResult, PathPlan, PathStatus, TimingReport
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays, concatenate_trajectories, hold_trajectory
from robokin_ros.core.path.timing import ToolSpeedLimit, join_reports, time_optimal


class TimedSection(NamedTuple):
    """A rest-to-rest stretch of the path, downsampled and timed."""

    reduced: DownsampleResult          # kept dense indices, of the whole path
    trajectory: JointTrajectoryArrays
    report: TimingReport
    downsample_time: float             # [s]


def time_section(Q: np.ndarray, path: DensePath, first: int, last: int, fk, joint_names, limits: MotionLimits,
                 config: PathConfig, axes: AxisSelection, v_scale: float, a_scale: float,
                 budget: PlanningBudget = UNLIMITED) -> TimedSection:
    """Downsample and time dense samples first..last (rest to rest) under the scalings and the config's tool
    speeds; `fk` is the tip's batched FK (`PathIkSolver.fk`)."""
    c = config
    t0 = time.perf_counter()
    reduced = downsample(Q[first:last + 1], path.section(first, last), fk,
                         c.downsample_joint_tolerance, c.downsample_position_tolerance,
                         c.downsample_orientation_tolerance, axes, budget)
    elapsed = time.perf_counter() - t0
    ss = path_parameter(Q[first:last + 1])[reduced.indices]
    v_max, a_max = limits
    tool = ToolSpeedLimit(fk.arrays(), c.max_cartesian_speed, c.max_cartesian_angular_speed)
    timed = time_optimal(ss, Q[first:last + 1][reduced.indices], joint_names, v_max, a_max,
                         v_scale, a_scale, c.trajectory_rate_hz, c.control_rate_hz, tool, played=True,
                         budget=budget)
    shifted = dataclasses.replace(reduced, indices=reduced.indices + first)
    return TimedSection(shifted, timed.arrays, timed.report, elapsed)


def time_solved_path(ik: PathIkResult, fk, joint_names, limits: MotionLimits, config: PathConfig,
                     axes: AxisSelection, v_scale: float, a_scale: float, budget: PlanningBudget,
                     timings: dict) -> PathPlan:
    """Downsample and time every rest-to-rest section of a solved path, join them, verify the deviation; the
    phases' seconds go into `timings` (downsample, timing, verify)."""
    path = ik.path
    bounds = [0, *path.stops, path.size - 1]
    sections = []
    for done, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        budget.check("timing", done, len(bounds) - 1)
        sections.append(time_section(ik.positions, path, a, b, fk, joint_names, limits, config, axes, v_scale,
                                     a_scale, budget))
    whole = join_sections(sections)
    timings["downsample"] = whole.downsample_time
    timings["timing"] = whole.report.compute_time
    budget.check("verification")
    t2 = time.perf_counter()
    c = config
    deviation = trajectory_deviation(whole.trajectory, path, fk, axes, c.control_rate_hz,
                                     c.sample_step / c.sample_angle_step, budget=budget)
    report = dataclasses.replace(whole.report, max_position_deviation=deviation.position,
                                 max_orientation_deviation=deviation.orientation,
                                 verify_time=whole.report.verify_time + time.perf_counter() - t2)
    timings["verify"] = report.verify_time
    return PathPlan(ik, whole.reduced, whole.trajectory, report, timings)


def join_sections(pieces: list[TimedSection]) -> TimedSection:
    """Concatenate rest-to-rest sections (each starts where the previous stopped) into one trajectory."""
    reports = [p.report for p in pieces]
    reduced = [p.reduced for p in pieces]
    joined = concatenate_trajectories([p.trajectory for p in pieces])
    report = join_reports(reports, float(joined.times[-1]))
    down = DownsampleResult(np.unique(np.concatenate([r.indices for r in reduced])),
                            max(r.max_joint_deviation for r in reduced),
                            max(r.max_position_deviation for r in reduced),
                            max(r.max_orientation_deviation for r in reduced))
    return TimedSection(down, joined, report, sum(p.downsample_time for p in pieces))


def resting_plan(q0: np.ndarray, start: pin.SE3, waypoint_count: int, joint_names) -> PathPlan:
    """The successful plan of a path whose waypoints all equal the start pose: hold the start state."""
    message = (f"already at the goal: the {waypoint_count} waypoint(s) equal the current tool pose (within "
               f"{DUPLICATE_TOLERANCE:g} m and {DUPLICATE_TOLERANCE:g} rad); nothing to move")
    ik = PathIkResult(PathStatus.SUCCESS, message, q0[None].copy(), resting_path(start, waypoint_count), 1.0, 0.0,
                      Deviations())
    report = TimingReport(0.0, 0.0, 0.0, max_position_deviation=0.0, max_orientation_deviation=0.0)
    return PathPlan(ik, DownsampleResult(np.zeros(1, dtype=int), 0.0, 0.0, 0.0), hold_trajectory(joint_names, q0),
                    report, {})
