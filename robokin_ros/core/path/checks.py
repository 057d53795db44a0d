"""Fail-fast checks of solved path samples: deviation at samples and joint-space midpoints, jumps, limits."""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from robokin_ros.core.path.chain import ChainFk
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.geometry import DensePath
from robokin_ros.core.path.result import Deviations, PathStatus
from robokin_ros.core.so3 import log3_batch

# log3 is ill-conditioned near pi: an orientation error beyond this counts whole, whatever its axis
_WHOLE_ANGLE = 3.0     # [rad]


class AxisSelection(NamedTuple):
    """The constrained axes of a solve (from `PathIkSolver.axes`)."""

    rows: np.ndarray          # (m,) constrained axis indices, 0-2 linear, 3-5 angular
    tool_axes: bool           # True: the mask is in the tool's axes, False: in the base axes


class PoseErrors(NamedTuple):
    """Deviations per pose on the constrained axes."""

    position: np.ndarray      # (K,) [m]
    orientation: np.ndarray   # (K,) [rad]


@dataclass(frozen=True)
class BlockCheck:
    """First failing sample of a block (index -1 = none) and why."""

    index: int = -1
    status: PathStatus = PathStatus.SUCCESS
    joint: int = -1
    value: float = float("nan")
    limit: float = float("nan")
    detail: str = ""


class BlockOutcome(NamedTuple):
    """What `check_block` found: the first failure (index -1 = none) and the running maxima."""

    failure: BlockCheck
    worst: Deviations


def pose_errors(R_act: np.ndarray, p_act: np.ndarray, R_tgt: np.ndarray, p_tgt: np.ndarray,
                axes: AxisSelection) -> PoseErrors:
    """Position [m] and orientation [rad] deviation on the constrained axes, per pose (K,) each.

    Errors are target minus actual, in base axes or in the actual tool's axes (`axes.tool_axes`), and only
    the components of the constrained `axes.rows` (0-2 linear, 3-5 angular) count.
    """
    rows = axes.rows
    e_p = p_tgt - p_act                                                   # (K, 3) base axes
    log = log3_batch(np.einsum("kij,klj->kil", R_tgt, R_act))             # of R_tgt R_act^T, base axes
    e_w = log.vector
    if axes.tool_axes:
        e_p = np.einsum("kji,kj->ki", R_act, e_p)                          # R_act^T e
        e_w = np.einsum("kji,kj->ki", R_act, e_w)
    lin, ang = rows[rows < 3], rows[rows >= 3] - 3
    pos = np.linalg.norm(e_p[:, lin], axis=1) if len(lin) else np.zeros(len(e_p))
    rot = np.linalg.norm(e_w[:, ang], axis=1) if len(ang) else np.zeros(len(e_p))
    rot = np.where(log.angle > _WHOLE_ANGLE, log.angle, rot) if len(ang) else rot
    return PoseErrors(pos, rot)


def check_block(fk: ChainFk, path: DensePath, Q: np.ndarray, k0: int, k1: int, axes: AxisSelection,
                config: PathConfig, worst: Deviations) -> BlockOutcome:
    """Check samples k0..k1-1 and the midpoints before them; return the first failure and updated maxima."""
    m = k1 - k0
    mids = 0.5 * (Q[k0 - 1:k1 - 1] + Q[k0:k1])                            # (m, n)
    R, p = fk(np.vstack([Q[k0:k1], mids]))
    pos, rot = pose_errors(R[:m], p[:m], path.rotations[k0:k1], path.positions[k0:k1], axes)
    mpos, mrot = pose_errors(R[m:], p[m:], path.mid_rotations[k0 - 1:k1 - 1], path.mid_positions[k0 - 1:k1 - 1],
                             axes)
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
        return BlockOutcome(BlockCheck(), worst)
    i = first
    k = k0 + i
    if step_max[i] > config.max_joint_step:
        j = int(np.argmax(step[i]))
        return BlockOutcome(BlockCheck(k, PathStatus.JOINT_JUMP, joint=j, value=float(Q[k, j]), limit=float("nan"),
                                       detail=f"joint step {step[i, j]:.4f} rad > jump bound "
                                              f"{config.max_joint_step}"), worst)
    parts = []
    if pos[i] > tp or rot[i] > tr:
        parts.append(f"deviation at the sample {pos[i] * 1e3:.3f} mm / {rot[i] * 1e3:.3f} mrad")
    if mpos[i] > tp or mrot[i] > tr:
        parts.append(f"deviation at the midpoint before it {mpos[i] * 1e3:.3f} mm / {mrot[i] * 1e3:.3f} mrad")
    detail = ", ".join(parts) + f" (tolerance {tp * 1e3:.3f} mm / {tr * 1e3:.3f} mrad)"
    return BlockOutcome(BlockCheck(k, PathStatus.PATH_DEVIATION, detail=detail), worst)
