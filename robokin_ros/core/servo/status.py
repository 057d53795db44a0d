"""Servo status codes, numbered as robokin_interfaces/msg/ServoStatus (0-6 as MoveIt Servo), with sentences."""
from __future__ import annotations

import enum


class ServoStatus(enum.IntEnum):
    """What the servo is doing and why; `sentence` is the text shown to a person."""

    INVALID = -1
    OK = 0
    DECELERATE_FOR_APPROACHING_SINGULARITY = 1
    HALT_FOR_SINGULARITY = 2
    JOINT_BOUND = 5
    DECELERATE_FOR_LEAVING_SINGULARITY = 6
    VELOCITY_LIMITED = 10
    STALE_COMMAND = 11
    STOPPED = 12
    JOINT_STATE_MISSING = 13
    PAUSED = 14
    INVALID_COMMAND = 15

    @property
    def routine(self) -> bool:
        """True for the states of normal operation (worth an INFO log line); the others deserve a warning."""
        return self in _ROUTINE

    @property
    def sentence(self) -> str:
        """A short, human sentence for this code (details such as joint names are appended by callers)."""
        return _SENTENCES[self]


_SENTENCES = {
    ServoStatus.INVALID: "servo is not ready",
    ServoStatus.OK: "tracking the command",
    ServoStatus.DECELERATE_FOR_APPROACHING_SINGULARITY: "near a singularity: slowing down",
    ServoStatus.HALT_FOR_SINGULARITY: "at the singularity threshold: motion toward it is halted",
    ServoStatus.JOINT_BOUND: "a joint is at its position limit: motion pushing it further is blocked",
    ServoStatus.DECELERATE_FOR_LEAVING_SINGULARITY: "leaving a singularity: moving slowly",
    ServoStatus.VELOCITY_LIMITED: "command exceeds joint velocity limits: scaled down, direction kept",
    ServoStatus.STALE_COMMAND: "no fresh command within the timeout: decelerating to a stop",
    ServoStatus.STOPPED: "idle: no command, arm held still",
    ServoStatus.JOINT_STATE_MISSING: "no recent joint state: halted until joint states arrive",
    ServoStatus.PAUSED: "paused: commands are ignored until resumed",
    ServoStatus.INVALID_COMMAND: "the last command was rejected",
}

_ROUTINE = frozenset((ServoStatus.OK, ServoStatus.STOPPED, ServoStatus.PAUSED, ServoStatus.STALE_COMMAND))
