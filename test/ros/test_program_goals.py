"""Motion programs and path approaches through path_ik_node's action: path_ik_node and sim_robot run as processes.

Every goal is judged from outside the node: the result fields, and where /joint_states says the simulated arm is
(its FK against the programmed targets). Each moving test sends the arm back to where the module started with a
joint-space MOVE_J program, so the tests do not depend on their order.
"""
import numpy as np
import pinocchio as pin
import pytest
from geometry_msgs.msg import PoseStamped
from path_graph import PathGraph, current_pose, send, wait_still

from robokin_interfaces.action import ExecuteCartesianPath
from robokin_interfaces.msg import MotionMove

Goal, Result = ExecuteCartesianPath.Goal, ExecuteCartesianPath.Result
GOAL_TOLERANCE = 0.01         # [rad] path_ik_node's default goal_tolerance (config/panda_path_ik.yaml keeps it)
TARGET_TOLERANCE = 1e-3       # [m] tool position at the end of an executed goal vs its target
PLANNED_TOLERANCE = 1e-4      # [m] planned end vs target: the node's max_position_deviation


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    graph = PathGraph(tmp_path_factory.mktemp("programs"), "program_test_client")
    try:
        graph.wait_ready()
        yield graph
    finally:
        graph.close()


@pytest.fixture(scope="module")
def start_q(graph, panda):
    wait_still(graph.executor, graph.states)
    return current_pose(panda, graph.states)[0]


@pytest.fixture
def arm(graph, panda, start_q):
    """(graph, start tool pose); afterwards the arm goes back to the module's start joints."""
    wait_still(graph.executor, graph.states)
    yield graph, panda.fk(start_q)
    wait_still(graph.executor, graph.states)
    home = MotionMove(type=MotionMove.MOVE_J, joint_names=list(panda.joint_names),
                      joint_positions=start_q.tolist())
    r = send(graph, Goal(program=[home]))
    assert r.error_code == Result.SUCCESS, r.message
    wait_still(graph.executor, graph.states)
    np.testing.assert_allclose(current_pose(panda, graph.states)[0], start_q, atol=GOAL_TOLERANCE)


def stamped(pose: pin.SE3, frame="") -> PoseStamped:
    msg = PoseStamped()
    msg.header.frame_id = frame
    msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = (float(v) for v in pose.translation)
    o = msg.pose.orientation
    o.x, o.y, o.z, o.w = (float(v) for v in pin.Quaternion(pose.rotation).coeffs())
    return msg


def shifted(T: pin.SE3, offset) -> pin.SE3:
    """T moved by `offset` [m] along the base axes, same orientation."""
    return pin.SE3(T.rotation, T.translation + np.asarray(offset, float))


def move(kind, target: pin.SE3 | None = None, **fields) -> MotionMove:
    msg = MotionMove(type=kind, **{k: v for k, v in fields.items() if k != "via"})
    if target is not None:
        msg.pose = stamped(target)
    if "via" in fields:
        msg.via.point.x, msg.via.point.y, msg.via.point.z = (float(v) for v in fields["via"])
    return msg


def seconds(duration) -> float:
    return duration.sec + 1e-9 * duration.nanosec


def end_positions(trajectory) -> np.ndarray:
    return np.array(trajectory.points[-1].positions)


def tool_error(model, q, target: pin.SE3) -> float:
    return float(np.linalg.norm(model.fk(q).translation - target.translation))


