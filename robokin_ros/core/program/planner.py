"""The one planner: a program (motion program or waypoint path) from a start state -> one `MotionPlan`.

`MotionPlanner.plan(program, start)` is the only orchestrator. It checks the request once (tool frame, start state,
scalings by core/scaling.py's rule, axis mask, reach), then plans the program's runs on the path library's surface
(`core/path/surface.py`: dense geometry, dense solve, timing of a run, verification):
- a motion program, run by run (the moves up to and including the next "fine" one):
  1. pieces: consecutive MoveL/MoveC as one blended Cartesian path through the path IK (`pieces.solve_cartesian`),
     each MoveJ as a joint-space line (`pieces.solve_joint_move`);
  2. assembly: zones next to a MoveJ become joint-space blends, Cartesian parts are downsampled (`runs.build_run`);
  3. timing: toppra over the run's spline under each move's limits (`runs.time_run`);
  4. verification: the played trajectory against each Cartesian move's geometry.
  Runs are joined rest to rest. A move that cannot be planned ends the program there: the solved part is timed,
  ending at rest, and returned with the failure.
- a waypoint path (`moves.waypoint_program`): its approach move, then its MoveL moves as one blended path, timed per
  rest-to-rest section under the request's scalings (`waypoint_plans`).
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import PathInputError
from robokin_ros.core.limits import MotionLimits, motion_limits
from robokin_ros.core.path.surface import (
    ArmReach,
    PathConfig,
    PathIkSolver,
    PathStatus,
    PlanningBudget,
    TipsIkSolver,
    arm_reach,
    build_path,
    check_jerk_ramps,
    join_reports,
    unstopped_turn_limit,
)
from robokin_ros.core.trajectory.arrays import concatenate_trajectories, hold_trajectory, piece_offsets
from robokin_ros.core.ik.branch_choice import nearest_branch_solver
from robokin_ros.core.ik.pose_ik import solve_pose
from robokin_ros.core.program.bimanual import plan_tips_program
from robokin_ros.core.program.moves import (
    MotionProgram,
    Move,
    MoveKind,
    check_program,
    check_tips,
    uses_tips,
    waypoint_program,
)
from robokin_ros.core.program.pieces import Piece, PieceFailure, groups, solve_cartesian, solve_joint_move, \
    zero_length_moves
from robokin_ros.core.program.result import MotionPlan, with_jerk_shares
from robokin_ros.core.program.runs import TimedRun, empty_reports, move_reports, runs_deviation, time_run
from robokin_ros.core.program.waypoint_plans import plan_waypoints
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.scaling import resolve_scaling

PHASES = ("geometry and IK", "blends and downsampling", "timing", "verification")     # a program's timings keys
WARM_UP_STEP = 0.002      # [m] length of the path `warm_up` solves (compiles and loads the kernels)
WARM_UP_TURN = 0.002      # [rad] the compile run also rotates, so the projections of rotating paths compile too


class MotionPlanner:
    """Plans programs and waypoint paths for one robot and config; keeps the per-tip solvers (their batched FK)
    between calls. `plan` returns a MotionPlan (never raises for a move the arm cannot follow)."""

    def __init__(self, robot: RobotModel, config: PathConfig | None = None, pose_solver=None) -> None:
        """`pose_solver(robot, pose, seed, frame_id, margin) -> PoseIkResult` solves joint-space targets given as
        poses (MoveJ, approach moves). Default: on an arm with a closed form (UR) the solution nearest the seed out
        of all its branches (`core/ik/branch_choice.py`), else `core/ik/pose_ik.solve_pose` (iterative, on the
        seed's branch)."""
        self.robot = robot
        self.config = config or PathConfig()
        self.pose_solver = pose_solver or nearest_branch_solver(robot) or solve_pose
        self.config.check_joint_lists(robot.joint_names)
        check_jerk_ramps(self.limits(), robot.joint_names)
        self._solvers: dict[str, PathIkSolver] = {}
        self._tips_solver: TipsIkSolver | None = None

    @property
    def several_tips(self) -> bool:
        """True on a robot with several tips (two arms): programs are planned by `bimanual.plan_tips_program`."""
        return len(self.robot.tip_frames) > 1

    def tips_solver(self) -> TipsIkSolver:
        """The cached stacked IK of every tip (robots with several tips)."""
        if self._tips_solver is None:
            self._tips_solver = TipsIkSolver(self.robot, self.config)
        return self._tips_solver

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
        first request pays no compile time. On a robot with several tips: a 2 mm move of the first tip (the others
        holding), planned as a program."""
        if self.several_tips:
            start = self.robot.fk(self.robot.home())
            target = pin.SE3(start.rotation, start.translation + np.array([0.0, 0.0, WARM_UP_STEP]))
            self.plan(MotionProgram((Move(MoveKind.LINEAR, pose=target, tip=self.robot.tip_frame),)),
                      self.robot.home())
            return
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
        """Velocity [rad/s], acceleration [rad/s^2] and jerk [rad/s^3] limits: config overrides, else URDF /
        defaults."""
        c = self.config
        return motion_limits(self.robot, c.max_joint_velocity, c.max_joint_acceleration, c.default_joint_acceleration,
                             c.max_joint_jerk, c.default_joint_jerk)

    def joint_target(self, pose: pin.SE3, seed: np.ndarray, solver: PathIkSolver):
        """The joint move to a pose: `pose_solver`'s solution for the tool frame of `solver` from `seed` (its
        branch, or the nearest closed-form solution), within the joint limits minus the margin (PoseIkResult)."""
        return self.pose_solver(self.robot, pose, seed, solver.frame_id, self.config.joint_limit_margin)

    def plan(self, program: MotionProgram, start_positions, *, tip_frame: str = "", axis_mask=None,
             axis_frame: str | None = None, velocity_scaling: float | None = None,
             acceleration_scaling: float | None = None, should_stop: Callable[[], bool] | None = None,
             budget: PlanningBudget | None = None, time_parameterize: bool = True,
             solved_part: bool = True) -> MotionPlan:
        """Plan `program` (a motion program, or a waypoint path from `moves.waypoint_program`) from
        `start_positions`.

        Args:
            axis_mask: bool (6,) constrained axes, None = the config's. axis_frame: "tool" / "base", None = config.
            velocity_scaling, acceleration_scaling: the request's fractions of the limits in (0, 1]; None or 0 =
                the program's, then the config's (core/scaling.py: NaN, inf, negative or above 1 raise
                InvalidInputError).
            should_stop: polled between units of work in every phase; True ends planning (None = never).
            budget: the planning budget to spend, None = a new one of `config.planning_timeout` polling
                `should_stop`.
            time_parameterize: False stops a waypoint path after its IK (no trajectory).
            solved_part: False leaves a failed waypoint path without its timed solved part (trajectory None).

        Returns:
            MotionPlan: on failure its trajectory is the solved part (ending at rest), None when nothing was.

        Raises:
            PathInputError (and subclasses), InvalidInputError, UnknownFrameError: a bad request, including a
                target ABSURD_REACH_FACTOR reaches away (`core/path/reach.py`), a waypoint path's REFUSE approach
                with the tool away from waypoints[0], or its MoveJ approach without an IK solution.
            TrajectoryTimingError: the solved path cannot be timed within the limits.
            PlanningStopped: `should_stop` returned True (CANCELED) or planning took longer than
                `config.planning_timeout` (TIMEOUT); the exception says in which phase and how far it got.
        """
        if self.several_tips:
            ensure_compiled(self)            # outside the budget, as below
            budget = PlanningBudget(self.config.planning_timeout, should_stop) if budget is None else budget
            return plan_tips_program(self, program, start_positions, tip_frame, axis_mask, velocity_scaling,
                                     acceleration_scaling, budget)
        if uses_tips(program):
            check_tips(program, (tip_frame or self.config.tip_frame or self.robot.tip_frame,))
        ensure_compiled(self)                # outside the budget: planning_timeout is about planning, not JIT
        c = self.config
        path = program.waypoint_path
        if path is not None:                 # a goal's scalings are refused before anything else is looked at
            scalings = self.scalings(program, velocity_scaling, acceleration_scaling)
        budget = PlanningBudget(c.planning_timeout, should_stop) if budget is None else budget
        if path is not None:
            approaching = path.approach != 0 and len(program.moves) > 0
            q0 = self.robot.check_positions(start_positions, "start positions") if approaching else None
            solver = self.solver(tip_frame)
            q0 = self.robot.check_positions(start_positions, "start positions") if q0 is None else q0
            return plan_waypoints(self, program, q0, solver, axis_mask, axis_frame, scalings, budget,
                                  time_parameterize, solved_part)
        return self._plan_program(program, start_positions, tip_frame, axis_mask, axis_frame, velocity_scaling,
                                  acceleration_scaling, budget)

    def scalings(self, program: MotionProgram, velocity, acceleration) -> tuple[float, float]:
        """The request's (velocity, acceleration) fractions, by core/scaling.py's rule: 0 or None = the program's,
        whose 0 is the config's (a program's own fractions are checked by `check_program`)."""
        c = self.config
        return (resolve_scaling("velocity_scaling", velocity,
                                resolve_scaling("program velocity_scaling", program.velocity_scaling,
                                                c.velocity_scaling)),
                resolve_scaling("acceleration_scaling", acceleration,
                                resolve_scaling("program acceleration_scaling", program.acceleration_scaling,
                                                c.acceleration_scaling)))

    def move_limits(self, program: MotionProgram, velocity: float, acceleration: float) -> np.ndarray:
        """(moves, 4): each move's joint speed and acceleration fractions (0 = the program's `velocity`,
        `acceleration`) and its tool speed [m/s] and angular speed [rad/s] (0 = none), capped by the config's."""
        c = self.config
        return np.array([(resolve_scaling(f"move {i} joint_speed", m.joint_speed, velocity),
                          resolve_scaling(f"move {i} acceleration", m.acceleration, acceleration),
                          _min_set(m.speed, c.max_cartesian_speed),
                          _min_set(m.angular_speed, c.max_cartesian_angular_speed))
                         for i, m in enumerate(program.moves)])

    def _plan_program(self, program: MotionProgram, start_positions, tip_frame, axis_mask, axis_frame, velocity,
                      acceleration, budget: PlanningBudget) -> MotionPlan:
        t0 = time.perf_counter()
        phases = dict.fromkeys(PHASES, 0.0)
        solver = self.solver(tip_frame)
        axes = solver.axes(axis_mask, axis_frame)
        q = self.robot.check_positions(start_positions, "start positions").copy()
        check_program(program, self.robot.n)
        move_limits = self.move_limits(program, *self.scalings(program, velocity, acceleration))
        check_program_reach(program, self.reach(tip_frame))
        R0, p0 = solver.fk(q[None])
        zero_length = zero_length_moves(program, pin.SE3(R0[0], p0[0]), solver.fk)    # named in the message
        limits = self.limits()
        timed_runs: list[TimedRun] = []
        failure: PieceFailure | None = None
        dense = 0
        for r, run in enumerate(runs_of(program)):
            budget.check("program", r, len(program))
            t1 = time.perf_counter()
            pieces, failure = self._pieces(program, run, q, solver, axes, budget)
            phases["geometry and IK"] += time.perf_counter() - t1
            if pieces:
                timed_runs.append(time_run(program, pieces, move_limits, solver.fk, self.robot.joint_names, limits,
                                           self.config, axes, budget, phases))
                dense += len(timed_runs[-1].run.positions)
                q = pieces[-1].positions[-1]
            if failure is not None:
                break
        notes = _zero_length_notes(program, zero_length)
        if not timed_runs:
            return self._unmoved(program, failure, q, notes, t0)
        return self._joined(program, timed_runs, failure, solver, axes, dense, notes, phases, t0, budget)

    def _pieces(self, program, run, q, solver, axes, budget) -> tuple[list[Piece], PieceFailure | None]:
        """The solved pieces of a run (up to a failure) and the failure, if any."""
        pieces: list[Piece] = []
        for group in groups(program, run):
            if program.moves[group[0]].kind.cartesian:
                piece, failure = solve_cartesian(program, group, q, solver, self.config, self.unstopped_turn(),
                                                 axes, budget)
            else:
                piece, failure = solve_joint_move(program, group[0], q, self.robot, solver,
                                                  lambda pose, seed: self.joint_target(pose, seed, solver))
            if piece is not None:
                pieces.append(piece)
                q = piece.positions[-1]
            if failure is not None:
                return pieces, failure
        return pieces, None

    def _unmoved(self, program, failure, q, notes, started: float) -> MotionPlan:
        """The plan of a program none of whose moves moves the arm: its first move failed, or all are zero-length
        (a hold at the start)."""
        message = (failure.message if failure else "already there: no move of the program moves the arm"
                   + "".join(f"; note: {note}" for note in notes))
        hold = None if failure else hold_trajectory(self.robot.joint_names, q)
        return MotionPlan(failure.status if failure else PathStatus.SUCCESS, message, hold,
                          tuple(empty_reports(program)), failed_move=failure.move if failure else -1,
                          timings={"total": time.perf_counter() - started}, notes=notes)

    def _joined(self, program, timed_runs: list[TimedRun], failure, solver, axes, dense, notes, phases,
                started: float, budget: PlanningBudget) -> MotionPlan:
        """The runs joined rest to rest, with their per-move reports and the verification."""
        trajectory = concatenate_trajectories([t.arrays for t in timed_runs])
        report = join_reports([t.timed.report for t in timed_runs], trajectory.duration)
        reports = []
        offsets = piece_offsets([t.arrays for t in timed_runs])
        for r, t in enumerate(timed_runs):
            run_reports = move_reports(program, t, float(offsets[r]))
            if r + 1 < len(timed_runs):      # the arm rests at the run's last target until the next run starts
                last = run_reports[-1]
                run_reports[-1] = dataclasses.replace(last, duration=float(offsets[r + 1]) - last.start_time)
            reports.extend(run_reports)
        done = {r.index for r in reports}
        reports.extend(r for r in empty_reports(program) if r.index not in done)
        reports.sort(key=lambda r: r.index)
        t0 = time.perf_counter()
        position, orientation = runs_deviation(timed_runs, solver.fk, axes, self.config, budget)
        phases["verification"] += time.perf_counter() - t0
        count = len(program.moves)
        completed = failure.move if failure else count
        message = (failure.message + f"; the solved part ({completed} of {count} moves done) is timed"
                   if failure else f"program planned: {count} moves, cycle time {trajectory.duration:.3f} s") + \
            "".join(f"; note: {note}" for note in notes)
        reports = with_jerk_shares(reports, trajectory, self.limits().jerk)
        return MotionPlan(failure.status if failure else PathStatus.SUCCESS, message, trajectory, tuple(reports),
                          report, failed_move=failure.move if failure else -1, completed_moves=completed,
                          max_position_deviation=position, max_orientation_deviation=orientation,
                          dense_samples=dense, timings={**phases, "total": time.perf_counter() - started},
                          notes=notes)


