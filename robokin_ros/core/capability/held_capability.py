"""Velocity and force capability of an object held rigidly by several tips (two hands carrying a box).

Conventions as `core/tips/held_object`: twists [v; w] and wrenches [f; m] in base axes; the object twist t is taken
at the object origin p_o, each tip's twist and wrench at the tip origin. With k tips:

- J (6k, n): the tips' Jacobians stacked (a shared torso joint has a column in both tips' rows).
- G (6, 6k): the grasp matrix; object wrench = G @ stacked tip wrenches, stacked tip twists = Gᵀ t.
- Closure (the hands move as one body with the object): J q̇ = Gᵀ t. Equivalently Uᵀ J q̇ = 0 with U (6k, 6k-6)
  an orthonormal basis of null(G), the internal wrenches (they squeeze the object and do no work on it).
  Let N (n, r) be an orthonormal basis of the closure-consistent joint velocities null(Uᵀ J), and
  B = (G Gᵀ)⁻¹ G J N (6, r): the object twist t = B z of the joint velocity q̇ = N z (||q̇|| = ||z||).

Definitions (global task-space ellipsoids of a multiple-arm system in the spirit of Chiacchio, Chiaverini, Sciavicco
and Siciliano, 1991, written here in null-space form so that a rank-deficient J is covered too):

- Velocity (6-D): {t : t = B z, ||z|| <= 1}, the object twists reachable with closure-consistent joint velocities
  of unit norm. Drawn: its projection on the linear part, {B_v z} (any angular velocity), as the single-arm
  velocity ellipsoid (semi-axes [m/s per rad/s]); `angular_velocity` likewise [rad/s].
- Velocity within the joint velocity limits: the same with J diag(q̇_max), i.e. ||diag(1/q̇_max) q̇|| <= 1, which
  lies inside the joint velocity box (an inscribed set, as the torque-weighted force ellipsoid is) [m/s].
- Force (6-D): the object wrenches w the arms can apply (or resist) with unit joint-torque norm, the internal
  wrenches chosen freely: {w : min over internal y of ||Jᵀ (G⁺ w + U y)|| <= 1} = {w : ||Bᵀ w|| <= 1}
  (the minimum is attained with torques N Bᵀ w: the rest of Jᵀ's range is Jᵀ U, torques that only squeeze).
  Drawn: its section with zero moment, pure forces on the object {f : ||B_vᵀ f|| <= 1} [N per N m], the analogue
  of the single-arm force ellipsoid (which also applies no moment). Semi-axes 1/σ_i of the velocity projection's
  σ_i, the same axes (the kineto-static duality of the single arm, held exactly).
- Force, torque-weighted: the same with J diag(1/τ_max) in place of J, i.e. ||diag(1/τ_max) τ|| <= 1 [N];
  RMS-scaled: the unweighted one times rms(τ_max) [N].

When J has full row rank (the tips can each move freely), closure allows every t and the closed forms hold:
B Bᵀ = (G (J Jᵀ)⁻¹ Gᵀ)⁻¹ for the velocity and G (J Jᵀ)⁻¹ Gᵀ for the force (its inverse). With one tip, G is
invertible and B Bᵀ = J_o J_oᵀ with J_o the tip's Jacobian moved to the object point (`point_jacobian`).

A shared joint's velocity or torque limit appears once (it is one column of J). No acceleration ellipsoid and no
force polytope for the held object (the closed-chain dynamics and the projected polytope are not computed); the
exact largest speed and force along a direction are small linear programs (`held_directional`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robokin_ros.core.capability.analysis import Ellipsoid, Manipulability, _direct, _eigen, _inverse, _measures
from robokin_ros.core.capability.analysis import _rms, _singular_values
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.tips.held_object import grasp_matrix, take_grasp
from robokin_ros.core.validation import check_vector

Array = npt.NDArray[np.float64]
RANK_TOLERANCE = 1e-10      # relative singular value below which a closure direction is taken as lost


@dataclass(frozen=True)
class HeldObjectAnalysis:
    """Capability of the held object; field names follow `CapabilityAnalysis` so the report and markers draw it
    the same way (ellipsoids at the object origin). Force variants are None when limits are missing."""

    positions: Array                  # (n,)
    tips: tuple[str, ...]             # the tips holding the object
    object_position: Array            # (3,) object origin in the base frame [m]
    jacobian: Array                   # (6k, n) the tips' Jacobians stacked, tip origins, base axes
    grasp: Array                      # (6, 6k) grasp matrix G at the object origin
    internal_wrenches: Array          # (6k, 6k-6) orthonormal basis of null(G)
    closure_velocities: Array         # (n, r) orthonormal basis N of the closure-consistent joint velocities
    object_jacobian: Array            # (6, r) B: object twist = B z for q̇ = N z
    velocity: Ellipsoid               # [m/s] linear part, unit joint-velocity norm
    angular_velocity: Ellipsoid       # [rad/s]
    velocity_limited: Ellipsoid | None  # [m/s] within the joint velocity limits; None when one is missing
    force_unweighted: Ellipsoid       # [N per N m] pure force, unit joint-torque norm
    force_rms: Ellipsoid | None       # [N]
    force_weighted: Ellipsoid | None  # [N]
    manipulability: Manipulability    # of B_v
    angular_manipulability: Manipulability
    torque_limits: Array | None       # (n,) [N m | N]
    unavailable_reason: str

    acceleration_normalized = None    # not computed for a held object (closed-chain dynamics)

    @property
    def tool_position(self) -> Array:
        """The object origin (where the markers are drawn)."""
        return self.object_position

    @property
    def singular(self) -> bool:
        """True when the object's linear velocity map is singular (force axes capped)."""
        return self.manipulability.singular

    @property
    def wrench_gram(self) -> Array:
        """(6, 6) B Bᵀ: the 6-D force ellipsoid is {w : wᵀ B Bᵀ w <= 1}, the velocity one {B z : ||z|| <= 1}."""
        return self.object_jacobian @ self.object_jacobian.T


