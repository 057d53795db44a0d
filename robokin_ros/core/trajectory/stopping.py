"""Stopping a running path within the joint acceleration limits: cancel, preemption and execution timeout.

Two stops, both plain arrays in and a trajectory out (ROS-free and clock-free: times come in as arguments):
- `path_stop`: the rest of the planned trajectory, re-timed so the path speed falls to zero. With the planned
  time tau as path parameter, q(t) = q_plan(tau(t)), tau(0) = the stop's start time, dtau/dt = 1 at the start
  (the planned velocity: no jump) and then falling. The tool never leaves the planned path, and each joint's
  acceleration q_plan'' * tau'^2 + q_plan' * tau'' stays within its limit: tau'' is chosen at every step as
  the strongest braking all joints allow (|q_plan''| * tau'^2 <= the planned acceleration, so braking is
  always possible), reached through a short onset ramp so a controller's cubic or quintic interpolation
  between the points does not turn an acceleration step into an overshoot.
- `velocity_stop`: from a measured state along its own velocity, every joint decelerating uniformly so all
  stop together (a straight line in joint space). For an arm that no longer follows the plan (an execution
  timeout, or no plan at all).
`plan_stop` picks one: while the arm follows the plan (`planned_progress`), `continued_stop`: the running
trajectory's own points up to a planned sample `lead` ahead, then the path stop from there, to be stamped in the
plan's own time. A controller given it replaces the running trajectory by one that agrees with it point for point
until the braking begins, so it never blends from the arm's state (a default joint_trajectory_controller blends
with a quintic that assumes zero acceleration at the arm, which alone gives up to 1.37x the plan's acceleration).
The velocity stop when the arm is off the plan or past its end. All trajectories have times from 0 and end at
rest: strictly increasing times, last velocity exactly 0, as a default joint_trajectory_controller requires.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.trajectory.outgoing_check import LIMIT_TOLERANCE, spline_peaks
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays
from robokin_ros.core.trajectory.jerk_smoothing import LinePath, SmoothedProfile, knotted_times, quintic_jerk_peaks

STEP = 2e-3                  # [s] integration step of the path speed
OUTPUT_PERIOD = 0.01         # [s] between the points of a stop trajectory (the planner's 100 Hz)
ONSET = 0.04                 # [s] the braking reaches its full strength over this ramp
ACCELERATION_SHARE = 0.95    # of the limits: room for the controller's interpolation between points
# braking shares tried in turn until the controller's quintic through the stop's points stays within the limits
# (a joint whose share of the braking changes fast bends the quintic between two points: 1.12x measured at 0.95)
SHARES = (ACCELERATION_SHARE, 0.85, 0.7, 0.5, 0.3)
TRACKING_BOUND = 0.05        # [rad | m] farther from the plan, an arm is stopped along its own velocity
MEASUREMENT_LAG = 0.1        # [s] a measured state may lag the clock's estimate of the progress by this much
MEASUREMENT_LEAD = 0.05      # [s] ... or lead it by this much
_MAX_STOP = 60.0             # [s] a bound on the integration; a planned trajectory ends at rest before it


class PlannedMotion:
    """q(tau), q'(tau), q''(tau) of a planned trajectory at any planned time tau [s]: the quintic through its
    samples' positions, velocities and accelerations (what a JTC interpolates between such points)."""

    def __init__(self, planned: JointTrajectoryArrays) -> None:
        t, p, v, a = planned.times, planned.positions, planned.velocities, planned.accelerations
        if len(t) < 2:
            raise InvalidInputError(f"a planned trajectory needs 2 or more points to stop along, got {len(t)}")
        h = np.diff(t)[:, None]                                                    # (K-1, 1)
        dp, v0, v1, a0, a1 = p[1:] - p[:-1], h * v[:-1], h * v[1:], h * h * a[:-1], h * h * a[1:]
        # polynomial in the segment's share s in [0, 1], matching p, v, a at both ends
        self._coeffs = np.stack([p[:-1], v0, 0.5 * a0,
                                 10 * dp - 6 * v0 - 4 * v1 - 1.5 * a0 + 0.5 * a1,
                                 -15 * dp + 8 * v0 + 7 * v1 + 1.5 * a0 - a1,
                                 6 * dp - 3 * v0 - 3 * v1 - 0.5 * a0 + 0.5 * a1])         # (6, K-1, n)
        self.times, self._h = t, h[:, 0]
        self.duration = planned.duration

    def at(self, taus, order: int = 0) -> np.ndarray:
        """d^order q / dtau^order (M, n) at planned times `taus` (M,) (clamped to the trajectory), order 0 to 3."""
        taus = np.clip(np.asarray(taus, float), self.times[0], self.duration)
        i = np.clip(np.searchsorted(self.times, taus, side="right") - 1, 0, len(self._h) - 1)
        h = self._h[i][:, None]
        s = (taus - self.times[i])[:, None] / h
        c = self._coeffs[:, i]                                                      # (6, M, n)
        if order == 0:
            return c[0] + s * (c[1] + s * (c[2] + s * (c[3] + s * (c[4] + s * c[5]))))
        if order == 1:
            return (c[1] + s * (2 * c[2] + s * (3 * c[3] + s * (4 * c[4] + s * 5 * c[5])))) / h
        if order == 2:
            return (2 * c[2] + s * (6 * c[3] + s * (12 * c[4] + s * 20 * c[5]))) / (h * h)
        return (6 * c[3] + s * (24 * c[4] + s * 60 * c[5])) / (h * h * h)

    def __call__(self, tau: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, dq/dtau, d2q/dtau2), each (n,), at planned time `tau` [s] (clamped to the trajectory)."""
        tau = min(max(tau, self.times[0]), self.duration)
        i = min(int(np.searchsorted(self.times, tau, side="right")) - 1, len(self._h) - 1)
        h, s, c = self._h[i], (tau - self.times[i]) / self._h[i], self._coeffs[:, i]
        q = c[0] + s * (c[1] + s * (c[2] + s * (c[3] + s * (c[4] + s * c[5]))))
        dq = (c[1] + s * (2 * c[2] + s * (3 * c[3] + s * (4 * c[4] + s * 5 * c[5])))) / h
        ddq = (2 * c[2] + s * (6 * c[3] + s * (12 * c[4] + s * 20 * c[5]))) / (h * h)
        return q, dq, ddq


def braking_bound(dq: np.ndarray, ddq: np.ndarray, speed: float, a_max: np.ndarray) -> float:
    """The strongest path braking tau'' <= 0 [1/s] that keeps every joint's q'' * speed^2 + q' * tau'' within
    +-a_max (0 when no braking fits now: the planned motion is itself at a limit)."""
    moving = np.abs(dq) > 1e-9
    centrifugal = ddq[moving] * speed * speed                                      # (m,)
    low = (-a_max[moving] - centrifugal) / dq[moving]
    high = (a_max[moving] - centrifugal) / dq[moving]
    lower = np.max(np.minimum(low, high), initial=-np.inf)
    return float(min(max(lower, -1e6), 0.0))


def path_stop(planned: JointTrajectoryArrays, start_time: float, a_max: npt.ArrayLike,
              period: float = OUTPUT_PERIOD, share: float = ACCELERATION_SHARE) -> JointTrajectoryArrays:
    """The planned trajectory from `start_time` on, re-timed to come to rest on the path (module docstring).

    Args:
        planned: the trajectory being executed (times from 0, ends at rest).
        start_time: [s] the planned time at which the stop starts (the controller's progress then); clamped to
            [0, planned duration]: past the end, the stop holds the last point.
        a_max: (n,) joint acceleration limits [rad/s^2 | m/s^2], > 0.
        period: [s] between the returned points.
        share: of `a_max` the braking may use.

    Returns:
        The stop, times from 0: row 0 is the planned state at `start_time`, the last row is at rest.
    """
    motion = PlannedMotion(planned)
    limits = share * _positive_limits(a_max, len(planned.joint_names))
    return _stop_arrays(planned.joint_names, motion, _thin(_braking_samples(motion, start_time, limits), period))


def jerk_path_stop(planned: JointTrajectoryArrays, start_time: float, a_max: npt.ArrayLike, j_max: npt.ArrayLike,
                   period: float = OUTPUT_PERIOD, share: float = ACCELERATION_SHARE) -> JointTrajectoryArrays:
    """`path_stop` within joint jerk limits `j_max` (n,) [rad/s^3 | m/s^3] (inf = none), as the controller's quintic
    plays its points.

    The braking tau(t) of `path_stop` is averaged over a window w (core/trajectory/jerk_smoothing.py) with the planned
    motion before it (tau' = 1): the stop leaves the plan at `start_time` with the plan's own acceleration, its
    braking ramps in and out (the path jerk is at most the braking's steps over w) and it still never leaves the
    path. The braking starts w / 2 later on the plan so that the averaged stop is at `start_time` at its time 0. The
    window starts at the slowest joint's ramp 2 a / j (and two output periods) and widens by the played excess until
    the quintic through the points stays within `j_max`. When the plan is at rest sooner than that, its rest is the
    stop.
    """
    motion = PlannedMotion(planned)
    n = len(planned.joint_names)
    limits, jerk = share * _positive_limits(a_max, n), _jerk_limits(j_max, n)
    window = max(float(np.max(2.0 * limits / jerk)), 2.0 * period)
    start = min(max(float(start_time), 0.0), motion.duration)
    stop = None
    for _ in range(_JERK_ROUNDS):
        samples = _braking_samples(motion, start + 0.5 * window, limits) if start + 0.5 * window < motion.duration \
            else None
        if samples is None or samples[-1, 2] > 0.0:
            # the plan comes to rest at its end before the braking would: its own (jerk-limited) end is the stop
            return _rest_of_plan(planned, motion, start, period)
        stop = _smoothed_stop(planned.joint_names, motion, samples, window, period)
        ratio = float((quintic_jerk_peaks(stop.times, stop.positions, stop.velocities, stop.accelerations)
                       / jerk).max())
        if ratio <= 1.0 + 0.5 * LIMIT_TOLERANCE:
            break
        window *= ratio * (1.0 + _JERK_MARGIN)
    return stop


_JERK_ROUNDS = 8
_JERK_MARGIN = 0.01


class _PlanPath:
    """The planned motion as a path in planned time (orders 0 to 3), for `SmoothedProfile`."""

    def __init__(self, motion: PlannedMotion) -> None:
        self.motion = motion

    def __call__(self, taus, order: int = 0) -> np.ndarray:
        return self.motion.at(taus, order)


def _smoothed_stop(joint_names, motion: PlannedMotion, samples: np.ndarray, window: float,
                   period: float) -> JointTrajectoryArrays:
    """The braking `samples` (from `_braking_samples`, starting window / 2 after the stop) averaged over `window`,
    from the plan's motion at the stop's start."""
    samples = samples[np.r_[True, np.diff(samples[:, 0]) > 0.0]]          # no zero-length step
    profile = SmoothedProfile(_PlanPath(motion), samples[:, 0], samples[:, 1], samples[:, 2], window, lead_speed=1.0)
    times = _output_times(profile.duration, period)
    tau, speed, accel, _ = profile.path_states(times)
    d1, d2 = motion.at(tau, 1), motion.at(tau, 2)
    velocities, accelerations = d1 * speed[:, None], d2 * speed[:, None] ** 2 + d1 * accel[:, None]
    velocities[-1], accelerations[-1] = 0.0, 0.0                 # exactly at rest, as a JTC requires
    return JointTrajectoryArrays(tuple(joint_names), times, motion.at(tau), velocities, accelerations)


def _rest_of_plan(planned: JointTrajectoryArrays, motion: PlannedMotion, start: float,
                  period: float) -> JointTrajectoryArrays:
    """The plan from `start` to its end (it is at rest sooner than a stop would be), times from 0: the state at
    `start`, then the plan's own points."""
    later = planned.times > start + 1e-9
    if not later.any():
        q = motion.at([planned.duration])
        return JointTrajectoryArrays(planned.joint_names, np.array([0.0, period]), np.vstack([q, q]),
                                     np.zeros((2, q.shape[1])), np.zeros((2, q.shape[1])))
    here = [motion.at([start], k) for k in range(3)]
    return JointTrajectoryArrays(planned.joint_names, np.r_[0.0, planned.times[later] - start],
                                 np.vstack([here[0], planned.positions[later]]),
                                 np.vstack([here[1], planned.velocities[later]]),
                                 np.vstack([here[2], planned.accelerations[later]]))


def _braking_samples(motion: PlannedMotion, start_time: float, limits: np.ndarray) -> np.ndarray:
    """The integration samples (t, tau, tau', tau'' from there on) (K, 4) of the braking from planned time
    `start_time` (clamped to the plan) within the acceleration limits `limits` (n,)."""
    tau, speed, brake = min(max(float(start_time), 0.0), motion.duration), 1.0, 0.0
    samples = [(0.0, tau, speed, 0.0)]                       # (t, tau, tau', tau'' from there on)
    t = 0.0
    while speed > 0.0 and tau < motion.duration and t < _MAX_STOP:
        _, dq, ddq = motion(tau)
        target = braking_bound(dq, ddq, speed, limits)
        brake = max(target, brake + target * STEP / ONSET)   # ramp in, but never brake harder than allowed
        samples[-1] = (*samples[-1][:3], brake)
        step = STEP if speed + brake * STEP > 0.0 else speed / -brake
        step = _step_to_end(motion.duration - tau, speed, brake, step)
        tau = min(tau + speed * step + 0.5 * brake * step * step, motion.duration)
        speed, t = max(speed + brake * step, 0.0), t + step
        samples.append((t, tau, speed, brake))
    return np.array(samples)


def _step_to_end(remaining: float, speed: float, brake: float, step: float) -> float:
    """`step` [s], shortened to end exactly at the planned end when it would pass it (`remaining` [s] of planned
    time left): a step cut at the end would put the last point late, and its velocity and acceleration would not
    agree with the previous point's, which bends the controller's quintic between them (1.18x measured)."""
    if speed * step + 0.5 * brake * step * step <= remaining:
        return step
    if brake == 0.0:
        return remaining / speed
    root = speed * speed + 2.0 * brake * remaining
    return step if root < 0.0 else (speed - np.sqrt(root)) / -brake


def _thin(samples: np.ndarray, period: float) -> np.ndarray:
    """Every `period` of the integration samples plus the last (a last gap under a tenth of a period merges)."""
    t = samples[:, 0]
    keep = np.flatnonzero(np.diff(np.floor(t / period + 1e-6), prepend=-1.0) > 0)
    keep = keep[keep < len(t) - 1]
    if len(keep) > 1 and t[-1] - t[keep[-1]] < 0.1 * period:
        keep = keep[:-1]
    return samples[np.append(keep, len(t) - 1)]


def _stop_arrays(joint_names, motion: PlannedMotion, samples: np.ndarray) -> JointTrajectoryArrays:
    if len(samples) == 1:                                     # already at rest (the end): hold one period
        samples = np.vstack([samples, [OUTPUT_PERIOD, samples[0, 1], 0.0, 0.0]])
    rows = [motion(tau) for tau in samples[:, 1]]
    q = np.array([r[0] for r in rows])                                             # (K, n)
    dq, ddq = np.array([r[1] for r in rows]), np.array([r[2] for r in rows])      # (K, n)
    speed, brake = samples[:, 2:3], samples[:, 3:4]
    velocities = dq * speed
    velocities[-1] = 0.0                                       # exactly at rest, as a JTC requires
    return JointTrajectoryArrays(tuple(joint_names), samples[:, 0].copy(), q, velocities,
                                 ddq * speed ** 2 + dq * brake)


class ContinuedStop(NamedTuple):
    """A stop in the running trajectory's own time (`continued_stop`)."""

    trajectory: JointTrajectoryArrays    # times from its first point, ends at rest
    offset: float                        # [s] planned time of its first point: stamp it at the plan's start + this
    braking: float                       # [s] planned time at which it leaves the plan (= the plan's end: no braking)


def continued_stop(planned: JointTrajectoryArrays, elapsed: float, lead: float,
                   a_max: npt.ArrayLike, j_max: npt.ArrayLike | None = None) -> ContinuedStop:
    """The running trajectory from just before `elapsed` up to its first sample at least `lead` later, then
    `path_stop` from that sample (module docstring).

    Its first points lie in the past when it arrives; a controller plays a trajectory from the point the clock is at,
    so it only needs to arrive before the braking begins. Past that sample the plan would itself be at rest sooner
    than any braking (a stop requested near the end): the rest of the plan is the stop. The braking share is lowered
    (`SHARES`) until the quintic a controller plays through all the points stays within `a_max` (the planned points
    are within it already: the planners plan for that quintic).

    Args:
        planned: the running trajectory (times from 0, ends at rest). elapsed: [s] its planned time now (the
            controller's progress). lead: [s] > 0, the time the stop needs to reach the controller.
        a_max: (n,) joint acceleration limits [rad/s^2 | m/s^2], > 0.
        j_max: (n,) joint jerk limits [rad/s^3 | m/s^3] (inf = none), None = no jerk limit: the braking is then
            `jerk_path_stop`'s and the played jerk is held within them too.
    """
    limits = _positive_limits(a_max, len(planned.joint_names))
    times = planned.times
    first = max(int(np.searchsorted(times, elapsed, side="right")) - 2, 0)       # a sample before now, for margin
    brake_at = int(np.searchsorted(times, elapsed + lead, side="left"))
    if brake_at >= len(times) - 1:
        return ContinuedStop(_rows(planned, first, len(times), times[first]), float(times[first]), planned.duration)
    kept = _rows(planned, first, brake_at, times[first])
    for share in SHARES:
        braking = (path_stop(planned, float(times[brake_at]), limits, share=share) if j_max is None else
                   jerk_path_stop(planned, float(times[brake_at]), limits, j_max, share=share))
        stop = JointTrajectoryArrays(planned.joint_names, np.concatenate([kept.times, braking.times + times[brake_at]
                                                                          - times[first]]),
                                     np.vstack([kept.positions, braking.positions]),
                                     np.vstack([kept.velocities, braking.velocities]),
                                     np.vstack([kept.accelerations, braking.accelerations]))
        peak = spline_peaks(stop.times, stop.positions, stop.velocities, stop.accelerations).acceleration
        if (peak <= limits * (1.0 + 0.5 * LIMIT_TOLERANCE)).all() and (j_max is None or (
                quintic_jerk_peaks(stop.times, stop.positions, stop.velocities, stop.accelerations)
                <= np.asarray(j_max, float) * (1.0 + 0.5 * LIMIT_TOLERANCE)).all()):
            break
    return ContinuedStop(stop, float(times[first]), float(times[brake_at]))


def _rows(planned: JointTrajectoryArrays, begin: int, end: int, t0: float) -> JointTrajectoryArrays:
    """Rows [begin, end) of a trajectory, times from `t0`."""
    return JointTrajectoryArrays(planned.joint_names, planned.times[begin:end] - t0, planned.positions[begin:end],
                                 planned.velocities[begin:end], planned.accelerations[begin:end])


def velocity_stop(joint_names, positions: npt.ArrayLike, velocities: npt.ArrayLike, a_max: npt.ArrayLike,
                  coast: float = 0.0, period: float = OUTPUT_PERIOD,
                  j_max: npt.ArrayLike | None = None) -> JointTrajectoryArrays:
    """From a measured state, on along its velocity for `coast` [s], then every joint decelerating uniformly
    within `a_max` so that all reach rest together.

    Args:
        positions, velocities: (n,) measured state [rad | m], [rad/s | m/s].
        a_max: (n,) acceleration limits, > 0. coast: [s] >= 0, from the measurement to the stop's time 0
            (row 0 is the state extrapolated to then).
        period: [s] between the returned points.
        j_max: (n,) joint jerk limits (inf = none), None = none: with them the deceleration ramps in and out over a
            window (the joint needing the longest ramp, deceleration / jerk) and the points sit at the profile's
            breakpoints, so a controller's quintic plays it exactly (`jerk_limited_stop`).
    """
    n = len(joint_names)
    q0 = _finite_vector("positions", positions, n)
    v0 = _finite_vector("velocities", velocities, n)
    limits = ACCELERATION_SHARE * _positive_limits(a_max, n)
    duration = float(np.max(np.abs(v0) / limits))
    start = q0 + v0 * max(coast, 0.0)
    if j_max is not None and duration > 0.0:
        return _jerk_velocity_stop(joint_names, start, v0, duration, _jerk_limits(j_max, n), period)
    times = _output_times(duration, period) if duration > 0.0 else np.array([0.0, period])
    deceleration = -v0 / duration if duration > 0.0 else np.zeros(n)                  # (n,)
    tt = np.minimum(times, duration)[:, None]                                         # (K, 1)
    q = start + v0 * tt + 0.5 * deceleration * tt * tt
    v = v0 + deceleration * tt
    v[-1] = 0.0
    return JointTrajectoryArrays(tuple(joint_names), times, q, v, np.tile(deceleration, (len(times), 1)))


def _jerk_velocity_stop(joint_names, start: np.ndarray, v0: np.ndarray, duration: float, jerk: np.ndarray,
                        period: float) -> JointTrajectoryArrays:
    """The uniform deceleration to rest over `duration` averaged over the window deceleration / jerk, on the line
    start + v0 * sigma (sigma [s]: the motion at v0 before the stop; the base starts half a window along it so the
    averaged stop is at `start` at time 0)."""
    window = max(float(np.max(np.abs(v0) / duration / jerk)), _MIN_WINDOW)
    half = 0.5 * window
    profile = SmoothedProfile(LinePath(start, v0), np.array([0.0, duration]), np.array([half, half + 0.5 * duration]),
                              np.array([1.0, 0.0]), window, lead_speed=1.0)
    times = knotted_times(profile.duration, 1.0 / period, profile.breakpoints())
    sigma, speed, accel, _ = profile.path_states(times)
    sigma[0], speed[0], accel[0], speed[-1], accel[-1] = 0.0, 1.0, 0.0, 0.0, 0.0
    return JointTrajectoryArrays(tuple(joint_names), times, start + np.outer(sigma, v0), np.outer(speed, v0),
                                 np.outer(accel, v0))


_MIN_WINDOW = 1e-3         # [s] the shortest ramp of a velocity stop (a joint without a jerk limit)


def _output_times(duration: float, period: float) -> np.ndarray:
    """0, period, ... and exactly `duration` (a last gap under a tenth of a period merges into the end)."""
    times = np.arange(0.0, duration, period)
    if len(times) > 1 and duration - times[-1] < 0.1 * period:
        times = times[:-1]
    return np.append(times, duration)


def _jerk_limits(j_max: npt.ArrayLike, n: int) -> np.ndarray:
    limits = np.asarray(j_max, dtype=float)
    if limits.shape != (n,) or np.isnan(limits).any() or not (limits > 0.0).all() or np.isinf(limits).all():
        raise InvalidInputError(f"jerk limits must be {n} values > 0 (inf = none, not all), got {limits.tolist()}")
    return limits


def _positive_limits(a_max: npt.ArrayLike, n: int) -> np.ndarray:
    limits = np.asarray(a_max, dtype=float)
    if limits.shape != (n,) or not (np.isfinite(limits).all() and (limits > 0.0).all()):
        raise InvalidInputError(f"acceleration limits must be {n} finite values > 0, got {limits.tolist()}")
    return limits


def _finite_vector(name: str, values: npt.ArrayLike, n: int) -> np.ndarray:
    vector = np.asarray(values, dtype=float)
    if vector.shape != (n,) or not np.isfinite(vector).all():
        raise InvalidInputError(f"{name} must be {n} finite values, got {vector.tolist()}")
    return vector


class Progress(NamedTuple):
    """Where a measured state is on the planned trajectory."""

    time: float        # [s] planned time whose planned positions are nearest to the measured ones
    error: float       # [rad | m] largest joint distance between the two


def planned_progress(planned: JointTrajectoryArrays, elapsed: float, positions: npt.ArrayLike) -> Progress:
    """The planned time, near the clock's estimate `elapsed` [s], at which the plan passes the measured positions.

    The clock estimate is off by the delivery latencies and a measured state is older than the time it is
    compared at; the arm's own state is what a controller blends from, so the stop starts from it. Searched over
    [elapsed - MEASUREMENT_LAG, elapsed + MEASUREMENT_LEAD] on a 1 ms grid, refined by one projection on q'.
    """
    motion = PlannedMotion(planned)
    q = np.asarray(positions, dtype=float)
    low, high = max(elapsed - MEASUREMENT_LAG, 0.0), min(elapsed + MEASUREMENT_LEAD, motion.duration)
    taus = np.linspace(low, high, max(int((high - low) / 1e-3), 1) + 1)
    errors = [float(np.abs(q - motion(tau)[0]).max()) for tau in taus]
    best = float(taus[int(np.argmin(errors))])
    q_plan, dq, _ = motion(best)
    if float(dq @ dq) > 1e-12:
        best = min(max(best + float((q - q_plan) @ dq) / float(dq @ dq), low), high)
    return Progress(best, float(np.abs(q - motion(best)[0]).max()))


class StopPlan(NamedTuple):
    """The stop chosen for a running execution."""

    trajectory: JointTrajectoryArrays    # times from its first point, ends at rest
    along_path: bool                     # True: the planned path re-timed; False: along the measured velocity
    start: float                         # [s] on the running trajectory's clock (planned time) of its first point


def plan_stop(joint_names, planned: JointTrajectoryArrays | None, elapsed: float, positions: npt.ArrayLike | None,
              velocities: npt.ArrayLike | None, a_max: npt.ArrayLike, coast: float,
              tracking_bound: float = TRACKING_BOUND, j_max: npt.ArrayLike | None = None) -> StopPlan | None:
    """The stop for an execution that must end now: the running trajectory continued into a stop along its path
    while the arm follows it (`continued_stop`), else along the measured velocity; None when neither is known (no
    plan to follow and no measured state). Stamp it at the running trajectory's start + `start`.

    Args:
        planned: the executing trajectory, or None. elapsed: [s] the controller's progress along it now (planned
            time since the start it was stamped with).
        positions, velocities: (n,) the measured state now [rad | m], [rad/s | m/s], or None (velocities
            None = at rest); the positions tell whether the arm follows the plan (`planned_progress`).
        a_max: (n,) acceleration limits. coast: [s] from now until the stop may leave the running trajectory (its
            delivery time).
        tracking_bound: [rad | m] the arm follows the plan while it is this close to the planned path.
        j_max: (n,) joint jerk limits (inf = none), None = none: both stops then keep within them as played.
    """
    on_plan = planned is not None and len(planned.times) >= 2 and elapsed - MEASUREMENT_LAG < planned.duration
    if on_plan and positions is not None:
        on_plan = planned_progress(planned, elapsed, positions).error <= tracking_bound
    if on_plan:
        stop = continued_stop(planned, elapsed, coast, a_max, j_max)
        return StopPlan(stop.trajectory, True, stop.offset)
    if positions is None:
        return None
    moving = np.zeros(len(joint_names)) if velocities is None else velocities
    return StopPlan(velocity_stop(joint_names, positions, moving, a_max, coast, j_max=j_max), False, elapsed + coast)