def test_program_executes_with_one_report_per_move_and_ends_at_its_last_target(arm, panda):
    graph, T = arm
    targets = [shifted(T, [0.05, -0.1, -0.05]), shifted(T, [0.05, 0.0, -0.05]), shifted(T, [0.05, 0.1, -0.05]),
               shifted(T, [0.0, 0.1, 0.0])]
    program = [move(MotionMove.MOVE_J, targets[0], zone=0.02, name="above"),
               move(MotionMove.MOVE_L, targets[1], speed=0.2, name="down"),
               # a half circle about T + (0.05, 0.05, -0.05) through the point farthest along x
               move(MotionMove.MOVE_C, targets[2], via=T.translation + [0.1, 0.05, -0.05], zone=0.02),
               move(MotionMove.MOVE_L, targets[3])]
    r = send(graph, Goal(program=program))
    assert r.error_code == Result.SUCCESS, r.message
    assert r.message.startswith("executed: 4 moves"), r.message
    assert (r.failed_move, r.fraction) == (-1, 1.0)
    assert [report.name for report in r.move_reports] == ["0 MoveJ above", "1 MoveL down", "2 MoveC", "3 MoveL"]
    durations = np.array([report.duration for report in r.move_reports])
    assert np.all(durations > 0.0), durations
    total = seconds(r.trajectory.points[-1].time_from_start)
    assert durations.sum() == pytest.approx(total, abs=1e-3)
    starts = np.array([report.start_time for report in r.move_reports])
    np.testing.assert_allclose(starts[1:], (starts + durations)[:-1], atol=1e-3)    # back to back, no gap
    # the MoveL at 0.2 m/s: its peak tool speed respects the programmed speed
    assert 0.0 < r.move_reports[1].peak_tool_speed <= 0.2 * 1.01
    planned = np.array([p.positions for p in r.trajectory.points])
    # the fine stop is exact; the arc passes its via (points 100 Hz apart: a few mm at these speeds)
    assert min(tool_error(panda, q, targets[1]) for q in planned) < PLANNED_TOLERANCE
    via = pin.SE3(T.rotation, T.translation + [0.1, 0.05, -0.05])
    assert min(tool_error(panda, q, via) for q in planned) < 3e-3
    assert tool_error(panda, planned[-1], targets[-1]) < PLANNED_TOLERANCE
    wait_still(graph.executor, graph.states)
    q_end, T_end = current_pose(panda, graph.states)
    np.testing.assert_allclose(q_end, planned[-1], atol=GOAL_TOLERANCE)
    assert np.linalg.norm(T_end.translation - targets[-1].translation) < TARGET_TOLERANCE


def test_unreachable_second_move_returns_the_solved_part_and_executes_it_when_asked(arm, panda):
    graph, T = arm
    outward = T.translation * np.array([1.0, 1.0, 0.0])
    outward /= np.linalg.norm(outward)
    first = shifted(T, [0.0, 0.0, -0.05])
    program = [move(MotionMove.MOVE_L, first, name="down"),
               move(MotionMove.MOVE_L, shifted(first, 1.5 * outward), name="far"),
               move(MotionMove.MOVE_L, T)]
    planned = send(graph, Goal(program=program, plan_only=True))
    assert planned.error_code in (Result.PATH_DEVIATION, Result.SINGULARITY, Result.JOINT_LIMIT), planned.message
    assert planned.failed_move == 1 and 0.0 < planned.fraction < 1.0, (planned.failed_move, planned.fraction)
    assert planned.message.startswith("1 MoveL far"), planned.message
    assert len(planned.move_reports) == 3 and planned.move_reports[0].duration > 0.0
    # the solved part passes through the completed move's target and ends at rest
    solved = np.array([p.positions for p in planned.trajectory.points])
    assert min(tool_error(panda, q, first) for q in solved) < PLANNED_TOLERANCE
    assert np.abs(planned.trajectory.points[-1].velocities).max() < 1e-9
    q_before = current_pose(panda, graph.states)[0]
    np.testing.assert_allclose(q_before, solved[0], atol=1e-6)       # plan_only: the arm did not move

    executed = send(graph, Goal(program=program, execute_partial=True))
    assert executed.error_code == planned.error_code and executed.failed_move == 1, executed.message
    assert "executed the solved part (1 of 3 moves)" in executed.message, executed.message
    wait_still(graph.executor, graph.states)
    np.testing.assert_allclose(current_pose(panda, graph.states)[0], end_positions(executed.trajectory),
                               atol=GOAL_TOLERANCE)


def test_malformed_programs_are_invalid_goals_naming_the_move(graph, panda, start_q):
    T = panda.fk(start_q)
    arc = move(MotionMove.MOVE_C, shifted(T, [0.0, 0.1, 0.0]), via=T.translation + [0.05, 0.05, 0.0], name="arc")
    arc.via.header.frame_id = "no_such_frame"
    missing = MotionMove(type=MotionMove.MOVE_J, joint_names=list(panda.joint_names[:-1]),
                         joint_positions=start_q[:-1].tolist())
    cases = [([move(MotionMove.MOVE_L, shifted(T, [0.0, 0.0, -0.02])), arc],
              ["move 1 (MoveC arc) via", "no_such_frame"]),
             ([missing], ["move 0 (MoveJ): lacks joints ['panda_joint7']"])]
    for program, words in cases:
        r = send(graph, Goal(program=program, plan_only=True))
        assert r.error_code == Result.INVALID_GOAL, r.message
        assert all(word in r.message for word in words), r.message
        assert r.failed_move == -1 and len(r.trajectory.points) == 0


