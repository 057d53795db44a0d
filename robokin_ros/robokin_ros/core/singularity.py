"""Optional MoveIt-Servo-style slowing by condition number, applied only to motion toward a singularity.

Damped least squares already keeps the step bounded near singularities; these thresholds are for users
who want the arm to slow down and stop before one, as MoveIt Servo does. Unlike MoveIt Servo, the direction
is judged by the motion actually commanded: the condition number is evaluated a small joint step along
that motion, and only when it grows is the motion "toward" the singularity. A motion away from it is
never halted (MoveIt Servo users report arms stuck in a singular start pose, moveit2 #3411, #3573): it is
slowed between the thresholds times `leaving_singularity_threshold_multiplier`, down to a floor.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .status import ServoStatus

if TYPE_CHECKING:
    from .velocity_ik import VelocityIk

# Largest joint displacement [rad | m] of the probe step: small enough to be first order, large enough
# that the condition number change is far above rounding.
PROBE_STEP = 1e-4
# Speed factor never undercut while leaving a singularity: slow, but always moving out.
MIN_LEAVING_SCALE = 0.1


def condition_number(A: np.ndarray) -> float:
    """sigma_max / sigma_min of a task Jacobian (m, n); inf when rank deficient."""
    s = np.linalg.svd(A, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0.0 and A.shape[0] <= A.shape[1] else float("inf")


def singularity_scale(ik: VelocityIk, positions: np.ndarray, A: np.ndarray, dq: np.ndarray, frame_id: int,
                      axis_mask, axis_frame: str) -> tuple[float, ServoStatus]:
    """Uniform velocity factor in [0, 1] and status from the condition number of the task Jacobian.

    Args:
        ik: the VelocityIk (its task builder and settings are used).
        positions: (n,) current positions. A: (m, n) task Jacobian there.
        dq: (n,) the velocity about to be commanded.
        frame_id, axis_mask, axis_frame: as in `VelocityIk.solve`.
    """
    s = ik.settings
    largest = float(np.max(np.abs(dq)))
    cond = condition_number(A)      # SVD here and at the probe: same rounding on both sides
    if largest == 0.0 or cond <= s.lower_singularity_threshold:
        return 1.0, ServoStatus.OK
    probe = positions + (PROBE_STEP / largest) * dq
    A_probe, _ = ik.task(probe, np.zeros(6), frame_id, axis_mask, axis_frame)
    lower, hard = s.lower_singularity_threshold, s.hard_stop_singularity_threshold
    if condition_number(A_probe) > cond:
        if cond >= hard:
            return 0.0, ServoStatus.HALT_FOR_SINGULARITY
        return 1.0 - (cond - lower) / (hard - lower), ServoStatus.DECELERATE_FOR_APPROACHING_SINGULARITY
    lower *= s.leaving_singularity_threshold_multiplier
    hard *= s.leaving_singularity_threshold_multiplier
    if cond <= lower:
        return 1.0, ServoStatus.OK
    scale = max(MIN_LEAVING_SCALE, 1.0 - (cond - lower) / (hard - lower))
    return scale, ServoStatus.DECELERATE_FOR_LEAVING_SINGULARITY
