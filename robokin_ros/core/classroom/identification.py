"""Identification Jacobian and identifiability of a calibration error model.

The identification Jacobian stacks, per configuration, d(tip position [m]) / d(parameters) (3 rows) and, when
orientation is measured, d(tip rotation)/d(parameters) (3 more rows, the rotation as a small base-frame rotation
vector [rad] applied on the left). Two ways to get it, tested against each other:

* "analytic" (joint-origin model only): a parameter twist `delta_i` of joint i acts in the frame F_i = (parent
  joint) * placement_i, the joint frame before its own motion; the tip point then moves by
  `R_F v + (R_F w) x (p_tip - p_F)` and turns by `R_F w`, with `[v; w] = Jexp6(delta_i) d(delta_i)` (exact at any
  offsets, not only at zero). Pinocchio supplies the frame placements from one forward-kinematics pass.
* "finite_difference": central differences through `ErrorModel.apply`, for any error model.

Identifiability: SVD of the column-scaled Jacobian (each column divided by its norm, so metres and radians weigh
alike). Directions with singular values below `threshold * s_max` change no measurement: they are reported as
readable parameter combinations and the solver works in the span of the others (the minimum-norm solution).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robokin_ros.core.classroom.urdf_offsets import ErrorModel, JointOriginErrorModel
from robokin_ros.core.errors import InvalidInputError


def pinocchio_configurations(robot, configurations: npt.ArrayLike) -> np.ndarray:
    """(N, n) joint positions -> (N, nq) Pinocchio configurations, with size and NaN checks."""
    qs = np.asarray(configurations, dtype=float)
    if qs.ndim != 2 or qs.shape[1] != robot.n:
        raise InvalidInputError(f"configurations must have shape (N, {robot.n}) for the {robot.n} joints "
                                f"{list(robot.joint_names)}, got {qs.shape}")
    bad = np.flatnonzero(~np.isfinite(qs).all(axis=1))
    if bad.size:
        raise InvalidInputError(f"configurations has non-finite values in rows {bad.tolist()} (0-based)")
    return np.array([robot.to_pinocchio_q(q) for q in qs]).reshape(len(qs), -1)


def tip_poses(error_model: ErrorModel, parameters: npt.ArrayLike, q_pin: np.ndarray) -> tuple[np.ndarray, ...]:
    """Tip positions (N, 3) [m] and rotations (N, 3, 3) in the base frame of the model with errors applied."""
    model = error_model.apply(parameters)
    data, robot = model.createData(), error_model.robot
    positions, rotations = np.empty((len(q_pin), 3)), np.empty((len(q_pin), 3, 3))
    for k, q in enumerate(q_pin):
        pin.forwardKinematics(model, data, q)
        base_T_tip = robot.world_T_base.actInv(pin.updateFramePlacement(model, data, robot.tip_frame_id))
        positions[k], rotations[k] = base_T_tip.translation, base_T_tip.rotation
    return positions, rotations


def _analytic_rows(error_model: JointOriginErrorModel, model: pin.Model, data: pin.Data, joints: np.ndarray,
                   tool: np.ndarray) -> np.ndarray:
    """(6, P) d[p; theta] / d(parameters) in world axes at the current `data` (forward kinematics done)."""
    tip = data.oMf[error_model.robot.tip_frame_id]
    frames = [data.oMi[model.parents[j]] * model.jointPlacements[j] for j in error_model.joint_ids]
    deltas = list(joints)
    if error_model.tool_dofs:
        frames.append(tip)
        deltas.append(tool)
    blocks = []
    for frame, delta in zip(frames, deltas):
        R = frame.rotation
        lever = pin.skew(tip.translation - frame.translation)
        local = np.block([[R, -lever @ R], [np.zeros((3, 3)), R]])      # (6, 6) twist in F -> [dp; dtheta]
        blocks.append(local @ pin.Jexp6(delta))
    rows = np.hstack(blocks)                                           # (6, 6 * (n_joints + tool))
    return rows[:, :error_model.size]          # a 3-dof tool keeps its translation columns only


def _analytic(error_model: JointOriginErrorModel, parameters: np.ndarray, q_pin: np.ndarray) -> np.ndarray:
    model = error_model.apply(parameters)
    data = model.createData()
    joints, tool = error_model.split(parameters)
    R_base_T = error_model.robot.world_T_base.rotation.T
    out = np.empty((len(q_pin), 6, error_model.size))
    for k, q in enumerate(q_pin):
        pin.forwardKinematics(model, data, q)
        pin.updateFramePlacements(model, data)
        rows = _analytic_rows(error_model, model, data, joints, tool)
        out[k, :3], out[k, 3:] = R_base_T @ rows[:3], R_base_T @ rows[3:]   # world axes -> base axes
    return out


def _finite_difference(error_model: ErrorModel, parameters: np.ndarray, q_pin: np.ndarray,
                       step: float) -> np.ndarray:
    out = np.empty((len(q_pin), 6, len(parameters)))
    for i in range(len(parameters)):
        up, down = parameters.copy(), parameters.copy()
        up[i] += step
        down[i] -= step
        p_up, R_up = tip_poses(error_model, up, q_pin)
        p_down, R_down = tip_poses(error_model, down, q_pin)
        out[:, :3, i] = (p_up - p_down) / (2 * step)
        out[:, 3:, i] = [pin.log3(a @ b.T) / (2 * step) for a, b in zip(R_up, R_down)]
    return out


def identification_jacobian(error_model: ErrorModel, parameters: npt.ArrayLike, configurations: npt.ArrayLike,
                            orientation: bool = False, method: str = "analytic", step: float = 1e-6) -> np.ndarray:
    """(N * m, P) Jacobian of the measured tip positions (m = 3) or poses (m = 6, [p; theta]) per configuration.

    `method`: "analytic" (JointOriginErrorModel only) or "finite_difference" (central, `step` [m | rad]).
    """
    p = np.asarray(parameters, dtype=float).copy()
    if p.shape != (len(error_model.parameter_names),):
        raise InvalidInputError(f"parameters must have {len(error_model.parameter_names)} entries, got {p.shape}")
    q_pin = pinocchio_configurations(error_model.robot, configurations)
    if method == "analytic":
        if not isinstance(error_model, JointOriginErrorModel):
            raise InvalidInputError(f"the analytic identification Jacobian needs a JointOriginErrorModel, got "
                                    f"{type(error_model).__name__}; use method='finite_difference'")
        blocks = _analytic(error_model, p, q_pin)
    elif method == "finite_difference":
        blocks = _finite_difference(error_model, p, q_pin, step)
    else:
        raise InvalidInputError(f"unknown method '{method}'; use 'analytic' or 'finite_difference'")
    return blocks[:, :6 if orientation else 3].reshape(-1, p.size)


@dataclass(frozen=True)
class Identifiability:
    """SVD of the column-scaled identification Jacobian and what it says about the parameters."""

    singular_values: np.ndarray   # (P,) of the scaled Jacobian, descending (zeros padded when rows < P)
    threshold: float              # relative threshold: s_i < threshold * s_max is unidentifiable
    rank: int                     # number of identifiable directions r
    column_norms: np.ndarray      # (P,) scale s.t. y = column_norms * x are the scaled parameters
    basis: np.ndarray             # (P, r) orthonormal identifiable directions in scaled parameters
    null_basis: np.ndarray        # (P, P - r) unidentifiable directions in parameter units (RREF rows)
    combinations: tuple[str, ...]  # one readable line per unidentifiable direction

    def coordinates(self, parameters: npt.ArrayLike) -> np.ndarray:
        """(r,) coordinates of the parameters' projection onto the identifiable subspace (scaled metric)."""
        return self.basis.T @ (self.column_norms * np.asarray(parameters, dtype=float))

    def parameters(self, coordinates: npt.ArrayLike) -> np.ndarray:
        """(P,) parameters with the given identifiable coordinates and no unidentifiable part."""
        return (self.basis @ np.asarray(coordinates, dtype=float)) / self.column_norms

    def coordinate_std(self, noise: float) -> np.ndarray:
        """(r,) standard deviation of each identified coordinate for i.i.d. measurement noise `noise` [m]."""
        return noise / self.singular_values[:self.rank]


