"""The look-ahead window the servo publishes each tick: times, then positions and velocities clamped to limits.

The window extrapolates the commanded velocity up to the expected latency, then ends with a deceleration tail:
a point where every joint is at rest, held by one more point at the same positions until `max_delivery_delay`
after the window's stamp. A default controller refuses a trajectory that "ends in the past"; the hold point
makes a window that reaches it late (a busy CPU, a stalled process) still valid, and one it follows at the time
it was meant for, since the stamp is the tick's time. A trajectory controller with its default settings
(`allow_nonzero_velocity_at_trajectory_end: false`) rejects any trajectory whose last point moves; and since each
new window replaces the previous one within a tick, only the window's first milliseconds are ever executed, so
the tail costs no speed. If the messages stop, the arm follows the tail and stops within its acceleration limits.

numba kernels on plain float64 arrays (`cache=True`), called once per tick by `servo.Servo`.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

# Points after the next command: beyond dt the window only extrapolates the velocity, so a coarse grid
# describes the same motion and keeps the message small at 1 kHz.
LATER_POINTS = 8


@njit(cache=True)
def clamped(q, lower, upper):
    """q (n,) clamped into [lower, upper], as a new array."""
    out = np.empty_like(q)
    for j in range(q.shape[0]):
        out[j] = min(max(q[j], lower[j]), upper[j])
    return out


@njit(cache=True)
def stop_time(v, amax, dt):
    """Duration [s] of the deceleration tail: the time the slowest-to-stop joint needs at its acceleration limit,
    rounded up to whole periods `dt` [s] (at least one), so that every joint decelerates uniformly at no more
    than its limit and the tail's time repeats from tick to tick in steady motion."""
    longest = 0.0
    for j in range(v.shape[0]):
        longest = max(longest, abs(v[j]) / amax[j])     # amax = inf gives 0: that joint can stop at once
    return max(1.0, math.ceil(longest / dt - 1e-9)) * dt


@njit(cache=True)
def window_arrays(q, v, lower, upper, amax, dt, grid, times, positions, velocities):
    """Fill the look-ahead: (k + 1) times, and (k + 1, n) positions and velocities; True if a joint was clamped
    at a limit anywhere in it.

    Points 0..k-1 are at the `grid` times (see `window_times`): q + v t clamped to the limits (q is the state at
    time 0). Point k, the tail, comes `stop_time` T later: each joint at p + v T / 2 with zero velocity, where
    (p, v) is point k-1. Constant deceleration from v to 0 over T covers exactly v T / 2, and a cubic Hermite
    through (p, v) and (p + v T / 2, 0) is that very parabola, so a controller interpolating cubically
    decelerates uniformly, within the acceleration limits.

    A joint's velocity is 0 at the points where it is clamped and at the point just before the first of
    them, so a controller's cubic interpolation between points cannot overshoot the limit (Hermite segments
    with a zero end velocity and a start velocity no steeper than the chord are monotone)."""
    k = grid.shape[0]
    tail = stop_time(v, amax, dt)
    for i in range(k):
        times[i] = grid[i]
    times[k] = grid[k - 1] + tail
    any_clamped = False
    for j in range(q.shape[0]):
        clamped_from = k + 1
        for i in range(k):
            p = q[j] + v[j] * grid[i]
            if p > upper[j] or p < lower[j]:
                positions[i, j], velocities[i, j] = min(max(p, lower[j]), upper[j]), 0.0
                if clamped_from == k + 1:
                    clamped_from = i
            else:
                positions[i, j], velocities[i, j] = p, v[j]
        p = positions[k - 1, j] + 0.5 * velocities[k - 1, j] * tail
        if (p > upper[j] or p < lower[j]) and clamped_from == k + 1:
            clamped_from = k
        positions[k, j], velocities[k, j] = min(max(p, lower[j]), upper[j]), 0.0
        if 1 < clamped_from <= k:
            velocities[clamped_from - 1, j] = 0.0
        any_clamped = any_clamped or clamped_from <= k
    return any_clamped


