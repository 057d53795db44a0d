"""What a joint_trajectory_controller (JTC) accepts: plain data in, words out (shared by sim_robot, which judges what
it is sent, and path_ik_node, which checks what it sends: core/trajectory/outgoing_check.py).

The rules and their order are those of `JointTrajectoryController::validate_trajectory_msg` in ros2_controllers
(identical on the jazzy and kilted branches); a rejection carries the controller's RCLCPP_ERROR text with the
values filled in, so a user sees in the sim the line their controller would log. The switches mirror the
controller's parameters of the same names, with the controller's defaults.

robokin adds checks of its own after the controller's (`by_jtc=False`): duplicate joint names, non-finite
values and positions outside the URDF limits. A real JTC does none of these; a sim that followed such a
command would move the arm somewhere no real arm goes.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from robokin_ros.core.stamps import UNSTAMPED, clock_seconds, header_seconds


# std::numeric_limits<float>::epsilon(): the controller's bound on the last point's velocity.
FLOAT_EPSILON = float(np.finfo(np.float32).eps)


@dataclass(frozen=True)
class JtcSwitches:
    """The controller parameters that change what it accepts (names and defaults as in JTC)."""

    allow_partial_joints_goal: bool = False
    allow_nonzero_velocity_at_trajectory_end: bool = False
    allow_integration_in_goal_trajectories: bool = False
    has_effort_command_interface: bool = False     # robokin's controllers command positions


class PointFacts(NamedTuple):
    """One trajectory point as the message carries it (lists may be empty)."""

    positions: Sequence[float]       # [rad | m]
    velocities: Sequence[float]      # [rad/s | m/s]
    accelerations: Sequence[float]   # [rad/s^2 | m/s^2]
    effort: Sequence[float]          # [N m | N]
    time_from_start: float           # [s]


class TrajectoryFacts(NamedTuple):
    """A joint trajectory as plain data."""

    joint_names: Sequence[str]
    points: Sequence[PointFacts]
    stamp: int                       # [ns] header stamp; 0 = "start now"


class Rejection(NamedTuple):
    """Why a trajectory is refused."""

    rule: str          # the check (or the controller switch) that refused it
    message: str       # the controller's words (by_jtc) or robokin's
    by_jtc: bool       # False: a check robokin adds and a real JTC does not make

    def __str__(self) -> str:
        return self.message if self.by_jtc else f"{self.message} (robokin's own check; a JTC would accept it)"


def jtc_rejection(trajectory: TrajectoryFacts, controller_joints: Sequence[str], now: int,
                  switches: JtcSwitches = JtcSwitches()) -> Rejection | None:
    """The first rule of `validate_trajectory_msg` the trajectory breaks, in the controller's words; None if valid.

    Args:
        trajectory: the incoming trajectory. controller_joints: the controller's `joints`.
        now: the controller clock's time [ns] (the clock header stamps are on).
        switches: the controller's parameters.
    """
    names, points = list(trajectory.joint_names), trajectory.points
    if not switches.allow_partial_joints_goal and len(names) != len(controller_joints):
        return Rejection("allow_partial_joints_goal",
                         "Joints on incoming trajectory don't match the controller joints.", True)
    if not names:
        return Rejection("joint_names", "Empty joint names on incoming trajectory.", True)
    if not points:
        return Rejection("points", "Empty trajectory received.", True)
    for name in names:
        if name not in controller_joints:
            return Rejection("joints", f"Incoming joint {name} doesn't match the controller's joints.", True)
    return (_end_velocity_rejection(names, points[-1], switches) or _end_time_rejection(trajectory, now)
            or _points_rejection(names, points, switches))


def _end_velocity_rejection(names: list[str], last: PointFacts, switches: JtcSwitches) -> Rejection | None:
    if switches.allow_nonzero_velocity_at_trajectory_end:
        return None
    for i, velocity in enumerate(last.velocities):
        if abs(velocity) > FLOAT_EPSILON:
            name = names[i] if i < len(names) else f"#{i}"
            return Rejection("allow_nonzero_velocity_at_trajectory_end",
                             f"Velocity of last trajectory point of joint {name} is not zero: {velocity:.15f}", True)
    return None


def _end_time_rejection(trajectory: TrajectoryFacts, now: int) -> Rejection | None:
    if trajectory.stamp == UNSTAMPED:    # zero stamp: the controller starts the trajectory on receipt
        return None
    start = header_seconds(trajectory.stamp)
    end = start + trajectory.points[-1].time_from_start
    if end < clock_seconds(now):
        return Rejection("header.stamp", f"Received trajectory with non-zero start time ({start:f}) "
                                         f"that ends in the past ({end:f})", True)
    return None


def _points_rejection(names: list[str], points: Sequence[PointFacts], switches: JtcSwitches) -> Rejection | None:
    previous = 0.0
    for i, point in enumerate(points):
        if i > 0 and point.time_from_start <= previous:
            return Rejection("time_from_start", f"Time between points {i - 1} and {i} is not strictly increasing, "
                                                f"it is {previous:f} and {point.time_from_start:f} respectively", True)
        previous = point.time_from_start
        rejection = _field_sizes_rejection(len(names), point, i, switches)
        if rejection is not None:
            return rejection
        if not switches.has_effort_command_interface and len(point.effort):
            return Rejection("effort", "Trajectories with effort fields are only supported for controllers using "
                                       "the 'effort' command interface.", True)
    return None


def _field_sizes_rejection(n: int, point: PointFacts, i: int, switches: JtcSwitches) -> Rejection | None:
    fields = (("positions", point.positions), ("velocities", point.velocities),
              ("accelerations", point.accelerations))
    if switches.allow_integration_in_goal_trajectories:
        if not any(len(values) for _, values in fields):
            return Rejection("allow_integration_in_goal_trajectories",
                             "The given trajectory has no position, velocity, or acceleration points.", True)
        may_be_empty = {"positions", "velocities", "accelerations"}
    else:
        may_be_empty = {"velocities", "accelerations"}
    for label, values in fields:
        if len(values) != n and not (label in may_be_empty and len(values) == 0):
            return Rejection(label, f"Mismatch between joint_names size ({n}) and {label} ({len(values)}) "
                                    f"at point #{i}.", True)
    return None


def field_matrix(points: Sequence[PointFacts], label: str, m: int) -> np.ndarray | None:
    """(k, m) values of one point field, or None when a point does not have exactly m of them."""
    rows = [getattr(point, label) for point in points]
    if any(len(row) != m for row in rows):
        return None
    return np.array(rows, dtype=float).reshape(len(rows), m)


def robokin_rejection(trajectory: TrajectoryFacts, controller_joints: Sequence[str], lower: np.ndarray,
                      upper: np.ndarray) -> Rejection | None:
    """robokin's own checks of a trajectory the controller rules accept (see the module docstring).

    Args:
        lower, upper: (n,) position limits in `controller_joints` order [rad | m].
    """
    names = list(trajectory.joint_names)
    if len(set(names)) != len(names):
        return Rejection("duplicate joints", f"trajectory names a joint twice: {names}", False)
    times = np.array([point.time_from_start for point in trajectory.points], dtype=float)
    if not np.isfinite(times).all():
        i = int(np.flatnonzero(~np.isfinite(times))[0])
        return Rejection("finite", f"trajectory point {i} has a non-finite time_from_start", False)
    fields = {label: field_matrix(trajectory.points, label, len(names))      # (k, m); None: sizes vary (JTC allows)
              for label in ("positions", "velocities", "accelerations")}
    for label, values in fields.items():
        if values is not None and not np.isfinite(values).all():
            i, j = np.argwhere(~np.isfinite(values))[0]
            return Rejection("finite", f"trajectory point {i} has a non-finite {label[:-1]} {values[i, j]} for "
                                       f"joint '{names[j]}'", False)
    positions = fields["positions"]
    if positions is None:
        return None
    index = [list(controller_joints).index(name) for name in names]
    outside = (positions < lower[index]) | (positions > upper[index])           # (k, m)
    if outside.any():
        i, j = np.argwhere(outside)[0]
        return Rejection("position limits", f"trajectory point {i} puts joint '{names[j]}' at {positions[i, j]:.6f}, "
                                            f"outside its limits [{lower[index[j]]:.6f}, {upper[index[j]]:.6f}]", False)
    return None
