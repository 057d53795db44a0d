"""Limits per stretch of the path (LimitSchedule): each stretch's tool speed, joint velocity and acceleration limits
checked on the timed trajectory by Pinocchio FK and finite differences of sampled positions, independent of the
trajectory's own derivatives and of the compiled Jacobian the timing uses."""
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.downsample import path_parameter
from robokin_ros.core.path.limit_schedule import LimitSchedule, stretch_reports
from robokin_ros.core.path.timing import ToolSpeedLimit, time_optimal
from robokin_ros.core.program.moves import waypoint_program
from robokin_ros.core.program.planner import MotionPlanner

PANDA_ACC = np.array((15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0))
RATE = 2000.0                        # [Hz] finite-difference sampling
TOOL_SPEEDS = (0.1, 0.3, 0.05)       # [m/s] per 0.1 m stretch of a 0.3 m line


def _schedule(bounds, velocity=None, acceleration=None, tool_speed=None):
    ones = np.ones(len(bounds) - 1)
    return LimitSchedule(bounds, ones if velocity is None else velocity, ones if acceleration is None else acceleration,
                         0 * ones if tool_speed is None else tool_speed, 0 * ones)


@pytest.fixture(scope="module")
def line(panda):
    """The Panda's 0.3 m line: (ss, waypoints) to time, the tool chain, and ss at 0, 0.1, 0.2 and 0.3 m of tool
    travel (by FK of the dense IK samples, which lie within 0.1 mm of the line)."""
    planner = MotionPlanner(panda, PathConfig(max_joint_acceleration=tuple(PANDA_ACC)))
    T0 = panda.fk(panda.home())
    line = [pin.SE3(T0.rotation, T0.translation + np.array([0, 0.3, 0]))]
    plan = planner.plan(waypoint_program(line, 0.0), panda.home())
    assert plan.success, plan.path_ik.message
    Q, keep = plan.path_ik.positions, plan.downsample.indices
    s_dense = path_parameter(Q)
    p = np.array([panda.fk(q).translation for q in Q])
    travel = np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(p, axis=0), axis=1))]
    bounds = np.interp([0.0, 0.1, 0.2], travel, s_dense)
    return s_dense[keep], Q[keep], ToolSpeedLimit(planner.solver().fk.arrays()), np.r_[bounds, s_dense[-1]]


def _tool_speed_line(panda, line):
    ss, waypoints, tool, bounds = line
    schedule = _schedule(bounds, tool_speed=TOOL_SPEEDS)
    timed = time_optimal(ss, waypoints, panda.joint_names, panda.limits.velocity, PANDA_ACC,
                         trajectory_rate_hz=RATE, tool=tool, schedule=schedule)
    return schedule, timed


def _fk_position(panda, trajectory, times):
    return np.array([panda.fk(q).translation for q in trajectory(np.asarray(times, float))])


def _windows(trajectory, times, bounds):
    """Stretch of each sample window [t_j, t_j+1] (and of each 3-sample window when `times` are second-difference
    centres), -1 for windows that straddle a boundary."""
    k = np.searchsorted(bounds, trajectory.path_parameter(times), side="right") - 1     # stretch of each sample
    k = np.clip(k, 0, len(bounds) - 2)
    return np.where(k[1:] == k[:-1], k[1:], -1)


