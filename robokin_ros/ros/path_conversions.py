"""Messages <-> core types for the ExecuteCartesianPath action (pure functions): poses, waypoints, motion programs
(MotionMove[] <-> MotionProgram), JointTrajectory, and the goal's outcome from its plan.

Frames: an empty frame_id is the base frame, model frames are placed at the current joint state, other frames come
from the TF `lookup` (`waypoints_in_base`; a program's moves follow the same rules). Every error of a program names
the move ("move 2 (MoveC place)") so that a user finds it in a long program.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from geometry_msgs.msg import PointStamped, Pose, PoseStamped
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robokin_interfaces.action import ExecuteCartesianPath
from robokin_interfaces.msg import MotionMove, MoveReport
from robokin_ros.core.errors import PathInputError, UnknownFrameError
from robokin_ros.core.frames import TransformLookupError
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.geometry import pose_from_position_quaternion
from robokin_ros.core.program.moves import Approach, MotionProgram, Move, MoveKind
from robokin_ros.core.program.result import MotionPlan
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.scaling import resolve_scaling
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays
from robokin_ros.ros.conversions import duration_msg
from robokin_ros.ros.tips_conversions import fill_tip_result, grasp_from_goal, tip_fields, tip_move_fields, \
    tips_summary

Result = ExecuteCartesianPath.Result


def pose_from_msg(msg: Pose, index: int = -1) -> pin.SE3:
    """geometry_msgs/Pose -> SE3; PathInputError for NaN or a quaternion that is not unit (tiny errors renormalized)."""
    o = msg.orientation
    return pose_from_position_quaternion([msg.position.x, msg.position.y, msg.position.z], [o.x, o.y, o.z, o.w],
                                         index)


def pose_msg(pose: pin.SE3) -> Pose:
    """SE3 -> geometry_msgs/Pose."""
    msg = Pose()
    msg.position.x, msg.position.y, msg.position.z = (float(v) for v in pose.translation)
    x, y, z, w = pin.Quaternion(pose.rotation).coeffs()
    msg.orientation.x, msg.orientation.y, msg.orientation.z, msg.orientation.w = float(x), float(y), float(z), float(w)
    return msg


def waypoints_in_base(robot: RobotModel, positions: np.ndarray, waypoints: Sequence[PoseStamped],
                      lookup: Callable[[str], pin.SE3] | None = None) -> list[pin.SE3]:
    """PoseStamped waypoints in any frame (`RobotModel.resolve_frame`) -> base-frame poses at `positions`.

    A frame that is not in the model is passed to `lookup` (frame name -> `base_T_frame`, e.g. from TF) when one
    is given: base_T_waypoint = base_T_frame * frame_T_waypoint.

    Raises:
        UnknownFrameError: a frame_id that is not in the model (lists the valid ones) and no `lookup`.
        PathInputError: NaN or non-unit quaternion, naming the waypoint.
        TransformLookupError: from `lookup` (its text).
    """
    poses = []
    base_T_frame = frame_resolver(robot, positions, lookup)
    for i, stamped in enumerate(waypoints):
        frame_T_pose = pose_from_msg(stamped.pose, i)
        base_T_stamped = base_T_frame(stamped.header.frame_id)
        poses.append(frame_T_pose if base_T_stamped is None else base_T_stamped * frame_T_pose)
    return poses


def frame_resolver(robot: RobotModel, positions: np.ndarray,
                   lookup: Callable[[str], pin.SE3] | None = None) -> Callable[[str], pin.SE3 | None]:
    """frame name -> `base_T_frame` (None for the base frame itself) by the waypoint rules of `waypoints_in_base`;
    each frame is resolved once (one goal sees one TF answer per frame)."""
    cache: dict[str, pin.SE3 | None] = {}

    def resolve(name: str) -> pin.SE3 | None:
        if name not in cache:
            cache[name] = _base_T_frame(robot, positions, name, lookup)
        return cache[name]
    return resolve


def _base_T_frame(robot: RobotModel, positions: np.ndarray, name: str,
                  lookup: Callable[[str], pin.SE3] | None) -> pin.SE3 | None:
    """`base_T_frame` of a waypoint frame, None for the base frame itself."""
    try:
        frame_id = robot.resolve_frame(name)                         # UnknownFrameError with the valid names
    except UnknownFrameError:
        if lookup is None:
            raise
        return lookup(name)
    return None if frame_id == robot.base_frame_id else robot.frame_pose(positions, frame_id)


def joint_trajectory_msg(trajectory: JointTrajectoryArrays, frame_id: str = "", stamp=None) -> JointTrajectory:
    """Time-sampled arrays -> trajectory_msgs/JointTrajectory; `stamp` (builtin_interfaces/Time) is when its time 0
    is on the controller's clock (None: zero stamp, start on receipt)."""
    msg = JointTrajectory()
    msg.header.frame_id = frame_id
    if stamp is not None:
        msg.header.stamp = stamp
    msg.joint_names = list(trajectory.joint_names)
    points = []
    for k, t in enumerate(trajectory.times):
        point = JointTrajectoryPoint()
        point.positions = trajectory.positions[k].tolist()
        point.velocities = trajectory.velocities[k].tolist()
        point.accelerations = trajectory.accelerations[k].tolist()
        point.time_from_start = duration_msg(float(t))
        points.append(point)
    msg.points = points
    return msg


