"""Stopping a running path (issue 9, item 4): within the acceleration limits, continuous with the plan, at rest,
on the path. Evidence is independent of the stop's own arithmetic: sim_robot's cubic follower (how a controller
interpolates the points) sampled at 1 ms and differenced, forward kinematics against the straight line, and the
default joint_trajectory_controller rules."""
import numpy as np
import pinocchio as pin
import pytest

from robokin_ros import MotionPlanner, PathConfig, RobotModel, waypoint_program
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.trajectory.outgoing_check import spline_peaks
from robokin_ros.core.trajectory.stopping import (
    PlannedMotion,
    continued_stop,
    path_stop,
    plan_stop,
    planned_progress,
    velocity_stop,
)
from robokin_ros.core.trajectory.controller_rules import PointFacts, TrajectoryFacts, jtc_rejection
from robokin_ros.core.sim.trajectory_follower import TrajectoryFollower, TrajectoryPoints

A_MAX = np.array([15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0])     # config/panda_path_ik.yaml [rad/s^2]
LINE = np.array([0.25, 0.0, 0.0])                                 # [m]


@pytest.fixture(scope="module")
def line_plan():
    """A 25 cm line at full speed and half the acceleration limits on the Panda, as test/ros/test_path_stop.py
    runs it: (robot, trajectory, start and end of the line)."""
    robot = RobotModel.from_name("panda")
    planner = MotionPlanner(robot, PathConfig(max_joint_acceleration=tuple(A_MAX), velocity_scaling=1.0,
                                              acceleration_scaling=0.5))
    q0 = robot.home()
    start = robot.fk(q0)
    plan = planner.plan(waypoint_program([pin.SE3(start.rotation, start.translation + LINE)], 0.0), q0)
    assert plan.path_ik.success
    return robot, plan.trajectory, start.translation, start.translation + LINE


@pytest.fixture(scope="module")
def full_scaling_plan(line_plan):
    """The same line at full speed and full acceleration: the plan itself runs at the limits."""
    robot, _, start, end = line_plan
    planner = MotionPlanner(robot, PathConfig(max_joint_acceleration=tuple(A_MAX)))
    plan = planner.plan(waypoint_program([pin.SE3(robot.fk(robot.home()).rotation, end)], 0.0), robot.home(),
                        velocity_scaling=1.0, acceleration_scaling=1.0)
    assert plan.path_ik.success
    return plan.trajectory


def followed(stop, dt=1e-3):
    """Positions (K, n) a controller commands along the stop (cubic through positions and velocities)."""
    follower = TrajectoryFollower(TrajectoryPoints(stop.times, stop.positions, stop.velocities),
                                  stop.positions[0], stop.velocities[0])
    return np.array([follower.sample(t) for t in np.arange(0.0, stop.duration + 0.05, dt)])


def acceleration_ratio(positions, dt=1e-3, window=10):
    """Peak |qdd| / a_max from second differences over `window` samples."""
    q = positions[::window]
    return float((np.abs(np.diff(q, 2, axis=0)) / (dt * window) ** 2 / A_MAX).max())


def line_deviation(robot, positions, start, end):
    """[m] largest distance of the tool from the line start-end."""
    direction = (end - start) / np.linalg.norm(end - start)
    offsets = np.array([robot.fk(q).translation - start for q in positions])     # (K, 3)
    return float(np.linalg.norm(offsets - np.outer(offsets @ direction, direction), axis=1).max())


def facts(stop):
    points = [PointFacts(p.tolist(), v.tolist(), a.tolist(), [], float(t))
              for t, p, v, a in zip(stop.times, stop.positions, stop.velocities, stop.accelerations)]
    return TrajectoryFacts(stop.joint_names, points, 0)


