"""One toppra run of a rest-to-rest section and what its solution says.

- the run: the time-optimal profile on a grid over the joint spline, and its reuse, a run with lower acceleration
  limits that toppra need not solve again (`solve`);
- the trajectory toppra's grid solution describes, evaluated at any time (`ConstAccelTrajectory`): constant path
  acceleration on each grid interval, optionally stretched uniformly in time; and the control samples its
  verification kept (`ControlSamples`);
- the solution at its own grid points over the limits (`grid_ratios`): which limit each grid interval runs at (the
  report's `limited_by`, the limit schedule's per-stretch names) and whether any speed limit is touched at all
  (what lets a derated run be the first solution stretched).
"""
from __future__ import annotations

import copy
import logging
from typing import NamedTuple

import numpy as np

from robokin_ros.core.errors import InvalidInputError, TrajectoryTimingError
from robokin_ros.core.path.budget import UNLIMITED, PlanningBudget
from robokin_ros.core.path.toppra_constraints import (
    IntervalAccelBound,
    LimitLookup,
    ToolSpeedBound,
    ToolSpeedLimit,
    import_toppra,
    limit_vector,
    scheduled_constraints,
    tool_speeds,
)

ta = import_toppra()          # matplotlib stays unloaded (see toppra_constraints.py)
algo, constraint = ta.algorithm, ta.constraint

logging.getLogger("toppra").setLevel(logging.WARNING)

_INTERPOLATION = constraint.DiscretizationType.Interpolation
TOPPRA_CHECK = 256       # stage problems between budget checks (~5 ms)
_STAGES_PER_GRID_POINT = 3      # toppra solves ~3 stage problems per grid point (measured: 177 for 60 points)
STRAIGHT_GRID = 40       # grid points on a two-knot section (see `grid`)


def grid(ss: np.ndarray, schedule: LimitLookup | None = None) -> np.ndarray:
    """toppra grid: every knot of the spline plus midpoints, capped (its cost grows with the grid size), plus the
    schedule's stretch boundaries inside the path. A boundary closer to a knot than the schedule's boundary
    tolerance is that knot (no sliver interval: the schedule treats both as the boundary); evenly spaced points
    that close to a boundary give way to it. A spline of two knots is a straight line in joint space, along which
    the joint limits are the same everywhere: the grid only places the switch from accelerating to braking, and
    `STRAIGHT_GRID` points place it as well as 60 (0.004 % of the duration on the bench's 1 mm square loops) for
    two thirds of toppra's cost (hundreds of such sections: issue 24, item 9)."""
    count = STRAIGHT_GRID if len(ss) == 2 else int(np.clip(2 * len(ss), 60, 400))
    even = np.linspace(ss[0], ss[-1], count)
    if schedule is None:
        return np.unique(np.concatenate([ss, even]))
    bounds, tol = schedule.bounds, schedule.tolerance
    inner = bounds[np.abs(ss[:, None] - bounds).min(axis=0) > tol]                    # not on a knot
    inner = inner[(inner > ss[0]) & (inner < ss[-1])]
    near = np.abs(even[:, None] - bounds).min(axis=1) <= tol
    return np.unique(np.concatenate([ss, even[~near], inner]))


_CONSTRAINTS: dict[bytes, list] = {}


def joint_constraints(v_lim: np.ndarray, a_lim: np.ndarray, within: bool = True) -> list:
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


class PolledSolver:
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


def run_toppra(ss, waypoints, v_lim, a_lim, tool: ToolSpeedLimit | None, within: bool = True,
               schedule: LimitLookup | None = None, budget: PlanningBudget = UNLIMITED,
               extra: tuple = ()) -> ConstAccelTrajectory:
    """toppra's time-optimal solution from rest to rest along the not-a-knot spline through `waypoints` at `ss`;
    `extra`: more constraint objects (the jerk-limited timing's speed caps)."""
    path = ta.SplineInterpolator(ss, waypoints, bc_type="not-a-knot")
    if schedule is None:
        constraints = joint_constraints(v_lim, a_lim, within)
        if tool is not None:
            constraints = [*constraints, ToolSpeedBound(tool, len(v_lim))]
    else:
        constraints = scheduled_constraints(v_lim, a_lim, tool, within, schedule)
    if extra:
        constraints = [*constraints, *extra]
    budget.check("timing")
    # building the problem evaluates every constraint at every grid point in one go (~5 us per point)
    instance = algo.TOPPRA(constraints, path, gridpoints=grid(ss, schedule), parametrizer="ParametrizeConstAccel")
    if budget is not UNLIMITED and _STAGES_PER_GRID_POINT * len(instance.gridpoints) > TOPPRA_CHECK:
        # a run of fewer stage problems than TOPPRA_CHECK would never reach a check inside: the ones around it do
        budget.check("timing")
        instance.solver_wrapper = PolledSolver(instance.solver_wrapper, budget)
    instance.compute_parameterization(0.0, 0.0)
    data = instance.problem_data
    if data.return_code != algo.ParameterizationReturnCode.Ok or data.sd_vec is None:
        raise TrajectoryTimingError("toppra found no feasible time parameterization of the path")
    trajectory = ConstAccelTrajectory(path, data.gridpoints, data.sd_vec)
    for bound in constraints:
        # the tool speeds per unit s at the grid points, which `grid_ratios` measures again otherwise
        if isinstance(bound, ToolSpeedBound) and bound.grid_speeds is not None and \
                np.array_equal(bound.grid_speeds[0], trajectory.ss):
            trajectory.grid_tool_speeds = (bound.tool.chain, bound.grid_speeds[1])
    return trajectory


