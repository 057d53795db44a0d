"""Rest-to-rest profiles for point-to-point joint moves: trapezoid (LSPB, linear segment with parabolic blends)
and quintic.

Used by joint-space moves that start and end at rest (a MoveJ between exact stops, an approach move): all joints
share one profile s(t), so they start and arrive together on a straight joint-space line. Blended moves and the
Cartesian path use the time-optimal timing of `timing.py` instead. On a straight line the two agree for the
trapezoid: both accelerate at the limit of the joint that binds, cruise and brake (a test compares them).
"""

from __future__ import annotations

import numpy as np

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays, sample_times
from robokin_ros.core.trajectory.jerk_smoothing import LinePath, SmoothedProfile, knotted_times
from robokin_ros.core.trajectory.outgoing_check import spline_peaks


def lspb_profile(v: float, a: float) -> tuple[float, float]:
    """Linear segment with parabolic blends for a unit move s: 0 -> 1 with |s'| <= v, |s''| <= a.

    Returns (blend time, total time) [s]; the profile is triangular when v cannot be reached.
    """
    if v * v / a >= 1.0:
        tb = float(np.sqrt(1.0 / a))
        return tb, 2.0 * tb
    tb = v / a
    return tb, 1.0 / v + tb


def lspb_eval(t: np.ndarray, tb: float, total: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """s, s', s'' of the unit LSPB move at times t (clipped to [0, total])."""
    t = np.clip(np.asarray(t, float), 0.0, total)
    a = 1.0 / (tb * (total - tb))               # from s(total) = 1 with cruise speed a * tb
    v = a * tb
    s = np.where(t < tb, 0.5 * a * t ** 2,
                 np.where(t <= total - tb, 0.5 * a * tb ** 2 + v * (t - tb), 1.0 - 0.5 * a * (total - t) ** 2))
    sd = np.where(t < tb, a * t, np.where(t <= total - tb, v, a * (total - t)))
    sdd = np.where(t < tb, a, np.where(t <= total - tb, 0.0, -a))
    return s, sd, sdd


def quintic_eval(t: np.ndarray, total: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """s, s', s'' of the rest-to-rest quintic s = 10 tau^3 - 15 tau^4 + 6 tau^5, tau = t / total."""
    tau = np.clip(np.asarray(t, float), 0.0, total) / total
    s = tau ** 3 * (10 - 15 * tau + 6 * tau ** 2)
    sd = 30 * tau ** 2 * (1 - tau) ** 2 / total
    sdd = 60 * tau * (1 - tau) * (1 - 2 * tau) / total ** 2
    return s, sd, sdd


PROFILES = ("trapezoid", "quintic")


def joint_move(q0, q1, v_max, a_max, profile: str = "trapezoid", rate_hz: float = 100.0,
               joint_names=None, for_controller: bool = False, jerk=None) -> JointTrajectoryArrays:
    """Synchronized straight joint-space move q0 -> q1 with a trapezoid (LSPB) or quintic profile within limits.

    All joints share one profile s(t) on Delta q, so the slowest joint sets the duration and the path is a
    straight line in joint space. Quintic peaks: |s'| = 15/8 / T, |s''| = 10 / (sqrt(3) T^2). A controller's
    quintic through the trapezoid's points overshoots its acceleration steps (up to 37 % of a step); what it
    measures (core/trajectory/outgoing_check.py) is taken off the profile's limits when `for_controller`, so the played
    motion stays within `v_max`, `a_max` too; without it the profile is the textbook one (the classroom's numbers).
    `jerk` (n,) [rad/s^3] (None or inf = none): within these joint jerk limits too (`jerk_limited_move`), as played.
    """
    q0, q1 = np.asarray(q0, float), np.asarray(q1, float)
    delta = q1 - q0
    moving = np.abs(delta) > 1e-12
    names = tuple(joint_names or (f"joint_{j}" for j in range(len(q0))))
    if not moving.any():
        zeros = np.zeros((1, len(q0)))
        return JointTrajectoryArrays(names, np.zeros(1), q0[None].copy(), zeros, zeros.copy())
    if profile not in PROFILES:
        raise InvalidInputError(f"profile '{profile}' must be one of {PROFILES}")
    v = float(np.min(np.asarray(v_max, float)[moving] / np.abs(delta[moving])))     # [1/s] on s
    a = float(np.min(np.asarray(a_max, float)[moving] / np.abs(delta[moving])))
    if jerk is not None and np.isfinite(np.asarray(jerk, float)[moving]).any():
        j = float(np.min(np.asarray(jerk, float)[moving] / np.abs(delta[moving])))
        return jerk_limited_move(q0, delta, v, a, j, profile, rate_hz, names)
    v_limit, a_limit = v, a
    for _ in range(_MAX_REDUCTIONS if for_controller else 1):
        times, (s, sd, sdd) = _unit_profile(v, a, profile, rate_hz)
        played = spline_peaks(times, s[:, None], sd[:, None], sdd[:, None])
        within = 1.0 + _TOLERANCE
        if played.velocity[0] <= v_limit * within and played.acceleration[0] <= a_limit * within:
            break
        # the overshoot is a share of the profile's own peaks: plan for the limits divided by it
        v, a = v_limit * v / max(played.velocity[0], v), a_limit * a / max(played.acceleration[0], a)
    return JointTrajectoryArrays(names, times, q0 + np.outer(s, delta), np.outer(sd, delta), np.outer(sdd, delta))


def jerk_limited_move(q0: np.ndarray, delta: np.ndarray, v: float, a: float, j: float, profile: str,
                      rate_hz: float, names) -> JointTrajectoryArrays:
    """The move q0 -> q0 + delta within |s'| <= v, |s''| <= a and jerk |s'''| <= j on the unit parameter s, played
    exactly.

    Trapezoid: the LSPB averaged over the window tau = (largest step of s'') / j (core/trajectory/jerk_smoothing.py):
    the jerk is then at most j, s' and s'' stay within v and a (averages), the move takes tau longer. Its s is a
    cubic in t between the breakpoints (the LSPB's switches and each a window later); with a point at each
    (`knotted_times`) a controller's quintic through the points plays it exactly. Quintic: the rest-to-rest quintic,
    whose jerk peaks at 60 / T^3 at its ends, made at least that long; its points sample it exactly."""
    if profile == "quintic":
        total = max(15.0 / 8.0 / v, float(np.sqrt(10.0 / np.sqrt(3.0) / a)), float(np.cbrt(60.0 / j)))
        times = sample_times(total, rate_hz)
        s, sd, sdd = quintic_eval(times, total)
    else:
        tb, total = lspb_profile(v, a)
        peak = 1.0 / (tb * (total - tb))                   # the LSPB's acceleration (a, or less when triangular)
        triangular = total - tb <= tb * (1.0 + 1e-12)
        grid = np.array([0.0, tb, total]) if triangular else np.array([0.0, tb, total - tb, total])
        s_grid, sd_grid, _ = lspb_eval(grid, tb, total)
        window = (2.0 * peak if triangular else peak) / j
        smooth = SmoothedProfile(LinePath(np.zeros(1), np.ones(1)), grid, s_grid, sd_grid, window)
        times = knotted_times(smooth.duration, rate_hz, smooth.breakpoints())
        s, sd, sdd, _ = smooth.path_states(times)
        s[0], sd[0], sdd[0], s[-1], sd[-1], sdd[-1] = 0.0, 0.0, 0.0, 1.0, 0.0, 0.0
    return JointTrajectoryArrays(names, times, q0 + np.outer(s, delta), np.outer(sd, delta), np.outer(sdd, delta))


_MAX_REDUCTIONS = 4
_TOLERANCE = 1e-4


def _unit_profile(v: float, a: float, profile: str, rate_hz: float):
    """Sample times and s, s', s'' of the unit move within |s'| <= v, |s''| <= a. The trapezoid's points put each
    acceleration step in the middle of an interval, where a controller's quintic overshoots it least (by 0.081
    times the step, against up to 0.37 times elsewhere): the same share whatever the limits, so one reduction of
    the limits by the measured overshoot removes it."""
    if profile == "trapezoid":
        tb, total = lspb_profile(v, a)
        times = centred_times(total, rate_hz, [tb, total - tb] if total - tb > tb else [tb])
        return times, lspb_eval(times, tb, total)
    total = max(15.0 / 8.0 / v, float(np.sqrt(10.0 / np.sqrt(3.0) / a)))
    times = sample_times(total, rate_hz)
    return times, quintic_eval(times, total)


def centred_times(duration: float, rate_hz: float, steps) -> np.ndarray:
    """0 ... `duration` about 1 / rate_hz apart, every time in `steps` (increasing, inside) in the middle of an
    interval of at most one period: uniform samples between the steps' intervals, each stretch evenly divided."""
    dt = 1.0 / rate_hz
    half = [min(0.5 * dt, 0.5 * gap) for gap in np.diff(np.r_[0.0, steps, duration])]
    edges = [0.0]
    for k, step in enumerate(steps):
        width = min(half[k], half[k + 1])
        edges += [step - width, step + width]
    edges.append(duration)
    pieces = [np.linspace(lo, hi, max(1, int(np.ceil((hi - lo) / dt - 1e-9))) + 1)[:-1]
              for lo, hi in zip(edges[:-1], edges[1:]) if hi > lo]
    return np.append(np.concatenate(pieces), duration)
