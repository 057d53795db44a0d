"""Motion programs -> one trajectory: runs between exact stops, each timed time-optimally as one joint path under
every move's own limits, and the cycle-time report.

Pipeline per run (the moves up to and including the next "fine" one):
1. pieces: consecutive MoveL/MoveC as one blended Cartesian path through the path IK (`pieces.solve_cartesian`),
   each MoveJ as a joint-space line (`pieces.solve_joint_move`);
2. assembly: zones next to a MoveJ become joint-space blends, Cartesian parts are downsampled (`assembly`);
3. timing: toppra over the run's spline with a `LimitSchedule`: each move's joint-speed and acceleration fractions
   and tool speeds, the stricter of two moves inside a zone;
4. verification: the played trajectory against each Cartesian move's geometry (`deviation`).
A run that is one MoveJ without tool speeds is timed by the point-to-point profile instead (`point_to_point`).
Runs are joined rest to rest. A move that cannot be planned ends the program there: the solved part is timed,
ending at rest, and returned with the failure.
"""
from __future__ import annotations

import dataclasses

import time
from collections.abc import Callable

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import PathInputError
from robokin_ros.core.path.budget import PlanningBudget
from robokin_ros.core.path.deviation import played_deviation
from robokin_ros.core.path.fk_kernel import chain_fk
from robokin_ros.core.path.limit_schedule import LimitSchedule, stretch_reports
from robokin_ros.core.path.planner import CartesianPathPlanner, ensure_compiled
from robokin_ros.core.path.reach import ArmReach
from robokin_ros.core.path.result import JointTrajectoryArrays, PathStatus, concatenate_trajectories, piece_offsets
from robokin_ros.core.path.timing import join_reports, time_optimal
from robokin_ros.core.path.toppra_constraints import ToolSpeedLimit
from robokin_ros.core.program.assembly import AssembledRun, build_run, stretches
from robokin_ros.core.program.moves import MotionProgram, check_program
from robokin_ros.core.program.pieces import (
    Piece,
    PieceFailure,
    groups,
    solve_cartesian,
    solve_joint_move,
    zero_length_moves,
)
from robokin_ros.core.program.point_to_point import point_to_point
from robokin_ros.core.program.result import MoveReport, ProgramPlan
from robokin_ros.core.scaling import resolve_scaling

PHASES = ("geometry and IK", "blends and downsampling", "timing", "verification")     # ProgramPlan.timings keys


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
    (the waypoint rule of `CartesianPathPlanner.plan`): refused before a single sample is densified, where a MoveL
    written in millimetres used to plan 838,506 dense samples and fail with a reason that never mentioned units."""
    for i, move in enumerate(program.moves):
        for what, point in (("target", None if move.pose is None else move.pose.translation), ("via", move.via)):
            if point is not None and reach.farthest_beyond(point) >= 0:
                raise PathInputError(reach.too_far(f"{move.label(i)}: its {what}", np.asarray(point, float)), i)


def _min_set(a: float, b: float) -> float:
    """The smaller of two limits where 0 means "none"."""
    if a > 0 and b > 0:
        return min(a, b)
    return max(a, b)


class TimedRun:
    """A run's trajectory with what the report needs."""

    def __init__(self, run: AssembledRun, timed, zones: dict[int, float], stretches: list) -> None:
        self.run, self.timed = run, timed
        self.zones = zones          # move index -> zone used at its end [m] (clamped zones are smaller)
        self.stretches = stretches  # per move of the run, in order: limit_schedule.StretchReport

    @property
    def arrays(self) -> JointTrajectoryArrays:
        """The sampled trajectory."""
        return self.timed.arrays


