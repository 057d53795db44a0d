"""The ExecuteCartesianPath fields of robots with several tips (issue 26), messages <-> core types (pure functions).

- MotionMove `tip`, `target_tips` / `target_poses` / `target_vias`, `carried` -> `Move.tip`, `Move.targets`,
  `Move.carried` (frames resolved as for the move's pose; the planner's `check_tips` judges the tips named);
- the goal's `grasp_tips` / `grasp_object_to_tip` -> `MotionProgram.grasp` in the robot's tip order;
- the plan's `failed_tip`, per-tip deviations and relative-pose drift -> the result's fields.
Every field left at its default means what the goal meant before these fields existed.
"""
from __future__ import annotations

import math

import numpy as np

from robokin_ros.core.errors import PathInputError
from robokin_ros.core.path.geometry import pose_from_position_quaternion
from robokin_ros.core.program.moves import Move, MoveKind, TipTarget
from robokin_ros.core.program.result import MotionPlan
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.tips.held_object import Grasp


def tip_fields(msg, kind: MoveKind, where: str, index: int, pose_of, via_of) -> dict:
    """The `Move` keyword arguments of a MotionMove's tip fields ({} when none is set, so a one-tip goal builds the
    same Move as before). `pose_of(stamped, what)` / `via_of(stamped, what)` resolve a stamped pose / point to the
    base frame (PathInputError naming `what`)."""
    tips, poses, vias = list(msg.target_tips), list(msg.target_poses), list(msg.target_vias)
    fields = {}
    if msg.tip:
        fields["tip"] = msg.tip
    if msg.carried:
        fields["carried"] = True
    if not (tips or poses or vias):
        return fields
    if len(tips) != len(poses):
        raise PathInputError(f"{where}: {len(tips)} target_tips but {len(poses)} target_poses (one pose per tip)",
                             index)
    if kind is MoveKind.CIRCULAR and len(vias) != len(tips):
        raise PathInputError(f"{where}: {len(tips)} target_tips but {len(vias)} target_vias (a MOVE_C gives one via "
                             "per tip)", index)
    if kind is not MoveKind.CIRCULAR and vias:
        raise PathInputError(f"{where}: target_vias are only for a MOVE_C", index)
    targets = []
    for i, (tip, stamped) in enumerate(zip(tips, poses)):
        what = f"{where} target {i} ({tip})"
        via = via_of(vias[i], what) if vias else None
        targets.append(TipTarget(tip, pose_of(stamped, what), via))
    fields["targets"] = tuple(targets)
    return fields


def grasp_from_goal(robot: RobotModel, goal) -> Grasp | None:
    """The goal's grasp (object_T_tip per tip, in the robot's tip order), None when not given."""
    tips, poses = list(goal.grasp_tips), list(goal.grasp_object_to_tip)
    if not tips and not poses:
        return None
    if len(tips) != len(poses):
        raise PathInputError(f"grasp: {len(tips)} grasp_tips but {len(poses)} grasp_object_to_tip (one pose per tip)")
    robot_tips = list(robot.tip_frames)
    unknown = [t for t in tips if t not in robot_tips]
    if unknown:
        raise PathInputError(f"grasp: tip '{unknown[0]}' is not one of the robot's tips {robot_tips}")
    if sorted(tips) != sorted(robot_tips):
        raise PathInputError(f"grasp: grasp_tips {tips} must name each of the robot's tips {robot_tips} once")
    by_tip = {}
    for tip, pose in zip(tips, poses):
        o, p = pose.orientation, pose.position
        if not np.isfinite([p.x, p.y, p.z, o.x, o.y, o.z, o.w]).all():
            raise PathInputError(f"grasp of {tip}: grasp_object_to_tip has non-finite values")
        try:
            by_tip[tip] = pose_from_position_quaternion([p.x, p.y, p.z], [o.x, o.y, o.z, o.w])
        except PathInputError as err:
            raise PathInputError(f"grasp of {tip}: {err}".replace("waypoint -1: ", "")) from None
    return Grasp(tuple(by_tip[t] for t in robot_tips))


def fill_tip_result(result, plan: MotionPlan) -> None:
    """The result's tip fields from the plan (empty lists and NaN on a one-tip robot, as a one-tip client expects
    nothing there)."""
    result.failed_tip = plan.failed_tip
    result.tip_names = [name for name, _, _ in plan.tip_deviations]
    result.tip_position_deviations = [float(p) for _, p, _ in plan.tip_deviations]
    result.tip_orientation_deviations = [float(o) for _, _, o in plan.tip_deviations]
    relative = plan.relative_deviation or (math.nan, math.nan)
    result.relative_position_deviation, result.relative_orientation_deviation = (float(v) for v in relative)


def tips_summary(plan: MotionPlan) -> str:
    """"; per tip: left 0.012 mm / 0.03 mrad, ...; held relative pose 0.004 mm" ("" on a one-tip plan)."""
    if not plan.tip_deviations:
        return ""
    text = "; per tip: " + ", ".join(f"{name} {p * 1e3:.3f} mm / {o * 1e3:.3f} mrad"
                                     for name, p, o in plan.tip_deviations)
    if plan.relative_deviation is not None:
        text += f"; held relative pose {plan.relative_deviation[0] * 1e3:.3f} mm / " \
                f"{plan.relative_deviation[1] * 1e3:.3f} mrad"
    return text


def tip_move_fields(move: Move, robot: RobotModel, stamped_pose, stamped_point) -> dict:
    """A Move's tip fields as MotionMove keyword arguments (what a client sends); `stamped_pose(pose)` /
    `stamped_point(p)` make base-frame stamped messages."""
    fields = {"tip": move.tip, "carried": bool(move.carried)}
    if move.targets:
        fields["target_tips"] = [t.tip for t in move.targets]
        fields["target_poses"] = [stamped_pose(t.pose) for t in move.targets]
        if move.kind is MoveKind.CIRCULAR:
            fields["target_vias"] = [stamped_point(np.asarray(t.via, float)) for t in move.targets]
    return fields
