"""What the servo's status topic says each tick: the servo's status merged with a recently rejected input,
sent when it changes and at least once per status period."""
from __future__ import annotations

from typing import NamedTuple

from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.types import ServoOutput

# While paused or without joint states the servo's own status explains everything; a rejection would hide it.
_OVERRIDES_REJECTIONS = (ServoStatus.PAUSED, ServoStatus.JOINT_STATE_MISSING)
# A rejected command, or an internal error that dropped the command, is the news: it replaces the servo's status.
_REPLACES_STATUS = (ServoStatus.INVALID_COMMAND, ServoStatus.INVALID)


class Rejection(NamedTuple):
    """An input the servo refused, shown in the status until `until`."""

    code: ServoStatus        # INVALID_COMMAND (a twist), JOINT_STATE_MISSING (a joint state), INVALID (a failed tick)
    reason: str
    until: float             # [s] on the caller's clock
    of_command: bool = True  # a rejected command, which the next valid command makes obsolete


class StatusReport(NamedTuple):
    """A status to publish."""

    code: ServoStatus
    message: str
    changed: bool            # differs from the last report (code, locked joints or rejection): worth a log line


class StatusReporter:
    """Decides, tick by tick, whether and what to report; the caller publishes and logs."""

    def __init__(self) -> None:
        self._rejection: Rejection | None = None
        self._last_key: tuple | None = None
        self._last_time = -float("inf")

    def reject(self, code: ServoStatus, reason: str, now: float, period: float, of_command: bool = True) -> None:
        """Show a rejected input for `period` [s] from `now` [s]; `of_command=False` for one that a valid command
        does not make obsolete (a scene change, a sensor reading): it stays for the period even while commands
        stream."""
        self._rejection = Rejection(code, reason, now + period, of_command)

    def command_accepted(self) -> None:
        """A valid twist arrived: an earlier rejected twist no longer describes the servo."""
        if self._rejection and self._rejection.code == ServoStatus.INVALID_COMMAND and self._rejection.of_command:
            self._rejection = None

    def report(self, output: ServoOutput, now: float, period: float) -> StatusReport | None:
        """The status for this tick's output at `now` [s]; None when it repeats the last one within `period` [s].

        A rejected twist replaces the servo's status (the user's command is the news); a rejected joint state
        is appended to it (the servo still runs on the last good one).
        """
        code, message = output.status, output.message
        rejection = self._rejection
        if rejection is not None and now >= rejection.until:
            self._rejection = rejection = None
        if rejection is not None and code not in _OVERRIDES_REJECTIONS:
            if rejection.code in _REPLACES_STATUS:
                code, message = rejection.code, rejection.reason
            else:
                message = f"{message}; {rejection.reason}"
        key = (code, output.locked_joints, rejection.reason if rejection else "")
        if key == self._last_key and now - self._last_time < period:
            return None
        changed = key != self._last_key
        self._last_key, self._last_time = key, now
        return StatusReport(code, message, changed)
