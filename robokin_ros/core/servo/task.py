"""The velocity task: which rows of which frame Jacobian must follow the twist, and in which axes.

The frame Jacobian is taken at the frame origin in base axes (LOCAL_WORLD_ALIGNED), optionally rotated
into the frame's own axes ("tool"), then reduced to the rows of `axis_mask`: an arm with fewer than six
joints can follow only some axes, and leaving the others free keeps its task Jacobian full rank.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from robokin_ros.core.robot import RobotModel

AXIS_FRAMES = ("base", "tool")


class Task(NamedTuple):
    """A velocity task: the Jacobian rows and the velocity they must produce."""

    jacobian: np.ndarray     # (m, n) task Jacobian
    velocity: np.ndarray     # (m,) [m/s, rad/s] task velocity


class TaskBuilder:
    """Builds tasks for one robot chain; inputs are not checked (`VelocityIk.solve` does that)."""

    def __init__(self, robot: RobotModel) -> None:
        self._robot = robot
        self._base_R_world = robot.world_T_base.rotation.T.copy()     # (3, 3)

    def __call__(self, positions: np.ndarray, twist: np.ndarray, frame_id: int,
                 axis_mask: Sequence[bool] | None, axis_frame: str) -> Task:
        """The task of moving frame `frame_id` with `twist`.

        Args:
            positions: (n,) joint positions [rad | m], chain order.
            twist: (6,) [v; w] of the frame origin in base axes [m/s, rad/s].
            frame_id: the model frame moved.
            axis_mask: six booleans, True = that axis is part of the task; None = all six.
            axis_frame: "base" or "tool": the axes of the task rows (and of `axis_mask`).
        """
        J = self._robot.frame_jacobian_fast(self._robot.to_pinocchio_q(positions), frame_id)      # (6, n)
        if axis_frame == "tool":
            tool_R_base = (self._base_R_world @ self._robot.data.oMf[frame_id].rotation).T      # (3, 3)
            J = np.vstack((tool_R_base @ J[:3], tool_R_base @ J[3:]))                           # (6, n)
            twist = np.concatenate((tool_R_base @ twist[:3], tool_R_base @ twist[3:]))         # (6,)
        if axis_mask is not None:
            rows = np.flatnonzero(axis_mask)
            J, twist = J[rows], twist[rows]                                                     # (m, n), (m,)
        return Task(J, twist)

    def jacobian_at(self, frame_id: int, axis_mask: Sequence[bool] | None,
                    axis_frame: str) -> Callable[[np.ndarray], np.ndarray]:
        """A function positions -> task Jacobian (m, n) of this frame, mask and axes (for probe steps)."""
        zero_twist = np.zeros(6)
        return lambda positions: self(positions, zero_twist, frame_id, axis_mask, axis_frame).jacobian
