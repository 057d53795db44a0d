"""The demo's path run: a blended rectangle through the ExecuteCartesianPath action, checked against the plan."""
from __future__ import annotations

import time

import numpy as np
import pinocchio as pin

from robokin_ros.core.robot import RobotModel
from robokin_ros.demo.driver import spin_for, spin_until
from robokin_ros.demo.script import Recording

RECTANGLE_OFFSETS = [(0.1, 0.0, 0.0), (0.1, 0.15, 0.0), (-0.1, 0.15, 0.0), (-0.1, -0.15, 0.0),
                     (0.1, -0.15, 0.0), (0.1, 0.0, 0.0), (0.0, 0.0, 0.0)]   # [m] from the start, base axes
ACTION = "/path_ik_node/execute_cartesian_path"
SERVER_TIMEOUT_S = 30.0       # [s] for path_ik_node's action server to appear
SERVER_SLICE_S = 0.1          # [s] longest single spin while waiting for it
RESULT_TIMEOUT_S = 120.0      # [s] for a goal's result (planning included)
NO_STATE_RETRIES = 10         # a freshly started node may not have seen /joint_states yet:
RETRY_PAUSE_S = 1.0           # [s] so a goal it refuses for that is sent again after this pause


def run_path_goal(executor, driver, robot: RobotModel, recording: Recording, blend_radius: float = 0.03) -> int:
    """Send a closed 0.2 m x 0.3 m rectangle with blended corners to path_ik_node and report how it went."""
    from rclpy.action import ActionClient

    from robokin_interfaces.action import ExecuteCartesianPath

    client = ActionClient(driver, ExecuteCartesianPath, ACTION)
    if not spin_until(executor, client.server_is_ready, SERVER_TIMEOUT_S, SERVER_SLICE_S):
        print(f"  path_ik_node's action server did not appear within {SERVER_TIMEOUT_S:.0f} s")
        return 1
    goal = _rectangle_goal(robot, recording.positions[-1], blend_radius)
    print(f"\nCartesian path: a closed 0.2 m x 0.3 m rectangle, {blend_radius * 1000:.0f} mm corner blends, "
          f"through {ACTION}")
    result, t_start = None, time.monotonic()
    for _attempt in range(NO_STATE_RETRIES):
        t_start = time.monotonic()
        result = execute_goal(executor, client, goal)
        if result is None or result.error_code != ExecuteCartesianPath.Result.NO_JOINT_STATE:
            break
        spin_for(executor, RETRY_PAUSE_S)
    if result is None:
        print(f"  the goal was rejected or got no result within {RESULT_TIMEOUT_S:.0f} s")
        return 1
    _report(robot, recording, result, t_start, time.monotonic())
    return 0 if result.error_code == 0 else 1


def _rectangle_goal(robot: RobotModel, start_positions: np.ndarray, blend_radius: float):
    """The RECTANGLE_OFFSETS around the tool's pose at `start_positions`, orientation kept."""
    from geometry_msgs.msg import PoseStamped

    from robokin_interfaces.action import ExecuteCartesianPath
    from robokin_ros.ros.path_conversions import pose_msg

    start_pose = robot.fk(start_positions)
    goal = ExecuteCartesianPath.Goal(blend_radius=blend_radius)
    for offset in RECTANGLE_OFFSETS:
        waypoint = PoseStamped(pose=pose_msg(pin.SE3(start_pose.rotation, start_pose.translation + np.array(offset))))
        waypoint.header.frame_id = robot.base_frame
        goal.waypoints.append(waypoint)
    return goal


def _report(robot: RobotModel, recording: Recording, result, t_start: float, t_end: float) -> None:
    """Print the result and how far the measured tool path strayed from the planned one."""
    from robokin_ros.ros.conversions import duration_seconds

    points = result.trajectory.points
    planned = [robot.fk(np.array(p.positions)).translation for p in points]
    q = recording.arrays(t_start, t_end).positions
    measured = np.array([robot.fk(qi).translation for qi in q])
    deviation = distance_to_polyline(measured, np.array(planned)) if len(planned) > 1 and len(q) else None
    duration = duration_seconds(points[-1].time_from_start) if points else 0.0
    print(f"  result: code {result.error_code}, fraction {result.fraction:.3f}: {result.message}")
    print(f"  trajectory: {len(points)} points, {duration:.2f} s; executed in "
          f"{t_end - t_start:.2f} s (planning included)")
    if deviation is not None:
        print(f"  measured tool path vs planned tool path: max {deviation.max() * 1000:.3f} mm, "
              f"median {np.median(deviation) * 1000:.3f} mm")


def execute_goal(executor, client, goal):
    """Send one goal and wait for its result (None when rejected or after RESULT_TIMEOUT_S)."""
    sent = client.send_goal_async(goal)
    spin_until(executor, sent.done, float("inf"))
    handle = sent.result()
    if not handle.accepted:
        return None
    result_future = handle.get_result_async()
    spin_until(executor, result_future.done, RESULT_TIMEOUT_S)
    return result_future.result().result if result_future.done() else None


def distance_to_polyline(points: np.ndarray, polyline: np.ndarray) -> np.ndarray:
    """Distance of each point (k, 3) to the polyline (m, 3) [m]."""
    a, b = polyline[:-1], polyline[1:]                                # (m-1, 3)
    ab = b - a
    length_sq = np.maximum((ab * ab).sum(axis=1), 1e-18)
    best = np.full(len(points), np.inf)
    for i, p in enumerate(points):
        s = np.clip(((p - a) * ab).sum(axis=1) / length_sq, 0.0, 1.0)
        best[i] = np.sqrt((((a + s[:, None] * ab) - p) ** 2).sum(axis=1).min())
    return best
