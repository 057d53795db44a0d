"""Time parameterization: time-optimal (toppra) along the downsampled joint spline, verified, never trusted.

toppra enforces the limits on its grid; between grid points the trajectory can overshoot them (MoveIt users
report up to 2.75x). Two measures, then a verification that is never relaxed:
- the acceleration constraint uses toppra's first-order *interpolation* discretization (each grid interval
  is constrained at both of its ends, not only at its start): on the benchmark paths the overshoot drops
  from 1.35-1.7x (collocation) to 1.00-1.25x for the same grid and the same toppra cost;
- inside each grid interval the joint acceleration q''(s) sd^2 + q'(s) sdd is a quadratic in s (cubic spline,
  sd^2 linear in s); `IntervalAccelBound` bounds its peak, not only its ends, so the solution needs no stretch
  where it used to overshoot by 1.02x (Panda) / 1.10x (UR5) on the bench rectangles;
- the result is sampled at the control rate and the peak |qd|/v_max and |qdd|/a_max are measured; if either
  exceeds 1 + 1e-3, the trajectory is slowed down uniformly in time, q_c(t) = q(t / c): velocities scale
  by 1/c and accelerations by 1/c^2 everywhere, so c = max(v ratio, sqrt(a ratio)) (plus a small margin)
  removes the measured overshoot without a second toppra run; the stretched trajectory is verified again
  at the control rate (the samples fall elsewhere on it). The limits used are never raised;
- with `played=True` (what the planners ask for) the returned points are also measured as a trajectory controller
  plays them (its quintic through the points, core/trajectory/outgoing_check.py): the profile's acceleration steps
  overshoot there by up to ~37 %, so toppra runs again with the acceleration limits lowered by the overshoot
  (`played_ratios`, `derated` below).

Tool speed limits (`ToolSpeedLimit`): the tool twist along the path is J(q(s)) q'(s) sd, so each grid point
gets sd <= min(v_lin / |J_lin q'|, w_max / |J_ang q'|), a bound on toppra's x = sd^2 (`ToolSpeedBound`). Only
where the tool limit is tighter than the joints does it slow the path down. The verification measures
|J_lin qd| and |J_ang qd| at the control rate too, and the uniform stretch removes a tool overshoot as it
removes a joint velocity overshoot (tool speeds scale by 1/c).

Limits along the path (`LimitSchedule`, core/path/limit_schedule.py): the stretch boundaries join toppra's grid,
so every grid interval lies in one stretch; the joint limits become per-point rows (`VaryingVelocityBound`,
`VaryingAccelBound`), `IntervalAccelBound` takes each interval's stretch, `ToolSpeedBound` each point's tool
limits, and the verification compares every control sample against the limits at its own s(t).

Here: the verification, the played trajectory and the derating loop. toppra's run, its reuse and the limits its
solution binds are core/path/toppra_run.py.
"""
from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from robokin_ros.core.errors import InvalidInputError, TrajectoryTimingError
from robokin_ros.core.path.budget import UNLIMITED, PlanningBudget
from robokin_ros.core.path.result import TimingReport
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays, sample_times
from robokin_ros.core.path.toppra_constraints import LimitLookup, ToolSpeedLimit, limit_vector, tool_speeds
from robokin_ros.core.path.toppra_run import ConstAccelTrajectory, ControlSamples, Solved, limited_by, solve
from robokin_ros.core.trajectory.quintic_peaks import quintic_peaks

RATIO_TOLERANCE = 1e-3
_MAX_RETIMINGS = 8
_RETIME_MARGIN = 2e-3
_SPLINE_MARGIN = 0.02


class Peaks(NamedTuple):
    """Measured peaks of a trajectory at the control rate."""

    velocity_ratio: float              # max |qd| / v_max
    acceleration_ratio: float          # max |qdd| / a_max
    tool_ratio: float = 0.0            # max tool speed / its limit over the set limits (0 = none set)
    tool_speed: float = float("nan")   # [m/s] (nan = no tool chain given)
    tool_angular_speed: float = float("nan")  # [rad/s]

    def worst(self) -> float:
        """The stretch that would bring every ratio to 1: velocities scale by 1/c, accelerations by 1/c^2."""
        return max(self.velocity_ratio, np.sqrt(self.acceleration_ratio), self.tool_ratio, 1.0)


