"""Speed guards: monitors that may slow the commanded motion after the IK has chosen it, with the reason.

Each guard looks at the joint velocity the IK chose and answers a uniform factor in [0, 1]. The servo multiplies
the command by the smallest factor and solves again, so the slower motion goes through the same limits and the
same acceleration window: a guard that drops to 0 brings the arm to rest within the acceleration limits, never
by a velocity step. A guard that does not limit (factor 1) says nothing.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from robokin_ros.core.collision.clearance import Clearance, ClearanceChecker
from robokin_ros.core.collision.geometry import build_robot_geometry
from robokin_ros.core.collision.scaling import CollisionVerdict, collision_scaling
from robokin_ros.core.collision.scene import load_scene
from robokin_ros.core.collision.scene_change import SceneChange, apply_scene_change
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.separation import SeparationMonitor, speed_scale
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.tip_task import StackedTask


class GuardVerdict(NamedTuple):
    """A guard's answer: the factor to apply to the command, and why."""

    scale: float                # [0, 1]
    status: ServoStatus
    message: str


class SeparationGuard:
    """Speed and separation monitoring: the tool's linear speed at most v_safe * d / d_safety (separation.py)."""

    def __init__(self, robot: RobotModel, config: ServoConfig) -> None:
        self.robot = robot
        separation = config.separation
        self.monitor = SeparationMonitor(separation.safe_speed, separation.safety_distance,
                                         separation.protective_distance, separation.timeout)

    def update_config(self, config: ServoConfig) -> None:
        """New parameters; the last reading is kept (a reconfiguration must not forget that a person is near)."""
        separation = config.separation
        fresh = SeparationMonitor(separation.safe_speed, separation.safety_distance, separation.protective_distance,
                                  separation.timeout)
        fresh.__dict__.update({k: v for k, v in self.monitor.__dict__.items() if k.startswith("_")})
        self.monitor = fresh

    def judge(self, positions: np.ndarray, twist: np.ndarray | None, joint_velocities: np.ndarray | None,
              now: float) -> GuardVerdict | None:
        """The factor for a command at positions (n,): a tool twist (6,) [v; w] in base axes, a stacked task of
        several tips, or joint velocities (n,) when `twist` is None; None when it does not limit it."""
        limit = self.monitor.speed_limit(now)
        if limit.speed == 0.0:
            status = ServoStatus.PROTECTIVE_STOP
            return GuardVerdict(0.0, status, f"{status.sentence}: {limit.message}")
        if twist.__class__ is StackedTask:
            tool_speed = twist.speed            # several tips: the fastest one's commanded speed
        elif twist is not None:
            tool_speed = float(np.linalg.norm(twist[:3]))
        else:
            tool_speed = self._tool_speed(positions, joint_velocities) if joint_velocities.any() else 0.0
        scale = speed_scale(limit.speed, tool_speed)
        if scale >= 1.0:
            return None
        status = ServoStatus.SEPARATION_LIMITED
        return GuardVerdict(scale, status, f"{status.sentence}: {limit.message}")

    def _tool_speed(self, positions: np.ndarray, velocities: np.ndarray) -> float:
        if len(self.robot.tip_frames) > 1:                  # several tips: the fastest one
            return max(float(np.linalg.norm(self.robot.jacobian(positions, tip)[:3] @ velocities))
                       for tip in self.robot.tip_frames)
        J = self.robot.jacobian(positions)                   # (6, n) tool origin, base axes
        return float(np.linalg.norm(J[:3] @ velocities))


