"""Time parameterization: time-optimal (toppra) along the downsampled joint spline, verified, never trusted.

toppra enforces the limits on its grid; between grid points the trajectory can overshoot them (MoveIt users
report up to 2.75x). Two measures, then a verification that is never relaxed:
- the acceleration constraint uses toppra's first-order *interpolation* discretization (each grid interval
  is constrained at both of its ends, not only at its start): on the benchmark paths the overshoot drops
  from 1.35-1.7x (collocation) to 1.00-1.25x for the same grid and the same toppra cost;
- inside each grid interval the joint acceleration q''(s) sd^2 + q'(s) sdd is a quadratic in s (cubic spline,
  sd^2 linear in s); `IntervalAccelBound` bounds its peak, not only its ends, so the solution needs no stretch
  where it used to overshoot by 1.02x (Panda) / 1.10x (UR5) on the bench rectangles;
- the result is sampled at the control rate and the peak |qd|/v_max and |qdd|/a_max are measured; if either
  exceeds 1 + 1e-3, the trajectory is slowed down uniformly in time, q_c(t) = q(t / c): velocities scale
  by 1/c and accelerations by 1/c^2 everywhere, so c = max(v ratio, sqrt(a ratio)) (plus a small margin)
  removes the measured overshoot without a second toppra run; the stretched trajectory is verified again
  at the control rate (the samples fall elsewhere on it). The limits used are never raised.

Tool speed limits (`ToolSpeedLimit`): the tool twist along the path is J(q(s)) q'(s) sd, so each grid point
gets sd <= min(v_lin / |J_lin q'|, w_max / |J_ang q'|), a bound on toppra's x = sd^2 (`ToolSpeedBound`). Only
where the tool limit is tighter than the joints does it slow the path down. The verification measures
|J_lin qd| and |J_ang qd| at the control rate too, and the uniform stretch removes a tool overshoot as it
removes a joint velocity overshoot (tool speeds scale by 1/c).
"""
from __future__ import annotations

import copy
import logging
import time
from typing import NamedTuple

import numpy as np

from robokin_ros.core.errors import InvalidInputError, TrajectoryTimingError
from robokin_ros.core.path.result import JointTrajectoryArrays, TimingReport
from robokin_ros.core.path.toppra_constraints import (
    IntervalAccelBound,
    ToolSpeedBound,
    ToolSpeedLimit,
    limit_vector,
    tool_speeds,
)
from robokin_ros.core.path.toppra_import import import_toppra

ta = import_toppra()          # matplotlib stays unloaded (see toppra_import.py)
algo, constraint = ta.algorithm, ta.constraint

logging.getLogger("toppra").setLevel(logging.WARNING)

RATIO_TOLERANCE = 1e-3
_MAX_RETIMINGS = 4
_RETIME_MARGIN = 2e-3
_INTERPOLATION = constraint.DiscretizationType.Interpolation
_ACTIVE = 1e-2           # a limit binds an interval when it is used to within 1 %


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


def _constraints(v_lim: np.ndarray, a_lim: np.ndarray, within: bool = True) -> list:
    """toppra constraint objects for these limits, reused: they hold only the limits (the path is passed
    to them per call) and building them formats a description string per joint (~0.1 ms each). `within`
    adds `IntervalAccelBound`."""
    key = np.concatenate([v_lim, a_lim, [float(within)]]).tobytes()
    if key not in _CONSTRAINTS:
        if len(_CONSTRAINTS) >= 32:
            _CONSTRAINTS.clear()
        _CONSTRAINTS[key] = [constraint.JointVelocityConstraint(np.column_stack([-v_lim, v_lim])),
                             constraint.JointAccelerationConstraint(np.column_stack([-a_lim, a_lim]),
                                                                    discretization_scheme=_INTERPOLATION)]
        if within:
            _CONSTRAINTS[key].append(IntervalAccelBound(a_lim))
    return _CONSTRAINTS[key]


