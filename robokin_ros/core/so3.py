"""Rotations: log, exp, angle and SLERP, batched in numpy and as compiled scalar kernels (numba).

The one home of these formulas. The log uses the atan2 form (accurate for tiny angles, where acos loses
half the digits) and, within 1e-4 rad of pi, where the skew part vanishes, takes the axis from the
symmetric part; the exp is Rodrigues, R = I + sin(t) K + (1 - cos(t)) K^2 with K = [a] for a unit axis a
(then K^2 = a a^T - I). `test_so3.py` compares both with `pin.log3` / `pin.exp3`.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

NEAR_PI = np.pi - 1e-4       # [rad] above this the log takes its axis from the symmetric part


# ---- compiled scalar forms (for the numba kernels) --------------------------------------------------
@njit(cache=True)
def log3_into(D, out):
    """out = log3(D) [rad] for a rotation matrix D (3, 3); out (3,)."""
    v0, v1, v2 = D[2, 1] - D[1, 2], D[0, 2] - D[2, 0], D[1, 0] - D[0, 1]
    s = 0.5 * np.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
    angle = np.arctan2(s, 0.5 * (D[0, 0] + D[1, 1] + D[2, 2] - 1.0))
    if angle < NEAR_PI:
        f = angle / (2.0 * s) if s > 1e-300 else 0.5
        out[0], out[1], out[2] = f * v0, f * v1, f * v2
        return
    # D ~ 2 a a^T - I: the axis from the largest diagonal entry, its sign from the skew part
    k = 0
    if D[1, 1] > D[k, k]:
        k = 1
    if D[2, 2] > D[k, k]:
        k = 2
    ak = np.sqrt(max(0.5 * (D[k, k] + 1.0), 0.0))
    a0 = ak if k == 0 else 0.25 * (D[0, k] + D[k, 0]) / ak
    a1 = ak if k == 1 else 0.25 * (D[1, k] + D[k, 1]) / ak
    a2 = ak if k == 2 else 0.25 * (D[2, k] + D[k, 2]) / ak
    norm = np.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
    if a0 * v0 + a1 * v1 + a2 * v2 < 0.0:
        norm = -norm
    out[0], out[1], out[2] = angle * a0 / norm, angle * a1 / norm, angle * a2 / norm


@njit(cache=True)
def exp3_unit_axis(ax, ay, az, angle):
    """exp(angle [a]) for a unit axis a, as its nine entries row by row (a tuple: no allocation)."""
    s, c = np.sin(angle), np.cos(angle)
    d = 1.0 - c
    return (c + d * ax * ax, d * ax * ay - s * az, d * ax * az + s * ay,
            d * ay * ax + s * az, c + d * ay * ay, d * ay * az - s * ax,
            d * az * ax - s * ay, d * az * ay + s * ax, c + d * az * az)


@njit(cache=True)
def times_exp3_into(Rn, ax, ay, az, angle, out):
    """out = Rn exp(angle [a]) (3, 3), a unit axis: a revolute joint's rotation after its fixed placement."""
    E00, E01, E02, E10, E11, E12, E20, E21, E22 = exp3_unit_axis(ax, ay, az, angle)
    for i in range(3):
        r0, r1, r2 = Rn[i, 0], Rn[i, 1], Rn[i, 2]
        out[i, 0] = r0 * E00 + r1 * E10 + r2 * E20
        out[i, 1] = r0 * E01 + r1 * E11 + r2 * E21
        out[i, 2] = r0 * E02 + r1 * E12 + r2 * E22


# ---- batched numpy forms ----------------------------------------------------------------------------
class Log3(NamedTuple):
    """Logs of a stack of rotations."""

    vector: np.ndarray       # (K, 3) [rad] rotation vectors
    angle: np.ndarray        # (K,) [rad] their norms, in [0, pi]


def skew(axis: np.ndarray) -> np.ndarray:
    """[a] (3, 3): [a] v = a x v."""
    return np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])


