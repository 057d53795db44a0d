"""The stacked velocity task of several tips: blocks of six rows, one per tip, object point or tip pair.

A block is the Jacobian (6, n) of one of:
- a tip origin (`TipBlock`), in base axes, as the single-tip task;
- a point fixed on a tip's body (`PointBlock`, the held object's origin: `held_object.point_jacobian`, written by
  its compiled twin `point_rows_into`);
- one tip's motion relative to another (`RelativeBlock`, `held_object.relative_jacobian` / `relative_rows_into`):
  zero velocity on these
  rows keeps the pair's relative pose.
The blocks are stacked into one (m, n) task for `VelocityIk.solve_task`: every joint of the tree serves every row,
so a joint shared by two tips (a torso) is resolved by the one damped least-squares solve.

The tips' Jacobians and poses come from one Pinocchio pass on this module's own data (the IK's and the servo's
caches stay untouched).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from robokin_ros.core.robot import RobotModel
from robokin_ros.core.tips.held_object import point_rows_into, relative_rows_into

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
_ANGULAR = np.arange(6) >= 3


class TipBlock(NamedTuple):
    """Rows of tip `tip` (index into `robot.tip_frames`)."""

    tip: int


class PointBlock(NamedTuple):
    """Rows of the point `tip_p_point` (3,) [m] fixed on tip `tip`'s body (in that tip's frame)."""

    tip: int
    tip_p_point: np.ndarray


class RelativeBlock(NamedTuple):
    """Rows of tip `moving`'s motion seen from tip `reference` (base axes)."""

    reference: int
    moving: int


Block = TipBlock | PointBlock | RelativeBlock


class StackedTask(NamedTuple):
    """A velocity task of several blocks, what `VelocityIk.solve_task` takes."""

    jacobian: np.ndarray                            # (m, n) C-ordered
    velocity: np.ndarray                            # (m,) [m/s, rad/s]
    angular_rows: np.ndarray                        # (m,) bool: rows that are angular velocities
    jacobian_at: Callable[[np.ndarray], np.ndarray]     # positions (n,) -> (m, n): the singularity probes
    blocks: tuple[Block, ...]
    speed: float                                    # [m/s] the fastest commanded linear velocity of a block
    # rows [0, primary_rows) are solved first and the others in their null space (`dls.prioritized_dls_into`): a
    # held object's grasp rows; 0 = one damped solve of every row
    primary_rows: int = 0


class TipKinematics:
    """Every tip's Jacobian (6, n) at its origin in base axes and its pose `base_T_tip`, from one pass."""

    def __init__(self, robot: RobotModel) -> None:
        self.robot = robot
        self._model, self._data = robot.model, robot.model.createData()
        self._ids = robot.tip_frame_ids
        self._base_is_world = robot.world_T_base.isIdentity(1e-12)
        self._base_T_world = robot.world_T_base.inverse()
        self._base_R_world = self._base_T_world.rotation.copy()

    def __call__(self, positions: np.ndarray) -> tuple[list[np.ndarray], list[pin.SE3]]:
        """([J (6, n) per tip], [base_T_tip per tip]) at positions (n,)."""
        model, data = self._model, self._data
        pin.computeJointJacobians(model, data, self.robot.to_pinocchio_q(positions))     # runs the FK too
        jacobians, poses = [], []
        for frame_id in self._ids:
            world_T_tip = pin.updateFramePlacement(model, data, frame_id)       # the tips only, not every frame
            J = pin.getFrameJacobian(model, data, frame_id, _LWA)                       # (6, n)
            if self._base_is_world:
                poses.append(world_T_tip.copy())
            else:
                R = self._base_R_world
                J = np.vstack((R @ J[:3], R @ J[3:]))
                poses.append(self._base_T_world * world_T_tip)
            jacobians.append(J)
        return jacobians, poses

    def frame_pose(self, positions: np.ndarray, frame_id: int) -> pin.SE3:
        """`base_T_frame` of any model frame at positions (n,)."""
        pin.framesForwardKinematics(self._model, self._data, self.robot.to_pinocchio_q(positions))
        return self._base_T_world * self._data.oMf[frame_id]


def block_rows_into(block: Block, jacobians: Sequence[np.ndarray], poses: Sequence[pin.SE3], out: np.ndarray
                    ) -> None:
    """out (6, n) = the rows of one block."""
    if isinstance(block, TipBlock):
        out[:] = jacobians[block.tip]
    elif isinstance(block, PointBlock):
        pose = poses[block.tip]
        point_rows_into(jacobians[block.tip], pose.translation, pose.act(block.tip_p_point), out)
    else:
        relative_rows_into(jacobians[block.reference], jacobians[block.moving], poses[block.reference].translation,
                           poses[block.moving].translation, out)


def stack_jacobian(blocks: Sequence[Block], jacobians: Sequence[np.ndarray], poses: Sequence[pin.SE3]
                   ) -> np.ndarray:
    """(6 len(blocks), n) every block's rows, C-ordered (the compiled solve takes one memory layout)."""
    stacked = np.empty((6 * len(blocks), jacobians[0].shape[1]))
    for i, block in enumerate(blocks):
        block_rows_into(block, jacobians, poses, stacked[6 * i:6 * i + 6])
    return stacked


def angular_rows(count: int) -> np.ndarray:
    """(6 count,) bool: the angular rows of `count` blocks (shared, read-only)."""
    rows = _ANGULAR_ROWS.get(count)
    if rows is None:
        rows = _ANGULAR_ROWS[count] = np.tile(_ANGULAR, count)
        rows.flags.writeable = False
    return rows


_ANGULAR_ROWS: dict[int, np.ndarray] = {}


def stacked_task(kinematics: TipKinematics, blocks: tuple[Block, ...], velocities: Sequence[np.ndarray],
                 jacobians: Sequence[np.ndarray], poses: Sequence[pin.SE3], speed: float,
                 primary_blocks: int = 0) -> StackedTask:
    """The task of `blocks` with their velocities (6,) each, from the tips' `jacobians` and `poses` at the current
    positions; `speed`: the fastest commanded linear speed [m/s] of a block (feedback left out); the first
    `primary_blocks` blocks have priority over the others (StackedTask.primary_rows)."""
    def jacobian_at(positions: np.ndarray) -> np.ndarray:
        return stack_jacobian(blocks, *kinematics(positions))

    return StackedTask(stack_jacobian(blocks, jacobians, poses), np.concatenate(velocities),
                       angular_rows(len(blocks)), jacobian_at, blocks, speed, 6 * primary_blocks)
