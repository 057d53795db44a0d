"""Capability analysis at one configuration: velocity, acceleration and force ellipsoids, manipulability.

Everything is for the tool frame's origin in base-frame axes (the `local_world_aligned` Jacobian),
translational part J_v (3, n) unless a name says angular.

Definitions (each ellipsoid is the image of a unit ball; semi-axes come from the eigen-decomposition of a
3x3 Gram matrix, so there are always three axes even for arms with fewer than three joints):

- Velocity: {v = J_v dq : ||dq|| <= 1}. Gram J_v J_vᵀ, semi-axes σ_i [m/s per rad/s].
- Acceleration: {a = J_v M⁻¹ τ : ||τ|| <= 1} with M(q) the joint-space inertia matrix. Velocity-product
  and gravity terms (J̇ q̇, M⁻¹ (C q̇ + g)) are ignored: this is the acceleration a unit torque adds at rest.
  Raw semi-axes are [m/s² per N m]. For display the same shape is scaled so that its LARGEST semi-axis
  equals the velocity ellipsoid's largest semi-axis (`acceleration_normalized`, factor kept in
  `acceleration_normalization`); only its shape and orientation are comparable with the velocity one.
- Force, unweighted: {F : ||J_vᵀ F|| <= 1}, Gram matrix (J_v J_vᵀ)⁻¹, semi-axes 1/σ_i [N per N m]:
  shape only, unit joint-torque norm.
- Force, RMS-scaled: the unweighted ellipsoid times rms(τ_max) [N].
- Force, torque-weighted: {F : ||diag(1/τ_max) J_vᵀ F|| <= 1}, i.e. the columns of J_v divided by their
  joint's torque limit; semi-axes 1/σ_i(J_v diag(1/τ_max)) [N]. With equal limits τ it equals the
  RMS-scaled one. It lies inside the force polytope {F : |J_vᵀ F| <= τ_max} because ||x||_∞ <= ||x||_2;
  it touches the polytope only when J_vᵀ is square (3 joints): for a redundant arm the 3-D range of
  diag(1/τ_max) J_vᵀ contains no unit torque vector e_i, so the largest |τ_i|/τ_max,i on the
  ellipsoid is ||P e_i|| < 1 (P: projector onto that range). See `polytope.py`.

Singularities: a velocity axis becomes zero (flagged `degenerate`); a force axis 1/σ would be infinite and
is capped at `limit / singular_sigma` (limit = 1 for unweighted, rms(τ_max) otherwise), flagged `capped`.
Nothing is ever NaN.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.validation import check_vector

Array = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Ellipsoid:
    """Principal semi-axes and directions; point set {axes @ diag(semi_axes) @ u : ||u|| <= 1}."""

    semi_axes: Array        # (3,) descending, in `unit`
    axes: Array             # (3, 3) column i = direction of semi_axes[i], base axes, det = +1
    unit: str
    degenerate: npt.NDArray[np.bool_]   # (3,) axis ~ 0 (velocity-type ellipsoids at a singularity)
    capped: npt.NDArray[np.bool_]       # (3,) axis was infinite and is shown at the cap


@dataclass(frozen=True)
class Manipulability:
    """Scalar measures of a 3xn Jacobian block from its singular values σ_1 >= σ_2 >= σ_3 >= 0."""

    yoshikawa: float        # sqrt(det(J Jᵀ)) = σ_1 σ_2 σ_3
    condition: float        # σ_1 / σ_3; inf at a singularity (never NaN)
    sigma_min: float        # σ_3
    sigma_max: float        # σ_1
    isotropy: float         # σ_3 / σ_1 in [0, 1]; 1 = isotropic, 0 = singular
    singular: bool          # σ_3 < singular_sigma


@dataclass(frozen=True)
class CapabilityAnalysis:
    """All ellipsoids and measures at one configuration; force variants are None when limits are missing."""

    positions: Array                  # (n,) [rad | m]
    tool_position: Array              # (3,) tool origin in the base frame [m]
    jacobian: Array                   # (6, n) [linear; angular], tool origin, base axes (6, m): a tip's own joints
    velocity: Ellipsoid               # [m/s] for a unit joint-velocity norm
    angular_velocity: Ellipsoid       # [rad/s] for a unit joint-velocity norm
    acceleration: Ellipsoid           # [m/s^2] for a unit joint-torque norm
    acceleration_normalized: Ellipsoid  # same shape, largest axis = velocity's largest [m/s]
    acceleration_normalization: float   # factor raw -> normalized [s]
    force_unweighted: Ellipsoid       # [N] for a unit joint-torque norm
    force_rms: Ellipsoid | None       # [N]
    force_weighted: Ellipsoid | None  # [N]
    manipulability: Manipulability    # translational J_v
    angular_manipulability: Manipulability
    torque_limits: Array | None       # (n,) [N m | N] ((m,): a tip's own joints)
    unavailable_reason: str           # why force_rms / force_weighted are None ("" when available)
    tip: str = ""                     # the tip of a several-tip robot ("" : the one tip of a single-tip robot)
    joint_indices: Array | None = None  # (m,) indices into positions of the joints the Jacobian's columns are

    @property
    def singular(self) -> bool:
        """True when the translational Jacobian is singular (force axes capped)."""
        return self.manipulability.singular


class TorqueLimits(NamedTuple):
    """The joint torque limits the force measures use, or why there are none."""

    limits: Array | None    # (n,) [N m | N]; None when some joint has no limit
    reason: str             # "" when `limits` is set, else a sentence naming the joints without limits


def _eigen(grams: Array) -> tuple[Array, Array, Array]:
    """Singular values (ascending), eigenvectors and det(eigenvectors) < 0 of one 3x3 Gram matrix or a stack.

    A stack costs one eigh and one det call: numpy's per-call overhead is most of the price of a 3x3
    decomposition, and the stacked call runs the same LAPACK routine on each matrix (bit-identical results).
    """
    eigenvalues, vectors = np.linalg.eigh(grams)                      # (..., 3), (..., 3, 3)
    return np.sqrt(np.maximum(eigenvalues, 0.0)), vectors, np.linalg.det(vectors) < 0.0


def _direct(sigma: Array, vectors: Array, negative: bool, unit: str, floor: float) -> Ellipsoid:
    """Image of a unit ball under B, from `_eigen` of gram = B Bᵀ; eigh's ascending order is reversed.

    Reversing the columns swaps the first and last, which flips the determinant's sign, so the reversed basis
    is left-handed exactly when eigh's is right-handed. It is then made a rotation (RViz needs a quaternion).
    """
    semi, axes = sigma[::-1], vectors[:, ::-1].copy()
    if not negative:
        axes[:, 2] *= -1.0
    return Ellipsoid(semi, axes, unit, semi < floor, np.zeros(3, bool))


def _inverse(sigma: Array, vectors: Array, negative: bool, unit: str, limit: float, floor: float) -> Ellipsoid:
    """{x : ||Bᵀ x|| <= limit} from `_eigen` of gram = B Bᵀ: semi-axes limit/σ are descending in eigh's order."""
    semi = limit / np.maximum(sigma, floor) if floor > 0 else limit / sigma
    axes = vectors.copy()
    if negative:
        axes[:, 2] *= -1.0
    return Ellipsoid(semi, axes, unit, np.zeros(3, bool), sigma < floor)


