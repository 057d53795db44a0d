"""What timing a path of many rest-to-rest sections costs, counted (issue 24 item 9), not clocked.

The benchmark's "square loops 1 mm, 400 sharp corners" went from 0.8 s to 2.0 s on a quiet machine (1.5 -> 4.7 s
loaded) when issue 23 made every section keep the controller's spline within the limits: each section ran toppra
twice (the second time with the acceleration limits lowered by the played overshoot) and every toppra stage
problem went through the budget-polling wrapper. A solution that touches no speed limit is acceleration-limited
throughout, and lowering every acceleration limit by one factor k only slows it down by 1 / sqrt(k), so the second
run is now the first solution stretched; and a run too short to reach a check inside toppra is not wrapped.
What remained (0.27 s of the 400 sections' 1.1 s) was the played measurement in numpy (~20 array-sized polynomial
evaluations per measurement, 0.3 ms of overheads on a handful of intervals), now compiled and exact
(core/trajectory/quintic_peaks.py); two trajectory evaluations per verification, now one; and toppra's 60-point grid on
sections that are straight lines in joint space, now STRAIGHT_GRID points.
"""
import numpy as np
import pinocchio as pin

from robokin_ros.core.path import timing, toppra_run
from robokin_ros.core.trajectory import outgoing_check
from robokin_ros.core.path.budget import UNLIMITED
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.toppra_run import ConstAccelTrajectory
from robokin_ros.core.program.moves import waypoint_program
from robokin_ros.core.program.planner import MotionPlanner, ensure_compiled

PANDA_ACC = (15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0)      # bench/bench_path.py's limits


def square_loops(panda, count: int) -> list:
    """bench/bench_path.py's 'square loops 1 mm' waypoints: every corner a stop."""
    T0 = panda.fk(panda.home())
    square = 1e-3 * np.array([[1.0, 0, 0], [1.0, 1.0, 0], [0, 1.0, 0], [0, 0, 0]])
    return [pin.SE3(T0.rotation, T0.translation + d) for d in np.resize(square, (count, 3))]


def test_tiny_rest_to_rest_sections_run_toppra_once_each_and_stay_within_the_limits(panda, monkeypatch):
    planner = MotionPlanner(panda, PathConfig(max_joint_acceleration=PANDA_ACC))
    ensure_compiled(planner)                              # its compile run plans too, uncounted
    runs, wrapped = [], []
    toppra, polled = toppra_run.run_toppra, toppra_run.PolledSolver
    monkeypatch.setattr(toppra_run, "run_toppra", lambda *a, **k: runs.append(1) or toppra(*a, **k))
    monkeypatch.setattr(toppra_run, "PolledSolver", lambda *a: wrapped.append(1) or polled(*a))
    plan = planner.plan(waypoint_program(square_loops(panda, 12), 0.0), panda.home())
    sections = len(plan.path_ik.path.stops) + 1
    assert plan.success and sections == 12
    assert len(runs) == sections and not wrapped          # before: 2 runs per section, every one wrapped
    report = plan.timing
    assert report.planned_acceleration_share < 1.0        # derated for the controller's spline, as before
    for ratio in (report.peak_velocity_ratio, report.peak_acceleration_ratio, report.played_velocity_ratio,
                  report.played_acceleration_ratio):
        assert ratio <= 1.0 + timing.RATIO_TOLERANCE


def test_a_stretched_solution_equals_toppra_run_again_with_the_lowered_limits(panda):
    """The stretch stands for the second toppra run: same duration (toppra's own grid error aside) on a section
    that no speed limit touches."""
    q0 = panda.home()
    q1 = q0 + 0.02
    ss = np.linspace(0.0, 1.0, 5)
    waypoints = q0 + ss[:, None] * (q1 - q0)
    v_max, a_max = panda.limits.velocity, np.array(PANDA_ACC)
    first = toppra_run.solve(ss, waypoints, v_max, a_max, np.ones(7), None, True, None, UNLIMITED, None)
    assert first.ratios.speeds_free()
    lowered = np.full(7, 0.7)
    stretched = toppra_run.solve(ss, waypoints, v_max, a_max, lowered, None, True, None, UNLIMITED, first)
    again = toppra_run.solve(ss, waypoints, v_max, a_max, lowered, None, True, None, UNLIMITED, None)
    assert stretched.trajectory.stretch > 1.0 and again.trajectory.stretch == 1.0
    assert abs(stretched.trajectory.duration - again.trajectory.duration) < 1e-3 * again.trajectory.duration


def test_each_section_measures_its_played_spline_compiled_and_samples_each_verification_once(panda, monkeypatch):
    """Per section: two verifications (the derated run is the first stretched), each evaluating the trajectory once
    and measuring the controller's spline once in the compiled kernel, no numpy polynomial evaluation; a section that
    is a straight joint-space line gets a STRAIGHT_GRID-point toppra grid. Before: 4 evaluations, ~40 numpy
    polynomial evaluations and a 60-point grid per section."""
    planner = MotionPlanner(panda, PathConfig(max_joint_acceleration=PANDA_ACC))
    ensure_compiled(planner)
    counts = {"states": 0, "kernel": 0, "numpy": 0}
    grids = []

    def counted(name, function):
        return lambda *a, **k: counts.__setitem__(name, counts[name] + 1) or function(*a, **k)
    monkeypatch.setattr(ConstAccelTrajectory, "states", counted("states", ConstAccelTrajectory.states))
    monkeypatch.setattr(timing, "quintic_peaks", counted("kernel", timing.quintic_peaks))
    monkeypatch.setattr(outgoing_check, "_value", counted("numpy", outgoing_check._value))
    grid = toppra_run.grid
    monkeypatch.setattr(toppra_run, "grid", lambda *a: grids.append(grid(*a)) or grids[-1])
    plan = planner.plan(waypoint_program(square_loops(panda, 12), 0.0), panda.home())
    assert plan.success and len(plan.path_ik.path.stops) + 1 == 12
    assert counts == {"states": 24, "kernel": 24, "numpy": 0}
    assert [len(g) for g in grids] == [toppra_run.STRAIGHT_GRID] * 12 and toppra_run.STRAIGHT_GRID < 60
    assert plan.timing.played_acceleration_ratio <= 1.0 + timing.RATIO_TOLERANCE
