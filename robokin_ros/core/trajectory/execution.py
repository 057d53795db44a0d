"""Execution decisions: when a published trajectory is done (from measured joint positions over time), and what
a trajectory controller's FollowJointTrajectory result means for the path goal.

ROS-free and clock-free: the caller passes the time [s] and the measured positions at every check, so the
decisions (done, timed out, progress, messages) are tested without a robot or a clock.
"""
from __future__ import annotations

import enum
from typing import NamedTuple

import numpy as np

from robokin_ros.core.codes import SentencedCode
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays


class ExecutionCode(SentencedCode):
    """Outcomes path_ik_node decides while it waits for, executes or stops a planned path (numbered as
    robokin_interfaces/action/ExecuteCartesianPath's error codes, after PathStatus's)."""

    NO_JOINT_STATE = 6, "no fresh joint state arrived"
    CANCELED = 7, "the goal was canceled; the arm holds where it is"
    PREEMPTED = 8, "a newer goal replaced this one; the arm holds where it is"
    EXECUTION_FAILED = 9, "the arm did not finish the trajectory"
    INTERNAL_ERROR = 10, "an internal error ended the goal"
    CONTROLLER_UNAVAILABLE = 11, "the trajectory controller's action server did not answer"
    CONTROLLER_REJECTED = 12, "the trajectory controller rejected the trajectory"
    PATH_TOLERANCE_VIOLATED = 13, "the controller aborted: a joint left its path tolerance"
    GOAL_TOLERANCE_VIOLATED = 14, "the controller aborted: the arm did not settle within the goal tolerance in time"
    PLANNING_TIMEOUT = 15, "planning did not finish within its time budget (planning_timeout); nothing was executed"


# control_msgs/action/FollowJointTrajectory error codes with an outcome of their own (same numbers as
# control_msgs, checked by a test); any other failure is EXECUTION_FAILED with the controller's words.
MIN_VELOCITY_WINDOW = 0.01   # [s] shortest interval the measured velocity is differenced over
CONTROLLER_ABORT_CODES = {-4: ExecutionCode.PATH_TOLERANCE_VIOLATED, -5: ExecutionCode.GOAL_TOLERANCE_VIOLATED}
REST_SPEED = 2e-3            # [rad/s | m/s] every joint slower than this (measured): the arm is at rest


class ExecutionState(enum.Enum):
    """Where a followed trajectory stands."""

    RUNNING = "executing"
    SUCCEEDED = "reached the end"
    TIMED_OUT = "did not reach the end in time"


class ExecutionStatus(NamedTuple):
    """One check of the execution."""

    state: ExecutionState
    progress: float            # share of the planned duration elapsed, 0..1
    message: str               # a user-facing sentence when the execution is over, else ""


class ExecutionMonitor:
    """Follows one trajectory: done once past its duration with every joint within `goal_tolerance` of the end;
    timed out `timeout_margin` [s] after the planned duration.

    Args:
        trajectory: the published trajectory. goal_tolerance: [rad | m] per joint.
        timeout_margin: [s] after the planned duration. start_time: [s] when it was published.
    """

    def __init__(self, trajectory: JointTrajectoryArrays, goal_tolerance: float, timeout_margin: float,
                 start_time: float) -> None:
        self.end = trajectory.positions[-1]
        self.duration = trajectory.duration
        self.goal_tolerance = goal_tolerance
        self.timeout_margin = timeout_margin
        self.start_time = start_time
        self.positions: np.ndarray | None = None       # (n,) measured positions of the newest velocity sample
        self.velocities: np.ndarray | None = None      # (n,) differenced over the checks (None until two)
        self._measured_at = start_time

    def elapsed(self, now: float) -> float:
        """[s] since the trajectory was published."""
        return now - self.start_time

    def update(self, now: float, positions: np.ndarray) -> ExecutionStatus:
        """The state at time `now` [s] with measured `positions` (n,) [rad | m]."""
        self._measure(now, positions)
        elapsed = self.elapsed(now)
        error = float(np.abs(positions - self.end).max())
        if elapsed >= self.duration and error <= self.goal_tolerance:
            return ExecutionStatus(ExecutionState.SUCCEEDED, 1.0, "")
        if elapsed > self.duration + self.timeout_margin:
            return ExecutionStatus(ExecutionState.TIMED_OUT, 1.0,
                                   f"the arm did not reach the end within {self.timeout_margin} s after the "
                                   f"planned {self.duration:.2f} s (max joint error {error:.4f} rad)")
        return ExecutionStatus(ExecutionState.RUNNING, min(elapsed / max(self.duration, 1e-9), 1.0), "")

    def _measure(self, now: float, positions: np.ndarray) -> None:
        """Keep the newest positions and the velocity since the previous check (checks closer than
        MIN_VELOCITY_WINDOW [s] are skipped: receive-time jitter would dominate the difference)."""
        if self.positions is not None and now - self._measured_at < MIN_VELOCITY_WINDOW:
            return
        if self.positions is not None:
            self.velocities = (positions - self.positions) / (now - self._measured_at)
        self.positions, self._measured_at = np.array(positions, dtype=float), now

    def stopped_message(self, now: float, why: str) -> str:
        """The start of the sentence for an execution stopped from outside (`why`: "canceled", "preempted by a
        new goal"); the caller adds how the arm was stopped."""
        return f"{why} after {self.elapsed(now):.2f} s"


class RestWatch:
    """When a stopping arm came to rest, from its measured positions: the end of the last interval (at least
    MIN_VELOCITY_WINDOW [s] long) in which some joint moved faster than REST_SPEED. What a stop's message reports,
    rather than the duration the stop was planned to take.

    Args:
        now: [s] when the stop was requested. positions: (n,) measured then [rad | m].
    """

    def __init__(self, now: float, positions: np.ndarray) -> None:
        self.requested = now
        self.moved_until = now
        self._positions, self._time = np.array(positions, dtype=float), now

    def update(self, now: float, positions: np.ndarray) -> None:
        """Add a measurement at time `now` [s]."""
        if now - self._time < MIN_VELOCITY_WINDOW:
            return
        if float(np.abs(positions - self._positions).max()) > REST_SPEED * (now - self._time):
            self.moved_until = now
        self._positions, self._time = np.array(positions, dtype=float), now

    def still_for(self, now: float) -> float:
        """[s] the arm has been at rest at time `now`."""
        return now - self.moved_until

    @property
    def stopping_time(self) -> float:
        """[s] from the request until the arm came to rest (as measured so far)."""
        return self.moved_until - self.requested


def controller_outcome(ended: str, error_code: int, error_string: str, action: str) -> tuple[ExecutionCode | None,
                                                                                             str]:
    """What a FollowJointTrajectory result means for the path goal: (None, "") on success, else the code and a
    message that quotes the controller.

    Args:
        ended: how the controller ended the goal: "succeeded", "aborted" or "canceled" (not asked by us).
        error_code, error_string: the controller's result. action: the action name (for the message).
    """
    if ended == "succeeded" and error_code == 0:
        return None, ""
    code = CONTROLLER_ABORT_CODES.get(error_code, ExecutionCode.EXECUTION_FAILED)
    return code, (f"{code.sentence}: {action} {ended} the goal with error_code {error_code}: "
                  f"\"{error_string}\"; the controller holds the arm")
