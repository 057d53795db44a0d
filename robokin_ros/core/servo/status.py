"""Servo status codes, numbered as robokin_interfaces/msg/ServoStatus (0-6 as MoveIt Servo), with sentences."""
from __future__ import annotations

from robokin_ros.core.codes import SentencedCode


class ServoStatus(SentencedCode):
    """What the servo is doing and why; `sentence` is the text shown to a person."""

    INVALID = -1, "servo is not ready"
    OK = 0, "tracking the command"
    DECELERATE_FOR_APPROACHING_SINGULARITY = 1, "near a singularity: slowing down"
    HALT_FOR_SINGULARITY = 2, "at the singularity threshold: motion toward it is halted"
    JOINT_BOUND = 5, "a joint is at its position limit: motion pushing it further is blocked"
    DECELERATE_FOR_LEAVING_SINGULARITY = 6, "leaving a singularity: moving slowly"
    VELOCITY_LIMITED = 10, "command exceeds joint velocity limits: scaled down, direction kept"
    STALE_COMMAND = 11, "no fresh command within the timeout: decelerating to a stop"
    STOPPED = 12, "idle: no command, arm held still"
    JOINT_STATE_MISSING = 13, "no recent joint state: halted until joint states arrive"
    PAUSED = 14, "paused: commands are ignored until resumed"
    INVALID_COMMAND = 15, "the last command was rejected"

    @property
    def routine(self) -> bool:
        """True for the states of normal operation (worth an INFO log line); the others deserve a warning."""
        return self in _ROUTINE


_ROUTINE = frozenset((ServoStatus.OK, ServoStatus.STOPPED, ServoStatus.PAUSED, ServoStatus.STALE_COMMAND))
