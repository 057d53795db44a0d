"""Huge and degenerate goals: near-collinear corners are not stops, planning has a budget and can be canceled,
a goal equal to the current pose succeeds with no motion."""
import itertools

import numpy as np
import pinocchio as pin
import pytest
from panda_paths import PANDA_ACC, offsets

from robokin_ros.core.errors import EmptyPathError
from robokin_ros.core.path.budget import CANCELED, TIMEOUT, PlanningBudget, PlanningStopped
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.geometry import build_path, unstopped_turn_limit
from robokin_ros.core.program.moves import waypoint_program
from robokin_ros.core.program.planner import MotionPlanner


@pytest.fixture(scope="module")
def planner(panda):
    return MotionPlanner(panda, PathConfig(max_joint_acceleration=PANDA_ACC))


def corner(panda, turn_deg):
    """50 mm along x, then 50 mm turned by `turn_deg` in the xy plane."""
    th = np.radians(turn_deg)
    return offsets(panda, [[0.05, 0, 0], [0.05 + 0.05 * np.cos(th), 0.05 * np.sin(th), 0]])


def test_turn_limit_follows_the_tolerances():
    """Rounding a corner within one dense step h cuts it by h/2 sin(turn/2): the limit is where that equals the
    tighter tolerance (defaults: 50 um at 1 mm -> 2 asin(0.1) = 11.5 deg), capped at 90 deg."""
    c = PathConfig()
    limit = unstopped_turn_limit(c.downsample_position_tolerance, c.downsample_orientation_tolerance)
    assert limit == pytest.approx(2 * np.arcsin(0.1))
    assert 0.5e-3 * np.sin(limit / 2) == pytest.approx(c.downsample_position_tolerance)
    assert unstopped_turn_limit(1e-5, 1.0) == pytest.approx(2 * np.arcsin(0.02))       # position is tighter
    assert unstopped_turn_limit(1.0, 1e-5) == pytest.approx(2 * np.arcsin(0.02))       # orientation is tighter
    assert unstopped_turn_limit(1.0, 1.0) == pytest.approx(np.pi / 2)                  # the cap


def test_collinear_waypoints_are_not_stops(panda):
    """Before: every unblended waypoint was a stop, collinear ones too (4 stops here)."""
    T0 = panda.fk(panda.home())
    line = offsets(panda, [[0.01 * k, 0, 0] for k in range(1, 6)])
    assert build_path(T0, line).stops == ()
    # a reversal is collinear in space, but a 180 deg turn: a stop
    assert build_path(T0, offsets(panda, [[0.02, 0, 0], [0.01, 0, 0]])).stops == (20,)
    # pure translation then pure rotation: 90 deg in the combined space, a stop (as before)
    turned = offsets(panda, [[0.02, 0, 0]])[0]
    rotated = pin.SE3(turned.rotation @ pin.rpy.rpyToMatrix(0, 0, 0.01), turned.translation)
    assert build_path(T0, [turned, rotated]).stops == (20,)


@pytest.mark.parametrize("turn_deg, stops", [(2.0, False), (11.0, False), (12.0, True), (45.0, True)])
def test_near_collinear_corners_are_passed_within_tolerance(panda, planner, turn_deg, stops):
    """Corners below the limit (11.5 deg) are not stops, and the verified trajectory stays within the
    downsampling tolerance; above it the arm stops (without a stop a 45 deg corner is cut by 72 um > 50 um)."""
    plan = planner.plan(waypoint_program(corner(panda, turn_deg), 0.0), panda.home())
    assert plan.success, plan.path_ik.message
    assert (plan.path_ik.path.stops == (50,)) == stops
    tol = planner.config.downsample_position_tolerance
    assert plan.downsample.max_position_deviation <= tol
    assert plan.timing.max_position_deviation <= tol * 1.05
    # independent: FK of every output point is within the tolerance of the polyline
    T0 = panda.fk(panda.home())
    dense = build_path(T0, corner(panda, turn_deg), max_step=1e-4).positions
    tool = np.array([panda.fk(q).translation for q in plan.trajectory.positions])
    gap = np.linalg.norm(tool[:, None, :] - dense[None, :, :], axis=2).min(axis=1)
    assert gap.max() <= tol + 5e-5          # nearest 0.1 mm sample is at most 50 um along the path away
    k = np.argmin(np.linalg.norm(plan.trajectory.positions - plan.path_ik.positions[50], axis=1))
    assert (np.abs(plan.trajectory.velocities[k]).max() < 1e-6) == stops


def test_many_waypoints_on_a_circle_are_timed_in_one_pass(panda, planner):
    """The attack: 5000 waypoints on a 3 cm circle, blend 0. Before: 4999 stops, 4999 timing passes, ~25 s of
    planning and a 29 s trajectory. Now: no stop, one pass (speed is measured in bench/bench_path.py)."""
    a = np.linspace(0.0, 2 * np.pi, 5001)[1:]
    waypoints = offsets(panda, 0.015 * np.column_stack([np.cos(a) - 1, np.sin(a), np.zeros_like(a)]))
    plan = planner.plan(waypoint_program(waypoints, 0.0), panda.home())
    assert plan.success, plan.path_ik.message
    assert plan.path_ik.path.stops == ()
    assert plan.timing.duration < 2.0                     # 94 mm; stopping 4999 times took 29 s
    assert plan.timing.peak_velocity_ratio <= 1 + 1e-3 and plan.timing.peak_acceleration_ratio <= 1 + 1e-3
    assert plan.timing.max_position_deviation <= planner.config.downsample_position_tolerance * 1.05