def _rref(rows: np.ndarray, tol: float) -> np.ndarray:
    """Reduced row echelon form (partial pivoting): each unidentifiable direction gets a leading parameter."""
    A, pivot_row = rows.copy(), 0
    for col in range(A.shape[1]):
        if pivot_row == A.shape[0]:
            break
        best = pivot_row + int(np.argmax(np.abs(A[pivot_row:, col])))
        if abs(A[best, col]) < tol:
            continue
        A[[pivot_row, best]] = A[[best, pivot_row]]
        A[pivot_row] /= A[pivot_row, col]
        others = np.arange(A.shape[0]) != pivot_row
        A[others] -= np.outer(A[others, col], A[pivot_row])
        pivot_row += 1
    A[np.abs(A) < tol] = 0.0
    return A


def describe_combination(row: np.ndarray, names: tuple[str, ...]) -> str:
    """'a.dz - b.dz + 0.425 c.dpitch': moving the parameters together in these proportions (coefficients in
    [m] or [rad] per unit step) changes no measurement, so the data cannot tell them apart."""
    terms = [f"{'-' if c < 0 else '+'} {'' if abs(abs(c) - 1) < 1e-9 else f'{abs(c):.4g} '}{names[i]}"
             for i, c in enumerate(row) if c != 0.0]
    text = " ".join(terms)
    return text[2:] if text.startswith("+ ") else text


def analyze_identifiability(jacobian: np.ndarray, names: tuple[str, ...], threshold: float = 1e-6) -> Identifiability:
    """SVD-based identifiability of the (N * m, P) identification Jacobian; `threshold` is relative to s_max."""
    J = np.asarray(jacobian, dtype=float)
    if J.ndim != 2 or J.shape[1] != len(names):
        raise InvalidInputError(f"jacobian must have shape (rows, {len(names)}), got {J.shape}")
    if not 0 < threshold < 1:
        raise InvalidInputError(f"threshold must be in (0, 1), got {threshold!r}")
    norms = np.linalg.norm(J, axis=0)
    # A parameter that moves nothing (e.g. the tool rotation under position-only data) keeps scale 1.
    norms = np.where(norms > 1e-12 * max(norms.max(), 1e-300), norms, 1.0)
    _, s, Vt = np.linalg.svd(J / norms, full_matrices=True)
    s = np.concatenate([s, np.zeros(len(names) - s.size)])                 # (P,)
    rank = int(np.sum(s > threshold * s[0]))
    null_scaled = Vt[rank:].T                                                # (P, P - r), scaled parameters
    null_rows = _rref((null_scaled / norms[:, None]).T, tol=1e-9) if rank < len(names) else np.zeros((0, len(names)))
    combos = tuple(describe_combination(row, names) for row in null_rows)
    return Identifiability(s, threshold, rank, norms, Vt[:rank].T.copy(), null_rows.T.copy(), combos)
