"""Time parameterization: time-optimal (toppra) along the downsampled joint spline, verified, never trusted.

toppra enforces the limits on its grid; between grid points the trajectory can overshoot them (MoveIt users
report up to 2.75x). Two measures, then a verification that is never relaxed:
- the acceleration constraint uses toppra's first-order *interpolation* discretization (each grid interval
  is constrained at both of its ends, not only at its start): on the benchmark paths the overshoot drops
  from 1.35-1.7x (collocation) to 1.00-1.25x for the same grid and the same toppra cost;
- the result is sampled at the control rate and the peak |qd|/v_max and |qdd|/a_max are measured; if either
  exceeds 1 + 1e-3, the trajectory is slowed down uniformly in time, q_c(t) = q(t / c): velocities scale
  by 1/c and accelerations by 1/c^2 everywhere, so c = max(v ratio, sqrt(a ratio)) (plus a small margin)
  removes the measured overshoot without a second toppra run; the stretched trajectory is verified again
  at the control rate (the samples fall elsewhere on it). The limits used are never raised.
"""
from __future__ import annotations

import copy
import logging
import time
from typing import NamedTuple

import numpy as np

from robokin_ros.core.errors import InvalidInputError, TrajectoryTimingError
from robokin_ros.core.path.result import JointTrajectoryArrays, TimingReport
from robokin_ros.core.path.toppra_import import import_toppra

ta = import_toppra()          # matplotlib stays unloaded (see toppra_import.py)
algo, constraint = ta.algorithm, ta.constraint

logging.getLogger("toppra").setLevel(logging.WARNING)

RATIO_TOLERANCE = 1e-3
_MAX_RETIMINGS = 4
_RETIME_MARGIN = 2e-3
_INTERPOLATION = constraint.DiscretizationType.Interpolation


def sample_times(duration: float, rate_hz: float) -> np.ndarray:
    """0, 1/rate, ... and exactly `duration`, strictly increasing (a last gap shorter than a tenth of a
    period is merged into the final point so no interval is degenerate)."""
    dt = 1.0 / rate_hz
    times = np.arange(0.0, duration, dt)
    if len(times) > 1 and duration - times[-1] < 0.1 * dt:
        times = times[:-1]
    return np.append(times, duration)


def _grid(ss: np.ndarray) -> np.ndarray:
    """toppra grid: every knot of the spline plus midpoints, capped (its cost grows with the grid size)."""
    count = int(np.clip(2 * len(ss), 60, 400))
    return np.unique(np.concatenate([ss, np.linspace(ss[0], ss[-1], count)]))


_CONSTRAINTS: dict[bytes, list] = {}


def _constraints(v_lim: np.ndarray, a_lim: np.ndarray) -> list:
    """toppra constraint objects for these limits, reused: they hold only the limits (the path is passed
    to them per call) and building them formats a description string per joint (~0.1 ms each)."""
    key = np.concatenate([v_lim, a_lim]).tobytes()
    if key not in _CONSTRAINTS:
        if len(_CONSTRAINTS) >= 32:
            _CONSTRAINTS.clear()
        _CONSTRAINTS[key] = [constraint.JointVelocityConstraint(np.column_stack([-v_lim, v_lim])),
                             constraint.JointAccelerationConstraint(np.column_stack([-a_lim, a_lim]),
                                                                    discretization_scheme=_INTERPOLATION)]
    return _CONSTRAINTS[key]


def _toppra(ss, waypoints, v_lim, a_lim) -> ConstAccelTrajectory:
    path = ta.SplineInterpolator(ss, waypoints, bc_type="not-a-knot")
    instance = algo.TOPPRA(_constraints(v_lim, a_lim), path, gridpoints=_grid(ss),
                           parametrizer="ParametrizeConstAccel")
    instance.compute_parameterization(0.0, 0.0)
    data = instance.problem_data
    if data.return_code != algo.ParameterizationReturnCode.Ok or data.sd_vec is None:
        raise TrajectoryTimingError("toppra found no feasible time parameterization of the path")
    return ConstAccelTrajectory(path, data.gridpoints, data.sd_vec)


