"""Runs of a program: the moves between two exact stops, joined into one joint path and timed.

Assembly (`build_run`): the pieces are cut at their zones and joined by joint-space blends; the run carries the knots
the timing spline passes through and the stretch of limits each part of the path runs under. A zone where a MoveJ
meets another move is a joint-space blend: both neighbours are cut where the tool is `zone` away from the corner (the
zone is a tool distance, as in robot languages), at most half-way along each move, and the cut points are joined by a
cubic Bezier tangent to both neighbours. For two straight joint lines it is the quadratic Bezier over the corner
configuration, raised to a cubic: control points 2/3 of the way to the corner, so the velocity direction is
continuous and the curve stays inside the corner's triangle.

Timing (`time_run`): toppra over the run's spline with a `LimitSchedule`: each move's joint-speed and acceleration
fractions and tool speeds (the stricter of two moves inside a zone). A run that is one MoveJ between exact stops
without tool speeds is timed by the synchronised point-to-point profile instead (`point_to_point`: trapezoid or
quintic, `core/trajectory/profiles.py`). All joints share one s(t) on the straight joint line; on that line the
trapezoid is what toppra finds too (a test compares the durations; up to 8 % longer, so that a controller's spline
through its points stays within the limits), the quintic has no acceleration steps.

Then the per-move report rows and the verification of the played runs against the Cartesian moves' geometry
(`runs_deviation`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from robokin_ros.core.path.surface import (
    AxisSelection,
    DensePath,
    LimitSchedule,
    PathConfig,
    PlanningBudget,
    StretchReport,
    TimedTrajectory,
    TimingReport,
    ToolSpeedLimit,
    chain_fk,
    downsample,
    path_parameter,
    played_deviation,
    stretch_reports,
    time_section_profile,
    tool_speeds,
)
from robokin_ros.core.program.moves import MotionProgram
from robokin_ros.core.program.pieces import Piece
from robokin_ros.core.program.result import MoveReport
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays
from robokin_ros.core.trajectory.outgoing_check import spline_peaks
from robokin_ros.core.trajectory.jerk_smoothing import quintic_jerk_peaks
from robokin_ros.core.trajectory.profiles import joint_move

BLEND_SAMPLE_STEP = 0.005      # [rad | m] spacing of blend samples (chord), at least MIN_BLEND_SAMPLES
MIN_BLEND_SAMPLES = 8
INITIAL_KNOT_STRIDE = 32       # dense samples between the first-guess knots of a Cartesian part
JOINT_KNOT_STRIDE = 4          # every 4th MoveJ sample (0.04 rad) is a spline knot: a straight line needs few


@dataclass(frozen=True)
class CartesianWindow:
    """Dense samples first..last of a run that follow `path` (a Cartesian piece minus its joint blends)."""

    first: int
    last: int
    path: DensePath


@dataclass(frozen=True)
class AssembledRun:
    """A run's dense joint path and what the timing needs from it."""

    positions: np.ndarray          # (N, n)
    labels: np.ndarray             # (N,) move index per sample (nondecreasing): whose limits apply
    parameter: np.ndarray          # (N,) cumulative joint distance: the spline parameter
    knots: np.ndarray              # (M,) dense indices the timing spline passes through
    windows: tuple[CartesianWindow, ...]
    joint_zones: dict          # move index -> zone used at its end where a joint blend joins it [m] (the tool's
    #                            distance from the corner at the nearer cut: smaller than programmed when a cut
    #                            stopped half-way along a short move)


def _range_of(labels: np.ndarray, move: int) -> tuple[int, int]:
    hits = np.flatnonzero(labels == move)
    return int(hits[0]), int(hits[-1])


