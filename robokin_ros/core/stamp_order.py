"""Which joint states may replace the one in use, judged by their header stamps.

A node keeps the newest state by arrival; without this check a replayed or delayed state (an old state
re-published by another process, a second driver lagging behind) would move the arm back to where it was.

Ordering is per joint set, not per publisher. A replay from another process has its own publisher and, within it,
increasing stamps: ordered per publisher it would be accepted, which is the attack this guards against. Ordered
per joint set (the chain joints a state covers), it is compared with the stamps of every source of those joints
and refused. The same rule orders two honest sources of the same joints: the one whose stamps lag is refused,
visibly, which is a configuration error worth seeing. It also needs nothing from the middleware (no publisher
id), so it works on any subscription.

Zero stamps ("unstamped", what a simple publisher leaves) cannot be ordered. They are accepted while no stamped
state of the same joint set was accepted within `hold`, and refused otherwise: a stamped source wins, and an
unstamped replay cannot slip between its states. A stamped state after unstamped ones is always accepted.

A clock that jumps back (a simulation restarted with its own clock, a looping bag) is followed once no stamped
state of that joint set was accepted for `hold` (HOLD): the first one after that pause is taken whatever its stamp
and becomes the new reference. A replay can therefore get in only while the real source is silent that long.
Equal stamps are accepted (a repeated state is harmless).
"""
from __future__ import annotations

from collections.abc import Hashable
from typing import NamedTuple

from robokin_ros.core.errors import InvalidInputError

UNSTAMPED = 0
# [s] A stamped state accepted this recently makes older and unstamped states of its joint set wait. Long against a
# receiver that falls behind (a node starved of CPU for a few hundred ms must not let a replay in when it catches
# up), short against a restart: a node that has seen no state for this long has stopped for want of states anyway.
HOLD = 1.0


class StaleStampError(InvalidInputError):
    """A state whose stamp is older than the one in use, or an unstamped state while stamped ones arrive.

    `stamp_ns` and `newest_ns` are the refused and the newest accepted stamp [ns].
    """

    def __init__(self, message: str, stamp_ns: int, newest_ns: int) -> None:
        self.stamp_ns, self.newest_ns = stamp_ns, newest_ns
        super().__init__(message)


class _Newest(NamedTuple):
    stamp_ns: int          # the newest accepted stamp of the set [ns]
    accepted_at: float     # [s] on the caller's clock, when it was accepted


def _seconds(stamp_ns: int) -> str:
    return f"{stamp_ns // 1_000_000_000}.{stamp_ns % 1_000_000_000:09d} s"


class StampOrder:
    """The newest accepted stamp per joint set; `admit` refuses a state that would go back in time."""

    def __init__(self, hold: float = HOLD) -> None:
        self.hold = hold
        self._newest: dict[Hashable, _Newest] = {}

    def admit(self, joint_set: Hashable, stamp_ns: int, now: float) -> None:
        """Record a state of `joint_set` stamped `stamp_ns` [ns] (0 = unstamped) received at `now` [s], or refuse it.

        Args:
            joint_set: the chain joints the state covers (any hashable naming them).
            stamp_ns: the header stamp [ns]; 0 means the publisher does not stamp.
            now: receive time [s] on the caller's monotonic clock.

        Raises:
            StaleStampError: the stamp is older than the newest accepted one, or the state is unstamped while
                stamped states arrive; the message names both stamps. Nothing is recorded then.
        """
        newest = self._newest.get(joint_set)
        if newest is not None and now - newest.accepted_at < self.hold:
            _refuse_if_behind(newest, stamp_ns, now, self.hold)
        if stamp_ns != UNSTAMPED:
            self._newest[joint_set] = _Newest(stamp_ns, now)


def _refuse_if_behind(newest: _Newest, stamp_ns: int, now: float, hold: float) -> None:
    if stamp_ns == UNSTAMPED:
        raise StaleStampError(
            f"unstamped joint state (stamp 0) refused: a stamped one (newest {_seconds(newest.stamp_ns)}) was "
            f"accepted {(now - newest.accepted_at) * 1e3:.0f} ms ago; unstamped states are used only when no "
            f"stamped state arrives for {hold:g} s", stamp_ns, newest.stamp_ns)
    if stamp_ns < newest.stamp_ns:
        # the constant words first: nodes throttle their logs by a message's start
        raise StaleStampError(
            f"joint state older than the one in use refused: stamped {_seconds(stamp_ns)}, the one in use "
            f"{_seconds(newest.stamp_ns)} ({(newest.stamp_ns - stamp_ns) * 1e-6:.1f} ms newer)",
            stamp_ns, newest.stamp_ns)