def _peaks(states: tuple, v_max, a_max, tool: ToolSpeedLimit | None,
           schedule: LimitLookup | None = None) -> tuple[Peaks, np.ndarray | None]:
    """Peaks of the samples `states` = (s (K,), q, qd, qdd (K, n)) against the limits at each sample's own s when a
    schedule is given, and the tool speeds (K, 2) they were measured on (None without `tool`)."""
    s, q, qd, qdd = states
    tool_limits = None
    if schedule is not None:
        v_max, a_max, tool_limits = schedule.limits_at(s, v_max, a_max)                 # (K, n), (K, n), (K, 2)
    peaks = Peaks(float((np.abs(qd) / v_max).max()), float((np.abs(qdd) / a_max).max()))
    if tool is None:
        return peaks, None
    return _with_tool_peaks(peaks, tool, q, qd, tool_limits)


def _with_tool_peaks(peaks: Peaks, tool: ToolSpeedLimit, q, qd, limits=None) -> tuple[Peaks, np.ndarray]:
    """`peaks` with the tool's, at joint positions and velocities `q`, `qd` (K, n); `limits` (K, 2) per sample,
    None = the tool's own. Also returns the tool speeds (K, 2)."""
    speeds = tool_speeds(tool.chain, q, qd)                                            # (K, 2)
    speed = speeds.max(axis=0)                                                         # (2,)
    ratio = speed / limit_vector(tool) if limits is None else speeds / limits          # 0 where unlimited
    return peaks._replace(tool_ratio=float(ratio.max()), tool_speed=float(speed[0]),
                          tool_angular_speed=float(speed[1])), speeds


def join_reports(reports, duration: float) -> TimingReport:
    """One report for rest-to-rest sections played one after the other: the worst peaks, summed costs, the
    binding limit of the longest section."""
    def worst(name: str) -> float:
        values = [getattr(r, name) for r in reports if not np.isnan(getattr(r, name))]
        return max(values) if values else float("nan")
    return TimingReport(duration, worst("peak_velocity_ratio"), worst("peak_acceleration_ratio"),
                        retimings=max(r.retimings for r in reports),
                        compute_time=sum(r.compute_time for r in reports),
                        verify_time=sum(r.verify_time for r in reports),
                        peak_tool_speed=worst("peak_tool_speed"),
                        peak_tool_angular_speed=worst("peak_tool_angular_speed"),
                        peak_tool_speed_ratio=worst("peak_tool_speed_ratio"),
                        limited_by=max(reports, key=lambda r: r.duration).limited_by,
                        played_velocity_ratio=worst("played_velocity_ratio"),
                        played_acceleration_ratio=worst("played_acceleration_ratio"),
                        played_stretch=max(r.played_stretch for r in reports),
                        planned_acceleration_share=min(r.planned_acceleration_share for r in reports),
                        played_jerk_ratio=worst("played_jerk_ratio"),
                        played_tool_jerk_ratio=worst("played_tool_jerk_ratio"),
                        jerk_window=max(r.jerk_window for r in reports))


def _tool_limited(ss, tool: ToolSpeedLimit | None, schedule: LimitLookup | None) -> bool:
    """Whether the tool speed is limited (else it is only measured, when a chain is given); checks the limits."""
    if schedule is not None:
        schedule.check_covers(ss[0], ss[-1])
        if schedule.has_tool_limits and tool is None:
            raise InvalidInputError("the limit schedule limits the tool speed but no tool chain was given "
                                    "(pass tool=ToolSpeedLimit(chain))")
        return tool is not None and schedule.has_tool_limits
    if tool is not None and not (tool.linear >= 0 and tool.angular >= 0):
        raise TrajectoryTimingError(f"tool speed limits {tool.linear} m/s, {tool.angular} rad/s must be >= 0 "
                                    "(0 = no limit)")
    return tool is not None and (tool.linear > 0 or tool.angular > 0)


class TimedTrajectory(NamedTuple):
    """What `time_optimal` returns."""

    arrays: JointTrajectoryArrays          # sampled at the trajectory rate
    report: TimingReport                   # verification at the control rate
    trajectory: ConstAccelTrajectory       # q(t, order) at any time


