"""A node's robot model from its parameters or, when they name none, from the robot_description topic.

The topic is read the way controller_manager reads it: std_msgs/String, reliable, transient local, depth 1, so the
URDF robot_state_publisher published before this node started arrives at once. The name is relative
(`robot_description` in the node's namespace, remappable like any topic). The precedence of the sources is
`core.model_source`'s.
"""
from __future__ import annotations

import time

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from robokin_ros.core.embedded import EMBEDDED_ROBOTS
from robokin_ros.core.errors import ModelError
from robokin_ros.core.model_source import TOPIC, choose_source, missing_model_error
from robokin_ros.core.robot import RobotModel

WAIT_SLICE = 0.1      # [s] longest single wait inside the temporary executor


def description_qos() -> QoSProfile:
    """robot_state_publisher's QoS for the description: reliable, transient local, keep the last one."""
    return QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL)


def wait_for_robot_description(node: Node, timeout: float, topic: str = TOPIC) -> tuple[str | None, str]:
    """(the first URDF published on `topic` within `timeout` [s] or None, the topic's resolved name).

    Spins `node` on a temporary executor (the node is in no other one yet: this runs while it is built) and
    removes the subscription before returning.

    Raises:
        ExternalShutdownException: the context was shut down (SIGINT) while waiting.
    """
    received: list[str] = []
    subscription = node.create_subscription(String, topic, lambda msg: received.append(msg.data), description_qos())
    resolved = subscription.topic_name
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    deadline = time.monotonic() + timeout
    try:
        while not received and rclpy.ok(context=node.context):
            remaining = deadline - time.monotonic()
            if remaining <= 0.0:
                break
            executor.spin_once(timeout_sec=min(remaining, WAIT_SLICE))
    finally:
        executor.remove_node(node)
        executor.shutdown()
        node.destroy_subscription(subscription)
    if not received and not rclpy.ok(context=node.context):
        raise ExternalShutdownException()
    return (received[0] if received else None), resolved


def load_robot(node: Node, config) -> RobotModel:
    """The chain `config` (a `schema.NodeConfig`) names, waiting for the topic when no parameter names a model.

    Raises:
        ModelError / UnknownFrameError: no model, or one that cannot be loaded; the no-model message lists every
            way to give one.
    """
    log = node.get_logger()
    if choose_source(config.robot, config.robot_description) != "topic":
        robot = RobotModel.from_source(config.robot, config.robot_description, config.base_frame,
                                       config.tip_frame, config.xacro_args, config.tip_frames)
        embedded = EMBEDDED_ROBOTS.get(config.robot)
        if embedded is not None and embedded.note and not config.robot_description.strip():
            log.warning(embedded.note)
        return robot
    if config.xacro_args.strip():
        raise ModelError(f"xacro_args={config.xacro_args!r} is set but robot is empty (set robot to the xacro file)")
    topic = node.resolve_topic_name(TOPIC)
    frames_missing = not (config.base_frame and (config.tip_frame or config.tip_frames))
    if frames_missing or config.robot_description_timeout == 0.0:
        raise missing_model_error(EMBEDDED_ROBOTS, topic, frames_missing=frames_missing)
    log.info(f"no robot or robot_description parameter: waiting up to {config.robot_description_timeout:g} s for "
             f"the URDF on {topic} (std_msgs/String, transient local, as robot_state_publisher publishes it)")
    xml, topic = wait_for_robot_description(node, config.robot_description_timeout)
    if xml is None:
        raise missing_model_error(EMBEDDED_ROBOTS, topic, waited=config.robot_description_timeout)
    tips = ", ".join(config.tip_frames) or config.tip_frame
    log.info(f"robot model from {topic} ({len(xml)} characters), chain {config.base_frame} -> {tips}")
    try:
        return RobotModel.from_source("", xml, config.base_frame, config.tip_frame, tip_frames=config.tip_frames)
    except ModelError as err:
        raise ModelError(f"the URDF on {topic}: {err}") from err
