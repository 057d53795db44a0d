"""The serial chain a path is solved on and its forward kinematics, batched over many configurations.

The path solver must check every dense sample and every joint-space midpoint against the geometry. Calling
Pinocchio once per configuration from Python costs ~1.5 us of call overhead each; a product of exponentials
batched over all samples costs a fraction of that. The chain description (fixed joint placements, motion
axes, tip placement) is read from the Pinocchio model once (`ChainFk`), and tests compare the result with `pin` FK.

Three forms of the same product of exponentials live here:
- `ChainFk.__call__` batches with numpy, one (K, 3, 3) product per joint;
- `chain_poses` (and `chain_fk`) is the compiled loop over `ChainArrays`, sample by sample: on the few thousand
  samples the downsampling and the played-trajectory check evaluate per call, the numpy temporaries cost more than
  the arithmetic; this loop is equal to `ChainFk` to rounding (4e-16 on Panda and UR5 over 3000 random
  configurations) and about twice as fast;
- `chain_pose_jacobian` adds the (6, n) Jacobian, for the path IK's compiled block loop (core/path/solver.py) and
  the tool speeds of the timing; `test_path_kernel.py` compares pose and Jacobian with Pinocchio.
`pose_error_norms` is `deviation.pose_errors` compiled, which the downsampling rounds evaluate on every dense sample.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pinocchio as pin
from numba import njit

from robokin_ros.core.errors import ModelError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.so3 import log3_into, times_exp, times_exp3_into

# log3 is ill-conditioned near pi: an orientation error beyond this counts whole, whatever its axis
WHOLE_ANGLE = 3.0     # [rad]


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
        """The chain as contiguous arrays for compiled code (`chain_pose_jacobian`, `chain_poses`)."""
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


@njit(cache=True)
def _poses_into(Q, chain, R_out, p_out):
    place_R, place_t, axes, prismatic, tip_R, tip_t, base_R, base_t = chain
    Rc, Rn, pc = np.empty((3, 3)), np.empty((3, 3)), np.empty(3)
    for k in range(Q.shape[0]):
        Rc[:, :] = base_R
        pc[:] = base_t
        for jt in range(place_t.shape[0]):
            for i in range(3):
                pc[i] += Rc[i, 0] * place_t[jt, 0] + Rc[i, 1] * place_t[jt, 1] + Rc[i, 2] * place_t[jt, 2]
            P = place_R[jt]
            for i in range(3):
                for j in range(3):
                    Rn[i, j] = Rc[i, 0] * P[0, j] + Rc[i, 1] * P[1, j] + Rc[i, 2] * P[2, j]
            ax, ay, az = axes[jt, 0], axes[jt, 1], axes[jt, 2]
            if prismatic[jt]:
                for i in range(3):
                    pc[i] += (Rn[i, 0] * ax + Rn[i, 1] * ay + Rn[i, 2] * az) * Q[k, jt]
                Rc[:, :] = Rn
            else:
                times_exp3_into(Rn, ax, ay, az, Q[k, jt], Rc)
        for i in range(3):
            p_out[k, i] = pc[i] + Rc[i, 0] * tip_t[0] + Rc[i, 1] * tip_t[1] + Rc[i, 2] * tip_t[2]
            for j in range(3):
                R_out[k, i, j] = Rc[i, 0] * tip_R[0, j] + Rc[i, 1] * tip_R[1, j] + Rc[i, 2] * tip_R[2, j]


def chain_poses(chain, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tool rotations (K, 3, 3) and positions (K, 3) [m], base frame, of joint positions (K, n) on `chain`
    (`ChainFk.arrays()`)."""
    Q = np.ascontiguousarray(np.atleast_2d(positions), dtype=float)
    R, p = np.empty((len(Q), 3, 3)), np.empty((len(Q), 3))
    _poses_into(Q, chain, R, p)
    return R, p


def chain_fk(fk):
    """A batched FK with `fk`'s signature (positions (K, n) -> rotations, positions) that runs the compiled loop
    when `fk` is a `ChainFk` (it has `arrays()`), else `fk` itself."""
    arrays = getattr(fk, "arrays", None)
    if arrays is None:
        return fk
    chain = arrays()
    return lambda positions: chain_poses(chain, positions)


@njit(cache=True)
def _pose_error_norms_into(R_act, p_act, R_tgt, p_tgt, lin, ang, tool_axes, whole_angle, pos, rot):
    has_ang = ang[0] + ang[1] + ang[2] > 0.0
    D, w, e = np.empty((3, 3)), np.empty(3), np.empty(3)
    for k in range(p_act.shape[0]):
        for i in range(3):
            for j in range(3):
                D[i, j] = R_tgt[k, i, 0] * R_act[k, j, 0] + R_tgt[k, i, 1] * R_act[k, j, 1] + \
                    R_tgt[k, i, 2] * R_act[k, j, 2]                                   # R_tgt R_act^T
        log3_into(D, w)
        for i in range(3):
            e[i] = p_tgt[k, i] - p_act[k, i]
        if tool_axes:                       # both in the actual tool's axes: R_act^T v
            e0, e1, e2, w0, w1, w2 = e[0], e[1], e[2], w[0], w[1], w[2]
            for i in range(3):
                e[i] = R_act[k, 0, i] * e0 + R_act[k, 1, i] * e1 + R_act[k, 2, i] * e2
                w[i] = R_act[k, 0, i] * w0 + R_act[k, 1, i] * w1 + R_act[k, 2, i] * w2
        total_p, total_r, angle = 0.0, 0.0, 0.0
        for i in range(3):
            total_p += e[i] * e[i] * lin[i]
            total_r += w[i] * w[i] * ang[i]
            angle += w[i] * w[i]
        pos[k] = np.sqrt(total_p)
        angle = np.sqrt(angle)
        rot[k] = angle if angle > whole_angle and has_ang else np.sqrt(total_r)