def test_tool_speed_per_stretch_cruises_at_each_limit_and_slows_down_before_the_slower_one(panda, line):
    schedule, timed = _tool_speed_line(panda, line)
    bounds, trajectory = schedule.bounds, timed.trajectory
    times = timed.arrays.times
    p = np.array([panda.fk(q).translation for q in timed.arrays.positions])
    speed = np.linalg.norm(np.diff(p, axis=0), axis=1) / np.diff(times)                   # (K - 1,) [m/s]
    stretch = _windows(trajectory, times, bounds)
    s_mid = trajectory.path_parameter(0.5 * (times[1:] + times[:-1]))
    for k, limit in enumerate(TOOL_SPEEDS):
        inside = stretch == k
        assert speed[inside].max() / limit <= 1 + 1e-3, k
        middle = inside & (np.abs(s_mid - bounds[k:k + 2].mean()) <= 0.25 * np.diff(bounds)[k])
        assert middle.sum() > 20 and np.abs(speed[middle] / limit - 1.0).max() <= 0.01, k
    # on the boundaries: the speed just before (backward difference) and just after (forward) is within the
    # slower neighbour's limit, so each change of speed happens inside the faster stretch
    h = 1e-6                                                                               # [s]
    for k, t_b in ((1, trajectory.time_at(bounds[1])), (2, trajectory.time_at(bounds[2]))):
        slower = min(TOOL_SPEEDS[k - 1], TOOL_SPEEDS[k])
        before, at, after = _fk_position(panda, trajectory, [t_b - h, t_b, t_b + h])
        assert np.linalg.norm(at - before) / h <= slower * (1 + 1e-3)
        assert np.linalg.norm(after - at) / h <= slower * (1 + 1e-3)
    assert timed.report.limited_by == "tool speed" and timed.report.retimings == 0


def test_stretch_reports_are_contiguous_and_name_the_tool(panda, line):
    schedule, timed = _tool_speed_line(panda, line)
    tool = line[2]
    reports = stretch_reports(timed, schedule, panda.limits.velocity, PANDA_ACC, tool, panda.joint_names, 500.0)
    assert len(reports) == 3 and reports[0].start_time == 0.0
    assert reports[-1].end_time == timed.report.duration
    assert all(a.end_time == b.start_time for a, b in zip(reports, reports[1:]))
    # the boundary times are where the trajectory reaches the boundaries
    np.testing.assert_allclose(timed.trajectory.path_parameter([r.start_time for r in reports]), schedule.bounds[:-1],
                               rtol=0, atol=1e-9)
    for report, limit in zip(reports, TOOL_SPEEDS):
        assert report.limited_by == "tool speed"
        assert report.peak_tool_speed == pytest.approx(limit, rel=1e-3)
        assert report.peak_velocity_ratio < 1.0 and report.peak_acceleration_ratio <= 1 + 1e-3
        # the tool crosses the stretch's 0.1 m at no more than its limit
        assert report.end_time - report.start_time > 0.1 / limit


def _joint_line(panda, length=2.0):
    """A straight joint-space line from home (its spline is the line itself, so qdd = q' s'')."""
    direction = np.array([1.0, 0.0, 0.0, -0.8, 0.0, 0.6, 0.0])
    direction /= np.linalg.norm(direction)
    ss = np.linspace(0.0, length, 21)
    return ss, panda.home() + ss[:, None] * direction


def _fd_ratios(trajectory, v_max, a_max):
    """Sample times, per-window max |qd| / v_max (first differences) and per-centre max |qdd| / a_max (second
    differences) at RATE."""
    t = np.arange(0.0, trajectory.duration, 1.0 / RATE)
    q = trajectory(t)
    qd = np.diff(q, axis=0) * RATE
    qdd = np.diff(qd, axis=0) * RATE
    return t, (np.abs(qd) / v_max).max(axis=1), (np.abs(qdd) / a_max).max(axis=1)


def _timed_joint_line(panda, bounds, **scales):
    """The joint line timed under a schedule of `scales` per stretch; with its sampled ratios and stretch indices."""
    ss, waypoints = _joint_line(panda)
    schedule = _schedule(bounds, **scales)
    timed = time_optimal(ss, waypoints, panda.joint_names, panda.limits.velocity, PANDA_ACC, schedule=schedule)
    t, v_ratio, a_ratio = _fd_ratios(timed.trajectory, panda.limits.velocity, PANDA_ACC)
    return schedule, timed, v_ratio, a_ratio, _windows(timed.trajectory, t, schedule.bounds)


def test_joint_velocity_scaling_per_stretch(panda):
    schedule, timed, v_ratio, _, stretch = _timed_joint_line(panda, [0.0, 0.6, 2.0], velocity=[1.0, 0.25])
    assert v_ratio[stretch == 1].max() <= 0.25 * (1 + 1e-3)
    assert v_ratio[stretch == 1].max() >= 0.25 * 0.99                 # 1.4 rad at 0.25 v_max: a long cruise
    assert v_ratio[stretch == 0].max() > 0.5                           # the first stretch is not held back
    reports = stretch_reports(timed, schedule, panda.limits.velocity, PANDA_ACC, None, panda.joint_names, 500.0)
    assert reports[1].limited_by.startswith("velocity of")
    assert reports[1].peak_velocity_ratio == pytest.approx(1.0, rel=1e-3)   # against the stretch's own limits
    assert np.isnan(reports[1].peak_tool_speed)                           # no chain, no tool speed


