"""Joint trajectories as ros2_control's JointTrajectoryController follows them: checked, then sampled.

The follower starts from the joint state at the moment a trajectory is accepted and interpolates towards its
points as JTC's `interpolation_method: splines` does: a quintic when the points carry velocities and
accelerations (from the accepted state with zero acceleration, as JTC assumes without an acceleration state
interface), a cubic Hermite when they carry velocities, linear otherwise. A trajectory whose first points lie in
the past when it is accepted (its stamp is earlier) is played from the point the clock is at, without a segment
from the accepted state, as JTC samples it. After the last point it holds that point.
`chain_points` reads an accepted trajectory as JTC does (controller joint order, partial goals held; the acceptance
rules are core/trajectory/controller_rules.py's).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.stamps import UNSTAMPED, clock_seconds, header_seconds
from robokin_ros.core.trajectory.controller_rules import TrajectoryFacts, field_matrix


@dataclass(frozen=True)
class TrajectoryPoints:
    """A trajectory in chain order, times relative to its start."""

    times: np.ndarray                  # (k,) [s] time_from_start
    positions: np.ndarray              # (k, n) [rad | m]
    velocities: np.ndarray | None      # (k, n) [rad/s | m/s]; None = linear interpolation
    accelerations: np.ndarray | None = None   # (k, n) [rad/s^2 | m/s^2]; with velocities: quintic interpolation


def trajectory_start(received: float, stamp_ns: int, stamp_clock_now_ns: int) -> float:
    """When a trajectory starts, on the clock `received` is read from [s].

    Args:
        received: when the trajectory arrived [s], receive clock.
        stamp_ns: its header stamp [ns] on the stamp clock (ROS time); 0 means "start now", as
            JointTrajectoryController reads it.
        stamp_clock_now_ns: the stamp clock's time at `received` [ns]; the difference of the two clocks
            carries the stamp over to the receive clock.
    """
    if stamp_ns == UNSTAMPED:
        return received
    return received + header_seconds(stamp_ns) - clock_seconds(stamp_clock_now_ns)


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
        accepted_at: [s] >= 0, when it was accepted on the trajectory's own clock (its stamp's time 0): the
            state before the first point is placed there, and not used when the first point is earlier.
    """

    def __init__(self, points: TrajectoryPoints, start_positions: np.ndarray,
                 start_velocities: np.ndarray, accepted_at: float = 0.0) -> None:
        n = len(start_positions)
        hermite = points.velocities is not None
        quintic = hermite and points.accelerations is not None
        velocities = points.velocities if hermite else np.zeros_like(points.positions)
        accelerations = points.accelerations if quintic else np.zeros_like(points.positions)
        if points.times[0] > accepted_at:     # the segment from the current state to the first point
            self._times = np.concatenate(([accepted_at], points.times))
            self._positions = np.vstack([start_positions, points.positions])                  # (k+1, n)
            start_v = start_velocities if hermite else np.zeros(n)
            self._velocities = np.vstack([start_v, velocities])                              # (k+1, n)
            self._accelerations = np.vstack([np.zeros(n), accelerations])                    # (k+1, n)
        else:
            self._times, self._positions = points.times, points.positions
            self._velocities, self._accelerations = velocities, accelerations
        self._hermite, self._quintic = hermite, quintic

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
        # polynomials in s; velocities and accelerations scaled by the segment duration h
        dp, v0, v1 = p1 - p0, h * self._velocities[i], h * self._velocities[i + 1]
        if not self._quintic:
            return p0 + s * (v0 + s * ((3 * dp - 2 * v0 - v1) + s * (-2 * dp + v0 + v1)))
        a0, a1 = h * h * self._accelerations[i], h * h * self._accelerations[i + 1]
        c3 = 10 * dp - 6 * v0 - 4 * v1 - 1.5 * a0 + 0.5 * a1
        c4 = -15 * dp + 8 * v0 + 7 * v1 + 1.5 * a0 - a1
        c5 = 6 * dp - 3 * (v0 + v1) - 0.5 * a0 + 0.5 * a1
        return p0 + s * (v0 + s * (0.5 * a0 + s * (c3 + s * (c4 + s * c5))))


def chain_points(trajectory: TrajectoryFacts, controller_joints: Sequence[str],
                 hold_positions: np.ndarray) -> TrajectoryPoints:
    """An accepted trajectory in controller joint order, as JTC reads it.

    Joints the trajectory leaves out (a partial goal) hold `hold_positions` (n,) with zero velocity, as JTC's
    `fill_partial_goal` holds them at their position command. Velocities are used when every point has them,
    accelerations when every point has both (JTC's quintic).

    Raises:
        ValueError: a point without positions (only a JTC with `allow_integration_in_goal_trajectories` takes
            those, and the sim does not integrate).
    """
    n, k, m = len(controller_joints), len(trajectory.points), len(trajectory.joint_names)
    index = [list(controller_joints).index(name) for name in trajectory.joint_names]
    given = field_matrix(trajectory.points, "positions", m)                          # (k, m)
    if given is None:
        i = next(i for i, point in enumerate(trajectory.points) if len(point.positions) != m)
        raise ValueError(f"trajectory point {i} has no positions; the sim follows positions only")
    positions = np.tile(np.asarray(hold_positions, dtype=float), (k, 1))       # (k, n)
    positions[:, index] = given
    velocities = None
    given_velocities = field_matrix(trajectory.points, "velocities", m)              # (k, m)
    if given_velocities is not None:
        velocities = np.zeros((k, n))
        velocities[:, index] = given_velocities
    accelerations = None
    given_accelerations = field_matrix(trajectory.points, "accelerations", m)        # (k, m)
    if velocities is not None and given_accelerations is not None:
        accelerations = np.zeros((k, n))
        accelerations[:, index] = given_accelerations
    times = np.array([point.time_from_start for point in trajectory.points], dtype=float)
    return TrajectoryPoints(times, positions, velocities, accelerations)
