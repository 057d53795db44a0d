"""Speed guards: monitors that may slow the commanded motion after the IK has chosen it, with the reason.

Each guard looks at the joint velocity the IK chose and answers a uniform factor in [0, 1]. The servo multiplies
the command by the smallest factor and solves again, so the slower motion goes through the same limits and the
same acceleration window: a guard that drops to 0 brings the arm to rest within the acceleration limits, never
by a velocity step. A guard that does not limit (factor 1) says nothing.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.separation import SeparationMonitor, speed_scale
from robokin_ros.core.servo.status import ServoStatus


class GuardVerdict(NamedTuple):
    """A guard's answer: the factor to apply to the command, and why."""

    scale: float                # [0, 1]
    status: ServoStatus
    message: str


class SeparationGuard:
    """Speed and separation monitoring: the tool's linear speed at most v_safe * d / d_safety (separation.py)."""

    def __init__(self, robot: RobotModel, config: ServoConfig) -> None:
        self.robot = robot
        self.monitor = SeparationMonitor(config.separation_safe_speed, config.separation_safety_distance,
                                         config.separation_protective_distance, config.separation_timeout)

    def update_config(self, config: ServoConfig) -> None:
        """New parameters; the last reading is kept (a reconfiguration must not forget that a person is near)."""
        fresh = SeparationMonitor(config.separation_safe_speed, config.separation_safety_distance,
                                  config.separation_protective_distance, config.separation_timeout)
        fresh.__dict__.update({k: v for k, v in self.monitor.__dict__.items() if k.startswith("_")})
        self.monitor = fresh

    def judge(self, positions: np.ndarray, twist: np.ndarray | None, joint_velocities: np.ndarray | None,
              now: float) -> GuardVerdict | None:
        """The factor for a command at positions (n,): a tool twist (6,) [v; w] in base axes, or joint velocities
        (n,) when `twist` is None; None when it does not limit it."""
        limit = self.monitor.speed_limit(now)
        if limit.speed == 0.0:
            status = ServoStatus.PROTECTIVE_STOP
            return GuardVerdict(0.0, status, f"{status.sentence}: {limit.message}")
        if twist is not None:
            tool_speed = float(np.linalg.norm(twist[:3]))
        else:
            tool_speed = self._tool_speed(positions, joint_velocities) if joint_velocities.any() else 0.0
        scale = speed_scale(limit.speed, tool_speed)
        if scale >= 1.0:
            return None
        status = ServoStatus.SEPARATION_LIMITED
        return GuardVerdict(scale, status, f"{status.sentence}: {limit.message}")

    def _tool_speed(self, positions: np.ndarray, velocities: np.ndarray) -> float:
        J = self.robot.jacobian(positions)                   # (6, n) tool origin, base axes
        return float(np.linalg.norm(J[:3] @ velocities))
