"""The demo's path run: a blended rectangle through the ExecuteCartesianPath action, checked against the plan."""
from __future__ import annotations

import time

import numpy as np
import pinocchio as pin

from robokin_ros.core.robot import RobotModel
from robokin_ros.demo.driver import spin_for
from robokin_ros.demo.script import Recording

RECTANGLE_OFFSETS = [(0.1, 0.0, 0.0), (0.1, 0.15, 0.0), (-0.1, 0.15, 0.0), (-0.1, -0.15, 0.0),
                     (0.1, -0.15, 0.0), (0.1, 0.0, 0.0), (0.0, 0.0, 0.0)]   # [m] from the start, base axes


def run_path_goal(executor, driver, robot: RobotModel, recording: Recording, blend_radius: float = 0.03) -> int:
    """Send a closed 0.2 m x 0.3 m rectangle with blended corners to path_ik_node and report how it went."""
    from geometry_msgs.msg import PoseStamped
    from rclpy.action import ActionClient

    from robokin_interfaces.action import ExecuteCartesianPath

    client = ActionClient(driver, ExecuteCartesianPath, "/path_ik_node/execute_cartesian_path")
    end = time.monotonic() + 30.0
    while time.monotonic() < end and not client.server_is_ready():
        executor.spin_once(timeout_sec=0.1)
    if not client.server_is_ready():
        print("  path_ik_node's action server did not appear within 30 s")
        return 1
    start_pose = robot.fk(recording.positions[-1])
    goal = ExecuteCartesianPath.Goal(blend_radius=blend_radius)
    for offset in RECTANGLE_OFFSETS:
        waypoint = PoseStamped()
        waypoint.header.frame_id = robot.base_frame
        p = start_pose.translation + np.array(offset)
        waypoint.pose.position.x, waypoint.pose.position.y, waypoint.pose.position.z = p
        qx, qy, qz, qw = pin.Quaternion(start_pose.rotation).coeffs()
        waypoint.pose.orientation.x, waypoint.pose.orientation.y = qx, qy
        waypoint.pose.orientation.z, waypoint.pose.orientation.w = qz, qw
        goal.waypoints.append(waypoint)
    print(f"\nCartesian path: a closed 0.2 m x 0.3 m rectangle, {blend_radius * 1000:.0f} mm corner blends, "
          "through /path_ik_node/execute_cartesian_path")
    result, t_start = None, time.monotonic()
    for _attempt in range(10):     # a freshly started node may not have seen /joint_states yet
        t_start = time.monotonic()
        result = _execute(executor, client, goal)
        if result is None or result.error_code != ExecuteCartesianPath.Result.NO_JOINT_STATE:
            break
        spin_for(executor, 1.0)
    if result is None:
        print("  the goal was rejected or got no result within 120 s")
        return 1
    t_end = time.monotonic()
    planned = [robot.fk(np.array(p.positions)).translation for p in result.trajectory.points]
    t, q, _ = recording.arrays(t_start, t_end)
    measured = np.array([robot.fk(qi).translation for qi in q])
    deviation = _distance_to_polyline(measured, np.array(planned)) if len(planned) > 1 and len(q) else None
    duration = (result.trajectory.points[-1].time_from_start.sec + 1e-9 * result.trajectory.points[-1]
                .time_from_start.nanosec) if result.trajectory.points else 0.0
    print(f"  result: code {result.error_code}, fraction {result.fraction:.3f}: {result.message}")
    print(f"  trajectory: {len(result.trajectory.points)} points, {duration:.2f} s; executed in "
          f"{t_end - t_start:.2f} s (planning included)")
    if deviation is not None:
        print(f"  measured tool path vs planned tool path: max {deviation.max() * 1000:.3f} mm, "
              f"median {np.median(deviation) * 1000:.3f} mm")
    return 0 if result.error_code == 0 else 1


def _execute(executor, client, goal):
    """Send one goal and wait for its result (None when rejected or after 120 s)."""
    sent = client.send_goal_async(goal)
    while not sent.done():
        executor.spin_once(timeout_sec=0.05)
    handle = sent.result()
    if not handle.accepted:
        return None
    result_future = handle.get_result_async()
    end = time.monotonic() + 120.0
    while not result_future.done() and time.monotonic() < end:
        executor.spin_once(timeout_sec=0.05)
    return result_future.result().result if result_future.done() else None


def _distance_to_polyline(points: np.ndarray, polyline: np.ndarray) -> np.ndarray:
    """Distance of each point (k, 3) to the polyline (m, 3) [m]."""
    a, b = polyline[:-1], polyline[1:]                                # (m-1, 3)
    ab = b - a
    length_sq = np.maximum((ab * ab).sum(axis=1), 1e-18)
    best = np.full(len(points), np.inf)
    for i, p in enumerate(points):
        s = np.clip(((p - a) * ab).sum(axis=1) / length_sq, 0.0, 1.0)
        best[i] = np.sqrt((((a + s[:, None] * ab) - p) ** 2).sum(axis=1).min())
    return best