class Solved(NamedTuple):
    """A run's toppra solution before any stretch, the acceleration shares it was planned with, its grid ratios and
    the limit each grid interval binds: what the next run, planned with lower shares, may reuse instead of running
    toppra again (a uniform stretch binds the same limits)."""

    trajectory: ConstAccelTrajectory
    share: np.ndarray                  # (n,)
    ratios: GridRatios
    binding: np.ndarray                # (N - 1,) `GridRatios.binding`


def solve(ss, waypoints, v_max, a_max, share, tool, within: bool, schedule, budget: PlanningBudget,
          before: Solved | None, extra: tuple = ()) -> Solved:
    """toppra's solution with the acceleration limits times `share`. When the solution `before` touched no speed
    limit (`GridRatios.speeds_free`) and the shares are all lowered by one factor k, the new optimum is that
    solution slowed down uniformly by 1 / sqrt(k) (the acceleration-limited problem is homogeneous: sd^2 and s''
    scale by k, and speeds only drop), so it is stretched instead of solved again: a toppra run saved per derating
    (pathological paths of hundreds of tiny rest-to-rest sections paid it on every section: issue 24, item 9)."""
    if before is not None and before.ratios.speeds_free():
        k = share / before.share                                                       # (n,)
        if np.ptp(k) <= 1e-12 * k.max() and 0.0 < k[0] <= 1.0:
            # the grid ratios against the lowered limits are those of before: accelerations fell by k as well
            return before._replace(trajectory=before.trajectory.stretched(1.0 / np.sqrt(k[0])), share=share)
    a_plan = a_max * share
    trajectory = run_toppra(ss, waypoints, v_max, a_plan, tool, within, schedule, budget, extra)
    budget.check("timing")
    ratios = grid_ratios(trajectory, v_max, a_plan, tool, schedule)
    return Solved(trajectory, share, ratios, ratios.binding())


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
        self.verified: ControlSamples | None = None    # set by `time_optimal` on the trajectory it returns
        self.grid_tool_speeds: tuple | None = None      # (chain, (N, 2) tool speeds per unit s) from `_toppra`

    def stretched(self, factor: float) -> ConstAccelTrajectory:
        """The same path, `factor` times slower again."""
        out = copy.copy(self)            # shares the grid arrays: only the stretch differs
        out.stretch = self.stretch * factor
        out.verified = None              # other times, other samples
        return out

    @property
    def duration(self) -> float:
        """[s]"""
        return float(self.ts[-1]) * self.stretch

    def _state(self, times):
        """Time into the grid interval, s'' there, s' and s at `times` [s], all unstretched."""
        local = np.asarray(times, float) / self.stretch
        i = np.clip(np.searchsorted(self.ts, local, side="right") - 1, 0, len(self.us) - 1)
        dt = local - self.ts[i]
        u = self.us[i]
        return dt, u, self.sd[i] + dt * u, self.ss[i] + dt * self.sd[i] + 0.5 * dt * dt * u

    def path_parameter(self, times) -> np.ndarray:
        """s at `times` [s], shape (K,)."""
        return self._state(times)[3]

    def time_at(self, s) -> np.ndarray:
        """[s] when the path parameter reaches `s` (K,), within [ss[0], ss[-1]]. On interval i it solves
        s - s_i = sd_i dt + u_i dt^2 / 2 in the form that stays exact when sd_i or u_i vanish."""
        s = np.asarray(s, float)
        i = np.clip(np.searchsorted(self.ss, s, side="right") - 1, 0, len(self.us) - 1)
        gone = s - self.ss[i]
        root = np.sqrt(np.maximum(self.sd[i] ** 2 + 2.0 * self.us[i] * gone, 0.0)) + self.sd[i]
        with np.errstate(invalid="ignore", divide="ignore"):
            dt = np.where(gone > 0.0, 2.0 * gone / root, 0.0)
        return (self.ts[i] + dt) * self.stretch

    def states(self, times) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """s (K,), positions, velocities and accelerations (K, n) at `times` [s]: `__call__` of each order with
        the shared parts evaluated once."""
        dt, u, sd, s = self._state(times)
        d1 = self.path(s, 1)
        return (s, self.path(s), d1 * (sd / self.stretch)[:, None],
                (self.path(s, 2) * sd[:, None] ** 2 + d1 * u[:, None]) / self.stretch ** 2)

    def __call__(self, times, order: int = 0) -> np.ndarray:
        """Positions (order 0), velocities (1) or accelerations (2) at `times` [s], shape (K, n)."""
        dt, u, sd, s = self._state(times)
        if order == 0:
            return self.path(s)
        if order == 1:
            return self.path(s, 1) * (sd / self.stretch)[:, None]
        if order == 2:
            return (self.path(s, 2) * sd[:, None] ** 2 + self.path(s, 1) * u[:, None]) / self.stretch ** 2
        raise InvalidInputError(f"order {order} must be 0, 1 or 2")


