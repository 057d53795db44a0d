"""The servo's JointTrajectory kept as its serialized bytes and refilled in place each tick.

Why: at 1 kHz, building the message's Python objects and letting rclpy convert and serialize them costs more than
the whole servo step (about 30 us for 4 points, 100 us for 11, on a 2-core machine), while a JointTrajectory of
fixed joints and a fixed number of points has a fixed byte layout: only the numbers change from tick to tick.
`rclpy.Publisher.publish` accepts serialized bytes of the publisher's type (the rmw's `publish_serialized`), so the
servo serializes one message per layout through rclpy, finds where its numbers sit in the bytes, and afterwards
writes the numbers there with numpy. Subscribers receive an ordinary JointTrajectory; nothing about the message
changes, only how it is built.

The layout is found, not assumed: the template message carries distinct marker values in every field that
changes, and each marker must occur exactly once in the serialized bytes. If the rmw's encoding does not allow
that (big-endian, markers found twice), `SerializedTrajectory.build` returns None and the caller publishes
messages as before.
"""
from __future__ import annotations

import array
import struct
import sys
from collections.abc import Sequence

import numpy as np
from builtin_interfaces.msg import Duration
from numba import njit
from rclpy.serialization import serialize_message
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robokin_ros.core.servo.types import TrajectoryWindow

# Marker values: unlikely to occur by accident in a message's other bytes (lengths, names, zeros); each is unique.
_POSITION_MARKER = -7.3e-301
_VELOCITY_MARKER = 5.9e-299
_STAMP_MARKER = (1_234_560_000, 987_650_000)
_DURATION_MARKER = (1_234_500_000, 987_600_000)
_NANOSECONDS = 1_000_000_000
_LITTLE_ENDIAN_BIT = 0x01    # of the encapsulation identifier's second byte (CDR_LE 0x0001, CDR2_LE 0x0007 ...)


def _find_once(data: bytes, pattern: bytes) -> int | None:
    at = data.find(pattern)
    if at < 0 or data.find(pattern, at + 1) >= 0:
        return None
    return at


@njit(cache=True)
def _write_window(data, position_at, velocity_at, duration_at, stamp_at, positions, velocities, times, stamp_sec,
                  stamp_nanosec):
    """Copy a window's numbers to their byte offsets in `data` (uint8): one compiled call instead of a dozen
    numpy operations, each of which costs microseconds in a loop whose caches are cold at every tick."""
    k, n = positions.shape
    row = 8 * n
    position_bytes = positions.view(np.uint8)          # (k, 8 n): C-contiguous rows of doubles
    velocity_bytes = velocities.view(np.uint8)
    for i in range(k):
        for b in range(row):
            data[position_at[i] + b] = position_bytes[i, b]
            data[velocity_at[i] + b] = velocity_bytes[i, b]
        total = np.int64(np.rint(times[i] * 1e9))      # builtin_interfaces/Duration: rounded to the nanosecond
        _write_int32_pair(data, duration_at[i], total // _NANOSECONDS, total % _NANOSECONDS)
    _write_int32_pair(data, stamp_at, stamp_sec, stamp_nanosec)


@njit(cache=True)
def _write_int32_pair(data, at, first, second):
    """Two 32-bit integers (little-endian, as the layout was found) at byte `at`."""
    for b in range(4):
        data[at + b] = (first >> (8 * b)) & 0xFF
        data[at + 4 + b] = (second >> (8 * b)) & 0xFF


class SerializedTrajectory:
    """Serialized JointTrajectory bytes for one joint list and point count, refilled from `TrajectoryWindow`s."""

    def __init__(self, data: bytearray, position_at: np.ndarray, velocity_at: np.ndarray, duration_at: np.ndarray,
                 stamp_at: int, joints: int) -> None:
        self._data = data
        self._bytes = np.frombuffer(data, dtype=np.uint8)          # writable: data is a bytearray
        self._position_at, self._velocity_at = position_at, velocity_at      # (k,) byte offsets of each row
        self._duration_at, self._stamp_at = duration_at, stamp_at
        self.points = len(position_at)
        self.joints = joints

    @classmethod
    def build(cls, joint_names: Sequence[str], points: int) -> SerializedTrajectory | None:
        """The layout of a `points`-point trajectory over `joint_names`; None when it cannot be located (the
        caller then builds messages)."""
        if sys.byteorder != "little":
            return None
        n = len(joint_names)
        msg = JointTrajectory(joint_names=list(joint_names))
        msg.header.stamp.sec, msg.header.stamp.nanosec = _STAMP_MARKER
        for i in range(points):
            # a marker per point and joint: steps of 2**-40 keep them distinct and of the same magnitude
            position = [_POSITION_MARKER * (1.0 + (i * n + j) * 2.0 ** -40) for j in range(n)]
            velocity = [_VELOCITY_MARKER * (1.0 + (i * n + j) * 2.0 ** -40) for j in range(n)]
            msg.points.append(JointTrajectoryPoint(
                positions=array.array("d", position), velocities=array.array("d", velocity),
                time_from_start=Duration(sec=_DURATION_MARKER[0] + i, nanosec=_DURATION_MARKER[1] + i)))
        data = bytearray(serialize_message(msg))
        if data[0] != 0 or not data[1] & _LITTLE_ENDIAN_BIT:
            return None

        def located(pattern: bytes) -> int | None:
            return _find_once(data, pattern)

        position_at = [located(struct.pack("<%dd" % n, *msg.points[i].positions)) for i in range(points)]
        velocity_at = [located(struct.pack("<%dd" % n, *msg.points[i].velocities)) for i in range(points)]
        duration_at = [located(struct.pack("<iI", _DURATION_MARKER[0] + i, _DURATION_MARKER[1] + i))
                       for i in range(points)]
        stamp_at = located(struct.pack("<iI", *_STAMP_MARKER))
        if stamp_at is None or any(None in offsets for offsets in (position_at, velocity_at, duration_at)):
            return None
        layout = cls(data, np.array(position_at), np.array(velocity_at), np.array(duration_at), stamp_at, n)
        # the first fill loads the compiled writer: at start-up, not on the first tick of a control loop
        layout.fill(TrajectoryWindow(np.arange(points, dtype=float), np.zeros((points, n)), np.zeros((points, n))), 0)
        return layout

    def fill(self, window: TrajectoryWindow, stamp_ns: int) -> bytes:
        """The serialized message for `window` (k points over the joints, chain order, C-contiguous float64
        arrays as the servo makes them) stamped `stamp_ns` [ns on the ROS clock]."""
        sec, nanosec = divmod(stamp_ns, _NANOSECONDS)
        _write_window(self._bytes, self._position_at, self._velocity_at, self._duration_at, self._stamp_at,
                      np.ascontiguousarray(window.positions), np.ascontiguousarray(window.velocities),
                      window.times, sec, nanosec)
        return bytes(self._data)
