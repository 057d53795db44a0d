"""Compiled inner loop of the path IK: chain FK + Jacobian, pose error, masked DLS step, for a block of samples.

Calling Pinocchio, `log3` and the DLS kernel from Python costs ~8 us of dispatch per dense sample; one numba
call per block of samples removes all of it. The serial-chain description is the one `ChainFk` reads from the
Pinocchio model (fixed placements, unit joint axes, tip placement, base_T_world), so poses and Jacobians
are in the base frame; `test_path_kernel.py` compares both with Pinocchio and the whole loop with a Python
loop built from Pinocchio and `bounded_dls`. Scratch arrays are allocated once per block, not per sample.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from robokin_ros.core.dls import bounded_dls_fast_into, scratch_size
from robokin_ros.core.limits import nullspace_velocity
from robokin_ros.core.so3 import log3_into, times_exp3_into


class KernelSettings(NamedTuple):
    """Everything `solve_path_block` needs besides the chain and targets; built once per solve."""

    rows: np.ndarray             # (m,) int64 constrained axes, 0-2 linear, 3-5 angular
    tool_axes: bool              # error and Jacobian in the tool's axes (partial masks only), else base axes
    world_R_base: np.ndarray     # (3, 3) the convergence test (iterations > 1) reads the error in world axes
    iterations: int              # DLS steps per sample at most
    tol: float                   # [m | rad] convergence tolerance of the pose error
    lower: np.ndarray            # (n,) [rad | m] position limits with margin
    upper: np.ndarray            # (n,)
    sigma_threshold: float       # [m/rad] damping starts below this smallest singular value
    max_damping: float           # damping at sigma_min = 0
    null_space: bool             # False: no secondary motion (both gains are 0)
    limit_gain: float            # [1/sample] limit-avoidance push per dense sample
    zone_width: np.ndarray       # (n,) [rad | m] avoidance band inside each limit (`limits.avoidance_zone_widths`)
    posture_gain: float          # [1/sample] pull toward `home` per dense sample
    home: np.ndarray             # (n,) [rad | m] posture target


@njit(cache=True)
def chain_pose_jacobian(q, chain, R, p, J):
    """Tip pose (R, p) and (6, n) Jacobian [linear; angular] in base axes (Pinocchio LOCAL_WORLD_ALIGNED
    expressed in the base) of a serial chain (`ChainArrays`) at positions q; joints past the chain get zero
    columns."""
    c = chain.place_t.shape[0]
    _chain_pose_jacobian_into(q, chain, R, p, J, np.empty((3, 3)), np.empty((3, 3)), np.empty(3),
                              np.empty((c, 3)), np.empty((c, 3)))


@njit(cache=True)
def _chain_pose_jacobian_into(q, chain, R, p, J, Rc, Rn, pc, W, org):
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


@njit(cache=True)
def _pose_error(R, p, Rt, pt, tool_axes, D, e, b):
    """b = (R^T (p_t - p), log3(R^T R_t)) in tool axes, else (p_t - p, log3(R_t R^T)) in base axes."""
    if tool_axes:
        for i in range(3):
            b[i] = R[0, i] * (pt[0] - p[0]) + R[1, i] * (pt[1] - p[1]) + R[2, i] * (pt[2] - p[2])
            for j in range(3):
                D[i, j] = R[0, i] * Rt[0, j] + R[1, i] * Rt[1, j] + R[2, i] * Rt[2, j]
    else:
        for i in range(3):
            b[i] = pt[i] - p[i]
            for j in range(3):
                D[i, j] = Rt[i, 0] * R[j, 0] + Rt[i, 1] * R[j, 1] + Rt[i, 2] * R[j, 2]
    log3_into(D, e)
    b[3], b[4], b[5] = e[0], e[1], e[2]


@njit(cache=True)
def _converged(b, tool_axes, world_R_base, tol):
    """Largest world-axes component of the error below `tol` (tool-axes errors are tested as they are)."""
    err = 0.0
    for h in range(2):
        for i in range(3):
            v = b[3 * h + i]
            if not tool_axes:
                v = (world_R_base[i, 0] * b[3 * h] + world_R_base[i, 1] * b[3 * h + 1]
                     + world_R_base[i, 2] * b[3 * h + 2])
            err = max(err, abs(v))
    return err < tol


@njit(cache=True)
def _masked_task(R, J, b, rows, tool_axes, A, bm):
    """The constrained rows of the error and of the Jacobian (rotated into tool axes block by block)."""
    n = J.shape[1]
    for r in range(rows.shape[0]):
        row = rows[r]
        bm[r] = b[row]
        h = 3 * (row // 3)
        i = row - h
        for j in range(n):
            if tool_axes:
                A[r, j] = R[0, i] * J[h, j] + R[1, i] * J[h + 1, j] + R[2, i] * J[h + 2, j]
            else:
                A[r, j] = J[row, j]


@njit(cache=True)
def solve_path_block(Q, sigma, k0, k1, P_t, R_t, chain, settings):
    """One bounded DLS step (up to `settings.iterations`) per dense sample k0..k1-1, each seeded from Q[k - 1].

    Args:
        Q: (N, n) positions, rows k0..k1-1 written. sigma: (N,) sigma_min of the first step per sample,
            or a certified lower bound >= sigma_threshold when it is above the threshold.
        P_t, R_t: (k1 - k0, 3), (k1 - k0, 3, 3) targets in the base frame.
        chain: `ChainArrays` of the tool frame. settings: `KernelSettings`.
    """
    n = Q.shape[1]
    m = settings.rows.shape[0]
    c = chain.place_t.shape[0]
    Rc, Rn, pc, W, org = np.empty((3, 3)), np.empty((3, 3)), np.empty(3), np.empty((c, 3)), np.empty((c, 3))
    R, p, J = np.empty((3, 3)), np.empty(3), np.empty((6, n))
    D, e, b = np.empty((3, 3)), np.empty(3), np.empty(6)
    A, bm = np.empty((m, n)), np.empty(m)
    z, lo, hi, dq = np.zeros(n), np.empty(n), np.empty(n), np.empty(n)
    fixed = np.zeros(n, dtype=np.int8)
    scratch = np.empty(scratch_size(n))
    lower, upper = settings.lower, settings.upper
    q = Q[k0 - 1].copy()
    for k in range(k0, k1):
        for it in range(settings.iterations):
            _chain_pose_jacobian_into(q, chain, R, p, J, Rc, Rn, pc, W, org)
            _pose_error(R, p, R_t[k - k0], P_t[k - k0], settings.tool_axes, D, e, b)
            if it > 0 and _converged(b, settings.tool_axes, settings.world_R_base, settings.tol):
                break
            _masked_task(R, J, b, settings.rows, settings.tool_axes, A, bm)
            for j in range(n):
                lo[j] = lower[j] - q[j]
                hi[j] = upper[j] - q[j]
            if settings.null_space:
                nullspace_velocity(q, lower, upper, settings.zone_width, settings.limit_gain, settings.home,
                                   settings.posture_gain, z)
            s_min = bounded_dls_fast_into(A, bm, z, lo, hi, settings.sigma_threshold, settings.max_damping,
                                          dq, fixed, scratch)
            for j in range(n):
                q[j] += dq[j]
            if it == 0:
                sigma[k] = s_min
        for j in range(n):
            Q[k, j] = q[j]
