"""Timing: toppra verified by finite differences, LSPB / quintic textbook properties, downsampling tolerance,
and the full planner (first point = start, strictly increasing times, deviation after timing)."""
import subprocess
import sys

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.downsample import path_parameter
from robokin_ros.core.path.geometry import build_path
from robokin_ros.core.trajectory.profiles import joint_move, lspb_eval, lspb_profile, quintic_eval
from robokin_ros.core.path.timing import time_optimal
from robokin_ros.core.program.moves import waypoint_program
from robokin_ros.core.program.planner import MotionPlanner

PANDA_ACC = (15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0)


@settings(max_examples=50, deadline=None)
@given(v=st.floats(0.1, 5.0), a=st.floats(0.1, 20.0))
def test_lspb_textbook_properties(v, a):
    tb, total = lspb_profile(v, a)
    # with the blend ends on the grid, the trapezoid rule is exact for the piecewise-linear velocity
    t = np.unique(np.r_[np.linspace(0.0, total, 20001), tb, total - tb])
    s, sd, sdd = lspb_eval(t, tb, total)
    assert s[0] == 0.0 and s[-1] == pytest.approx(1.0, abs=1e-12)
    assert np.trapezoid(sd, t) == pytest.approx(1.0, abs=1e-9)          # area under velocity = displacement
    assert sd.max() <= v * (1 + 1e-9) and np.abs(sdd).max() <= a * (1 + 1e-9)
    assert sd[0] == 0.0 and sd[-1] == pytest.approx(0.0, abs=1e-12)
    tu = np.linspace(0.0, total, 4001)                                # s' is the derivative of s
    su, sdu, _ = lspb_eval(tu, tb, total)
    away = (np.abs(tu - tb) > 2 * tu[1]) & (np.abs(tu - total + tb) > 2 * tu[1])
    np.testing.assert_allclose(np.gradient(su, tu)[1:-1][away[1:-1]], sdu[1:-1][away[1:-1]], atol=1e-9)
    # time-optimal for a unit move: either cruising at v or a triangle at a
    assert total == pytest.approx(1 / v + v / a if v * v / a < 1 else 2 / np.sqrt(a))


def test_quintic_boundary_conditions_and_area():
    total = 1.7
    t = np.linspace(0, total, 20001)
    s, sd, sdd = quintic_eval(t, total)
    assert (s[0], sd[0], sdd[0]) == (0.0, 0.0, 0.0)
    assert s[-1] == pytest.approx(1.0) and sd[-1] == pytest.approx(0.0) and sdd[-1] == pytest.approx(0.0)
    assert np.trapezoid(sd, t) == pytest.approx(1.0, abs=1e-8)
    assert sd.max() == pytest.approx(15 / 8 / total, rel=1e-6)
    assert np.abs(sdd).max() == pytest.approx(10 / np.sqrt(3) / total ** 2, rel=1e-4)


@pytest.mark.parametrize("profile", ["trapezoid", "quintic"])
def test_joint_move_respects_limits(profile):
    q0, q1 = np.zeros(3), np.array([1.0, -0.5, 0.2])
    v, a = np.array([1.0, 2.0, 0.5]), np.array([2.0, 1.0, 3.0])
    traj = joint_move(q0, q1, v, a, profile, rate_hz=1000)
    assert np.all(np.diff(traj.times) > 0) and traj.times[0] == 0.0
    np.testing.assert_allclose(traj.positions[0], q0)
    np.testing.assert_allclose(traj.positions[-1], q1, atol=1e-12)
    assert np.all(np.abs(traj.velocities) <= v * (1 + 1e-6))
    assert np.all(np.abs(traj.accelerations) <= a * (1 + 1e-6))


def test_toppra_result_is_verified_by_finite_differences(panda):
    rng = np.random.default_rng(1)
    waypoints = panda.home() + np.cumsum(rng.uniform(-0.15, 0.15, (8, 7)), axis=0)
    waypoints[0] = panda.home()
    ss = np.concatenate([[0], np.cumsum(np.linalg.norm(np.diff(waypoints, axis=0), axis=1))])
    v, a = panda.limits.velocity, np.array(PANDA_ACC)
    arrays, report, trajectory = time_optimal(ss, waypoints, panda.joint_names, v, a, 0.5, 0.5, 100, 1000)
    assert report.peak_velocity_ratio <= 1 + 1e-3 and report.peak_acceleration_ratio <= 1 + 1e-3
    t = np.arange(0, report.duration, 1e-4)
    q = trajectory(t)
    qd = np.gradient(q, t, axis=0)
    qdd = np.gradient(qd, t, axis=0)
    assert (np.abs(qd) / (0.5 * v)).max() <= 1 + 2e-3
    # finite differences smear the acceleration jumps of a bang-bang profile: check away from them
    assert np.percentile(np.abs(qdd) / (0.5 * a), 99) <= 1 + 2e-2
    np.testing.assert_array_equal(arrays.positions[0], waypoints[0])
    assert np.all(np.diff(arrays.times) > 0) and arrays.times[-1] == pytest.approx(report.duration)


