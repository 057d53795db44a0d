"""Planning a waypoint path (`moves.waypoint_program`): its approach move, then its MoveL moves as one blended path
through the path IK, timed per rest-to-rest section under the request's scalings.

A waypoint path differs from a motion program of the same MoveL moves on purpose: its zone-0 corners stop only
where they are sharp, its clamping follows the config's `clamp_blend_radius`, and its timing is one pair of
scalings over sections cut by the geometry, not a limit schedule over runs cut by the moves.

The approach (`moves.Approach`): when the tool is within the path tolerance of waypoints[0] the path starts where
the tool is; else REFUSE refuses, LINEAR plans the line to waypoints[0] as a path of its own that ends at rest, and
JOINT moves there in joint space (`MotionPlanner.joint_target`, the synchronised `joint_move` profile). The plan's
IK result, fraction and failure fields describe the path after the approach.

Timing a solved waypoint path (`time_solved_path`): every rest-to-rest section downsampled and timed under one pair
of scalings, the sections joined, and the joined trajectory verified against the dense path. A waypoint path stops
only where its geometry says (`DensePath.stops`: unblended corners sharper than `geometry.unstopped_turn_limit`), so
its sections, unlike a program's runs, are cut by the geometry, not by the moves.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import EmptyPathError, PathInputError
from robokin_ros.core.limits import MotionLimits
from robokin_ros.core.path.surface import (
    DUPLICATE_TOLERANCE,
    UNLIMITED,
    ArmReach,
    AxisSelection,
    DensePath,
    Deviations,
    DownsampleResult,
    PathConfig,
    PathIkResult,
    PathIkSolver,
    PathPlan,
    PathStatus,
    PlanningBudget,
    TimingReport,
    ToolSpeedLimit,
    arm_reach,
    build_path,
    downsample,
    join_reports,
    path_parameter,
    resting_path,
    time_section_profile,
    trajectory_deviation,
)
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays, concatenate_trajectories, hold_trajectory
from robokin_ros.core.trajectory.profiles import joint_move
from robokin_ros.core.program.moves import Approach, MotionProgram
from robokin_ros.core.program.result import MotionPlan


def plan_waypoints(planner, program: MotionProgram, q0: np.ndarray, solver: PathIkSolver, axis_mask, axis_frame,
                   scalings: tuple[float, float], budget: PlanningBudget, time_parameterize: bool,
                   solved_part: bool) -> MotionPlan:
    """The plan of a waypoint program from q0 (checked) with the request's resolved `scalings`; `planner` is the
    MotionPlanner (robot, config, limits, joint targets). The axis mask is validated once, where the path after
    the approach first needs it (a refused approach is reported first)."""
    rules = program.waypoint_path
    waypoints = [move.pose for move in program.moves]
    approach = Approach(rules.approach)
    c = planner.config
    v_scale, a_scale = scalings

    def path(start, targets, blend, axes) -> PathPlan:
        return _path(planner, start, targets, blend, solver, axes, v_scale, a_scale, budget, time_parameterize)

    def finished(plan: PathPlan, axes: AxisSelection | None, lead: int) -> MotionPlan:
        if not solved_part or plan.ik.success:
            return MotionPlan.of_path(plan, None, lead, len(program.moves))
        axes = axes or solver.axes(axis_mask, axis_frame)
        return MotionPlan.of_path(plan, solved_trajectory(planner, plan, solver, axes), lead, len(program.moves))

    if approach is not Approach.PATH and len(waypoints) > 0:
        R, p = solver.fk(q0[None])
        distance, angle = start_offset(pin.SE3(R[0], p[0]), waypoints[0])
    if approach is Approach.PATH or len(waypoints) == 0 or \
            (distance <= c.max_position_deviation and angle <= c.max_orientation_deviation):
        axes = solver.axes(axis_mask, axis_frame)
        return finished(path(q0, waypoints, rules.blend_radius, axes), axes, 0)
    where = (f"the path starts at waypoints[0], {distance * 1e3:.1f} mm and {angle * 1e3:.1f} mrad from the current "
             f"tool pose (tolerance {c.max_position_deviation * 1e3:g} mm / {c.max_orientation_deviation * 1e3:g} "
             "mrad)")
    if approach is Approach.REFUSE:
        raise PathInputError(f"{where}; approach REFUSE: move the arm there first, or ask for APPROACH_MOVEJ or "
                             "APPROACH_MOVEL", 0)
    if approach is Approach.LINEAR:
        axes = solver.axes(axis_mask, axis_frame)
        first = path(q0, waypoints[:1], 0.0, axes)
        if not first.success:
            message = f"approach (MoveL to waypoints[0]) failed: {first.ik.message}"
            return finished(dataclasses.replace(first, ik=dataclasses.replace(first.ik, message=message)), axes, 0)
        lead = first.trajectory
    else:
        found = planner.joint_target(waypoints[0], q0, solver)
        if not found.success:
            raise PathInputError(f"{where}; approach MoveJ: no joint configuration on the current branch reaches it "
                                 f"({found.position_error * 1e3:.2f} mm / {found.orientation_error * 1e3:.2f} mrad "
                                 "remain)", 0)
        v_max, a_max, jerk = planner.limits()
        lead = joint_move(q0, found.positions, v_max * v_scale, a_max * a_scale, c.joint_move_profile,
                          c.trajectory_rate_hz, planner.robot.joint_names, for_controller=True, jerk=jerk)
        axes = None if len(waypoints) == 1 else solver.axes(axis_mask, axis_frame)
    if len(waypoints) == 1:
        if approach is Approach.LINEAR:
            return finished(dataclasses.replace(first, approach=lead), axes, 1)
        # the path is the resting point at waypoints[0], planned as it always was: default tool frame, mask and
        # scalings (already there: it holds, duration 0)
        default = planner.solver()
        rest = _path(planner, lead.positions[-1], waypoints, 0.0, default, default.axes(), c.velocity_scaling,
                     c.acceleration_scaling, budget, True)
        rest = dataclasses.replace(rest, trajectory=lead, approach=lead,
                                   timing=dataclasses.replace(rest.timing, duration=lead.duration))
        return finished(rest, axes, 1)
    rest = path(lead.positions[-1], waypoints[1:], rules.blend_radius, axes)
    if not rest.success:
        return finished(dataclasses.replace(rest, approach=lead), axes, 1)
    trajectory = concatenate_trajectories([lead, rest.trajectory])
    timing = dataclasses.replace(join_reports([rest.timing], trajectory.duration),
                                 max_position_deviation=rest.timing.max_position_deviation,
                                 max_orientation_deviation=rest.timing.max_orientation_deviation)
    return finished(dataclasses.replace(rest, trajectory=trajectory, timing=timing, approach=lead), axes, 1)


def _path(planner, q0: np.ndarray, waypoints: Sequence[pin.SE3], blend_radius, solver: PathIkSolver,
          axes: AxisSelection, v_scale: float, a_scale: float, budget: PlanningBudget,
          time_parameterize: bool) -> PathPlan:
    """One blended path from the tool pose at q0 through `waypoints`: geometry, IK, and the timed sections."""
    c = planner.config
    timings = {}
    t0 = time.perf_counter()
    check_reach(waypoints, arm_reach(planner.robot, solver.frame_id))
    R0, p0 = solver.fk(q0[None])
    start = pin.SE3(R0[0], p0[0])
    try:
        dense = build_path(start, waypoints, blend_radius, max_step=c.sample_step, max_angle_step=c.sample_angle_step,
                           clamp_blend=c.clamp_blend_radius, max_unstopped_turn=planner.unstopped_turn(),
                           budget=budget)
    except EmptyPathError:
        if len(waypoints) == 0:
            raise
        return resting_plan(q0, start, len(waypoints), planner.robot.joint_names)
    timings["geometry"] = time.perf_counter() - t0
    ik = solver.solve(dense, q0, axes, None, budget)
    timings["ik"] = ik.compute_time
    if not ik.success or not time_parameterize:
        return PathPlan(ik, timings=timings)
    return time_solved_path(ik, solver.fk, planner.robot.joint_names, planner.limits(), c, axes, v_scale, a_scale,
                            budget, timings)


def time_prefix(planner, ik: PathIkResult, solver: PathIkSolver, axes: AxisSelection) -> JointTrajectoryArrays | None:
    """A timed trajectory along the solved prefix of a failed path (None if it has < 2 samples), under the config's
    scalings."""
    if len(ik.positions) < 2:
        return None
    c = planner.config
    section = time_section(ik.positions, ik.path, 0, len(ik.positions) - 1, solver.fk, planner.robot.joint_names,
                           planner.limits(), c, axes, c.velocity_scaling, c.acceleration_scaling, UNLIMITED)
    return section.trajectory


def solved_trajectory(planner, plan: PathPlan, solver: PathIkSolver,
                      axes: AxisSelection) -> JointTrajectoryArrays | None:
    """The timed solved part of a failed waypoint plan: its approach move (if one was planned), then the timed IK
    prefix; None when nothing moves."""
    prefix = time_prefix(planner, plan.ik, solver, axes)
    parts = [part for part in (plan.approach, prefix) if part is not None]
    return concatenate_trajectories(parts) if parts else None


def start_offset(start: pin.SE3, first: pin.SE3) -> tuple[float, float]:
    """Distance [m] and rotation angle [rad] from the current tool pose to the path's first waypoint."""
    return (float(np.linalg.norm(first.translation - start.translation)),
            float(np.linalg.norm(pin.log3(start.rotation.T @ first.rotation))))


