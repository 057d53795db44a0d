"""The URDF link tree on /tf and /tf_static, as robot_state_publisher publishes it, unless one is running.

Each link is published relative to its parent link: fixed (and locked) joints once on /tf_static with a
transient-local (latched) publisher, moving joints on /tf at a fixed rate. robot_state_publisher does the same
job from /joint_states in a real install; two publishers of one transform fight (tf2 warns about the
redundant data and the transforms jitter between the two stamps), so this publisher pauses, and drops its
latched static transforms, while a node named robot_state_publisher is in the graph.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from robokin_ros.core.robot import RobotModel
from robokin_ros.ros.conversions import transform_msg
from robokin_ros.ros.runtime import QUEUE_DEPTH

try:
    from tf2_msgs.msg import TFMessage
except ImportError:     # a venv without the vendored tf2_msgs
    TFMessage = None

STATE_PUBLISHER = "robot_state_publisher"
GRAPH_CHECK_PERIOD = 1.0     # [s] how often the graph is searched for robot_state_publisher
STATIC_QOS = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)


class LinkTreeTf:
    """Publishes `robot`'s link tree at `rate` [Hz] for the positions `positions()` returns (chain order)."""

    def __init__(self, node: Node, robot: RobotModel, positions: Callable[[], np.ndarray], rate: float) -> None:
        self._node, self._robot, self._positions = node, robot, positions
        edges = robot.link_tree()
        self._moving = tuple(e for e in edges if e.moving)
        self._static = tuple(e for e in edges if not e.moving)
        self._tf_pub = node.create_publisher(TFMessage, "/tf", QUEUE_DEPTH)
        self._static_pub = None
        self.paused = STATE_PUBLISHER in node.get_node_names()
        if self.paused:
            node.get_logger().info(f"a node named {STATE_PUBLISHER} is running: leaving /tf and /tf_static to it")
        else:
            self._start_static()
        node.create_timer(1.0 / rate, self._publish_moving)
        node.create_timer(GRAPH_CHECK_PERIOD, self._check_graph)

    def _start_static(self) -> None:
        self._static_pub = self._node.create_publisher(TFMessage, "/tf_static", STATIC_QOS)
        stamp = self._node.get_clock().now().to_msg()
        poses = self._robot.link_transforms(self._positions(), self._static)
        self._static_pub.publish(TFMessage(transforms=[
            transform_msg(e.parent, e.child, pose, stamp) for e, pose in zip(self._static, poses)]))

    def _publish_moving(self) -> None:
        if self.paused:
            return
        stamp = self._node.get_clock().now().to_msg()
        poses = self._robot.link_transforms(self._positions(), self._moving)
        self._tf_pub.publish(TFMessage(transforms=[
            transform_msg(e.parent, e.child, pose, stamp) for e, pose in zip(self._moving, poses)]))

    def _check_graph(self) -> None:
        running = STATE_PUBLISHER in self._node.get_node_names()
        if running == self.paused:
            return
        self.paused = running
        logger = self._node.get_logger()
        if running:
            self._node.destroy_publisher(self._static_pub)
            self._static_pub = None
            logger.info(f"a node named {STATE_PUBLISHER} is running: leaving /tf and /tf_static to it")
        else:
            self._start_static()
            logger.info(f"no {STATE_PUBLISHER} any more: publishing the link tree on /tf and /tf_static again")
