"""Fail-fast checks of solved path samples: deviation at samples and joint-space midpoints, jumps, limits."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robokin_ros.core.path.chain import ChainFk
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.geometry import DensePath
from robokin_ros.core.path.result import Deviations, PathStatus


@dataclass(frozen=True)
class BlockCheck:
    """First failing sample of a block (index -1 = none) and why."""

    index: int = -1
    status: PathStatus = PathStatus.SUCCESS
    joint: int = -1
    value: float = float("nan")
    limit: float = float("nan")
    detail: str = ""


def pose_errors(R_act: np.ndarray, p_act: np.ndarray, R_tgt: np.ndarray, p_tgt: np.ndarray,
                rows: np.ndarray, tool_axes: bool) -> tuple[np.ndarray, np.ndarray]:
    """Position [m] and orientation [rad] deviation on the constrained axes, per pose (K,) each.

    Errors are target minus actual, in base axes or in the actual tool's axes (`tool_axes`), and only the
    components of the constrained `rows` (0-2 linear, 3-5 angular) count.
    """
    e_p = p_tgt - p_act                                                   # (K, 3) base axes
    D = np.einsum("kij,klj->kil", R_tgt, R_act)                           # (K, 3, 3) R_tgt R_act^T
    v = np.stack([D[:, 2, 1] - D[:, 1, 2], D[:, 0, 2] - D[:, 2, 0], D[:, 1, 0] - D[:, 0, 1]], axis=1)
    s = 0.5 * np.linalg.norm(v, axis=1)
    angle = np.arctan2(s, 0.5 * (D[:, 0, 0] + D[:, 1, 1] + D[:, 2, 2] - 1.0))
    factor = np.where(s > 1e-12, angle / np.maximum(2.0 * s, 1e-300), 0.5)
    e_w = v * factor[:, None]                                             # (K, 3) log3, base axes
    if tool_axes:
        e_p = np.einsum("kji,kj->ki", R_act, e_p)                          # R_act^T e
        e_w = np.einsum("kji,kj->ki", R_act, e_w)
    lin, ang = rows[rows < 3], rows[rows >= 3] - 3
    pos = np.linalg.norm(e_p[:, lin], axis=1) if len(lin) else np.zeros(len(e_p))
    rot = np.linalg.norm(e_w[:, ang], axis=1) if len(ang) else np.zeros(len(e_p))
    # log3 is ill-conditioned near pi; such an error is a failure whatever its axis
    rot = np.where(angle > 3.0, angle, rot) if len(ang) else rot
    return pos, rot


def slerp_batch(Ra: np.ndarray, Rb: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Ra_k exp(f_k log(Ra_k^T Rb_k)) for stacks (K, 3, 3) and fractions (K,)."""
    D = np.einsum("kji,kjl->kil", Ra, Rb)                                 # (K, 3, 3) Ra^T Rb
    v = 0.5 * np.stack([D[:, 2, 1] - D[:, 1, 2], D[:, 0, 2] - D[:, 2, 0], D[:, 1, 0] - D[:, 0, 1]], axis=1)
    s = np.linalg.norm(v, axis=1)
    angle = np.arctan2(s, 0.5 * (D[:, 0, 0] + D[:, 1, 1] + D[:, 2, 2] - 1.0))
    axis = v / np.maximum(s, 1e-300)[:, None]
    K = np.zeros_like(D)
    K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -axis[:, 2], axis[:, 1], -axis[:, 0]
    K[:, 1, 0], K[:, 2, 0], K[:, 2, 1] = axis[:, 2], -axis[:, 1], axis[:, 0]
    theta = (f * angle)[:, None, None]
    E = np.eye(3) + np.sin(theta) * K + (1.0 - np.cos(theta)) * (K @ K)
    return Ra @ E


def check_block(fk: ChainFk, path: DensePath, Q: np.ndarray, k0: int, k1: int, rows: np.ndarray,
                tool_axes: bool, config: PathConfig, n: int, worst: Deviations) -> tuple[BlockCheck, Deviations]:
    """Check samples k0..k1-1 and the midpoints before them; return the first failure and updated maxima."""
    m = k1 - k0
    mids = 0.5 * (Q[k0 - 1:k1 - 1] + Q[k0:k1])                            # (m, n)
    R, p = fk(np.vstack([Q[k0:k1], mids]))
    pos, rot = pose_errors(R[:m], p[:m], path.rotations[k0:k1], path.positions[k0:k1], rows, tool_axes)
    mpos, mrot = pose_errors(R[m:], p[m:], path.mid_rotations[k0 - 1:k1 - 1],
                             path.mid_positions[k0 - 1:k1 - 1], rows, tool_axes)
    step = np.abs(Q[k0:k1] - Q[k0 - 1:k1 - 1])                             # (m, n)
    step_max = step.max(axis=1)
    tp, tr = config.max_position_deviation, config.max_orientation_deviation
    failing = (pos > tp) | (rot > tr) | (mpos > tp) | (mrot > tr) | (step_max > config.max_joint_step)
    first = int(np.argmax(failing)) if failing.any() else m
    if first > 0:
        worst = Deviations(max(worst.position, float(pos[:first].max())),
                           max(worst.orientation, float(rot[:first].max())),
                           max(worst.mid_position, float(mpos[:first].max())),
                           max(worst.mid_orientation, float(mrot[:first].max())),
                           max(worst.joint_step, float(step_max[:first].max())))
    if first == m:
        return BlockCheck(), worst
    i = first
    k = k0 + i
    if step_max[i] > config.max_joint_step:
        j = int(np.argmax(step[i]))
        return BlockCheck(k, PathStatus.JOINT_JUMP, joint=j, value=float(Q[k, j]), limit=float("nan"),
                          detail=f"joint step {step[i, j]:.4f} rad > jump bound {config.max_joint_step}"), worst
    parts = []
    if pos[i] > tp or rot[i] > tr:
        parts.append(f"deviation at the sample {pos[i] * 1e3:.3f} mm / {rot[i] * 1e3:.3f} mrad")
    if mpos[i] > tp or mrot[i] > tr:
        parts.append(f"deviation at the midpoint before it {mpos[i] * 1e3:.3f} mm / {mrot[i] * 1e3:.3f} mrad")
    detail = ", ".join(parts) + f" (tolerance {tp * 1e3:.3f} mm / {tr * 1e3:.3f} mrad)"
    return BlockCheck(k, PathStatus.PATH_DEVIATION, detail=detail), worst
