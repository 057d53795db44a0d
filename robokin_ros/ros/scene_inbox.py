"""Scene changes waiting for the servo's tick: robokin's SceneObject messages and MoveIt's CollisionObject and
PlanningScene, in arrival order.

Every change counts (a queue, unlike commands where the newest wins), and the tick applies one: adding an object
rebuilds the collision pairs (~3.6 ms with 50 objects, measured), so a burst costs late ticks, not a stalled loop.
A MoveIt message becomes its changes when its turn comes, all of them before the next message, since the mirror
(ros/moveit_scene.py) must meet the scene they leave. Beyond `limit` pending messages a flood is refused, counted.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Union

from moveit_msgs.msg import CollisionObject, PlanningScene

from robokin_interfaces.msg import SceneObject as SceneObjectMsg
from robokin_ros.core.collision.scene_change import SceneChange
from robokin_ros.ros.conversions import scene_change_from_msg
from robokin_ros.ros.moveit_scene import MoveItSceneMirror

SceneMessage = Union[SceneObjectMsg, CollisionObject, PlanningScene]
NOTES_REMEMBERED = 1000     # notes already logged (a monitored scene repeats them with every diff)


@dataclass(frozen=True)
class NextScene:
    """What the tick gets from the inbox: at most one change, and what to report."""

    change: SceneChange | None = None
    problems: str = ""                # refused MoveIt objects, one sentence each
    notes: tuple[str, ...] = ()       # received but not used, each logged once
    dropped: int = 0                  # messages refused since the last call: the queue was full


class SceneInbox:
    """The queue of scene messages; `offer` from a callback, `take` from the tick."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._queue: deque[SceneMessage | SceneChange] = deque()
        self._dropped = 0
        self._mirror = MoveItSceneMirror()
        self._notes_seen: set[str] = set()

    def offer(self, msg: SceneMessage) -> None:
        if len(self._queue) >= self.limit:
            self._dropped += 1
        else:
            self._queue.append(msg)

    def __len__(self) -> int:
        """Messages (and expanded changes) waiting."""
        return len(self._queue)

    @property
    def pending(self) -> bool:
        return bool(self._queue) or self._dropped > 0

    def take(self, present: set[str]) -> NextScene:
        """The next change, given the ids of the objects in the scene now.

        Raises:
            RobokinError: a SceneObject message or CollisionObject that cannot be converted.
        """
        if self._dropped:
            dropped, self._dropped = self._dropped, 0
            return NextScene(dropped=dropped)
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