@pytest.mark.parametrize("name", ["velocity_scaling", "acceleration_scaling"])
def test_scaling_is_validated_once_at_the_planner(panda, name):
    """The planner is the edge: None or 0 = the config's default, anything else must be in (0, 1]."""
    planner = MotionPlanner(panda, PathConfig(max_joint_acceleration=PANDA_ACC, velocity_scaling=0.5,
                                              acceleration_scaling=0.5))
    q0 = panda.home()
    T0 = panda.fk(q0)
    target = [pin.SE3(T0.rotation, T0.translation + np.array([0.0, 0.0, -0.05]))]
    for bad in (-0.5, 1.5, float("nan"), float("inf")):
        refused = f"{name}={bad} is refused: a scaling must be a finite number in \\(0, 1\\]"
        with pytest.raises(InvalidInputError, match=refused):
            planner.plan(waypoint_program(target, 0.0), q0, **{name: bad})
    default = planner.plan(waypoint_program(target, 0.0), q0).timing.duration
    assert planner.plan(waypoint_program(target, 0.0), q0, **{name: 0.0}).timing.duration == default
    assert planner.plan(waypoint_program(target, 0.0), q0, **{name: 0.5}).timing.duration == default
    assert planner.plan(waypoint_program(target, 0.0), q0, **{name: 0.05}).timing.duration > default


def test_planner_rectangle_end_to_end(panda):
    cfg = PathConfig(max_joint_acceleration=PANDA_ACC, trajectory_rate_hz=250.0)
    planner = MotionPlanner(panda, cfg)
    q0 = panda.home()
    T0 = panda.fk(q0)
    corners = [[0.1, 0, 0], [0.1, 0.15, 0], [-0.1, 0.15, 0], [-0.1, 0, 0], [0, 0, 0]]
    waypoints = [pin.SE3(T0.rotation, T0.translation + np.array(c)) for c in corners]
    plan = planner.plan(waypoint_program(waypoints, 0.03), q0)
    assert plan.success, plan.path_ik.message
    traj, report = plan.trajectory, plan.timing
    np.testing.assert_array_equal(traj.positions[0], q0)
    # (a last gap under a tenth of a period is merged into the final one: sample_times)
    assert np.all(np.diff(traj.times) > 0) and np.diff(traj.times).max() <= 1.1 / 250 + 1e-12
    assert report.peak_velocity_ratio <= 1 + 1e-3 and report.peak_acceleration_ratio <= 1 + 1e-3
    assert report.max_position_deviation <= cfg.downsample_position_tolerance * 1.5
    # independent: FK of every output point stays within 0.1 mm of the rectangle's blended geometry
    path = build_path(T0, [pin.SE3(T0.rotation, T0.translation + np.array(c)) for c in corners], 0.03)
    worst = max(np.linalg.norm(path.positions - panda.fk(q).translation, axis=1).min() for q in traj.positions)
    assert worst < 1e-4 + 5e-4      # nearest dense sample is at most half a 1 mm step away
    assert len(plan.downsample.indices) < plan.path_ik.path.size / 5


def test_sharp_corner_stops_the_arm(panda):
    planner = MotionPlanner(panda, PathConfig(max_joint_acceleration=PANDA_ACC))
    q0 = panda.home()
    T0 = panda.fk(q0)
    wps = [pin.SE3(T0.rotation, T0.translation + np.array(d)) for d in ([0.1, 0, 0], [0.1, 0.1, 0])]
    plan = planner.plan(waypoint_program(wps, 0.0), q0)
    assert plan.success and plan.path_ik.path.stops == (100,)
    corner = panda.fk(plan.path_ik.positions[100]).translation
    k = np.argmin(np.linalg.norm(plan.trajectory.positions - plan.path_ik.positions[100], axis=1))
    assert np.abs(plan.trajectory.velocities[k]).max() < 1e-6
    assert np.linalg.norm(panda.fk(plan.trajectory.positions[k]).translation - corner) < 1e-9


