"""The time each published trajectory starts at: advanced by exactly one period per tick, kept near the clock.

The core integrates exactly `publish_period` per tick, so the stamp advances by the same amount: then every
window agrees with the previous ones on where the arm is at any instant, and a late tick or message is
harmless (the controller samples further into the window). The stamp never runs ahead of the clock (the
controller would see a trajectory starting in the future); when late ticks have let it fall behind by
SLEW_FROM_LATENCY_SHARE of the window, it slews back by 1 / SLEW_DIVISOR of a period per tick (a time
stretch, not a jump); a clock jump of RESYNC_NS or more re-syncs at once.
"""
from __future__ import annotations

from robokin_ros.core.servo.config import ServoConfig

NS_PER_S = 1_000_000_000
RESYNC_NS = NS_PER_S             # [ns] lag treated as a clock jump (paused simulation, clock step)
SLEW_FROM_LATENCY_SHARE = 0.25   # lag, as a share of max_expected_latency, from which the stamp slews
SLEW_DIVISOR = 10                # slew per tick = period / SLEW_DIVISOR: a 10 % time stretch


class StampClock:
    """Stamps [ns] for consecutive ticks; `next` is called once per tick with the clock's time then."""

    def __init__(self) -> None:
        self._last_ns: int | None = None

    def next(self, now_ns: int, config: ServoConfig) -> int:
        """The stamp [ns] of this tick's trajectory, given the clock's time `now_ns` [ns]."""
        period_ns = int(round(config.publish_period * NS_PER_S))
        last = self._last_ns
        candidate = now_ns if last is None else last + period_ns
        lag = now_ns - candidate
        if candidate > now_ns or lag > RESYNC_NS:
            candidate = now_ns
        elif lag > config.max_expected_latency * (SLEW_FROM_LATENCY_SHARE * NS_PER_S):
            candidate += min(lag, period_ns // SLEW_DIVISOR)
        self._last_ns = candidate
        return candidate
