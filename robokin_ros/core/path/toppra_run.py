"""One toppra run of a rest-to-rest section (the time-optimal profile on a grid over the joint spline), and its
reuse: a run with lower acceleration limits that toppra need not solve again (`solve`)."""
from __future__ import annotations

import logging
from typing import NamedTuple

import numpy as np

from robokin_ros.core.errors import TrajectoryTimingError
from robokin_ros.core.path.budget import UNLIMITED, PlanningBudget
from robokin_ros.core.path.const_accel import ConstAccelTrajectory
from robokin_ros.core.path.grid_ratios import GridRatios, grid_ratios
from robokin_ros.core.path.toppra_constraints import (
    IntervalAccelBound,
    LimitLookup,
    ToolSpeedBound,
    ToolSpeedLimit,
    scheduled_constraints,
)
from robokin_ros.core.path.toppra_import import import_toppra

ta = import_toppra()          # matplotlib stays unloaded (see toppra_import.py)
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
               schedule: LimitLookup | None = None, budget: PlanningBudget = UNLIMITED) -> ConstAccelTrajectory:
    """toppra's time-optimal solution from rest to rest along the not-a-knot spline through `waypoints` at `ss`."""
    path = ta.SplineInterpolator(ss, waypoints, bc_type="not-a-knot")
    if schedule is None:
        constraints = joint_constraints(v_lim, a_lim, within)
        if tool is not None:
            constraints = [*constraints, ToolSpeedBound(tool, len(v_lim))]
    else:
        constraints = scheduled_constraints(v_lim, a_lim, tool, within, schedule)
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
            return before._replace(trajectory=before.trajectory.stretched(1.0 / np.sqrt(k[0])), share=share)
    a_plan = a_max * share
    trajectory = run_toppra(ss, waypoints, v_max, a_plan, tool, within, schedule, budget)
    budget.check("timing")
    ratios = grid_ratios(trajectory, v_max, a_plan, tool, schedule)
    return Solved(trajectory, share, ratios, ratios.binding())
