"""Header stamps for the servo's windows on the ROS clock, spaced exactly as the core's ticks.

The core measures the time between ticks on the receive clock (monotonic) and a window's time 0 is its tick, so
the stamps must differ by exactly those intervals. Reading the ROS clock separately each tick adds its own delay
(microseconds, but milliseconds under CPU load when a thread switch falls between the two reads), and a
controller would then start each window late and pull the arm back by that much. So the stamp is the tick's
receive time plus an offset to the ROS clock: the smallest offset seen, since a late read only ever makes it
larger, re-measured when the ROS clock runs ahead by more than RESYNC_NS (a clock step, simulated time).
"""
from __future__ import annotations

RESYNC_NS = 20_000_000     # [ns] the ROS clock ahead of the stamps by more than this is a clock step, not a late read


class TickStamps:
    """Stamps [ns] on the ROS clock for ticks timed on the receive clock."""

    def __init__(self) -> None:
        self._offset_ns: int | None = None

    def stamp(self, tick_s: float, clock_now_ns: int) -> int:
        """The stamp [ns] of the tick at receive time `tick_s` [s], given the ROS clock read just after it [ns]."""
        tick_ns = int(round(tick_s * 1e9))
        observed = clock_now_ns - tick_ns
        if self._offset_ns is None or observed < self._offset_ns or observed > self._offset_ns + RESYNC_NS:
            self._offset_ns = observed
        return tick_ns + self._offset_ns