@pytest.mark.parametrize("share", np.random.default_rng(9).uniform(0.02, 0.98, 12).round(3).tolist())
def test_path_stop_is_within_the_limits_at_rest_and_on_the_path(line_plan, share):
    robot, planned, start, end = line_plan
    t_stop = share * planned.duration
    stop = path_stop(planned, t_stop, A_MAX)
    # starts at the planned state, planned velocity included (no jump for the controller to absorb)
    q, dq, _ = PlannedMotion(planned)(t_stop)
    np.testing.assert_allclose(stop.positions[0], q, atol=1e-12)
    np.testing.assert_allclose(stop.velocities[0], dq, atol=1e-9)
    np.testing.assert_allclose(stop.velocities[0], [np.interp(t_stop, planned.times, planned.velocities[:, j])
                                                    for j in range(7)], atol=0.03)     # the plan, independently
    # ends at rest, and a default JTC accepts it
    assert np.all(stop.velocities[-1] == 0.0)
    assert jtc_rejection(facts(stop), robot.joint_names, now=0) is None
    # within the limits: the points' accelerations, and what a controller's interpolation commands
    assert (np.abs(stop.accelerations) / A_MAX).max() <= 1.0 + 2e-3
    commanded = followed(stop)
    assert acceleration_ratio(commanded) <= 1.05
    # on the path (the planned path is within 0.1 mm of the line; its 100 Hz cubic adds a little)
    assert line_deviation(robot, commanded[::5], start, end) < 2e-4
    # it never goes past where the plan ends, nor back
    direction = (end - start) / np.linalg.norm(end - start)
    progress = np.array([robot.fk(q).translation - start for q in commanded[::5]]) @ direction
    assert np.all(np.diff(progress) >= -1e-7) and progress[-1] <= np.linalg.norm(end - start) + 1e-6


def test_path_stop_from_full_speed_stops_well_short_of_the_end(line_plan):
    robot, planned, start, end = line_plan
    peak = int(np.argmax(np.abs(planned.velocities).max(axis=1)))
    stop = path_stop(planned, planned.times[peak], A_MAX)       # the limits: twice the plan's braking
    assert stop.duration < 0.7 * (planned.duration - planned.times[peak])
    assert np.linalg.norm(robot.fk(stop.positions[-1]).translation - end) > 0.02


def test_the_old_hold_at_the_measured_state_needs_many_times_the_limit(line_plan):
    """Control: what the node sent before (one zero-velocity point 0.1 s ahead at the measured positions) fails
    the same measurement."""
    _, planned, *_ = line_plan
    k = int(0.4 * len(planned.times))
    hold = TrajectoryPoints(np.array([0.1]), planned.positions[k:k + 1], np.zeros((1, 7)))
    follower = TrajectoryFollower(hold, planned.positions[k], planned.velocities[k])
    commanded = np.array([follower.sample(t) for t in np.arange(0.0, 0.15, 1e-3)])
    assert acceleration_ratio(commanded) > 4.0


def test_velocity_stop_ramps_every_joint_down_together():
    names = tuple("abc")
    q, v = np.array([0.1, -0.2, 0.3]), np.array([1.0, -2.0, 0.5])
    limits = np.array([5.0, 5.0, 1.0])
    stop = velocity_stop(names, q, v, limits, coast=0.1)
    np.testing.assert_allclose(stop.positions[0], q + 0.1 * v)
    np.testing.assert_allclose(stop.velocities[0], v)
    assert np.all(stop.velocities[-1] == 0.0) and np.all(np.diff(stop.times) > 0)
    assert (np.abs(stop.accelerations) <= limits + 1e-12).all()
    # every point moves along the initial velocity (a straight line in joint space)
    offsets = stop.positions - stop.positions[0]
    np.testing.assert_allclose(offsets[:, 0] * v[1] - offsets[:, 1] * v[0], 0.0, atol=1e-12)
    assert stop.duration == pytest.approx(0.5 / (0.95 * 1.0))               # joint c is the slowest to stop
    at_rest = velocity_stop(names, q, np.zeros(3), limits)
    assert len(at_rest.times) == 2 and np.all(at_rest.velocities == 0.0) and np.all(at_rest.positions == q)