def _rms(tau: Array) -> float:
    """Root mean square of a (n,) vector; the same sum and division as np.mean at a fraction of its cost."""
    return math.sqrt(np.add.reduce(tau * tau) / tau.size)


def _measures(sigma: list[float], singular_sigma: float) -> Manipulability:
    """Measures from the ascending singular values [σ_3, σ_2, σ_1] of a 3xn block."""
    s_min, s_mid, s_max = sigma
    condition = s_max / s_min if s_min > 0.0 else float("inf")
    isotropy = s_min / s_max if s_max > 0.0 else 0.0
    return Manipulability(s_max * s_mid * s_min, condition, s_min, s_max, isotropy, s_min < singular_sigma)


def _singular_values(grams: Array) -> list:
    """Ascending singular values of one Gram matrix (3,) or a stack (k, 3) as (nested) lists of floats.

    eigvalsh, not eigh's eigenvalues: LAPACK's values-only path rounds differently, and near a singularity
    σ_3 = sqrt(λ_3) magnifies that difference in the condition number.
    """
    return np.sqrt(np.maximum(np.linalg.eigvalsh(grams), 0.0)).tolist()


def velocity_ellipsoid(J: npt.ArrayLike, singular_sigma: float = 1e-3, unit: str = "m/s") -> Ellipsoid:
    """Velocity ellipsoid of a (3, n) Jacobian block for ||dq|| <= 1 [rad/s]."""
    J = np.asarray(J, float)
    return _direct(*_eigen(J @ J.T), unit, singular_sigma)


