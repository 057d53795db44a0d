"""The studio's arm for a robot with several tips (two hands): a gizmo per tip, and in coordinated mode one for the
held object, all driving the same multi-tip `Servo` the servo_node runs (`tips.mode`, core/servo/tips_motion.py).

What a gizmo does depends on the mode:
- independent: a tip's gizmo is a pose target for that tip (`PoseTarget.tip`); the other tips hold still (the servo
  gives them zero velocity rows).
- coordinated: the object gizmo drives the held object. The object frame is taken when the mode starts
  (`held_object.take_grasp`: the tips' centroid, base axes) and rides on the first tip. The servo takes object
  twists only, so the studio closes the loop itself: each servo tick it sends the object twist toward the gizmo
  with the pose tracker's law (speed = min(gain |e|, sqrt(2 a |e|), v_max) per part, `pose_tracking.*`), and the
  servo's relative rows keep the hands' relative pose fixed.
- relative: the reference tip's gizmo moves it and carries the others along; another tip's gizmo moves that tip
  relative to the reference, which holds still. Both are twists toward the gizmo by the same law (a relative twist
  is given in the reference tip's axes). One tip is driven at a time: a new drag replaces the last.

The grasp is taken again whenever the servo starts afresh (a slider move, a playback, a new mode), so the studio's
object frame and the servo's are always the same one.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.config import TIP_MODES, ServoConfig
from robokin_ros.core.servo.pose_tracking import PoseTarget
from robokin_ros.core.servo.servo import Servo
from robokin_ros.core.servo.types import JointMeasurement, TwistCommand
from robokin_ros.core.tips.held_object import Grasp, take_grasp
from robokin_ros.studio.session import MAX_CATCH_UP, SERVO_PERIOD, TRACKING, ArmSession, quaternion_xyzw

INDEPENDENT, COORDINATED, RELATIVE = TIP_MODES
OBJECT = "object"          # what the object gizmo drives (the name `drive_target` takes besides the tips)


def tracking_twist(current: pin.SE3, target: pin.SE3, limits: np.ndarray) -> tuple[np.ndarray, float, float]:
    """(6,) the twist [v; w] (base axes, about the current origin) toward `target`, and the errors ([m], [rad]).

    limits (2, 3): per part (linear, angular) the gain [1/s], braking acceleration and speed cap; the speed along
    each error is min(gain |e|, sqrt(2 a |e|), cap), so the frame arrives at rest without overshoot.
    """
    error = np.concatenate((target.translation - current.translation,
                            pin.log3(target.rotation @ current.rotation.T)))
    twist, sizes = np.zeros(6), []
    for part in range(2):
        rows = slice(3 * part, 3 * part + 3)
        size = float(np.linalg.norm(error[rows]))
        sizes.append(size)
        if size > 0.0:
            gain, braking, cap = limits[part]
            twist[rows] = error[rows] * (min(gain * size, math.sqrt(2.0 * braking * size), cap) / size)
    return twist, sizes[0], sizes[1]


class TipsSession(ArmSession):
    """ArmSession for a robot with several tips: `drive_target` per tip or for the object, `set_tips_mode`."""

    def __init__(self, robot: RobotModel, servo_config: ServoConfig | None = None) -> None:
        if len(robot.tip_frames) < 2:
            raise InvalidInputError(f"TipsSession needs a robot with several tips; {robot.name} has "
                                    f"{list(robot.tip_frames)}")
        # the object's and the relative mode's twists are in SI units
        config = servo_config or ServoConfig(publish_period=SERVO_PERIOD, command_in_type="speed_units")
        super().__init__(robot, config)
        pose = config.pose_tracking
        self._limits = np.array(((pose.linear_gain, pose.max_linear_acceleration, pose.max_linear_speed),
                                 (pose.angular_gain, pose.max_angular_acceleration, pose.max_angular_speed)))
        self.tips_mode = INDEPENDENT
        self.grasp: Grasp | None = None
        self._targets: dict[str, pin.SE3] = {}       # tip or OBJECT -> the pose its gizmo asks for (base frame)
        self.errors = (math.inf, math.inf)           # [m], [rad] of the twist-driven target (coordinated, relative)

    # ---- poses --------------------------------------------------------------------------------------
    def tip_poses(self, positions: np.ndarray | None = None) -> tuple[pin.SE3, ...]:
        q = self.positions if positions is None else positions
        return tuple(self.robot.fk(q, tip) for tip in self.robot.tip_frames)

    def object_pose(self, positions: np.ndarray | None = None) -> pin.SE3 | None:
        """The held object's frame (coordinated mode), None in the other modes."""
        if self.grasp is None:
            return None
        q = self.positions if positions is None else positions
        return self.grasp.base_T_object(self.robot.fk(q, self.robot.tip_frame))

    def tip_targets(self) -> tuple[pin.SE3 | None, ...]:
        """Per tip, the pose its gizmo asked for while tracking (None for a tip not driven)."""
        tracking = self.mode == TRACKING
        return tuple(self._targets.get(tip) if tracking else None for tip in self.robot.tip_frames)

    def target(self) -> pin.SE3 | None:
        return self.tip_targets()[0]

    def object_target(self) -> pin.SE3 | None:
        return self._targets.get(OBJECT) if self.mode == TRACKING else None

    def record_keyframe(self) -> int:
        """Record the current state with every tip's pose (played as a bimanual MoveL); returns the count."""
        self.keyframes.record(self.positions, self.tool_pose(), tuple(zip(self.robot.tip_frames, self.tip_poses())))
        return len(self.keyframes)

    # ---- the mode -----------------------------------------------------------------------------------
    def set_tips_mode(self, mode: str) -> None:
        """Start `mode` (independent, coordinated, relative) from where the hands are: the arm stops, and in
        coordinated mode the grasp is taken here."""
        if mode not in TIP_MODES:
            raise InvalidInputError(f"unknown tips mode '{mode}'; use one of {list(TIP_MODES)}")
        self.tips_mode = mode
        self.servo_config = replace(self.servo_config, tips=replace(self.servo_config.tips, mode=mode))
        self._stop(f"{mode} mode")

    def _stop(self, message: str) -> None:
        super()._stop(message)
        self._targets = {}
        self.errors = (math.inf, math.inf)
        self.grasp = take_grasp(self.tip_poses())[1] if self.tips_mode == COORDINATED else None

    # ---- gizmos -------------------------------------------------------------------------------------
    def set_target(self, base_T_target: pin.SE3) -> None:
        """The first tip's gizmo (what a one-tip robot's gizmo does)."""
        self.drive_target(self.robot.tip_frame, base_T_target)

    def drive_target(self, name: str, base_T_target: pin.SE3) -> None:
        """Drive a tip (`name` one of robot.tip_frames) or the held object (`name` = "object", coordinated mode)
        toward `base_T_target` (base frame).

        Raises:
            InvalidInputError: an unknown tip, the object outside coordinated mode (or a tip in it), NaN/inf.
        """
        tips = self.robot.tip_frames
        if name != OBJECT and name not in tips:
            raise InvalidInputError(f"unknown tip '{name}'; the tips of {self.robot.name} are {list(tips)}")
        if (name == OBJECT) != (self.tips_mode == COORDINATED):
            raise InvalidInputError(f"in {self.tips_mode} mode the gizmos drive "
                                    + ("the held object, not a tip" if self.tips_mode == COORDINATED
                                       else "the tips; the object gizmo needs the coordinated mode"))
        for what, values in (("position", base_T_target.translation), ("rotation", base_T_target.rotation)):
            if not np.isfinite(values).all():
                raise InvalidInputError(f"gizmo target {what} of {name} is not finite: {values.tolist()}")
        if self._servo is None or self.mode != TRACKING:
            self._servo = Servo(self.robot, self.servo_config)
            self._servo_time = self._now
            self._servo.set_measurement(JointMeasurement(self.positions.copy(), self._now))
            self.playback = None
        if self.tips_mode == INDEPENDENT:
            self._servo.set_pose_target(PoseTarget(base_T_target.translation.copy(),
                                                   quaternion_xyzw(base_T_target.rotation), "", 0, self._now,
                                                   tip=name))
        else:
            self._targets.clear()                    # one twist-driven target at a time
        self._targets[name] = base_T_target.copy()
        self.mode = TRACKING

    # ---- time ---------------------------------------------------------------------------------------
    def _track(self, now: float) -> None:
        if self.tips_mode == INDEPENDENT:
            super()._track(now)
            return
        period = self.servo_config.publish_period
        self._servo_time = max(self._servo_time, now - MAX_CATCH_UP)
        out = None
        for _ in range(math.floor((now - self._servo_time) / period + 1e-9)):
            self._servo_time += period
            self._send_twist(self._servo_time)
            out = self._servo.step(self._servo_time)
            if out.publish:
                self.positions = out.positions.copy()
            self._servo.set_measurement(JointMeasurement(self.positions.copy(), self._servo_time))
        if out is not None:
            linear, angular = self.errors
            self.message = f"{out.message}; gizmo error {linear * 1e3:.3g} mm, {angular * 1e3:.3g} mrad"
            self.locked_joints = out.locked_joints

    def _send_twist(self, now: float) -> None:
        """The twist toward the driven target, sent every servo tick (a stream, as a teleoperation client's)."""
        if not self._targets:
            return
        (name, target), = self._targets.items()
        if name == OBJECT:
            current, tip, axes = self.object_pose(), "", np.eye(3)
        else:
            current = self.robot.fk(self.positions, name)
            reference = self._servo.config.tips.reference_tip or self.robot.tip_frame
            tip = name
            # a tip other than the reference moves relative to it, in its axes (the reference holds still)
            axes = self.robot.fk(self.positions, reference).rotation if name != reference else np.eye(3)
        twist, linear, angular = tracking_twist(current, target, self._limits)
        self.errors = (linear, angular)
        self._servo.set_command(TwistCommand(axes.T @ twist[:3], axes.T @ twist[3:], "", now, tip=tip))