def test_plan_stop_follows_the_path_only_while_the_arm_follows_the_plan(line_plan):
    robot, planned, *_ = line_plan
    names = robot.joint_names
    t = 0.4 * planned.duration
    q, dq, _ = PlannedMotion(planned)(t - 0.004)                # a state measured 4 ms behind the clock
    on = plan_stop(names, planned, t, q, dq, A_MAX, coast=0.1)
    assert on.along_path
    # in the running trajectory's own time: its points from just before t until the braking, at least 0.1 s on
    assert t - 0.025 <= on.start <= t
    kept = np.flatnonzero((planned.times >= on.start - 1e-12) & (planned.times < t + 0.1))
    np.testing.assert_array_equal(on.trajectory.positions[:len(kept)], planned.positions[kept])
    np.testing.assert_allclose(on.trajectory.times[:len(kept)] + on.start, planned.times[kept], atol=1e-12)
    assert planned_progress(planned, t, q).time == pytest.approx(t - 0.004, abs=2e-4)
    off = plan_stop(names, planned, t, q + 0.2, dq, A_MAX, coast=0.1)          # 0.2 rad off the plan
    assert not off.along_path
    np.testing.assert_allclose(off.trajectory.positions[0], q + 0.2 + 0.1 * dq)
    late = plan_stop(names, planned, planned.duration + 1.0, q, dq, A_MAX, coast=0.1)   # timed out: not on plan
    assert not late.along_path
    assert plan_stop(names, None, 0.0, None, None, A_MAX, coast=0.1) is None


def test_bad_inputs_are_refused_with_the_rule(line_plan):
    _, planned, *_ = line_plan
    with pytest.raises(InvalidInputError, match="acceleration limits must be 7 finite values > 0"):
        path_stop(planned, 0.1, np.zeros(7))
    with pytest.raises(InvalidInputError, match="velocities must be 2 finite values"):
        velocity_stop(("a", "b"), [0.0, 0.0], [np.nan, 0.0], [1.0, 1.0])


@pytest.mark.parametrize("progress", np.linspace(0.0, 1.0, 21).round(2).tolist())
def test_continued_stop_is_the_running_trajectory_then_a_stop_a_controller_plays_within_the_limits(
        full_scaling_plan, progress):
    """Issue 24 item 8: a stop that continues the running trajectory in its own time (no blend from the arm), then
    brakes along the path, measured on the quintic a default JTC plays through its points: within the limits from
    any progress of a plan that itself runs at them (a stop whose last step was cut at the plan's end put its last
    point late: 1.18x at 55-60 %)."""
    planned = full_scaling_plan
    elapsed = progress * planned.duration
    stop = continued_stop(planned, elapsed, 0.25, A_MAX)
    T = stop.trajectory
    assert T.times[0] == 0.0 and np.all(np.diff(T.times) > 0) and np.abs(T.velocities[-1]).max() < 1e-12
    assert stop.offset <= max(elapsed, 0.0) and stop.braking >= min(elapsed + 0.25, planned.duration) - 1e-9
    kept = np.flatnonzero((planned.times >= stop.offset - 1e-12) & (planned.times <= stop.braking + 1e-12))
    np.testing.assert_array_equal(T.positions[:len(kept)], planned.positions[kept])
    np.testing.assert_array_equal(T.velocities[:len(kept) - 1], planned.velocities[kept[:-1]])
    peaks = spline_peaks(T.times, T.positions, T.velocities, T.accelerations)
    assert (peaks.acceleration <= A_MAX * 1.001).all(), (peaks.acceleration / A_MAX).max()
    assert stop.offset + T.duration <= planned.duration + 0.05            # never slower than the plan's own end


# ---- jerk-limited stops (issue 27, item 3) ---------------------------------------------------------------------
J_MAX = np.array([7500.0, 3750.0, 5000.0, 6250.0, 7500.0, 10000.0, 10000.0]) * 0.1   # a tenth of Franka's figures


@pytest.fixture(scope="module")
def jerk_line_plan(line_plan):
    """The line planned within the jerk limits: what a stop continues."""
    robot, _, start, end = line_plan
    planner = MotionPlanner(robot, PathConfig(max_joint_acceleration=tuple(A_MAX), max_joint_jerk=tuple(J_MAX)))
    plan = planner.plan(waypoint_program([pin.SE3(robot.fk(robot.home()).rotation, end)], 0.0), robot.home())
    assert plan.success
    return robot, plan.trajectory, start, end


