"""How a waypoint path begins: from the current tool pose (as always), or at its first waypoint, reached by an
approach move when the tool is not there yet.

- PATH: the path starts at the current tool pose; the line to waypoints[0] is its first segment (blended there).
- JOINT: the path starts at waypoints[0]; a synchronised joint-space move (`profiles.joint_move`, the configured
  `joint_move_profile`) takes the arm there first, to the planner's `pose_solver` solution (the current branch).
- LINEAR: the same with a straight tool line that ends at rest at waypoints[0].
- REFUSE: the path starts at waypoints[0]; refused when the tool is not there.
"Not there" means farther than the path tolerance (max_position_deviation, max_orientation_deviation).
"""
from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import PathInputError
from robokin_ros.core.path.budget import PlanningBudget
from robokin_ros.core.path.planner import CartesianPathPlanner, ensure_compiled
from robokin_ros.core.path.profiles import joint_move
from robokin_ros.core.path.result import PathPlan, concatenate_trajectories
from robokin_ros.core.path.timing import join_reports
from robokin_ros.core.scaling import resolve_scaling


class Approach(enum.IntEnum):
    """Numbered as ExecuteCartesianPath's APPROACH_* constants."""

    PATH = 0
    JOINT = 1
    LINEAR = 2
    REFUSE = 3


def start_offset(start: pin.SE3, first: pin.SE3) -> tuple[float, float]:
    """Distance [m] and rotation angle [rad] from the current tool pose to the path's first waypoint."""
    return (float(np.linalg.norm(first.translation - start.translation)),
            float(np.linalg.norm(pin.log3(start.rotation.T @ first.rotation))))


def plan_with_approach(planner: CartesianPathPlanner, start_positions, waypoints: Sequence[pin.SE3],
                       blend_radius: float | None = None, approach: Approach = Approach.PATH, **options) -> PathPlan:
    """`planner.plan` with the path beginning as `approach` says; `options` are `plan`'s keyword arguments.

    The plan's IK result, fraction and failure fields describe the path after the approach; the approach and the
    path share one planning budget (`options` may pass `budget`, else `should_stop` and planning_timeout make one).
    Raises InvalidInputError for a scaling that breaks core/scaling.py's rule, PathInputError when REFUSE finds the
    tool away from waypoints[0], or when JOINT finds no IK solution for it from the current branch.
    """
    approach = Approach(approach)
    c, robot = planner.config, planner.robot
    # the rule of core/scaling.py, before anything is planned; one budget for the approach and the path
    scale_v = resolve_scaling("velocity_scaling", options.get("velocity_scaling"), c.velocity_scaling)
    scale_a = resolve_scaling("acceleration_scaling", options.get("acceleration_scaling"), c.acceleration_scaling)
    if options.get("budget") is None:
        ensure_compiled(planner)             # outside the budget, as CartesianPathPlanner.plan does
        options["budget"] = PlanningBudget(c.planning_timeout, options.pop("should_stop", None))
    if approach is Approach.PATH or len(waypoints) == 0:
        return planner.plan(start_positions, waypoints, blend_radius, **options)
    q0 = robot.check_positions(start_positions, "start positions")
    solver = planner.solver(options.get("tip_frame", ""))
    R, p = solver.fk(q0[None])
    distance, angle = start_offset(pin.SE3(R[0], p[0]), waypoints[0])
    if distance <= c.max_position_deviation and angle <= c.max_orientation_deviation:
        return planner.plan(q0, waypoints, blend_radius, **options)
    where = (f"the path starts at waypoints[0], {distance * 1e3:.1f} mm and {angle * 1e3:.1f} mrad from the current "
             f"tool pose (tolerance {c.max_position_deviation * 1e3:g} mm / {c.max_orientation_deviation * 1e3:g} "
             "mrad)")
    if approach is Approach.REFUSE:
        raise PathInputError(f"{where}; approach REFUSE: move the arm there first, or ask for APPROACH_MOVEJ or "
                             "APPROACH_MOVEL", 0)
    if approach is Approach.LINEAR:
        first = planner.plan(q0, waypoints[:1], 0.0, **options)
        if not first.success:
            message = f"approach (MoveL to waypoints[0]) failed: {first.ik.message}"
            return dataclasses.replace(first, ik=dataclasses.replace(first.ik, message=message))
        lead = first.trajectory
    else:
        found = planner.pose_solver(robot, waypoints[0], q0, solver.frame_id, c.joint_limit_margin)
        if not found.success:
            raise PathInputError(f"{where}; approach MoveJ: no joint configuration on the current branch reaches it "
                                 f"({found.position_error * 1e3:.2f} mm / {found.orientation_error * 1e3:.2f} mrad "
                                 "remain)", 0)
        v_max, a_max = planner.limits()
        lead = joint_move(q0, found.positions, v_max * scale_v, a_max * scale_a, c.joint_move_profile,
                          c.trajectory_rate_hz, robot.joint_names, for_controller=True)
    rest = planner.plan(lead.positions[-1], waypoints[1:], blend_radius, **options) if len(waypoints) > 1 else None
    if rest is None:
        return dataclasses.replace(first, approach=lead) if approach is Approach.LINEAR else _approach_only(
            planner, lead, waypoints[0], options["budget"])
    if not rest.success:
        return dataclasses.replace(rest, approach=lead)
    trajectory = concatenate_trajectories([lead, rest.trajectory])
    timing = dataclasses.replace(join_reports([rest.timing], trajectory.duration),
                                 max_position_deviation=rest.timing.max_position_deviation,
                                 max_orientation_deviation=rest.timing.max_orientation_deviation)
    return dataclasses.replace(rest, trajectory=trajectory, timing=timing, approach=lead)


def _approach_only(planner: CartesianPathPlanner, lead, target: pin.SE3, budget: PlanningBudget) -> PathPlan:
    """A one-waypoint path with a MoveJ approach: the path is the resting point at waypoints[0]."""
    plan = planner.plan(lead.positions[-1], [target], 0.0, budget=budget)    # already there: holds, duration 0
    return dataclasses.replace(plan, trajectory=lead, approach=lead,
                               timing=dataclasses.replace(plan.timing, duration=lead.duration))
