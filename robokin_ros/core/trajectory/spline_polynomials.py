"""The polynomials of the spline a joint_trajectory_controller plays through trajectory points (linear, cubic
Hermite or quintic, by what the points carry): the base of the outgoing limit check (outgoing_check.py) and the jerk
check (jerk_check.py)."""
from __future__ import annotations

import numpy as np


def interval_polynomials(times, positions, velocities=None, accelerations=None) -> tuple[np.ndarray, str]:
    """Coefficients (degree + 1, k - 1, m) of each interval's position in the unit parameter s in [0, 1], lowest
    power first, as a JTC interpolates the points; and the interpolation's name."""
    t, p = np.asarray(times, float), np.asarray(positions, float)                     # (k,), (k, m)
    h = np.diff(t)[:, None]                                                           # (k - 1, 1)
    p0, dp = p[:-1], np.diff(p, axis=0)
    if velocities is None:
        return np.stack([p0, dp]), "linear"
    v = np.asarray(velocities, float)
    v0, v1 = v[:-1] * h, v[1:] * h
    if accelerations is None:
        return np.stack([p0, v0, 3 * dp - 2 * v0 - v1, -2 * dp + v0 + v1]), "cubic"
    a = np.asarray(accelerations, float)
    a0, a1 = a[:-1] * h * h, a[1:] * h * h
    c3 = 10 * dp - 6 * v0 - 4 * v1 - 1.5 * a0 + 0.5 * a1
    c4 = -15 * dp + 8 * v0 + 7 * v1 + 1.5 * a0 - a1
    c5 = 6 * dp - 3 * (v0 + v1) - 0.5 * a0 + 0.5 * a1
    return np.stack([p0, v0, 0.5 * a0, c3, c4, c5]), "quintic"