class ControlSamples(NamedTuple):
    """What the verification evaluated on the trajectory it accepted, kept for reports that measure the same
    samples (`limit_schedule.stretch_reports`) so they need not evaluate them again."""

    times: np.ndarray                  # (K,) [s] control samples
    velocities: np.ndarray             # (K, n)
    accelerations: np.ndarray          # (K, n)
    tool_speeds: np.ndarray | None     # (K, 2) [m/s, rad/s], None without a tool chain
    binding: np.ndarray                # (N - 1,) `binding_limits` of the grid intervals
    v_max: np.ndarray                  # (n,) the limits (scalings applied) they were measured against
    a_max: np.ndarray
    schedule: object                   # the LimitLookup timed under (None = none)
    chain: object                      # the tool chain of `tool_speeds` (None = none)


ACTIVE = 1e-2           # a limit binds an interval when it is used to within 1 %


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
        return np.where(ratios.max(axis=1) >= 1.0 - ACTIVE, label, -1)

    def speeds_free(self) -> bool:
        """No velocity nor tool speed limit within 1 % of its bound at any grid point: the solution is then
        the acceleration-limited optimum, which lower acceleration limits only slow down uniformly."""
        return bool(self.speed.size == 0 or self.speed.max() < 1.0 - ACTIVE)


def grid_ratios(trajectory: ConstAccelTrajectory, v_max, a_max, tool: ToolSpeedLimit | None,
                schedule: LimitLookup | None) -> GridRatios:
    """The ratios of toppra's (unstretched) solution; with a schedule, each grid point against its own limits."""
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


def binding_limits(trajectory: ConstAccelTrajectory, v_max, a_max, tool: ToolSpeedLimit | None = None,
                   schedule: LimitLookup | None = None):
    """The limit each grid interval of toppra's solution runs at (within 1 %), shape (N - 1,) int:
    j = velocity of joint j, n + j = acceleration of joint j, 2n = tool speed, 2n + 1 = tool angular speed,
    -1 = none. A velocity binds an interval when it is at its limit at both ends; an acceleration when it
    is at its limit at either end (toppra's interpolation scheme constrains both). With a schedule, each grid
    point is measured against its own limits (the tool's limits are then the schedule's)."""
    return grid_ratios(trajectory, v_max, a_max, tool, schedule).binding()


def limit_name(label: int, joint_names) -> str:
    """A `binding_limits` label in words ("" for -1)."""
    n = len(joint_names)
    if label < 0:
        return ""
    if label < 2 * n:
        return f"{('velocity', 'acceleration')[label // n]} of {joint_names[label % n]}"
    return ("tool speed", "tool angular speed")[label - 2 * n]


def limited_by(trajectory: ConstAccelTrajectory, labels: np.ndarray, joint_names) -> str:
    """The limit that binds the longest share of the duration ("" when none binds), from `binding_limits`."""
    weights = np.bincount(labels + 1, weights=np.diff(trajectory.ts))                  # slot 0 = none
    if len(weights) < 2 or weights[1:].max() <= 0:
        return ""
    return limit_name(int(weights[1:].argmax()), joint_names)
