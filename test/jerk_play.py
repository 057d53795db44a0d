"""What a joint_trajectory_controller makes of the servo's windows, for the jerk tests: each window taken over at its
stamp (the tick's time), played as JTC's cubic Hermite through positions and velocities, held after its last point.

Written here with numpy, independently of the servo's own compiled sampling, so the tests measure the windows rather
than restate the code that built them."""
from typing import NamedTuple

import numpy as np


class Played(NamedTuple):
    times: np.ndarray            # (N,) [s]
    positions: np.ndarray        # (N, n)
    velocities: np.ndarray       # (N, n)
    accelerations: np.ndarray    # (N, n)


def hermite(window, t: float):
    """(q, v, a) (n,) of JTC's cubic Hermite through the window's points at t [s] after its time 0."""
    times, p, m = window.times, window.positions, window.velocities
    if t >= times[-1]:
        return p[-1].copy(), np.zeros(p.shape[1]), np.zeros(p.shape[1])
    i = max(0, int(np.searchsorted(times, t, side="right")) - 1)
    h = times[i + 1] - times[i]
    s = (t - times[i]) / h
    p0, p1, m0, m1 = p[i], p[i + 1], m[i] * h, m[i + 1] * h
    q = (2 * s**3 - 3 * s**2 + 1) * p0 + (s**3 - 2 * s**2 + s) * m0 + (-2 * s**3 + 3 * s**2) * p1 + (s**3 - s**2) * m1
    v = ((6 * s**2 - 6 * s) * p0 + (3 * s**2 - 4 * s + 1) * m0 + (6 * s - 6 * s**2) * p1 + (3 * s**2 - 2 * s) * m1) / h
    a = ((12 * s - 6) * p0 + (6 * s - 4) * m0 + (6 - 12 * s) * p1 + (6 * s - 2) * m1) / h**2
    return q, v, a


def play(stamped, rate_hz: float = 1000.0, until: float | None = None) -> Played:
    """Sample the stitched play of `stamped` [(stamp [s], window)] at `rate_hz` from the first stamp to `until`
    (default: the last stamp plus 0.3 s, the last window played on toward its stop)."""
    stamps = np.array([s for s, _ in stamped])
    end = stamps[-1] + 0.3 if until is None else until
    ts = np.arange(stamps[0], end, 1.0 / rate_hz)
    out = [hermite(stamped[int(np.searchsorted(stamps, t, side="right")) - 1][1],
                   t - stamps[int(np.searchsorted(stamps, t, side="right")) - 1]) for t in ts]
    q, v, a = (np.array([o[i] for o in out]) for i in range(3))
    return Played(ts, q, v, a)


def jerk_shares(played: Played, jerk_limits) -> np.ndarray:
    """(n,) peak |finite difference of the played acceleration| / the joint's jerk limit."""
    jerk = np.diff(played.accelerations, axis=0) / np.diff(played.times)[:, None]
    return np.abs(jerk).max(axis=0) / np.asarray(jerk_limits, float)


def takeover_steps(stamped) -> np.ndarray:
    """(len - 1, n) the acceleration step at each takeover: the new window's acceleration at its time 0 less the
    previous window's where the controller had played it to."""
    steps = []
    for (s0, w0), (s1, w1) in zip(stamped, stamped[1:]):
        steps.append(hermite(w1, 0.0)[2] - hermite(w0, s1 - s0)[2])
    return np.array(steps)
