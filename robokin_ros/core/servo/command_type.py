"""Which command input the servo listens to, switched as MoveIt Servo's `~/switch_command_type` does.

MoveIt Servo (Jazzy and later) processes only the input of its current command type and drops the others with a
warning; a switch succeeds when the servo's type afterwards is the one requested. robokin serves all three: joint
jogs, twists and pose targets.

Start state: MoveIt Servo never initialises its command type (in practice JOINT_JOG, so its clients call
`~/switch_command_type` with TWIST before streaming twists). robokin starts in TWIST: such a client's call then
succeeds and changes nothing, and a client that streams twists straight away works too.

A client that simply publishes on the other input's topic works as well (robokin's choice; MoveIt would drop it):
while the servo is idle (no command of the current type within `incoming_command_timeout`), an input of another
served type switches the type to its own (`offer`). While a command of the current type is fresh, the other input
is dropped with a warning, as MoveIt does: two clients cannot fight over the arm tick by tick.
"""
from __future__ import annotations

import enum
from typing import NamedTuple


class CommandType(enum.IntEnum):
    """The constants of moveit_msgs/srv/ServoCommandType."""

    JOINT_JOG = 0
    TWIST = 1
    POSE = 2


SUPPORTED = frozenset((CommandType.TWIST, CommandType.JOINT_JOG, CommandType.POSE))


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

    def offer(self, kind: CommandType, idle: bool) -> SwitchResult:
        """An input of `kind` arrived: True if it is to be used, switching the type to `kind` when the servo is
        `idle` (no fresh command of the current type); the reason says which."""
        if kind == self.current:
            return SwitchResult(True, f"command type is {kind.name}")
        if idle and kind in SUPPORTED:
            previous, self.current = self.current, kind
            return SwitchResult(True, f"command type switched from {previous.name} to {kind.name} by a "
                                      f"{kind.name} input (the servo was idle)")
        return SwitchResult(False, f"{kind.name} input ignored: the command type is {self.current.name} and its "
                                   f"command is still fresh (call ~/switch_command_type with {kind.name}, or "
                                   "stop the other client)")