def acceleration_ellipsoid(J: npt.ArrayLike, M: npt.ArrayLike) -> Ellipsoid:
    """Acceleration ellipsoid {J M⁻¹ τ : ||τ|| <= 1 N m} at rest (no velocity-product terms) [m/s²]."""
    J, M = np.asarray(J, float), np.asarray(M, float)
    K = np.linalg.solve(M, J.T).T                                     # (3, n) = J M⁻¹ (M symmetric)
    return _direct(*_eigen(K @ K.T), "m/s^2", 0.0)


def force_ellipsoid(J: npt.ArrayLike, torque_limits: npt.ArrayLike | None = None, *, rms: bool = False,
                    singular_sigma: float = 1e-3) -> Ellipsoid:
    """Force ellipsoid of a (3, n) Jacobian block; see the module docstring for the three variants.

    Args:
        J: translational Jacobian block (3, n) [m/rad].
        torque_limits: (n,) [N m]; None gives the unweighted ellipsoid (unit torque norm).
        rms: with limits, True gives the RMS-scaled ellipsoid, False the torque-weighted one.
        singular_sigma: singular values below this are treated as singular; the matching force axes are
            capped at limit/singular_sigma and flagged (limit = 1 or rms(torque_limits)).

    Returns:
        The ellipsoid, semi-axes in [N] (unweighted: [N per N m]).
    """
    J = np.asarray(J, float)
    if torque_limits is None:
        return _inverse(*_eigen(J @ J.T), "N/(N m)", 1.0, singular_sigma)
    tau = np.asarray(torque_limits, float)
    tau_rms = _rms(tau)
    if rms:
        return _inverse(*_eigen(J @ J.T), "N", tau_rms, singular_sigma)
    Jw = J / tau                                                      # (3, n) columns / τ_max
    return _inverse(*_eigen(Jw @ Jw.T), "N", 1.0, singular_sigma / tau_rms)


def manipulability(J: npt.ArrayLike, singular_sigma: float = 1e-3) -> Manipulability:
    """Yoshikawa index, condition number, σ_min and isotropy of a (3, n) Jacobian block."""
    J = np.asarray(J, float)
    return _measures(_singular_values(J @ J.T), singular_sigma)


def force_cap(torque_limits: npt.ArrayLike, singular_sigma: float) -> float:
    """Display cap for infinite force extents: rms(torque_limits) / singular_sigma [N]."""
    return float(np.sqrt(np.mean(np.square(torque_limits)))) / singular_sigma


def torque_limits_of(robot: RobotModel, override: npt.ArrayLike | None = None) -> TorqueLimits:
    """The torque limits to use and, when there are none, the reason (never zeros).

    Args:
        robot: the model; its URDF effort limits are used unless `override` is given.
        override: (n,) positive limits [N m | N], or None / empty.

    Returns:
        TorqueLimits(limits, "") or TorqueLimits(None, a sentence naming the joints without limits).

    Raises:
        InvalidInputError: an override of the wrong size, non-finite or not positive.
    """
    if override is not None and len(override) > 0:
        tau = check_vector("torque_limits", override, robot.n)
        if (tau <= 0).any():
            raise InvalidInputError(f"torque_limits must be > 0, got {tau.tolist()} for {list(robot.joint_names)}")
        return TorqueLimits(tau, "")
    if robot.limits.missing_effort:
        return TorqueLimits(None, f"torque (effort) limits are missing in the URDF for joints "
                            f"{list(robot.limits.missing_effort)}: the RMS-scaled and torque-weighted force "
                            "ellipsoids and the force polytope are unavailable (set the torque_limits parameter)")
    return TorqueLimits(robot.limits.effort.copy(), "")


@functools.lru_cache(maxsize=8)
def _strict_lower(n: int) -> tuple[Array, Array]:
    """Row and column indices below the diagonal of an (n, n) matrix."""
    return np.tril_indices(n, -1)


def _kinematics(robot: RobotModel, positions: Array) -> tuple[Array, Array, Array]:
    """Jacobian (6, n) of the tool [linear; angular] in base axes, tool position (3,) [m] and M(q) (n, n).

    The same Pinocchio calls as `RobotModel.jacobian`, `fk` and `inertia`, without checking and converting
    the positions three times or running forward kinematics again for the tool pose.
    """
    q = robot.to_pinocchio_q(positions)
    J = robot.frame_jacobian_fast(q, robot.tip_frame_id)             # (6, n); also places the tip frame
    tool_position = robot.world_T_base.actInv(robot.data.oMf[robot.tip_frame_id]).translation   # (3,)
    M = pin.crba(robot.model, robot.data, q)                          # (n, n), a copy
    lower = _strict_lower(robot.n)
    M[lower] = M.T[lower]                   # crba fills the upper triangle only; the lower one is stale
    return J, tool_position, M


