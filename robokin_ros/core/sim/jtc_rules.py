"""How sim_robot reads a trajectory a joint_trajectory_controller (JTC) accepted; the acceptance rules themselves are
shared with path_ik_node and live in core/controller_rules.py (re-exported here for the sim)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robokin_ros.core.controller_rules import (  # noqa: F401 - the sim's names for the shared rules
    FLOAT_EPSILON,
    JtcSwitches,
    PointFacts,
    Rejection,
    TrajectoryFacts,
    field_matrix,
    jtc_rejection,
    robokin_rejection,
)
from robokin_ros.core.sim.trajectory_follower import TrajectoryPoints


def chain_points(trajectory: TrajectoryFacts, controller_joints: Sequence[str],
                 hold_positions: np.ndarray) -> TrajectoryPoints:
    """An accepted trajectory in controller joint order, as JTC reads it.

    Joints the trajectory leaves out (a partial goal) hold `hold_positions` (n,) with zero velocity, as JTC's
    `fill_partial_goal` holds them at their position command. Velocities are used when every point has them,
    accelerations when every point has both (JTC's quintic).

    Raises:
        ValueError: a point without positions (only a JTC with `allow_integration_in_goal_trajectories` takes
            those, and the sim does not integrate).
    """
    n, k, m = len(controller_joints), len(trajectory.points), len(trajectory.joint_names)
    index = [list(controller_joints).index(name) for name in trajectory.joint_names]
    given = field_matrix(trajectory.points, "positions", m)                          # (k, m)
    if given is None:
        i = next(i for i, point in enumerate(trajectory.points) if len(point.positions) != m)
        raise ValueError(f"trajectory point {i} has no positions; the sim follows positions only")
    positions = np.tile(np.asarray(hold_positions, dtype=float), (k, 1))       # (k, n)
    positions[:, index] = given
    velocities = None
    given_velocities = field_matrix(trajectory.points, "velocities", m)              # (k, m)
    if given_velocities is not None:
        velocities = np.zeros((k, n))
        velocities[:, index] = given_velocities
    accelerations = None
    given_accelerations = field_matrix(trajectory.points, "accelerations", m)        # (k, m)
    if velocities is not None and given_accelerations is not None:
        accelerations = np.zeros((k, n))
        accelerations[:, index] = given_accelerations
    times = np.array([point.time_from_start for point in trajectory.points], dtype=float)
    return TrajectoryPoints(times, positions, velocities, accelerations)
