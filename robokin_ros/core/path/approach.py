"""Deprecated: a waypoint path's approach is the leading move of `core/program/moves.waypoint_program` (see
`moves.Approach`), planned by `MotionPlanner.plan`. `plan_with_approach` keeps the former call for its callers."""
from __future__ import annotations

from collections.abc import Sequence

import pinocchio as pin

from robokin_ros.core.path.result import PathPlan
from robokin_ros.core.program.moves import Approach, waypoint_program
from robokin_ros.core.program.planner import MotionPlanner
from robokin_ros.core.program.waypoint_plans import start_offset

__all__ = ["Approach", "plan_with_approach", "start_offset"]


def plan_with_approach(planner: MotionPlanner, start_positions, waypoints: Sequence[pin.SE3],
                       blend_radius: float | None = None, approach: Approach = Approach.PATH, **options) -> PathPlan:
    """`MotionPlanner.plan(waypoint_program(waypoints, blend_radius, approach), start_positions, **options)` as a
    PathPlan; `options` are the former `CartesianPathPlanner.plan` keyword arguments."""
    program = waypoint_program(waypoints, planner.config.blend_radius if blend_radius is None else blend_radius,
                               approach)
    return MotionPlanner.plan(planner, program, start_positions, solved_part=False, **options).path_plan()
