"""Statics of a serial arm: joint torques from a tool wrench (tau = J^T F) and the least-squares wrench of a torque.

Frame conventions (one for the whole module):
- F = [f; m] (6,) [N; N m] is the wrench the tool exerts on its environment, force f and moment m taken about
  the tool origin (the robot's tip frame), components along the base axes. This is the dual of the Jacobian
  `RobotModel.jacobian(q)` (Pinocchio LOCAL_WORLD_ALIGNED: tool-origin velocity and angular velocity in base
  axes), so tau . dq = F . (J dq) (virtual work) and tau = J^T F [N m | N] are the joint torques that hold it
  statically (gravity apart). A wrench measured in the tool frame (a wrist sensor at the tool origin) has tool
  axes: `wrench_tool_to_base` rotates both parts by base_R_tool; the point stays the tool origin.
- Pinocchio's rnea with external forces takes the wrench the environment applies on the robot, i.e. -F.

The inverse problem tau -> F is least squares through the SVD of J^T (n, 6): F = (J^T)^+ tau. With rank 6 and
n > 6 (a redundant arm) F is unique but only the part of tau in range(J^T) is produced; the rest (`residual`,
in the null space of J: internal-motion torques) no tool wrench can balance. With rank < 6 (a singular arm or
fewer than six joints) the wrenches in null(J^T) produce no torque at all, and F is the one of minimum norm.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.validation import check_vector

RCOND = 1e-10       # [-] singular values below this fraction of the largest count as zero


@dataclass(frozen=True)
class WrenchSolution:
    """Least-squares (minimum-norm) tool wrench for given joint torques."""

    wrench: np.ndarray           # (6,) [N; N m] F at the tool origin, base axes
    rank: int                    # rank of J^T
    residual: np.ndarray         # (n,) [N m | N] tau - J^T F: torque no tool wrench produces
    null_wrenches: np.ndarray    # (6, 6 - rank) orthonormal basis of null(J^T): wrenches held at zero torque
    singular_values: np.ndarray  # (min(n, 6),) of J, descending

    @property
    def exact(self) -> bool:
        """True when J^T F reproduces tau (to rounding)."""
        return bool(np.linalg.norm(self.residual) <= 1e-9 * max(1.0, float(np.abs(self.wrench).max(initial=0))))


def _check_jacobian(J: npt.ArrayLike) -> np.ndarray:
    J = np.asarray(J, float)
    if J.ndim != 2 or J.shape[0] != 6:
        raise InvalidInputError(f"Jacobian must be (6, n), got shape {J.shape}")
    if not np.isfinite(J).all():
        raise InvalidInputError("Jacobian has non-finite entries")
    return J


def torques_from_wrench(J: npt.ArrayLike, wrench: npt.ArrayLike) -> np.ndarray:
    """tau = J^T F (n,) [N m | N] for J (6, n) and F (6,) at the tool origin, base axes."""
    J = _check_jacobian(J)
    return J.T @ check_vector("wrench", wrench, 6)                               # (n,)


def wrench_from_torques(J: npt.ArrayLike, torques: npt.ArrayLike, rcond: float = RCOND) -> WrenchSolution:
    """Least-squares, minimum-norm F with J^T F ~ tau, with the rank and the null space reported."""
    J = _check_jacobian(J)
    tau = check_vector("torques", torques, J.shape[1])
    U, s, Vt = np.linalg.svd(J.T, full_matrices=True)                            # J^T = U S V^T, (n, 6)
    rank = int(np.sum(s > rcond * s.max())) if s.size and s.max() > 0 else 0
    coeffs = (U[:, :rank].T @ tau) / s[:rank]                                    # (rank,)
    wrench = Vt[:rank].T @ coeffs                                                # (6,)
    return WrenchSolution(wrench, rank, tau - J.T @ wrench, Vt[rank:].T.copy(), s)


def wrench_tool_to_base(base_R_tool: npt.ArrayLike, wrench_tool: npt.ArrayLike) -> np.ndarray:
    """A wrench at the tool origin in tool axes -> the same wrench in base axes (same point)."""
    R = np.asarray(base_R_tool, float)
    F = check_vector("wrench", wrench_tool, 6)
    return np.concatenate([R @ F[:3], R @ F[3:]])


def joint_torques(robot: RobotModel, positions: npt.ArrayLike, wrench: npt.ArrayLike,
                  axes: str = "base") -> np.ndarray:
    """tau = J^T F (n,) for the tool wrench F at the tool origin, in `axes` "base" or "tool"."""
    if axes not in ("base", "tool"):
        raise InvalidInputError(f"wrench axes '{axes}' must be 'base' or 'tool'")
    if axes == "tool":
        wrench = wrench_tool_to_base(robot.fk(positions).rotation, wrench)
    return torques_from_wrench(robot.jacobian(positions), wrench)


def tool_wrench(robot: RobotModel, positions: npt.ArrayLike, torques: npt.ArrayLike,
                rcond: float = RCOND) -> WrenchSolution:
    """Least-squares tool wrench (base axes, tool origin) for joint torques at `positions`."""
    return wrench_from_torques(robot.jacobian(positions), torques, rcond)