def check_reach(waypoints: Sequence[pin.SE3], reach: ArmReach) -> None:
    """PathInputError naming the first waypoint farther than ABSURD_REACH_FACTOR reaches from the arm's shoulder.

    Only the physically absurd is refused up front (millimetres given as metres, a wrong frame): a waypoint that is
    merely out of reach gets a plan as far as the arm can follow, with the fraction and the reason (as MoveIt's
    computeCartesianPath). The refusal also keeps a typo from densifying a path of gigabytes.
    """
    if len(waypoints) == 0:
        return
    points = np.array([pose.translation for pose in waypoints], dtype=float)            # (K, 3)
    i = reach.farthest_beyond(points)        # non-finite waypoints are left to the geometry, which names them
    if i >= 0:
        raise PathInputError(reach.too_far(f"waypoint {i}", points[i]), i)


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
    v_max, a_max = limits.velocity, limits.acceleration
    tool = ToolSpeedLimit(fk.arrays(), c.max_cartesian_speed, c.max_cartesian_angular_speed)
    timed = time_section_profile(ss, Q[first:last + 1][reduced.indices], joint_names, v_max, a_max,
                                 v_scale, a_scale, c.trajectory_rate_hz, c.control_rate_hz, tool, played=True,
                                 budget=budget, jerk=limits.jerk,
                                 tool_jerk=(c.max_cartesian_jerk, c.max_cartesian_angular_jerk))
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