def assemble(pieces: list[Piece], zones: list[float],
             smooth: bool = False) -> tuple[list[tuple[int, int]], list[np.ndarray], dict]:
    """Cut ranges (lo, hi) of every piece, the joint blend samples between piece p and p + 1 for the zones
    `zones[p]` [m] at their junctions (0 = the pieces meet without a blend: the run's last move only), and the zone
    each junction's incoming move got. `smooth`: blends without curvature at their ends (`joint_blend`), for jerk
    limits."""
    ranges = [[0, len(p.positions) - 1] for p in pieces]
    blends, used = [], {}
    for p, zone in enumerate(zones):
        a, b = pieces[p], pieces[p + 1]
        if zone <= 0.0:
            blends.append(np.empty((0, a.positions.shape[1])))
            continue
        lo = ranges[p][0]
        first_of_move = max(_range_of(a.labels, int(a.labels[-1]))[0], lo)
        incoming = incoming_cut(a.tools[lo:], first_of_move - lo, zone)
        cut_in = lo + incoming.index
        last_of_move = _range_of(b.labels, int(b.labels[0]))[1]
        outgoing = outgoing_cut(b.tools, max(last_of_move, 1), zone)
        cut_out = outgoing.index
        used[int(a.labels[-1])] = min(incoming.tool_distance, outgoing.tool_distance)
        ranges[p][1], ranges[p + 1][0] = cut_in, cut_out
        qa, qb = a.positions, b.positions
        t_in = unit_direction(qa[max(cut_in - 1, 0)], qa[cut_in] if cut_in > 0 else qa[1])
        t_out = unit_direction(qb[cut_out], qb[min(cut_out + 1, len(qb) - 1)])
        blends.append(joint_blend(qa[cut_in], qa[-1], qb[cut_out], t_in, t_out, smooth))
    return [tuple(r) for r in ranges], blends, used


