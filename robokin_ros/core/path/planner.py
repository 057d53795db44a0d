"""The whole pipeline: geometry -> incremental IK -> downsampling -> timing -> verification, one call.

`CartesianPathPlanner` keeps the robot, configuration and per-tip solvers (their batched FK) between calls.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import EmptyPathError, PathInputError
from robokin_ros.core.limits import MotionLimits, motion_limits
from robokin_ros.core.path.budget import UNLIMITED, PlanningBudget
from robokin_ros.core.path.checks import AxisSelection
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.deviation import trajectory_deviation
from robokin_ros.core.path.downsample import downsample, path_parameter
from robokin_ros.core.path.geometry import (
    DUPLICATE_TOLERANCE,
    DensePath,
    build_path,
    resting_path,
    unstopped_turn_limit,
)
from robokin_ros.core.path.reach import ArmReach, arm_reach
from robokin_ros.core.path.result import (
    Deviations,
    DownsampleResult,
    JointTrajectoryArrays,
    PathIkResult,
    PathPlan,
    PathStatus,
    TimingReport,
    concatenate_trajectories,
)
from robokin_ros.core.path.solver import PathIkSolver
from robokin_ros.core.path.timing import ToolSpeedLimit, join_reports, time_optimal
from robokin_ros.core.pose_ik import solve_pose
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.scaling import resolve_scaling

WARM_UP_STEP = 0.002      # [m] length of the path `warm_up` solves (compiles and loads the kernels)


class TimedSection(NamedTuple):
    """A rest-to-rest stretch of the path, downsampled and timed."""

    reduced: DownsampleResult          # kept dense indices, of the whole path
    trajectory: JointTrajectoryArrays
    report: TimingReport
    downsample_time: float             # [s]


class CartesianPathPlanner:
    """Plans Cartesian paths for one robot; `plan` returns a PathPlan (never raises on IK failure)."""

    def __init__(self, robot: RobotModel, config: PathConfig | None = None, pose_solver=None) -> None:
        """`pose_solver(robot, pose, seed, frame_id, margin) -> PoseIkResult` solves joint-space targets given as
        poses (MoveJ, approach moves); default `core/pose_ik.solve_pose` (iterative, on the seed's branch)."""
        self.robot = robot
        self.config = config or PathConfig()
        self.pose_solver = pose_solver or solve_pose
        self.config.check_joint_lists(robot.joint_names)
        self._solvers: dict[str, PathIkSolver] = {}

    def reach(self, tip_frame: str = "") -> ArmReach:
        """The reach sphere of a tool frame (empty = configured/robot tip), sampled once (`core/path/reach.py`)."""
        return arm_reach(self.robot, self.solver(tip_frame).frame_id)

    def solver(self, tip_frame: str = "") -> PathIkSolver:
        """The cached solver of a tool frame (empty = configured/robot tip); UnknownFrameError if absent."""
        tip = tip_frame or self.config.tip_frame or self.robot.tip_frame
        if tip not in self._solvers:
            self._solvers[tip] = PathIkSolver(self.robot, self.config, tip)
        return self._solvers[tip]

    def warm_up(self) -> None:
        """Compile the numba kernels (once per process) and solve a short path with the default solver, so the
        first request pays no compile time."""
        ensure_compiled(self)
        self.reach()                          # sampled now, not by the first request
        start = self.robot.fk(self.robot.home())
        target = start.copy()
        target.translation = target.translation + np.array([0.0, 0.0, WARM_UP_STEP])
        self.solver().solve(build_path(start, [target]), self.robot.home())

    def unstopped_turn(self) -> float:
        """Largest turn [rad] of an unblended corner passed without stopping: rounding it within one dense
        sample stays within the downsampling tolerances (`geometry.unstopped_turn_limit`)."""
        c = self.config
        return unstopped_turn_limit(c.downsample_position_tolerance, c.downsample_orientation_tolerance,
                                    c.sample_step, c.sample_angle_step)

    def limits(self) -> MotionLimits:
        """Velocity [rad/s] and acceleration [rad/s^2] limits: config overrides, else URDF / defaults."""
        c = self.config
        return motion_limits(self.robot, c.max_joint_velocity, c.max_joint_acceleration, c.default_joint_acceleration)

    def plan(self, start_positions, waypoints: Sequence[pin.SE3], blend_radius: float | None = None, *,
             tip_frame: str = "", axis_mask: np.ndarray | None = None, axis_frame: str | None = None,
             velocity_scaling: float | None = None, acceleration_scaling: float | None = None,
             time_parameterize: bool = True, should_stop: Callable[[], bool] | None = None,
             budget: PlanningBudget | None = None) -> PathPlan:
        """Plan a path from the tool pose at `start_positions` through `waypoints` (base frame poses).

        Waypoints that all equal the start pose (within geometry.DUPLICATE_TOLERANCE) give a successful plan
        "already at the goal": a one-point trajectory holding the start state (duration 0).

        Args:
            axis_mask: bool (6,) constrained axes, None = the config's. axis_frame: "tool" / "base", None = config.
            velocity_scaling, acceleration_scaling: fractions of the limits in (0, 1]; None or 0 = the config's
                (core/scaling.py: NaN, inf, negative or above 1 raise InvalidInputError).
            should_stop: polled between units of work in every phase; True ends planning (None = never).
            budget: the planning budget to spend (shared with other plans of one request), None = a new one of
                `config.planning_timeout` polling `should_stop`.

        Raises:
            PathInputError (and subclasses), InvalidInputError, UnknownFrameError: bad request, including
                no waypoints, a waypoint ABSURD_REACH_FACTOR reaches away (`core/path/reach.py`) or a path over
                the dense sample budget.
            TrajectoryTimingError: the solved path cannot be timed within the limits.
            PlanningStopped: `should_stop` returned True (CANCELED) or planning took longer than
                `config.planning_timeout` (TIMEOUT); the exception says in which phase and how far it got.
        """
        ensure_compiled(self)                # outside the budget: planning_timeout is about planning, not JIT
        c = self.config
        budget = PlanningBudget(c.planning_timeout, should_stop) if budget is None else budget
        timings = {}
        t0 = time.perf_counter()
        solver = self.solver(tip_frame)
        q0 = self.robot.check_positions(start_positions, "start positions")
        v_scale = resolve_scaling("velocity_scaling", velocity_scaling, c.velocity_scaling)
        a_scale = resolve_scaling("acceleration_scaling", acceleration_scaling, c.acceleration_scaling)
        axes = solver.axes(axis_mask, axis_frame)
        check_reach(waypoints, self.reach(tip_frame))
        R0, p0 = solver.fk(q0[None])
        start = pin.SE3(R0[0], p0[0])
        try:
            path = build_path(start, waypoints, c.blend_radius if blend_radius is None else blend_radius,
                              max_step=c.sample_step, max_angle_step=c.sample_angle_step,
                              clamp_blend=c.clamp_blend_radius, max_unstopped_turn=self.unstopped_turn(),
                              budget=budget)
        except EmptyPathError:
            if len(waypoints) == 0:
                raise
            return self._already_there(q0, start, len(waypoints))
        timings["geometry"] = time.perf_counter() - t0
        ik = solver.solve(path, q0, axis_mask, axis_frame, budget)
        timings["ik"] = ik.compute_time
        if not ik.success or not time_parameterize:
            return PathPlan(ik, timings=timings)
        return self._timed_plan(ik, solver, axes, v_scale, a_scale, budget, timings)

    def _timed_plan(self, ik: PathIkResult, solver: PathIkSolver, axes: AxisSelection, v_scale: float,
                    a_scale: float, budget: PlanningBudget, timings: dict) -> PathPlan:
        """Downsample and time every rest-to-rest section of a solved path, join them, verify the deviation."""
        path = ik.path
        bounds = [0, *path.stops, path.size - 1]
        sections = []
        for done, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
            budget.check("timing", done, len(bounds) - 1)
            sections.append(self._time_section(ik.positions, path, a, b, solver, axes, v_scale, a_scale, budget))
        whole = _join(sections)
        timings["downsample"] = whole.downsample_time
        timings["timing"] = whole.report.compute_time
        budget.check("verification")
        t2 = time.perf_counter()
        c = self.config
        deviation = trajectory_deviation(whole.trajectory, path, solver.fk, axes, c.control_rate_hz,
                                         c.sample_step / c.sample_angle_step, budget=budget)
        report = dataclasses.replace(whole.report, max_position_deviation=deviation.position,
                                     max_orientation_deviation=deviation.orientation,
                                     verify_time=whole.report.verify_time + time.perf_counter() - t2)
        timings["verify"] = report.verify_time
        return PathPlan(ik, whole.reduced, whole.trajectory, report, timings)

    def _already_there(self, q0: np.ndarray, start: pin.SE3, waypoint_count: int) -> PathPlan:
        """The successful plan of a request whose waypoints all equal the start pose: hold the start state."""
        message = (f"already at the goal: the {waypoint_count} waypoint(s) equal the current tool pose (within "
                   f"{DUPLICATE_TOLERANCE:g} m and {DUPLICATE_TOLERANCE:g} rad); nothing to move")
        ik = PathIkResult(PathStatus.SUCCESS, message, q0[None].copy(), resting_path(start, waypoint_count), 1.0, 0.0,
                          Deviations())
        zeros = np.zeros((1, self.robot.n))
        trajectory = JointTrajectoryArrays(tuple(self.robot.joint_names), np.zeros(1), q0[None].copy(), zeros,
                                           zeros.copy())
        report = TimingReport(0.0, 0.0, 0.0, max_position_deviation=0.0, max_orientation_deviation=0.0)
        return PathPlan(ik, DownsampleResult(np.zeros(1, dtype=int), 0.0, 0.0, 0.0), trajectory, report, {})

    def time_prefix(self, ik: PathIkResult, tip_frame: str = "", axis_mask: np.ndarray | None = None,
                    axis_frame: str | None = None) -> JointTrajectoryArrays | None:
        """A timed trajectory along the solved prefix of a failed path (None if it has < 2 samples)."""
        if len(ik.positions) < 2:
            return None
        solver = self.solver(tip_frame)
        section = self._time_section(ik.positions, ik.path, 0, len(ik.positions) - 1, solver,
                                     solver.axes(axis_mask, axis_frame), self.config.velocity_scaling,
                                     self.config.acceleration_scaling)
        return section.trajectory

    def _time_section(self, Q, path: DensePath, first: int, last: int, solver: PathIkSolver, axes: AxisSelection,
                      v_scale: float, a_scale: float, budget: PlanningBudget = UNLIMITED) -> TimedSection:
        """Downsample and time dense samples first..last (rest to rest)."""
        c = self.config
        t0 = time.perf_counter()
        reduced = downsample(Q[first:last + 1], path.section(first, last), solver.fk,
                             c.downsample_joint_tolerance, c.downsample_position_tolerance,
                             c.downsample_orientation_tolerance, axes, budget)
        elapsed = time.perf_counter() - t0
        ss = path_parameter(Q[first:last + 1])[reduced.indices]
        v_max, a_max = self.limits()
        tool = ToolSpeedLimit(solver.fk.arrays(), c.max_cartesian_speed, c.max_cartesian_angular_speed)
        timed = time_optimal(ss, Q[first:last + 1][reduced.indices], self.robot.joint_names, v_max, a_max,
                             v_scale, a_scale, c.trajectory_rate_hz, c.control_rate_hz, tool, played=True,
                             budget=budget)
        shifted = dataclasses.replace(reduced, indices=reduced.indices + first)
        return TimedSection(shifted, timed.arrays, timed.report, elapsed)


_COMPILED = False
WARM_UP_TURN = 0.002      # [rad] the compile run also rotates, so the projections of rotating paths compile too


def ensure_compiled(planner: CartesianPathPlanner) -> None:
    """Compile every numba kernel a plan uses, once per process, by planning a 2 mm / 2 mrad path without a time
    budget. On a fresh install (empty numba cache) that takes seconds (12 s on this 2-core machine), which a first
    request would otherwise spend out of its planning_timeout; afterwards numba's cache makes it ~0.3 s per process."""
    global _COMPILED
    if _COMPILED:
        return
    _COMPILED = True
    robot = planner.robot
    unlimited = dataclasses.replace(planner.config, planning_timeout=3600.0, max_cartesian_speed=1.0)
    start = robot.fk(robot.home())
    turn = pin.SE3(start.rotation @ pin.exp3(np.array([0.0, 0.0, WARM_UP_TURN])),
                   start.translation + np.array([0.0, 0.0, WARM_UP_STEP]))
    CartesianPathPlanner(robot, unlimited).plan(robot.home(), [turn])


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


def _join(pieces: list[TimedSection]) -> TimedSection:
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
