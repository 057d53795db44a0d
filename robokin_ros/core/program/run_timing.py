"""Timing one run of a program (the moves between two exact stops), its per-move report rows and the verification
of the played runs against the Cartesian moves' geometry.

A run is timed by toppra over its spline with a `LimitSchedule`: each move's joint-speed and acceleration fractions
and tool speeds (the stricter of two moves inside a zone). A run that is one MoveJ without tool speeds is timed by
the point-to-point profile instead (`point_to_point`).
"""
from __future__ import annotations

import time

import numpy as np

from robokin_ros.core.path.surface import (
    AxisSelection,
    LimitSchedule,
    PathConfig,
    PlanningBudget,
    ToolSpeedLimit,
    chain_fk,
    played_deviation,
    stretch_reports,
    time_optimal,
)
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays
from robokin_ros.core.program.assembly import AssembledRun, build_run, stretches
from robokin_ros.core.program.moves import MotionProgram
from robokin_ros.core.program.pieces import Piece
from robokin_ros.core.program.point_to_point import point_to_point
from robokin_ros.core.program.result import MoveReport


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


def time_run(program: MotionProgram, pieces: list[Piece], move_limits: np.ndarray, fk, joint_names, limits,
             config: PathConfig, axes: AxisSelection, budget: PlanningBudget, phases: dict) -> TimedRun:
    """Assemble and time the solved pieces of one run. `move_limits`: (moves, 4) per program move, the joint speed
    and acceleration fractions and the tool speeds [m/s, rad/s] (0 = none); `limits`: the joint limits in force;
    the phases' seconds add into `phases`."""
    zones = [program.moves[int(p.labels[-1])].zone for p in pieces[:-1]]
    t0 = time.perf_counter()
    run = build_run(pieces, zones, fk, config, axes, budget)
    t1 = time.perf_counter()
    phases["blends and downsampling"] += t1 - t0
    budget.check("timing")
    v_max, a_max = limits
    c = config
    first = program.moves[int(pieces[0].labels[0])]
    if len(pieces) == 1 and not pieces[0].cartesian and first.speed == 0 and first.angular_speed == 0:
        v_scale, a_scale = move_limits[int(pieces[0].labels[0])][:2]
        timed, row = point_to_point(run.positions[0], run.positions[-1], v_max * v_scale, a_max * a_scale,
                                    c.joint_move_profile, c.trajectory_rate_hz, c.control_rate_hz, joint_names,
                                    fk.arrays())
        phases["timing"] += time.perf_counter() - t1
        return TimedRun(run, timed, {}, [row])
    starts, moves = stretches(run)
    rows = move_limits[moves.astype(int)]
    bounds = np.r_[run.parameter[starts], run.parameter[-1]]
    schedule = LimitSchedule(bounds, rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3])
    tool = ToolSpeedLimit(fk.arrays())
    timed = time_optimal(run.parameter[run.knots], run.positions[run.knots], joint_names, v_max, a_max, 1.0, 1.0,
                         c.trajectory_rate_hz, c.control_rate_hz, tool, schedule=schedule, played=True,
                         budget=budget)
    reports = stretch_reports(timed, schedule, v_max, a_max, tool, joint_names, c.control_rate_hz)
    phases["timing"] += time.perf_counter() - t1
    used = dict(run.joint_zones)
    for piece in pieces:
        used.update(piece.blend_radii or {})
    return TimedRun(run, timed, used, reports)


def move_reports(program: MotionProgram, timed_run: TimedRun, offset: float) -> list[MoveReport]:
    """One report per move of a run, from its limit stretch (one per move: the labels do not decrease)."""
    reports = []
    for index, row in zip(np.unique(timed_run.run.labels).tolist(), timed_run.stretches):
        move = program.moves[index]
        reports.append(MoveReport(index, move.label(index), offset + row.start_time, row.end_time - row.start_time,
                                  row.peak_tool_speed, row.peak_tool_angular_speed, row.limited_by, move.speed,
                                  0.0 if move.fine else timed_run.zones.get(index, move.zone)))
    return reports


def empty_reports(program: MotionProgram) -> list[MoveReport]:
    """The report rows of moves that were not planned (or planned as no motion)."""
    return [MoveReport(i, m.label(i), 0.0, 0.0, 0.0, 0.0, "", m.speed, m.zone) for i, m in enumerate(program.moves)]


def runs_deviation(timed_runs: list[TimedRun], fk, axes: AxisSelection, config: PathConfig,
                   budget: PlanningBudget) -> tuple[float, float]:
    """Largest deviation of the played trajectory from the Cartesian moves' geometry (joint blends excluded)."""
    c = config
    kernel = chain_fk(fk)
    worst_p, worst_r = 0.0, 0.0
    for t in timed_runs:
        trajectory, arrays = t.timed.trajectory, t.arrays
        for window in t.run.windows:
            t0, t1 = trajectory.time_at(t.run.parameter[[window.first, window.last]])
            times = np.linspace(t0, t1, max(2, int(np.ceil((t1 - t0) * c.control_rate_hz)) + 1))
            played = played_deviation(arrays, times, window.path, kernel, axes, c.sample_step / c.sample_angle_step,
                                      "quintic", budget)
            worst_p, worst_r = max(worst_p, played.position), max(worst_r, played.orientation)
    return worst_p, worst_r