def plan_options(goal) -> dict:
    """An ExecuteCartesianPath goal's optional fields as `MotionPlanner.plan` keyword arguments: an all-false mask
    and empty strings mean the node's defaults; the scalings go as they are, and the planner applies core/scaling.py's
    rule to them (0 = the node's default)."""
    return dict(tip_frame=goal.tip_frame, axis_mask=np.array(goal.axis_mask, dtype=bool) if any(goal.axis_mask)
                else None, axis_frame=goal.axis_mask_frame or None, velocity_scaling=goal.velocity_scaling,
                acceleration_scaling=goal.acceleration_scaling)


def failure_result(result, plan: MotionPlan) -> None:
    """Fill an ExecuteCartesianPath result for a waypoint path's IK failure: code, reason, failed joint and pose,
    and the timed solved part (nothing solved is lost)."""
    result.error_code, result.message, result.failed_joint = int(plan.status), plan.message, plan.failed_joint
    result.failure_pose = pose_msg(plan.failure_pose)
    if plan.trajectory is not None:
        result.trajectory = joint_trajectory_msg(plan.trajectory)


def approach_from_goal(goal) -> Approach:
    """The goal's `approach` constant as the core's Approach; PathInputError for a value that is none of them."""
    try:
        return Approach(goal.approach)
    except ValueError:
        choices = ", ".join(f"APPROACH_{a.name} ({a.value})" for a in Approach)
        raise PathInputError(f"approach {goal.approach} is not one of {choices}") from None


@dataclass(frozen=True)
class GoalOutcome:
    """How a planned goal ends: its code and message, and the trajectory to execute first (None: nothing to
    execute), after which `executed_message` replaces `message`."""

    code: int
    message: str
    trajectory: JointTrajectoryArrays | None = None
    executed_message: str = ""


