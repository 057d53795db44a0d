"""Compiled inner loop of the path IK: chain FK + Jacobian, pose error, masked DLS step, for a block of samples.

Calling Pinocchio, `log3` and the DLS kernel from Python costs ~8 us of dispatch per dense sample; one numba
call per block of samples removes all of it. The serial-chain description is the one `ChainFk` reads from the
Pinocchio model (fixed placements, unit joint axes, tip placement, base_T_world), so poses and Jacobians
are in the base frame; `test_path_kernel.py` compares both with Pinocchio and the whole loop with the
previous Python loop (Pinocchio Jacobian + `bounded_dls`).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from robokin_ros.core.dls import _bounded_dls_fast_into, scratch_size


@njit(cache=True)
def chain_pose_jacobian(q, place_R, place_t, axes, prismatic, tip_R, tip_t, base_R, base_t, R, p, J):
    """Tip pose (R, p) and (6, n) Jacobian [linear; angular] in base axes (Pinocchio LOCAL_WORLD_ALIGNED
    expressed in the base) of a serial chain at positions q; joints past len(place_t) get zero columns."""
    chain = place_t.shape[0]
    n = J.shape[1]
    Rc = np.empty((3, 3))
    Rn = np.empty((3, 3))
    pc = np.empty(3)
    W = np.empty((chain, 3))                 # joint axes, base frame
    org = np.empty((chain, 3))               # joint origins, base frame
    for i in range(3):
        pc[i] = base_t[i]
        for j in range(3):
            Rc[i, j] = base_R[i, j]
    for jt in range(chain):
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
            # R exp(q [a]) = R (I + s K + (1 - c) K^2), K^2 = a a^T - I for a unit axis
            s, c = np.sin(q[jt]), np.cos(q[jt])
            d = 1.0 - c
            E00, E01, E02 = c + d * ax * ax, d * ax * ay - s * az, d * ax * az + s * ay
            E10, E11, E12 = d * ay * ax + s * az, c + d * ay * ay, d * ay * az - s * ax
            E20, E21, E22 = d * az * ax - s * ay, d * az * ay + s * ax, c + d * az * az
            for i in range(3):
                r0, r1, r2 = Rn[i, 0], Rn[i, 1], Rn[i, 2]
                Rc[i, 0] = r0 * E00 + r1 * E10 + r2 * E20
                Rc[i, 1] = r0 * E01 + r1 * E11 + r2 * E21
                Rc[i, 2] = r0 * E02 + r1 * E12 + r2 * E22
    for i in range(3):
        p[i] = pc[i] + Rc[i, 0] * tip_t[0] + Rc[i, 1] * tip_t[1] + Rc[i, 2] * tip_t[2]
        for j in range(3):
            R[i, j] = Rc[i, 0] * tip_R[0, j] + Rc[i, 1] * tip_R[1, j] + Rc[i, 2] * tip_R[2, j]
    for jt in range(n):
        if jt >= chain:
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
def log3_of(D, out):
    """out = log3(D) for a rotation matrix D [rad]; atan2 form (accurate for tiny angles) and the
    symmetric-part axis near pi, where the skew part vanishes."""
    v0, v1, v2 = D[2, 1] - D[1, 2], D[0, 2] - D[2, 0], D[1, 0] - D[0, 1]
    s = 0.5 * np.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
    c = 0.5 * (D[0, 0] + D[1, 1] + D[2, 2] - 1.0)
    angle = np.arctan2(s, c)
    if angle < np.pi - 1e-4:
        f = angle / (2.0 * s) if s > 1e-300 else 0.5
        out[0], out[1], out[2] = f * v0, f * v1, f * v2
        return
    # near pi: D ~ 2 a a^T - I, take the axis from the largest diagonal, its sign from the skew part
    k = 0
    if D[1, 1] > D[k, k]:
        k = 1
    if D[2, 2] > D[k, k]:
        k = 2
    a = np.empty(3)
    a[k] = np.sqrt(max(0.5 * (D[k, k] + 1.0), 0.0))
    for i in range(3):
        if i != k:
            a[i] = 0.25 * (D[i, k] + D[k, i]) / a[k]
    norm = np.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
    if a[0] * v0 + a[1] * v1 + a[2] * v2 < 0.0:
        norm = -norm
    for i in range(3):
        out[i] = angle * a[i] / norm


@njit(cache=True)
def solve_path_block(Q, sigma, k0, k1, P_t, R_t, chain, rows, tool_axes, world_R_base, iterations, tol,
                     lower, upper, sigma_threshold, max_damping, null_space, jl_gain, jl_zone, posture_gain,
                     home):
    """One bounded DLS step (up to `iterations`) per dense sample k0..k1-1, each seeded from Q[k - 1].

    Args:
        Q: (N, n) positions, rows k0..k1-1 written. sigma: (N,) sigma_min of the first step per sample,
            or a certified lower bound >= sigma_threshold when it is above the threshold.
        P_t, R_t: (k1 - k0, 3), (k1 - k0, 3, 3) targets in the base frame.
        chain: tuple (place_R, place_t, axes, prismatic, tip_R, tip_t, base_R, base_t) of `ChainFk`.
        rows: constrained axes; tool_axes: error and Jacobian in the tool's axes (only for partial masks:
            with six axes the step is the same in any axes), else base axes.
        world_R_base: the convergence test (iterations > 1) is done on the world-axes error as before.
        lower, upper: (n,) position limits with margin. Other arguments as in `PathIkSolver._Settings`.
    """
    n = Q.shape[1]
    m = rows.shape[0]
    place_R, place_t, axes, prismatic, tip_R, tip_t, base_R, base_t = chain
    R = np.empty((3, 3))
    p = np.empty(3)
    J = np.empty((6, n))
    D = np.empty((3, 3))
    e = np.empty(3)
    b = np.empty(6)
    A = np.empty((m, n))
    bm = np.empty(m)
    z = np.zeros(n)
    lo = np.empty(n)
    hi = np.empty(n)
    dq = np.empty(n)
    fixed = np.zeros(n, dtype=np.int8)
    scratch = np.empty(scratch_size(n))
    q = Q[k0 - 1].copy()
    for k in range(k0, k1):
        pt = P_t[k - k0]
        Rt = R_t[k - k0]
        for it in range(iterations):
            chain_pose_jacobian(q, place_R, place_t, axes, prismatic, tip_R, tip_t, base_R, base_t, R, p, J)
            if tool_axes:
                # b = (R^T (p_t - p), log3(R^T R_t)); J rotated into tool axes block by block
                for i in range(3):
                    b[i] = R[0, i] * (pt[0] - p[0]) + R[1, i] * (pt[1] - p[1]) + R[2, i] * (pt[2] - p[2])
                    for j in range(3):
                        D[i, j] = R[0, i] * Rt[0, j] + R[1, i] * Rt[1, j] + R[2, i] * Rt[2, j]
            else:
                for i in range(3):
                    b[i] = pt[i] - p[i]
                    for j in range(3):
                        D[i, j] = Rt[i, 0] * R[j, 0] + Rt[i, 1] * R[j, 1] + Rt[i, 2] * R[j, 2]
            log3_of(D, e)
            b[3], b[4], b[5] = e[0], e[1], e[2]
            if it > 0:
                err = 0.0
                for h in range(2):
                    for i in range(3):
                        v = b[3 * h + i]
                        if not tool_axes:
                            v = (world_R_base[i, 0] * b[3 * h] + world_R_base[i, 1] * b[3 * h + 1]
                                 + world_R_base[i, 2] * b[3 * h + 2])
                        err = max(err, abs(v))
                if err < tol:
                    break
            for r in range(m):
                row = rows[r]
                bm[r] = b[row]
                h = 3 * (row // 3)
                i = row - h
                for j in range(n):
                    if tool_axes:
                        A[r, j] = R[0, i] * J[h, j] + R[1, i] * J[h + 1, j] + R[2, i] * J[h + 2, j]
                    else:
                        A[r, j] = J[row, j]
            for j in range(n):
                lo[j] = lower[j] - q[j]
                hi[j] = upper[j] - q[j]
                if null_space:
                    into_low = max(lower[j] + jl_zone[j] - q[j], 0.0)
                    into_high = max(q[j] - (upper[j] - jl_zone[j]), 0.0)
                    z[j] = jl_gain * (into_low - into_high) + posture_gain * (home[j] - q[j])
            s_min = _bounded_dls_fast_into(A, bm, z, lo, hi, sigma_threshold, max_damping, dq, fixed, scratch)
            for j in range(n):
                q[j] += dq[j]
            if it == 0:
                sigma[k] = s_min
        for j in range(n):
            Q[k, j] = q[j]
