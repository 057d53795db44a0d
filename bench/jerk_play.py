"""What a trajectory controller plays, sampled at its 1 kHz update and measured by finite differences (issue 27).

The bench's own measurement, independent of the code it measures: the played curve is evaluated here (cubic Hermite
for points with positions and velocities, quintic with accelerations too, as JointTrajectoryController interpolates),
its velocity is sampled every `PERIOD`, and the acceleration and jerk are the first and second finite differences
of those velocities over the period. A velocity step (a servo window taking over from the previous one at another
velocity) so counts as |step| / period of acceleration, and an acceleration step (toppra's switching points, a cubic
Hermite's kinks) as |step| / period of jerk: what a controller updating at 1 kHz commands.

- `spline_play`: one trajectory (a plan, a peer's points) sampled at 1 kHz;
- `stitched_play`: the servo's windows, each taking over at its stamp (the tick's time) as a JTC takes over a
  trajectory stamped in the past: the window's own spline from its time 0 until the next window's stamp;
- `peaks`: per-joint peak |acceleration| and |jerk| of such samples, and their ratios to limits;
- `spline_figures`: for one trajectory of points, the product's own measures of the same spline next to these
  (core/trajectory/jerk_check.py: the exact peak on the played spline and its 1 kHz finite differences), where
  the tree has them.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

try:            # the product's jerk measures (issue 27, item 4); older trees (bench/other_tree.py) have none
    from robokin_ros.core.trajectory.jerk_check import played_jerk_peaks, sampled_jerk
except ImportError:
    played_jerk_peaks = sampled_jerk = None

PERIOD = 1e-3          # [s] the controller update the jerk is counted at (robokin's CONTROLLER_PERIOD)


class Played(NamedTuple):
    """The played curve at the controller's samples."""

    times: np.ndarray        # (k,) [s], every PERIOD
    positions: np.ndarray    # (k, n)
    velocities: np.ndarray   # (k, n)


class Peaks(NamedTuple):
    """Per-joint peaks of the finite differences of a played curve."""

    acceleration: np.ndarray     # (n,) [rad/s^2] max |dv| / period
    jerk: np.ndarray             # (n,) [rad/s^3] max |d(dv / period)| / period
    jerk_time: np.ndarray        # (n,) [s] where each joint's jerk peaks