@njit(cache=True)
def hold_point(times, positions, velocities, hold_until):
    """Fill the window's last row, the hold: the row before it (the tail, at rest) repeated at `hold_until` [s],
    or just after the tail when the tail ends later."""
    k = times.shape[0] - 1
    times[k] = max(hold_until, times[k - 1] + 1e-3)
    for j in range(positions.shape[1]):
        positions[k, j], velocities[k, j] = positions[k - 1, j], 0.0


def window_times(dt: float, latency: float) -> np.ndarray:
    """The window's grid [s] before its tail: 0 (the state now), dt (the next command), then at most LATER_POINTS
    more up to `latency` [s]."""
    step = max(dt, latency / LATER_POINTS)
    later = np.arange(1, int(np.ceil(max(latency - dt, 0.0) / step - 1e-9)) + 1) * step + dt
    return np.concatenate(([0.0, dt], later, [] if len(later) else [2 * dt]))


def sparse_window_times(grid: np.ndarray) -> np.ndarray:
    """The grid's first two and last times: enough for a window in which no joint meets a limit.

    Between dt and the last grid time such a window is q + v t on every joint, and a cubic through two points of a
    straight line with the line's slope at both ends is that line: the intermediate points add nothing a
    controller would follow differently. A third fewer bytes to build, send and parse, every tick. Where a joint
    is clamped the intermediate points do matter (they place the stop at the limit), so the full grid is used.
    """
    return grid if len(grid) <= 3 else grid[[0, 1, len(grid) - 1]]


@njit(cache=True)
def advance_arrays(q, v, dt, lower, upper, amax, grid, q_next, q_out, v_out, times, positions, velocities):
    """One tracking tick's arrays in one call: q_next = q + v dt, q_out = q_next clamped, v_out = v,
    and the look-ahead of `window_arrays` from the state now, q (so its point at dt is q_out); returns whether
    the look-ahead clamped a joint (as `window_arrays`)."""
    for j in range(q.shape[0]):
        p = q[j] + v[j] * dt
        q_next[j] = p
        q_out[j] = min(max(p, lower[j]), upper[j])
        v_out[j] = v[j]
    return window_arrays(clamped(q, lower, upper), v, lower, upper, amax, dt, grid, times, positions, velocities)


@njit(cache=True)
def sample_window(times, positions, velocities, t, q_out, v_out):
    """Where a controller following the window is `t` [s] after its time 0: positions into q_out (n,), velocities
    into v_out (n,), by cubic Hermite interpolation between points (JointTrajectoryController's spline for
    points with positions and velocities); before 0 the first point, after the last point that point at rest."""
    k = times.shape[0]
    if t <= times[0]:
        for j in range(q_out.shape[0]):
            q_out[j], v_out[j] = positions[0, j], velocities[0, j]
        return
    if t >= times[k - 1]:
        for j in range(q_out.shape[0]):
            q_out[j], v_out[j] = positions[k - 1, j], velocities[k - 1, j]
        return
    i = 0
    while times[i + 1] <= t:
        i += 1
    h = times[i + 1] - times[i]
    s = (t - times[i]) / h
    s2, s3 = s * s, s * s * s
    for j in range(q_out.shape[0]):
        p0, p1 = positions[i, j], positions[i + 1, j]
        m0, m1 = velocities[i, j] * h, velocities[i + 1, j] * h
        q_out[j] = (2 * s3 - 3 * s2 + 1) * p0 + (s3 - 2 * s2 + s) * m0 + (-2 * s3 + 3 * s2) * p1 + (s3 - s2) * m1
        v_out[j] = ((6 * s2 - 6 * s) * p0 + (3 * s2 - 4 * s + 1) * m0 + (-6 * s2 + 6 * s) * p1
                    + (3 * s2 - 2 * s) * m1) / h
