"""A subscription a control loop takes its newest message from, instead of an executor delivering every one.

Why: a servo needs only the newest command at each tick. Delivered by an executor, every message that arrives
costs a Python callback (and with the EventsExecutor, a place in its event queue ahead of the loop's own timer):
a client streaming twists at 10 kHz slowed the 500 Hz loop to 170-240 ticks/s on two cores. Taken by the loop,
the middleware keeps only the newest message (keep-last 1) and drops the others without ever reaching Python.

The subscription lives on a node of its own that no executor spins (`<owner>_<suffix>`, in the owner's
namespace), on the topic name as the owner resolves it, so remappings of the owner's topics apply.
"""
from __future__ import annotations

import time
from typing import Any, NamedTuple

from rclpy.node import Node
from rclpy.qos import QoSProfile

from robokin_ros.ros.runtime import create_side_node


class Taken(NamedTuple):
    """A message taken, with its receive time."""

    message: Any             # the message, or its serialized bytes for a raw subscription
    received_at: float       # [s] on time.monotonic's clock: when the middleware received it


class PolledSubscription:
    """The newest message of a topic, taken with `take_newest` from the caller's loop."""

    def __init__(self, owner: Node, suffix: str, msg_type: type, topic: str, qos: QoSProfile | int,
                 raw: bool = False) -> None:
        self.node = create_side_node(owner, suffix)
        self.topic = owner.resolve_topic_name(topic)
        self._subscription = self.node.create_subscription(msg_type, self.topic, _never_called, qos, raw=raw)
        self._msg_type, self._raw = msg_type, raw

    def take_newest(self) -> Taken | None:
        """The newest message received since the last call (older ones are dropped), or None."""
        newest = None
        handle = self._subscription.handle
        with handle:
            while True:
                taken = handle.take_message(self._msg_type, self._raw)
                if taken is None:
                    break
                newest = taken
        if newest is None:
            return None
        message, info = newest
        return Taken(message, _monotonic_receive_time(info.get("received_timestamp", 0)))

    def drop_pending(self) -> None:
        """Forget whatever arrived so far."""
        self.take_newest()

    def close(self) -> None:
        """Destroy the subscription's node."""
        self.node.destroy_node()


def _monotonic_receive_time(received_ns: int) -> float:
    """The middleware's receive stamp (system clock [ns]; 0 if it gives none) on the monotonic clock [s]."""
    now = time.monotonic()
    if received_ns <= 0:
        return now
    age = (time.time_ns() - received_ns) * 1e-9
    return now - min(max(age, 0.0), 1.0)       # a clock step must not make a command look ancient or future


def _never_called(_message) -> None:
    """The subscription's callback: never called, since no executor spins the node."""