def null_space(A: Array, columns: int) -> Array:
    """(columns, r) orthonormal basis of {x : A x = 0} for A (rows, columns); singular values below
    RANK_TOLERANCE * max(1, σ_max) count as zero."""
    if A.shape[0] == 0:
        return np.eye(columns)
    _, s, vt = np.linalg.svd(A, full_matrices=True)
    rank = int((s > RANK_TOLERANCE * max(1.0, s[0] if s.size else 0.0)).sum())
    return vt[rank:].T.copy()


def internal_wrench_basis(G: Array) -> Array:
    """(6k, 6k-6) orthonormal basis of null(G): tip wrenches that add up to no wrench on the object."""
    return null_space(G, G.shape[1])


def object_velocity_map(J: Array, G: Array, internal: Array) -> tuple[Array, Array]:
    """(N, B) for the stacked Jacobian J (6k, n) (columns possibly scaled): N (n, r) spans the joint velocities
    that keep the closure, B = (G Gᵀ)⁻¹ G J N (6, r) maps them to the object twist."""
    N = null_space(internal.T @ J, J.shape[1])                                   # (n, r)
    B = np.linalg.solve(G @ G.T, G @ (J @ N))                                    # (6, r)
    return N, B


def _check_tips(robot: RobotModel, tips: Sequence[str] | None) -> tuple[str, ...]:
    tips = tuple(robot.tip_frames if tips is None else tips)
    unknown = [t for t in tips if t not in robot.tip_frames]
    if not tips or unknown or len(set(tips)) != len(tips):
        detail = f" (unknown: {unknown})" if unknown else ""
        raise InvalidInputError(f"tips {list(tips)} must be distinct, at least one, and among the tips of "
                                f"{robot.name}: {list(robot.tip_frames)}{detail}")
    return tips


def analyze_held_object(robot: RobotModel, positions: npt.ArrayLike, torque_limits: Array | None = None,
                        unavailable_reason: str = "", singular_sigma: float = 1e-3, tips: Sequence[str] | None = None,
                        object_position: npt.ArrayLike | None = None) -> HeldObjectAnalysis:
    """Velocity and force capability of an object held rigidly by `tips` (see the module docstring).

    Args:
        robot: the model.
        positions: (n,) joint positions [rad | m].
        torque_limits: (n,) [N m] from `torque_limits_of`, or None (force_rms / force_weighted are then None).
        unavailable_reason: the sentence `torque_limits_of` returned, kept in the result.
        singular_sigma: threshold [m/rad] on the object's linear velocity map for flags and force caps.
        tips: the tips holding the object (default: all of `robot.tip_frames`).
        object_position: (3,) the object origin in the base frame [m]; default: where `take_grasp` puts it, the
            centroid of the tip origins.

    Raises:
        InvalidInputError: unknown or repeated tips, positions or object_position of the wrong size or non-finite.
    """
    tips = _check_tips(robot, tips)
    positions = robot.check_positions(positions)
    poses = [robot.fk(positions, tip) for tip in tips]
    origin = (take_grasp(poses)[0].translation if object_position is None
              else check_vector("object_position", object_position, 3))
    J = np.vstack([robot.jacobian(positions, tip) for tip in tips])              # (6k, n)
    G = grasp_matrix(origin, [pose.translation for pose in poses])               # (6, 6k)
    internal = internal_wrench_basis(G)
    N, B = object_velocity_map(J, G, internal)
    velocity, angular = _eigen(B[:3] @ B[:3].T), _eigen(B[3:] @ B[3:].T)
    limited = None
    if np.isfinite(robot.limits.velocity).all():
        limited = _direct(*_eigen(_gram_v(J * robot.limits.velocity, G, internal)), "m/s", singular_sigma)
    rms = weighted = None
    if torque_limits is not None:
        tau = np.asarray(torque_limits, float)
        tau_rms = _rms(tau)
        rms = _inverse(*velocity, "N", tau_rms, singular_sigma)
        weighted = _inverse(*_eigen(_gram_v(J / tau, G, internal)), "N", 1.0, singular_sigma / tau_rms)
    linear_sigma, angular_sigma = _singular_values(np.stack([B[:3] @ B[:3].T, B[3:] @ B[3:].T]))
    return HeldObjectAnalysis(
        positions=positions, tips=tips, object_position=np.array(origin, float), jacobian=J, grasp=G,
        internal_wrenches=internal,
        closure_velocities=N, object_jacobian=B, velocity=_direct(*velocity, "m/s", singular_sigma),
        angular_velocity=_direct(*angular, "rad/s", singular_sigma), velocity_limited=limited,
        force_unweighted=_inverse(*velocity, "N/(N m)", 1.0, singular_sigma), force_rms=rms, force_weighted=weighted,
        manipulability=_measures(linear_sigma, singular_sigma),
        angular_manipulability=_measures(angular_sigma, singular_sigma), torque_limits=torque_limits,
        unavailable_reason="" if torque_limits is not None else unavailable_reason)


def _gram_v(J: Array, G: Array, internal: Array) -> Array:
    """(3, 3) B_v B_vᵀ of a column-scaled stacked Jacobian."""
    B_v = object_velocity_map(J, G, internal)[1][:3]
    return B_v @ B_v.T
