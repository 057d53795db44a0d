"""The look-ahead window the servo publishes each tick: times, then positions and velocities within the limits.

The window extrapolates the commanded velocity up to the expected latency, then ends with a deceleration tail:
a point where every joint is at rest, held by one more point at the same positions until `max_delivery_delay`
after the window's stamp. A default controller refuses a trajectory that "ends in the past"; the hold point
makes a window that reaches it late (a busy CPU, a stalled process) still valid, and one it follows at the time
it was meant for, since the stamp is the tick's time. A trajectory controller with its default settings
(`allow_nonzero_velocity_at_trajectory_end: false`) rejects any trajectory whose last point moves; and since each
new window replaces the previous one within a tick, only the window's first milliseconds are ever executed, so
the tail costs no speed. If the messages stop, the arm follows the tail and stops within its acceleration limits.

Each joint's motion in the window is piecewise constant acceleration: the commanded velocity, then a constant
deceleration to rest, then rest. A joint that would otherwise pass its limit margin brakes at its acceleration
limit to stop there (`window_arrays`). The points sit at every joint's switching times, so the cubic Hermite a
controller plays through them is exactly that motion: within the limits in position, velocity and acceleration.
(Clamping the extrapolation at the limit instead put a stop from full speed between two points 2 ms apart: 66x
the acceleration limit on the spline a controller plays, which it followed whenever the servo stalled.)

numba kernels on plain float64 arrays (`cache=True`), called once per tick through `WindowBuilder`, which also
runs the outgoing check on every window and builds the stop that replaces a refused one.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from robokin_ros.core.limits import motion_limits
from robokin_ros.core.trajectory.outgoing_check import LIMIT_TOLERANCE, WINDOW_OK, window_rejection, window_violation
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.schema import per_joint_values
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.types import TrajectoryWindow, frozen

# Points after the next command: beyond dt the window only extrapolates the velocity, so a coarse grid
# describes the same motion and keeps the message small at 1 kHz.
LATER_POINTS = 8
# [s] a braking joint's switching times closer than this to another point are moved onto it (earlier, so the
# joint brakes less hard): a cubic through points microseconds apart amplifies the rounding of the positions
# (1e-16 rad) and of the times (1 ns in a message) into accelerations of the order of the limits.
MIN_POINT_SPACING = 1e-5
_NS = 1e9
# Rows of the `limits` table of `window_arrays`, (6, n): the position limits, the limit margins' inner edges, the
# acceleration and the velocity limits (the last only for `checked_window`'s outgoing check).
W_LOWER, W_UPPER, W_INNER_LOWER, W_INNER_UPPER, W_AMAX, W_VMAX = range(6)


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


def bound_hold(dt: float) -> float:
    """[s] how long a commanded speed must be holdable before its window brakes, for the servo's position bounds: one
    period `dt` plus MIN_POINT_SPACING, by which `_braking_times` may start the braking early to keep its points
    apart. Bounded for dt alone, a joint at its braking bound lost up to another 0.005 a dt within the first period:
    1.0009x its acceleration limit between windows (hypothesis seed 27489907 of the servo's long random sequences)."""
    return dt + MIN_POINT_SPACING


def window_capacity(grid_points: int, joints: int) -> int:
    """Rows the output arrays of `window_arrays` need: the grid, two switching times per joint, the tail's end
    and the hold."""
    return grid_points + 2 * joints + 2


@njit(cache=True)
def _on_point_or_below(x, points, count):
    """The latest time <= x that is one of points[:count] or at least MIN_POINT_SPACING from each of them."""
    moved = True
    while moved:
        moved = False
        for i in range(count):
            p = points[i]
            if p < x < p + MIN_POINT_SPACING:
                x, moved = p, True
            elif p - MIN_POINT_SPACING < x < p:
                x, moved = p - MIN_POINT_SPACING, True
    return x


@njit(cache=True)
def _floor_ns(x):
    """x [s] rounded down to whole nanoseconds (what a message carries), so a point's time is exactly its own."""
    return math.floor(x * _NS + 1e-3) / _NS


@njit(cache=True)
def _braking_times(speed, room, room_limit, a, dt, points, count):
    """(start, stop) [s] of a joint's braking: moving at `speed` > 0 [rad/s] from time 0, `room` [rad] to its
    limit margin and `room_limit` [rad] to its limit, decelerating at `a` [rad/s^2] at most.

    It stops at the margin, braking as late as it can, after the first period `dt` [s] (which the next tick
    starts from): the servo's velocity bounds (`limits.braking_speed`) leave exactly the room for that. Only a
    state the servo did not command (a measured one, or rounding) can have less: then the joint brakes from within
    the first period at `a`, stopping past the margin only if it must (never past its limit), and if it cannot
    stop within its limit at `a` at all, it stops at the limit harder than `a`, which the outgoing check refuses.
    The times are on, or MIN_POINT_SPACING away from, points[:count], and never later than the ideal ones: an
    earlier start brakes less hard, an earlier stop stops short (both moved, braking starts up to
    MIN_POINT_SPACING within the first period)."""
    brake = speed * speed / (2.0 * a)                   # [rad] stopping distance at a
    if brake > room:                                    # even braking from now passes the margin
        room = min(room_limit, brake)
    reach = 2.0 * room / speed                          # start + stop: the distance covered is speed (t_b + t_s) / 2
    stop = _on_point_or_below(_floor_ns(room / speed + 0.5 * speed / a), points, count)
    start = _on_point_or_below(_floor_ns(min(stop - speed / a, reach - stop, stop - MIN_POINT_SPACING)),
                               points, count)
    if start < 0.0:                                     # braking from now, at a or (at the limit) harder
        start, stop = 0.0, max(reach, 1.0 / _NS)
    return start, stop


def window_limits(lower: np.ndarray, upper: np.ndarray, margins: np.ndarray, acceleration: np.ndarray,
                  velocity: np.ndarray) -> np.ndarray:
    """The (6, n) `limits` table of `window_arrays` from the (n,) position limits, limit margins, acceleration and
    velocity limits."""
    return np.vstack((lower, upper, lower + margins, upper - margins, acceleration, velocity))


@njit(cache=True)
def checked_window(q, v, limits, dt, grid, hold_until, tolerance, times, positions, velocities):
    """`window_arrays`, then the outgoing check of the window (`outgoing.window_violation` with `tolerance`) in
    the same compiled call: (k, index of the point at dt, the check's WINDOW_* code)."""
    k, first_period = window_arrays(q, v, limits, dt, grid, hold_until, times, positions, velocities)
    code = window_violation(times[:k], positions[:k], velocities[:k], limits[W_LOWER], limits[W_UPPER],
                            limits[W_VMAX], limits[W_AMAX], tolerance)[0]
    return k, first_period, code


@njit(cache=True)
def window_arrays(q, v, limits, dt, grid, hold_until, times, positions, velocities):
    """Fill the window from the state now (positions q (n,), clamped into the limits, velocities v (n,)); returns its
    number of points k (times[:k], positions[:k] and velocities[:k]; the arrays hold `window_capacity` rows) and
    the index of its point at grid[1] (dt, where the next tick starts). `limits`: (6, n), see `window_limits`.

    Each joint moves at v from time 0 until its braking starts, decelerates at a constant rate to rest, then rests:
    - by default braking starts at the last `grid` time (see `window_times`) and lasts `stop_time` T for every
      joint, a uniform deceleration (v T / 2 covered, each joint within its limit);
    - a joint that would so pass its limit margin (inner_lower, inner_upper) brakes at its acceleration limit
      `amax` to stop at the margin, as late as it can after dt (`dt` [s], the period), see `_braking_times`.
    The points: the grid times, each braking joint's start and stop, the end of the tail (last grid time + T), and
    the hold at `hold_until` [s] (or just after the tail). Between consecutive points every joint is in one phase,
    and a cubic Hermite through the ends of a constant-acceleration phase is that phase: a controller playing
    the window (JTC's splines) moves each joint exactly so.
    """
    lower, upper, amax = limits[W_LOWER], limits[W_UPPER], limits[W_AMAX]
    inner_lower, inner_upper = limits[W_INNER_LOWER], limits[W_INNER_UPPER]
    q = clamped(q, lower, upper)            # a measured state may sit a hair outside
    n, g = q.shape[0], grid.shape[0]
    tail = stop_time(v, amax, dt)
    end = grid[g - 1] + tail
    count = g
    for i in range(g):
        times[i] = grid[i]
    times[count] = end
    count += 1
    start, stop, deceleration = np.empty(n), np.empty(n), np.empty(n)
    for j in range(n):
        speed = abs(v[j])
        start[j], stop[j] = grid[g - 1], end
        if speed == 0.0:
            deceleration[j] = 0.0
            continue
        up = v[j] > 0.0
        room = inner_upper[j] - q[j] if up else q[j] - inner_lower[j]
        if speed * (grid[g - 1] + 0.5 * tail) > room:
            room_limit = upper[j] - q[j] if up else q[j] - lower[j]
            start[j], stop[j] = _braking_times(speed, room, room_limit, amax[j], dt, times, count)
            for t in (start[j], stop[j]):
                known = False
                for i in range(count):
                    known = known or times[i] == t
                if not known:
                    times[count] = t
                    count += 1
        deceleration[j] = speed / (stop[j] - start[j])
    times[:count].sort()
    for i in range(count):
        t = times[i]
        for j in range(n):
            s = 1.0 if v[j] >= 0.0 else -1.0
            speed = abs(v[j])
            cruise = min(t, start[j])
            braked = max(0.0, min(t, stop[j]) - start[j])
            p = q[j] + s * (speed * cruise + speed * braked - 0.5 * deceleration[j] * braked * braked)
            positions[i, j] = min(max(p, lower[j]), upper[j])
            velocities[i, j] = 0.0 if t >= stop[j] else s * (speed - deceleration[j] * braked)
    times[count] = max(hold_until, end + 1e-3)
    for j in range(n):
        positions[count, j], velocities[count, j] = positions[count - 1, j], 0.0
    first_period = 1
    while times[first_period] < grid[1]:
        first_period += 1
    return count + 1, first_period


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
    controller would follow differently. A third fewer bytes to build, send and parse, every tick. A joint that
    brakes for its limit adds its own switching times (`window_arrays`).
    """
    return grid if len(grid) <= 3 else grid[[0, 1, len(grid) - 1]]


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


class WindowBuilder:
    """The windows of one configuration: built from the state now on the sparse grid, each checked on the way
    (core/trajectory/outgoing_check.py), and the stop that replaces a window that broke the check."""

    def __init__(self, dt: float, latency: float, hold_until: float, limits: np.ndarray) -> None:
        """`dt` [s] the period, `latency` [s] `max_expected_latency`, `hold_until` [s] `max_delivery_delay`,
        `limits` (6, n) see `window_limits`."""
        self.dt, self.hold_until, self.limits = dt, hold_until, limits
        self.grid = sparse_window_times(window_times(dt, latency))      # (3,) [s]
        self.rows = window_capacity(len(self.grid), limits.shape[1])     # every grid has 3 times
        self.verdict = WINDOW_OK - 1        # the outgoing check of the last window built (WINDOW_*), or below OK

    @classmethod
    def for_config(cls, robot: RobotModel, config: ServoConfig, acceleration: np.ndarray) -> WindowBuilder:
        """The windows of a servo configuration, whose IK keeps the acceleration limits `acceleration` (n,)."""
        margins = np.array(per_joint_values(config.joint_limit_margins, robot.n))                       # (n,)
        # what the outgoing check holds every window to: the joints' own velocity limits (velocity_scaling is the
        # servo's choice within them) and the acceleration limits
        velocity = motion_limits(robot, config.max_joint_velocity, config.max_joint_acceleration,
                                 config.default_joint_acceleration).velocity
        limits = window_limits(robot.limits.lower, robot.limits.upper, margins, acceleration, velocity)
        return cls(config.publish_period, config.max_expected_latency, config.max_delivery_delay, limits)

    @property
    def point_counts(self) -> tuple[int, ...]:
        """The numbers of points a window can have (with its tail and hold): the grid's, and two more for each
        joint that brakes for a limit within the window."""
        first = len(self.grid) + 2
        return tuple(range(first, self.rows + 1))

    def build(self, q: np.ndarray, v: np.ndarray, grid: np.ndarray) -> tuple[TrajectoryWindow, int]:
        """The window from positions q (clamped into the limits) and velocities v (n,) at time 0 on `grid` (see
        `window_arrays`), its points views of arrays sized for the most it can have; and the index of its point at
        dt. The outgoing check runs in the same compiled call: its verdict is kept in `verdict`."""
        n, rows = len(q), self.rows
        t, positions, velocities = np.empty(rows), np.empty((rows, n)), np.empty((rows, n))     # (k,), (k, n) ...
        k, first_period, self.verdict = checked_window(q, v, self.limits, self.dt, grid, self.hold_until,
                                                       LIMIT_TOLERANCE, t, positions, velocities)
        window = frozen(TrajectoryWindow, {"times": t[:k], "positions": positions[:k], "velocities": velocities[:k]})
        return window, first_period

    def check(self, window: TrajectoryWindow) -> int:
        """The outgoing check's WINDOW_* code of a window, built here or not."""
        limits = self.limits
        return window_violation(window.times, window.positions, window.velocities, limits[W_LOWER],
                                limits[W_UPPER], limits[W_VMAX], limits[W_AMAX], LIMIT_TOLERANCE)[0]

    def replacement(self, window: TrajectoryWindow, joint_names) -> tuple[TrajectoryWindow, str]:
        """What is published in place of a window that broke the outgoing check: a stop from its state now, every
        joint decelerating at its acceleration limit, or, if even that breaks a limit, the arm held where it is;
        and the sentence that says why."""
        limits = self.limits
        args = (joint_names, limits[W_LOWER], limits[W_UPPER], limits[W_VMAX], limits[W_AMAX])
        reason = window_rejection(window.times, window.positions, window.velocities, *args)
        stop, what = self.stopping(window.positions[0], window.velocities[0]), "stopping"
        if window_rejection(stop.times, stop.positions, stop.velocities, *args) is not None:
            stop, what = self.stopping(window.positions[0], np.zeros(len(window.positions[0]))), "holding the arm"
        return stop, f"a servo window was not published, it broke the outgoing check: {reason}; {what} " \
                     "within the limits instead, command dropped"

    def rejection(self, window: TrajectoryWindow, joint_names, jerk: np.ndarray | None = None):
        """The Rejection (outgoing_check) of a window that breaks the check (position, velocity, acceleration and,
        given `jerk` (n,) limits, jerk rules), None if it does not."""
        limits = self.limits
        return window_rejection(window.times, window.positions, window.velocities, joint_names, limits[W_LOWER],
                                limits[W_UPPER], limits[W_VMAX], limits[W_AMAX], j_max=jerk)

    def stopping(self, q: np.ndarray, v: np.ndarray) -> TrajectoryWindow:
        """From positions q and velocities v (n,) at time 0, every joint decelerating at its acceleration limit to
        rest, then the hold: the points at 0, at each joint's stop and the hold (v = 0: the arm held at q)."""
        amax = self.limits[W_AMAX]
        stops = np.abs(v) / amax                                                                        # (n,) [s]
        deceleration = np.sign(v) * np.where(np.isfinite(amax), amax, 0.0)   # no limit: stops at once
        t = np.unique(np.concatenate(([0.0], stops[stops > 0.0])))
        times = np.append(t, max(self.hold_until, t[-1] + 1e-3))                                      # (k,)
        tau = np.minimum(times[:, None], stops)                                                       # (k, n)
        positions = q + v * tau - 0.5 * deceleration * tau**2
        velocities = np.where(times[:, None] < stops, v - deceleration * tau, 0.0)
        return frozen(TrajectoryWindow, {"times": times, "positions": positions, "velocities": velocities})