def test_joint_acceleration_scaling_per_stretch(panda):
    _, _, _, a_ratio, centre = _timed_joint_line(panda, [0.0, 1.0, 2.0], acceleration=[1.0, 0.25])
    centre = np.where(centre[1:] == centre[:-1], centre[1:], -1)         # all three samples in one stretch
    assert a_ratio[centre == 1].max() <= 0.25 * (1 + 1e-3)
    assert a_ratio[centre == 1].max() >= 0.25 * 0.99                  # it brakes to rest at the end
    assert a_ratio[centre == 0].max() >= 0.99                         # the first stretch starts at full a_max


@pytest.mark.parametrize("within", [True, False])
@pytest.mark.parametrize("arm", ["panda", "ur5"])
def test_scaled_stretches_of_a_blended_rectangle_keep_their_limits(arm, within, request):
    """On the bench rectangles the joint accelerations peak inside toppra's grid intervals; the interval bound
    holds them to each stretch's own limits, so no uniform stretch is needed. Without it the verification,
    against each sample's own stretch, finds the overshoot and the uniform stretch removes it."""
    robot = request.getfixturevalue(arm)
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
    from bench_path import ACC, suite
    waypoints, blend = next((w, b) for title, w, b in suite(robot) if title.startswith("rectangle"))
    a_max = np.array(ACC[robot.name])
    planner = MotionPlanner(robot, PathConfig(max_joint_acceleration=tuple(a_max)))
    plan = planner.plan(waypoint_program(waypoints, blend), robot.home())
    assert plan.success, plan.path_ik.message
    Q, keep = plan.path_ik.positions, plan.downsample.indices
    ss = path_parameter(Q)[keep]
    schedule = _schedule(np.linspace(ss[0], ss[-1], 4), velocity=[1.0, 0.5, 1.0], acceleration=[0.6, 0.3, 0.6])
    timed = time_optimal(ss, Q[keep], robot.joint_names, robot.limits.velocity, a_max, schedule=schedule,
                         bound_within_intervals=within)
    assert (timed.report.retimings == 0) == within
    t, v_ratio, a_ratio = _fd_ratios(timed.trajectory, robot.limits.velocity, a_max)
    window = _windows(timed.trajectory, t, schedule.bounds)
    centre = np.where(window[1:] == window[:-1], window[1:], -1)
    for k in range(3):
        assert v_ratio[window == k].max() <= schedule.velocity_scaling[k] * (1 + 1e-3)
        assert a_ratio[centre == k].max() <= schedule.acceleration_scaling[k] * (1 + 1e-3)


def test_one_stretch_at_the_global_scalings_times_as_without_a_schedule(panda, line):
    ss, waypoints, chain, _ = line
    args = (ss, waypoints, panda.joint_names, panda.limits.velocity, PANDA_ACC)
    plain = time_optimal(*args, 0.5, 0.7, tool=chain._replace(linear=0.2))
    scheduled = time_optimal(*args, tool=chain, schedule=LimitSchedule([ss[0], ss[-1]], [0.5], [0.7], [0.2], [0.0]))
    assert scheduled.report.duration == pytest.approx(plain.report.duration, rel=1e-6)
    # and the global scalings multiply the schedule's
    both = time_optimal(*args, 0.5, 1.0, schedule=_schedule([ss[0], ss[-1]], acceleration=[0.7]))
    assert both.report.duration == pytest.approx(time_optimal(*args, 0.5, 0.7).report.duration, rel=1e-6)
    # with a schedule the tool's own limits are ignored: it only supplies the chain to measure the tool
    measured = time_optimal(*args, tool=chain._replace(linear=0.01), schedule=_schedule([ss[0], ss[-1]]))
    assert measured.report.duration == pytest.approx(time_optimal(*args).report.duration, rel=1e-6)
    assert measured.report.peak_tool_speed > 0.5 and measured.report.peak_tool_speed_ratio == 0.0


