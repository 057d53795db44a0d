"""Compiled, exact peaks of the quintic a joint_trajectory_controller plays between two points
(core/trajectory/outgoing_check.py).

Why a kernel: the planners measure the controller's spline of every rest-to-rest section while timing it
(core/path/timing.py), often a handful of intervals; the numpy form spends ~0.3 ms per call in array overheads,
which a path of hundreds of tiny sections paid twice per section (issue 24, item 9). This loop costs microseconds.

Why exact: on an interval the acceleration is a cubic in the unit parameter s, so its extrema are at the ends or at
the roots of the jerk (a quadratic, closed form); the velocity's extrema are at the ends or at the roots of the
acceleration, which is monotone between the jerk's roots, so each root is bracketed and found by safeguarded
Newton steps to rounding. The velocity at a root found to within ds is off by ~|jerk| ds^2 / 2: nothing. The result is
the largest of values the polynomial takes in [0, 1], never more than its maximum, and never less either (the
sampled-and-refined numpy form it replaces could miss a peak between its samples).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

_MAX_STEPS = 100          # safeguarded Newton steps (a halving at worst: 2^-100 of the bracket, never reached)
_ROOT_TOLERANCE = 1e-13   # in s: the value at the root is then exact to rounding


@njit(cache=True)
def _cubic(e0, e1, e2, e3, s):
    return e0 + s * (e1 + s * (e2 + s * e3))


@njit(cache=True)
def _quartic(d0, d1, d2, d3, d4, s):
    return d0 + s * (d1 + s * (d2 + s * (d3 + s * d4)))


@njit(cache=True)
def _quadratic_roots_inside(a, b, c, roots):
    """Roots of a s^2 + b s + c strictly inside (0, 1), ascending, into `roots` (2,); returns how many (the
    cancellation-free form: q = -(b + sign(b) sqrt(disc)) / 2, roots q / a and c / q)."""
    count = 0
    r0, r1 = -1.0, -1.0
    if a == 0.0:
        if b != 0.0:
            r0 = -c / b
    else:
        disc = b * b - 4.0 * a * c
        if disc >= 0.0:
            q = -0.5 * (b + math.copysign(math.sqrt(disc), b))
            r0 = q / a
            if q != 0.0:
                r1 = c / q
    if r1 < r0:
        r0, r1 = r1, r0
    if 0.0 < r0 < 1.0:
        roots[count] = r0
        count += 1
    if 0.0 < r1 < 1.0 and (count == 0 or r1 != roots[0]):
        roots[count] = r1
        count += 1
    return count


@njit(cache=True)
def _bracketed_root(e0, e1, e2, e3, lo, hi, f_lo):
    """The root of the cubic in [lo, hi], where it is monotone and changes sign (f_lo = its value at lo): Newton
    steps kept inside the shrinking bracket, a halving where a step would leave it."""
    x = 0.5 * (lo + hi)
    for _ in range(_MAX_STEPS):
        f = _cubic(e0, e1, e2, e3, x)
        if f == 0.0:
            return x
        if (f < 0.0) == (f_lo < 0.0):
            lo, f_lo = x, f
        else:
            hi = x
        slope = e1 + x * (2.0 * e2 + 3.0 * e3 * x)
        step = f / slope if slope != 0.0 else 0.0
        nxt = x - step
        if not lo < nxt < hi:
            nxt = 0.5 * (lo + hi)
        if abs(nxt - x) <= _ROOT_TOLERANCE:
            return nxt
        x = nxt
    return x


@njit(cache=True)
def _interval_peaks(d, e, breaks, out):
    """Peak |velocity| and |acceleration| and where (s) of one interval: velocity quartic d (5,), acceleration
    cubic e (4,) in s (per unit time), into out (4,) = (|v|, s of it, |a|, s of it)."""
    count = _quadratic_roots_inside(3.0 * e[3], 2.0 * e[2], e[1], breaks[1:3])          # jerk = 0
    breaks[0] = 0.0
    breaks[count + 1] = 1.0
    a_best, a_at = -1.0, 0.0
    v_best, v_at = -1.0, 0.0
    for b in range(count + 2):
        s = breaks[b]
        a = abs(_cubic(e[0], e[1], e[2], e[3], s))
        if a > a_best:
            a_best, a_at = a, s
    for b in range(count + 2):
        s = breaks[b]
        candidates = 1
        root = s
        if b < count + 1:                        # the acceleration's root on (breaks[b], breaks[b + 1]), if any
            f_lo = _cubic(e[0], e[1], e[2], e[3], s)
            f_hi = _cubic(e[0], e[1], e[2], e[3], breaks[b + 1])
            if (f_lo < 0.0) != (f_hi < 0.0) and f_lo != 0.0 and f_hi != 0.0:
                root = _bracketed_root(e[0], e[1], e[2], e[3], s, breaks[b + 1], f_lo)
                candidates = 2
        for c in range(candidates):
            x = s if c == 0 else root
            v = abs(_quartic(d[0], d[1], d[2], d[3], d[4], x))
            if v > v_best or (v == v_best and x < v_at):
                v_best, v_at = v, x
    out[0], out[1], out[2], out[3] = v_best, v_at, a_best, a_at


@njit(cache=True)
def quintic_peaks(times, positions, velocities, accelerations):
    """Per interval and joint, the peak |velocity| and |acceleration| of the quintic through k >= 2 points (times
    (k,) [s], positions, velocities, accelerations (k, m)) and where, as a share of the interval: four (k - 1, m)
    arrays (v peak, v at, a peak, a at). NaN where an interval's polynomial is not finite."""
    k, m = positions.shape
    v_peak, v_at = np.empty((k - 1, m)), np.empty((k - 1, m))
    a_peak, a_at = np.empty((k - 1, m)), np.empty((k - 1, m))
    d, e, breaks, out = np.empty(5), np.empty(4), np.empty(4), np.empty(4)
    for i in range(k - 1):
        h = times[i + 1] - times[i]
        for j in range(m):
            # the interval's position in s, as core/trajectory/outgoing_check.interval_polynomials writes it
            dp = positions[i + 1, j] - positions[i, j]
            v0, v1 = velocities[i, j] * h, velocities[i + 1, j] * h
            a0, a1 = accelerations[i, j] * h * h, accelerations[i + 1, j] * h * h
            c1, c2 = v0, 0.5 * a0
            c3 = 10.0 * dp - 6.0 * v0 - 4.0 * v1 - 1.5 * a0 + 0.5 * a1
            c4 = -15.0 * dp + 8.0 * v0 + 7.0 * v1 + 1.5 * a0 - a1
            c5 = 6.0 * dp - 3.0 * (v0 + v1) - 0.5 * a0 + 0.5 * a1
            d[0], d[1], d[2], d[3], d[4] = c1 / h, 2.0 * c2 / h, 3.0 * c3 / h, 4.0 * c4 / h, 5.0 * c5 / h
            hh = h * h
            e[0], e[1], e[2], e[3] = 2.0 * c2 / hh, 6.0 * c3 / hh, 12.0 * c4 / hh, 20.0 * c5 / hh
            if not (math.isfinite(d[0] + d[1] + d[2] + d[3] + d[4]) and math.isfinite(e[0] + e[1] + e[2] + e[3])):
                v_peak[i, j], v_at[i, j], a_peak[i, j], a_at[i, j] = np.nan, 0.0, np.nan, 0.0
                continue
            _interval_peaks(d, e, breaks, out)
            v_peak[i, j], v_at[i, j], a_peak[i, j], a_at[i, j] = out[0], out[1], out[2], out[3]
    return v_peak, v_at, a_peak, a_at
