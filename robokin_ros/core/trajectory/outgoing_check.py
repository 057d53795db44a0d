"""What a trajectory must pass before robokin sends it: a joint_trajectory_controller's acceptance rules and the
joint velocity and acceleration limits, measured on the curve the controller plays.

Two forms of the same check: `outgoing_rejection` for the planners' trajectories (any interpolation, numpy), and
`window_violation`, compiled, for the servo's windows (positions and velocities: cubic Hermite), run on every
window before it is published at up to 1 kHz (a few microseconds; the numpy form costs ~0.3 ms).

A JTC does not play the points; it plays its spline through them (`interpolation_method: splines`): a quintic per
interval when the points carry positions, velocities and accelerations (what robokin sends), a cubic Hermite when
they carry positions and velocities, straight lines when they carry positions only. Between two points within the
limits that spline can still exceed them, so `spline_peaks` measures the peaks of the spline itself: a quintic's at
its exact extrema (core/trajectory/quintic_peaks.py); a cubic's or a line's by sampling each interval's velocity and
acceleration polynomial and refining the largest sample of each joint by Newton steps on its derivative (exact for
their low degrees).

The planners plan for this spline (core/path/timing.py), so `LIMIT_TOLERANCE` only absorbs numerical noise;
anything above it is a planning bug, reported as such: path_ik_node then sends nothing and ends the goal with
INTERNAL_ERROR and the message, never a motion.

Jerk (issue 27) is checked only when a caller gives jerk limits (`j_max`; None = no jerk rule, the default, every
result as before): core/trajectory/jerk_check.py measures it on the same spline (`interval_polynomials`, in
core/trajectory/spline_polynomials.py, which both use).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numba import njit

from robokin_ros.core.trajectory.controller_rules import (
    FLOAT_EPSILON,
    JtcSwitches,
    Rejection,
    TrajectoryFacts,
    field_matrix,
    jtc_rejection,
)
from robokin_ros.core.trajectory.jerk_check import (
    CONTROLLER_PERIOD,
    JERK_RULE,
    jerk_ratios,
    played_jerk_peaks,
    window_jerk_violation,
)
from robokin_ros.core.trajectory.quintic_peaks import quintic_peaks
from robokin_ros.core.trajectory.spline_polynomials import interval_polynomials

# relative excess over a limit taken as numerical noise: the planners keep the played spline within 1e-3 of the
# limits (core/path/timing.py, `played_ratios`), and message times are whole nanoseconds
LIMIT_TOLERANCE = 2e-3
_GRID = 9                # samples per interval (ends included) before the Newton refinement
_NEWTON_STEPS = 4
LIMIT_RULE = "joint limits"
# relative excess over a jerk limit taken as noise: as for velocity and acceleration, what robokin sends is planned
# for the played spline's jerk, so more is a bug; the noise a third derivative adds (message times rounded to whole
# ns: ~1.5e-6 relative on a 2 ms interval) stays far below it
JERK_TOLERANCE = LIMIT_TOLERANCE


class SplinePeaks(NamedTuple):
    """Largest |velocity| and |acceleration| of each joint on the controller's spline, and when [s]."""

    velocity: np.ndarray             # (m,) [rad/s | m/s]
    acceleration: np.ndarray         # (m,) [rad/s^2 | m/s^2]; inf where the spline has velocity steps
    velocity_time: np.ndarray        # (m,) [s]
    acceleration_time: np.ndarray    # (m,) [s]
    interpolation: str               # "quintic", "cubic", "linear" or "none" (one point)


def _derivative(c: np.ndarray) -> np.ndarray:
    """d/ds of polynomials (degree + 1, ...) -> (degree, ...)."""
    powers = np.arange(1, len(c)).reshape(-1, *([1] * (c.ndim - 1)))
    return c[1:] * powers if len(c) > 1 else np.zeros_like(c)


