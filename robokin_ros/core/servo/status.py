"""Servo status codes, numbered as robokin_interfaces/msg/ServoStatus, with sentences, and their MoveIt Servo codes.

Codes -1 to 6 are MoveIt Servo's StatusCode (Jazzy and later, moveit_msgs/msg/ServoStatus) with the same numbers,
so a MoveIt client reads them right; robokin's own codes start at 10. `moveit_code` is the code a MoveIt client
sees on `~/status` for each (robokin's own codes map to the nearest MoveIt code; the sentence says the rest).
"""
from __future__ import annotations

import enum

from robokin_ros.core.codes import SentencedCode


class MoveItServoCode(enum.IntEnum):
    """moveit_servo's StatusCode (moveit_servo/utils/datatypes.hpp; constants of moveit_msgs/msg/ServoStatus)."""

    INVALID = -1
    NO_WARNING = 0
    DECELERATE_FOR_APPROACHING_SINGULARITY = 1
    HALT_FOR_SINGULARITY = 2
    DECELERATE_FOR_LEAVING_SINGULARITY = 3
    DECELERATE_FOR_COLLISION = 4
    HALT_FOR_COLLISION = 5
    JOINT_BOUND = 6


class ServoStatus(SentencedCode):
    """What the servo is doing and why; `sentence` is the text shown to a person."""

    INVALID = -1, "servo is not ready"
    OK = 0, "tracking the command"
    DECELERATE_FOR_APPROACHING_SINGULARITY = 1, "near a singularity: slowing down"
    HALT_FOR_SINGULARITY = 2, "at the singularity threshold: motion toward it is halted"
    DECELERATE_FOR_LEAVING_SINGULARITY = 3, "leaving a singularity: damped, escaping toward the command"
    DECELERATE_FOR_COLLISION = 4, "near a collision: slowing down"
    HALT_FOR_COLLISION = 5, "at the minimum collision distance: motion toward the obstacle is halted"
    JOINT_BOUND = 6, "a joint is at its position limit: motion pushing it further is blocked"
    VELOCITY_LIMITED = 10, "command exceeds joint velocity limits: scaled down, direction kept"
    STALE_COMMAND = 11, "no fresh command within the timeout: decelerating to a stop"
    STOPPED = 12, "idle: no command, arm held still"
    JOINT_STATE_MISSING = 13, "no recent joint state: halted until joint states arrive"
    PAUSED = 14, "paused: commands are ignored until resumed"
    INVALID_COMMAND = 15, "the last command was rejected"
    TARGET_REACHED = 16, "pose target reached"
    SEPARATION_LIMITED = 17, "tool speed limited by separation monitoring"
    PROTECTIVE_STOP = 18, "protective stop: a person is inside the protective separation distance"
    HAND_GUIDING = 19, "hand guiding: the tool follows the applied force"

    @property
    def routine(self) -> bool:
        """True for the states of normal operation (worth an INFO log line); the others deserve a warning."""
        return self in _ROUTINE

    @property
    def moveit_code(self) -> MoveItServoCode:
        """The MoveIt Servo code a MoveIt client reads for this status.

        Shared codes keep their number. Of robokin's own: velocity scaling, a stale command, idling and pausing
        are normal operation for MoveIt Servo (it scales for velocity limits and halts on timeout without a
        warning), so NO_WARNING; a missing joint state or a rejected command is INVALID, as MoveIt Servo reports
        a command or robot state it cannot use.
        """
        mapped = _MOVEIT_CODE.get(self)
        return MoveItServoCode(int(self)) if mapped is None else mapped      # NO_WARNING is falsy: test None


_ROUTINE = frozenset((ServoStatus.OK, ServoStatus.STOPPED, ServoStatus.PAUSED, ServoStatus.STALE_COMMAND,
                      ServoStatus.TARGET_REACHED, ServoStatus.HAND_GUIDING))
_MOVEIT_CODE = {
    ServoStatus.VELOCITY_LIMITED: MoveItServoCode.NO_WARNING,
    ServoStatus.STALE_COMMAND: MoveItServoCode.NO_WARNING,
    ServoStatus.STOPPED: MoveItServoCode.NO_WARNING,
    ServoStatus.PAUSED: MoveItServoCode.NO_WARNING,
    ServoStatus.JOINT_STATE_MISSING: MoveItServoCode.INVALID,
    ServoStatus.INVALID_COMMAND: MoveItServoCode.INVALID,
    ServoStatus.TARGET_REACHED: MoveItServoCode.NO_WARNING,
    # MoveIt Servo has no separation monitoring; its collision codes carry the same meaning for a client: slowed
    # because something is near, halted because it is too near
    ServoStatus.SEPARATION_LIMITED: MoveItServoCode.DECELERATE_FOR_COLLISION,
    ServoStatus.PROTECTIVE_STOP: MoveItServoCode.HALT_FOR_COLLISION,
    ServoStatus.HAND_GUIDING: MoveItServoCode.NO_WARNING,
}