class ConstAccelTrajectory:
    """q(t / c) for toppra's grid solution: constant path acceleration on each grid interval.

    The same trajectory as toppra's `ParametrizeConstAccel` (tested against it), evaluated without its
    per-sample Python loop (which cost ~1.5 ms per 1000 samples, most of the timing budget). On interval
    i, s'' = u_i = (sd_{i+1}^2 - sd_i^2) / (2 ds_i), reached in dt_i = 2 ds_i / (sd_i + sd_{i+1}).
    `stretch` c >= 1 slows the whole trajectory uniformly: velocities / c, accelerations / c^2.
    """

    def __init__(self, path, gridpoints: np.ndarray, sd: np.ndarray, stretch: float = 1.0) -> None:
        self.path = path
        self.ss = np.asarray(gridpoints, float)
        self.sd = np.asarray(sd, float)
        ds = np.diff(self.ss)
        self.us = 0.5 * np.diff(self.sd ** 2) / ds
        self.ts = np.concatenate([[0.0], np.cumsum(2.0 * ds / (self.sd[:-1] + self.sd[1:]))])
        self.stretch = stretch

    def stretched(self, factor: float) -> ConstAccelTrajectory:
        """The same path, `factor` times slower again."""
        out = copy.copy(self)            # shares the grid arrays: only the stretch differs
        out.stretch = self.stretch * factor
        return out

    @property
    def duration(self) -> float:
        """[s]"""
        return float(self.ts[-1]) * self.stretch

    def __call__(self, times, order: int = 0) -> np.ndarray:
        """Positions (order 0), velocities (1) or accelerations (2) at `times` [s], shape (K, n)."""
        local = np.asarray(times, float) / self.stretch
        i = np.clip(np.searchsorted(self.ts, local, side="right") - 1, 0, len(self.us) - 1)
        dt = local - self.ts[i]
        u = self.us[i]
        sd = self.sd[i] + dt * u
        s = self.ss[i] + dt * self.sd[i] + 0.5 * dt * dt * u
        if order == 0:
            return self.path(s)
        if order == 1:
            return self.path(s, 1) * (sd / self.stretch)[:, None]
        if order == 2:
            return (self.path(s, 2) * sd[:, None] ** 2 + self.path(s, 1) * u[:, None]) / self.stretch ** 2
        raise InvalidInputError(f"order {order} must be 0, 1 or 2")


def _peak_ratios(trajectory, times, v_max, a_max) -> tuple[float, float]:
    qd, qdd = trajectory(times, 1), trajectory(times, 2)
    return float((np.abs(qd) / v_max).max()), float((np.abs(qdd) / a_max).max())


class TimedTrajectory(NamedTuple):
    """What `time_optimal` returns."""

    arrays: JointTrajectoryArrays          # sampled at the trajectory rate
    report: TimingReport                   # verification at the control rate
    trajectory: ConstAccelTrajectory       # q(t, order) at any time


def time_optimal(ss: np.ndarray, waypoints: np.ndarray, joint_names, v_max: np.ndarray, a_max: np.ndarray,
                 velocity_scaling: float = 1.0, acceleration_scaling: float = 1.0,
                 trajectory_rate_hz: float = 100.0, control_rate_hz: float = 500.0) -> TimedTrajectory:
    """Time-optimal trajectory through joint waypoints (M, n) parameterized by `ss` (M,), from rest to rest.

    Args:
        ss: strictly increasing path parameter of the waypoints.
        waypoints: joint positions [rad | m]; row 0 is the start state.
        joint_names: names, in column order.
        v_max, a_max: per-joint limits [rad/s], [rad/s^2], finite and > 0.
        velocity_scaling, acceleration_scaling: global fractions in (0, 1], checked by the caller
            (`CartesianPathPlanner.plan` is the edge that validates them).
        trajectory_rate_hz: sample rate of the returned arrays.
        control_rate_hz: rate of the verification sampling.

    Returns:
        TimedTrajectory: arrays, verification report and the continuous trajectory.

    Raises:
        TrajectoryTimingError: infeasible, non-finite limits, or an overshoot that re-timing cannot remove.
    """
    v_max = np.asarray(v_max, float) * velocity_scaling
    a_max = np.asarray(a_max, float) * acceleration_scaling
    bad = [joint_names[j] for j in range(len(v_max))
           if not (np.isfinite(v_max[j]) and np.isfinite(a_max[j]) and v_max[j] > 0 and a_max[j] > 0)]
    if bad:
        raise TrajectoryTimingError(f"joints {bad} have no finite positive velocity/acceleration limit; "
                                    "set max_joint_velocity / max_joint_acceleration")
    t0 = time.perf_counter()
    trajectory = _toppra(ss, waypoints, v_max, a_max)
    verify = 0.0
    for retimings in range(_MAX_RETIMINGS + 1):
        t1 = time.perf_counter()
        duration = trajectory.duration
        control_times = sample_times(duration, control_rate_hz)
        v_ratio, a_ratio = _peak_ratios(trajectory, control_times, v_max, a_max)
        verify += time.perf_counter() - t1
        if v_ratio <= 1.0 + RATIO_TOLERANCE and a_ratio <= 1.0 + RATIO_TOLERANCE:
            break
        # slow down uniformly by the measured overshoot: qd / c, qdd / c^2
        factor = max(v_ratio, np.sqrt(a_ratio), 1.0) * (1.0 + _RETIME_MARGIN)
        trajectory = trajectory.stretched(factor)
    else:
        raise TrajectoryTimingError(f"toppra overshoots the limits after {_MAX_RETIMINGS} re-timings "
                                    f"(|qd|/v_max {v_ratio:.4f}, |qdd|/a_max {a_ratio:.4f})")
    times = sample_times(duration, trajectory_rate_hz)
    positions = trajectory(times)
    positions[0] = waypoints[0]         # the first point is the start state, exactly
    arrays = JointTrajectoryArrays(tuple(joint_names), times, positions, trajectory(times, 1),
                                   trajectory(times, 2))
    report = TimingReport(duration, v_ratio, a_ratio, retimings=retimings,
                          compute_time=time.perf_counter() - t0 - verify, verify_time=verify)
    return TimedTrajectory(arrays, report, trajectory)
