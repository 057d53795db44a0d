"""Which command input the servo listens to, switched as MoveIt Servo's `~/switch_command_type` does.

MoveIt Servo (Jazzy and later) processes only the input of its current command type and drops the others with a
warning; a switch succeeds when the servo's type afterwards is the one requested. robokin serves twists today
(joint jog and pose inputs come later), so a switch to them is refused with the reason, and the type stays TWIST.

Start state: MoveIt Servo never initialises its command type (in practice JOINT_JOG, so its clients call
`~/switch_command_type` with TWIST before streaming twists). robokin starts in TWIST: such a client's call then
succeeds and changes nothing, and a client that streams twists straight away works too.
"""
from __future__ import annotations

import enum
from typing import NamedTuple


class CommandType(enum.IntEnum):
    """The constants of moveit_msgs/srv/ServoCommandType."""

    JOINT_JOG = 0
    TWIST = 1
    POSE = 2


SUPPORTED = frozenset((CommandType.TWIST,))


class SwitchResult(NamedTuple):
    """The answer to a switch request."""

    success: bool
    reason: str              # one sentence for the log and the caller


class CommandTypeSwitch:
    """The servo's current command type; `accepts(kind)` tells whether an input of that type is to be used."""

    def __init__(self) -> None:
        self.current = CommandType.TWIST

    def request(self, requested: int) -> SwitchResult:
        """Switch to `requested` (a ServoCommandType constant) if robokin serves it; the type is unchanged
        otherwise."""
        try:
            wanted = CommandType(requested)
        except ValueError:
            valid = ", ".join(f"{t.name}={int(t)}" for t in CommandType)
            return SwitchResult(False, f"unknown command type {requested}; valid: {valid}")
        if wanted not in SUPPORTED:
            return SwitchResult(False, f"command type {wanted.name} is not supported yet (robokin's servo takes "
                                       f"{', '.join(t.name for t in sorted(SUPPORTED))} commands); still "
                                       f"{self.current.name}")
        self.current = wanted
        return SwitchResult(True, f"command type is {wanted.name}")

    def accepts(self, kind: CommandType) -> bool:
        """True when an input of `kind` is to be processed (MoveIt Servo ignores the other kinds)."""
        return kind == self.current
