"""Kinematic calibration of a serial arm from tracker measurements of the tip (positions, or full poses).

`calibrate` starts from zero offsets, finds the identifiable subspace of the error model at the measured
configurations (`identification`), and solves the nonlinear least-squares problem in that subspace with
scipy.optimize.least_squares: Levenberg-Marquardt by default, or a trust-region method with a robust loss
("soft_l1", "huber") that keeps a few gross tracker outliers from bending the fit. Unidentifiable directions stay
at zero, so the result is the minimum-norm offset set that explains the data.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import pinocchio as pin
from scipy.optimize import least_squares

from robokin_ros.core.classroom.identification import (Identifiability, analyze_identifiability,
                                                       identification_jacobian, pinocchio_configurations, tip_poses)
from robokin_ros.core.classroom.urdf_offsets import (ErrorModel, JointOriginErrorModel, corrected_robot,
                                                     write_corrected_urdf)
from robokin_ros.core.errors import InvalidInputError, ModelError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.spatial import quaternion_problem

LOSSES = ("linear", "soft_l1", "huber")


class ErrorStats(NamedTuple):
    """Tip errors over a data set; orientation entries are nan when only positions were measured."""

    position_rms: float      # [m] RMS of the per-pose position error norms
    position_max: float      # [m]
    orientation_rms: float   # [rad] RMS of the per-pose rotation angles
    orientation_max: float   # [rad]


@dataclass(frozen=True)
class CalibrationResult:
    """What `calibrate` found; `robot` is the corrected RobotModel, `urdf` its URDF text (None if unknown)."""

    parameters: np.ndarray                 # (P,) identified offsets [m | rad], see `parameter_names`
    parameter_names: tuple[str, ...]
    offsets: dict[str, np.ndarray]         # joint name (or "tool") -> [dx, dy, dz, droll, dpitch, dyaw]
    before: ErrorStats
    after: ErrorStats
    identifiability: Identifiability
    unidentifiable: tuple[str, ...]        # readable parameter combinations the data cannot see
    robot: RobotModel
    urdf: str | None
    success: bool
    message: str
    evaluations: int


class Measurements(NamedTuple):
    """Checked measurements: positions (N, 3) [m] and rotations (N, 3, 3), or None for position-only data."""

    positions: np.ndarray
    rotations: np.ndarray | None


def parse_measurements(measured: npt.ArrayLike, count: int) -> Measurements:
    """(N, 3) positions, or (N, 7) positions + unit quaternions [qx, qy, qz, qw], checked."""
    m = np.asarray(measured, dtype=float)
    if m.ndim != 2 or m.shape[1] not in (3, 7):
        raise InvalidInputError(f"measured must have shape (N, 3) positions or (N, 7) positions + quaternion "
                                f"[qx, qy, qz, qw], got {m.shape}")
    if len(m) != count:
        raise InvalidInputError(f"{len(m)} measurements for {count} configurations: one per configuration needed")
    bad = np.flatnonzero(~np.isfinite(m).all(axis=1))
    if bad.size:
        raise InvalidInputError(f"measured has non-finite values in rows {bad.tolist()} (0-based)")
    if m.shape[1] == 3:
        return Measurements(m, None)
    norms = np.linalg.norm(m[:, 3:], axis=1)
    off = np.array([i for i, q in enumerate(m[:, 3:]) if quaternion_problem(q) is not None], dtype=int)
    if off.size:
        raise InvalidInputError(f"quaternions in rows {off.tolist()} (0-based) are not unit length "
                                f"(norms {norms[off]})")
    rotations = np.array([pin.Quaternion(q / np.linalg.norm(q)).toRotationMatrix() for q in m[:, 3:]])
    return Measurements(m[:, :3], rotations)


def error_stats(positions: np.ndarray, rotations: np.ndarray, data: Measurements) -> ErrorStats:
    """Position / orientation error statistics of model tip poses against measurements."""
    d = np.linalg.norm(positions - data.positions, axis=1)
    if data.rotations is None:
        return ErrorStats(float(np.sqrt(np.mean(d ** 2))), float(d.max()), float("nan"), float("nan"))
    angles = np.array([np.linalg.norm(pin.log3(a @ b.T)) for a, b in zip(rotations, data.rotations)])
    return ErrorStats(float(np.sqrt(np.mean(d ** 2))), float(d.max()),
                      float(np.sqrt(np.mean(angles ** 2))), float(angles.max()))


def evaluate(robot: RobotModel, configurations: npt.ArrayLike, measured: npt.ArrayLike) -> ErrorStats:
    """Tip errors of `robot` (e.g. a corrected one) on a data set, e.g. fresh validation poses."""
    error_model = JointOriginErrorModel(robot)
    q_pin = pinocchio_configurations(robot, configurations)
    data = parse_measurements(measured, len(q_pin))
    return error_stats(*tip_poses(error_model, np.zeros(error_model.size), q_pin), data)


def _residuals(error_model: ErrorModel, x: np.ndarray, q_pin: np.ndarray, data: Measurements,
               weight: float) -> np.ndarray:
    positions, rotations = tip_poses(error_model, x, q_pin)
    r = positions - data.positions                                            # (N, 3) [m]
    if data.rotations is not None:
        rot = np.array([pin.log3(a @ b.T) for a, b in zip(rotations, data.rotations)])
        r = np.hstack([r, weight * rot])                                      # (N, 6)
    return r.ravel()


def _residual_jacobian(error_model: ErrorModel, x: np.ndarray, configurations: np.ndarray, data: Measurements,
                       weight: float, method: str) -> np.ndarray:
    pose = data.rotations is not None
    J = identification_jacobian(error_model, x, configurations, orientation=pose, method=method)
    if not pose:
        return J
    J = J.reshape(len(configurations), 6, -1)
    _, rotations = tip_poses(error_model, x, pinocchio_configurations(error_model.robot, configurations))
    for k, (R, R_meas) in enumerate(zip(rotations, data.rotations)):
        E = R @ R_meas.T
        # log3(exp(w) E) moves by Jlog3(E) E^T w: exact, not only at zero rotation residual.
        J[k, 3:] = weight * (pin.Jlog3(E) @ E.T @ J[k, 3:])
    return J.reshape(-1, J.shape[2])


def _check_options(loss: str, method: str | None, f_scale: float, weight: float) -> str:
    if loss not in LOSSES:
        raise InvalidInputError(f"unknown loss '{loss}'; use one of {list(LOSSES)}")
    method = method or ("lm" if loss == "linear" else "trf")
    if method not in ("lm", "trf", "dogbox"):
        raise InvalidInputError(f"unknown method '{method}'; use 'lm', 'trf' or 'dogbox'")
    if method == "lm" and loss != "linear":
        raise InvalidInputError(f"method 'lm' supports only the linear loss, not '{loss}'; use method='trf'")
    if not (np.isfinite(f_scale) and f_scale > 0 and np.isfinite(weight) and weight > 0):
        raise InvalidInputError(f"f_scale [m] and orientation_weight [m/rad] must be > 0, got {f_scale}, {weight}")
    return method


def calibrate(robot: RobotModel, configurations: npt.ArrayLike, measured: npt.ArrayLike, *,
              error_model: ErrorModel | None = None, tool_dofs: int = 0, loss: str = "linear",
              method: str | None = None, f_scale: float = 1e-4, orientation_weight: float = 1.0,
              threshold: float = 1e-6, jacobian: str = "analytic") -> CalibrationResult:
    """Identify the error-model parameters that best explain tracker `measured` tip positions (N, 3) [m] or poses
    (N, 7) [m, quaternion xyzw] at joint `configurations` (N, n) [rad | m].

    `error_model` defaults to `JointOriginErrorModel(robot, tool_dofs)`. `loss`: "linear" (LM), "soft_l1" or
    "huber" (trf); `f_scale` [m] is where the robust loss turns linear. `orientation_weight` [m/rad] converts
    rotation residuals into metres. `threshold`: relative singular value below which a direction is unidentifiable.
    """
    method = _check_options(loss, method, f_scale, orientation_weight)
    error_model = error_model or JointOriginErrorModel(robot, tool_dofs)
    if error_model.robot is not robot:
        raise InvalidInputError("error_model was built on a different RobotModel than the one being calibrated")
    qs = np.asarray(configurations, dtype=float)
    q_pin = pinocchio_configurations(robot, qs)
    data = parse_measurements(measured, len(q_pin))
    rows, size = len(q_pin) * (3 if data.rotations is None else 6), len(error_model.parameter_names)
    if rows < size:
        raise InvalidInputError(f"{len(q_pin)} poses give {rows} equations for {size} parameters: measure at least "
                                f"{-(-size // (rows // len(q_pin)))} poses (several times more for a good fit)")
    if jacobian == "analytic" and not isinstance(error_model, JointOriginErrorModel):
        jacobian = "finite_difference"
    x0 = np.zeros(size)
    J0 = _residual_jacobian(error_model, x0, qs, data, orientation_weight, jacobian)
    ident = analyze_identifiability(J0, error_model.parameter_names, threshold)
    to_params = ident.basis / ident.column_norms[:, None]                    # (P, r): dx/dz

    def fun(z):
        return _residuals(error_model, ident.parameters(z), q_pin, data, orientation_weight)

    def jac(z):
        return _residual_jacobian(error_model, ident.parameters(z), qs, data, orientation_weight, jacobian) @ to_params

    fit = least_squares(fun, np.zeros(ident.rank), jac=jac, method=method, loss=loss, f_scale=f_scale,
                        xtol=1e-12, ftol=1e-12, gtol=1e-12, max_nfev=200 if method != "lm" else None)
    x = ident.parameters(fit.x)
    urdf = _urdf(error_model, x)
    corrected = corrected_robot(error_model, x)
    corrected.urdf_xml = urdf
    return CalibrationResult(
        parameters=x, parameter_names=tuple(error_model.parameter_names), offsets=_offsets(error_model, x),
        before=error_stats(*tip_poses(error_model, x0, q_pin), data),
        after=error_stats(*tip_poses(error_model, x, q_pin), data), identifiability=ident,
        unidentifiable=ident.combinations, robot=corrected, urdf=urdf,
        success=bool(fit.success), message=str(fit.message), evaluations=int(fit.nfev))


def _offsets(error_model: ErrorModel, x: np.ndarray) -> dict[str, np.ndarray]:
    if isinstance(error_model, JointOriginErrorModel):
        return error_model.offsets(x)
    return {name: np.array([value]) for name, value in zip(error_model.parameter_names, x)}


def _urdf(error_model: ErrorModel, x: np.ndarray) -> str | None:
    xml = error_model.robot.urdf_xml
    if xml is None or not isinstance(error_model, JointOriginErrorModel):
        return None
    try:
        return write_corrected_urdf(xml, error_model, x)
    except ModelError:
        return None          # e.g. a tool offset on a frame the URDF does not have: the model is still corrected


class SyntheticData(NamedTuple):
    """A simulated tracker data set from a "true" robot with known joint-origin offsets."""

    configurations: np.ndarray     # (N, n) [rad | m]
    measured: np.ndarray           # (N, 3) or (N, 7) [m, quaternion xyzw], noisy
    true_parameters: np.ndarray    # (6 n_joints,) offsets of the true robot [m | rad]
    exact: np.ndarray              # (N, 3) noise-free true tip positions [m]


def synthetic_tracker_data(robot: RobotModel, count: int, noise: float = 5e-5, seed: int = 1,
                           true_parameters: npt.ArrayLike | None = None, offset_mm_deg: tuple = (0.5, 0.5),
                           orientation_noise: float | None = None, margin: float = 0.1) -> SyntheticData:
    """`count` random configurations (`margin` [rad] inside the limits) measured on the true robot with Gaussian
    noise `noise` [m] per axis. Offsets are uniform in +/-offset_mm_deg ([mm], [deg]) unless `true_parameters` is
    given. With `orientation_noise` [rad] set, quaternions are measured too (noise as a random small rotation)."""
    if int(count) < 1 or not (np.isfinite(noise) and noise >= 0):
        raise InvalidInputError(f"count must be >= 1 and noise >= 0 [m], got {count}, {noise}")
    rng = np.random.default_rng(seed)
    model = JointOriginErrorModel(robot)
    scale = np.tile(np.r_[np.full(3, offset_mm_deg[0] * 1e-3), np.full(3, np.deg2rad(offset_mm_deg[1]))],
                    len(model.joint_ids))
    drawn = rng.uniform(-1.0, 1.0, model.size) * scale
    true = drawn if true_parameters is None else np.asarray(true_parameters, dtype=float)
    qs = np.array([robot.random_positions(rng, margin) for _ in range(int(count))])
    positions, rotations = tip_poses(model, true, pinocchio_configurations(robot, qs))
    measured = positions + rng.normal(0.0, noise, positions.shape)
    if orientation_noise is not None:
        noisy = [pin.exp3(rng.normal(0.0, orientation_noise, 3)) @ R for R in rotations]
        quats = np.array([pin.Quaternion(R).coeffs() for R in noisy])          # (N, 4) x, y, z, w
        measured = np.hstack([measured, quats])
    return SyntheticData(qs, measured, true, positions)
