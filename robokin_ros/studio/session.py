"""The studio's arm, with no browser and no clock: joint positions moved by sliders, by the servo core tracking the
gizmo's pose target, or by a keyframe playback.

The gizmo drives the same `Servo` the servo_node runs (DLS velocity IK with null-space joint-limit avoidance,
joint-limit locking, singularity slowing, velocity and acceleration limits): each gizmo move is a pose target,
and `advance` runs the servo's ticks for the elapsed time on an ideal arm (the measurement is the command). So
what the browser shows is what the servo would command a real arm to do.
"""
from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.program.planner import MotionPlanner
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.pose_tracking import PoseTarget
from robokin_ros.core.servo.servo import Servo, warm_up
from robokin_ros.core.servo.types import JointMeasurement
from robokin_ros.studio.keyframes import KeyframeList, Playback, plan_playback

SERVO_PERIOD = 0.004      # [s] the servo's tick inside the studio (250 Hz: smooth, and cheap at 30 updates/s)
MAX_CATCH_UP = 0.1        # [s] a stalled update (a busy machine) runs at most this much servo time at once
IDLE, TRACKING, PLAYING = "idle", "tracking the gizmo", "playing keyframes"


def quaternion_xyzw(rotation: np.ndarray) -> np.ndarray:
    """(4,) x, y, z, w of a rotation matrix (the order PoseTarget and ROS messages use)."""
    return np.array(pin.Quaternion(rotation).coeffs())


class ArmSession:
    """One robot in the studio: its positions and what moves them."""

    def __init__(self, robot: RobotModel, servo_config: ServoConfig | None = None) -> None:
        self.robot = robot
        self.servo_config = servo_config or ServoConfig(publish_period=SERVO_PERIOD)
        warm_up(robot, self.servo_config)        # compiled kernels load here, not on the first gizmo drag
        self.positions = robot.home()
        self.keyframes = KeyframeList()
        self.planner = MotionPlanner(robot)
        self.mode = IDLE
        self.message = "ready"
        self.locked_joints: tuple[str, ...] = ()
        self.playback: Playback | None = None
        self._playback_time = 0.0
        self._servo: Servo | None = None
        self._now = 0.0                          # [s] session time: the sum of advance() steps
        self._servo_time = 0.0

    # ---- direct control ---------------------------------------------------------------------------------
    def tool_pose(self) -> pin.SE3:
        """Tool pose in the base frame at the current positions."""
        return self.robot.fk(self.positions)

    def set_positions(self, positions: npt.ArrayLike) -> None:
        """Move the arm there at once (sliders, live joint states); stops tracking and playback."""
        self.positions = self.robot.check_positions(positions).copy()
        self._stop("moved by joint values")

    def set_joint(self, index: int, value: float) -> None:
        if not 0 <= index < self.robot.n:
            raise InvalidInputError(f"joint index {index} is outside 0..{self.robot.n - 1}")
        positions = self.positions.copy()
        positions[index] = value
        self.set_positions(positions)

    def _stop(self, message: str) -> None:
        self.mode, self.message, self._servo, self.playback = IDLE, message, None, None
        self.locked_joints = ()

    # ---- the gizmo: a pose target for the servo ---------------------------------------------------------
    def set_target(self, base_T_target: pin.SE3) -> None:
        """Track this tool pose with the servo from where the arm is now (raises InvalidInputError for NaN/inf)."""
        if self._servo is None or self.mode != TRACKING:
            self._servo = Servo(self.robot, self.servo_config)
            self._servo_time = self._now
            self._servo.set_measurement(JointMeasurement(self.positions.copy(), self._now))
            self.playback = None
        target = PoseTarget(base_T_target.translation.copy(), quaternion_xyzw(base_T_target.rotation), "", 0.0,
                            self._now)
        self._servo.set_pose_target(target)
        self.mode = TRACKING

    def target(self) -> pin.SE3 | None:
        """The servo's current pose target (base frame), None when not tracking."""
        if self._servo is None or self.mode != TRACKING:
            return None
        return self._servo.pose_tracker.base_T_target

    def _track(self, now: float) -> None:
        period = self.servo_config.publish_period
        self._servo_time = max(self._servo_time, now - MAX_CATCH_UP)
        out = None
        for _ in range(math.floor((now - self._servo_time) / period + 1e-9)):
            self._servo_time += period
            out = self._servo.step(self._servo_time)
            if out.publish:
                self.positions = out.positions.copy()
            self._servo.set_measurement(JointMeasurement(self.positions.copy(), self._servo_time))
        if out is not None:
            self.message, self.locked_joints = out.message, out.locked_joints

    # ---- keyframes ----------------------------------------------------------------------------------------
    def record_keyframe(self) -> int:
        """Record the current state; returns the number of keyframes."""
        self.keyframes.record(self.positions, self.tool_pose())
        return len(self.keyframes)

    def clear_keyframes(self) -> None:
        self.keyframes.clear()
        if self.mode == PLAYING:
            self._stop("keyframes cleared")

    def play(self) -> Playback:
        """Plan and start a playback through the keyframes (raises InvalidInputError with the reason)."""
        playback = plan_playback(self.planner, self.positions, self.keyframes.frames)
        self._stop("playing")
        self.playback, self._playback_time, self.mode = playback, 0.0, PLAYING
        self.message = "playing: " + playback.summary()
        return playback

    # ---- time ---------------------------------------------------------------------------------------------
    def advance(self, dt: float) -> None:
        """Let `dt` [s] pass: the servo tracks its target, or the playback goes on."""
        if not dt >= 0.0:
            raise InvalidInputError(f"time step must be >= 0, got {dt}")
        self._now += dt
        if self.mode == TRACKING:
            self._track(self._now)
        elif self.mode == PLAYING:
            self._playback_time += dt
            self.positions = self.playback.positions_at(self._playback_time)
            if self._playback_time >= self.playback.duration:
                summary = self.playback.summary()
                self._stop("playback finished: " + summary)
