"""Stamps: the time a message or a measurement was taken, carried as integer nanoseconds.

A builtin_interfaces/Time is two integers (sec, nanosec), which an int holds exactly: two stamps compare and
subtract without rounding. A float of seconds since the epoch (~1.7e9 s) has a resolution of ~240 ns, so stamps
go through the core as int nanoseconds (ros/conversions.py `time_nanoseconds` / `time_msg` convert the messages)
and become float seconds only where a duration is computed from them, with the functions below.

`header_seconds` is how the stamps of messages were read as seconds before they were carried as integers
(sec + nanosec * 1e-9), `clock_seconds` how the nodes read the ROS clock (nanoseconds * 1e-9); the computations
that used them keep them, so that their results stay the same to the bit.
Durations (periods, timeouts, time_from_start) stay float seconds: they are parameters, not points in time.
"""
from __future__ import annotations

import numbers

from robokin_ros.core.errors import InvalidInputError

NS_PER_S = 1_000_000_000
UNSTAMPED = 0           # a zero stamp: the publisher does not stamp (JTC reads it as "start now")


def header_seconds(stamp_ns: int) -> float:
    """A stamp [ns] as seconds, the way a message's (sec, nanosec) was read: sec + nanosec * 1e-9."""
    sec, nanosec = divmod(stamp_ns, NS_PER_S)
    return sec + nanosec * 1e-9


def clock_seconds(clock_ns: int) -> float:
    """A ROS clock reading [ns] as seconds, the way the nodes read it: nanoseconds * 1e-9."""
    return clock_ns * 1e-9


def check_stamp(name: str, value: int) -> None:
    """Raise InvalidInputError naming `name` unless `value` is an integer stamp [ns]. A float of seconds is refused
    rather than read as a few nanoseconds; 0.0 is taken as UNSTAMPED, which callers wrote before stamps were
    integers."""
    if isinstance(value, bool) or not (isinstance(value, numbers.Integral) or value == 0.0):
        raise InvalidInputError(f"{name} must be an integer stamp [ns], got {value!r}")
