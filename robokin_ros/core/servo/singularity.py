"""Optional MoveIt-Servo-style slowing by condition number, applied only to motion toward a singularity.

Damped least squares already keeps the step bounded near singularities; these thresholds are for users
who want the arm to slow down and stop before one, as MoveIt Servo does. Unlike MoveIt Servo, the direction
is judged by the motion actually commanded: the condition number is evaluated a small joint step along
that motion, and only when it grows is the motion "toward" the singularity. A motion away from it is
never halted (an arm started in a singular pose must be able to leave it): it is slowed between the
thresholds times `leaving_singularity_threshold_multiplier`, down to a floor.

The probes need the task Jacobian at other positions: callers pass it as a function, `jacobian_at(q)`.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.status import ServoStatus

JacobianAt = Callable[[np.ndarray], np.ndarray]     # (n,) positions -> (m, n) task Jacobian there

# Largest joint displacement [rad | m] of the probe step: small enough to be first order, large enough
# that the condition number change is far above rounding.
PROBE_STEP = 1e-4
# Speed factor never undercut while leaving a singularity: slow, but always moving out.
MIN_LEAVING_SCALE = 0.1


def condition_number(A: np.ndarray) -> float:
    """sigma_max / sigma_min of a task Jacobian (m, n); inf when rank deficient."""
    s = np.linalg.svd(A, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0.0 and A.shape[0] <= A.shape[1] else float("inf")


class SingularityScale(NamedTuple):
    """How much of the commanded motion a nearby singularity lets through, and why."""

    scale: float             # uniform velocity factor in [0, 1]
    status: ServoStatus      # OK, HALT_FOR_SINGULARITY or DECELERATE_FOR_{APPROACHING,LEAVING}_SINGULARITY


def singularity_scale(config: ServoConfig, jacobian_at: JacobianAt, positions: np.ndarray, A: np.ndarray,
                      dq: np.ndarray) -> SingularityScale:
    """Uniform velocity factor and status from the condition number of the task Jacobian.

    Args:
        config: its `*_singularity_threshold*` fields are used.
        jacobian_at: the task Jacobian (m, n) at given positions (n,).
        positions: (n,) current positions [rad | m]. A: (m, n) task Jacobian there.
        dq: (n,) the velocity about to be commanded [rad/s | m/s].
    """
    largest = float(np.max(np.abs(dq)))
    cond = condition_number(A)      # SVD here and at the probe: same rounding on both sides
    lower, hard = config.lower_singularity_threshold, config.hard_stop_singularity_threshold
    if largest == 0.0 or cond <= lower:
        return SingularityScale(1.0, ServoStatus.OK)
    if condition_number(jacobian_at(positions + (PROBE_STEP / largest) * dq)) > cond:
        if cond >= hard:
            return SingularityScale(0.0, ServoStatus.HALT_FOR_SINGULARITY)
        return SingularityScale(1.0 - (cond - lower) / (hard - lower),
                                ServoStatus.DECELERATE_FOR_APPROACHING_SINGULARITY)
    lower *= config.leaving_singularity_threshold_multiplier
    hard *= config.leaving_singularity_threshold_multiplier
    if cond <= lower:
        return SingularityScale(1.0, ServoStatus.OK)
    return SingularityScale(max(MIN_LEAVING_SCALE, 1.0 - (cond - lower) / (hard - lower)),
                            ServoStatus.DECELERATE_FOR_LEAVING_SINGULARITY)


def damping_status(jacobian_at: JacobianAt, positions: np.ndarray, A: np.ndarray, b: np.ndarray) -> ServoStatus:
    """While damping is active (sigma_min below its threshold), say whether the command drives the arm toward
    the singularity or away from it. The probe follows the motion the command asks for (the undamped
    least-squares solution of A x = b), not the damped motion the arm makes: pushed into the workspace
    boundary, the damped motion drifts sideways and would read as "leaving" while the user keeps pushing."""
    intent = np.linalg.lstsq(A, b, rcond=None)[0]
    largest = float(np.max(np.abs(intent)))
    if not largest > 0.0:
        return ServoStatus.DECELERATE_FOR_APPROACHING_SINGULARITY
    if condition_number(jacobian_at(positions + (PROBE_STEP / largest) * intent)) > condition_number(A):
        return ServoStatus.DECELERATE_FOR_APPROACHING_SINGULARITY
    return ServoStatus.DECELERATE_FOR_LEAVING_SINGULARITY


# Rotation is compared with travel through a lever of this length [m]: 1 rad/s of tool rotation counts like
# 0.1 m/s, so a pure rotation command that drags the tool origin at 5 cm/s is 50 % off its direction.
DIRECTION_LEVER = 0.1


class DirectionGuard(NamedTuple):
    """Speed factor that keeps the tool on the commanded direction, and how far off it would go."""

    factor: float            # in [0, 1]
    off: float               # sine of the angle between achieved and commanded motion, in [0, 1]


def direction_guard(A: np.ndarray, b: np.ndarray, dq: np.ndarray, tolerance: float,
                    angular_rows: np.ndarray | None = None) -> DirectionGuard:
    """Speed factor in [0, 1] that keeps the commanded twist's direction when joints are held at limits.

    The achieved task velocity a = A dq splits into a part along the command b and a part across it; the
    share of the part across, |a - alpha b| / |a| (the sine of the angle between achieved and commanded
    motion), is how far the tool leaves the commanded direction, whatever the command's size. Below
    tolerance / 2 nothing changes; from there the factor falls linearly to 0 at `tolerance` (Drake's
    DiffIK keeps the direction exactly; this is the servo's softer version).

    Args:
        A: (m, n) task Jacobian. b: (m,) commanded task velocity. dq: (n,) candidate velocity.
        tolerance: relative error at which the factor reaches 0 (> 0).
        angular_rows: (m,) bool, rows that are angular velocities (scaled by DIRECTION_LEVER); None = the
            six rows [v; w].
    """
    if angular_rows is None:
        angular_rows = np.arange(len(b)) >= 3
    weights = np.where(angular_rows, DIRECTION_LEVER, 1.0)              # (m,) [m per rad]
    b = weights * b
    bb = float(b @ b)
    if bb <= 1e-18:
        return DirectionGuard(1.0, 0.0)
    achieved = weights * (A @ dq)                                        # (m,)
    aa = float(achieved @ achieved)
    if aa <= 1e-24:
        return DirectionGuard(1.0, 0.0)                                  # not moving: nothing to guard
    alpha = float(achieved @ b) / bb
    off = float(np.linalg.norm(achieved - alpha * b)) / np.sqrt(aa)
    if alpha <= 0.0:
        return DirectionGuard(0.0, 1.0)
    return DirectionGuard(float(np.clip((tolerance - off) / (0.5 * tolerance), 0.0, 1.0)), off)
