"""Goal bookkeeping of a single-goal action server: claim at acceptance, run one at a time, preempt or reject.

rclpy accepts a goal in one callback and hands it to the execute callback later. A goal accepted but not yet
executing must already count as running, or two goals sent back to back could both be accepted; `GoalGate`
claims the busy state under a lock when the goal callback accepts, and releases it when the execute
callback ends.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

# [s] an accepted goal that never reaches handle_accepted (rclpy drops it when the goal response cannot be
# sent, e.g. the client went away) stops counting as busy after this long instead of blocking forever.
PENDING_CLAIM_TIMEOUT = 5.0


class GoalAbort(Exception):
    """Ends a goal early with an error code and message (not a RobokinError: a node-level outcome)."""

    def __init__(self, code: int, message: str) -> None:
        self.code = code
        super().__init__(message)


class GoalGate:
    """Busy state of the action: pending claims (accepted, not yet executing) and running goals."""

    def __init__(self, pending_timeout: float = PENDING_CLAIM_TIMEOUT,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._lock = threading.Lock()
        self._pending: list[float] = []           # acceptance times of goals not yet handed to execute
        self._running = 0                         # goals handed to execute whose callback has not ended
        self._exec_lock = threading.Lock()        # one execution at a time: a preempting goal waits here
        self._preempted = threading.Event()
        self._pending_timeout = pending_timeout
        self._clock = clock

    def claim(self, preempt: bool) -> bool:
        """Judge a new goal: False = reject (busy and no preemption); True = accept, preempting a running one."""
        with self._lock:
            now = self._clock()
            self._pending = [t for t in self._pending if now - t < self._pending_timeout]
            busy = self._busy()
            if busy and not preempt:
                return False
            if busy:
                self._preempted.set()
            self._pending.append(now)
        return True

    def start(self) -> None:
        """An accepted goal is handed to execute: its claim moves from pending to running."""
        with self._lock:
            if self._pending:
                self._pending.pop(0)
            self._running += 1

    def busy(self) -> bool:
        """A goal is pending or running."""
        with self._lock:
            return self._busy()

    def _busy(self) -> bool:
        return self._running > 0 or bool(self._pending)

    def preempted(self) -> bool:
        """A newer goal asked the running one to stop."""
        return self._preempted.is_set()

    @contextmanager
    def executing(self, finish: Callable[[], None]) -> Iterator[None]:
        """Run one goal at a time; on exit release its claim, then call `finish` (still serialized), so a
        client that sees the result can send the next goal without it being judged against this one."""
        with self._exec_lock:
            self._preempted.clear()
            try:
                yield
            finally:
                with self._lock:
                    self._running -= 1
                finish()


def end_goal(goal_handle, succeeded: bool, canceled: bool) -> None:
    """End an active goal: succeed, canceled (only if the client asked for it) or abort."""
    if not goal_handle.is_active:
        return
    if succeeded:
        goal_handle.succeed()
    elif canceled and goal_handle.is_cancel_requested:
        goal_handle.canceled()
    else:
        goal_handle.abort()