def waypoint_outcome(result, plan: MotionPlan, goal) -> GoalOutcome:
    """Fill a waypoint goal's result from its plan (`MotionPlanner.plan` of `waypoint_program`) and say what to
    execute: the trajectory unless plan_only; on failure the solved part with execute_partial."""
    ik = plan.path_ik
    result.fraction, result.arc_length, result.failed_sample = ik.fraction, ik.arc_length, ik.failed_sample
    result.failed_move = -1
    if not ik.success:
        failure_result(result, plan)
        solved = plan.trajectory
        if not goal.execute_partial or goal.plan_only or solved is None or solved.duration <= 0.0:
            return GoalOutcome(int(ik.status), ik.message)
        after = " after the approach move" if plan.approach is not None else ""
        return GoalOutcome(int(ik.status), ik.message, solved,
                           f"{ik.message}; executed the solved part{after}: {ik.arc_length * 1e3:.1f} mm "
                           f"({ik.fraction * 100:.1f} % of the path) in {solved.duration:.2f} s")
    result.trajectory = joint_trajectory_msg(plan.trajectory)
    if plan.trajectory.duration == 0.0:                 # already at the goal: nothing to send
        return GoalOutcome(Result.SUCCESS, ik.message)
    approach = f" (with a {plan.approach.duration:.2f} s approach move)" if plan.approach is not None else ""
    summary = (f"{ik.path.length * 1e3:.1f} mm in {plan.timing.duration:.2f} s{approach}, max deviation "
               f"{max(ik.deviations.position, plan.timing.max_position_deviation) * 1e3:.3f} mm"
               f"{jerk_summary(plan.timing)}")
    if goal.plan_only:
        return GoalOutcome(Result.SUCCESS, f"planned (plan_only): {summary}")
    return GoalOutcome(Result.SUCCESS, f"planned: {summary}", plan.trajectory, f"executed: {summary}")


def jerk_summary(timing) -> str:
    """", peak jerk X % of the limit" of a plan timed within jerk limits ("" without them, or without a timing)."""
    ratio = float("nan") if timing is None else timing.played_jerk_ratio
    return f", peak jerk {ratio * 100:.1f} % of the limit" if np.isfinite(ratio) else ""


# ---- motion programs ------------------------------------------------------------------------------------------------

MOVE_KINDS = {MotionMove.MOVE_L: MoveKind.LINEAR, MotionMove.MOVE_J: MoveKind.JOINT,
              MotionMove.MOVE_C: MoveKind.CIRCULAR}


def program_from_goal(robot: RobotModel, positions: np.ndarray, goal, lookup: Callable[[str], pin.SE3] | None,
                      config: PathConfig) -> MotionProgram:
    """An ExecuteCartesianPath goal's `program` -> MotionProgram in the base frame and the robot's joint order.

    `lookup`: frame name -> `base_T_frame` for frames outside the model (TF), or None. The goal's velocity_scaling
    / acceleration_scaling become the program's fractions by the rule of core/scaling.py (0 = `config`'s; NaN, inf,
    negative or above 1: InvalidInputError); the planner checks the moves (`core/program/moves.check_program`).

    Robots with several tips: a move's `tip`, `target_*` and `carried` fields and the goal's grasp
    (ros/tips_conversions.py); the planner judges the tips they name.

    Raises:
        InvalidInputError: a goal scaling outside the rule.
        PathInputError: naming the move: target_tips and target_poses (or a MOVE_C's target_vias) of different
            lengths, a grasp that does not name every tip once; a bad type, a pose or via in an unknown frame (or
            one TF cannot give), a non-finite pose or a non-unit quaternion, a MOVE_J whose joints are missing,
            unknown, repeated, not one value each, or not finite.
    """
    resolve = frame_resolver(robot, positions, lookup)
    moves = tuple(_move(robot, resolve, msg, i) for i, msg in enumerate(goal.program))
    return MotionProgram(moves, resolve_scaling("velocity_scaling", goal.velocity_scaling, config.velocity_scaling,
                                                "path_ik_node's velocity_scaling"),
                         resolve_scaling("acceleration_scaling", goal.acceleration_scaling, config.acceleration_scaling,
                                         "path_ik_node's acceleration_scaling"),
                         grasp=grasp_from_goal(robot, goal))


def motion_move_msgs(program: MotionProgram, robot: RobotModel) -> list[MotionMove]:
    """A MotionProgram (base frame) as the goal's MotionMove messages: what a client sends (the demo, tests)."""
    kinds = {kind: code for code, kind in MOVE_KINDS.items()}
    out = []
    for move in program.moves:
        msg = MotionMove(type=kinds[move.kind], name=move.name, speed=float(move.speed),
                         angular_speed=float(move.angular_speed), joint_speed_scaling=float(move.joint_speed),
                         acceleration_scaling=float(move.acceleration), zone=float(move.zone))
        if move.pose is not None:
            msg.pose.pose = pose_msg(move.pose)
            msg.pose.header.frame_id = robot.base_frame
        if move.via is not None:
            msg.via.point.x, msg.via.point.y, msg.via.point.z = (float(v) for v in move.via)
            msg.via.header.frame_id = robot.base_frame
        if move.joints is not None:
            msg.joint_names = list(robot.joint_names)
            msg.joint_positions = [float(v) for v in move.joints]
        for name, value in tip_move_fields(move, robot, lambda pose: _stamped_pose(pose, robot.base_frame),
                                           lambda p: _stamped_point(p, robot.base_frame)).items():
            setattr(msg, name, value)
        out.append(msg)
    return out


