"""MoveJ to a pose on arms with a closed-form IK: the solution nearest the current state, out of all of them.

The planner takes a pose solver (`MotionPlanner(robot, config, pose_solver)`); without one it takes this one on
arms that have it, else the iterative `core/ik/pose_ik.solve_pose`, which follows the seed's branch from the current
state. For a UR arm the closed form lists every branch in ~15 us and the nearest one in joint distance is the
canonical choice: it does not depend on the path the iteration takes, and a target the iteration cannot reach from
a poor seed still has its branches.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import ModelError
from robokin_ros.core.ik.pose_ik import PoseIkResult, solve_pose
from robokin_ros.core.ik.ur import UrGeometry
from robokin_ros.core.robot import RobotModel

PoseSolver = Callable[[RobotModel, pin.SE3, np.ndarray, int | None, float], PoseIkResult]


def nearest_branch_solver(robot: RobotModel) -> PoseSolver | None:
    """A pose solver choosing the closed-form solution nearest the seed, for UR-type arms; None for other arms.

    For a frame other than the robot's tip (the closed form's), it falls back to `solve_pose`."""
    try:
        geometry = UrGeometry.from_robot(robot)
    except ModelError:
        return None

    def solve(model: RobotModel, target: pin.SE3, seed: np.ndarray, frame_id: int | None = None,
              margin: float = 0.0) -> PoseIkResult:
        if model is not robot or (frame_id is not None and frame_id != robot.tip_frame_id):
            return solve_pose(model, target, seed, frame_id, margin)
        lower, upper = robot.limits.lower + margin, robot.limits.upper - margin
        for solution in geometry.solve(target, seed, True).solutions:          # nearest first
            if np.all(solution.positions >= lower) and np.all(solution.positions <= upper):
                return PoseIkResult(solution.positions, solution.fk_error, solution.fk_error, 0, True)
        return solve_pose(model, target, seed, frame_id, margin)               # says how far it got, and why
    return solve