def test_sharp_corners_are_still_stops_and_timed_rest_to_rest(panda, planner):
    corners = offsets(panda, [[0.03, 0, 0], [0.03, 0.03, 0], [0, 0.03, 0]])
    plan = planner.plan(waypoint_program(corners, 0.0), panda.home())
    assert plan.success and plan.path_ik.path.stops == (30, 60)
    for stop in plan.path_ik.path.stops:
        k = np.argmin(np.linalg.norm(plan.trajectory.positions - plan.path_ik.positions[stop], axis=1))
        assert np.abs(plan.trajectory.velocities[k]).max() < 1e-6


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_budget_reports_cancel_and_timeout_with_progress():
    clock = FakeClock()
    budget = PlanningBudget(2.0, clock=clock)
    budget.check("IK", 10, 100)                                           # within budget: no error
    clock.now = 2.5
    with pytest.raises(PlanningStopped, match=r"time budget of 2 s \(parameter planning_timeout\): stopped after "
                                              r"2.50 s in the IK phase \(10 of 100 dense samples done\)") as err:
        budget.check("IK", 10, 100)
    assert (err.value.reason, err.value.phase, err.value.done, err.value.total) == (TIMEOUT, "IK", 10, 100)
    canceled = PlanningBudget(100.0, should_stop=lambda: True, clock=clock)
    with pytest.raises(PlanningStopped, match="planning canceled after 0.00 s in the timing phase") as err:
        canceled.check("timing", 3, 7)
    assert err.value.reason == CANCELED


def test_should_stop_ends_planning_at_the_poll_that_says_stop(panda, planner):
    """should_stop is polled between units of work in every phase (geometry pieces, IK blocks, downsampling
    rounds, timing sections, verification): planning ends at the poll that says stop, whichever it is."""
    waypoints = offsets(panda, [[0.1, 0, 0], [0.1, 0.1, 0], [0.0, 0.1, 0]])
    polled = []

    class Recording(PlanningBudget):
        def check(self, phase, done=0, total=0):
            polled.append(phase)
            super().check(phase, done, total)
    assert planner.plan(waypoint_program(waypoints, 0.0), panda.home(), budget=Recording()).success
    total = len(polled)
    assert total > 10, f"only {total} polls"
    assert {"geometry", "IK", "downsampling", "timing", "verification"} <= set(polled)
    firsts = sorted({polled.index(phase) + 1 for phase in set(polled)})      # the first poll of every phase
    phases = set()
    for stop_after in (*firsts, 2, total - 1, total):
        polls = itertools.count(1)
        with pytest.raises(PlanningStopped, match="planning canceled") as err:
            planner.plan(waypoint_program(waypoints, 0.0), panda.home(), should_stop=lambda: next(polls) >= stop_after)
        assert err.value.reason == CANCELED
        assert next(polls) == stop_after + 1                  # no poll after the one that said stop
        phases.add(err.value.phase)
    assert set(polled) <= phases, phases


def test_planning_timeout_ends_a_long_plan(panda):
    """A budget far below the planning time: PlanningStopped TIMEOUT, with the phase reached."""
    slow = MotionPlanner(panda, PathConfig(max_joint_acceleration=PANDA_ACC, planning_timeout=1e-3))
    zigzag = offsets(panda, [[0.002 * k, 0.002 * (k % 2), 0] for k in range(1, 200)])
    with pytest.raises(PlanningStopped, match="planning_timeout") as err:
        slow.plan(waypoint_program(zigzag, 0.0), panda.home())
    assert err.value.reason == TIMEOUT and err.value.elapsed > 1e-3


def test_a_goal_equal_to_the_current_pose_succeeds_without_motion(panda, planner):
    """Before: EmptyPathError ("no motion"), so INVALID_GOAL. Now: success, a one-point trajectory holding the
    start state, and the message says so. No waypoints at all is still an error."""
    q0 = panda.home()
    here = panda.fk(q0)
    nudged = pin.SE3(here.rotation, here.translation + np.array([0.0, 0.0, 5e-8]))     # within 1e-7 m
    for waypoints in ([here], [here, nudged]):
        plan = planner.plan(waypoint_program(waypoints, 0.0), q0)
        assert plan.success and plan.path_ik.message.startswith("already at the goal")
        traj = plan.trajectory
        assert traj.duration == 0.0 and len(traj.times) == 1
        np.testing.assert_array_equal(traj.positions[0], q0)
        assert not traj.velocities.any() and not traj.accelerations.any()
        assert plan.path_ik.path.size == 1 and plan.path_ik.path.dropped_waypoints == tuple(range(len(waypoints)))
    with pytest.raises(EmptyPathError, match="no waypoints"):
        planner.plan(waypoint_program([], 0.0), q0)
    # 1 um away is a motion, planned as one
    micron = pin.SE3(here.rotation, here.translation + np.array([0.0, 0.0, 1e-6]))
    moved = planner.plan(waypoint_program([micron], 0.0), q0)
    assert moved.success and moved.path_ik.path.size == 2 and moved.trajectory.duration > 0.0