class ProgramPlanner:
    """Plans motion programs for one robot, on a `CartesianPathPlanner` (its config, solvers and limits)."""

    def __init__(self, paths: CartesianPathPlanner) -> None:
        self.paths = paths
        self.robot, self.config = paths.robot, paths.config

    def move_limits(self, program: MotionProgram, index: int) -> tuple[float, float, float, float]:
        """(joint speed fraction, acceleration fraction, tool speed [m/s], tool angular speed [rad/s]) of a move;
        tool speeds of 0 = none. The node's max_cartesian_speed caps every move."""
        move, c = program.moves[index], self.config
        velocity = resolve_scaling("program velocity_scaling", program.velocity_scaling, c.velocity_scaling)
        acceleration = resolve_scaling("program acceleration_scaling", program.acceleration_scaling,
                                       c.acceleration_scaling)
        return (resolve_scaling(f"move {index} joint_speed", move.joint_speed, velocity),
                resolve_scaling(f"move {index} acceleration", move.acceleration, acceleration),
                _min_set(move.speed, c.max_cartesian_speed), _min_set(move.angular_speed,
                                                                      c.max_cartesian_angular_speed))

    def plan(self, program: MotionProgram, start_positions, *, tip_frame: str = "", axis_mask=None,
             axis_frame: str | None = None, should_stop: Callable[[], bool] | None = None) -> ProgramPlan:
        """Plan `program` from `start_positions`. Never raises for a move the arm cannot follow (the plan says
        which, with the solved part); raises PathInputError / InvalidInputError for a program that is malformed,
        TrajectoryTimingError and PlanningStopped as `CartesianPathPlanner.plan` does."""
        ensure_compiled(self.paths)          # outside the budget, as CartesianPathPlanner.plan does
        c = self.config
        t0 = time.perf_counter()
        self._phases = dict.fromkeys(PHASES, 0.0)
        budget = PlanningBudget(c.planning_timeout, should_stop)
        solver = self.paths.solver(tip_frame)
        axes = solver.axes(axis_mask, axis_frame)
        q = self.robot.check_positions(start_positions, "start positions").copy()
        check_program(program, self.robot.n)
        check_program_reach(program, self.paths.reach(tip_frame))
        R0, p0 = solver.fk(q[None])
        self._zero_length = zero_length_moves(program, pin.SE3(R0[0], p0[0]), solver.fk)    # named in the message
        timed_runs: list[TimedRun] = []
        failure: PieceFailure | None = None
        dense = 0
        for r, run in enumerate(runs_of(program)):
            budget.check("program", r, len(program))
            t1 = time.perf_counter()
            pieces, failure = self._pieces(program, run, q, solver, axis_mask, axis_frame, budget)
            self._phases["geometry and IK"] += time.perf_counter() - t1
            if pieces:
                timed_runs.append(self._time_run(program, pieces, solver, axes, budget))
                dense += len(timed_runs[-1].run.positions)
                q = pieces[-1].positions[-1]
            if failure is not None:
                break
        return self._plan(program, timed_runs, failure, solver, axes, dense, q, t0, budget)

    def _pieces(self, program, run, q, solver, axis_mask, axis_frame, budget):
        """The solved pieces of a run (up to a failure) and the failure, if any."""
        pieces: list[Piece] = []
        for group in groups(program, run):
            if program.moves[group[0]].kind.cartesian:
                piece, failure = solve_cartesian(program, group, q, solver, self.config, self.paths.unstopped_turn(),
                                                 axis_mask, axis_frame, budget)
            else:
                piece, failure = solve_joint_move(program, group[0], q, self.robot, solver,
                                                  self.config.joint_limit_margin, self.paths.pose_solver)
            if piece is not None:
                pieces.append(piece)
                q = piece.positions[-1]
            if failure is not None:
                return pieces, failure
        return pieces, None

    def _time_run(self, program, pieces: list[Piece], solver, axes, budget) -> TimedRun:
        zones = [program.moves[int(p.labels[-1])].zone for p in pieces[:-1]]
        t0 = time.perf_counter()
        run = build_run(pieces, zones, solver.fk, self.config, axes, budget)
        t1 = time.perf_counter()
        self._phases["blends and downsampling"] += t1 - t0
        budget.check("timing")
        v_max, a_max = self.paths.limits()
        c = self.config
        first = program.moves[int(pieces[0].labels[0])]
        if len(pieces) == 1 and not pieces[0].cartesian and first.speed == 0 and first.angular_speed == 0:
            v_scale, a_scale, _, _ = self.move_limits(program, int(pieces[0].labels[0]))
            timed, row = point_to_point(run.positions[0], run.positions[-1], v_max * v_scale, a_max * a_scale,
                                        c.joint_move_profile, c.trajectory_rate_hz, c.control_rate_hz,
                                        self.robot.joint_names, solver.fk.arrays())
            self._phases["timing"] += time.perf_counter() - t1
            return TimedRun(run, timed, {}, [row])
        starts, moves = stretches(run)
        limits = np.array([self.move_limits(program, int(m)) for m in moves])
        bounds = np.r_[run.parameter[starts], run.parameter[-1]]
        schedule = LimitSchedule(bounds, limits[:, 0], limits[:, 1], limits[:, 2], limits[:, 3])
        tool = ToolSpeedLimit(solver.fk.arrays())
        timed = time_optimal(run.parameter[run.knots], run.positions[run.knots], self.robot.joint_names, v_max,
                             a_max, 1.0, 1.0, c.trajectory_rate_hz, c.control_rate_hz, tool, schedule=schedule,
                             played=True, budget=budget)
        reports = stretch_reports(timed, schedule, v_max, a_max, tool, self.robot.joint_names, c.control_rate_hz)
        self._phases["timing"] += time.perf_counter() - t1
        zones = dict(run.joint_zones)
        for piece in pieces:
            zones.update(piece.blend_radii or {})
        return TimedRun(run, timed, zones, reports)

    def _plan(self, program, timed_runs: list[TimedRun], failure, solver, axes, dense, q,
              started: float, budget: PlanningBudget) -> ProgramPlan:
        if not timed_runs:
            status = failure.status if failure else PathStatus.SUCCESS
            message = (failure.message if failure else "already there: no move of the program moves the arm"
                       + self._zero_length_note(program))
            trajectory = None if failure else self._hold(q)
            return ProgramPlan(status, message, trajectory, self._empty_reports(program),
                               failed_move=failure.move if failure else -1,
                               timings={"total": time.perf_counter() - started}, notes=self._notes(program))
        trajectory = concatenate_trajectories([t.arrays for t in timed_runs])
        report = join_reports([t.timed.report for t in timed_runs], trajectory.duration)
        reports = []
        offsets = piece_offsets([t.arrays for t in timed_runs])
        for r, t in enumerate(timed_runs):
            run_reports = self._move_reports(program, t, float(offsets[r]))
            if r + 1 < len(timed_runs):      # the arm rests at the run's last target until the next run starts
                last = run_reports[-1]
                run_reports[-1] = dataclasses.replace(last, duration=float(offsets[r + 1]) - last.start_time)
            reports.extend(run_reports)
        done = {r.index for r in reports}
        reports.extend(r for r in self._empty_reports(program) if r.index not in done)
        reports.sort(key=lambda r: r.index)
        t0 = time.perf_counter()
        position, orientation = self._deviation(timed_runs, solver, axes, budget)
        self._phases["verification"] += time.perf_counter() - t0
        completed = failure.move if failure else len(program.moves)
        status = failure.status if failure else PathStatus.SUCCESS
        message = (failure.message + f"; the solved part ({completed} of {len(program.moves)} moves done) is timed"
                   if failure else f"program planned: {len(program.moves)} moves, cycle time "
                   f"{trajectory.duration:.3f} s") + self._zero_length_note(program)
        return ProgramPlan(status, message, trajectory, tuple(reports), report,
                           failed_move=failure.move if failure else -1, completed_moves=completed,
                           max_position_deviation=position, max_orientation_deviation=orientation,
                           dense_samples=dense, timings={**self._phases, "total": time.perf_counter() - started},
                           notes=self._notes(program))

    def _notes(self, program: MotionProgram) -> tuple[str, ...]:
        """The moves planned as no motion (their target is the pose they start from): accepted, as a robot
        controller runs them, but said, since a repeated target is often a typo."""
        if not self._zero_length:
            return ()
        names = ", ".join(program.moves[i].label(i) for i in self._zero_length)
        return (f"zero-length move(s) {names}: the target is where the move starts, nothing to move",)

    def _zero_length_note(self, program: MotionProgram) -> str:
        return "".join(f"; note: {note}" for note in self._notes(program))

    def _hold(self, q: np.ndarray) -> JointTrajectoryArrays:
        """The one-point trajectory of a program that does not move the arm."""
        zeros = np.zeros((1, self.robot.n))
        return JointTrajectoryArrays(tuple(self.robot.joint_names), np.zeros(1), q[None].copy(), zeros, zeros.copy())

    def _empty_reports(self, program) -> list[MoveReport]:
        return [MoveReport(i, m.label(i), 0.0, 0.0, 0.0, 0.0, "", m.speed, m.zone)
                for i, m in enumerate(program.moves)]

    def _move_reports(self, program, timed_run: TimedRun, offset: float) -> list[MoveReport]:
        """One report per move of a run, from its limit stretch (one per move: the labels do not decrease)."""
        reports = []
        for index, row in zip(np.unique(timed_run.run.labels).tolist(), timed_run.stretches):
            move = program.moves[index]
            reports.append(MoveReport(index, move.label(index), offset + row.start_time, row.end_time - row.start_time,
                                      row.peak_tool_speed, row.peak_tool_angular_speed, row.limited_by, move.speed,
                                      0.0 if move.fine else timed_run.zones.get(index, move.zone)))
        return reports

    def _deviation(self, timed_runs: list[TimedRun], solver, axes, budget: PlanningBudget) -> tuple[float, float]:
        """Largest deviation of the played trajectory from the Cartesian moves' geometry (joint blends excluded)."""
        c = self.config
        fk = chain_fk(solver.fk)
        worst_p, worst_r = 0.0, 0.0
        for t in timed_runs:
            trajectory, arrays = t.timed.trajectory, t.arrays
            for window in t.run.windows:
                t0, t1 = trajectory.time_at(t.run.parameter[[window.first, window.last]])
                times = np.linspace(t0, t1, max(2, int(np.ceil((t1 - t0) * c.control_rate_hz)) + 1))
                played = played_deviation(arrays, times, window.path, fk, axes, c.sample_step / c.sample_angle_step,
                                          "quintic", budget)
                worst_p, worst_r = max(worst_p, played.position), max(worst_r, played.orientation)
        return worst_p, worst_r
