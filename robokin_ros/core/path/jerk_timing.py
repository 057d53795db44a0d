"""Jerk-limited timing of a rest-to-rest section: toppra's time-optimal profile, averaged over a window
(core/trajectory/jerk_smoothing.py), measured as a controller plays it, and adjusted until it fits.

Each round measures, on the averaged profile:
- at the control rate: |qd| / v_max, |qdd| / a_max, the tool speeds (each sample against its own s's limits);
- on the controller's quintic through the points at the trajectory rate: velocity, acceleration and the exact
  jerk per point interval (`interval_jerk_peaks`) against the joint jerk limits; with Cartesian jerk limits on a
  tool-speed-limited section, the tool's jerk on that quintic (core/path/tool_jerk.py).
Remedies, the cheapest in cycle time first:
- a speed over its limit (the average of a speed dip that toppra follows along a limit lies above the dip): toppra
  runs again with its speed capped around that path position only (`SpeedCap`), so a cruise elsewhere keeps its
  programmed speed; a residue only the played spline shows is stretched away;
- an acceleration over the limit (the average is used at another path position than toppra's values): toppra
  again with the acceleration limits lowered by the excess (`timing.derated`);
- a played jerk over the limit, per interval: where the ramp term q' s''' dominates the profile's jerk there, a
  wider window (it falls as 1 / tau, and the window has to span enough point intervals for the quintic to follow
  the ramp; at most MAX_WIDENING per round); where the path's curvature terms q''' s'^3 + 3 q'' s' s'' do (no window
  changes them), lower speed caps there (by the excess^(1/3)); after MAX_STALLS rounds of caps that did not lower
  it, or when the window may not widen any more, a uniform stretch of the section (velocities / c,
  accelerations / c^2, jerks / c^3).
No derating for the played acceleration is needed first: the averaged profile has a continuous acceleration, which
the quintic through its points follows (toppra runs with the full limits: the jerk-limited plan is often shorter
than the acceleration-limited one, whose played overshoot costs a derating).

With no jerk limit (`jerk` None or all infinite) `time_section_profile` is exactly `time_optimal`.
"""
from __future__ import annotations

import time

import numpy as np

from robokin_ros.core.errors import TrajectoryTimingError
from robokin_ros.core.path.budget import UNLIMITED, PlanningBudget
from robokin_ros.core.path.result import TimingReport
from robokin_ros.core.path.timing import (
    RATIO_TOLERANCE,
    TimedTrajectory,
    _peaks,
    _tool_limited,
    _with_tool_peaks,
    derated,
    played_ratios,
    time_optimal,
)
from robokin_ros.core.path.toppra_constraints import LimitLookup, SpeedCap, ToolSpeedLimit, limit_vector
from robokin_ros.core.path.chain import ChainArrays
from robokin_ros.core.path.tool_jerk import played_tool_jerk
from robokin_ros.core.path.toppra_run import ControlSamples, limited_by, solve
from robokin_ros.core.trajectory.arrays import sample_times
from robokin_ros.core.trajectory.jerk_smoothing import (
    SmoothedProfile,
    interval_jerk_peaks,
    quintic_jerk_peaks,
    sampled,
    third_derivative,
)

MIN_WINDOW_INTERVALS = 2.0   # the first window spans this many point intervals at least (shorter ramps are not
#                              played: the quintic through 10 ms points cannot follow a 2 ms ramp)
MAX_ROUNDS = 16
WIDENINGS = 6                # windows tried before a jerk excess is stretched away instead
MAX_WIDENING = 2.0           # per round: a played excess inside an interval can come from the curvature too
MAX_STALLS = 2               # rounds of lower caps that did not lower the played jerk before a uniform stretch
MARGIN = 0.01                # above a measured excess: the points fall elsewhere on the new profile


def jerk_limits(jerk, n: int) -> np.ndarray | None:
    """The (n,) jerk limits when any is finite, else None (jerk limiting off)."""
    if jerk is None:
        return None
    jerk = np.asarray(jerk, float)
    return jerk if jerk.shape == (n,) and np.isfinite(jerk).any() else None