class CollisionGuard:
    """Collision-aware speed scaling: the nearest self or scene pair, checked at `collision_check_rate`, and its
    distance gradient, which judges every tick's motion (core/collision/scaling.py has the rule)."""

    def __init__(self, robot: RobotModel, config: ServoConfig, acceleration_limits: np.ndarray,
                 jerk_limits: np.ndarray | None = None) -> None:
        """Raises ModelError (geometry, SRDF) or ConfigError (scene file) when collision checking cannot start."""
        collision = config.collision
        objects = load_scene(collision.scene_objects_file, robot.base_frame) if collision.scene_objects_file else ()
        self.checker = ClearanceChecker(robot, build_robot_geometry(robot, collision.srdf or None), objects)
        self.update_config(config, acceleration_limits, jerk_limits)
        self.clearance: Clearance | None = None
        self._checked_at = -np.inf

    def update_config(self, config: ServoConfig, acceleration_limits: np.ndarray,
                      jerk_limits: np.ndarray | None = None) -> None:
        collision = config.collision
        self._period = 1.0 / collision.collision_check_rate
        self._factor = collision.collision_distance_safety_factor
        self._minimum = collision.min_allowable_collision_distance
        self._amax = acceleration_limits
        # With jerk limits a stop takes longer than at a_max: the acceleration ramps at J first, and the S-curve from
        # speed v covers v^2 / (2 A) + v A / (2 J); the velocity also follows a slowing command that much later. The
        # rule's distance covered per check period (linear in the scale) gets the lag max A / J on top, which covers
        # both (core/servo/jerk_window.py); 0 without jerk limits (the rule unchanged).
        self._lag = 0.0 if jerk_limits is None else float(np.max(acceleration_limits / jerk_limits))

    def judge(self, positions: np.ndarray, velocities: np.ndarray, now: float) -> GuardVerdict | None:
        """The factor for joint velocities (n,) about to be commanded at positions (n,); None when clear."""
        if now - self._checked_at >= self._period or self.clearance is None:
            self.clearance, self._checked_at = self.checker.check(positions), now
        scaling = collision_scaling(self.clearance, velocities, safety_factor=self._factor,
                                    min_allowable_distance=self._minimum, acceleration_limits=self._amax,
                                    period=self._period + self._lag)
        if scaling.verdict == CollisionVerdict.OK:
            return None
        status = ServoStatus.HALT_FOR_COLLISION if scaling.verdict == CollisionVerdict.HALT \
            else ServoStatus.DECELERATE_FOR_COLLISION
        return GuardVerdict(scaling.scale, status, scaling.message)


class SpeedGuards:
    """Both guards of one servo: the collision guard (built on the first configuration that checks collisions,
    kept while it is off) and the separation guard; the smallest factor wins."""

    def __init__(self, robot: RobotModel, config: ServoConfig, acceleration_limits: np.ndarray,
                 jerk_limits: np.ndarray | None = None) -> None:
        self.robot = robot
        self.separation = SeparationGuard(robot, config)
        self.collision: CollisionGuard | None = None
        self.update_config(config, acceleration_limits, jerk_limits)

    def update_config(self, config: ServoConfig, acceleration_limits: np.ndarray,
                      jerk_limits: np.ndarray | None = None) -> None:
        """New parameters; `jerk_limits` (n,) [rad/s^3] or None (no jerk limit)."""
        self.config = config
        self.separation.update_config(config)
        if config.collision.check_collisions:
            if self.collision is None:
                self.collision = CollisionGuard(self.robot, config, acceleration_limits, jerk_limits)
            else:
                self.collision.update_config(config, acceleration_limits, jerk_limits)
        # whether `judge` can say anything (a plain attribute: the servo asks it every tick)
        self.active = config.collision.check_collisions or config.separation.enabled

    @property
    def checking_collisions(self) -> bool:
        return self.collision is not None and self.config.collision.check_collisions

    def judge(self, positions: np.ndarray, twist: np.ndarray | None, joint_velocities: np.ndarray | None,
              velocities: np.ndarray, now: float, unlimited_share) -> GuardVerdict | None:
        """The factor (when `active`) for the IK's joint velocities (n,) at positions (n,), solved for a tool twist
        (6,) [v; w] in base axes or, when `twist` is None, for `joint_velocities` (n,); None when no guard speaks.
        `unlimited_share(velocities)`: their share of the same command without the acceleration window."""
        verdict = None
        if self.checking_collisions:
            collision = self.collision.judge(positions, velocities, now)
            if collision is not None:
                # a scale judged on an accelerating result applies to the command as that share of it, or the
                # speed would creep past it tick by tick
                verdict = collision._replace(scale=collision.scale * unlimited_share(velocities))
        if self.config.separation.enabled:
            # judged on the command, not on the acceleration-limited result: a factor taken from a result still
            # ramping up would let the speed creep past the limit tick by tick
            separation = self.separation.judge(positions, twist, None if twist is not None else joint_velocities,
                                               now)
            if separation is not None and separation.scale < (1.0 if verdict is None else verdict.scale):
                verdict = separation
        return verdict

    def update_scene(self, change: SceneChange, base_T_frame: pin.SE3 | None,
                     place: Callable[[int, str], pin.SE3]) -> str:
        """Add, move or remove a collision scene object (see `Servo.update_scene`); `place(frame_id, name)` gives a
        model frame's pose now."""
        if not self.checking_collisions:
            raise InvalidInputError(f"scene object '{change.id}' ignored: collision checking is off "
                                    "(check_collisions: false)")
        if base_T_frame is None:
            frame = self.robot.resolve_frame(change.frame)
            base_T_frame = pin.SE3.Identity() if frame == self.robot.base_frame_id else place(frame, change.frame)
        text = apply_scene_change(self.collision.checker, change, base_T_frame)
        self.collision.clearance = None          # the next tick checks against the new scene
        return text
