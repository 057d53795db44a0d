"""The servo loop's missed-tick watchdog: how late its ticks start and how long they take, from its own clock.

A Python timer on a busy robot PC starts late, sometimes by tens of milliseconds. The windows cover that (their
stamps are the ticks' times, see core/servo/window.py), but a user tuning a cell needs to see it: the figures go
into every ~/robokin_status message, and the node warns when a tick is later than a threshold.

Lateness of a tick: its start minus (the previous tick's start + one period), at least 0.
Late tick: lateness of one period or more, i.e. the controller went two periods without a new window.
Overrun: a tick whose own work took longer than the period.
"""
from __future__ import annotations

from dataclasses import dataclass

BUCKET_S = 0.1               # [s] the last second is kept as ten buckets of this length
BUCKETS = 10


@dataclass(frozen=True)
class WatchdogFigures:
    """What the watchdog reports."""

    worst_lateness: float    # [s] the largest tick lateness in the last second
    ticks_last_second: int   # ticks that started in the last second
    late_ticks: int          # since start
    overruns: int            # since start


class TickWatchdog:
    """Fed with each tick's start and end on one monotonic clock [s]."""

    def __init__(self, period: float) -> None:
        self.period = period
        self.late_ticks = 0
        self.overruns = 0
        self._last_start: float | None = None
        self._worst = [0.0] * BUCKETS         # per bucket: the largest lateness
        self._ticks = [0] * BUCKETS
        self._bucket = None                   # index of the current bucket on the clock (start // BUCKET_S)

    def tick_started(self, now: float) -> float:
        """Record a tick starting at `now`; returns its lateness [s]."""
        lateness = 0.0 if self._last_start is None else max(0.0, now - self._last_start - self.period)
        self._last_start = now
        if lateness >= self.period:
            self.late_ticks += 1
        slot = self._slot(now)
        self._worst[slot] = max(self._worst[slot], lateness)
        self._ticks[slot] += 1
        return lateness

    def tick_finished(self, started: float, finished: float) -> None:
        """Record the end of the tick that started at `started`."""
        if finished - started > self.period:
            self.overruns += 1

    def figures(self, now: float) -> WatchdogFigures:
        """The figures at `now` (the last second: the current bucket and the nine before it)."""
        self._slot(now)
        return WatchdogFigures(max(self._worst), sum(self._ticks), self.late_ticks, self.overruns)

    def _slot(self, now: float) -> int:
        """The current bucket's index, clearing the buckets that the clock has moved past."""
        bucket = int(now // BUCKET_S)
        if self._bucket is None or bucket - self._bucket >= BUCKETS:
            self._worst, self._ticks = [0.0] * BUCKETS, [0] * BUCKETS
        else:
            for b in range(self._bucket + 1, bucket + 1):
                self._worst[b % BUCKETS], self._ticks[b % BUCKETS] = 0.0, 0
        self._bucket = bucket if self._bucket is None else max(self._bucket, bucket)
        return bucket % BUCKETS
