"""Execution monitor: done, timed out and progress decided from times and positions alone (no clock, no ROS)."""
import numpy as np
import pytest

from robokin_ros.core.trajectory.execution import ExecutionMonitor, ExecutionState, controller_outcome
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays
from robokin_ros.core.trajectory.execution import ExecutionCode


def trajectory(duration=2.0, end=(0.5, -0.2)):
    times = np.linspace(0.0, duration, 5) if duration > 0 else np.zeros(1)
    positions = np.outer(np.linspace(0.0, 1.0, len(times)), end)
    return JointTrajectoryArrays(("a", "b"), times, positions, np.zeros_like(positions), np.zeros_like(positions))


def test_done_only_past_the_duration_and_within_tolerance():
    monitor = ExecutionMonitor(trajectory(), goal_tolerance=0.01, timeout_margin=1.0, start_time=100.0)
    end = np.array([0.5, -0.2])
    early = monitor.update(101.0, end)                       # at the end already, but before the duration
    assert early.state == ExecutionState.RUNNING and early.progress == pytest.approx(0.5)
    assert monitor.update(102.0, end + [0.0, 0.02]).state == ExecutionState.RUNNING     # 20 mrad off
    done = monitor.update(102.0, end + [0.0, 0.009])
    assert done.state == ExecutionState.SUCCEEDED and done.progress == 1.0 and done.message == ""


def test_timeout_after_duration_plus_margin_names_the_error():
    monitor = ExecutionMonitor(trajectory(), goal_tolerance=0.01, timeout_margin=1.5, start_time=10.0)
    q = np.array([0.4, -0.2])
    assert monitor.update(13.5, q).state == ExecutionState.RUNNING               # exactly at the deadline
    status = monitor.update(13.51, q)
    assert status.state == ExecutionState.TIMED_OUT
    assert status.message == ("the arm did not reach the end within 1.5 s after the planned 2.00 s "
                              "(max joint error 0.1000 rad)")
    assert monitor.update(14.0, np.array([0.5, -0.2])).state == ExecutionState.SUCCEEDED   # done wins


def test_progress_is_clamped_and_a_zero_duration_is_safe():
    monitor = ExecutionMonitor(trajectory(), goal_tolerance=0.01, timeout_margin=1.0, start_time=0.0)
    assert [monitor.update(t, np.zeros(2)).progress for t in (0.0, 0.5, 2.5)] == [0.0, 0.25, 1.0]
    still = ExecutionMonitor(trajectory(duration=0.0, end=(0.0, 0.0)), 0.01, 1.0, 0.0)
    assert still.update(0.0, np.zeros(2)).state == ExecutionState.SUCCEEDED
    assert monitor.stopped_message(1.234, "canceled") == "canceled after 1.23 s"


@pytest.mark.parametrize("ended, code, text, expected", [
    ("aborted", -4, "Aborted due to path tolerance violation", ExecutionCode.PATH_TOLERANCE_VIOLATED),
    ("aborted", -5, "Aborted due to goal_time_tolerance exceeding by 0.600000 seconds",
     ExecutionCode.GOAL_TOLERANCE_VIOLATED),
    ("aborted", -1, "Current goal preempted by new incoming action.", ExecutionCode.EXECUTION_FAILED),
    ("canceled", 0, "", ExecutionCode.EXECUTION_FAILED),
    ("succeeded", -4, "odd", ExecutionCode.PATH_TOLERANCE_VIOLATED),      # a code wins over the status
])
def test_controller_results_map_to_codes_quoting_the_controller(ended, code, text, expected):
    outcome, message = controller_outcome(ended, code, text, "/jtc/follow_joint_trajectory")
    assert outcome == expected
    assert message == (f"{expected.sentence}: /jtc/follow_joint_trajectory {ended} the goal with error_code "
                       f"{code}: \"{text}\"; the controller holds the arm")


def test_controller_success_is_no_outcome():
    assert controller_outcome("succeeded", 0, "Goal successfully reached!", "a") == (None, "")


def test_monitor_measures_the_velocity_over_its_checks():
    monitor = ExecutionMonitor(trajectory(), goal_tolerance=0.01, timeout_margin=1.0, start_time=0.0)
    assert monitor.velocities is None
    monitor.update(0.10, np.array([0.0, 0.0]))
    monitor.update(0.105, np.array([9.0, 9.0]))              # closer than the window: ignored
    monitor.update(0.12, np.array([0.02, -0.01]))
    np.testing.assert_allclose(monitor.velocities, [1.0, -0.5])
    np.testing.assert_allclose(monitor.positions, [0.02, -0.01])
