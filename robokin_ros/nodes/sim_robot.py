"""sim_robot: an embedded stand-in for a ros2_control robot driver (the arithmetic is in core/sim/).

Subscribes the JointTrajectoryController topic and the forward position / velocity controller topics
(Float64MultiArray in chain order); the newest command wins. Publishes /joint_states at `rate` and,
when tf2_msgs is importable, base -> chain link poses on /tf at `tf_rate`.
Invalid commands are rejected with a log line naming the problem, as the real controllers do.
"""
from __future__ import annotations

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from robokin_ros.core.errors import RobokinError
from robokin_ros.core.sim.config import SimRobotConfig
from robokin_ros.core.sim.joints import SimulatedJoints
from robokin_ros.core.sim.trajectory_follower import trajectory_start
from robokin_ros.ros.conversions import (
    duration_seconds,
    joint_state_msg,
    trajectory_points_from_msg,
    transform_msg,
    vector_from_float64_array,
)
from robokin_ros.ros.runtime import QUEUE_DEPTH, RobokinNode, receive_time, run_node

try:
    from tf2_msgs.msg import TFMessage
except ImportError:     # a venv without the vendored tf2_msgs: /joint_states only
    TFMessage = None

LOG_KEY_CHARS = 40      # rejections that agree in this many leading characters are throttled as one


class SimRobot(RobokinNode):
    """Simulated arm; see the module docstring for its interfaces."""

    default_name = "sim_robot"
    config_class = SimRobotConfig

    def __init__(self, node_name: str | None = None, **kwargs) -> None:
        super().__init__(node_name, **kwargs)
        cfg = self._config
        self._joints = SimulatedJoints(self._robot, cfg.initial_positions, receive_time())
        self._names = self._robot.joint_names

        self.create_subscription(JointTrajectory, cfg.trajectory_topic, self._on_trajectory, QUEUE_DEPTH)
        self.create_subscription(Float64MultiArray, cfg.position_command_topic, self._on_positions, QUEUE_DEPTH)
        self.create_subscription(Float64MultiArray, cfg.velocity_command_topic, self._on_velocities, QUEUE_DEPTH)
        self._state_pub = self.create_publisher(JointState, cfg.joint_states_topic, QUEUE_DEPTH)
        self.create_timer(1.0 / cfg.rate, self._tick)
        self._tf_pub = None
        if cfg.publish_tf and TFMessage is None:
            self.get_logger().warning("publish_tf is true but tf2_msgs is not importable: no /tf")
        elif cfg.publish_tf:
            self._tf_frames = self._robot.chain_link_frames()
            self._tf_ids = [self._robot.frame_id(f) for f in self._tf_frames]
            self._tf_pub = self.create_publisher(TFMessage, "/tf", QUEUE_DEPTH)
            self.create_timer(1.0 / cfg.tf_rate, self._publish_tf)
        self.get_logger().info(f"simulating {self._robot.name} ({list(self._names)}) at {cfg.rate:.0f} Hz from "
                               f"{np.round(self._joints.positions, 4).tolist()}")

    # ---- commands: the newest one replaces the active one --------------------------------------------
    def _on_trajectory(self, msg: JointTrajectory) -> None:
        start = trajectory_start(receive_time(), duration_seconds(msg.header.stamp),
                                 self.get_clock().now().nanoseconds)
        self._command(lambda: self._joints.follow(trajectory_points_from_msg(msg, self._names), start),
                      "trajectory")

    def _on_positions(self, msg: Float64MultiArray) -> None:
        self._command(lambda: self._joints.command_positions(
            vector_from_float64_array(msg, len(self._names), "position command")), "position command")

    def _on_velocities(self, msg: Float64MultiArray) -> None:
        self._command(lambda: self._joints.command_velocities(
            vector_from_float64_array(msg, len(self._names), "velocity command")), "velocity command")

    def _command(self, accept, what: str) -> None:
        self._joints.step(receive_time())     # the old command acts up to the moment it is replaced
        try:
            accept()
        except RobokinError as err:
            self._log.warning(f"{what}: {str(err)[:LOG_KEY_CHARS]}", f"rejected {what}: {err}")

    # ---- outputs ------------------------------------------------------------------------------------
    def _tick(self) -> None:
        report = self._joints.step(receive_time())
        if report.velocity_limited:
            self._log.warning("velocity", f"command exceeds the velocity limit of "
                              f"{list(report.velocity_limited)}: clamped")
        if report.position_limited:
            self._log.warning("position", f"command pushes {list(report.position_limited)} past a position "
                              "limit: held at the limit")
        self._state_pub.publish(joint_state_msg(self._names, self._joints.positions, self._joints.velocities,
                                                self.get_clock().now().to_msg()))

    def _publish_tf(self) -> None:
        stamp = self.get_clock().now().to_msg()
        poses = self._robot.frame_poses(self._joints.positions, self._tf_ids)
        self._tf_pub.publish(TFMessage(transforms=[
            transform_msg(self._robot.base_frame, frame, pose, stamp) for frame, pose in zip(self._tf_frames, poses)]))


def main(args: list[str] | None = None) -> int:
    """Entry point of the `sim_robot` executable."""
    return run_node(SimRobot, args)


if __name__ == "__main__":
    raise SystemExit(main())