def _value(c: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Polynomials (degree + 1, ...) at s (broadcast against ...), Horner."""
    out = np.zeros(np.broadcast_shapes(c.shape[1:], np.shape(s)))
    for coefficient in c[::-1]:
        out = out * s + coefficient
    return out


def _peak(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """max |f| over s in [0, 1] of each polynomial (degree + 1, k, m), and its s: the largest of `_GRID` samples,
    refined by Newton steps on f' = 0 (kept only where they find a larger value)."""
    grid = np.linspace(0.0, 1.0, _GRID)[:, None, None]                                # (G, 1, 1)
    values = np.abs(_value(c[:, None], grid))                                          # (G, k, m)
    best = values.argmax(axis=0)                                                       # (k, m)
    s = grid[best, 0, 0]
    peak = np.take_along_axis(values, best[None], axis=0)[0]
    d1, d2 = _derivative(c), _derivative(_derivative(c))
    x = s.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(_NEWTON_STEPS):
            step = _value(d1, x) / _value(d2, x)
            x = np.clip(np.where(np.isfinite(step), x - step, x), 0.0, 1.0)
    refined = np.abs(_value(c, x))
    better = refined > peak
    return np.where(better, refined, peak), np.where(better, x, s)


class IntervalPeaks(NamedTuple):
    """Largest |velocity| and |acceleration| of each joint on each interval of the controller's spline."""

    velocity: np.ndarray             # (k - 1, m) [rad/s | m/s]
    acceleration: np.ndarray         # (k - 1, m) [rad/s^2 | m/s^2]; inf where the spline has velocity steps
    velocity_at: np.ndarray          # (k - 1, m) where in the interval, as a share in [0, 1]
    acceleration_at: np.ndarray      # (k - 1, m)
    interpolation: str               # "quintic", "cubic" or "linear"


def interval_peaks(times, positions, velocities=None, accelerations=None) -> IntervalPeaks:
    """Peaks on every interval of the spline a JTC plays through k >= 2 points (see the module docstring);
    velocities / accelerations None = the points do not carry them."""
    t = np.asarray(times, float)
    if velocities is not None and accelerations is not None:
        # exact and compiled (core/trajectory/quintic_peaks.py): the planners measure every section they time with it
        p, v, a = (np.ascontiguousarray(x, dtype=float) for x in (positions, velocities, accelerations))
        v_peak, v_s, a_peak, a_s = quintic_peaks(np.ascontiguousarray(t), p, v, a)
        return IntervalPeaks(v_peak, a_peak, v_s, a_s, "quintic")
    c, interpolation = interval_polynomials(t, positions, velocities, accelerations)
    h = np.diff(t)[:, None]                                                            # (k - 1, 1)
    velocity = _derivative(c) / h                                                      # d/dt = d/ds / h
    v_peak, v_s = _peak(velocity)                                                      # (k - 1, m)
    if interpolation == "linear":
        m = velocity.shape[2]
        ends = np.vstack([np.zeros(m), velocity[0], np.zeros(m)])                      # at rest before and after
        stepped = np.abs(np.diff(ends, axis=0)) > 0                                    # (k, m) at each point
        a_peak = np.where(stepped[:-1] | stepped[1:], np.inf, 0.0)
        return IntervalPeaks(v_peak, a_peak, v_s, np.zeros_like(v_s), interpolation)
    a_peak, a_s = _peak(_derivative(velocity) / h)
    return IntervalPeaks(v_peak, a_peak, v_s, a_s, interpolation)


def spline_peaks(times, positions, velocities=None, accelerations=None) -> SplinePeaks:
    """Peak joint velocities and accelerations of the spline a JTC plays through these points, per joint."""
    t = np.asarray(times, float)
    m = np.shape(positions)[1]
    if len(t) < 2:
        zeros = np.zeros(m)
        first = [zeros if values is None else np.abs(np.asarray(values, float)[0])
                 for values in (velocities, accelerations)]
        return SplinePeaks(first[0], first[1], zeros, zeros.copy(), "none")
    peaks = interval_peaks(t, positions, velocities, accelerations)
    h = np.diff(t)
    v_k, a_k = peaks.velocity.argmax(axis=0), peaks.acceleration.argmax(axis=0)        # (m,)
    cols = np.arange(m)
    return SplinePeaks(peaks.velocity[v_k, cols], peaks.acceleration[a_k, cols],
                       t[v_k] + peaks.velocity_at[v_k, cols] * h[v_k],
                       t[a_k] + peaks.acceleration_at[a_k, cols] * h[a_k], peaks.interpolation)


def limit_rejection(trajectory: TrajectoryFacts, controller_joints: Sequence[str], v_max, a_max,
                    tolerance: float = LIMIT_TOLERANCE, j_max=None) -> Rejection | None:
    """The first joint whose velocity or acceleration on the controller's spline exceeds its limit by more than
    `tolerance` (relative), then (with `j_max`) the first whose jerk exceeds its limit by more than JERK_TOLERANCE;
    None if every joint stays within; assumes the points passed `jtc_rejection`.

    Args:
        controller_joints: joint names in the order of `v_max`, `a_max` (n,) [rad/s | m/s], [rad/s^2 | m/s^2].
        j_max: None (no jerk rule) or (n,) [rad/s^3 | m/s^3] in the same order, inf = no limit for that joint.
    """
    names = list(trajectory.joint_names)
    m = len(names)
    positions = field_matrix(trajectory.points, "positions", m)
    if positions is None:
        return Rejection(LIMIT_RULE, "robokin sends positions at every point; a point lacks them", False)
    times = np.array([point.time_from_start for point in trajectory.points], dtype=float)
    peaks = spline_peaks(times, positions, field_matrix(trajectory.points, "velocities", m),
                         field_matrix(trajectory.points, "accelerations", m))
    index = [list(controller_joints).index(name) for name in names]
    v_lim, a_lim = np.asarray(v_max, float)[index], np.asarray(a_max, float)[index]
    for what, peak, limit, when, unit in (("velocity", peaks.velocity, v_lim, peaks.velocity_time, "/s"),
                                          ("acceleration", peaks.acceleration, a_lim, peaks.acceleration_time,
                                           "/s^2")):
        ratio = peak / limit                                                           # (m,)
        j = int(np.argmax(ratio))
        if not ratio[j] <= 1.0 + tolerance:
            return Rejection(LIMIT_RULE, f"joint '{names[j]}' reaches {what} {peak[j]:.6g} rad{unit} at t = "
                                         f"{when[j]:.3f} s on the {peaks.interpolation} spline a "
                                         f"joint_trajectory_controller plays through the points, {ratio[j]:.4g} x its "
                                         f"limit {limit[j]:.6g} rad{unit} (tolerance {tolerance:g})", False)
    if j_max is None:
        return None
    return _jerk_rejection(times, positions, field_matrix(trajectory.points, "velocities", m),
                           field_matrix(trajectory.points, "accelerations", m), names,
                           np.asarray(j_max, float)[index])


def _jerk_rejection(times, positions, velocities, accelerations, names, j_lim) -> Rejection | None:
    """The joint whose jerk on the controller's spline (core/trajectory/jerk_check.py) exceeds its limit by the
    most beyond JERK_TOLERANCE, as a Rejection; None if none does."""
    peaks = played_jerk_peaks(times, positions, velocities, accelerations)
    ratio = jerk_ratios(peaks, j_lim)
    j = int(np.argmax(ratio))
    if ratio[j] <= 1.0 + JERK_TOLERANCE:
        return None
    return Rejection(JERK_RULE,
                     f"joint '{names[j]}' reaches jerk {peaks.jerk[j]:.6g} rad/s^3 at t = {peaks.time[j]:.3f} s on "
                     f"the {peaks.interpolation} spline a joint_trajectory_controller plays through the points "
                     f"(acceleration steps over a {CONTROLLER_PERIOD * 1e3:g} ms controller period), "
                     f"{ratio[j]:.4g} x its limit {j_lim[j]:.6g} rad/s^3 (tolerance {JERK_TOLERANCE:g})", False)


def outgoing_rejection(trajectory: TrajectoryFacts, controller_joints: Sequence[str], now: int, v_max, a_max,
                       switches: JtcSwitches = JtcSwitches(), j_max=None) -> Rejection | None:
    """Why a trajectory must not be sent: a default JTC's rule it breaks (`jtc_rejection`), else a joint limit it
    exceeds (`limit_rejection`, jerk too when `j_max` is given); None when it may be sent. `now` [ns] is the
    controller clock's time."""
    return (jtc_rejection(trajectory, controller_joints, now, switches)
            or limit_rejection(trajectory, controller_joints, v_max, a_max, j_max=j_max))


# Outcome codes of `window_violation`: the first rule a servo window breaks (0: none).
WINDOW_OK = 0
WINDOW_NOT_FINITE = 1           # a time, position or velocity is NaN or inf (robokin's own check)
WINDOW_TIMES = 2                # times not strictly increasing in whole nanoseconds, or before 0 (JTC)
WINDOW_END_VELOCITY = 3         # the last point moves (JTC, allow_nonzero_velocity_at_trajectory_end: false)
WINDOW_POSITION = 4             # a point, or the spline between two, outside the position limits (robokin's own)
WINDOW_VELOCITY = 5             # the spline exceeds a joint velocity limit
WINDOW_ACCELERATION = 6         # the spline exceeds a joint acceleration limit
WINDOW_JERK = 7                 # the spline exceeds a joint jerk limit (jerk_check.window_jerk_violation, when checked)
# [rad | m] the spline between two points may pass a position limit by this much (rounding of the positions)
POSITION_TOLERANCE = 1e-9
# An interval whose |p0| + |p1| + |m0| + |m1| is at most this has its position at a root of the velocity computed
# within ~120 eps of it (< 3e-10, under POSITION_TOLERANCE): then the Bezier hull inside the limits proves the
# root-solving would find nothing (`_segment_violation`)
HULL_MAGNITUDE = 1e4


@njit(cache=True)
def _cubic_position(p0, m0, dp, m1, s):
    """A cubic Hermite segment's position at s in [0, 1] (m0, m1: the end velocities times the interval)."""
    return p0 + s * (m0 + s * ((3.0 * dp - 2.0 * m0 - m1) + s * (m0 + m1 - 2.0 * dp)))


@njit(cache=True)
def _segment_violation(h, p0, p1, v0, v1, lower, upper, vmax, amax, tolerance):
    """(code, value, limit) for one joint on one interval of the cubic Hermite a JTC plays through (p0, v0) and
    (p1, v1), h [s] apart: its acceleration is linear in time, so its peaks are at the ends; the velocity's
    extremum is where the acceleration crosses zero, the position's where the velocity does."""
    dp, m0, m1 = p1 - p0, v0 * h, v1 * h
    a0 = (6.0 * dp - 4.0 * m0 - 2.0 * m1) / (h * h)
    a1 = (-6.0 * dp + 2.0 * m0 + 4.0 * m1) / (h * h)
    a = max(abs(a0), abs(a1))
    if not a <= amax * (1.0 + tolerance):
        return WINDOW_ACCELERATION, a, amax
    peak = max(abs(v0), abs(v1))
    if a0 * a1 < 0.0:
        s = a0 / (a0 - a1)
        peak = max(peak, abs(v0 + 0.5 * a0 * h * s))
    if not peak <= vmax * (1.0 + tolerance):
        return WINDOW_VELOCITY, peak, vmax
    # The cubic lies within its Bezier control points (p0, p0 + m0 / 3, p1 - m1 / 3, p1): with them inside the
    # limits, a turn's position (the hull's exactly, computed within POSITION_TOLERANCE of it: HULL_MAGNITUDE)
    # cannot pass a limit by the tolerance, so the roots below would find nothing (the usual case: ~1 us a window)
    if abs(p0) + abs(p1) + abs(m0) + abs(m1) <= HULL_MAGNITUDE:
        b0, b1 = p0 + m0 / 3.0, p1 - m1 / 3.0
        if lower <= min(p0, p1, b0, b1) and max(p0, p1, b0, b1) <= upper:
            return WINDOW_OK, 0.0, 0.0
    # velocity zero inside the interval, v0 + h (a0 s + (a1 - a0) s^2 / 2) = 0: where the position turns
    c2, c1, c0 = 0.5 * h * (a1 - a0), h * a0, v0
    first = second = -1.0
    if c2 != 0.0:
        disc = c1 * c1 - 4.0 * c2 * c0
        if disc >= 0.0:
            root = math.sqrt(disc)
            first, second = (-c1 - root) / (2.0 * c2), (-c1 + root) / (2.0 * c2)
    elif c1 != 0.0:
        first = -c0 / c1
    for s in (first, second):
        if 0.0 < s < 1.0:
            p = _cubic_position(p0, m0, dp, m1, s)
            if p > upper + POSITION_TOLERANCE:
                return WINDOW_POSITION, p, upper
            if p < lower - POSITION_TOLERANCE:
                return WINDOW_POSITION, p, lower
    return WINDOW_OK, 0.0, 0.0


@njit(cache=True)
def window_violation(times, positions, velocities, lower, upper, vmax, amax, tolerance):
    """The first rule a servo window (k points: times (k,) [s] from its stamp, positions and velocities (k, n))
    breaks, as (code, point, joint, value, limit): a WINDOW_* code (WINDOW_OK = 0 when it may be sent), the point
    (or the interval's first point), the joint, the offending value and the limit it breaks. lower, upper, vmax,
    amax: (n,) the limits; `tolerance`: relative excess of velocity and acceleration taken as rounding.

    The same rules as `outgoing_rejection` for what a servo window can break (its joint names and sizes are
    fixed, and its stamp is its tick, so it never ends in the past), on the cubic Hermite JTC plays through
    points with positions and velocities."""
    k, n = positions.shape
    for i in range(k):
        if not math.isfinite(times[i]):
            return WINDOW_NOT_FINITE, i, -1, times[i], 0.0
        for j in range(n):
            if not (math.isfinite(positions[i, j]) and math.isfinite(velocities[i, j])):
                return WINDOW_NOT_FINITE, i, j, positions[i, j] + velocities[i, j], 0.0
    previous = -1
    for i in range(k):
        ns = np.int64(np.rint(times[i] * 1e9))          # as a message's Duration carries it
        if ns <= previous:
            return WINDOW_TIMES, i, -1, times[i], times[i - 1] if i > 0 else 0.0
        previous = ns
    for j in range(n):
        if abs(velocities[k - 1, j]) > FLOAT_EPSILON:
            return WINDOW_END_VELOCITY, k - 1, j, velocities[k - 1, j], FLOAT_EPSILON
    for i in range(k):
        for j in range(n):
            if positions[i, j] > upper[j]:
                return WINDOW_POSITION, i, j, positions[i, j], upper[j]
            if positions[i, j] < lower[j]:
                return WINDOW_POSITION, i, j, positions[i, j], lower[j]
    for i in range(k - 1):
        h = times[i + 1] - times[i]
        for j in range(n):
            code, value, limit = _segment_violation(h, positions[i, j], positions[i + 1, j], velocities[i, j],
                                                    velocities[i + 1, j], lower[j], upper[j], vmax[j], amax[j],
                                                    tolerance)
            if code != WINDOW_OK:
                return code, i, j, value, limit
    return WINDOW_OK, -1, -1, 0.0, 0.0


def window_rejection(times, positions, velocities, joint_names: Sequence[str], lower, upper, v_max, a_max,
                     tolerance: float = LIMIT_TOLERANCE, j_max=None) -> Rejection | None:
    """`window_violation` in words: the Rejection a servo window gets (rule and message as `outgoing_rejection`'s),
    or None when it may be sent. Arrays as `window_violation`'s; `joint_names` (n,) name the columns; `j_max`
    None (no jerk rule) or (n,) jerk limits [rad/s^3], inf = none, checked with JERK_TOLERANCE after the rest
    (`window_jerk_violation`)."""
    code, i, j, value, limit = window_violation(times, positions, velocities, lower, upper, v_max, a_max, tolerance)
    if code == WINDOW_OK:
        if j_max is None:
            return None
        return _window_jerk_rejection(times, positions, velocities, joint_names, np.asarray(j_max, float))
    name = joint_names[j] if j >= 0 else ""
    if code == WINDOW_NOT_FINITE:
        which = f" for joint '{name}'" if name else " (its time)"
        return Rejection("finite", f"window point {i} has a non-finite value{which}", False)
    if code == WINDOW_TIMES:
        return Rejection("time_from_start", f"Time between points {i - 1} and {i} is not strictly increasing, "
                                            f"it is {limit:f} and {value:f} respectively", True)
    if code == WINDOW_END_VELOCITY:
        return Rejection("allow_nonzero_velocity_at_trajectory_end",
                         f"Velocity of last trajectory point of joint {name} is not zero: {value:.15f}", True)
    if code == WINDOW_POSITION:
        return Rejection("position limits", f"window puts joint '{name}' at {value:.6f} at or after point {i}, "
                                            f"beyond its limit {limit:.6f}", False)
    what, unit = ("velocity", "/s") if code == WINDOW_VELOCITY else ("acceleration", "/s^2")
    return Rejection(LIMIT_RULE, f"joint '{name}' reaches {what} {value:.6g} rad{unit} between points {i} and "
                                 f"{i + 1} ({times[i]:.4f}-{times[i + 1]:.4f} s) on the cubic spline a "
                                 f"joint_trajectory_controller plays through the window, {value / limit:.4g} x its "
                                 f"limit {limit:.6g} rad{unit} (tolerance {tolerance:g})", False)


def _window_jerk_rejection(times, positions, velocities, joint_names, j_max) -> Rejection | None:
    """The compiled jerk check of a servo window, and its sentence when it fails."""
    args = [np.ascontiguousarray(x, dtype=float) for x in (times, positions, velocities, j_max)]
    if window_jerk_violation(*args, JERK_TOLERANCE, CONTROLLER_PERIOD) == WINDOW_OK:
        return None
    peaks = played_jerk_peaks(args[0], args[1], args[2], from_rest=False)     # as window_jerk_violation judges
    ratio = jerk_ratios(peaks, j_max)
    j = int(np.argmax(ratio))
    return Rejection(JERK_RULE,
                     f"joint '{joint_names[j]}' reaches jerk {peaks.jerk[j]:.6g} rad/s^3 at t = {peaks.time[j]:.4f} s "
                     f"on the cubic spline a joint_trajectory_controller plays through the window (acceleration "
                     f"steps over a {CONTROLLER_PERIOD * 1e3:g} ms controller period), {ratio[j]:.4g} x "
                     f"its limit {j_max[j]:.6g} rad/s^3 (tolerance {JERK_TOLERANCE:g})", False)
