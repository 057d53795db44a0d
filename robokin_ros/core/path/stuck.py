"""Why incremental path IK stopped following a path it could not keep within tolerance: the arm at the edge of
its reach or near a singularity, told with numbers, rather than only "the tool left the path tolerance".

The path IK steps with damped least squares; where the Jacobian loses rank (a stretched elbow, aligned wrist
axes, the target beyond the reach sphere) the damped step falls short and the deviation check fires first, so the
kernel's own singularity bound (certified only down to `singularity_sigma_threshold`) rarely names it. Here the
smallest singular value of the constrained rows of the Jacobian at the last solved configuration is compared
with its value at the start: a line 1.5 m outward from the Panda's home stops with 0.021 there against 0.221 at
the start.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from robokin_ros.core.path.deviation import AxisSelection
from robokin_ros.core.path.reach import ArmReach
from robokin_ros.core.robot import RobotModel

# the smallest singular value fell below this share of its start value: the arm lost a direction of motion
SINGULAR_SHARE = 0.2


def smallest_singular_value(robot: RobotModel, q: np.ndarray, frame_id: int, axes: AxisSelection) -> float:
    """sigma_min [m/rad] of the Jacobian's constrained rows (base or tool axes, as the path constrains them)."""
    reference = pin.ReferenceFrame.LOCAL if axes.tool_axes else pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    J = robot.frame_jacobian_fast(robot.to_pinocchio_q(q), frame_id, reference)[axes.rows]    # (m, n)
    return float(np.linalg.svd(J, compute_uv=False)[-1])


def why_stuck(robot: RobotModel, frame_id: int, reach: ArmReach, q_start: np.ndarray, q_last: np.ndarray,
              target: np.ndarray, axes: AxisSelection) -> str:
    """The reason a path stopped at the sample whose target position is `target` (3,) [m], the arm at `q_last`:
    beyond the reach or near a singularity; "" when neither explains it."""
    tool = np.asarray(robot.frame_pose(q_last, frame_id).translation)
    where = (f"the tool is {float(reach.distance(tool)[0]):.3f} m from the arm's shoulder, its reach "
             f"{reach.reach:.3f} m")
    target_distance = float(reach.distance(target)[0])
    if target_distance > reach.reach:
        return (f"the arm cannot reach further: the path runs {target_distance:.3f} m from the shoulder here, beyond "
                f"the arm's reach of {reach.reach:.3f} m")
    at_start = smallest_singular_value(robot, q_start, frame_id, axes)
    last = smallest_singular_value(robot, q_last, frame_id, axes)
    if last < SINGULAR_SHARE * at_start:
        return (f"the arm cannot follow further: it is near a singularity (stretched out, or axes aligned), the "
                f"smallest singular value of its Jacobian fell to {last:.3g} from {at_start:.3g} at the start; "
                f"{where}")
    return ""
