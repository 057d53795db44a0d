"""Capability of every tip of a several-tip robot (two arms on one table, a torso with two arms).

Each tip is analysed as the arm that moves it: its Jacobian keeps only the columns of the joints it depends on
(`RobotModel.tip_joint_indices`), so the other arm's joints, which cannot move it, take no part in the unit
joint-velocity or joint-torque norm, and the torque box of its force polytope has 2^m corners, not 2^n. A joint
shared by both tips (a torso) is in both tips' columns, with its one limit. The acceleration ellipsoid uses the
whole tree's inertia M(q) (the other arm's mass loads a shared torso) with torques on the tip's own joints only:
J_v M⁻¹ restricted to those columns. For two arms on a fixed table M is block diagonal, so every ellipsoid equals
the analysis of that arm alone.

A single-tip robot keeps `analyze` (its result is the one it always was).
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robokin_ros.core.capability.analysis import CapabilityAnalysis, analysis_of_jacobian, analyze
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.robot import RobotModel


def analyze_tip(robot: RobotModel, positions: npt.ArrayLike, tip: str, torque_limits: np.ndarray | None = None,
                unavailable_reason: str = "", singular_sigma: float = 1e-3) -> CapabilityAnalysis:
    """Every ellipsoid and measure of one tip, over the joints that move it (see the module docstring).

    Args:
        robot: the model; `tip` must be one of `robot.tip_frames`.
        positions: (n,) joint positions of the whole robot [rad | m].
        tip: the tip frame.
        torque_limits: (n,) [N m] for the whole robot (from `torque_limits_of`), or None.
        unavailable_reason, singular_sigma: as `analyze`.

    Returns:
        The analysis; its `jacobian` (6, m) and `torque_limits` (m,) cover the tip's joints `joint_indices`.

    Raises:
        InvalidInputError: an unknown tip, positions of the wrong size or with NaN/inf.
    """
    if tip not in robot.tip_frames:
        raise InvalidInputError(f"unknown tip '{tip}'; the tips of {robot.name} are {list(robot.tip_frames)}")
    index = robot.tip_frames.index(tip)
    positions = robot.check_positions(positions)
    joints = robot.tip_joint_indices[index]                                        # (m,)
    q = robot.to_pinocchio_q(positions)
    frame_id = robot.tip_frame_ids[index]
    J = robot.frame_jacobian_fast(q, frame_id)                                     # (6, n); places the frame
    tool_position = robot.world_T_base.actInv(robot.data.oMf[frame_id]).translation
    M = pin.crba(robot.model, robot.data, q)
    M = np.triu(M) + np.triu(M, 1).T                # crba fills the upper triangle only
    inverse_inertia = np.linalg.solve(M, J[:3].T).T[:, joints]                     # (3, m)
    tau = None if torque_limits is None else np.asarray(torque_limits, float)[joints]
    return analysis_of_jacobian(positions, J[:, joints], tool_position.copy(), inverse_inertia, tau,
                                unavailable_reason, singular_sigma, tip, joints)


def analyze_tips(robot: RobotModel, positions: npt.ArrayLike, torque_limits: np.ndarray | None = None,
                 unavailable_reason: str = "", singular_sigma: float = 1e-3) -> dict[str, CapabilityAnalysis]:
    """{tip: analysis} for every tip in `robot.tip_frames` order; a single-tip robot gets `analyze`'s result."""
    if len(robot.tip_frames) == 1:
        return {robot.tip_frame: analyze(robot, positions, torque_limits, unavailable_reason, singular_sigma)}
    return {tip: analyze_tip(robot, positions, tip, torque_limits, unavailable_reason, singular_sigma)
            for tip in robot.tip_frames}