def time_optimal(ss: np.ndarray, waypoints: np.ndarray, joint_names, v_max: np.ndarray, a_max: np.ndarray,
                 velocity_scaling: float = 1.0, acceleration_scaling: float = 1.0,
                 trajectory_rate_hz: float = 100.0, control_rate_hz: float = 500.0,
                 tool: ToolSpeedLimit | None = None, bound_within_intervals: bool = True,
                 schedule: LimitLookup | None = None, played: bool = False,
                 budget: PlanningBudget = UNLIMITED) -> TimedTrajectory:
    """Time-optimal trajectory through joint waypoints (M, n) parameterized by `ss` (M,), from rest to rest.

    Args:
        ss: strictly increasing path parameter of the waypoints.
        waypoints: joint positions [rad | m]; row 0 is the start state.
        joint_names: names, in column order.
        v_max, a_max: per-joint limits [rad/s], [rad/s^2], finite and > 0.
        velocity_scaling, acceleration_scaling: global fractions in (0, 1], checked by the caller
            (`MotionPlanner.plan` is the edge that validates them). They scale the joint limits only.
        trajectory_rate_hz: sample rate of the returned arrays.
        control_rate_hz: rate of the verification sampling.
        tool: tool speed limits (absolute, not scaled) and the chain to measure them; None = no tool limit
            and no tool speed in the report (with limits of 0 the tool speed is measured, not limited).
        bound_within_intervals: bound the joint accelerations inside toppra's grid intervals too
            (`IntervalAccelBound`); False leaves their overshoot to the uniform stretch (for comparison).
        schedule: limits per stretch of `ss`, covering it: at s the joint limits are v_max * velocity_scaling *
            schedule.velocity_scaling[k] (the same for accelerations) and the tool limits are the schedule's;
            `tool` then only supplies the chain (its linear / angular are ignored) and is required when a
            stretch limits the tool. The report's peak tool speed ratio is against each sample's own limit.
        played: also keep the spline a joint_trajectory_controller plays through the returned points within the
            limits (`played_ratios` below): what every trajectory sent to a controller needs; False times as toppra
            and the control-rate verification alone say (the report's played ratios are still measured).
        budget: checked every `TOPPRA_CHECK` of toppra's stages and before every re-timing (PlanningStopped).

    Returns:
        TimedTrajectory: arrays, verification report and the continuous trajectory.

    Raises:
        TrajectoryTimingError: infeasible, non-finite limits, or an overshoot that re-timing cannot remove.
        InvalidInputError: a schedule that does not cover `ss`, or limits the tool without a chain.
    """
    v_max = np.asarray(v_max, float) * velocity_scaling
    a_max = np.asarray(a_max, float) * acceleration_scaling
    bad = [joint_names[j] for j in range(len(v_max))
           if not (np.isfinite(v_max[j]) and np.isfinite(a_max[j]) and v_max[j] > 0 and a_max[j] > 0)]
    if bad:
        raise TrajectoryTimingError(f"joints {bad} have no finite positive velocity/acceleration limit; "
                                    "set max_joint_velocity / max_joint_acceleration")
    if schedule is not None and tool is not None:
        tool = tool._replace(linear=0.0, angular=0.0)      # the schedule's tool limits replace the tool's own
    limited = _tool_limited(ss, tool, schedule)
    rates = (trajectory_rate_hz, control_rate_hz, budget)
    share = np.ones(len(v_max))
    solved = None
    for run in range(MAX_DERATINGS + 1 if played else 1):
        timed, ratios, solved = _timed(ss, waypoints, joint_names, v_max, a_max, share, tool, limited,
                                       bound_within_intervals, schedule, rates, played, run == MAX_DERATINGS,
                                       solved)
        if not played or run == MAX_DERATINGS or ratios.acceleration.max() <= 1.0 + RATIO_TOLERANCE:
            return timed
        share = derated(share, ratios.acceleration)
    raise AssertionError("unreachable: the last run stretches until it fits")  # pragma: no cover


class _Measured(NamedTuple):
    """One verification of a trajectory: control-rate samples and peaks, the points sent and their played peaks."""

    control_times: np.ndarray          # (K,) [s]
    positions: np.ndarray              # (K, n) at control_times
    velocities: np.ndarray             # (K, n)
    accelerations: np.ndarray          # (K, n)
    tool_speeds: np.ndarray | None     # (K, 2), None when the tool speed is not limited
    peaks: Peaks
    points: JointTrajectoryArrays      # at the trajectory rate
    played: PlayedRatios


def _measure(trajectory: ConstAccelTrajectory, start: np.ndarray, joint_names, v_max, a_max,
             tool: ToolSpeedLimit | None, schedule, rates: tuple) -> _Measured:
    """Samples `trajectory` at the control rate and at the trajectory rate (`rates`, as `_timed`'s) and measures the
    former against the limits (`tool`: only when limited) and the controller's spline through the latter."""
    duration = trajectory.duration
    control_times, point_times = sample_times(duration, rates[1]), sample_times(duration, rates[0])
    # one evaluation for both: `states` is elementwise, so these are the values two calls would give
    s, q, qd, qdd = trajectory.states(np.concatenate([control_times, point_times]))
    c = len(control_times)
    peaks, speeds = _peaks((s[:c], q[:c], qd[:c], qdd[:c]), v_max, a_max, tool, schedule)
    rates[2].check("timing")
    points = sampled_points(trajectory, start, joint_names, point_times, (q[c:], qd[c:], qdd[c:]))
    played = played_ratios(trajectory, points, v_max, a_max, schedule, rates[2])
    return _Measured(control_times, q[:c], qd[:c], qdd[:c], speeds, peaks, points, played)


