"""Path and goal tolerances as joint_trajectory_controller (JTC) applies them, judged once per control cycle.

Mirrors ros2_controllers' `tolerances.hpp` and the tolerance part of `JointTrajectoryController::update`
(identical on jazzy and kilted), for a controller that commands positions: such a JTC computes no velocity
or acceleration error, so only position tolerances can be violated (velocity and acceleration tolerances,
including `constraints.stopped_velocity_tolerance`, never act; a goal's values for them are still checked
for legality, as JTC does). Tolerance 0 means "not enforced"; `goal_time` 0 means "wait for the goal
tolerance forever". Messages are the controller's words.
"""
from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from robokin_ros.core.trajectory.controller_rules import FLOAT_EPSILON

ERASE = -1.0     # control_msgs/JointTolerance: -1 erases the default (no limit)


class FollowCode(enum.IntEnum):
    """control_msgs/action/FollowJointTrajectory result codes (same numbers)."""

    SUCCESSFUL = 0
    INVALID_GOAL = -1
    INVALID_JOINTS = -2
    OLD_HEADER_TIMESTAMP = -3
    PATH_TOLERANCE_VIOLATED = -4
    GOAL_TOLERANCE_VIOLATED = -5


PREEMPTED_MESSAGE = "Current goal preempted by new incoming action."
SUCCESS_MESSAGE = "Goal successfully reached!"
PATH_VIOLATION_MESSAGE = "Aborted due to path tolerance violation"


@dataclass(frozen=True)
class SegmentTolerances:
    """Position tolerances per controller joint [rad | m] (0 = not enforced) and the goal time [s]."""

    path: np.ndarray          # (n,) while moving (JTC's `constraints.<joint>.trajectory`)
    goal: np.ndarray          # (n,) after the last point (`constraints.<joint>.goal`)
    goal_time: float = 0.0    # [s] allowed past the last point to get within `goal` (`constraints.goal_time`)


class JointToleranceRequest(NamedTuple):
    """A control_msgs/JointTolerance entry of a goal (0 = keep the default, -1 = erase it)."""

    name: str
    position: float
    velocity: float = 0.0
    acceleration: float = 0.0


def resolve_tolerance(default: float, requested: float) -> float:
    """JTC's `resolve_tolerance_source`: > 0 replaces, -1 erases (0.0), 0 keeps the default; ValueError otherwise."""
    if requested > 0.0:
        return requested
    if abs(requested - ERASE) < FLOAT_EPSILON:
        return 0.0
    if requested < 0.0:
        raise ValueError("Illegal tolerance value.")
    return default


def goal_tolerances(defaults: SegmentTolerances, joints: Sequence[str], path: Sequence[JointToleranceRequest],
                    goal: Sequence[JointToleranceRequest], goal_time: float) -> tuple[SegmentTolerances, str]:
    """The tolerances of an action goal over the controller defaults, and JTC's error line ('' if none).

    Like JTC, any unknown joint or illegal value drops every request of the goal and keeps the defaults.
    """
    try:
        resolved_time = resolve_tolerance(defaults.goal_time, goal_time)
    except ValueError:
        return defaults, f"Specified illegal goal_time_tolerance: {goal_time:f}. Using default tolerances"
    values = {"path": defaults.path.copy(), "goal": defaults.goal.copy()}
    for kind, requests in (("path", path), ("goal", goal)):
        for request in requests:
            if request.name not in joints:
                return defaults, (f"joint '{request.name}' specified in goal.{kind}_tolerance does not exist. "
                                  "Using default tolerances.")
            i = list(joints).index(request.name)
            for interface in ("position", "velocity", "acceleration"):
                try:
                    value = resolve_tolerance(values[kind][i] if interface == "position" else 0.0,
                                              getattr(request, interface))
                except ValueError:
                    return defaults, (f"joint '{request.name}' specified in goal.{kind}_tolerance has a invalid "
                                      f"{interface} tolerance. Using default tolerances.")
                if interface == "position":
                    values[kind][i] = value
    return SegmentTolerances(values["path"], values["goal"], resolved_time), ""


class TrackingSample(NamedTuple):
    """One control cycle of a followed trajectory."""

    desired: np.ndarray           # (n,) sampled trajectory positions [rad | m]
    actual: np.ndarray            # (n,) measured positions at the start of the cycle [rad | m]
    before_last_point: bool       # the sample time is before the last point's time_from_start
    first_sample: bool            # the first cycle of this trajectory
    time_past_last_point: float   # [s] sample time minus the last point's time (negative before it)


class Verdict(NamedTuple):
    """What the controller decides in one cycle: keep going (code None), or end with a code."""

    code: FollowCode | None
    message: str      # the result's error_string
    detail: str       # what the controller logs about it (the joint and its error)


RUNNING = Verdict(None, "", "")


def _violations(error: np.ndarray, tolerance: np.ndarray, joints: Sequence[str]) -> str:
    """JTC's per-joint log lines for the joints outside a tolerance ('' when none is)."""
    bad = np.flatnonzero((tolerance > 0.0) & (np.abs(error) > tolerance))
    return "; ".join(f"State tolerances failed for joint {i} ({joints[i]}): Position Error: {error[i]:f}, "
                     f"Position Tolerance: {tolerance[i]:f}" for i in bad)


def judge(sample: TrackingSample, tolerances: SegmentTolerances, joints: Sequence[str]) -> Verdict:
    """The controller's decision for one cycle (see the module docstring)."""
    error = sample.desired - sample.actual                                       # (n,)
    if sample.before_last_point or sample.first_sample:
        moving = _violations(error, tolerances.path, joints)
        if moving:
            return Verdict(FollowCode.PATH_TOLERANCE_VIOLATED, PATH_VIOLATION_MESSAGE, moving)
    if sample.before_last_point:
        return RUNNING
    outside = _violations(error, tolerances.goal, joints)
    if not outside:
        return Verdict(FollowCode.SUCCESSFUL, SUCCESS_MESSAGE, "")
    late = sample.time_past_last_point
    if tolerances.goal_time != 0.0 and late > tolerances.goal_time:
        return Verdict(FollowCode.GOAL_TOLERANCE_VIOLATED,
                       f"Aborted due to goal_time_tolerance exceeding by {late:f} seconds", outside)
    return RUNNING
