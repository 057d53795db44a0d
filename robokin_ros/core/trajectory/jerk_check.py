"""Jerk on the curve a joint_trajectory_controller plays: its exact peaks, an independent sampled measurement, and
the compiled check of the servo's windows (issue 27).

Where the jerk comes from, per interpolation (core/trajectory/outgoing_check.py explains which spline a JTC plays):
- quintic (positions, velocities, accelerations): the acceleration is continuous at the points and the jerk is a
  quadratic in each interval, so its peak is at an interval's end or at the quadratic's vertex;
- cubic Hermite (positions, velocities): the jerk is constant in each interval, but the acceleration steps at the
  points (the spline is only C1);
- linear (positions only): the velocity steps at the points, so the jerk there is unbounded.

A step of the acceleration is an impulse of jerk, which no controller sees as such: one that differentiates its
commands at its update period T sees the step spread over one period. `CONTROLLER_PERIOD` is the period of the
fastest common controller (1 kHz); a slower one sees less. The finite difference across a step at point i is
step / T plus a mix, weighted by where the samples fall, of the jerks just before and just after the point; its
worst case over the sampling phase, max(|step / T + j_before|, |step / T + j_after|), is the peak counted there.

What the check covers: the curve from the first point on, and the hold after the last one (a JTC holds the last
point, so the acceleration steps to zero there). Into the first point: a trajectory whose first point is at rest
(every velocity 0) starts from a hold, so its first acceleration is a step from zero and counts (`from_rest`);
one that starts in motion continues what played before, which the points do not show: continuity there is the
sender's job (the servo's between windows, a stop's from the motion it ends). The step figure is
the worst case when the intervals next to a point last at least one period (the servo's default 2 ms tick and the
planners' samples do); shorter ones would let one finite difference span two steps.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from robokin_ros.core.trajectory.spline_polynomials import interval_polynomials

CONTROLLER_PERIOD = 1e-3     # [s] update period of the fastest common controller (1 kHz), for acceleration steps
JERK_RULE = "joint jerk limits"
# outcome codes of `window_jerk_violation`: outgoing_check's WINDOW_OK and WINDOW_JERK (that module builds on this one)
WINDOW_OK, WINDOW_JERK = 0, 7


class JerkPeaks(NamedTuple):
    """Largest |jerk| of each joint on the controller's spline (acceleration steps counted over `period`), and when."""

    jerk: np.ndarray                 # (m,) [rad/s^3 | m/s^3]; inf where a linear spline's velocity steps
    time: np.ndarray                 # (m,) [s]
    interpolation: str               # "quintic", "cubic", "linear" or "none" (one point)


class SampledJerk(NamedTuple):
    """Finite differences of the played acceleration at a controller's rate."""

    times: np.ndarray                # (N,) [s] the middle of each sample pair
    jerk: np.ndarray                 # (N, m) [rad/s^3 | m/s^3]


def _coefficients(times, positions, velocities, accelerations):
    """(t, h (k - 1, 1), position polynomials in s, interpolation) as a JTC plays the points."""
    t = np.asarray(times, float)
    c, interpolation = interval_polynomials(t, positions, velocities, accelerations)
    return t, np.diff(t)[:, None], c, interpolation


def _ends(c: np.ndarray, h: np.ndarray):
    """Acceleration and jerk [per unit time] at s = 0 and s = 1 of cubic or quintic position polynomials in s
    (degree + 1, k - 1, m): (a_start, a_end, j_start, j_end), each (k - 1, m)."""
    c = np.concatenate([c, np.zeros((6 - len(c),) + c.shape[1:])])                   # a cubic as a quintic
    a_start = 2.0 * c[2] / h ** 2
    a_end = (2.0 * c[2] + 6.0 * c[3] + 12.0 * c[4] + 20.0 * c[5]) / h ** 2
    j_start = 6.0 * c[3] / h ** 3
    j_end = (6.0 * c[3] + 24.0 * c[4] + 60.0 * c[5]) / h ** 3
    return a_start, a_end, j_start, j_end


