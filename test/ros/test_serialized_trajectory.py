"""The servo's serialized JointTrajectory: what a subscriber deserializes is the message the servo means."""
import numpy as np
import pytest
from rclpy.serialization import deserialize_message
from trajectory_msgs.msg import JointTrajectory

from robokin_ros.core.servo.types import TrajectoryWindow
from robokin_ros.ros import conversions as cv
from robokin_ros.ros import serialized_trajectory as st

PANDA = tuple(f"panda_joint{i}" for i in range(1, 8))


def _random_window(rng, k, n):
    # irregular times with sub-microsecond parts: durations must round to the nanosecond as the message builder does
    times = np.concatenate(([0.0], np.cumsum(rng.uniform(1e-4, 2.5, k - 1))))
    return TrajectoryWindow(times, rng.normal(0, 2, (k, n)), rng.normal(0, 2, (k, n)))


def _fields(msg: JointTrajectory):
    return (msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id, list(msg.joint_names),
            [(list(p.positions), list(p.velocities), list(p.accelerations), list(p.effort),
              p.time_from_start.sec, p.time_from_start.nanosec) for p in msg.points])


@pytest.mark.parametrize("names, points", [(PANDA, 4), (PANDA, 11), (("a", "bb", "ccc"), 2), (("only",), 7)])
def test_filled_bytes_deserialize_to_the_message_the_builder_makes(names, points):
    serialized = st.SerializedTrajectory.build(names, points)
    assert serialized is not None
    rng = np.random.default_rng(points)
    for stamp_ns in (0, 1, 1_795_372_494_164_587_117, 2**31 * 1_000_000_000 - 1):
        window = _random_window(rng, points, len(names))
        received = deserialize_message(serialized.fill(window, stamp_ns), JointTrajectory)
        expected = cv.trajectory_msg(names, window)
        expected.header.stamp = cv.time_msg(stamp_ns)
        assert _fields(received) == _fields(expected)


def test_a_refill_leaves_nothing_of_the_previous_window():
    serialized = st.SerializedTrajectory.build(PANDA, 4)
    rng = np.random.default_rng(3)
    first, second = _random_window(rng, 4, 7), _random_window(rng, 4, 7)
    serialized.fill(first, 5)
    received = deserialize_message(serialized.fill(second, 6), JointTrajectory)
    np.testing.assert_array_equal([p.positions for p in received.points], second.positions)
    np.testing.assert_array_equal([p.velocities for p in received.points], second.velocities)
    assert received.header.stamp.nanosec == 6


def test_a_layout_that_cannot_be_located_gives_none(monkeypatch):
    """Markers found twice (here: the bytes doubled) mean the layout is unknown: the caller must build messages."""
    real = st.serialize_message
    monkeypatch.setattr(st, "serialize_message", lambda msg: real(msg) * 2)
    assert st.SerializedTrajectory.build(PANDA, 4) is None
