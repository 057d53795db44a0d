"""Jerk-limited time scaling: a constant-path-acceleration profile s(t) (toppra's solution, a trapezoid) averaged
over a window, and the exact jerk of the quintic a joint_trajectory_controller plays through the points.

Why a moving average of s: the acceleration-limited profile steps its path acceleration s'' (bang-bang, cruise
starts), so its jerk is infinite there. Averaging the path position over a window tau,
s_f(t) = (1 / tau) * integral of s over [t - tau, t], gives s_f' = (s(t) - s(t - tau)) / tau (the average path
speed over the window), s_f'' = (s'(t) - s'(t - tau)) / tau (continuous: piecewise linear) and
s_f''' = (s''(t) - s''(t - tau)) / tau (piecewise constant, at most 2 max|s''| / tau). The profile keeps:
- the distance: s_f runs from s(0) to s(T) over T + tau (a window's time more, once per rest-to-rest section);
- the cruise: where s' is constant over the window, s_f' is that constant (a tool cruising at its programmed
  speed still does);
- the limits, nearly: |s_f''| and s_f' are averages of values toppra kept within the limits (measured anyway, at
  the path position they are used at, with the remedies of core/path/jerk_timing.py where they are not).
The joint jerk is then q''' s_f'^3 + 3 q'' s_f' s_f'' + q' s_f''' (q(s) the path's cubic spline): bounded, and
mostly set by the window (the ramp term).

The played jerk: a controller's quintic through points with positions, velocities and accelerations has a jerk
that is a quadratic in each interval (its peak at an end or at the vertex). A curve whose jerk changes inside an
interval is not reproduced exactly there, which is why the planners measure the played jerk and not only the
profile's; a ramp shorter than a point interval cannot be played at all (the window grows until it can).
"""
from __future__ import annotations

import numpy as np

from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays

_BISECTIONS = 60          # for `time_at`: 2^-60 of the duration, below rounding


def third_derivative(path, s: np.ndarray) -> np.ndarray:
    """q'''(s) (K, n) of a path: toppra's SplineInterpolator keeps its scipy CubicSpline as `cspl` (its own call
    stops at order 2); other paths answer order 3 themselves."""
    spline = getattr(path, "cspl", None)
    return spline(s, 3) if spline is not None else path(s, 3)


class LinePath:
    """q(s) = q0 + s * delta on s in [0, 1]: a straight joint-space move as a path (orders 0 to 3)."""

    def __init__(self, q0: np.ndarray, delta: np.ndarray) -> None:
        self.q0, self.delta = np.asarray(q0, float), np.asarray(delta, float)

    def __call__(self, s, order: int = 0) -> np.ndarray:
        s = np.asarray(s, float)
        if order == 0:
            return self.q0 + np.multiply.outer(s, self.delta)
        factor = np.ones_like(s) if order == 1 else np.zeros_like(s)
        return np.multiply.outer(factor, self.delta)


