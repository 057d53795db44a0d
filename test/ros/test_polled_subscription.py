"""The servo's polled twist subscription: the newest message only, its receive time, the owner's remappings."""
import time
from contextlib import contextmanager

from geometry_msgs.msg import TwistStamped
from rclpy.node import Node
from ros_helpers import spin_until

from robokin_ros.ros.tick_inboxes import PolledSubscription


def _take_within(polled, executor, timeout_s: float = 10.0):
    """The first message taken within `timeout_s` (spinning the other nodes meanwhile), or None."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        taken = polled.take_newest()
        if taken is not None:
            return taken
        executor.spin_once(timeout_sec=0.002)
    return None


def _twist(x: float) -> TwistStamped:
    msg = TwistStamped()
    msg.twist.linear.x = x
    return msg


@contextmanager
def _polled_and_publisher(ros, topic: str, owner_args: tuple[str, ...] = ()):
    """(the servo-named owner's polled twist subscription, a publisher on `topic` in another node), matched."""
    context, executor = ros
    owner = Node("servo_node", context=context, cli_args=["--ros-args", *owner_args] if owner_args else None)
    polled = PolledSubscription(owner, "commands", TwistStamped, "~/delta_twist_cmds", 1)
    sender = Node("sender", context=context)
    executor.add_node(sender)
    pub = sender.create_publisher(TwistStamped, topic, 10)
    try:
        assert spin_until(executor, lambda: pub.get_subscription_count() > 0)
        yield polled, pub
    finally:
        polled.close()
        owner.destroy_node()


def test_only_the_newest_message_is_taken_with_its_receive_time(ros):
    _, executor = ros
    with _polled_and_publisher(ros, "/servo_node/delta_twist_cmds") as (polled, pub):
        assert polled.topic == "/servo_node/delta_twist_cmds"
        assert polled.take_newest() is None
        before = time.monotonic()
        for x in (1.0, 2.0, 3.0):
            pub.publish(_twist(x))
        taken = None
        deadline = time.monotonic() + 10.0
        while time.monotonic() < deadline and (taken is None or taken.message.twist.linear.x < 3.0):
            taken = polled.take_newest() or taken
            time.sleep(0.001)
        assert taken is not None and taken.message.twist.linear.x == 3.0      # older ones were dropped
        assert before <= taken.received_at <= time.monotonic()
        assert polled.take_newest() is None                                   # taken once
        pub.publish(_twist(4.0))
        later = _take_within(polled, executor)
        assert later is not None and later.message.twist.linear.x == 4.0


def test_the_owners_remapping_applies(ros):
    """`-r ~/delta_twist_cmds:=/teleop/twist` on the servo node moves the polled subscription with it."""
    _, executor = ros
    with _polled_and_publisher(ros, "/teleop/twist", ("-r", "~/delta_twist_cmds:=/teleop/twist")) as (polled, pub):
        assert polled.topic == "/teleop/twist"
        pub.publish(_twist(0.5))
        taken = _take_within(polled, executor)
        assert taken is not None and taken.message.twist.linear.x == 0.5