def analyze(robot: RobotModel, positions: npt.ArrayLike, torque_limits: Array | None = None,
            unavailable_reason: str = "", singular_sigma: float = 1e-3) -> CapabilityAnalysis:
    """Every ellipsoid and measure of the tool frame at `positions`.

    The four distinct Gram matrices (J_v, J_ω, J_v M⁻¹, J_v diag(1/τ_max)) are decomposed in one stacked
    call; the results equal those of the single-ellipsoid functions above.

    Args:
        robot: the model (its tip frame is the tool).
        positions: (n,) joint positions [rad | m].
        torque_limits: (n,) [N m] from `torque_limits_of`, or None (force_rms/force_weighted are then None).
        unavailable_reason: the sentence `torque_limits_of` returned, kept in the result.
        singular_sigma: singular-value threshold [m/rad] for flags and force caps.

    Raises:
        InvalidInputError: positions of the wrong size or with NaN/inf.
    """
    positions = robot.check_positions(positions)
    J, tool_position, M = _kinematics(robot, positions)
    return analysis_of_jacobian(positions, J, tool_position, np.linalg.solve(M, J[:3].T).T, torque_limits,
                                unavailable_reason, singular_sigma)


def analysis_of_jacobian(positions: Array, J: Array, tool_position: Array, Jv_inverse_inertia: Array,
                         torque_limits: Array | None, unavailable_reason: str, singular_sigma: float,
                         tip: str = "", joint_indices: Array | None = None) -> CapabilityAnalysis:
    """`analyze`'s result from the kinematics it needs (unchecked: the callers built them).

    Args:
        positions: (n,) the configuration, kept in the result.
        J: (6, m) the tool Jacobian over the m joints that count [linear; angular], base axes.
        tool_position: (3,) [m].
        Jv_inverse_inertia: (3, m) J_v M⁻¹ over the same joints (the acceleration a unit torque adds at rest).
        torque_limits: (m,) [N m] or None; unavailable_reason, singular_sigma: as `analyze`.
        tip, joint_indices: which tip and which joints (indices into `positions`) the result is for; "" and
            None for the whole chain of a single-tip robot.
    """
    Jv = J[:3]                                                        # (3, m)
    blocks = np.empty((3 if torque_limits is None else 4, 3, J.shape[1]))   # (k, 3, m)
    blocks[0], blocks[1] = Jv, J[3:]
    blocks[2] = Jv_inverse_inertia
    if torque_limits is not None:
        np.divide(Jv, torque_limits, out=blocks[3])                   # columns / τ_max
    grams = blocks @ blocks.transpose(0, 2, 1)                        # (k, 3, 3)
    v, w, a, *weighted_gram = zip(*_eigen(grams))                     # (σ, vectors, det < 0) per Gram matrix
    velocity, accel = _direct(*v, "m/s", singular_sigma), _direct(*a, "m/s^2", 0.0)
    a_max = accel.semi_axes[0]
    factor = velocity.semi_axes[0] / a_max if a_max > 0.0 else 1.0
    accel_norm = Ellipsoid(accel.semi_axes * factor, accel.axes, "m/s (normalized)", accel.degenerate,
                           accel.capped)
    weighted = rms = None
    if torque_limits is not None:
        tau_rms = _rms(np.asarray(torque_limits, float))
        rms = _inverse(*v, "N", tau_rms, singular_sigma)
        weighted = _inverse(*weighted_gram[0], "N", 1.0, singular_sigma / tau_rms)
    linear, angular = _singular_values(grams[:2])
    return CapabilityAnalysis(
        positions=positions, tool_position=tool_position, jacobian=J, velocity=velocity,
        angular_velocity=_direct(*w, "rad/s", singular_sigma), acceleration=accel,
        acceleration_normalized=accel_norm, acceleration_normalization=float(factor),
        force_unweighted=_inverse(*v, "N/(N m)", 1.0, singular_sigma), force_rms=rms,
        force_weighted=weighted, manipulability=_measures(linear, singular_sigma),
        angular_manipulability=_measures(angular, singular_sigma), torque_limits=torque_limits,
        unavailable_reason="" if torque_limits is not None else unavailable_reason, tip=tip,
        joint_indices=joint_indices)
