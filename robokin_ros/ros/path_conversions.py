"""Messages <-> core types for Cartesian paths: poses, goals, JointTrajectory (pure functions)."""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pinocchio as pin
from geometry_msgs.msg import Pose, PoseStamped
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robokin_ros.core.errors import UnknownFrameError
from robokin_ros.core.path.geometry import pose_from_position_quaternion
from robokin_ros.core.path.result import JointTrajectoryArrays, PathIkResult
from robokin_ros.core.robot import RobotModel
from robokin_ros.ros.conversions import duration_msg


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
    base_T_frames: dict[str, pin.SE3 | None] = {}
    for i, stamped in enumerate(waypoints):
        name = stamped.header.frame_id
        if name not in base_T_frames:                                # model frames at the current state
            base_T_frames[name] = _base_T_frame(robot, positions, name, lookup)
        pose = pose_from_msg(stamped.pose, i)
        poses.append(pose if base_T_frames[name] is None else base_T_frames[name] * pose)
    return poses


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
    """An ExecuteCartesianPath goal's optional fields as `CartesianPathPlanner.plan` keyword arguments: an
    all-false mask, empty strings and 0 scalings mean the node's defaults (the planner checks the rest)."""
    return dict(tip_frame=goal.tip_frame, axis_mask=np.array(goal.axis_mask, dtype=bool) if any(goal.axis_mask)
                else None, axis_frame=goal.axis_mask_frame or None, velocity_scaling=goal.velocity_scaling,
                acceleration_scaling=goal.acceleration_scaling)


def failure_result(result, ik: PathIkResult, prefix: JointTrajectoryArrays | None) -> None:
    """Fill an ExecuteCartesianPath result for a path IK failure: code, reason, failed joint and pose, and the
    timed solved prefix (nothing solved is lost)."""
    result.error_code, result.message, result.failed_joint = int(ik.status), ik.message, ik.failed_joint
    result.failure_pose = pose_msg(ik.failure_pose)
    if prefix is not None:
        result.trajectory = joint_trajectory_msg(prefix)
