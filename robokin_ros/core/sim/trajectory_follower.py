"""Joint trajectories as ros2_control's JointTrajectoryController follows them: checked, then sampled.

The follower starts from the joint state at the moment a trajectory is accepted (time 0) and interpolates
towards its points: cubic Hermite when the points carry velocities (position and velocity continuous at
every point), linear otherwise. After the last point it holds that point.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robokin_ros.core.errors import InvalidInputError


@dataclass(frozen=True)
class TrajectoryPoints:
    """A trajectory in chain order, times relative to its start."""

    times: np.ndarray                  # (k,) [s] time_from_start
    positions: np.ndarray              # (k, n) [rad | m]
    velocities: np.ndarray | None      # (k, n) [rad/s | m/s]; None = linear interpolation


def trajectory_start(received: float, stamp: float, stamp_clock_now_ns: int) -> float:
    """When a trajectory starts, on the clock `received` is read from [s].

    Args:
        received: when the trajectory arrived [s], receive clock.
        stamp: its header stamp [s] on the stamp clock (ROS time); 0 means "start now", as
            JointTrajectoryController reads it.
        stamp_clock_now_ns: the stamp clock's time at `received` [ns]; the difference of the two clocks
            carries the stamp over to the receive clock.
    """
    if stamp == 0.0:
        return received
    return received + stamp - stamp_clock_now_ns * 1e-9


def check_trajectory(points: TrajectoryPoints, lower: np.ndarray, upper: np.ndarray,
                     joint_names: Sequence[str]) -> None:
    """Reject what JointTrajectoryController rejects; the message names the point and joint.

    Raises:
        InvalidInputError: no points, non-finite or non-increasing times, non-finite values,
            or positions outside [lower, upper].
    """
    times, positions = points.times, points.positions
    k = len(times)
    if k == 0:
        raise InvalidInputError("trajectory has no points")
    if not np.isfinite(times).all() or times[0] < 0.0:
        raise InvalidInputError(f"trajectory time_from_start must be finite and >= 0, got {times.tolist()}")
    steps = np.diff(times)
    if (steps <= 0.0).any():
        i = int(np.flatnonzero(steps <= 0.0)[0]) + 1
        raise InvalidInputError(f"trajectory time_from_start must be strictly increasing: point {i} at "
                                f"{times[i]:.6f} s follows point {i - 1} at {times[i - 1]:.6f} s")
    for label, values in (("positions", positions), ("velocities", points.velocities)):
        if values is not None and not np.isfinite(values).all():
            i, j = np.argwhere(~np.isfinite(values))[0]
            raise InvalidInputError(f"trajectory point {i} has a non-finite {label[:-1]} "
                                    f"{values[i, j]} for joint '{joint_names[j]}'")
    outside = (positions < lower) | (positions > upper)
    if outside.any():
        i, j = np.argwhere(outside)[0]
        raise InvalidInputError(f"trajectory point {i} puts joint '{joint_names[j]}' at {positions[i, j]:.6f}, "
                                f"outside its limits [{lower[j]:.6f}, {upper[j]:.6f}]")


class TrajectoryFollower:
    """Samples an accepted trajectory from the state it started at.

    Args:
        points: a trajectory that passed `check_trajectory`.
        start_positions: (n,) joint positions when the trajectory was accepted [rad | m].
        start_velocities: (n,) joint velocities then [rad/s | m/s] (used by Hermite interpolation).
    """

    def __init__(self, points: TrajectoryPoints, start_positions: np.ndarray,
                 start_velocities: np.ndarray) -> None:
        n = len(start_positions)
        hermite = points.velocities is not None
        velocities = points.velocities if hermite else np.zeros_like(points.positions)
        if points.times[0] > 0.0:     # the segment from the current state to the first point
            self._times = np.concatenate(([0.0], points.times))
            self._positions = np.vstack([start_positions, points.positions])                  # (k+1, n)
            start_v = start_velocities if hermite else np.zeros(n)
            self._velocities = np.vstack([start_v, velocities])                              # (k+1, n)
        else:
            self._times, self._positions, self._velocities = points.times, points.positions, velocities
        self._hermite = hermite

    @property
    def end_time(self) -> float:
        """time_from_start of the last point [s]."""
        return float(self._times[-1])

    def sample(self, t: float) -> np.ndarray:
        """Desired positions (n,) [rad | m] `t` [s] after the start (before 0: the start; after the end: the last
        point)."""
        times = self._times
        if t >= times[-1]:
            return self._positions[-1].copy()
        if t <= times[0]:
            return self._positions[0].copy()
        i = int(np.searchsorted(times, t, side="right")) - 1
        h = times[i + 1] - times[i]
        s = (t - times[i]) / h
        p0, p1 = self._positions[i], self._positions[i + 1]
        if not self._hermite:
            return p0 + s * (p1 - p0)
        v0, v1 = self._velocities[i], self._velocities[i + 1]
        s2, s3 = s * s, s * s * s
        # cubic Hermite basis functions; the tangents are scaled by the segment duration h
        return ((2 * s3 - 3 * s2 + 1) * p0 + (s3 - 2 * s2 + s) * h * v0
                + (-2 * s3 + 3 * s2) * p1 + (s3 - s2) * h * v1)