def _skew_parts(D: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(v, sin, angle) of a stack D (K, 3, 3): v = vee(D - D^T) (K, 3), |v| / 2 = sin(angle)."""
    v = np.stack([D[:, 2, 1] - D[:, 1, 2], D[:, 0, 2] - D[:, 2, 0], D[:, 1, 0] - D[:, 0, 1]], axis=1)
    s = 0.5 * np.linalg.norm(v, axis=1)
    return v, s, np.arctan2(s, 0.5 * (D[:, 0, 0] + D[:, 1, 1] + D[:, 2, 2] - 1.0))


def log3_batch(D: np.ndarray) -> Log3:
    """log3 of every rotation of a stack (K, 3, 3); the scalar kernel's formula, row for row."""
    v, s, angle = _skew_parts(D)
    vector = v * np.where(s > 1e-300, angle / np.maximum(2.0 * s, 1e-300), 0.5)[:, None]
    for k in np.flatnonzero(angle >= NEAR_PI):             # rare: a half turn
        log3_into(np.ascontiguousarray(D[k]), vector[k])
    return Log3(vector, angle)


def angles(D: np.ndarray) -> np.ndarray:
    """Rotation angle [rad] of every matrix of a stack (K, 3, 3)."""
    return _skew_parts(D)[2]


def relative_angles(Ra: np.ndarray, Rb: np.ndarray) -> np.ndarray:
    """Angle [rad] of Ra_k^T Rb_k for stacks (K, 3, 3)."""
    return angles(np.einsum("kji,kjl->kil", Ra, Rb))                          # (K, 3, 3) Ra^T Rb


def exp3_axis_batch(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """exp(angle_k [a_k]) (K, 3, 3) for unit axes a (3,) or (K, 3) and angles (K,) [rad] (Rodrigues)."""
    if axis.ndim == 1:
        K = skew(axis)                                                          # one axis: one K^2
    else:
        K = np.zeros((len(angle), 3, 3))
        K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -axis[:, 2], axis[:, 1], -axis[:, 0]
        K[:, 1, 0], K[:, 2, 0], K[:, 2, 1] = axis[:, 2], -axis[:, 1], axis[:, 0]
    theta = angle[:, None, None]
    return np.eye(3) + np.sin(theta) * K + (1.0 - np.cos(theta)) * (K @ K)


def exp3_scaled(w: np.ndarray, t: np.ndarray) -> np.ndarray:
    """exp(t_k [w]) (len(t), 3, 3) for one rotation vector w (3,) [rad] and factors t (K,)."""
    angle = float(np.linalg.norm(w))
    if angle < 1e-12:
        return np.broadcast_to(np.eye(3), (len(t), 3, 3)).copy()
    return exp3_axis_batch(w / angle, t * angle)


def slerp_batch(Ra: np.ndarray, Rb: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Ra_k exp(f_k log(Ra_k^T Rb_k)) for stacks (K, 3, 3) and fractions (K,)."""
    log = log3_batch(np.einsum("kji,kjl->kil", Ra, Rb))                       # of Ra^T Rb
    axis = log.vector / np.maximum(log.angle, 1e-300)[:, None]
    return Ra @ exp3_axis_batch(axis, f * log.angle)


def times_exp(R: np.ndarray, axis: np.ndarray, angle: np.ndarray, aligned: int = -1) -> np.ndarray:
    """R_k exp(angle_k [a]) for a stack R (K, 3, 3), one unit axis a (3,) and angles (K,) [rad].

    Batched forward kinematics applies this once per joint, so it avoids K small products: with
    `aligned` = i (a = +/- e_i, the sign folded into the angles by the caller) only the two other
    columns mix; otherwise R + sin (R [a]) + (1 - cos) (R [a])[a] with [a] applied by one reshaped GEMM.
    """
    if aligned >= 0:
        i, j = (aligned + 1) % 3, (aligned + 2) % 3
        c, s = np.cos(angle)[:, None], np.sin(angle)[:, None]
        out = R.copy()
        out[:, :, i] = c * R[:, :, i] + s * R[:, :, j]
        out[:, :, j] = c * R[:, :, j] - s * R[:, :, i]
        return out
    K = skew(axis)
    RK = (R.reshape(-1, 3) @ K).reshape(R.shape)
    theta = angle[:, None, None]
    return R + np.sin(theta) * RK + (1.0 - np.cos(theta)) * (RK.reshape(-1, 3) @ K).reshape(R.shape)
