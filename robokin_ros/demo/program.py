"""The demo's motion programs: the pick-and-place of examples/programs, first with exact stops everywhere, then with
zones, through the ExecuteCartesianPath action; prints both cycle times and checks every exact stop on the arm."""
from __future__ import annotations

import time

import numpy as np

from robokin_ros.core.robot import RobotModel
from robokin_ros.demo.driver import spin_for, spin_until
from robokin_ros.demo.path import ACTION, SERVER_SLICE_S, SERVER_TIMEOUT_S, execute_goal
from robokin_ros.demo.script import Recording

VERSIONS = ("fine", "zoned")
STOP_TOLERANCE = 1e-3      # [m] the measured tool passes this close to every exact-stop target
DRAIN_S = 0.3              # [s] joint states still in flight when the result arrives are taken before the check


def _ros_nanoseconds(node) -> int:
    return node.get_clock().now().nanoseconds


def run_program_goals(executor, driver, robot: RobotModel, recording: Recording) -> int:
    """Run both versions of the pick-and-place program; 0 when both succeed and the arm meets every exact stop."""
    from rclpy.action import ActionClient

    from robokin_interfaces.action import ExecuteCartesianPath
    from robokin_ros.core.program.program_file import load_program_file, program_from_mapping
    from robokin_ros.share_files import example_program
    from robokin_ros.ros.conversions import duration_seconds
    from robokin_ros.ros.path_conversions import motion_move_msgs

    client = ActionClient(driver, ExecuteCartesianPath, ACTION)
    if not spin_until(executor, client.server_is_ready, SERVER_TIMEOUT_S, SERVER_SLICE_S):
        print(f"  path_ik_node's action server did not appear within {SERVER_TIMEOUT_S:.0f} s")
        return 1
    cycles, failed = {}, 0
    for version in VERSIONS:
        start = robot.fk(recording.positions[-1])
        program = program_from_mapping(load_program_file(example_program(f"pick_place_{version}.yaml")), start,
                                       robot.n, robot.fk)
        goal = ExecuteCartesianPath.Goal(program=motion_move_msgs(program, robot))
        t_start, stamp_start = time.monotonic(), _ros_nanoseconds(driver)
        result = execute_goal(executor, client, goal)
        t_end, stamp_end = time.monotonic(), _ros_nanoseconds(driver)
        spin_for(executor, DRAIN_S)
        if result is None or result.error_code != 0:
            print(f"  {version}: " + ("no result" if result is None else f"code {result.error_code}: {result.message}"))
            failed += 1
            continue
        points = result.trajectory.points
        cycles[version] = duration_seconds(points[-1].time_from_start)
        measured = np.array([robot.fk(q).translation
                             for q in recording.between_stamps(stamp_start, stamp_end).positions])
        stops = [m.pose.translation for m in program.moves if m.fine and m.pose is not None]
        misses = [float(np.linalg.norm(measured - p, axis=1).min()) for p in stops] if len(measured) else [np.inf]
        slowest = max(result.move_reports, key=lambda r: r.duration)
        print(f"  {version}: {len(program)} moves, cycle time {cycles[version]:.2f} s (executed in "
              f"{t_end - t_start:.2f} s, planning included); exact stops met within {max(misses) * 1e3:.2f} mm; "
              f"longest move {slowest.name} {slowest.duration:.2f} s, limited by {slowest.limited_by or '-'}"
              + (f"; peak jerk {result.peak_jerk_share * 100:.1f} % of the limit"
                 if np.isfinite(result.peak_jerk_share) else ""))
        failed += max(misses) > STOP_TOLERANCE
    if len(cycles) == len(VERSIONS):
        fine, zoned = cycles["fine"], cycles["zoned"]
        print(f"  zones instead of exact stops: cycle time {zoned:.2f} s vs {fine:.2f} s "
              f"({(zoned - fine) / fine * 100:+.1f} %)")
    return 1 if failed else 0
