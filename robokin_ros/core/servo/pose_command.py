"""The pose target as a tracked command: fixed in the base frame on arrival, followed through the pose tracker
(pose_tracking.py), pending until settled, and with windows that stop short of the target.

A controller left with a window by a stalled servo follows it to its end: near the target that end must not
carry the tool past it at the speed of the approach (`PoseMotion.window_grid`).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pinocchio as pin
from numba import njit

from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.commands import TrackedCommand
from robokin_ros.core.servo.pose_tracking import PoseTarget, PoseTracker, target_transform
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.window import stop_time
from robokin_ros.core.stamps import check_stamp
from robokin_ros.core.validation import check_time

# share of the time to a fixed pose target at the current speed that a window may extrapolate (see
# `PoseMotion.window_grid`)
REACH_MARGIN = 0.8
# share of the pose tolerance below which the remaining error counts as none
REACH_FLOOR = 1e-3


@njit(cache=True)
def reach_time(tool, error, target_velocity, lasting, linear_floor, angular_floor):
    """The time [s] at which the tool, moving at the twist `tool` (6,), has covered REACH_MARGIN of the `error` (6,)
    along its motion, plus what the target covers meanwhile moving at `target_velocity` (6,) for `lasting` [s] (then
    still); per part (linear, angular) the earlier, inf if never. An error along the motion below the part's floor
    [m or rad] counts as the floor (rounding noise in a speed at rest must not cut every window)."""
    reach = np.inf
    for part in range(2):
        speed = 0.0
        along = 0.0
        progress = 0.0
        for i in range(3 * part, 3 * part + 3):
            speed += tool[i] * tool[i]
        speed = np.sqrt(speed)
        if speed <= 0.0:
            continue
        for i in range(3 * part, 3 * part + 3):
            along += error[i] * tool[i] / speed
            progress += target_velocity[i] * tool[i] / speed
        distance = REACH_MARGIN * max(along, linear_floor if part == 0 else angular_floor)
        progress *= REACH_MARGIN
        gain = speed - progress                 # on the tool's way while the target moves
        if gain > 0.0 and distance / gain <= lasting:
            reach = min(reach, distance / gain)
        else:
            # the target has stopped by the time the tool catches up
            reach = min(reach, max(distance + progress * max(lasting, 0.0), 0.0) / speed)
    return reach


class PoseMotion(TrackedCommand):
    """A pose target of the tip frame: the tracking twist toward it until it is reached and settled."""

    halt_all = False        # a pose target halts only the blocking joint, as MoveIt's POSE mode

    def __init__(self, target: PoseTarget, tracker: PoseTracker, robot: RobotModel) -> None:
        self.source, self.received_at = target, target.received_at
        self._tracker, self._robot = tracker, robot

    @classmethod
    def resolve(cls, target: PoseTarget, base_T_frame: pin.SE3 | None, robot: RobotModel, tracker: PoseTracker,
                place: Callable[[int, str], pin.SE3]) -> PoseMotion:
        """The target checked and fixed in the base frame, handed to the tracker (see `Servo.set_pose_target`);
        `place(frame_id, name)` gives a model frame's pose now."""
        check_time("pose target received_at", target.received_at)
        check_stamp("pose target stamp", target.stamp)
        frame_T_target = target_transform(target)
        if base_T_frame is None:
            frame = robot.resolve_frame(target.frame)
            if frame != robot.base_frame_id:
                base_T_frame = place(frame, target.frame)
        base_T_target = frame_T_target if base_T_frame is None else base_T_frame * frame_T_target
        tracker.set_target(base_T_target, target.received_at, target.stamp)
        return cls(target, tracker, robot)

    @property
    def reached(self) -> bool:
        """True while the tip is within the target's tolerances."""
        return self._tracker.reached

    def twist(self, positions: np.ndarray, now: float) -> np.ndarray:
        return self._tracker.twist(positions, now)

    def pending(self, now: float) -> bool:
        return not self._tracker.settled(now)

    def outcome(self, result) -> tuple[ServoStatus, str]:
        """Reached, moving to it, or the IK's reason it cannot move freely, with the remaining error."""
        tracker = self._tracker
        error = tracker.describe_error()
        if tracker.reached:
            return ServoStatus.TARGET_REACHED, f"{ServoStatus.TARGET_REACHED.sentence}: remaining error {error}"
        note = f"; {tracker.stream_note}" if tracker.stream_note else ""
        if result.status == ServoStatus.OK:
            return result.status, f"moving to the pose target: remaining error {error}{note}"
        return result.status, f"{result.message}; pose target error {error}{note}"

    def idle(self) -> tuple[ServoStatus, str]:
        """A reached target: the same ramp and hold as a stale command, reported as what it is."""
        status = ServoStatus.TARGET_REACHED
        return status, f"{status.sentence}: remaining error {self._tracker.describe_error()}"

    def window_grid(self, positions: np.ndarray, velocities: np.ndarray, grid: np.ndarray, amax: np.ndarray,
                    dt: float) -> np.ndarray:
        """The sparse grid with its last time brought in so that the window, followed to its end, takes the tool at
        most REACH_MARGIN of the way to where the pose target will be: a controller left with this window by a
        stalled servo must not carry the tool past the target at the speed of the approach. Before: 0.46 mm past a
        fixed target with 60-150 ms stalls; up to 3.8 mm past a stream chattering +-10 mm (issue 24), whose targets
        the window's 50 ms at the approach speed overran (a jumping stream is not extrapolated: its latest target
        is where the tool is to stop).

        What counts is the error along the tool's motion (a tool moving away from the target, toward a stream's
        previous target, has none left to cover: its window brakes after two periods), plus the target's own
        progress along that motion while it is extrapolated (a moving target followed with feed-forward)."""
        robot, tracker = self._robot, self._tracker
        J = robot.frame_jacobian_fast(robot.to_pinocchio_q(positions), tracker.tip_id)         # (6, n) its tip
        target_velocity, left = tracker.target_motion
        config = tracker.config
        reach = reach_time(J @ velocities, tracker.error_vector, target_velocity, left,
                           REACH_FLOOR * config.linear_tolerance, REACH_FLOOR * config.angular_tolerance)
        last = reach - 0.5 * stop_time(velocities, amax, dt)     # the tail covers v T / 2
        if last >= grid[-1]:
            return grid
        return np.array([grid[0], grid[1], max(last, 2.0 * dt)])
