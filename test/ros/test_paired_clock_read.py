"""paired_clock_read: the receive clock and the ROS clock read as one moment, even when the process is preempted
between the reads (sim_robot stamps its joint states and carries trajectory stamps over with it: a 4 ms preemption
between two separate reads measured 1.3-2x the acceleration limits in the joint states of a busy CPU)."""
import time
from types import SimpleNamespace

import pytest
from rclpy.clock import Clock, ClockType

from robokin_ros.ros import runtime


class ScriptedClock:
    """A ROS clock whose reads return the given nanoseconds in turn."""

    def __init__(self, readings):
        self._readings = iter(readings)

    def now(self):
        return SimpleNamespace(nanoseconds=next(self._readings))


def _receive_clock(monkeypatch, readings):
    it = iter(readings)
    monkeypatch.setattr(runtime, "receive_time", lambda: next(it))


def test_a_read_split_by_a_preemption_is_read_again(monkeypatch):
    # first try: preempted 6 ms after the ROS clock read; second try: 20 us wide
    _receive_clock(monkeypatch, [10.000, 10.006, 10.0061, 10.00612])
    moment, clock_ns = runtime.paired_clock_read(ScriptedClock([5_000_000_000, 5_006_110_000]))
    assert moment == pytest.approx(10.00611, abs=1e-9)
    assert clock_ns == 5_006_110_000


def test_when_every_try_is_split_the_narrowest_bracket_wins(monkeypatch):
    widths = [0.006, 0.002, 0.004, 0.003, 0.005]
    assert len(widths) == runtime.CLOCK_PAIR_TRIES
    starts = [1.0 + 0.1 * k for k in range(len(widths))]
    _receive_clock(monkeypatch, [t for s, w in zip(starts, widths) for t in (s, s + w)])
    moment, clock_ns = runtime.paired_clock_read(ScriptedClock([100 + k for k in range(len(widths))]))
    assert clock_ns == 101
    assert moment == pytest.approx(starts[1] + 0.001)


def test_real_clocks_are_read_within_the_call():
    clock = Clock(clock_type=ClockType.SYSTEM_TIME)
    mono_before, wall_before = time.monotonic(), time.time_ns()
    moment, clock_ns = runtime.paired_clock_read(clock)
    mono_after, wall_after = time.monotonic(), time.time_ns()
    assert mono_before <= moment <= mono_after
    assert wall_before <= clock_ns <= wall_after
