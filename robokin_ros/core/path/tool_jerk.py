"""The tool's jerk on the played trajectory: what `max_cartesian_jerk` / `max_cartesian_angular_jerk` bound.

Measured as the issue measures joint jerk, on what the controller plays: the quintic through the points sampled at
1 kHz (`CONTROLLER_PERIOD`), the tool frame's origin by forward kinematics, its third finite differences (linear
jerk [m/s^3]); the angular velocity from the relative rotation between neighbouring samples, its second finite
differences (angular jerk [rad/s^3]). Differences over 1 ms average the jerk over 3 ms at most: the figure a
controller at 1 kHz sees.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.spatial.transform import Rotation

from robokin_ros.core.path.chain import ChainArrays, chain_poses
from robokin_ros.core.path.deviation import controller_positions
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays
from robokin_ros.core.trajectory.jerk_check import CONTROLLER_PERIOD


class ToolJerk(NamedTuple):
    """Peak tool jerk on the played trajectory."""

    linear: float              # [m/s^3] of the tool frame's origin
    angular: float             # [rad/s^3]

    def ratio(self, linear_limit: float, angular_limit: float) -> float:
        """The larger peak over its limit (a limit of 0 = none: 0)."""
        return max(self.linear / linear_limit if linear_limit > 0 else 0.0,
                   self.angular / angular_limit if angular_limit > 0 else 0.0)


def played_tool_jerk(points: JointTrajectoryArrays, chain: ChainArrays,
                     period: float = CONTROLLER_PERIOD) -> ToolJerk:
    """The tool's peak linear and angular jerk on the controller's quintic through `points`, sampled every
    `period` [s] (module docstring); zeros for fewer than 5 samples."""
    times = np.arange(0.0, points.duration, period)
    if len(times) < 5:
        return ToolJerk(0.0, 0.0)
    R, p = chain_poses(chain, controller_positions(points, times))
    linear = np.diff(p, 3, axis=0) / period ** 3                                          # (K - 3, 3)
    # angular velocity in the base frame between neighbouring samples: R_k log(R_k^T R_k+1) / period
    relative = Rotation.from_matrix(np.einsum("kji,kjl->kil", R[:-1], R[1:])).as_rotvec()  # (K - 1, 3) body
    omega = np.einsum("kij,kj->ki", R[:-1], relative) / period
    angular = np.diff(omega, 2, axis=0) / period ** 2
    return ToolJerk(float(np.linalg.norm(linear, axis=1).max()), float(np.linalg.norm(angular, axis=1).max()))