def _stamped_pose(pose: pin.SE3, frame: str) -> PoseStamped:
    msg = PoseStamped(pose=pose_msg(pose))
    msg.header.frame_id = frame
    return msg


def _stamped_point(p: np.ndarray, frame: str) -> PointStamped:
    msg = PointStamped()
    msg.point.x, msg.point.y, msg.point.z = (float(v) for v in p)
    msg.header.frame_id = frame
    return msg


def _move(robot: RobotModel, resolve, msg: MotionMove, index: int) -> Move:
    kind = MOVE_KINDS.get(msg.type)
    if kind is None:
        raise PathInputError(f"move {index}{f' ({msg.name})' if msg.name else ''}: type {msg.type} is not MOVE_L "
                             f"({MotionMove.MOVE_L}), MOVE_J ({MotionMove.MOVE_J}) or MOVE_C ({MotionMove.MOVE_C})",
                             index)
    where = f"move {index} ({kind.value}{f' {msg.name}' if msg.name else ''})"
    joint_space = kind is MoveKind.JOINT and bool(msg.joint_names or len(msg.joint_positions))
    joints = _joints(robot, msg, where, index) if joint_space else None
    tips = tip_fields(msg, kind, where, index, lambda stamped, what: _pose(resolve, stamped, what, index),
                      lambda stamped, what: _via(resolve, stamped, what, index))
    # a bimanual move gives every moving tip's target in `targets`: its `pose` and `via` are unused
    pose = None if joint_space or "targets" in tips else _pose(resolve, msg.pose, where, index)
    via = _via(resolve, msg.via, where, index) if kind is MoveKind.CIRCULAR and "targets" not in tips else None
    return Move(kind, pose=pose, joints=joints, via=via, speed=msg.speed, angular_speed=msg.angular_speed,
                joint_speed=msg.joint_speed_scaling, acceleration=msg.acceleration_scaling, zone=msg.zone,
                name=msg.name, **tips)


def _base_T(resolve, frame: str, what: str, index: int) -> pin.SE3 | None:
    try:
        return resolve(frame)
    except (UnknownFrameError, TransformLookupError) as err:
        raise PathInputError(f"{what}: {err}", index) from None


def _pose(resolve, stamped, where: str, index: int) -> pin.SE3:
    what = where if " target " in where else f"{where} pose"
    try:
        frame_T_pose = pose_from_msg(stamped.pose, index)
    except PathInputError as err:
        # the pose check words its message for waypoints: "waypoint <i>..." -> "move <i> (...) pose..."
        raise PathInputError(str(err).replace(f"waypoint {index}", what, 1), index) from None
    base_T_frame = _base_T(resolve, stamped.header.frame_id, what, index)
    return frame_T_pose if base_T_frame is None else base_T_frame * frame_T_pose


def _via(resolve, stamped, where: str, index: int) -> np.ndarray:
    frame_p_via = np.array([stamped.point.x, stamped.point.y, stamped.point.z])    # (3,) [m]
    if not np.isfinite(frame_p_via).all():
        raise PathInputError(f"{where} via has non-finite values: {frame_p_via.tolist()}", index)
    base_T_frame = _base_T(resolve, stamped.header.frame_id, f"{where} via", index)
    return frame_p_via if base_T_frame is None else base_T_frame.act(frame_p_via)