@pytest.mark.parametrize("approach", [Goal.APPROACH_MOVEJ, Goal.APPROACH_MOVEL])
def test_approach_reaches_the_path_start_first_and_ends_at_the_last_waypoint(arm, panda, approach):
    graph, T = arm
    waypoints = [shifted(T, [0.05, 0.05, -0.05]), shifted(T, [0.05, -0.05, -0.05])]
    goal = Goal(waypoints=[stamped(w) for w in waypoints], approach=approach)
    r = send(graph, goal)
    assert r.error_code == Result.SUCCESS, r.message
    assert r.failed_move == -1 and "approach move" in r.message, r.message
    # the path proper is the 10 cm between the waypoints: the approach is not part of its arc length
    assert r.arc_length == pytest.approx(0.1, abs=1e-3)
    solved = np.array([p.positions for p in r.trajectory.points])
    assert min(tool_error(panda, q, waypoints[0]) for q in solved) < PLANNED_TOLERANCE
    wait_still(graph.executor, graph.states)
    q_end, T_end = current_pose(panda, graph.states)
    np.testing.assert_allclose(q_end, solved[-1], atol=GOAL_TOLERANCE)
    assert np.linalg.norm(T_end.translation - waypoints[-1].translation) < TARGET_TOLERANCE


def test_approach_refuse_with_the_tool_away_is_an_invalid_goal_giving_the_distance(graph, panda, start_q):
    wait_still(graph.executor, graph.states)
    q, T = current_pose(panda, graph.states)
    offset = np.array([0.03, 0.04, 0.0])                      # 50 mm from the tool
    goal = Goal(waypoints=[stamped(shifted(T, offset)), stamped(shifted(T, offset + [0.0, 0.05, 0.0]))],
                approach=Goal.APPROACH_REFUSE)
    r = send(graph, goal)
    assert r.error_code == Result.INVALID_GOAL, r.message
    assert "50.0 mm" in r.message and "REFUSE" in r.message, r.message
    assert r.failed_move == -1
    np.testing.assert_allclose(current_pose(panda, graph.states)[0], q, atol=1e-9)    # never moved


def test_program_moves_in_millimetres_collinear_arcs_and_zero_length_moves_are_told(graph, panda, start_q):
    """Issue 24 items 6 and 7, through the action (plan only). A MoveL written in millimetres planned 838,506 dense
    samples for seconds and failed without naming units: now INVALID_GOAL at once, "millimetres given as metres?".
    A collinear MoveC said "waypoint 0: ..." inside a program: now the move's label alone. A MoveL to where the arm
    already is was accepted silently: now accepted with a note naming it."""
    T = panda.fk(start_q)
    in_mm = pin.SE3(T.rotation, T.translation * 1000.0)
    r = send(graph, Goal(program=[move(MotionMove.MOVE_L, shifted(T, [0.0, 0.0, -0.02])),
                                  move(MotionMove.MOVE_L, in_mm, name="place")], plan_only=True))
    assert r.error_code == Result.INVALID_GOAL, r.message
    assert r.message.endswith("1 MoveL place: its target is 575.3 m from the arm's shoulder, 608 times its reach of "
                              "0.947 m (refused beyond 3): millimetres given as metres? (or the wrong frame_id)"), \
        r.message
    collinear = move(MotionMove.MOVE_C, shifted(T, [0.1, 0.0, 0.0]), via=T.translation + [0.05, 0.0, 0.0],
                     name="arc")
    r = send(graph, Goal(program=[collinear], plan_only=True))
    assert r.error_code == Result.INVALID_GOAL, r.message
    assert "0 MoveC arc: the arc's start, via" in r.message and "waypoint" not in r.message, r.message
    down = shifted(T, [0.0, 0.0, -0.02])
    r = send(graph, Goal(program=[move(MotionMove.MOVE_L, down), move(MotionMove.MOVE_L, down, name="again")],
                         plan_only=True))
    assert r.error_code == Result.SUCCESS, r.message
    assert r.message.endswith("; note: zero-length move(s) 1 MoveL again: the target is where the move starts, "
                              "nothing to move"), r.message
