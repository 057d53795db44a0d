"""Who else publishes a joint state topic, and with which joints: sim_robot's start-up check for a running driver.

Two sources of the same joints on one topic make every node see the arm jump between a real and a simulated
state, so sim_robot refuses to start next to one. Discovery takes a moment: the check waits up to `wait` [s]
for a publisher to show up, then up to `wait` more for its first message, and compares the joint names.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from robokin_ros.core.errors import RobokinError
from robokin_ros.ros.runtime import create_side_node

POLL = 0.05          # [s] graph and message polling slice
UNKNOWN_NAME = "_NODE_NAME_UNKNOWN_"     # what rmw reports for a node whose name it has not learnt yet


@dataclass(frozen=True)
class JointStateSources:
    """The other publishers of a joint state topic and the joints of the first message heard from them."""

    topic: str
    publishers: tuple[str, ...]          # fully qualified node names
    joints: tuple[str, ...] | None       # None: no message within the wait

    def shared(self, ours: tuple[str, ...]) -> tuple[str, ...]:
        """Our joints their message carries."""
        return tuple(name for name in ours if name in (self.joints or ()))


def _publishers(node: Node, topic: str, wait: float) -> tuple[str, ...]:
    """The nodes other than `node` publishing `topic`, waiting up to `wait` for the first one to be discovered and
    its name to be known (DDS finds the endpoint before ROS learns the node's name)."""
    own = node.get_fully_qualified_name()
    deadline = time.monotonic() + wait
    while True:
        found = tuple(sorted({f"{info.node_namespace.rstrip('/')}/{info.node_name}"
                              for info in node.get_publishers_info_by_topic(topic)} - {own}))
        named = found and not any(UNKNOWN_NAME in name for name in found)
        if named or time.monotonic() >= deadline:
            return found
        time.sleep(POLL)


def _first_joint_names(owner: Node, topic: str, wait: float) -> tuple[str, ...] | None:
    """The joint names of the first message on `topic` within `wait`, heard by a short-lived side node."""
    side = create_side_node(owner, "driver_check")
    executor = SingleThreadedExecutor(context=owner.context)
    heard: list[tuple[str, ...]] = []
    side.create_subscription(JointState, topic, lambda msg: heard.append(tuple(msg.name)),
                             QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))  # hears either kind
    executor.add_node(side)
    try:
        deadline = time.monotonic() + wait
        while not heard and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=POLL)
    finally:
        executor.shutdown()
        side.destroy_node()
    return heard[0] if heard else None


def joint_state_sources(node: Node, topic: str, wait: float) -> JointStateSources | None:
    """The other publishers of `topic` (as `node` resolves it) and their joints; None when there are none."""
    resolved = node.resolve_topic_name(topic)
    publishers = _publishers(node, resolved, wait)
    if not publishers:
        return None
    return JointStateSources(resolved, publishers, _first_joint_names(node, resolved, wait))


def refuse_second_source(node: Node, topic: str, joints: tuple[str, ...], wait: float) -> None:
    """Raise RobokinError naming the publisher when another node publishes `topic` with any of `joints`; log a
    warning when one publishes it but says nothing within `wait`. `wait` <= 0 skips the check."""
    if wait <= 0:
        return
    sources = joint_state_sources(node, topic, wait)
    if sources is None:
        return
    who = ", ".join(sources.publishers)
    if sources.joints is None:
        node.get_logger().warning(f"{who} publishes {sources.topic} but sent nothing in {wait:g} s: cannot compare "
                                  "joints; starting anyway")
        return
    shared = sources.shared(joints)
    if shared:
        raise RobokinError(
            f"{sources.topic} is already published by {who} with the joints {list(shared)}: a robot driver (or "
            f"another sim) is running. A second source for the same joints would make every node see the arm jump "
            f"between the two, so {node.get_name()} does not start. Stop {who}, or give this sim its own "
            "joint_states_topic or namespace (driver_check_wait: 0 skips this check).")