def _played_jerk(stop):
    from robokin_ros.core.trajectory.jerk_check import played_jerk_peaks, sampled_jerk
    args = (stop.times, stop.positions, stop.velocities, stop.accelerations)
    exact = played_jerk_peaks(*args).jerk
    sampled = np.abs(sampled_jerk(*args).jerk).max(axis=0)
    assert np.all(sampled <= exact * (1 + 1e-6) + 1e-6)          # the independent measurement agrees
    return exact


@pytest.mark.parametrize("share", [0.3, 0.5, 0.7])
def test_jerk_limited_cancel_stop_mid_path(jerk_line_plan, share):
    """A cancel mid-path: the running points, then the braking, all within the jerk and acceleration limits as the
    controller's quintic plays them, at rest at the end, on the line; the acceleration-limited stop of the same plan
    jerks above the limit (so the check can fail)."""
    robot, planned, start, end = jerk_line_plan
    elapsed = share * planned.duration
    stop = continued_stop(planned, elapsed, 0.05, A_MAX, J_MAX).trajectory
    assert np.all(_played_jerk(stop) <= J_MAX * (1 + 2e-3))
    peaks = spline_peaks(stop.times, stop.positions, stop.velocities, stop.accelerations)
    assert np.all(peaks.acceleration <= A_MAX * (1 + 2e-3))
    assert np.all(stop.velocities[-1] == 0.0) and np.all(stop.accelerations[-1] == 0.0)
    tool = np.array([robot.fk(q).translation for q in stop.positions])
    axis = (end - start) / np.linalg.norm(end - start)
    off = tool - start - np.outer((tool - start) @ axis, axis)
    assert np.linalg.norm(off, axis=1).max() <= 1e-4                   # on the line
    plain = continued_stop(planned, elapsed, 0.05, A_MAX).trajectory
    assert (_played_jerk(plain) / J_MAX).max() > 1.0


def test_jerk_limited_velocity_stop_is_played_exactly():
    """Off the plan: along the measured velocity, the deceleration ramps in and out within the jerk limits; the
    points at the profile's breakpoints make the controller's quintic play it exactly (the binding joint at 1.0)."""
    names = [f"j{k}" for k in range(7)]
    v0 = np.array([0.5, -0.3, 0.2, 0.0, 0.4, -0.6, 0.1])
    stop = velocity_stop(names, np.zeros(7), v0, A_MAX, 0.0, j_max=J_MAX)
    ratio = _played_jerk(stop) / J_MAX
    assert ratio.max() == pytest.approx(1.0, rel=1e-6)
    assert np.all(spline_peaks(stop.times, stop.positions, stop.velocities, stop.accelerations).acceleration
                  <= A_MAX * (1 + 1e-9))
    assert np.array_equal(stop.velocities[0], v0) and np.all(stop.accelerations[0] == 0.0)
    assert np.all(stop.velocities[-1] == 0.0)
    direction = stop.positions[-1] / np.linalg.norm(stop.positions[-1])
    assert direction == pytest.approx(v0 / np.linalg.norm(v0), abs=1e-12)     # along its own velocity


def test_plan_stop_passes_the_jerk_limits(jerk_line_plan):
    robot, planned, _, _ = jerk_line_plan
    elapsed = 0.5 * planned.duration
    q = PlannedMotion(planned)(elapsed)[0]
    stop = plan_stop(planned.joint_names, planned, elapsed, q, None, A_MAX, 0.05, j_max=J_MAX)
    assert stop.along_path and np.all(_played_jerk(stop.trajectory) <= J_MAX * (1 + 2e-3))
    off = plan_stop(planned.joint_names, None, elapsed, q, np.full(7, 0.3), A_MAX, 0.05, j_max=J_MAX)
    assert not off.along_path and np.all(_played_jerk(off.trajectory) <= J_MAX * (1 + 1e-6))


@pytest.mark.parametrize("bad", [np.full(7, np.nan), np.zeros(7), -J_MAX, np.full(7, np.inf), J_MAX[:6]])
def test_bad_jerk_limits_of_a_stop_are_refused(jerk_line_plan, bad):
    _, planned, _, _ = jerk_line_plan
    with pytest.raises(InvalidInputError, match="jerk limits"):
        continued_stop(planned, 0.5 * planned.duration, 0.05, A_MAX, bad)
