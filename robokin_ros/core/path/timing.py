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
  at the control rate (the samples fall elsewhere on it). The limits used are never raised;
- with `played=True` (what the planners ask for) the returned points are also measured as a trajectory controller
  plays them (its quintic through the points, core/outgoing.py): the profile's acceleration steps overshoot there by
  up to ~37 %, so toppra runs again with the acceleration limits lowered by the overshoot (core/path/played.py).

Tool speed limits (`ToolSpeedLimit`): the tool twist along the path is J(q(s)) q'(s) sd, so each grid point
gets sd <= min(v_lin / |J_lin q'|, w_max / |J_ang q'|), a bound on toppra's x = sd^2 (`ToolSpeedBound`). Only
where the tool limit is tighter than the joints does it slow the path down. The verification measures
|J_lin qd| and |J_ang qd| at the control rate too, and the uniform stretch removes a tool overshoot as it
removes a joint velocity overshoot (tool speeds scale by 1/c).

Limits along the path (`LimitSchedule`, core/path/limit_schedule.py): the stretch boundaries join toppra's grid,
so every grid interval lies in one stretch; the joint limits become per-point rows (`VaryingVelocityBound`,
`VaryingAccelBound`), `IntervalAccelBound` takes each interval's stretch, `ToolSpeedBound` each point's tool
limits, and the verification compares every control sample against the limits at its own s(t).
"""
from __future__ import annotations

import logging
import time
from typing import NamedTuple

import numpy as np

from robokin_ros.core.errors import InvalidInputError, TrajectoryTimingError
from robokin_ros.core.path.budget import UNLIMITED, PlanningBudget
from robokin_ros.core.path.const_accel import ConstAccelTrajectory, ControlSamples
from robokin_ros.core.path.played import MAX_DERATINGS, PlayedRatios, derated, played_ratios, sampled_points
from robokin_ros.core.path.result import JointTrajectoryArrays, TimingReport
from robokin_ros.core.path.toppra_constraints import (
    IntervalAccelBound,
    LimitLookup,
    ToolSpeedBound,
    ToolSpeedLimit,
    limit_vector,
    scheduled_constraints,
    tool_speeds,
)
from robokin_ros.core.path.toppra_import import import_toppra

ta = import_toppra()          # matplotlib stays unloaded (see toppra_import.py)
algo, constraint = ta.algorithm, ta.constraint

logging.getLogger("toppra").setLevel(logging.WARNING)

RATIO_TOLERANCE = 1e-3
_MAX_RETIMINGS = 8
_RETIME_MARGIN = 2e-3
_SPLINE_MARGIN = 0.02
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


def _grid(ss: np.ndarray, schedule: LimitLookup | None = None) -> np.ndarray:
    """toppra grid: every knot of the spline plus midpoints, capped (its cost grows with the grid size), plus the
    schedule's stretch boundaries inside the path. A boundary closer to a knot than the schedule's boundary
    tolerance is that knot (no sliver interval: the schedule treats both as the boundary); evenly spaced points
    that close to a boundary give way to it."""
    count = int(np.clip(2 * len(ss), 60, 400))
    even = np.linspace(ss[0], ss[-1], count)
    if schedule is None:
        return np.unique(np.concatenate([ss, even]))
    bounds, tol = schedule.bounds, schedule.tolerance
    inner = bounds[np.abs(ss[:, None] - bounds).min(axis=0) > tol]                    # not on a knot
    inner = inner[(inner > ss[0]) & (inner < ss[-1])]
    near = np.abs(even[:, None] - bounds).min(axis=1) <= tol
    return np.unique(np.concatenate([ss, even[~near], inner]))


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


class _PolledSolver:
    """toppra's solver wrapper, checking the planning budget every TOPPRA_CHECK stage problems: toppra solves one
    small LP per grid point and pass in a Python loop, seconds in all on a long section."""

    def __init__(self, solver, budget: PlanningBudget) -> None:
        self._solver, self._budget, self._calls = solver, budget, 0

    def __getattr__(self, name: str):
        return getattr(self._solver, name)

    def solve_stagewise_optim(self, *args):
        self._calls += 1
        if self._calls % TOPPRA_CHECK == 0:
            self._budget.check("timing")
        return self._solver.solve_stagewise_optim(*args)


TOPPRA_CHECK = 256       # stage problems between budget checks (~5 ms)
_STAGES_PER_GRID_POINT = 3      # toppra solves ~3 stage problems per grid point (measured: 177 for 60 points)


def _toppra(ss, waypoints, v_lim, a_lim, tool: ToolSpeedLimit | None, within: bool = True,
            schedule: LimitLookup | None = None, budget: PlanningBudget = UNLIMITED) -> ConstAccelTrajectory:
    path = ta.SplineInterpolator(ss, waypoints, bc_type="not-a-knot")
    if schedule is None:
        constraints = _constraints(v_lim, a_lim, within)
        if tool is not None:
            constraints = [*constraints, ToolSpeedBound(tool, len(v_lim))]
    else:
        constraints = scheduled_constraints(v_lim, a_lim, tool, within, schedule)
    budget.check("timing")
    # building the problem evaluates every constraint at every grid point in one go (~5 us per point)
    instance = algo.TOPPRA(constraints, path, gridpoints=_grid(ss, schedule), parametrizer="ParametrizeConstAccel")
    if budget is not UNLIMITED and _STAGES_PER_GRID_POINT * len(instance.gridpoints) > TOPPRA_CHECK:
        # a run of fewer stage problems than TOPPRA_CHECK would never reach a check inside: the ones around it do
        budget.check("timing")
        instance.solver_wrapper = _PolledSolver(instance.solver_wrapper, budget)
    instance.compute_parameterization(0.0, 0.0)
    data = instance.problem_data
    if data.return_code != algo.ParameterizationReturnCode.Ok or data.sd_vec is None:
        raise TrajectoryTimingError("toppra found no feasible time parameterization of the path")
    trajectory = ConstAccelTrajectory(path, data.gridpoints, data.sd_vec)
    for bound in constraints:
        # the tool speeds per unit s at the grid points, which `binding_limits` measures again otherwise
        if isinstance(bound, ToolSpeedBound) and bound.grid_speeds is not None and \
                np.array_equal(bound.grid_speeds[0], trajectory.ss):
            trajectory.grid_tool_speeds = (bound.tool.chain, bound.grid_speeds[1])
    return trajectory


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


def _peaks(trajectory, times, v_max, a_max, tool: ToolSpeedLimit | None,
           schedule: LimitLookup | None = None) -> tuple[Peaks, tuple, np.ndarray | None]:
    """Peaks against the limits at each sample's own s(t) when a schedule is given, the joint positions,
    velocities and accelerations (K, n) and the tool speeds (K, 2) (None without `tool`) they were measured on."""
    s, q, qd, qdd = trajectory.states(times)
    tool_limits = None
    if schedule is not None:
        v_max, a_max, tool_limits = schedule.limits_at(s, v_max, a_max)                 # (K, n), (K, n), (K, 2)
    peaks = Peaks(float((np.abs(qd) / v_max).max()), float((np.abs(qdd) / a_max).max()))
    if tool is None:
        return peaks, (q, qd, qdd), None
    peaks, speeds = _with_tool_peaks(peaks, trajectory, times, tool, qd, tool_limits, q)
    return peaks, (q, qd, qdd), speeds


def _with_tool_peaks(peaks: Peaks, trajectory, times, tool: ToolSpeedLimit, qd=None, limits=None,
                     q=None) -> tuple[Peaks, np.ndarray]:
    """`limits` (K, 2) per sample, None = the tool's own; `qd`, `q` at `times` when the caller has them. Also
    returns the tool speeds (K, 2)."""
    qd = trajectory(times, 1) if qd is None else qd
    speeds = tool_speeds(tool.chain, trajectory(times) if q is None else q, qd)        # (K, 2)
    speed = speeds.max(axis=0)                                                         # (2,)
    ratio = speed / limit_vector(tool) if limits is None else speeds / limits          # 0 where unlimited
    return peaks._replace(tool_ratio=float(ratio.max()), tool_speed=float(speed[0]),
                          tool_angular_speed=float(speed[1])), speeds


def binding_limits(trajectory: ConstAccelTrajectory, v_max, a_max, tool: ToolSpeedLimit | None = None,
                   schedule: LimitLookup | None = None):
    """The limit each grid interval of toppra's solution runs at (within 1 %), shape (N - 1,) int:
    j = velocity of joint j, n + j = acceleration of joint j, 2n = tool speed, 2n + 1 = tool angular speed,
    -1 = none. A velocity binds an interval when it is at its limit at both ends; an acceleration when it
    is at its limit at either end (toppra's interpolation scheme constrains both). With a schedule, each grid
    point is measured against its own limits (the tool's limits are then the schedule's)."""
    return _grid_ratios(trajectory, v_max, a_max, tool, schedule).binding()


class GridRatios(NamedTuple):
    """toppra's solution at its grid points over the limits: speeds per point, accelerations per interval."""

    speed: np.ndarray          # (N, n [+ 2]) |qd| / v_max per joint [, tool speed / limit, angular / limit]
    accel: np.ndarray          # (N - 1, n) |qdd| / a_max, the larger of the interval's two ends

    def binding(self) -> np.ndarray:
        """`binding_limits`' labels (N - 1,)."""
        n = self.accel.shape[1]
        speed = np.minimum(self.speed[:-1], self.speed[1:])                            # (N - 1, .)
        ratios = np.hstack([speed[:, :n], self.accel, speed[:, n:]])                   # joint v, joint a, tool
        label = ratios.argmax(axis=1)
        return np.where(ratios.max(axis=1) >= 1.0 - _ACTIVE, label, -1)

    def speeds_free(self) -> bool:
        """No velocity nor tool speed limit within 1 % of its bound at any grid point: the solution is then
        the acceleration-limited optimum, which lower acceleration limits only slow down uniformly."""
        return bool(self.speed.size == 0 or self.speed.max() < 1.0 - _ACTIVE)


def _grid_ratios(trajectory: ConstAccelTrajectory, v_max, a_max, tool: ToolSpeedLimit | None,
                 schedule: LimitLookup | None) -> GridRatios:
    ss, sd, us = trajectory.ss, trajectory.sd, trajectory.us
    dq, ddq = trajectory.path(ss, 1), trajectory.path(ss, 2)                           # (N, n)
    tool_limits = None if tool is None else limit_vector(tool)
    if schedule is not None:
        v_max, a_max, tool_limits = schedule.limits_at(ss, v_max, a_max)                # (N, n), (N, n), (N, 2)
    per_s = np.abs(dq) / v_max
    if tool is not None:
        known = getattr(trajectory, "grid_tool_speeds", None)
        speeds = (known[1] if known is not None and known[0] is tool.chain
                  else tool_speeds(tool.chain, trajectory.path(ss), dq))                       # (N, 2)
        per_s = np.hstack([per_s, speeds / tool_limits])
    a_max = np.broadcast_to(a_max, dq.shape)
    accel = np.maximum(np.abs(ddq[:-1] * sd[:-1, None] ** 2 + dq[:-1] * us[:, None]) / a_max[:-1],
                       np.abs(ddq[1:] * sd[1:, None] ** 2 + dq[1:] * us[:, None]) / a_max[1:])
    return GridRatios(per_s * sd[:, None], accel)


def _limit_name(label: int, joint_names) -> str:
    n = len(joint_names)
    if label < 0:
        return ""
    if label < 2 * n:
        return f"{('velocity', 'acceleration')[label // n]} of {joint_names[label % n]}"
    return ("tool speed", "tool angular speed")[label - 2 * n]


def _limited_by(trajectory: ConstAccelTrajectory, labels: np.ndarray, joint_names) -> str:
    """The limit that binds the longest share of the duration ("" when none binds), from `binding_limits`."""
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
                        limited_by=max(reports, key=lambda r: r.duration).limited_by,
                        played_velocity_ratio=worst("played_velocity_ratio"),
                        played_acceleration_ratio=worst("played_acceleration_ratio"),
                        played_stretch=max(r.played_stretch for r in reports),
                        planned_acceleration_share=min(r.planned_acceleration_share for r in reports))