def first_window(a_max: np.ndarray, j_max: np.ndarray, rate_hz: float) -> float:
    """[s] the ramp time of the slowest joint from -a_max to a_max at its jerk limit (toppra's profile switches from
    braking to accelerating: a step of 2 a_max, averaged over tau, has the slope 2 a_max / tau), at least
    MIN_WINDOW_INTERVALS point intervals."""
    return float(max(np.max(2.0 * a_max / j_max), MIN_WINDOW_INTERVALS / rate_hz))


def time_section_profile(ss: np.ndarray, waypoints: np.ndarray, joint_names, v_max, a_max,
                         velocity_scaling: float = 1.0, acceleration_scaling: float = 1.0,
                         trajectory_rate_hz: float = 100.0, control_rate_hz: float = 500.0,
                         tool: ToolSpeedLimit | None = None, schedule: LimitLookup | None = None,
                         played: bool = True, budget: PlanningBudget = UNLIMITED, jerk=None,
                         tool_jerk: tuple = (0.0, 0.0)) -> TimedTrajectory:
    """`time_optimal`'s timing (same arguments) within joint jerk limits `jerk` (n,) [rad/s^3] (inf = none; not
    scaled by the scalings) on the spline a controller plays; None: `time_optimal` itself. `tool_jerk`: the tool's
    linear [m/s^3] and angular [rad/s^3] jerk limits (0 = none), in force with joint jerk limits on a section whose
    tool speed is limited (a one-tool chain; `core/path/tool_jerk.py` measures them)."""
    j_max = jerk_limits(jerk, len(joint_names))
    if j_max is None:
        return time_optimal(ss, waypoints, joint_names, v_max, a_max, velocity_scaling, acceleration_scaling,
                            trajectory_rate_hz, control_rate_hz, tool, schedule=schedule, played=played,
                            budget=budget)
    t0 = time.perf_counter()
    v_max = np.asarray(v_max, float) * velocity_scaling
    a_max = np.asarray(a_max, float) * acceleration_scaling
    if not (np.all(np.isfinite(v_max)) and np.all(np.isfinite(a_max)) and np.all(v_max > 0) and np.all(a_max > 0)):
        # time_optimal names the joints
        return time_optimal(ss, waypoints, joint_names, v_max, a_max, 1.0, 1.0, trajectory_rate_hz, control_rate_hz,
                            tool, schedule=schedule, played=played, budget=budget)
    if schedule is not None and tool is not None:
        tool = tool._replace(linear=0.0, angular=0.0)      # the schedule's tool limits replace the tool's own
    limited = _tool_limited(ss, tool, schedule)
    cartesian = limited and isinstance(tool.chain, ChainArrays) and max(tool_jerk) > 0.0
    share = np.ones(len(v_max))
    window, stretch, widenings, retimings = first_window(a_max, j_max, trajectory_rate_hz), 1.0, 0, 0
    solved, verify, caps, previous, stalls = None, 0.0, None, None, 0
    for _ in range(MAX_ROUNDS):
        budget.check("timing")
        extra = () if caps is None else (SpeedCap(caps[0], caps[1], len(v_max)),)
        solved = solve(ss, waypoints, v_max, a_max, share, tool if limited else None, True, schedule, budget,
                       None if extra else solved, extra)
        profile = SmoothedProfile.of(solved.trajectory.stretched(stretch), window)
        t1 = time.perf_counter()
        m = _measure(profile, waypoints[0], joint_names, v_max, a_max, j_max, tool if limited else None,
                     schedule, (trajectory_rate_hz, control_rate_hz, budget))
        verify += time.perf_counter() - t1
        peaks, played_v, played_a, jerk_ratio = m["peaks"], m["played"].velocity, m["played"].acceleration, m["jerk"]
        accel = max(peaks.acceleration_ratio, float(played_a.max()))
        speed = max(peaks.velocity_ratio, peaks.tool_ratio, float(played_v.max()))
        worst_jerk = float(jerk_ratio.max())
        tool_ratio = played_tool_jerk(m["points"], tool.chain).ratio(*tool_jerk) if cartesian else float("nan")
        if max(accel, speed, worst_jerk) <= 1.0 + RATIO_TOLERANCE and not tool_ratio > 1.0 + RATIO_TOLERANCE:
            break
        factor = 1.0
        over = _speed_ratios(m, v_max, tool if limited else None, schedule)
        if over.max() > 1.0 + RATIO_TOLERANCE:
            caps = _lowered_caps(caps, solved.trajectory, profile, m["control_times"], over)
        elif speed > 1.0 + RATIO_TOLERANCE:
            factor = speed * (1.0 + MARGIN)
        if accel > 1.0 + RATIO_TOLERANCE:
            share = derated(share, np.maximum(played_a, peaks.acceleration_ratio))
        if worst_jerk > 1.0 + RATIO_TOLERANCE:
            stalls = stalls + 1 if previous is not None and worst_jerk >= previous * (1.0 - MARGIN) else 0
            if stalls >= MAX_STALLS:
                # lower speeds where it overshot did not lower it: slow the whole section down (jerk / c^3)
                factor = max(factor, worst_jerk ** (1.0 / 3.0) * (1.0 + MARGIN))
            else:
                caps, window, widened, previous = _jerk_remedy(caps, window, widenings < WIDENINGS,
                                                               solved.trajectory, profile, m["points"], j_max)
                widenings += widened
        if tool_ratio > 1.0 + RATIO_TOLERANCE:
            # the tool's jerk: the ramp's share falls with a wider window, the rest with a slower section
            if widenings < WIDENINGS:
                window *= min(tool_ratio, MAX_WIDENING) * (1.0 + MARGIN)
                widenings += 1
            else:
                factor = max(factor, tool_ratio ** (1.0 / 3.0) * (1.0 + MARGIN))
        if factor > 1.0:
            previous = None
            stretch *= factor
            retimings += 1
    else:
        raise TrajectoryTimingError(f"no jerk-limited timing found in {MAX_ROUNDS} rounds (|qd|/v_max "
                                    f"{speed:.4f}, |qdd|/a_max {accel:.4f}, played jerk / limit {worst_jerk:.4f})")
    if tool is not None and not limited:
        peaks, speeds = _with_tool_peaks(peaks, tool, m["positions"], m["velocities"])
    else:
        speeds = m["tool_speeds"]
    profile.verified = ControlSamples(m["control_times"], m["velocities"], m["accelerations"], speeds,
                                      solved.binding, v_max, a_max, schedule, None if tool is None else tool.chain)
    report = TimingReport(profile.duration, peaks.velocity_ratio, peaks.acceleration_ratio, retimings=retimings,
                          compute_time=time.perf_counter() - t0 - verify, verify_time=verify,
                          peak_tool_speed=peaks.tool_speed, peak_tool_angular_speed=peaks.tool_angular_speed,
                          peak_tool_speed_ratio=peaks.tool_ratio,
                          limited_by=limited_by(solved.trajectory, solved.binding, joint_names),
                          played_velocity_ratio=float(played_v.max()), played_acceleration_ratio=float(played_a.max()),
                          played_stretch=stretch, planned_acceleration_share=float(share.min()),
                          played_jerk_ratio=float(jerk_ratio.max()), jerk_window=profile.window,
                          played_tool_jerk_ratio=tool_ratio)
    return TimedTrajectory(m["points"], report, profile)