def _step_jerk(a_start, a_end, j_start, j_end, period: float, from_rest: bool) -> np.ndarray:
    """(k, m): what a controller differentiating at `period` sees at each point in the worst sampling phase; after
    the last point the arm holds (acceleration and jerk 0), and before the first too when `from_rest` (else 0
    there: not judged)."""
    zeros = np.zeros((1, a_start.shape[1]))
    after_a, after_j = np.vstack([a_start, zeros]), np.vstack([j_start, zeros])
    before_a, before_j = np.vstack([zeros, a_end]), np.vstack([zeros, j_end])
    step = (after_a - before_a) / period
    seen = np.maximum(np.abs(step + before_j), np.abs(step + after_j))
    if not from_rest:
        seen[0] = 0.0
    return seen


def starts_at_rest(velocities, from_rest: bool | None) -> bool:
    """`from_rest`, or when None whether the first point is at rest (every velocity 0): then the arm held still
    before it, with zero acceleration."""
    if from_rest is not None:
        return from_rest
    return velocities is not None and bool(np.all(np.asarray(velocities, float)[0] == 0.0))


def played_jerk_peaks(times, positions, velocities=None, accelerations=None,
                      period: float = CONTROLLER_PERIOD, from_rest: bool | None = None) -> JerkPeaks:
    """Peak |jerk| per joint of the spline a JTC plays through k points (times (k,) [s], positions etc. (k, m);
    velocities / accelerations None = the points do not carry them), acceleration steps counted over `period`;
    `from_rest`: whether the step into the first point counts (None: when that point is at rest, see
    `starts_at_rest`)."""
    t = np.asarray(times, float)
    m = np.shape(positions)[1]
    if len(t) < 2:
        return JerkPeaks(np.zeros(m), np.zeros(m), "none")
    t, h, c, interpolation = _coefficients(t, positions, velocities, accelerations)
    if interpolation == "linear":
        v = c[1] / h                                                                   # (k - 1, m)
        after = np.vstack([v[1:], np.zeros((1, m))])
        stepped = after != v                                                           # at points 1..k-1
        jerk = np.where(stepped.any(axis=0), np.inf, 0.0)
        first = np.where(stepped.any(axis=0), stepped.argmax(axis=0) + 1, 0)
        return JerkPeaks(jerk, t[first], interpolation)
    a_start, a_end, j_start, j_end = _ends(c, h)
    inside = np.maximum(np.abs(j_start), np.abs(j_end))                              # (k - 1, m)
    inside_at = np.where(np.abs(j_end) > np.abs(j_start), 1.0, 0.0)
    if interpolation == "quintic":
        # jerk(s) = (6 c3 + 24 c4 s + 60 c5 s^2) / h^3: its vertex, where inside the interval
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.where(c[5] != 0.0, -c[4] / (5.0 * c[5]), -1.0)
        s = np.where(np.isfinite(s), s, -1.0)
        vertex = np.abs(6.0 * c[3] + 24.0 * c[4] * s + 60.0 * c[5] * s * s) / h ** 3
        use = (s > 0.0) & (s < 1.0) & (vertex > inside)
        inside, inside_at = np.where(use, vertex, inside), np.where(use, s, inside_at)
    steps = _step_jerk(a_start, a_end, j_start, j_end, period, starts_at_rest(velocities, from_rest))   # (k, m)
    k_in, k_step = inside.argmax(axis=0), steps.argmax(axis=0)                        # (m,)
    cols = np.arange(m)
    peak_in, peak_step = inside[k_in, cols], steps[k_step, cols]
    time_in = t[k_in] + inside_at[k_in, cols] * h[k_in, 0]
    at_step = peak_step > peak_in
    return JerkPeaks(np.where(at_step, peak_step, peak_in), np.where(at_step, t[k_step], time_in), interpolation)