def _tool_limited(ss, tool: ToolSpeedLimit | None, schedule: LimitLookup | None) -> bool:
    """Whether the tool speed is limited (else it is only measured, when a chain is given); checks the limits."""
    if schedule is not None:
        schedule.check_covers(ss[0], ss[-1])
        if schedule.has_tool_limits and tool is None:
            raise InvalidInputError("the limit schedule limits the tool speed but no tool chain was given "
                                    "(pass tool=ToolSpeedLimit(chain))")
        return tool is not None and schedule.has_tool_limits
    if tool is not None and not (tool.linear >= 0 and tool.angular >= 0):
        raise TrajectoryTimingError(f"tool speed limits {tool.linear} m/s, {tool.angular} rad/s must be >= 0 "
                                    "(0 = no limit)")
    return tool is not None and (tool.linear > 0 or tool.angular > 0)


class TimedTrajectory(NamedTuple):
    """What `time_optimal` returns."""

    arrays: JointTrajectoryArrays          # sampled at the trajectory rate
    report: TimingReport                   # verification at the control rate
    trajectory: ConstAccelTrajectory       # q(t, order) at any time


def time_optimal(ss: np.ndarray, waypoints: np.ndarray, joint_names, v_max: np.ndarray, a_max: np.ndarray,
                 velocity_scaling: float = 1.0, acceleration_scaling: float = 1.0,
                 trajectory_rate_hz: float = 100.0, control_rate_hz: float = 500.0,
                 tool: ToolSpeedLimit | None = None, bound_within_intervals: bool = True,
                 schedule: LimitLookup | None = None, played: bool = False,
                 budget: PlanningBudget = UNLIMITED) -> TimedTrajectory:
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
        schedule: limits per stretch of `ss`, covering it: at s the joint limits are v_max * velocity_scaling *
            schedule.velocity_scaling[k] (the same for accelerations) and the tool limits are the schedule's;
            `tool` then only supplies the chain (its linear / angular are ignored) and is required when a
            stretch limits the tool. The report's peak tool speed ratio is against each sample's own limit.
        played: also keep the spline a joint_trajectory_controller plays through the returned points within the
            limits (core/path/played.py): what every trajectory sent to a controller needs; False times as toppra
            and the control-rate verification alone say (the report's played ratios are still measured).
        budget: checked every `TOPPRA_CHECK` of toppra's stages and before every re-timing (PlanningStopped).

    Returns:
        TimedTrajectory: arrays, verification report and the continuous trajectory.

    Raises:
        TrajectoryTimingError: infeasible, non-finite limits, or an overshoot that re-timing cannot remove.
        InvalidInputError: a schedule that does not cover `ss`, or limits the tool without a chain.
    """
    v_max = np.asarray(v_max, float) * velocity_scaling
    a_max = np.asarray(a_max, float) * acceleration_scaling
    bad = [joint_names[j] for j in range(len(v_max))
           if not (np.isfinite(v_max[j]) and np.isfinite(a_max[j]) and v_max[j] > 0 and a_max[j] > 0)]
    if bad:
        raise TrajectoryTimingError(f"joints {bad} have no finite positive velocity/acceleration limit; "
                                    "set max_joint_velocity / max_joint_acceleration")
    if schedule is not None and tool is not None:
        tool = tool._replace(linear=0.0, angular=0.0)      # the schedule's tool limits replace the tool's own
    limited = _tool_limited(ss, tool, schedule)
    rates = (trajectory_rate_hz, control_rate_hz, budget)
    share = np.ones(len(v_max))
    solved = None
    for run in range(MAX_DERATINGS + 1 if played else 1):
        timed, ratios, solved = _timed(ss, waypoints, joint_names, v_max, a_max, share, tool, limited,
                                       bound_within_intervals, schedule, rates, played, run == MAX_DERATINGS,
                                       solved)
        if not played or run == MAX_DERATINGS or ratios.acceleration.max() <= 1.0 + RATIO_TOLERANCE:
            return timed
        share = derated(share, ratios.acceleration)
    raise AssertionError("unreachable: the last run stretches until it fits")  # pragma: no cover


class Solved(NamedTuple):
    """A run's toppra solution before any stretch, the acceleration shares it was planned with and its grid
    ratios: what the next run, planned with lower shares, may reuse instead of running toppra again."""

    trajectory: ConstAccelTrajectory
    share: np.ndarray                  # (n,)
    ratios: GridRatios


def _solve(ss, waypoints, v_max, a_max, share, tool, within: bool, schedule, budget: PlanningBudget,
           before: Solved | None) -> Solved:
    """toppra's solution with the acceleration limits times `share`. When the solution `before` touched no speed
    limit (`GridRatios.speeds_free`) and the shares are all lowered by one factor k, the new optimum is that
    solution slowed down uniformly by 1 / sqrt(k) (the acceleration-limited problem is homogeneous: sd^2 and s''
    scale by k, and speeds only drop), so it is stretched instead of solved again: a toppra run saved per derating
    (pathological paths of hundreds of tiny rest-to-rest sections paid it on every section: issue 24, item 9)."""
    if before is not None and before.ratios.speeds_free():
        k = share / before.share                                                       # (n,)
        if np.ptp(k) <= 1e-12 * k.max() and 0.0 < k[0] <= 1.0:
            # the grid ratios against the lowered limits are those of before: accelerations fell by k as well
            return Solved(before.trajectory.stretched(1.0 / np.sqrt(k[0])), share, before.ratios)
    a_plan = a_max * share
    trajectory = _toppra(ss, waypoints, v_max, a_plan, tool, within, schedule, budget)
    budget.check("timing")
    return Solved(trajectory, share, _grid_ratios(trajectory, v_max, a_plan, tool, schedule))


def _timed(ss, waypoints, joint_names, v_max, a_max, share, tool, limited: bool, within: bool, schedule,
           rates: tuple, played_too: bool, last: bool,
           before: Solved | None = None) -> tuple[TimedTrajectory, PlayedRatios, Solved]:
    """toppra with the acceleration limits times `share` (n,), verified against the limits at the control rate
    and (`played_too`) on the controller's spline through the points; stretched uniformly until it fits, except
    that a played acceleration overshoot is left to the caller's next run (returned) unless this is the `last`.
    `rates`: (trajectory rate, control rate [Hz], budget); `before`: the previous run's solution (`_solve`)."""
    t0 = time.perf_counter()
    budget = rates[2]
    budget.check("timing")
    solved = _solve(ss, waypoints, v_max, a_max, share, tool if limited else None, within, schedule, budget, before)
    trajectory = solved.trajectory
    binding = solved.ratios.binding()
    limited_by = _limited_by(trajectory, binding, joint_names)
    verify, retimings, played_stretch = 0.0, 0, 1.0
    for attempt in range(_MAX_RETIMINGS + 1):
        budget.check("timing")
        t1 = time.perf_counter()
        duration = trajectory.duration
        control_times = sample_times(duration, rates[1])
        peaks, (q, qd, qdd), speeds = _peaks(trajectory, control_times, v_max, a_max, tool if limited else None,
                                             schedule)
        budget.check("timing")
        arrays = sampled_points(trajectory, waypoints[0], joint_names, sample_times(duration, rates[0]))
        played = played_ratios(trajectory, arrays, v_max, a_max, schedule, budget)
        budget.check("timing")
        played_worst = (played.worst() if last else float(max(played.velocity.max(), 1.0))) if played_too else 1.0
        fits = peaks.worst() <= 1.0 + RATIO_TOLERANCE and played_worst <= 1.0 + RATIO_TOLERANCE
        if tool is not None and not limited and fits:
            # no tool limit: its speed is only reported, so it is measured once, on the final trajectory
            peaks, speeds = _with_tool_peaks(peaks, trajectory, control_times, tool, qd, q=q)
        verify += time.perf_counter() - t1
        if fits:
            break
        # slow down uniformly by the measured overshoot: qd / c, qdd / c^2, tool speeds / c (the controller's spline
        # through the new points overshoots a little differently: a margin growing each round)
        factor = max(peaks.worst(), played_worst) * (1.0 + _RETIME_MARGIN) * (1.0 + _SPLINE_MARGIN * attempt)
        if peaks.worst() > 1.0 + RATIO_TOLERANCE:
            retimings += 1
        else:
            played_stretch *= factor
        trajectory = trajectory.stretched(factor)
    else:
        raise TrajectoryTimingError(f"the timed trajectory overshoots the limits after {_MAX_RETIMINGS} re-timings "
                                    f"(|qd|/v_max {peaks.velocity_ratio:.4f}, |qdd|/a_max "
                                    f"{peaks.acceleration_ratio:.4f}, tool speed/limit {peaks.tool_ratio:.4f}; on "
                                    f"the controller's spline {played.velocity.max():.4f}, "
                                    f"{played.acceleration.max():.4f})")
    # the stretch only rescales time: the grid intervals bind the same limits
    trajectory.verified = ControlSamples(control_times, qd, qdd, speeds, binding, v_max, a_max, schedule,
                                         None if tool is None else tool.chain)
    report = TimingReport(duration, peaks.velocity_ratio, peaks.acceleration_ratio, retimings=retimings,
                          compute_time=time.perf_counter() - t0 - verify, verify_time=verify,
                          peak_tool_speed=peaks.tool_speed, peak_tool_angular_speed=peaks.tool_angular_speed,
                          peak_tool_speed_ratio=peaks.tool_ratio, limited_by=limited_by,
                          played_velocity_ratio=float(played.velocity.max()),
                          played_acceleration_ratio=float(played.acceleration.max()), played_stretch=played_stretch,
                          planned_acceleration_share=float(share.min()))
    return TimedTrajectory(arrays, report, trajectory), played, solved
