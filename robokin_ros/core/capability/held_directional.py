"""The largest speed and the largest force along a direction for an object held by several tips, under the joints'
own limits (each joint its own bound, not a norm): the exact sets the held-object ellipsoids are inscribed in.

Both are small linear programs (HiGHS through scipy), with J (6k, n) the stacked tip Jacobians and G (6, 6k) the
grasp matrix of a `HeldObjectAnalysis`:

- speed: max s over q̇ (n), ω (3), s >= 0 with J q̇ = Gᵀ [s d; ω] (closure: the hands move with the object, whose
  angular velocity is free) and |q̇_i| <= q̇_max,i. [m/s]
- force: max s over the tip wrenches W (6k), s >= 0 with G W = [s d; 0] (a pure force on the object, no moment;
  internal wrenches free) and |(Jᵀ W)_i| <= τ_max,i (static equilibrium within the torque limits). [N]
  Unbounded (inf) when the structure holds that force with no torque at all (a singular configuration).
"""
from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy.optimize import linprog

from robokin_ros.core.capability.directional import unit_direction
from robokin_ros.core.capability.held_capability import HeldObjectAnalysis
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.validation import check_vector

UNBOUNDED = 3     # scipy.optimize.linprog status


def _limits(name: str, values: npt.ArrayLike, n: int) -> np.ndarray:
    limits = check_vector(name, values, n)
    if (limits <= 0).any():
        raise InvalidInputError(f"{name} must be > 0, got {limits.tolist()}")
    return limits


def max_object_speed(held: HeldObjectAnalysis, velocity_limits: npt.ArrayLike, direction: npt.ArrayLike) -> float:
    """Largest object speed [m/s] along `direction` (base axes) with |q̇_i| <= velocity_limits_i and the closure.

    Raises:
        InvalidInputError: limits of the wrong size, non-finite or not positive; a zero or non-finite direction.
    """
    J, G = held.jacobian, held.grasp
    n = J.shape[1]
    limits = _limits("velocity_limits", velocity_limits, n)
    d = unit_direction(direction)
    cost = np.zeros(n + 4)
    cost[-1] = -1.0                                                          # maximise s
    equalities = np.hstack([J, -G.T[:, 3:], -(G.T[:, :3] @ d)[:, None]])     # (6k, n + 4)
    bounds = [(-lim, lim) for lim in limits] + [(None, None)] * 3 + [(0.0, None)]
    result = linprog(cost, A_eq=equalities, b_eq=np.zeros(len(J)), bounds=bounds, method="highs")
    if result.status != 0:          # s = 0 is feasible and q̇ is bounded: only numerical trouble lands here
        raise InvalidInputError(f"the object speed along {d.tolist()} could not be computed: {result.message}")
    return float(result.x[-1])


def max_object_force(held: HeldObjectAnalysis, torque_limits: npt.ArrayLike, direction: npt.ArrayLike) -> float:
    """Largest pure force [N] on the object along `direction` (base axes) with |τ_i| <= torque_limits_i; inf when
    the configuration holds it with no torque.

    Raises:
        InvalidInputError: limits of the wrong size, non-finite or not positive; a zero or non-finite direction.
    """
    J, G = held.jacobian, held.grasp
    limits = _limits("torque_limits", torque_limits, J.shape[1])
    d = unit_direction(direction)
    m = J.shape[0]
    cost = np.zeros(m + 1)
    cost[-1] = -1.0
    target = np.zeros((6, 1))
    target[:3, 0] = d
    equalities = np.hstack([G, -target])                                     # G W - s [d; 0] = 0
    torques = np.hstack([J.T, np.zeros((J.shape[1], 1))])                    # (n, m + 1): Jᵀ W
    result = linprog(cost, A_ub=np.vstack([torques, -torques]), b_ub=np.concatenate([limits, limits]),
                     A_eq=equalities, b_eq=np.zeros(6), bounds=[(None, None)] * m + [(0.0, None)], method="highs")
    if result.status == UNBOUNDED:
        return math.inf
    if result.status != 0:
        raise InvalidInputError(f"the object force along {d.tolist()} could not be computed: {result.message}")
    return float(result.x[-1])