def _jerk_remedy(caps, window: float, may_widen: bool, base, profile: SmoothedProfile, points, j_max):
    """Where the played jerk overshoots, per point interval: a wider window where the ramp term dominates the
    profile's jerk there (it falls as 1 / window), lower speed caps where the path's curvature terms do (~ s'^3).
    Returns (caps, window, 1 if widened else 0, the worst ratio when caps were lowered else None)."""
    ratio = (interval_jerk_peaks(points.times, points.positions, points.velocities, points.accelerations)
             / j_max).max(axis=1)                                                                  # (K - 1,)
    bad = np.flatnonzero(ratio > 1.0 + RATIO_TOLERANCE)
    ends = points.times[np.r_[bad, bad + 1]]
    ramp, curvature = _jerk_terms(profile, ends, j_max)
    ramp, curvature = np.maximum(ramp[:len(bad)], ramp[len(bad):]), np.maximum(curvature[:len(bad)],
                                                                               curvature[len(bad):])
    by_ramp = ramp >= curvature
    widened = 0
    if may_widen and by_ramp.any():
        window *= min(float(ratio[bad][by_ramp].max()), MAX_WIDENING) * (1.0 + MARGIN)
        widened = 1
    else:
        by_ramp[:] = False
    lowered = None
    if (~by_ramp).any():
        middle = 0.5 * (points.times[bad] + points.times[bad + 1])[~by_ramp]
        caps = _lowered_caps(caps, base, profile, middle, ratio[bad][~by_ramp] ** (1.0 / 3.0),
                             float(np.diff(points.times).max()))
        lowered = float(ratio[bad][~by_ramp].max())
    return caps, window, widened, lowered