class SmoothedProfile:
    """The path `path` timed by the moving average, over `window` [s], of the constant-acceleration profile through
    (times, s, sd) (module docstring); times from 0, the duration is times[-1] + window.

    Offers what the planners use of toppra's trajectory (`ConstAccelTrajectory`): states, __call__, path_parameter,
    time_at, stretched, duration, and the grid (`ss`, `ts`) the report's binding limits are weighted by.
    """

    def __init__(self, path, times: np.ndarray, s: np.ndarray, sd: np.ndarray, window: float,
                 lead_speed: float = 0.0) -> None:
        """`lead_speed`: s' before the profile's start (0: from rest; a stop starts from the planned motion)."""
        if not window > 0.0:
            raise ValueError(f"the averaging window must be > 0 s, got {window}")
        self.path, self.window, self.lead_speed = path, float(window), float(lead_speed)
        self._t, self._s, self._sd = np.asarray(times, float), np.asarray(s, float), np.asarray(sd, float)
        h = np.diff(self._t)
        self._u = np.diff(self._sd) / h                        # s'' per interval
        pieces = self._s[:-1] * h + 0.5 * self._sd[:-1] * h * h + self._u * h ** 3 / 6.0
        self._area = np.concatenate([[0.0], np.cumsum(pieces)])   # integral of s from 0 to each grid time
        self.ss, self.ts = self._s, self._t
        self.verified = None            # set by the timing that accepts it
        self.grid_tool_speeds = None

    @classmethod
    def of(cls, trajectory, window: float) -> SmoothedProfile:
        """The average of toppra's solution (`ConstAccelTrajectory`, its stretch applied) over `window` [s]."""
        c = trajectory.stretch
        return cls(trajectory.path, trajectory.ts * c, trajectory.ss, trajectory.sd / c, window)

    def stretched(self, factor: float) -> SmoothedProfile:
        """The same motion `factor` times slower: the base profile and the window stretched alike."""
        return SmoothedProfile(self.path, self._t * factor, self._s, self._sd / factor, self.window * factor,
                               self.lead_speed / factor)

    @property
    def duration(self) -> float:
        """[s]"""
        return float(self._t[-1]) + self.window

    def breakpoints(self) -> np.ndarray:
        """The times where the path jerk s_f''' may change: every grid time, and each a window later."""
        return np.unique(np.concatenate([self._t, self._t + self.window]))

    def _base(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Integral of s from 0, s, s', s'' of the base profile at times x: before its start at `lead_speed`, after its
        end at rest."""
        t, s, sd, u = self._t, self._s, self._sd, self._u
        i = np.clip(np.searchsorted(t, x, side="right") - 1, 0, len(u) - 1)
        dt = np.clip(x, t[0], t[-1]) - t[i]
        speed = sd[i] + u[i] * dt
        position = s[i] + dt * (sd[i] + 0.5 * u[i] * dt)
        area = self._area[i] + dt * (s[i] + dt * (0.5 * sd[i] + u[i] * dt / 6.0))
        accel = np.where((x < t[0]) | (x > t[-1]), 0.0, u[i])
        area = area + np.where(x < t[0], s[0] * (x - t[0]), 0.0) + np.where(x > t[-1], s[-1] * (x - t[-1]), 0.0)
        if self.lead_speed != 0.0:
            before = np.minimum(x - t[0], 0.0)
            area = area + 0.5 * self.lead_speed * before * before
            position = position + self.lead_speed * before
            speed = np.where(x < t[0], self.lead_speed, speed)
        return area, position, speed, accel

    def path_states(self, times) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """s_f, s_f', s_f'', s_f''' at `times` [s], each (K,)."""
        times = np.asarray(times, float)
        late, early = self._base(times), self._base(times - self.window)
        s, sd, sdd, sddd = ((a - b) / self.window for a, b in zip(late, early))
        return np.clip(s, self._s[0] - self.lead_speed * self.window, self._s[-1]), np.maximum(sd, 0.0), sdd, sddd

    def states(self, times) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """s (K,), positions, velocities, accelerations (K, n) at `times` [s]."""
        s, sd, sdd, _ = self.path_states(times)
        d1 = self.path(s, 1)
        return s, self.path(s), d1 * sd[:, None], self.path(s, 2) * sd[:, None] ** 2 + d1 * sdd[:, None]

    def jerks(self, times) -> np.ndarray:
        """Joint jerks (K, n) at `times` [s]: q''' s'^3 + 3 q'' s' s'' + q' s'''."""
        s, sd, sdd, sddd = self.path_states(times)
        return (third_derivative(self.path, s) * sd[:, None] ** 3 + 3.0 * self.path(s, 2) * (sd * sdd)[:, None]
                + self.path(s, 1) * sddd[:, None])

    def __call__(self, times, order: int = 0) -> np.ndarray:
        """Positions (order 0), velocities (1), accelerations (2) or jerks (3) at `times` [s], (K, n)."""
        if order == 3:
            return self.jerks(times)
        return self.states(times)[1 + order]

    def path_parameter(self, times) -> np.ndarray:
        """s at `times` [s], (K,)."""
        return self.path_states(times)[0]

    def time_at(self, s) -> np.ndarray:
        """[s] when the path parameter first reaches `s` (K,), by bisection (s_f never decreases)."""
        s = np.asarray(s, float)
        lo, hi = np.zeros_like(s), np.full_like(s, self.duration)
        for _ in range(_BISECTIONS):
            mid = 0.5 * (lo + hi)
            below = self.path_parameter(mid) < s
            lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
        return hi


def knotted_times(duration: float, rate_hz: float, knots) -> np.ndarray:
    """0 ... `duration` at most 1 / rate_hz apart with every time of `knots` among them (knots closer than
    MIN_GAP to a kept one are dropped): where the played curve is a polynomial of degree <= 5 between points, a
    controller's quintic plays it exactly."""
    dt = 1.0 / rate_hz
    kept = [0.0]
    for k in np.sort(np.asarray(knots, float)):
        if MIN_GAP <= k <= duration - MIN_GAP and k - kept[-1] >= MIN_GAP:
            kept.append(float(k))
    kept.append(duration)
    pieces = [np.linspace(lo, hi, max(1, int(np.ceil((hi - lo) / dt - 1e-9))) + 1)[:-1]
              for lo, hi in zip(kept[:-1], kept[1:])]
    return np.append(np.concatenate(pieces), duration)


MIN_GAP = 1e-4            # [s] the shortest interval between two points


def sampled(profile: SmoothedProfile, start: np.ndarray, joint_names, times: np.ndarray) -> JointTrajectoryArrays:
    """The profile's points at `times`: positions, velocities, accelerations; row 0 exactly `start`, the last row
    exactly at rest (velocity and acceleration 0, as a controller needs)."""
    _, positions, velocities, accelerations = profile.states(times)
    positions[0] = start
    velocities[-1], accelerations[-1] = 0.0, 0.0
    velocities[0], accelerations[0] = 0.0, 0.0
    return JointTrajectoryArrays(tuple(joint_names), times, positions, velocities, accelerations)


def quintic_jerk_peaks(times, positions, velocities, accelerations) -> np.ndarray:
    """Per joint, the exact peak |jerk| (n,) of the quintic through the points (times (k,), the rest (k, n)); the
    accelerations agree at the points, so no step adds to it."""
    if len(times) < 2:
        return np.zeros(np.shape(positions)[1])
    return interval_jerk_peaks(times, positions, velocities, accelerations).max(axis=0)


def interval_jerk_peaks(times, positions, velocities, accelerations) -> np.ndarray:
    """Per interval and joint, the exact peak |jerk| (k - 1, n) of the quintic through the points: in each interval
    the jerk (6 c3 + 24 c4 u + 60 c5 u^2) / h^3 of the unit parameter u peaks at an end or at the vertex."""
    h = np.diff(times)[:, None]
    p, v, a = positions, velocities, accelerations
    dp, v0, v1, a0, a1 = p[1:] - p[:-1], h * v[:-1], h * v[1:], h * h * a[:-1], h * h * a[1:]
    c3 = 10 * dp - 6 * v0 - 4 * v1 - 1.5 * a0 + 0.5 * a1
    c4 = -15 * dp + 8 * v0 + 7 * v1 + 1.5 * a0 - a1
    c5 = 6 * dp - 3 * v0 - 3 * v1 - 0.5 * a0 + 0.5 * a1
    with np.errstate(divide="ignore", invalid="ignore"):
        vertex = np.where(c5 != 0.0, -c4 / (5.0 * c5), 0.0)
    vertex = np.clip(vertex, 0.0, 1.0)
    ends = np.maximum(np.abs(6 * c3), np.abs(6 * c3 + 24 * c4 + 60 * c5))
    inside = np.abs(6 * c3 + vertex * (24 * c4 + 60 * c5 * vertex))
    return np.maximum(ends, inside) / h ** 3
