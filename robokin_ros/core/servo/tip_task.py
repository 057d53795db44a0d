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

A held object's task, the servo's hot path, is assembled in one compiled call (`HeldObjectAssembly`): after
Pinocchio's `computeJointJacobians` it reads the world Jacobian and the tips' parent-joint placements in place and
writes the stacked rows and the grasp rows' hold velocities (what `TipKinematics`, `stack_jacobian` and
`held_object.relative_pose_error` give, to rounding: test_tip_task), without the Python steps between them.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from numba import njit

from robokin_ros.core.robot import RobotModel
from robokin_ros.core.tips.held_object import point_rows_into, relative_error_into, relative_rows_into

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


# ---- the held object's task in one compiled call ------------------------------------------------------------------
@njit(cache=True)
def _tips_into(J, joint_R, joint_p, consts, masks, jac, rot, pos):
    """Every tip's LOCAL_WORLD_ALIGNED Jacobian jac[i] (6, n) and pose rot[i] (3, 3), pos[i] (3,) in base axes, from
    Pinocchio's world Jacobian J (6, n) (spatial, about the world origin) and the tips' parent-joint placements
    joint_R[i], joint_p[i]. consts rows: 4 i .. 4 i + 3 = tip i's placement in its joint (R; p), then base_T_world
    (R; p) at 4 k. masks (k, n): 1 where a column moves tip i (its parent joint's support)."""
    k, n = masks.shape
    base_R, base_p = consts[4 * k:4 * k + 3], consts[4 * k + 3]
    world_p = np.empty(3)
    for i in range(k):
        Rj, pj, Rf, pf = joint_R[i], joint_p[i], consts[4 * i:4 * i + 3], consts[4 * i + 3]
        for a in range(3):
            world_p[a] = pj[a] + Rj[a, 0] * pf[0] + Rj[a, 1] * pf[1] + Rj[a, 2] * pf[2]
        for a in range(3):
            pos[i, a] = base_p[a] + base_R[a, 0] * world_p[0] + base_R[a, 1] * world_p[1] + base_R[a, 2] * world_p[2]
            for c in range(3):
                acc = 0.0
                for e in range(3):
                    world_R = Rj[e, 0] * Rf[0, c] + Rj[e, 1] * Rf[1, c] + Rj[e, 2] * Rf[2, c]
                    acc += base_R[a, e] * world_R
                rot[i, a, c] = acc
        for j in range(n):
            if masks[i, j] == 0:
                for a in range(6):
                    jac[i, a, j] = 0.0
                continue
            wx, wy, wz = J[3, j], J[4, j], J[5, j]
            vx = J[0, j] + wy * world_p[2] - wz * world_p[1]         # the velocity of the tip's origin
            vy = J[1, j] + wz * world_p[0] - wx * world_p[2]
            vz = J[2, j] + wx * world_p[1] - wy * world_p[0]
            for a in range(3):
                jac[i, a, j] = base_R[a, 0] * vx + base_R[a, 1] * vy + base_R[a, 2] * vz
                jac[i, 3 + a, j] = base_R[a, 0] * wx + base_R[a, 1] * wy + base_R[a, 2] * wz


@njit(cache=True)
def _held_object_into(J, joint_R, joint_p, consts, masks, scratch, A, b):
    """The held object's stacked task: rows 6 (j - 1) .. 6 j of A = tip j relative to tip 0 (j = 1 .. k - 1), with
    b = -gain times its drift from the held relative pose; the last six rows = the object origin's point on tip 0
    (b left to the caller: the object's twist). consts after `_tips_into`'s: the held poses tip0_T_tipj (R; p) at
    4 (k + 1) + 4 (j - 1), then the object origin in tip 0's frame and [gain, 0, 0]. scratch: (k (6 n + 12) + 3,),
    ends with the object origin in base coordinates (for the object's twist)."""
    k, n = masks.shape
    jac = scratch[:6 * n * k].reshape((k, 6, n))
    at = 6 * n * k
    rot = scratch[at:at + 9 * k].reshape((k, 3, 3))
    pos = scratch[at + 9 * k:at + 12 * k].reshape((k, 3))
    origin = scratch[at + 12 * k:at + 12 * k + 3]
    _tips_into(J, joint_R, joint_p, consts, masks, jac, rot, pos)
    held = 4 * (k + 1)
    point, gain = consts[held + 4 * (k - 1)], consts[held + 4 * (k - 1) + 1, 0]
    for j in range(1, k):
        relative_rows_into(jac[0], jac[j], pos[0], pos[j], A[6 * (j - 1):6 * j])
        at = held + 4 * (j - 1)
        relative_error_into(rot[0], pos[0], rot[j], pos[j], consts[at:at + 3], consts[at + 3], b[6 * (j - 1):6 * j])
        for a in range(6 * (j - 1), 6 * j):
            b[a] *= -gain
    for a in range(3):
        origin[a] = pos[0, a] + rot[0, a, 0] * point[0] + rot[0, a, 1] * point[1] + rot[0, a, 2] * point[2]
    point_rows_into(jac[0], pos[0], origin, A[6 * (k - 1):])


class HeldObjectAssembly:
    """A held object's stacked task in one compiled call per tick (coordinated mode's hot path): the blocks
    (RelativeBlock(0, j) per other tip, then PointBlock(0, tip0_p_object)) and the grasp rows' velocities, while
    one grasp lasts. The tips' Jacobians and poses are read from `kinematics`' Pinocchio data in place (the world
    Jacobian and the parent joints' placements, views Pinocchio updates), so nothing else may run that data."""

    def __init__(self, kinematics: TipKinematics, tip0_p_object: np.ndarray, held: Sequence[pin.SE3],
                 gain: float) -> None:
        robot, model, data = kinematics.robot, kinematics._model, kinematics._data
        k, n = len(robot.tip_frames), robot.n
        self._kinematics, self._model, self._data, self._robot = kinematics, model, data, robot
        self.blocks: tuple[Block, ...] = (*(RelativeBlock(0, j) for j in range(1, k)),
                                          PointBlock(0, np.array(tip0_p_object, dtype=float)))
        frames = [model.frames[frame_id] for frame_id in robot.tip_frame_ids]
        consts = np.zeros((8 * k + 2, 3))   # tips' placements, base_T_world, held poses, object, gain
        for i, frame in enumerate(frames):
            consts[4 * i:4 * i + 3], consts[4 * i + 3] = frame.placement.rotation, frame.placement.translation
        consts[4 * k:4 * k + 3] = kinematics._base_T_world.rotation
        consts[4 * k + 3] = kinematics._base_T_world.translation
        for j, pose in enumerate(held):
            at = 4 * (k + 1) + 4 * j
            consts[at:at + 3], consts[at + 3] = pose.rotation, pose.translation
        consts[-2], consts[-1, 0] = tip0_p_object, gain
        self._consts = consts
        masks = np.zeros((k, n), dtype=np.int8)
        for i, frame in enumerate(frames):
            for joint_id in model.supports[frame.parentJoint]:
                joint = model.joints[joint_id]
                masks[i, joint.idx_v:joint.idx_v + joint.nv] = 1
        self._masks = masks
        self._parents = tuple(frame.parentJoint for frame in frames)
        self._views_follow = True
        self._take_views()
        # views of Pinocchio's own arrays, updated in place by computeJointJacobians (eigenpy returns references);
        # should a binding return copies instead, they are taken again every tick
        q = pin.neutral(model)
        pin.computeJointJacobians(model, data, q)
        pin.computeJointJacobians(model, data, pin.integrate(model, q, np.full(model.nv, 0.3)))
        self._views_follow = np.array_equal(self._J, data.J) and all(
            np.array_equal(R, data.oMi[j].rotation) and np.array_equal(p, data.oMi[j].translation)
            for R, p, j in zip(self._joint_R, self._joint_p, self._parents))
        self._scratch = np.empty(k * (6 * n + 12) + 3)
        self.origin = self._scratch[-3:]        # the object origin (base coordinates) after `__call__`
        self._m, self._n = 6 * k, n

    def set_gain(self, gain: float) -> None:
        """The grasp rows' hold gain [1/s] from the next tick on."""
        self._consts[-1, 0] = gain

    def __call__(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(A (6 k, n), b (6 k,)) at positions (n,): fresh arrays, b's last six entries (the object's twist) unset."""
        pin.computeJointJacobians(self._model, self._data, self._robot.to_pinocchio_q(positions))
        if not self._views_follow:
            self._take_views()
        A, b = np.empty((self._m, self._n)), np.empty(self._m)
        _held_object_into(self._J, self._joint_R, self._joint_p, self._consts, self._masks, self._scratch, A, b)
        return A, b

    def _take_views(self) -> None:
        data = self._data
        self._J = data.J
        self._joint_R = tuple(data.oMi[j].rotation for j in self._parents)
        self._joint_p = tuple(data.oMi[j].translation for j in self._parents)

    def jacobian_at(self, positions: np.ndarray) -> np.ndarray:
        """The stacked Jacobian at other positions (the singularity probes), by the reference route."""
        return stack_jacobian(self.blocks, *self._kinematics(positions))
