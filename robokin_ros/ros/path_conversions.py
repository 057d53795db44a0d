"""Messages <-> core types for Cartesian paths: poses, goals, JointTrajectory, goal outcomes (pure functions)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from geometry_msgs.msg import Pose, PoseStamped
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robokin_interfaces.action import ExecuteCartesianPath
from robokin_ros.core.errors import PathInputError, UnknownFrameError
from robokin_ros.core.path.geometry import pose_from_position_quaternion
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays
from robokin_ros.core.program.moves import Approach
from robokin_ros.core.program.result import MotionPlan
from robokin_ros.core.robot import RobotModel
from robokin_ros.ros.conversions import duration_msg

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
               f"{max(ik.deviations.position, plan.timing.max_position_deviation) * 1e3:.3f} mm")
    if goal.plan_only:
        return GoalOutcome(Result.SUCCESS, f"planned (plan_only): {summary}")
    return GoalOutcome(Result.SUCCESS, f"planned: {summary}", plan.trajectory, f"executed: {summary}")
