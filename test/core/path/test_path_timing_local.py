"""Joint accelerations bounded inside toppra's grid intervals (issue 12 §1): the bench rectangles keep their peaks
without the uniform stretch, so tool-speed-limited moves cruise at the programmed speed. Checked by finite
differences of positions sampled at 2 kHz and by Pinocchio FK, independent of the trajectory's own derivatives."""
import sys
from pathlib import Path

import numpy as np
import pytest

from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.downsample import path_parameter
from robokin_ros.core.path.timing import ToolSpeedLimit, time_optimal
from robokin_ros.core.program.moves import waypoint_program
from robokin_ros.core.program.planner import MotionPlanner
from robokin_ros.core.trajectory.arrays import sample_times

RATE = 2000.0           # [Hz] finite-difference sampling
TOOL_SPEED = 0.25       # [m/s]


def bench_rectangle(robot):
    """The rectangles issue 12 quotes (1.13 m, 30 mm blends) with the bench's acceleration limits."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
    from bench_path import ACC, suite
    waypoints, blend = next((w, b) for title, w, b in suite(robot) if title.startswith("rectangle"))
    return ACC[robot.name], waypoints, blend


def _fd_acceleration_ratio(trajectory, a_max):
    """Peak |qdd| / a_max by central second differences of positions at RATE (non-uniform last gap)."""
    t = sample_times(trajectory.duration, RATE)
    q = trajectory(t)
    qd = np.diff(q, axis=0) / np.diff(t)[:, None]
    qdd = np.diff(qd, axis=0) / (0.5 * (t[2:] - t[:-2]))[:, None]
    return float((np.abs(qdd) / a_max).max())


def _tool_speeds(robot, trajectory_arrays):
    """Tool speed [m/s] between consecutive samples and the midpoint positions, by Pinocchio FK."""
    p = np.array([robot.fk(q).translation for q in trajectory_arrays.positions])
    speed = np.linalg.norm(np.diff(p, axis=0), axis=1) / np.diff(trajectory_arrays.times)
    return speed, 0.5 * (p[1:] + p[:-1])


@pytest.mark.parametrize("arm", ["panda", "ur5"])
def test_rectangle_peaks_hold_without_the_uniform_stretch(arm, request):
    robot = request.getfixturevalue(arm)
    acc, waypoints, blend = bench_rectangle(robot)
    planner = MotionPlanner(robot, PathConfig(max_joint_acceleration=acc))
    plan = planner.plan(waypoint_program(waypoints, blend), robot.home())
    assert plan.success, plan.path_ik.message
    Q, keep = plan.path_ik.positions, plan.downsample.indices
    args = (path_parameter(Q)[keep], Q[keep], robot.joint_names, robot.limits.velocity, np.array(acc))
    bounded = time_optimal(*args)
    stretched = time_optimal(*args, bound_within_intervals=False)      # the overshoot left to the stretch
    a_max = np.array(acc)
    assert _fd_acceleration_ratio(bounded.trajectory, a_max) <= 1 + 1e-3
    # the control: toppra alone overshoots here (1.02x Panda, 1.10x UR5), which the stretch removed
    unstretched = stretched.trajectory.stretched(1.0 / stretched.trajectory.stretch)
    assert _fd_acceleration_ratio(unstretched, a_max) > 1.01
    assert _fd_acceleration_ratio(stretched.trajectory, a_max) <= 1 + 1e-3
    # the bound replaces the stretch instead of adding to it: no stretch, and no longer than the stretched plan
    assert bounded.trajectory.stretch == 1.0 and bounded.report.retimings == 0
    assert stretched.trajectory.stretch > 1.01
    assert bounded.report.duration <= stretched.report.duration


@pytest.mark.parametrize("arm", ["panda", "ur5"])
def test_line_cruises_at_the_tool_speed(arm, request):
    """0.3 m line: the joints allow more than 0.25 m/s, so the line runs at the limit wherever it is farther than
    50 mm from its ends (the braking distance the rectangle test allows too)."""
    robot = request.getfixturevalue(arm)
    acc, _, _ = bench_rectangle(robot)
    cfg = PathConfig(max_joint_acceleration=acc, max_cartesian_speed=TOOL_SPEED, trajectory_rate_hz=RATE)
    T0 = robot.fk(robot.home())
    lateral = np.array([0, 1.0, 0]) if arm == "panda" else np.array([1.0, 0, 0])     # bench_path's "line 0.3 m"
    goal = T0.copy()
    goal.translation = T0.translation + 0.3 * lateral
    plan = MotionPlanner(robot, cfg).plan(waypoint_program([goal], 0.0), robot.home())
    assert plan.success, plan.path_ik.message
    speed, midpoints = _tool_speeds(robot, plan.trajectory)
    along = (midpoints - T0.translation) @ lateral                                     # [m] from the start
    cruise = (along > 0.05) & (along < 0.25)
    assert cruise.sum() > 0.15 / TOOL_SPEED * RATE                 # the 0.2 m stretch, at least 0.75 of it
    assert np.abs(speed[cruise] / TOOL_SPEED - 1.0).max() <= 0.01
    assert speed.max() / TOOL_SPEED <= 1 + 1e-3


@pytest.mark.parametrize("arm", ["panda", "ur5"])
def test_rectangle_sides_cruise_at_the_tool_speed(arm, request):
    """Straight parts = samples farther than 50 mm from every corner (30 mm blend + 20 mm to regain the speed,
    which the joints allow on both arms). The uniform stretch slowed them to 0.952 (UR5) / 0.992 (Panda)."""
    robot = request.getfixturevalue(arm)
    acc, waypoints, blend = bench_rectangle(robot)
    cfg = PathConfig(max_joint_acceleration=acc, max_cartesian_speed=TOOL_SPEED, trajectory_rate_hz=RATE)
    plan = MotionPlanner(robot, cfg).plan(waypoint_program(waypoints, blend), robot.home())
    assert plan.success, plan.path_ik.message
    speed, midpoints = _tool_speeds(robot, plan.trajectory)
    corners = np.array([robot.fk(robot.home()).translation] + [w.translation for w in waypoints])      # (C, 3)
    to_corner = np.linalg.norm(midpoints[:, None] - corners[None], axis=2).min(axis=1)
    straight = to_corner > blend + 0.02
    # the sides are 1.1 m long, 0.6 m of it farther than 50 mm from the corners
    assert (speed[straight] / RATE).sum() > 0.4
    assert np.abs(speed[straight] / TOOL_SPEED - 1.0).max() <= 0.01
    assert speed.max() / TOOL_SPEED <= 1 + 1e-3


def test_tool_limit_timing_without_the_bound_still_verifies(panda):
    """The last-resort stretch stays: without the interval bound the peaks still end within 1 + 1e-3."""
    acc, waypoints, blend = bench_rectangle(panda)
    planner = MotionPlanner(panda, PathConfig(max_joint_acceleration=acc))
    plan = planner.plan(waypoint_program(waypoints, blend), panda.home())
    Q, keep = plan.path_ik.positions, plan.downsample.indices
    tool = ToolSpeedLimit(planner.solver().fk.arrays(), TOOL_SPEED)
    timed = time_optimal(path_parameter(Q)[keep], Q[keep], panda.joint_names, panda.limits.velocity, np.array(acc),
                         tool=tool, bound_within_intervals=False)
    assert timed.report.retimings >= 1
    assert _fd_acceleration_ratio(timed.trajectory, np.array(acc)) <= 1 + 1e-3
    assert timed.report.peak_tool_speed_ratio <= 1 + 1e-3