def test_a_boundary_takes_the_stricter_neighbour_limit_by_limit():
    schedule = LimitSchedule([0.0, 1.0, 2.0], [1.0, 0.5], [0.2, 1.0], [0.0, 0.3], [0.4, 0.0])
    s = np.array([0.5, 1.0, 1.5, -1.0, 3.0])
    np.testing.assert_array_equal(schedule.velocity_limits(s, np.array([2.0])).ravel(), [2.0, 1.0, 1.0, 2.0, 1.0])
    np.testing.assert_array_equal(schedule.acceleration_limits(s, np.array([1.0])).ravel(), [0.2, 0.2, 1.0, 0.2, 1.0])
    np.testing.assert_array_equal(schedule.tool_limits(s), [[np.inf, 0.4], [0.3, 0.4], [0.3, np.inf],
                                                            [np.inf, 0.4], [0.3, np.inf]])


@pytest.mark.parametrize("fields, match", [
    (dict(bounds=[0.0, 1.0, 1.0]), r"stretch 1: bounds\[1\]=1.0 must be < bounds\[2\]=1.0"),
    (dict(bounds=[0.0, np.nan, 2.0]), r"bounds\[1\]=nan is not finite"),
    (dict(bounds=[0.0]), "at least 2"),
    (dict(velocity_scaling=[1.0, 0.0]), r"stretch 1: velocity_scaling=0.0 must be in \(0, 1\]"),
    (dict(acceleration_scaling=[1.5, 1.0]), r"stretch 0: acceleration_scaling=1.5 must be in \(0, 1\]"),
    (dict(tool_speed=[-0.1, 0.0]), r"stretch 0: tool_speed=-0.1 must be >= 0"),
    (dict(tool_angular_speed=[0.0, np.inf]), r"stretch 1: tool_angular_speed=inf must be >= 0"),
    (dict(velocity_scaling=[1.0]), r"velocity_scaling must have one entry per stretch \(2\)"),
    (dict(tool_speed=["fast", 0.0]), "tool_speed is not numeric"),
])
def test_invalid_schedules_are_refused_naming_the_stretch(fields, match):
    valid = dict(bounds=[0.0, 1.0, 2.0], velocity_scaling=[1.0, 1.0], acceleration_scaling=[1.0, 1.0],
                 tool_speed=[0.0, 0.0], tool_angular_speed=[0.0, 0.0])
    with pytest.raises(InvalidInputError, match=match):
        LimitSchedule(**{**valid, **fields})


def test_every_problem_is_reported_at_once():
    with pytest.raises(InvalidInputError) as error:
        LimitSchedule([0.0, 1.0, 2.0], [1.0, 2.0], [0.0, 1.0], [0.0, -1.0], [0.0, 0.0])
    assert str(error.value).count("stretch") == 3


def test_a_schedule_must_cover_the_path_and_a_tool_limit_needs_a_chain(panda):
    ss, waypoints = _joint_line(panda)
    args = (ss, waypoints, panda.joint_names, panda.limits.velocity, PANDA_ACC)
    with pytest.raises(InvalidInputError, match="covers s in"):
        time_optimal(*args, schedule=_schedule([0.0, 1.0, 1.5]))
    with pytest.raises(InvalidInputError, match="no tool chain"):
        time_optimal(*args, schedule=_schedule([0.0, 2.0], tool_speed=[0.1]))


def test_time_at_inverts_the_path_parameter_on_a_stretched_trajectory(panda):
    ss, waypoints = _joint_line(panda)
    timed = time_optimal(ss, waypoints, panda.joint_names, panda.limits.velocity, PANDA_ACC)
    slow = timed.trajectory.stretched(1.3)
    t = np.r_[0.0, np.sort(np.random.default_rng(3).uniform(0.0, slow.duration, 200)), slow.duration]
    s = slow.path_parameter(t)
    assert s[0] == ss[0] and s[-1] == pytest.approx(ss[-1], abs=1e-12) and np.all(np.diff(s) > 0)
    np.testing.assert_allclose(slow.time_at(s), t, rtol=0, atol=1e-9)