def pose_error_norms(R_act: np.ndarray, p_act: np.ndarray, R_tgt: np.ndarray, p_tgt: np.ndarray,
                     axes) -> tuple[np.ndarray, np.ndarray]:
    """`deviation.pose_errors` (position [m] and orientation [rad] deviation per pose on the constrained axes),
    compiled: one pass over the poses instead of a dozen (K, 3, 3) temporaries, equal to it to rounding."""
    lin, ang = np.zeros(3), np.zeros(3)
    lin[axes.rows[axes.rows < 3]] = 1.0
    ang[axes.rows[axes.rows >= 3] - 3] = 1.0
    pos, rot = np.empty(len(p_act)), np.empty(len(p_act))
    _pose_error_norms_into(*(np.ascontiguousarray(a, dtype=float) for a in (R_act, p_act, R_tgt, p_tgt)), lin, ang,
                           bool(axes.tool_axes), WHOLE_ANGLE, pos, rot)
    return pos, rot


@njit(cache=True)
def chain_pose_jacobian(q, chain, R, p, J):
    """Tip pose (R, p) and (6, n) Jacobian [linear; angular] in base axes (Pinocchio LOCAL_WORLD_ALIGNED
    expressed in the base) of a serial chain (`ChainArrays`) at positions q; joints past the chain get zero
    columns."""
    c = chain.place_t.shape[0]
    chain_pose_jacobian_into(q, chain, R, p, J, np.empty((3, 3)), np.empty((3, 3)), np.empty(3),
                             np.empty((c, 3)), np.empty((c, 3)))


@njit(cache=True)
def chain_pose_jacobian_into(q, chain, R, p, J, Rc, Rn, pc, W, org):
    """`chain_pose_jacobian` in caller-owned scratch: Rc, Rn (3, 3), pc (3,), W and org (c, 3) receive
    the joint axes and origins in the base frame."""
    place_R, place_t, axes, prismatic, tip_R, tip_t, base_R, base_t = chain
    chain_length = place_t.shape[0]
    n = J.shape[1]
    for i in range(3):
        pc[i] = base_t[i]
        for j in range(3):
            Rc[i, j] = base_R[i, j]
    for jt in range(chain_length):
        for i in range(3):
            pc[i] += Rc[i, 0] * place_t[jt, 0] + Rc[i, 1] * place_t[jt, 1] + Rc[i, 2] * place_t[jt, 2]
        for i in range(3):
            for j in range(3):
                Rn[i, j] = Rc[i, 0] * place_R[jt, 0, j] + Rc[i, 1] * place_R[jt, 1, j] + Rc[i, 2] * place_R[jt, 2, j]
        ax, ay, az = axes[jt, 0], axes[jt, 1], axes[jt, 2]
        for i in range(3):
            W[jt, i] = Rn[i, 0] * ax + Rn[i, 1] * ay + Rn[i, 2] * az
            org[jt, i] = pc[i]
        if prismatic[jt]:
            for i in range(3):
                pc[i] += W[jt, i] * q[jt]
                for j in range(3):
                    Rc[i, j] = Rn[i, j]
        else:
            times_exp3_into(Rn, ax, ay, az, q[jt], Rc)
    for i in range(3):
        p[i] = pc[i] + Rc[i, 0] * tip_t[0] + Rc[i, 1] * tip_t[1] + Rc[i, 2] * tip_t[2]
        for j in range(3):
            R[i, j] = Rc[i, 0] * tip_R[0, j] + Rc[i, 1] * tip_R[1, j] + Rc[i, 2] * tip_R[2, j]
    for jt in range(n):
        if jt >= chain_length:
            for i in range(6):
                J[i, jt] = 0.0
            continue
        w0, w1, w2 = W[jt, 0], W[jt, 1], W[jt, 2]
        if prismatic[jt]:
            J[0, jt], J[1, jt], J[2, jt] = w0, w1, w2
            J[3, jt] = J[4, jt] = J[5, jt] = 0.0
        else:
            d0, d1, d2 = p[0] - org[jt, 0], p[1] - org[jt, 1], p[2] - org[jt, 2]
            J[0, jt] = w1 * d2 - w2 * d1
            J[1, jt] = w2 * d0 - w0 * d2
            J[2, jt] = w0 * d1 - w1 * d0
            J[3, jt], J[4, jt], J[5, jt] = w0, w1, w2
