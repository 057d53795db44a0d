"""The look-ahead window the servo publishes each tick: times, then positions and velocities clamped to limits.

numba kernels on plain float64 arrays (`cache=True`), called once per tick by `servo.Servo`.
"""
from __future__ import annotations

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
def window_arrays(q, v, lower, upper, times, positions, velocities):
    """Fill the look-ahead (k, n): q + v t clamped to the limits (q is the state at times[0] = 0).

    A joint's velocity is 0 at the points where it is clamped and at the point just before the first of
    them, so a controller's cubic interpolation between points cannot overshoot the limit."""
    for j in range(q.shape[0]):
        clamped_from = times.shape[0]
        for i in range(times.shape[0]):
            p = q[j] + v[j] * times[i]
            if p > upper[j] or p < lower[j]:
                positions[i, j], velocities[i, j] = min(max(p, lower[j]), upper[j]), 0.0
                if clamped_from == times.shape[0]:
                    clamped_from = i
            else:
                positions[i, j], velocities[i, j] = p, v[j]
        if 1 < clamped_from < times.shape[0]:
            velocities[clamped_from - 1, j] = 0.0


def window_times(dt: float, latency: float) -> np.ndarray:
    """Look-ahead times [s]: 0 (the state now), dt (the next command), then at most LATER_POINTS more up to
    `latency` [s]."""
    step = max(dt, latency / LATER_POINTS)
    later = np.arange(1, int(np.ceil(max(latency - dt, 0.0) / step - 1e-9)) + 1) * step + dt
    return np.concatenate(([0.0, dt], later, [] if len(later) else [2 * dt]))


@njit(cache=True)
def advance_arrays(q, v, dt, lower, upper, times, q_next, q_out, v_out, positions, velocities):
    """One tracking tick's arrays in one call: q_next = q + v dt, q_out = q_next clamped, v_out = v,
    and the look-ahead of `window_arrays` from the state now, q (so its point at dt is q_out)."""
    for j in range(q.shape[0]):
        p = q[j] + v[j] * dt
        q_next[j] = p
        q_out[j] = min(max(p, lower[j]), upper[j])
        v_out[j] = v[j]
    window_arrays(clamped(q, lower, upper), v, lower, upper, times, positions, velocities)
