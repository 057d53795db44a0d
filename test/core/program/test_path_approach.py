"""Approach moves: a waypoint path that starts at its first waypoint, reached by MoveJ / MoveL, or refused."""
import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.errors import PathInputError
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.program.moves import Approach, waypoint_program
from robokin_ros.core.program.planner import MotionPlanner


@pytest.fixture(scope="module")
def planner(panda):
    return MotionPlanner(panda, PathConfig(robot="panda"))


def _square(panda, offset):
    T = panda.fk(panda.home())
    corners = ([0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.1, 0.1, 0.0])
    return [pin.SE3(T.rotation, T.translation + np.asarray(offset) + np.asarray(c)) for c in corners]


def _tool_positions(panda, positions):
    return np.array([panda.fk(q).translation for q in positions])


@pytest.mark.parametrize("approach", [Approach.JOINT, Approach.LINEAR])
def test_approach_reaches_the_first_waypoint_then_follows_the_path(panda, planner, approach):
    waypoints = _square(panda, [0.05, -0.1, -0.1])
    plan = planner.plan(waypoint_program(waypoints, 0.0, approach), panda.home())
    assert plan.success and plan.approach is not None
    lead = plan.approach
    # the approach ends at rest at waypoints[0] (FK of its last point), and the trajectory begins with it
    reached = panda.fk(lead.positions[-1])          # within the path IK's accuracy (the tolerance is 0.1 mm)
    assert np.linalg.norm(reached.translation - waypoints[0].translation) < 1e-5
    assert np.abs(lead.velocities[-1]).max() < 1e-9
    n = len(lead.times)
    np.testing.assert_allclose(plan.trajectory.positions[:n], lead.positions)
    # after the approach the tool runs the straight edges: the path part starts at waypoints[0]
    assert plan.path_ik.path.positions[0] == pytest.approx(waypoints[0].translation, abs=1e-5)
    tool = _tool_positions(panda, plan.trajectory.positions[n:])
    assert np.abs(tool[:, 2] - waypoints[0].translation[2]).max() < 1e-3
    if approach is Approach.LINEAR:          # the approach itself is a line: every point on the segment
        p = _tool_positions(panda, lead.positions)
        a, b = panda.fk(panda.home()).translation, waypoints[0].translation
        d = (b - a) / np.linalg.norm(b - a)
        off = np.linalg.norm(np.cross(p - a, d), axis=1)
        assert off.max() < 2e-4


def test_movej_approach_is_a_synchronised_joint_line(panda, planner):
    plan = planner.plan(waypoint_program(_square(panda, [0.05, -0.1, -0.1]), 0.0, Approach.JOINT), panda.home())
    lead = plan.approach
    delta = lead.positions[-1] - lead.positions[0]
    # every joint is the same fraction of the way at every sample: one profile on a straight joint line
    fraction = (lead.positions - lead.positions[0]) @ delta / (delta @ delta)
    np.testing.assert_allclose(lead.positions, lead.positions[0] + np.outer(fraction, delta), atol=1e-12)
    v_max, a_max = planner.limits()[:2]
    assert (np.abs(lead.velocities) / v_max).max() <= 1.0 + 1e-9
    assert (np.abs(lead.accelerations) / a_max).max() <= 1.0 + 1e-9


def test_refuse_names_the_offset_and_path_keeps_todays_meaning(panda, planner):
    waypoints = _square(panda, [0.05, -0.1, -0.1])
    with pytest.raises(PathInputError, match=r"waypoints\[0\], 150\.0 mm .* approach REFUSE"):
        planner.plan(waypoint_program(waypoints, 0.0, Approach.REFUSE), panda.home())
    today = planner.plan(waypoint_program(waypoints, 0.0), panda.home())
    same = planner.plan(waypoint_program(waypoints, 0.0, Approach.PATH), panda.home())
    np.testing.assert_array_equal(today.trajectory.positions, same.trajectory.positions)
    assert same.approach is None


def test_no_approach_move_within_the_path_tolerance(panda, planner):
    waypoints = _square(panda, [0.0, 0.0, 0.0])          # waypoints[0] is the current tool pose
    for approach in (Approach.JOINT, Approach.LINEAR, Approach.REFUSE):
        plan = planner.plan(waypoint_program(waypoints, 0.0, approach), panda.home())
        assert plan.success and plan.approach is None


def test_unreachable_first_waypoint_is_refused_with_the_reason(panda, planner):
    T = panda.fk(panda.home())
    far = [pin.SE3(T.rotation, np.array([1.5, 0.0, 0.3]))]
    with pytest.raises(PathInputError, match="approach MoveJ: no joint configuration"):
        planner.plan(waypoint_program(far, 0.0, Approach.JOINT), panda.home())