def _joints(robot: RobotModel, msg: MotionMove, where: str, index: int) -> np.ndarray:
    """A MOVE_J's joint_names / joint_positions -> positions in the robot's joint order."""
    names, values = list(msg.joint_names), np.asarray(msg.joint_positions, dtype=float)
    if len(names) != len(values):
        raise PathInputError(f"{where}: {len(names)} joint_names but {len(values)} joint_positions", index)
    arm = list(robot.joint_names)
    for name in names:
        if name not in arm:
            raise PathInputError(f"{where}: joint '{name}' is not an arm joint; arm joints: {arm}", index)
        if names.count(name) > 1:
            raise PathInputError(f"{where}: joint '{name}' is named {names.count(name)} times", index)
    missing = [name for name in arm if name not in names]
    if missing:
        raise PathInputError(f"{where}: lacks joints {missing} (a joint-space MOVE_J gives every arm joint; "
                             "leave joint_names empty to move to `pose`)", index)
    by_name = dict(zip(names, values))
    for name in arm:
        if not np.isfinite(by_name[name]):
            raise PathInputError(f"{where}: joint '{name}' position {by_name[name]} is not finite", index)
    return np.array([by_name[name] for name in arm])                   # (n,) robot joint order


def program_plan_options(goal) -> dict:
    """The goal fields `MotionPlanner.plan` takes for a program goal as keyword arguments (the goal's scalings are
    in the program: `program_from_goal`)."""
    options = plan_options(goal)
    return {key: options[key] for key in ("tip_frame", "axis_mask", "axis_frame")}


def move_report_msgs(plan: MotionPlan) -> list[MoveReport]:
    """The cycle-time report as robokin_interfaces/MoveReport messages, one per move in program order."""
    return [MoveReport(name=m.label, start_time=float(m.start_time), duration=float(m.duration),
                       peak_tool_speed=float(m.peak_tool_speed),
                       peak_tool_angular_speed=float(m.peak_tool_angular_speed), zone=float(m.zone),
                       limited_by=m.limited_by, peak_jerk_share=float(m.peak_jerk_share)) for m in plan.moves]


def goal_outcome(result, plan: MotionPlan, goal) -> GoalOutcome:
    """Fill an ExecuteCartesianPath result from the plan of its goal and say what to execute: a waypoint path's by
    `waypoint_outcome`; a program's trajectory unless plan_only, on failure its solved part (which ends at rest) with
    execute_partial."""
    fill_tip_result(result, plan)
    result.peak_jerk_share = float("nan") if plan.timing is None else float(plan.timing.played_jerk_ratio)
    if plan.path_ik is not None:
        return waypoint_outcome(result, plan, goal)
    result.fraction, result.failed_move, result.failed_sample = float(plan.fraction), int(plan.failed_move), -1
    result.move_reports = move_report_msgs(plan)
    if plan.trajectory is not None:
        result.trajectory = joint_trajectory_msg(plan.trajectory)
    moves = plan.trajectory is not None and plan.trajectory.duration > 0.0
    count = len(plan.moves)
    if not plan.success:
        if not goal.execute_partial or goal.plan_only or not moves:
            return GoalOutcome(int(plan.status), plan.message)
        return GoalOutcome(int(plan.status), plan.message, plan.trajectory,
                           f"{plan.message}; executed the solved part ({plan.completed_moves} of {count} moves) "
                           f"in {plan.trajectory.duration:.2f} s")
    if not moves:
        return GoalOutcome(Result.SUCCESS, plan.message)
    deviation = (f", max deviation {plan.max_position_deviation * 1e3:.3f} mm"
                 if np.isfinite(plan.max_position_deviation) else "")
    summary = f"{count} moves, cycle time {plan.trajectory.duration:.3f} s{deviation}{jerk_summary(plan.timing)}" \
        f"{tips_summary(plan)}" + \
        "".join(f"; note: {note}" for note in plan.notes)
    if goal.plan_only:
        return GoalOutcome(Result.SUCCESS, f"planned (plan_only): {summary}")
    return GoalOutcome(Result.SUCCESS, f"planned: {summary}", plan.trajectory, f"executed: {summary}")