def _toppra(ss, waypoints, v_lim, a_lim, tool: ToolSpeedLimit | None, within: bool = True) -> ConstAccelTrajectory:
    path = ta.SplineInterpolator(ss, waypoints, bc_type="not-a-knot")
    constraints = _constraints(v_lim, a_lim, within)
    if tool is not None:
        constraints = [*constraints, ToolSpeedBound(tool, len(v_lim))]
    instance = algo.TOPPRA(constraints, path, gridpoints=_grid(ss),
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


class Peaks(NamedTuple):
    """Measured peaks of a trajectory at the control rate."""

    velocity_ratio: float              # max |qd| / v_max
    acceleration_ratio: float          # max |qdd| / a_max
    tool_ratio: float = 0.0            # max tool speed / its limit over the set limits (0 = none set)
    tool_speed: float = float("nan")   # [m/s] (nan = no tool chain given)
    tool_angular_speed: float = float("nan")  # [rad/s]

    def worst(self) -> float:
        """The stretch that would bring every ratio to 1: velocities scale by 1/c, accelerations by 1/c^2."""
        return max(self.velocity_ratio, np.sqrt(self.acceleration_ratio), self.tool_ratio, 1.0)


def _peaks(trajectory, times, v_max, a_max, tool: ToolSpeedLimit | None) -> Peaks:
    qd, qdd = trajectory(times, 1), trajectory(times, 2)
    peaks = Peaks(float((np.abs(qd) / v_max).max()), float((np.abs(qdd) / a_max).max()))
    return peaks if tool is None else _with_tool_peaks(peaks, trajectory, times, tool, qd)


def _with_tool_peaks(peaks: Peaks, trajectory, times, tool: ToolSpeedLimit, qd=None) -> Peaks:
    qd = trajectory(times, 1) if qd is None else qd
    speed = tool_speeds(tool.chain, trajectory(times), qd).max(axis=0)                 # (2,)
    ratio = speed / limit_vector(tool)                                                 # 0 where unlimited
    return peaks._replace(tool_ratio=float(ratio.max()), tool_speed=float(speed[0]),
                          tool_angular_speed=float(speed[1]))


def binding_limits(trajectory: ConstAccelTrajectory, v_max, a_max, tool: ToolSpeedLimit | None = None):
    """The limit each grid interval of toppra's solution runs at (within 1 %), shape (N - 1,) int:
    j = velocity of joint j, n + j = acceleration of joint j, 2n = tool speed, 2n + 1 = tool angular speed,
    -1 = none. A velocity binds an interval when it is at its limit at both ends; an acceleration when it
    is at its limit at either end (toppra's interpolation scheme constrains both)."""
    ss, sd, us = trajectory.ss, trajectory.sd, trajectory.us
    dq, ddq = trajectory.path(ss, 1), trajectory.path(ss, 2)                           # (N, n)
    per_s = np.abs(dq) / v_max
    if tool is not None:
        per_s = np.hstack([per_s, tool_speeds(tool.chain, trajectory.path(ss), dq) / limit_vector(tool)])
    at_speed = per_s * sd[:, None]                                                      # (N, n [+ 2])
    speed = np.minimum(at_speed[:-1], at_speed[1:])                                    # (N - 1, .)
    accel = np.maximum(np.abs(ddq[:-1] * sd[:-1, None] ** 2 + dq[:-1] * us[:, None]),
                       np.abs(ddq[1:] * sd[1:, None] ** 2 + dq[1:] * us[:, None])) / a_max
    n = len(v_max)
    ratios = np.hstack([speed[:, :n], accel, speed[:, n:]])                           # joint v, joint a, tool
    label = ratios.argmax(axis=1)
    return np.where(ratios.max(axis=1) >= 1.0 - _ACTIVE, label, -1)


def _limit_name(label: int, joint_names) -> str:
    n = len(joint_names)
    if label < 0:
        return ""
    if label < 2 * n:
        return f"{('velocity', 'acceleration')[label // n]} of {joint_names[label % n]}"
    return ("tool speed", "tool angular speed")[label - 2 * n]


def _limited_by(trajectory: ConstAccelTrajectory, v_max, a_max, tool, joint_names) -> str:
    """The limit that binds the longest share of the duration ("" when none binds)."""
    labels = binding_limits(trajectory, v_max, a_max, tool)
    weights = np.bincount(labels + 1, weights=np.diff(trajectory.ts))                  # slot 0 = none
    if len(weights) < 2 or weights[1:].max() <= 0:
        return ""
    return _limit_name(int(weights[1:].argmax()), joint_names)


def join_reports(reports, duration: float) -> TimingReport:
    """One report for rest-to-rest sections played one after the other: the worst peaks, summed costs, the
    binding limit of the longest section."""
    def worst(name: str) -> float:
        values = [getattr(r, name) for r in reports if not np.isnan(getattr(r, name))]
        return max(values) if values else float("nan")
    return TimingReport(duration, worst("peak_velocity_ratio"), worst("peak_acceleration_ratio"),
                        retimings=max(r.retimings for r in reports),
                        compute_time=sum(r.compute_time for r in reports),
                        verify_time=sum(r.verify_time for r in reports),
                        peak_tool_speed=worst("peak_tool_speed"),
                        peak_tool_angular_speed=worst("peak_tool_angular_speed"),
                        peak_tool_speed_ratio=worst("peak_tool_speed_ratio"),
                        limited_by=max(reports, key=lambda r: r.duration).limited_by)


class TimedTrajectory(NamedTuple):
    """What `time_optimal` returns."""

    arrays: JointTrajectoryArrays          # sampled at the trajectory rate
    report: TimingReport                   # verification at the control rate
    trajectory: ConstAccelTrajectory       # q(t, order) at any time


def time_optimal(ss: np.ndarray, waypoints: np.ndarray, joint_names, v_max: np.ndarray, a_max: np.ndarray,
                 velocity_scaling: float = 1.0, acceleration_scaling: float = 1.0,
                 trajectory_rate_hz: float = 100.0, control_rate_hz: float = 500.0,
                 tool: ToolSpeedLimit | None = None, bound_within_intervals: bool = True) -> TimedTrajectory:
    """Time-optimal trajectory through joint waypoints (M, n) parameterized by `ss` (M,), from rest to rest.

    Args:
        ss: strictly increasing path parameter of the waypoints.
        waypoints: joint positions [rad | m]; row 0 is the start state.
        joint_names: names, in column order.
        v_max, a_max: per-joint limits [rad/s], [rad/s^2], finite and > 0.
        velocity_scaling, acceleration_scaling: global fractions in (0, 1], checked by the caller
            (`CartesianPathPlanner.plan` is the edge that validates them). They scale the joint limits only.
        trajectory_rate_hz: sample rate of the returned arrays.
        control_rate_hz: rate of the verification sampling.
        tool: tool speed limits (absolute, not scaled) and the chain to measure them; None = no tool limit
            and no tool speed in the report (with limits of 0 the tool speed is measured, not limited).
        bound_within_intervals: bound the joint accelerations inside toppra's grid intervals too
            (`IntervalAccelBound`); False leaves their overshoot to the uniform stretch (for comparison).

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
    if tool is not None and not (tool.linear >= 0 and tool.angular >= 0):
        raise TrajectoryTimingError(f"tool speed limits {tool.linear} m/s, {tool.angular} rad/s must be >= 0 "
                                    "(0 = no limit)")
    limited = tool is not None and (tool.linear > 0 or tool.angular > 0)
    t0 = time.perf_counter()
    trajectory = _toppra(ss, waypoints, v_max, a_max, tool if limited else None, bound_within_intervals)
    limited_by = _limited_by(trajectory, v_max, a_max, tool if limited else None, joint_names)
    verify = 0.0
    for retimings in range(_MAX_RETIMINGS + 1):
        t1 = time.perf_counter()
        duration = trajectory.duration
        control_times = sample_times(duration, control_rate_hz)
        peaks = _peaks(trajectory, control_times, v_max, a_max, tool if limited else None)
        if tool is not None and not limited and peaks.worst() <= 1.0 + RATIO_TOLERANCE:
            # no tool limit: its speed is only reported, so it is measured once, on the final trajectory
            peaks = _with_tool_peaks(peaks, trajectory, control_times, tool)
        verify += time.perf_counter() - t1
        if peaks.worst() <= 1.0 + RATIO_TOLERANCE:
            break
        # slow down uniformly by the measured overshoot: qd / c, qdd / c^2, tool speeds / c
        trajectory = trajectory.stretched(peaks.worst() * (1.0 + _RETIME_MARGIN))
    else:
        raise TrajectoryTimingError(f"toppra overshoots the limits after {_MAX_RETIMINGS} re-timings "
                                    f"(|qd|/v_max {peaks.velocity_ratio:.4f}, |qdd|/a_max "
                                    f"{peaks.acceleration_ratio:.4f}, tool speed/limit {peaks.tool_ratio:.4f})")
    times = sample_times(duration, trajectory_rate_hz)
    positions = trajectory(times)
    positions[0] = waypoints[0]         # the first point is the start state, exactly
    arrays = JointTrajectoryArrays(tuple(joint_names), times, positions, trajectory(times, 1),
                                   trajectory(times, 2))
    report = TimingReport(duration, peaks.velocity_ratio, peaks.acceleration_ratio, retimings=retimings,
                          compute_time=time.perf_counter() - t0 - verify, verify_time=verify,
                          peak_tool_speed=peaks.tool_speed, peak_tool_angular_speed=peaks.tool_angular_speed,
                          peak_tool_speed_ratio=peaks.tool_ratio, limited_by=limited_by)
    return TimedTrajectory(arrays, report, trajectory)
