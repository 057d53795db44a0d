"""Messages <-> the joint_trajectory_controller model of core/sim: trajectories as plain facts, tolerances,
FollowJointTrajectory goals and feedback, and JTC's per-joint constraint parameters (pure functions, plus one
parameter declaration)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robokin_ros.core.errors import ConfigError
from robokin_ros.core.trajectory.controller_rules import PointFacts, TrajectoryFacts
from robokin_ros.core.trajectory.controller_tolerances import JointToleranceRequest, SegmentTolerances, TrackingSample
from robokin_ros.ros.conversions import duration_msg, duration_seconds, time_nanoseconds


def trajectory_facts(msg: JointTrajectory) -> TrajectoryFacts:
    """JointTrajectory -> TrajectoryFacts (the arrays are shared, not copied)."""
    points = tuple(PointFacts(p.positions, p.velocities, p.accelerations, p.effort,
                              duration_seconds(p.time_from_start)) for p in msg.points)
    return TrajectoryFacts(tuple(msg.joint_names), points, time_nanoseconds(msg.header.stamp))


def tolerance_requests(entries: Sequence[JointTolerance]) -> list[JointToleranceRequest]:
    """control_msgs/JointTolerance[] -> plain requests."""
    return [JointToleranceRequest(t.name, t.position, t.velocity, t.acceleration) for t in entries]


def declare_joint_constraints(node: Node, joints: Sequence[str], goal_time: float) -> SegmentTolerances:
    """Declare JTC's `constraints.<joint>.trajectory` and `constraints.<joint>.goal` (default 0 = not enforced)
    and read them into the controller's default tolerances.

    Raises:
        ConfigError: every negative or non-numeric value, named.
    """
    values: dict[str, list[float]] = {"trajectory": [], "goal": []}
    problems = []
    for kind, words in (("trajectory", "position tolerance while moving"), ("goal", "position tolerance at the end")):
        for joint in joints:
            name = f"constraints.{joint}.{kind}"
            value = node.declare_parameter(name, 0.0, ParameterDescriptor(
                description=f"JTC: {words} of {joint} [rad | m] (0 = not enforced)", read_only=True,
                dynamic_typing=True)).value      # dynamic: a YAML `0` (an integer) is fine too
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0.0:
                problems.append(f"{name}={value!r} must be a number >= 0")
                value = 0.0
            values[kind].append(float(value))
    if problems:
        raise ConfigError(problems, "sim_robot configuration")
    return SegmentTolerances(np.array(values["trajectory"]), np.array(values["goal"]), goal_time)


def feedback_msg(joints: Sequence[str], sample: TrackingSample, velocities: np.ndarray,
                 stamp) -> FollowJointTrajectory.Feedback:
    """A FollowJointTrajectory feedback: desired, actual and error (desired - actual) positions, actual velocities."""
    feedback = FollowJointTrajectory.Feedback()
    feedback.header.stamp = stamp
    feedback.joint_names = list(joints)
    feedback.desired = JointTrajectoryPoint(positions=sample.desired.tolist())
    feedback.actual = JointTrajectoryPoint(positions=sample.actual.tolist(), velocities=velocities.tolist())
    feedback.error = JointTrajectoryPoint(positions=(sample.desired - sample.actual).tolist())
    return feedback


def follow_goal(trajectory: JointTrajectory, path_tolerance: float, goal_tolerance: float,
                goal_time_tolerance: float) -> FollowJointTrajectory.Goal:
    """A FollowJointTrajectory goal for `trajectory` with one position tolerance for every joint [rad | m]
    (0 = the controller's default) and a goal time tolerance [s] (0 = the controller's default)."""
    goal = FollowJointTrajectory.Goal(trajectory=trajectory)
    names = list(trajectory.joint_names)
    if path_tolerance > 0.0:
        goal.path_tolerance = [JointTolerance(name=n, position=float(path_tolerance)) for n in names]
    if goal_tolerance > 0.0:
        goal.goal_tolerance = [JointTolerance(name=n, position=float(goal_tolerance)) for n in names]
    goal.goal_time_tolerance = duration_msg(goal_time_tolerance)
    return goal