def _timed(ss, waypoints, joint_names, v_max, a_max, share, tool, limited: bool, within: bool, schedule,
           rates: tuple, played_too: bool, last: bool,
           before: Solved | None = None) -> tuple[TimedTrajectory, PlayedRatios, Solved]:
    """toppra with the acceleration limits times `share` (n,), verified against the limits at the control rate
    and (`played_too`) on the controller's spline through the points; stretched uniformly until it fits, except
    that a played acceleration overshoot is left to the caller's next run (returned) unless this is the `last`.
    `rates`: (trajectory rate, control rate [Hz], budget); `before`: the previous run's solution (`solve`)."""
    t0 = time.perf_counter()
    budget = rates[2]
    budget.check("timing")
    solved = solve(ss, waypoints, v_max, a_max, share, tool if limited else None, within, schedule, budget, before)
    trajectory = solved.trajectory
    verify, retimings, played_stretch = 0.0, 0, 1.0
    for attempt in range(_MAX_RETIMINGS + 1):
        budget.check("timing")
        t1 = time.perf_counter()
        m = _measure(trajectory, waypoints[0], joint_names, v_max, a_max, tool if limited else None, schedule, rates)
        peaks, played, speeds = m.peaks, m.played, m.tool_speeds
        budget.check("timing")
        played_worst = (played.worst() if last else float(max(played.velocity.max(), 1.0))) if played_too else 1.0
        fits = peaks.worst() <= 1.0 + RATIO_TOLERANCE and played_worst <= 1.0 + RATIO_TOLERANCE
        if tool is not None and not limited and fits:
            # no tool limit: its speed is only reported, so it is measured once, on the final trajectory
            peaks, speeds = _with_tool_peaks(peaks, tool, m.positions, m.velocities)
        verify += time.perf_counter() - t1
        if fits:
            break
        # slow down uniformly by the measured overshoot: qd / c, qdd / c^2, tool speeds / c (the controller's spline
        # through the new points overshoots a little differently: a margin growing each round)
        factor = max(peaks.worst(), played_worst) * (1.0 + _RETIME_MARGIN) * (1.0 + _SPLINE_MARGIN * attempt)
        if peaks.worst() > 1.0 + RATIO_TOLERANCE:
            retimings += 1
        else:
            played_stretch *= factor
        trajectory = trajectory.stretched(factor)
    else:
        raise TrajectoryTimingError(f"the timed trajectory overshoots the limits after {_MAX_RETIMINGS} re-timings "
                                    f"(|qd|/v_max {peaks.velocity_ratio:.4f}, |qdd|/a_max "
                                    f"{peaks.acceleration_ratio:.4f}, tool speed/limit {peaks.tool_ratio:.4f}; on "
                                    f"the controller's spline {played.velocity.max():.4f}, "
                                    f"{played.acceleration.max():.4f})")
    # the stretch only rescales time: the grid intervals bind the same limits
    trajectory.verified = ControlSamples(m.control_times, m.velocities, m.accelerations, speeds, solved.binding,
                                         v_max, a_max, schedule, None if tool is None else tool.chain)
    report = TimingReport(trajectory.duration, peaks.velocity_ratio, peaks.acceleration_ratio, retimings=retimings,
                          compute_time=time.perf_counter() - t0 - verify, verify_time=verify,
                          peak_tool_speed=peaks.tool_speed, peak_tool_angular_speed=peaks.tool_angular_speed,
                          peak_tool_speed_ratio=peaks.tool_ratio,
                          limited_by=limited_by(trajectory, solved.binding, joint_names),
                          played_velocity_ratio=float(played.velocity.max()),
                          played_acceleration_ratio=float(played.acceleration.max()), played_stretch=played_stretch,
                          planned_acceleration_share=float(share.min()))
    return TimedTrajectory(m.points, report, trajectory), played, solved


