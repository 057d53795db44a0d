"""Header stamps for the servo's windows on the ROS clock, spaced exactly as the core's ticks.

The core measures the time between ticks on the receive clock (monotonic) and a window's time 0 is its tick, so
the stamps must differ by exactly those intervals: a controller starts each window at its stamp, and a stamp off
by d moves the arm by v d at the switch. Reading the ROS clock separately each tick adds its own delay
(microseconds, but tens of milliseconds under CPU load when the process is descheduled between the two reads).
So the stamp is the tick's receive time plus an offset to the ROS clock: the smallest offset seen, since a late
read only ever makes it larger.

A clock step (NTP, simulated time) moves the offset for good. A smaller offset is taken at once (a better read,
or a step back); a larger one only once every read for RESYNC_AFTER_S has been more than RESYNC_NS larger. A
late read never lasts that long, and a single late read used to re-measure the offset, which put a step of up to
v * 20 ms into the stream under load.
"""
from __future__ import annotations

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