def played_acceleration(times, positions, velocities, accelerations, at) -> np.ndarray:
    """Acceleration (N, m) of the spline a JTC plays at times `at` (N,) [s]: at a point, the interval that starts
    there; after the last point, 0 (the controller holds it), and before the first (held, for a trajectory that
    starts at rest). Cubic or quintic (velocities given)."""
    t, h, c, _ = _coefficients(times, positions, velocities, accelerations)
    at = np.asarray(at, float)
    i = np.clip(np.searchsorted(t, at, side="right") - 1, 0, len(t) - 2)              # (N,)
    s = (at - t[i]) / h[i, 0]
    out = np.zeros((len(at), c.shape[2]))
    for power in range(len(c) - 1, 1, -1):                                            # Horner on d2/ds2
        out = out * s[:, None] + power * (power - 1) * c[power][i]
    out = out / h[i] ** 2
    out[(at > t[-1]) | (at < t[0])] = 0.0
    return out


def sampled_jerk(times, positions, velocities=None, accelerations=None, rate_hz: float = 1000.0,
                 phase: float = 0.0, from_rest: bool | None = None) -> SampledJerk:
    """Jerk as a controller at `rate_hz` could measure it: the played spline's acceleration sampled every
    1 / rate_hz from the first point + `phase` [s] (one sample before, in the hold, when it starts at rest, as
    `played_jerk_peaks` judges `from_rest`) to one sample past the last (the hold), finite differences between
    samples. An independent measurement of `played_jerk_peaks` with period 1 / rate_hz: never above it up to the
    jerk's own variation over one sample, and reaching it at the worst sampling phase. Linear splines have no
    acceleration to sample: velocities are required."""
    if velocities is None:
        raise ValueError("sampled_jerk needs velocities: a linear spline's acceleration is a train of impulses")
    t = np.asarray(times, float)
    period = 1.0 / rate_hz
    start = t[0] + phase - (period if starts_at_rest(velocities, from_rest) else 0.0)
    count = int(math.ceil((t[-1] - start) / period)) + 2
    at = start + np.arange(count) * period
    a = played_acceleration(t, positions, velocities, accelerations, at)
    return SampledJerk(0.5 * (at[1:] + at[:-1]), np.diff(a, axis=0) / period)


def jerk_ratios(peaks: JerkPeaks, j_max) -> np.ndarray:
    """peak / limit per joint; 0 where the limit is inf (no limit) and the peak finite."""
    limit = np.asarray(j_max, float)
    with np.errstate(invalid="ignore"):
        ratio = peaks.jerk / limit
    return np.where(np.isinf(limit) & np.isfinite(peaks.jerk), 0.0, np.where(np.isnan(ratio), np.inf, ratio))


@njit(cache=True)
def window_jerk_violation(times, positions, velocities, jmax, tolerance, period):
    """WINDOW_JERK (7) when the cubic Hermite a JTC plays through a servo window (times (k,) [s], positions and
    velocities (k, n)) exceeds a joint's jerk limit jmax (n,) by more than `tolerance` (relative), counting each
    point's acceleration step over `period` as `played_jerk_peaks(..., from_rest=False)` does (the step into the
    first point is the servo's continuity between windows); else WINDOW_OK (0). Assumes
    `window_violation` passed (finite values, increasing times)."""
    k, n = positions.shape
    for j in range(n):
        limit = jmax[j] * (1.0 + tolerance)
        before_a = 0.0
        before_j = 0.0
        for i in range(k - 1):
            h = times[i + 1] - times[i]
            dp, m0, m1 = positions[i + 1, j] - positions[i, j], velocities[i, j] * h, velocities[i + 1, j] * h
            a0 = (6.0 * dp - 4.0 * m0 - 2.0 * m1) / (h * h)
            a1 = (-6.0 * dp + 2.0 * m0 + 4.0 * m1) / (h * h)
            jerk = (a1 - a0) / h
            if not abs(jerk) <= limit:
                return WINDOW_JERK
            if i > 0:
                step = (a0 - before_a) / period
                if not (abs(step + before_j) <= limit and abs(step + jerk) <= limit):
                    return WINDOW_JERK
            before_a, before_j = a1, jerk
        step = -before_a / period                                                       # the hold after the last point
        if not abs(step + before_j) <= limit or not abs(step) <= limit:
            return WINDOW_JERK
    return WINDOW_OK
