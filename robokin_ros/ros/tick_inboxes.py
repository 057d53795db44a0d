"""What the servo's tick takes its inputs from, so that callbacks only store: commands and sensor readings as the
newest message of a subscription (`PolledSubscription`), scene changes from a queue (`SceneInbox`).

Newest message (`PolledSubscription`): the loop takes it from the subscription instead of an executor delivering
every one. Why: a servo needs only the newest command at each tick. Delivered by an executor, every message that
arrives costs a Python callback (and with the EventsExecutor, a place in its event queue ahead of the loop's own
timer): a client streaming twists at 10 kHz slowed the 500 Hz loop to 170-240 ticks/s on two cores. Taken by the
loop, the middleware keeps only the newest message (keep-last 1) and drops the others without ever reaching Python.
The subscription lives on a node of its own that no executor spins (`<owner>_<suffix>`, in the owner's
namespace), on the topic name as the owner resolves it, so remappings of the owner's topics apply.

Scene changes (`SceneInbox`): robokin's SceneObject messages and MoveIt's CollisionObject and PlanningScene wait
in arrival order. Every change counts (a queue, unlike commands where the newest wins), and the tick applies one:
adding an object rebuilds the collision pairs (~3.6 ms with 50 objects, measured), so a burst costs late ticks,
not a stalled loop. A MoveIt message becomes its changes when its turn comes, all of them before the next message,
since the mirror (ros/moveit_scene.py) must meet the scene they leave. Beyond `limit` pending messages a flood is
refused, counted.

Scene messages arrive serialized (`offer_serialized`): one larger than `max_bytes` is refused by its size before it
is turned into Python objects, which is where a big mesh costs most (a mesh of 1e6 triangles: 2.6 s to deserialize
and 4.9 s to build its hull, measured; the loop runs on the same thread). Each refusal is reported with its size.
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Union

from moveit_msgs.msg import CollisionObject, PlanningScene
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.serialization import deserialize_message

from robokin_interfaces.msg import SceneObject as SceneObjectMsg
from robokin_ros.core.collision.scene_change import SceneChange
from robokin_ros.ros.conversions import scene_change_from_msg
from robokin_ros.ros.moveit_scene import MoveItSceneMirror
from robokin_ros.ros.runtime import create_side_node

SceneMessage = Union[SceneObjectMsg, CollisionObject, PlanningScene]
NOTES_REMEMBERED = 1000     # notes already logged (a monitored scene repeats them with every diff)


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


@dataclass(frozen=True)
class NextScene:
    """What the tick gets from the inbox: at most one change, and what to report."""

    change: SceneChange | None = None
    problems: str = ""                # refused MoveIt objects, one sentence each
    notes: tuple[str, ...] = ()       # received but not used, each logged once
    dropped: int = 0                  # messages refused since the last call: the queue was full
    refused: tuple[str, ...] = ()     # messages refused since the last call for their size, one sentence each


class SceneInbox:
    """The queue of scene messages; `offer` from a callback, `take` from the tick."""

    def __init__(self, limit: int, max_bytes: int) -> None:
        self.limit = limit
        self.max_bytes = max_bytes
        self._queue: deque[SceneMessage | SceneChange] = deque()
        self._dropped = 0
        self._refused: list[str] = []
        self._mirror = MoveItSceneMirror()
        self._notes_seen: set[str] = set()

    def offer(self, msg: SceneMessage) -> None:
        if len(self._queue) >= self.limit:
            self._dropped += 1
        else:
            self._queue.append(msg)

    def offer_serialized(self, msg_type: type) -> Callable[[bytes], None]:
        """The callback of a raw subscription of `msg_type`: a message within `max_bytes` is deserialized and
        offered, a larger one refused (reported by the next `take`)."""
        name = f"{msg_type.__module__.split('.')[0]}/{msg_type.__name__}"

        def offer(data: bytes) -> None:
            if len(data) > self.max_bytes:
                self._refused.append(
                    f"a {name} message of {len(data) / 1024:.0f} KiB refused: larger than {self.max_bytes // 1024} "
                    "KiB (a mesh is used as the convex hull of its vertices: send a decimated mesh, or its hull, "
                    "without triangles)")
                return
            self.offer(deserialize_message(data, msg_type))
        return offer

    def __len__(self) -> int:
        """Messages (and expanded changes) waiting."""
        return len(self._queue)

    @property
    def pending(self) -> bool:
        return bool(self._queue) or self._dropped > 0 or bool(self._refused)

    def take(self, present: set[str]) -> NextScene:
        """The next change, given the ids of the objects in the scene now.

        Raises:
            RobokinError: a SceneObject message or CollisionObject that cannot be converted.
        """
        if self._dropped or self._refused:
            dropped, refused, self._dropped, self._refused = self._dropped, tuple(self._refused), 0, []
            return NextScene(dropped=dropped, refused=refused)
        item = self._queue.popleft()
        if isinstance(item, SceneChange):
            return NextScene(change=item)
        if isinstance(item, SceneObjectMsg):
            return NextScene(change=scene_change_from_msg(item))
        update = self._mirror.update(item, present)
        self._queue.extendleft(reversed(update.changes))
        first = self._queue.popleft() if update.changes else None
        return NextScene(change=first, problems="; ".join(update.problems), notes=self._new_notes(update.notes))

    def _new_notes(self, notes) -> tuple[str, ...]:
        fresh = tuple(note for note in notes if note not in self._notes_seen)
        if len(self._notes_seen) + len(fresh) > NOTES_REMEMBERED:
            self._notes_seen.clear()
        self._notes_seen.update(fresh)
        return fresh