def _jerk_terms(profile: SmoothedProfile, times: np.ndarray, j_max: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(K,) each: per control sample the largest |q' s'''| / j_max (the ramp term, set by the window) and
    |q''' s'^3 + 3 q'' s' s''| / j_max (the path's curvature at speed, set by the speed) over the joints."""
    s, sd, sdd, sddd = profile.path_states(times)
    d1, d2 = profile.path(s, 1), profile.path(s, 2)
    curvature = third_derivative(profile.path, s) * sd[:, None] ** 3 + 3.0 * d2 * (sd * sdd)[:, None]
    return (np.abs(d1 * sddd[:, None]) / j_max).max(axis=1), (np.abs(curvature) / j_max).max(axis=1)


def _speed_ratios(m: dict, v_max, tool, schedule) -> np.ndarray:
    """(K,) per control sample the largest joint velocity / limit and tool speed / limit."""
    s, qd, speeds = m["s"], m["velocities"], m["tool_speeds"]
    if schedule is not None:
        v_lim, _, tool_lim = schedule.limits_at(s, v_max, v_max)
    else:
        v_lim, tool_lim = v_max, None if tool is None else limit_vector(tool)
    ratio = (np.abs(qd) / v_lim).max(axis=1)
    if speeds is not None and tool_lim is not None:
        ratio = np.maximum(ratio, (speeds / tool_lim).max(axis=1))
    return ratio


def _lowered_caps(caps, base, profile: SmoothedProfile, times: np.ndarray, over: np.ndarray,
                  interval: float = 0.0) -> tuple:
    """Speed caps (s (N,), x = sd^2 caps (N,)) on toppra's grid, lowered around every control sample whose speed
    ratio `over` exceeds 1: by that ratio (and MARGIN), over the path the averaging window (and `interval` [s])
    spans there."""
    grid, sd = base.ss, base.sd
    limit = np.full(len(grid), np.inf) if caps is None else caps[1].copy()
    bad = np.flatnonzero(over > 1.0 + RATIO_TOLERANCE)
    s, speed = profile.path_parameter(times[bad]), profile.path_states(times[bad])[1]
    for k, s_k, sd_k in zip(bad, s, speed):
        span = sd_k * (2.0 * profile.window + interval) + 1e-9
        near = np.abs(grid - s_k) <= span
        near[max(np.searchsorted(grid, s_k) - 1, 0):np.searchsorted(grid, s_k) + 1] = True   # the grid points around
        limit[near] = np.minimum(limit[near], (sd[near] / (over[k] * (1.0 + MARGIN))) ** 2)
    return grid, limit


def _measure(profile: SmoothedProfile, start, joint_names, v_max, a_max, j_max, tool, schedule, rates) -> dict:
    """The control-rate samples and their peaks, the points at the trajectory rate and their played peaks."""
    duration = profile.duration
    control_times, point_times = sample_times(duration, rates[1]), sample_times(duration, rates[0])
    s, q, qd, qdd = profile.states(control_times)
    peaks, speeds = _peaks((s, q, qd, qdd), v_max, a_max, tool, schedule)
    rates[2].check("timing")
    points = sampled(profile, start, joint_names, point_times)
    played = played_ratios(profile, points, v_max, a_max, schedule, rates[2])
    jerk = quintic_jerk_peaks(points.times, points.positions, points.velocities, points.accelerations) / j_max
    return {"s": s, "control_times": control_times, "positions": q, "velocities": qd, "accelerations": qdd,
            "peaks": peaks, "tool_speeds": speeds, "points": points, "played": played, "jerk": jerk}
