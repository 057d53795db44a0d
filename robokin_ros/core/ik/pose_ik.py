"""Pose IK from a seed: iterative bounded damped least squares, staying on the seed's branch.

Newton steps on the base-frame pose error (position difference, rotation vector of R_target R^T) with the same
bounded DLS as the servo, so joints never leave their limits and singular directions are damped. The step is
capped at MAX_STEP per joint, which keeps the iterate near the seed's elbow/wrist branch: a MoveJ to a pose
ends in the configuration an operator jogging there would reach, not a far solution of a closed form.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pinocchio as pin

from robokin_ros.core.dls import bounded_dls
from robokin_ros.core.robot import RobotModel

MAX_STEP = 0.2            # [rad | m] largest joint change per iteration
MAX_ITERATIONS = 200
BACKTRACKS = 12
POSITION_TOLERANCE = 1e-9     # [m]
ORIENTATION_TOLERANCE = 1e-9  # [rad]


class PoseIkResult(NamedTuple):
    """Solution (or the best iterate), its remaining error and whether it met the tolerances."""

    positions: np.ndarray        # (n,) [rad | m]
    position_error: float        # [m]
    orientation_error: float     # [rad]
    iterations: int
    success: bool


def _pose_error(robot: RobotModel, q: np.ndarray, frame_id: int, target: pin.SE3) -> np.ndarray:
    pose = robot.frame_pose(q, frame_id)
    return np.concatenate([target.translation - pose.translation, pin.log3(target.rotation @ pose.rotation.T)])


def solve_pose(robot: RobotModel, target: pin.SE3, seed: np.ndarray, frame_id: int | None = None,
               margin: float = 0.0) -> PoseIkResult:
    """Joint positions putting frame `frame_id` (default: the tip) at `target` (base frame), starting from `seed`.

    `margin` [rad | m] keeps the joints that far inside their limits. Never raises on an unreachable target:
    `success` is False and the best iterate is returned with its error.
    """
    frame_id = robot.tip_frame_id if frame_id is None else frame_id
    lower, upper = robot.limits.lower + margin, robot.limits.upper - margin
    q = np.clip(robot.check_positions(seed, "seed positions").copy(), lower, upper)
    zero, dq, fixed = np.zeros(robot.n), np.empty(robot.n), np.empty(robot.n, dtype=np.int8)
    error = _pose_error(robot, q, frame_id, target)
    for iteration in range(1, MAX_ITERATIONS + 1):
        if np.linalg.norm(error[:3]) <= POSITION_TOLERANCE and np.linalg.norm(error[3:]) <= ORIENTATION_TOLERANCE:
            return PoseIkResult(q, float(np.linalg.norm(error[:3])), float(np.linalg.norm(error[3:])),
                                iteration - 1, True)
        J = robot.frame_jacobian_fast(robot.to_pinocchio_q(q), frame_id)
        step_lo = np.maximum(lower - q, -MAX_STEP)
        step_hi = np.minimum(upper - q, MAX_STEP)
        bounded_dls(J, error, zero, np.minimum(step_lo, 0.0), np.maximum(step_hi, 0.0), 1e-3, 1e-3, dq, fixed)
        scale = min(1.0, MAX_STEP / max(float(np.abs(dq).max()), 1e-300))
        for _ in range(BACKTRACKS):                # far from the target a full step can overshoot: halve it
            q_new = np.clip(q + scale * dq, lower, upper)
            error_new = _pose_error(robot, q_new, frame_id, target)
            if np.linalg.norm(error_new) < np.linalg.norm(error) * (1.0 - 1e-12):
                break
            scale *= 0.5
        else:
            break                                  # no more progress: a limit or the workspace boundary
        q, error = q_new, error_new
    return PoseIkResult(q, float(np.linalg.norm(error[:3])), float(np.linalg.norm(error[3:])), iteration,
                        bool(np.linalg.norm(error[:3]) <= 1e-6 and np.linalg.norm(error[3:]) <= 1e-6))
