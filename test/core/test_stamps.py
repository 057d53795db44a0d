"""core/stamps.py: stamps are int ns; the conversions to seconds are the ones the messages and clocks were read with,
so the computations that use them give what they gave when stamps were floats."""
import numpy as np
import pytest

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.stamps import NS_PER_S, UNSTAMPED, check_stamp, clock_seconds, header_seconds

# a stamp on today's ROS clock, where a float of seconds resolves only 2**-22 s (~240 ns)
STAMP = 1_764_000_000 * NS_PER_S + 123_456_789


def test_header_seconds_is_how_a_message_stamp_was_read():
    rng = np.random.default_rng(4)
    for _ in range(10_000):
        sec, nanosec = int(rng.integers(0, 2**31)), int(rng.integers(0, NS_PER_S))
        assert header_seconds(sec * NS_PER_S + nanosec) == sec + 1e-9 * nanosec      # bit for bit
    assert header_seconds(UNSTAMPED) == 0.0


def test_header_seconds_of_an_array_matches_each_stamp():
    stamps = np.array([STAMP, STAMP + 1, STAMP + 10_000_000, 5], dtype=np.int64)
    seconds = header_seconds(stamps)
    assert seconds.dtype == np.float64
    assert [float(s) for s in seconds] == [header_seconds(int(s)) for s in stamps]


def test_clock_seconds_is_how_the_nodes_read_the_ros_clock():
    assert clock_seconds(STAMP) == STAMP * 1e-9
    # the two readings differ by rounding, which is why each computation keeps the one it used
    assert any(clock_seconds(STAMP + k) != header_seconds(STAMP + k) for k in range(100))


def test_integer_stamps_keep_what_float_seconds_lose():
    stamps = [STAMP + k for k in range(1000)]                   # 1000 stamps 1 ns apart
    assert len(set(stamps)) == 1000 and len({header_seconds(s) for s in stamps}) <= 6


@pytest.mark.parametrize("value", [0, STAMP, np.int64(STAMP), 0.0])
def test_integer_stamps_and_an_unstamped_zero_are_taken(value):
    check_stamp("stamp", value)


@pytest.mark.parametrize("value", [1.5, 1_764_000_000.25, float("nan"), True, "5", None])
def test_anything_else_is_refused_rather_than_read_as_nanoseconds(value):
    with pytest.raises(InvalidInputError, match="stamp must be an integer stamp"):
        check_stamp("stamp", value)
