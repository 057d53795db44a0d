"""The servo tick's clock: the stamps its windows carry on the ROS clock, and the watchdog of its late ticks.

Both work from the tick's time on the receive clock (monotonic), the clock the core measures its ticks on.

Stamps (`TickStamps`): a window's time 0 is its tick and the core measures the time between ticks on the receive
clock, so the stamps must differ by exactly those intervals: a controller starts each window at its stamp, and a
stamp off by d moves the arm by v d at the switch. Reading the ROS clock separately each tick adds its own delay
(microseconds, but tens of milliseconds under CPU load when the process is descheduled between the two reads).
So the stamp is the tick's receive time plus an offset to the ROS clock: the smallest offset seen, since a late
read only ever makes it larger.

A clock step (NTP, simulated time) moves the offset for good. A smaller offset is taken at once (a better read,
or a step back); a larger one only once every read for RESYNC_AFTER_S has been more than RESYNC_NS larger. A
late read never lasts that long, and a single late read used to re-measure the offset, which put a step of up to
v * 20 ms into the stream under load.

Watchdog (`TickWatchdog`): how late the ticks start and how long they take. A Python timer on a busy robot PC
starts late, sometimes by tens of milliseconds. The windows cover that (their stamps are the ticks' times, see
core/servo/window.py), but a user tuning a cell needs to see it: the figures go into every ~/robokin_status
message, and the node warns when a tick is later than a threshold.

Lateness of a tick: its start minus (the previous tick's start + one period), at least 0.
Late tick: lateness of one period or more, i.e. the controller went two periods without a new window.
Overrun: a tick whose own work took longer than the period.
"""
from __future__ import annotations

from dataclasses import dataclass

RESYNC_NS = 5_000_000       # [ns] reads later than the offset by more than this may be a clock step ...
RESYNC_AFTER_S = 0.5        # [s] ... if every read says so for this long


class TickStamps:
    """Stamps [ns] on the ROS clock for ticks timed on the receive clock."""

    def __init__(self) -> None:
        self._offset_ns: int | None = None
        self._ahead_since: float | None = None     # [s] receive time of the first read of a possible step
        self._ahead_min_ns = 0

    def stamp(self, tick_s: float, clock_now_ns: int) -> int:
        """The stamp [ns] of the tick at receive time `tick_s` [s], given the ROS clock read just after it [ns]."""
        tick_ns = int(round(tick_s * 1e9))
        observed = clock_now_ns - tick_ns
        if self._offset_ns is None or observed < self._offset_ns:
            self._offset_ns, self._ahead_since = observed, None
        elif observed > self._offset_ns + RESYNC_NS:
            if self._ahead_since is None:
                self._ahead_since, self._ahead_min_ns = tick_s, observed
            else:
                self._ahead_min_ns = min(self._ahead_min_ns, observed)
                if tick_s - self._ahead_since >= RESYNC_AFTER_S:
                    self._offset_ns, self._ahead_since = self._ahead_min_ns, None
        else:
            self._ahead_since = None
        return tick_ns + self._offset_ns


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