def test_const_accel_trajectory_matches_toppra_and_stretches(panda):
    """Our evaluation of toppra's grid solution equals toppra's own ParametrizeConstAccel; q(t / c) gives
    qd / c and qdd / c^2 on the same path (and finite differences agree); an overshooting toppra result
    (tight blends) comes back stretched and within 1 + 1e-3 at the control rate."""
    import toppra as ta
    import toppra.algorithm as algo

    from robokin_ros.core.path.toppra_run import ConstAccelTrajectory, grid, joint_constraints
    rng = np.random.default_rng(4)
    waypoints = panda.home() + np.cumsum(rng.uniform(-0.1, 0.1, (6, 7)), axis=0)
    ss = np.concatenate([[0], np.cumsum(np.linalg.norm(np.diff(waypoints, axis=0), axis=1))])
    path = ta.SplineInterpolator(ss, waypoints, bc_type="not-a-knot")
    instance = algo.TOPPRA(joint_constraints(panda.limits.velocity, np.array(PANDA_ACC)), path,
                           gridpoints=grid(ss), parametrizer="ParametrizeConstAccel")
    theirs = instance.compute_trajectory(0.0, 0.0)
    ours = ConstAccelTrajectory(path, instance.problem_data.gridpoints, instance.problem_data.sd_vec)
    assert ours.duration == pytest.approx(theirs.duration, rel=1e-12)
    t = np.r_[np.sort(rng.uniform(0.0, ours.duration, 500)), 0.0, ours.duration]
    for order in (0, 1, 2):
        np.testing.assert_allclose(ours(t, order), theirs(t, order), atol=1e-9)
    c = 1.37
    slow = ours.stretched(c)
    assert slow.duration == pytest.approx(c * ours.duration) and ours.stretch == 1.0
    t = np.linspace(0.0, slow.duration, 20001)
    q = slow(t)
    np.testing.assert_allclose(q, ours(t / c), atol=1e-12)
    np.testing.assert_allclose(q[-1], waypoints[-1], atol=1e-9)
    np.testing.assert_allclose(slow(t, 1), ours(t / c, 1) / c, atol=1e-12)
    np.testing.assert_allclose(slow(t, 2), ours(t / c, 2) / c ** 2, atol=1e-12)
    # finite differences (step ~1e-4 s) smear the acceleration jumps: ~1e-3 rad/s there, ~1e-8 elsewhere
    fd_error = np.abs(np.gradient(q, t, axis=0)[1:-1] - slow(t, 1)[1:-1])
    assert fd_error.max() < 1e-3 and np.percentile(fd_error, 95) < 1e-6
    # the raster's tight blends made toppra overshoot between grid points; the interval bound keeps the accelerations
    # in (no stretch), and without it the stretch is still the last resort that brings the peaks back within limits
    planner = MotionPlanner(panda, PathConfig(max_joint_acceleration=PANDA_ACC))
    T0 = panda.fk(panda.home())
    corners = [[0, 0.1, 0], [0.04, 0.1, 0], [0.04, -0.1, 0], [0.08, -0.1, 0], [0.08, 0.1, 0]]
    waypoints = [pin.SE3(T0.rotation, T0.translation + np.array(d)) for d in corners]
    plan = planner.plan(waypoint_program(waypoints, 0.01), panda.home())
    assert plan.success and plan.timing.retimings == 0
    assert plan.timing.peak_velocity_ratio <= 1 + 1e-3 and plan.timing.peak_acceleration_ratio <= 1 + 1e-3
    kept = plan.downsample.indices
    Q = plan.path_ik.positions
    unbounded = time_optimal(path_parameter(Q)[kept], Q[kept], panda.joint_names,
                             panda.limits.velocity, PANDA_ACC, bound_within_intervals=False)
    assert unbounded.report.retimings >= 1
    assert unbounded.report.peak_velocity_ratio <= 1 + 1e-3 and unbounded.report.peak_acceleration_ratio <= 1 + 1e-3
    traj = plan.trajectory
    assert np.all(np.abs(traj.velocities) <= panda.limits.velocity * (1 + 1e-3))
    assert np.all(np.abs(traj.accelerations) <= np.array(PANDA_ACC) * (1 + 1e-3))


def test_the_planner_leaves_matplotlib_unloaded_and_toppras_plotting_still_works():
    """toppra imports pyplot for plotting robokin never calls (~28 MB per planning process); the planner imports it
    behind stand-ins (core/path/toppra_constraints.py) that load the real pyplot on first use."""
    code = ("import sys\n"
            "import robokin_ros.core.program.planner\n"
            "assert 'matplotlib' not in sys.modules and 'matplotlib.pyplot' not in sys.modules, 'pyplot loaded'\n"
            "import toppra.algorithm.algorithm as algorithm\n"
            "import matplotlib\n"
            "matplotlib.use('Agg')\n"
            "import matplotlib.pyplot as real\n"
            "assert algorithm.plt.figure is real.figure\n"
            "print('ok')\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr
