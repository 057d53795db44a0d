"""Forward kinematics of many configurations at once, vectorized over samples with numpy.

The path solver must check every dense sample and every joint-space midpoint against the geometry. Calling
Pinocchio once per configuration from Python costs ~1.5 us of call overhead each; a product of exponentials
batched over all samples costs a fraction of that. The chain description (fixed joint placements, motion
axes, tip placement) is read from the Pinocchio model once, and tests compare the result with `pin` FK.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import ModelError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.so3 import times_exp


def _times(R: np.ndarray, M: np.ndarray) -> np.ndarray:
    """R_k @ M for a stack (K, 3, 3) and one (3, 3): one reshaped GEMM instead of K tiny products."""
    return (R.reshape(-1, 3) @ M).reshape(R.shape)


class Poses(NamedTuple):
    """Tool poses of many configurations, base frame."""

    rotations: np.ndarray        # (K, 3, 3)
    translations: np.ndarray     # (K, 3) [m]


class ChainArrays(NamedTuple):
    """The serial chain as contiguous arrays for compiled code (c = joints that move the frame)."""

    place_R: np.ndarray          # (c, 3, 3) fixed joint placement rotations
    place_t: np.ndarray          # (c, 3) [m] fixed joint placement translations
    axes: np.ndarray             # (c, 3) unit motion axes, joint frame
    prismatic: np.ndarray        # (c,) bool
    tip_R: np.ndarray            # (3, 3) frame placement in its parent joint
    tip_t: np.ndarray            # (3,) [m]
    base_R: np.ndarray           # (3, 3) base_T_world
    base_t: np.ndarray           # (3,) [m]


class ChainFk:
    """Batched FK of the robot's tip frame (or another frame on the chain) in the base frame."""

    def __init__(self, robot: RobotModel, frame_id: int | None = None) -> None:
        model = robot.model
        frame_id = robot.tip_frame_id if frame_id is None else frame_id
        if any(model.parents[j] != j - 1 for j in range(1, model.njoints)):
            raise ModelError("batched FK needs a serial chain (joint j's parent is joint j-1)")
        data = model.createData()
        q0 = pin.neutral(model)
        pin.computeJointJacobians(model, data, q0)
        self._placements, self._axes, self._prismatic = [], [], []
        self._aligned, self._signs = [], []
        for j in range(1, model.njoints):
            S = pin.getJointJacobian(model, data, j, pin.ReferenceFrame.LOCAL)[:, model.joints[j].idx_v]
            prismatic = np.linalg.norm(S[3:]) < 1e-12
            axis = S[:3] if prismatic else S[3:]
            self._axes.append(axis / np.linalg.norm(axis))
            a = self._axes[-1]
            aligned = np.flatnonzero(np.abs(np.abs(a) - 1.0) < 1e-12)
            self._aligned.append(int(aligned[0]) if len(aligned) else -1)
            self._signs.append(float(np.sign(a[aligned[0]])) if len(aligned) else 1.0)
            self._prismatic.append(prismatic)
            M = model.jointPlacements[j]
            self._placements.append((M.rotation.copy(), M.translation.copy()))
        frame = model.frames[frame_id]
        self._chain_length = frame.parentJoint          # joints 1..parentJoint move the frame
        self._tip = (frame.placement.rotation.copy(), frame.placement.translation.copy())
        base_T_world = robot.world_T_base.inverse()
        self._base = (base_T_world.rotation.copy(), base_T_world.translation.copy())

    def arrays(self) -> ChainArrays:
        """The chain as contiguous arrays for compiled code (`ik_kernel.chain_pose_jacobian`)."""
        c = self._chain_length
        return ChainArrays(np.array([R for R, _ in self._placements[:c]]).reshape(c, 3, 3),
                           np.array([t for _, t in self._placements[:c]]).reshape(c, 3),
                           np.array(self._axes[:c]).reshape(c, 3), np.array(self._prismatic[:c], dtype=np.bool_),
                           *(np.ascontiguousarray(a) for a in (*self._tip, *self._base)))

    def __call__(self, positions: np.ndarray) -> Poses:
        """Tip poses for positions (K, n), base frame."""
        positions = np.atleast_2d(positions)
        count = len(positions)
        R = np.broadcast_to(self._base[0], (count, 3, 3)).copy()
        p = np.broadcast_to(self._base[1], (count, 3)).copy()
        for j in range(self._chain_length):
            Rj, pj = self._placements[j]
            p = p + (R.reshape(-1, 3) @ pj).reshape(-1, 3)
            R = _times(R, Rj)
            if self._prismatic[j]:
                p = p + (R @ self._axes[j]) * positions[:, j, None]
            else:
                R = times_exp(R, self._axes[j], positions[:, j] * self._signs[j], self._aligned[j])
        Rt, pt = self._tip
        return Poses(_times(R, Rt), p + (R.reshape(-1, 3) @ pt).reshape(-1, 3))