def spline_state(times: np.ndarray, positions: np.ndarray, velocities: np.ndarray,
                 accelerations: np.ndarray | None, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions and velocities (len(t), n) of the JTC spline through the points at times `t` [s]: cubic Hermite
    without accelerations, quintic with them; before the first point the first, after the last the last at rest."""
    times, t = np.asarray(times, float), np.asarray(t, float)
    before, after = t <= times[0], t >= times[-1]
    t = np.clip(t, times[0], times[-1])
    i = np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(times) - 2)        # (k,)
    h = (times[i + 1] - times[i])[:, None]                                             # (k, 1)
    s = ((t - times[i])[:, None]) / h
    p0, p1 = positions[i], positions[i + 1]
    v0, v1 = velocities[i] * h, velocities[i + 1] * h
    if accelerations is None:
        c = [p0, v0, 3 * (p1 - p0) - 2 * v0 - v1, -2 * (p1 - p0) + v0 + v1]
    else:
        a0, a1 = accelerations[i] * h * h, accelerations[i + 1] * h * h
        dp = p1 - p0
        c = [p0, v0, 0.5 * a0, 10 * dp - 6 * v0 - 4 * v1 - 1.5 * a0 + 0.5 * a1,
             -15 * dp + 8 * v0 + 7 * v1 + 1.5 * a0 - a1, 6 * dp - 3 * (v0 + v1) - 0.5 * a0 + 0.5 * a1]
    q = sum(ck * s ** k for k, ck in enumerate(c))
    v = sum(k * ck * s ** (k - 1) for k, ck in enumerate(c) if k > 0) / h
    v[before], v[after] = velocities[0], velocities[-1]
    return q, v


def controller_times(duration: float, start: float = 0.0) -> np.ndarray:
    """The controller's update times from `start` over `duration` [s], every PERIOD (the end included)."""
    return start + np.arange(int(np.floor(duration / PERIOD + 1e-9)) + 1) * PERIOD


def spline_play(times, positions, velocities, accelerations=None, rest: bool = True) -> Played:
    """One trajectory as a JTC plays it, sampled every PERIOD from its start to its end; with `rest`, from
    2 PERIOD before to 2 PERIOD after: the arm holds its first point before and its last after (a plan starts
    and ends at rest, so an acceleration at its first or last point is a step the controller makes)."""
    pad = 2 * PERIOD if rest else 0.0
    t = controller_times(float(times[-1] - times[0]) + 2 * pad, float(times[0]) - pad)
    q, v = spline_state(np.asarray(times, float), np.asarray(positions, float), np.asarray(velocities, float),
                        None if accelerations is None else np.asarray(accelerations, float), t)
    return Played(t, q, v)


def stitched_play(stamps: Sequence[float], windows: Sequence, end: float | None = None) -> Played:
    """The servo's windows as a JTC plays them: window i (times from its stamp `stamps[i]` [s], positions,
    velocities, and accelerations if it has them: cubic Hermite without, quintic with) from its stamp until the next
    window's, the last one to its end (or `end`); the arm rests at the first window's start 2 PERIOD before."""
    stamps = np.asarray(stamps, float)
    last = windows[-1]
    stop = stamps[-1] + float(last.times[-1]) if end is None else end
    t = controller_times(stop - stamps[0] + 2 * PERIOD, float(stamps[0]) - 2 * PERIOD)
    owner = np.clip(np.searchsorted(stamps, t + 1e-9 * PERIOD, side="right") - 1, 0, len(stamps) - 1)
    n = last.positions.shape[1]
    q, v = np.empty((len(t), n)), np.empty((len(t), n))
    starts = np.flatnonzero(np.r_[True, np.diff(owner) > 0])
    for a, b in zip(starts, np.r_[starts[1:], len(t)]):
        w = windows[owner[a]]
        q[a:b], v[a:b] = spline_state(w.times, w.positions, w.velocities, getattr(w, "accelerations", None),
                                      t[a:b] - stamps[owner[a]])
    v[t < stamps[0]] = 0.0
    return Played(t, q, v)


def peaks(played: Played, start: float = -np.inf, end: float = np.inf) -> Peaks:
    """Per-joint peak |acceleration| and |jerk| by finite differences of the sampled velocities, over the
    samples from `start` to `end` [s]."""
    keep = (played.times >= start) & (played.times <= end)
    t, v = played.times[keep], played.velocities[keep]
    a = np.diff(v, axis=0) / PERIOD                                                    # (k - 1, n)
    j = np.diff(a, axis=0) / PERIOD                                                    # (k - 2, n)
    if len(j) == 0:
        zero = np.zeros(v.shape[1])
        return Peaks(np.abs(a).max(axis=0) if len(a) else zero, zero, zero)
    worst = np.abs(j).argmax(axis=0)
    return Peaks(np.abs(a).max(axis=0), np.abs(j).max(axis=0), t[worst + 1])


def ratios(p: Peaks, a_max: np.ndarray, j_max: np.ndarray) -> dict:
    """Per-joint peak |jerk| / limit and |acceleration| / limit, rounded for the table and the JSON."""
    return {"jerk_ratio": [round(float(x), 4) for x in p.jerk / j_max],
            "acc_ratio": [round(float(x), 4) for x in p.acceleration / a_max],
            "peak_jerk": [round(float(x), 2) for x in p.jerk],
            "peak_acc": [round(float(x), 4) for x in p.acceleration]}


def spline_figures(times, positions, velocities, accelerations, a_max: np.ndarray, j_max: np.ndarray) -> dict:
    """`ratios` of one trajectory's 1 kHz play here, and, where the tree has core/trajectory/jerk_check.py, its
    exact played peak ("exact_jerk_ratio") and its own 1 kHz finite differences of the played acceleration
    ("sampled_jerk_ratio")."""
    out = ratios(peaks(spline_play(times, positions, velocities, accelerations)), a_max, j_max)
    if played_jerk_peaks is not None:
        exact = played_jerk_peaks(times, positions, velocities, accelerations).jerk
        sampled = np.abs(sampled_jerk(times, positions, velocities, accelerations).jerk).max(axis=0)
        out["exact_jerk_ratio"] = [round(float(x), 4) for x in exact / j_max]
        out["sampled_jerk_ratio"] = [round(float(x), 4) for x in sampled / j_max]
    return out


def self_check() -> str:
    """The measurement on two curves of known jerk, as a sentence for the bench's header: the textbook
    minimum-jerk move (peak 60 d / T^3, at its ends) played as a quintic through 11 points, and a constant jerk J
    from rest stitched from 2 ms windows that each start at the previous one's state at 2 ms (cubic Hermite)."""
    T, d = 0.5, 0.3
    t = np.linspace(0.0, T, 11)
    s = t / T
    q = (d * (10 * s**3 - 15 * s**4 + 6 * s**5))[:, None]
    v = (d * (30 * s**2 - 60 * s**3 + 30 * s**4) / T)[:, None]
    a = (d * (60 * s - 180 * s**2 + 120 * s**3) / T**2)[:, None]
    quintic = float(peaks(spline_play(t, q, v, a)).jerk[0])
    J, dt = 5000.0, 2e-3

    class Window(NamedTuple):
        times: np.ndarray
        positions: np.ndarray
        velocities: np.ndarray

    def at(x):
        return np.array([[J * x**3 / 6.0]]), np.array([[J * x**2 / 2.0]])

    windows = [Window(np.array([0.0, dt]), *(np.vstack(z) for z in zip(at(k * dt), at((k + 1) * dt))))
               for k in range(10)]
    stitched = float(peaks(stitched_play(np.arange(10) * dt, windows), end=9 * dt).jerk[0])
    return (f"measurement check: minimum-jerk move {quintic:.1f} rad/s^3 (textbook 60 d / T^3 = {60 * d / T**3:.1f}, "
            f"a 1 kHz difference sits a little below the peak at the ends), stitched constant jerk {stitched:.1f} "
            f"(exact {J:.0f})")
