"""Deprecated: `core/program/planner.MotionPlanner` plans waypoint paths (`moves.waypoint_program`) and programs.

`CartesianPathPlanner` keeps the former call `plan(start, waypoints, blend_radius, ...) -> PathPlan` for the callers
that still use it (path_ik_node until its planning moves to MotionPlanner, the studio, examples/03); it plans
through `MotionPlanner.plan`, so both give the same trajectories. The only module of `core/path/` that imports
`core/program/` (with `approach.py`), allowed by the layering test as a deprecated shim.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pinocchio as pin

from robokin_ros.core.path.budget import PlanningBudget
from robokin_ros.core.path.result import PathIkResult, PathPlan
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays
from robokin_ros.core.program.moves import waypoint_program
from robokin_ros.core.program.planner import MotionPlanner, ensure_compiled
from robokin_ros.core.program.waypoint_plans import check_reach, time_prefix

__all__ = ["CartesianPathPlanner", "ensure_compiled", "check_reach"]


class CartesianPathPlanner(MotionPlanner):
    """Deprecated: a MotionPlanner whose `plan` takes waypoints and returns a PathPlan (never raises on IK
    failure)."""

    def plan(self, start_positions, waypoints: Sequence[pin.SE3], blend_radius: float | None = None, *,
             tip_frame: str = "", axis_mask: np.ndarray | None = None, axis_frame: str | None = None,
             velocity_scaling: float | None = None, acceleration_scaling: float | None = None,
             time_parameterize: bool = True, should_stop: Callable[[], bool] | None = None,
             budget: PlanningBudget | None = None) -> PathPlan:
        """`MotionPlanner.plan(waypoint_program(waypoints, blend_radius), start_positions, ...)` as a PathPlan
        (blend_radius None = the config's); raises as that does."""
        self.solver(tip_frame)               # the former order of the checks: tool frame, start state, scalings
        self.robot.check_positions(start_positions, "start positions")
        blend = self.config.blend_radius if blend_radius is None else blend_radius
        return MotionPlanner.plan(self, waypoint_program(waypoints, blend), start_positions, tip_frame=tip_frame,
                                  axis_mask=axis_mask, axis_frame=axis_frame, velocity_scaling=velocity_scaling,
                                  acceleration_scaling=acceleration_scaling, should_stop=should_stop, budget=budget,
                                  time_parameterize=time_parameterize, solved_part=False).path_plan()

    def time_prefix(self, ik: PathIkResult, tip_frame: str = "", axis_mask: np.ndarray | None = None,
                    axis_frame: str | None = None) -> JointTrajectoryArrays | None:
        """A timed trajectory along the solved prefix of a failed path (None if it has < 2 samples)."""
        solver = self.solver(tip_frame)
        return time_prefix(self, ik, solver, solver.axes(axis_mask, axis_frame))
