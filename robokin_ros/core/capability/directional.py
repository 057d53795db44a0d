"""The largest tool speed along a direction that the joint velocity limits allow.

The reachable tool velocities form the zonotope Z = {J_v dq : |dq_i| <= dq_max,i} (the image of the joint
velocity box). The largest speed along a unit direction d is max t subject to J_v dq = t d and the box: a small
linear program (n + 1 variables, 3 equalities), solved with HiGHS through scipy. Unlike the velocity ellipsoid
(a unit joint-velocity *norm*), this respects each joint's own limit, so it is the speed the arm really has.
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.optimize import linprog

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.validation import check_vector


def unit_direction(direction: npt.ArrayLike) -> np.ndarray:
    """`direction` normalised; raises InvalidInputError for NaN/inf, a wrong size or the zero vector."""
    d = check_vector("direction", direction, 3)
    norm = float(np.linalg.norm(d))
    if norm == 0.0:
        raise InvalidInputError("direction must not be the zero vector")
    return d / norm


def max_tool_speed(J_v: npt.ArrayLike, velocity_limits: npt.ArrayLike, direction: npt.ArrayLike) -> float:
    """Largest tool speed [m/s] along `direction` (base axes) with |dq_i| <= velocity_limits_i.

    Args:
        J_v: (3, n) translational Jacobian [m/rad | -].
        velocity_limits: (n,) positive joint velocity limits [rad/s | m/s] (finite).
        direction: (3,) any non-zero vector.

    Raises:
        InvalidInputError: wrong shapes, non-finite values, non-positive limits or a zero direction.
    """
    J_v = np.asarray(J_v, float)
    if J_v.ndim != 2 or J_v.shape[0] != 3 or not np.isfinite(J_v).all():
        raise InvalidInputError(f"J_v must be a finite (3, n) matrix, got shape {J_v.shape}")
    n = J_v.shape[1]
    limits = check_vector("velocity_limits", velocity_limits, n)
    if (limits <= 0).any():
        raise InvalidInputError(f"velocity_limits must be > 0, got {limits.tolist()}")
    d = unit_direction(direction)
    cost = np.zeros(n + 1)
    cost[-1] = -1.0                                                   # maximise t
    equalities = np.hstack([J_v, -d[:, None]])                        # (3, n + 1): J_v dq - t d = 0
    bounds = [(-lim, lim) for lim in limits] + [(0.0, None)]
    result = linprog(cost, A_eq=equalities, b_eq=np.zeros(3), bounds=bounds, method="highs")
    if result.status != 0:          # t = 0 is always feasible, so only numerical trouble lands here
        raise InvalidInputError(f"the speed along {d.tolist()} could not be computed: {result.message}")
    return float(result.x[-1])