def build_run(pieces: list[Piece], zones: list[float], fk, config, axes: AxisSelection,
              budget: PlanningBudget, smooth: bool = False) -> AssembledRun:
    """The dense joint path of a run, its spline knots (Cartesian parts downsampled within the path tolerances)
    and the windows where it follows a Cartesian path; `smooth`: joint blends without curvature at their ends."""
    ranges, blends, joint_zones = assemble(pieces, zones, smooth)
    positions, labels, knots, windows = [], [], [], []
    offset = 0
    for p, (piece, (lo, hi)) in enumerate(zip(pieces, ranges)):
        budget.check("downsampling", p, len(pieces))
        q = piece.positions[lo:hi + 1]
        positions.append(q)
        labels.append(piece.labels[lo:hi + 1])
        if piece.cartesian:
            section = piece.path.section(lo, hi)
            # where a segment, arc or blend begins the spline needs a knot anyway, and the refinement ends with a
            # knot every ~20 samples on these paths: a first guess of one per INITIAL_KNOT_STRIDE saves its rounds
            changes = np.r_[np.flatnonzero(np.diff(section.segment) != 0) + 1,
                            np.arange(0, hi - lo + 1, INITIAL_KNOT_STRIDE)]
            reduced = downsample(q, section, fk, config.downsample_joint_tolerance,
                                 config.downsample_position_tolerance, config.downsample_orientation_tolerance,
                                 axes, budget, initial=changes)
            knots.append(reduced.indices + offset)
            windows.append(CartesianWindow(offset, offset + hi - lo, section))
        else:
            knots.append(np.unique(np.r_[np.arange(0, hi - lo + 1, JOINT_KNOT_STRIDE), hi - lo]) + offset)
        offset += hi - lo + 1
        if p < len(blends) and len(blends[p]):
            count = len(blends[p])
            positions.append(blends[p])
            incoming, outgoing = int(piece.labels[-1]), int(pieces[p + 1].labels[0])
            # halves, as in Cartesian zones
            labels.append(np.where(np.arange(count) < count // 2, incoming, outgoing))
            knots.append(np.arange(count) + offset)
            offset += count
    # zones inside a run are > 0 (a run ends at its first exact stop), so pieces never share a sample
    Q = np.concatenate(positions)
    return AssembledRun(Q, np.concatenate(labels), path_parameter(Q),
                        np.unique(np.concatenate(knots)), tuple(windows), joint_zones)


def stretches(run: AssembledRun) -> tuple[np.ndarray, np.ndarray]:
    """The limit stretches: (dense start index, move) of each move's contiguous samples."""
    starts = np.flatnonzero(np.r_[True, np.diff(run.labels) != 0])
    return starts, run.labels[starts]


class Cut(NamedTuple):
    """Where a zone cuts a neighbouring piece: the sample index kept last (incoming) or first (outgoing)."""

    index: int
    tool_distance: float       # [m] of the tool at the cut from the corner


def incoming_cut(tool_positions: np.ndarray, first_of_move: int, zone: float) -> Cut:
    """The last sample at least `zone` from the piece's end point, but not before the middle of its last move
    (samples first_of_move..end)."""
    end = len(tool_positions) - 1
    distance = np.linalg.norm(tool_positions - tool_positions[end], axis=1)
    middle = first_of_move + (end - first_of_move) // 2
    far = np.flatnonzero(distance[middle:end] >= zone)
    index = middle + int(far[-1]) if len(far) else middle
    return Cut(index, float(distance[index]))


def outgoing_cut(tool_positions: np.ndarray, last_of_move: int, zone: float) -> Cut:
    """The first sample at least `zone` from the piece's start point, but not after the middle of its first
    move (samples 0..last_of_move)."""
    distance = np.linalg.norm(tool_positions - tool_positions[0], axis=1)
    middle = max(1, last_of_move // 2)
    far = np.flatnonzero(distance[1:middle + 1] >= zone)
    index = 1 + int(far[0]) if len(far) else middle
    return Cut(index, float(distance[index]))


def joint_blend(before: np.ndarray, corner: np.ndarray, after: np.ndarray, tangent_in: np.ndarray,
                tangent_out: np.ndarray, smooth: bool = False) -> np.ndarray:
    """Interior samples (K, n) of the cubic Bezier from `before` to `after` (both excluded).

    tangent_in / tangent_out: unit joint-space directions of the neighbouring pieces at the cuts. The control
    points lie 2/3 of the distance to `corner` along them, which for straight neighbours is exactly the quadratic
    Bezier over the corner. `smooth` (jerk limits): the quintic Bezier with control points 1/3 and 2/3 of the way
    along each tangent instead, whose curvature is 0 at both ends, as a straight MoveJ neighbour's: a curvature step
    there, at speed, is an acceleration step (unbounded jerk) that the jerk-limited timing has to slow down for
    (the pick-and-place, zoned, at a tenth of Franka's jerk limits: 1.31x the acceleration-limited cycle with the
    cubic, 1.20x with this one); it stays in the corner's triangle all the same. (Matching a Cartesian neighbour's
    own joint-space curvature as well measured no better: 1.20x.)"""
    chord = float(np.linalg.norm(after - before))
    count = max(MIN_BLEND_SAMPLES, int(np.ceil(chord / BLEND_SAMPLE_STEP)))
    t = (np.arange(1, count) / count)[:, None]
    u = 1.0 - t
    if smooth:
        reach_in, reach_out = np.linalg.norm(corner - before), np.linalg.norm(after - corner)
        points = (before, before + reach_in / 3.0 * tangent_in, before + 2.0 * reach_in / 3.0 * tangent_in,
                  after - 2.0 * reach_out / 3.0 * tangent_out, after - reach_out / 3.0 * tangent_out, after)
        weights = (u ** 5, 5 * u ** 4 * t, 10 * u ** 3 * t ** 2, 10 * u ** 2 * t ** 3, 5 * u * t ** 4, t ** 5)
        return sum(w * p for w, p in zip(weights, points))
    b1 = before + (2.0 / 3.0) * np.linalg.norm(corner - before) * tangent_in
    b2 = after - (2.0 / 3.0) * np.linalg.norm(after - corner) * tangent_out
    return u ** 3 * before + 3 * u * u * t * b1 + 3 * u * t * t * b2 + t ** 3 * after


def unit_direction(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(b - a) / |b - a| (zero vector when they coincide)."""
    d = b - a
    norm = float(np.linalg.norm(d))
    return d / norm if norm > 0 else d


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
    run = build_run(pieces, zones, fk, config, axes, budget, limits.jerk_limited)
    t1 = time.perf_counter()
    phases["blends and downsampling"] += t1 - t0
    budget.check("timing")
    v_max, a_max = limits.velocity, limits.acceleration
    c = config
    first = program.moves[int(pieces[0].labels[0])]
    if len(pieces) == 1 and not pieces[0].cartesian and first.speed == 0 and first.angular_speed == 0:
        v_scale, a_scale = move_limits[int(pieces[0].labels[0])][:2]
        timed, row = point_to_point(run.positions[0], run.positions[-1], v_max * v_scale, a_max * a_scale,
                                    c.joint_move_profile, c.trajectory_rate_hz, c.control_rate_hz, joint_names,
                                    fk.arrays(), limits.jerk)
        phases["timing"] += time.perf_counter() - t1
        return TimedRun(run, timed, {}, [row])
    starts, moves = stretches(run)
    rows = move_limits[moves.astype(int)]
    bounds = np.r_[run.parameter[starts], run.parameter[-1]]
    schedule = LimitSchedule(bounds, rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3])
    tool = ToolSpeedLimit(fk.arrays())
    timed = time_section_profile(run.parameter[run.knots], run.positions[run.knots], joint_names, v_max, a_max,
                                 1.0, 1.0, c.trajectory_rate_hz, c.control_rate_hz, tool, schedule=schedule,
                                 played=True, budget=budget, jerk=limits.jerk,
                                 tool_jerk=(c.max_cartesian_jerk, c.max_cartesian_angular_jerk))
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


def _jerk_fields(arrays: JointTrajectoryArrays, jerk) -> dict:
    """The report's played jerk ratio of a joint move, measured on the quintic through its points (none without
    a jerk limit)."""
    if jerk is None or not np.isfinite(np.asarray(jerk, float)).any():
        return {}
    peaks = quintic_jerk_peaks(arrays.times, arrays.positions, arrays.velocities, arrays.accelerations)
    return {"played_jerk_ratio": float((peaks / np.asarray(jerk, float)).max())}


BINDING = 1.0 - 1e-3       # a limit binds when the profile reaches it to within 0.1 %


def point_to_point(q0: np.ndarray, q1: np.ndarray, v_max: np.ndarray, a_max: np.ndarray, profile: str,
                   trajectory_rate_hz: float, control_rate_hz: float, joint_names,
                   chain, jerk=None) -> tuple[TimedTrajectory, StretchReport]:
    """The timed move and its report row; v_max, a_max already scaled by the move's fractions; `jerk` (n,) the
    joint jerk limits (None or inf = none: `joint_move`'s S-curve within them otherwise)."""
    arrays = joint_move(q0, q1, v_max, a_max, profile, trajectory_rate_hz, joint_names, for_controller=True,
                        jerk=jerk)
    fine = joint_move(q0, q1, v_max, a_max, profile, control_rate_hz, joint_names,      # for the tool speeds
                      for_controller=True, jerk=jerk)
    speeds = tool_speeds(chain, fine.positions, fine.velocities).max(axis=0)             # (2,)
    played = spline_peaks(arrays.times, arrays.positions, arrays.velocities, arrays.accelerations)
    v_ratio = played.velocity / v_max                                                     # (n,) as a JTC plays it
    a_ratio = played.acceleration / a_max
    if v_ratio.max() >= BINDING:
        limited_by = f"velocity of {joint_names[int(v_ratio.argmax())]}"
    elif a_ratio.max() >= BINDING:
        limited_by = f"acceleration of {joint_names[int(a_ratio.argmax())]}"
    else:
        limited_by = ""
    report = TimingReport(arrays.duration, float(v_ratio.max()), float(a_ratio.max()),
                          peak_tool_speed=float(speeds[0]), peak_tool_angular_speed=float(speeds[1]),
                          limited_by=limited_by, played_velocity_ratio=float(v_ratio.max()),
                          played_acceleration_ratio=float(a_ratio.max()), **_jerk_fields(arrays, jerk))
    row = StretchReport(0.0, arrays.duration, float(speeds[0]), float(speeds[1]), float(v_ratio.max()),
                        float(a_ratio.max()), limited_by)
    return TimedTrajectory(arrays, report, None), row