# The trajectory a joint_trajectory_controller plays: the points robokin sends and the controller's spline through
# them (core/trajectory/outgoing_check.py), measured against the joint limits while timing.
#
# Why it differs from the timed trajectory: toppra's time-optimal profile steps its acceleration (from +a_max to
# -a_max at a switch, from a_max to 0 where a cruise begins), and no spline with continuous acceleration through exact
# samples of such a profile can stay within its bounds (the bang-bang profile is the only one that covers the
# distance in the time). The controller's quintic overshoots a step by up to ~0.37 times its size (a quarter more
# where toppra alternates between neighbouring grid intervals). `time_optimal` therefore measures the played spline and
# plans again with the acceleration limits lowered by the overshoot (`derated`): cruise phases keep their speeds,
# only the acceleration phases are longer (by the square root of the overshoot). A last residue is removed by the
# uniform stretch, as toppra's own overshoot between grid points is.

MAX_DERATINGS = 2        # toppra runs after the first with lowered acceleration limits (each costs a toppra run)
DERATE_MARGIN = 0.02     # the points fall elsewhere on the new profile: a little below the measured share


class PlayedRatios(NamedTuple):
    """Per joint, the peak |qd| / v_max and |qdd| / a_max on the controller's spline."""

    velocity: np.ndarray             # (n,)
    acceleration: np.ndarray         # (n,)

    def worst(self) -> float:
        """The uniform stretch that would bring both to 1 (velocities scale by 1/c, accelerations by 1/c^2)."""
        if len(self.velocity) == 0:
            return 1.0
        return float(max(self.velocity.max(), np.sqrt(self.acceleration.max()), 1.0))


def sampled_points(trajectory: ConstAccelTrajectory, start: np.ndarray, joint_names, times: np.ndarray,
                   states: tuple | None = None) -> JointTrajectoryArrays:
    """The trajectory's points at `times` [s], the first one exactly `start` (the arm's state); `states`: their
    (positions, velocities, accelerations) when the caller has evaluated them."""
    positions, velocities, accelerations = trajectory.states(times)[1:] if states is None else states
    positions[0] = start
    return JointTrajectoryArrays(tuple(joint_names), times, positions, velocities, accelerations)


def played_ratios(trajectory: ConstAccelTrajectory, points: JointTrajectoryArrays, v_max, a_max,
                  schedule: LimitLookup | None, budget: PlanningBudget = UNLIMITED) -> PlayedRatios:
    """Peaks of the controller's spline through `points` over the limits, each interval against the stricter
    limits of its two ends (the schedule's, when one is given); `budget` is checked between blocks of intervals."""
    n = points.positions.shape[1]
    velocity, acceleration = np.zeros(n), np.zeros(n)
    if schedule is not None:
        v_lim, a_lim, _ = schedule.limits_at(trajectory.path_parameter(points.times), v_max, a_max)    # (K, n)
    for first in range(0, len(points.times) - 1, CHECK_BLOCK):
        budget.check("timing")
        k = slice(first, first + CHECK_BLOCK + 1)                      # the block's points, its intervals between
        # the exact peaks core/trajectory/outgoing_check.py's final check measures too, without its array conversions
        v_peak, _, a_peak, _ = quintic_peaks(points.times[k], points.positions[k], points.velocities[k],
                                             points.accelerations[k])                            # (B, n)
        if schedule is None:        # one limit per joint: the largest peak over it is the largest ratio, exactly
            v_ratio, a_ratio = v_peak.max(axis=0) / v_max, a_peak.max(axis=0) / a_max
        else:
            v_ratio = (v_peak / np.minimum(v_lim[k][:-1], v_lim[k][1:])).max(axis=0)
            a_ratio = (a_peak / np.minimum(a_lim[k][:-1], a_lim[k][1:])).max(axis=0)
        velocity, acceleration = np.maximum(velocity, v_ratio), np.maximum(acceleration, a_ratio)
    return PlayedRatios(velocity, acceleration)


CHECK_BLOCK = 4096       # intervals between budget checks (~20 ms)


def derated(share: np.ndarray, excess: np.ndarray) -> np.ndarray:
    """The next shares (n,) of the acceleration limits to plan with, from the shares planned with and the played
    peaks over the limits (n,). The overshoot is a share of the planned profile's own steps, so it is divided out;
    of every joint, since a joint's steps follow from whichever joint binds (lowering only the joint that overshoots
    moves the steps elsewhere without shrinking them)."""
    worst = float(np.max(excess, initial=1.0))
    if worst <= 1.0:
        return share
    # in whole percent, rounded down: toppra's constraint objects for these limits are then built once and reused
    return np.floor(share / (worst * (1.0 + DERATE_MARGIN)) * 100.0) / 100.0