def runs_of(program: MotionProgram) -> list[list[int]]:
    """Move indices split after every exact stop ("fine"); the last move always ends one."""
    out, current = [], []
    for i, move in enumerate(program.moves):
        current.append(i)
        if move.fine or i == len(program.moves) - 1:
            out.append(current)
            current = []
    return out


def check_program_reach(program: MotionProgram, reach: ArmReach) -> None:
    """PathInputError naming the first move whose target or via lies ABSURD_REACH_FACTOR reaches from the shoulder
    (the waypoint rule): refused before a single sample is densified, where a MoveL written in millimetres used to
    plan 838,506 dense samples and fail with a reason that never mentioned units."""
    for i, move in enumerate(program.moves):
        for what, point in (("target", None if move.pose is None else move.pose.translation), ("via", move.via)):
            if point is not None and reach.farthest_beyond(point) >= 0:
                raise PathInputError(reach.too_far(f"{move.label(i)}: its {what}", np.asarray(point, float)), i)


def _min_set(a: float, b: float) -> float:
    """The smaller of two limits where 0 means "none"."""
    if a > 0 and b > 0:
        return min(a, b)
    return max(a, b)


def _zero_length_notes(program: MotionProgram, zero_length: list[int]) -> tuple[str, ...]:
    """The moves planned as no motion (their target is the pose they start from): accepted, as a robot controller
    runs them, but said, since a repeated target is often a typo."""
    if not zero_length:
        return ()
    names = ", ".join(program.moves[i].label(i) for i in zero_length)
    return (f"zero-length move(s) {names}: the target is where the move starts, nothing to move",)


_COMPILED: set[bool] = set()        # planner.several_tips of the kinds compiled


def ensure_compiled(planner: MotionPlanner) -> None:
    """Compile every numba kernel a plan uses, once per process, by planning a 2 mm / 2 mrad path without a time
    budget. On a fresh install (empty numba cache) that takes seconds (12 s on this 2-core machine), which a first
    request would otherwise spend out of its planning_timeout; afterwards numba's cache makes it ~0.3 s per process.
    A robot with several tips plans the same path for its first tip, the others holding, once per process too."""
    kind = planner.several_tips          # one tip and several tips use different kernels: each compiled once
    if kind in _COMPILED:
        return
    _COMPILED.add(kind)
    robot = planner.robot
    unlimited = dataclasses.replace(planner.config, planning_timeout=3600.0, max_cartesian_speed=1.0)
    start = robot.fk(robot.home())
    turn = pin.SE3(start.rotation @ pin.exp3(np.array([0.0, 0.0, WARM_UP_TURN])),
                   start.translation + np.array([0.0, 0.0, WARM_UP_STEP]))
    MotionPlanner(robot, unlimited).plan(waypoint_program([turn], unlimited.blend_radius), robot.home())
