"""Jerk-limited paths, programs and stops through the real path_ik_node (issue 27, item 3): path_ik_node and
sim_robot run as processes, the jerk limits set by parameter (a tenth of Franka's published joint jerk limits, so
that they bind). What the controller receives is measured from outside the node: every JointTrajectory on the
controller's topic (execution: topic, the messages sim_robot plays), as a joint_trajectory_controller plays it (its
quintic through positions, velocities and accelerations: exact peak jerk per interval, and independently finite
differences of its acceleration sampled at 1 kHz). The same goals planned with execution: action return the
trajectory a FollowJointTrajectory goal would carry (plan_only), measured the same way."""
import numpy as np
import pinocchio as pin
import pytest
from path_graph import PathGraph, current_pose, send, wait_still
from ros_helpers import se3_pose_stamped, spin_until
from trajectory_msgs.msg import JointTrajectory

from robokin_interfaces.action import ExecuteCartesianPath
from robokin_interfaces.msg import MotionMove
from robokin_ros.core.trajectory.jerk_check import played_jerk_peaks, sampled_jerk
from robokin_ros.core.trajectory.outgoing_check import spline_peaks

Goal, Result = ExecuteCartesianPath.Goal, ExecuteCartesianPath.Result
A_MAX = np.array([15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0])              # config/panda_path_ik.yaml [rad/s^2]
# a tenth of Franka's published joint jerk limits (frankaemika.github.io/docs/control_parameters.html) [rad/s^3]
J_MAX = np.array([7500.0, 3750.0, 5000.0, 6250.0, 7500.0, 10000.0, 10000.0]) * 0.1
TOLERANCE = 2e-3              # the outgoing check's relative tolerance
TOPIC = "/joint_trajectory_controller/joint_trajectory"
JERK_ARGS = ["-p", "max_joint_jerk:=[" + ", ".join(f"{j:.1f}" for j in J_MAX) + "]", "-p", "velocity_scaling:=1.0",
             "-p", "acceleration_scaling:=1.0"]


def _graph(tmp_path_factory, name, mode):
    graph = PathGraph(tmp_path_factory.mktemp(name), f"path_jerk_{name}",
                      node_args=[*JERK_ARGS, "-p", f"execution:={mode}"])
    graph.received = []
    graph.node.create_subscription(JointTrajectory, TOPIC, graph.received.append, 10)
    try:
        graph.wait_ready()
        wait_still(graph.executor, graph.states)
    except AssertionError:
        graph.close()
        raise
    return graph


@pytest.fixture(scope="module")
def topic_graph(tmp_path_factory):
    graph = _graph(tmp_path_factory, "topic", "topic")
    try:
        yield graph
    finally:
        graph.close()


def arrays(msg: JointTrajectory):
    t = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in msg.points])
    return (t, np.array([p.positions for p in msg.points]), np.array([p.velocities for p in msg.points]),
            np.array([p.accelerations for p in msg.points]))


def played_jerk_ratio(msg: JointTrajectory) -> float:
    """Peak |jerk| / limit over the joints of the controller's quintic through the message's points, measured two
    ways; also checks the played acceleration."""
    args = arrays(msg)
    exact = played_jerk_peaks(*args).jerk
    sampled = np.abs(sampled_jerk(*args).jerk).max(axis=0)
    assert np.all(sampled <= exact * (1 + 1e-6) + 1e-6)
    assert np.all(sampled <= J_MAX * (1 + TOLERANCE)), sampled / J_MAX
    assert np.all(spline_peaks(*args).acceleration <= A_MAX * (1 + TOLERANCE))
    return float((exact / J_MAX).max())


def rectangle_goal(model, states) -> Goal:
    _, T = current_pose(model, states)
    corners = [(0.08, 0, 0), (0.08, 0.1, 0), (-0.04, 0.1, 0), (-0.04, 0, 0), (0, 0, 0)]
    return Goal(waypoints=[se3_pose_stamped(pin.SE3(T.rotation, T.translation + np.array(c))) for c in corners],
                blend_radius=0.02)


def program_goal(model, states) -> Goal:
    """A blended MoveJ, two MoveL, an exact stop and a MoveJ between exact stops (the S-curve, its points at its
    breakpoints)."""
    q, T = current_pose(model, states)
    names = list(model.joint_names)
    moves = [MotionMove(type=MotionMove.MOVE_J, joint_names=names, joint_positions=(q + 0.15).tolist(), zone=0.02),
             MotionMove(type=MotionMove.MOVE_L, speed=0.2, zone=0.01,
                        pose=se3_pose_stamped(pin.SE3(T.rotation, T.translation + [0, 0, 0.05]))),
             MotionMove(type=MotionMove.MOVE_L, pose=se3_pose_stamped(T), speed=0.2),
             MotionMove(type=MotionMove.MOVE_J, joint_names=names, joint_positions=(q - 0.1).tolist())]
    return Goal(program=moves)


@pytest.mark.parametrize("goal_of", [rectangle_goal, program_goal], ids=["path", "program"])
def test_what_the_controller_receives_is_within_the_jerk_limits(topic_graph, panda, goal_of):
    graph = topic_graph
    wait_still(graph.executor, graph.states)
    graph.received.clear()
    result = send(graph, goal_of(panda, graph.states))
    assert result.error_code == Result.SUCCESS, result.message
    assert "peak jerk" in result.message and "% of the limit" in result.message
    assert result.peak_jerk_share <= 1 + TOLERANCE
    assert spin_until(graph.executor, lambda: graph.received, 5.0)
    ratios = [played_jerk_ratio(msg) for msg in graph.received]
    assert max(ratios) <= 1 + TOLERANCE
    assert result.peak_jerk_share == pytest.approx(max(ratios), rel=1e-3)
    if goal_of is program_goal:                  # the cycle report: each move's share, the largest the measured one
        shares = np.array([m.peak_jerk_share for m in result.move_reports])
        assert np.all(np.isfinite(shares)) and shares.max() == pytest.approx(max(ratios), rel=1e-3)
    print(f"{goal_of.__name__}: {len(graph.received)} trajectory message(s), played peak jerk "
          f"{max(ratios) * 100:.1f} % of the limit; {result.message}")


def test_a_cancel_stops_within_the_jerk_limits(topic_graph, panda):
    """A cancel mid-path: the stop the controller receives (the running points, then the braking along the path)
    keeps the jerk limits too."""
    graph = topic_graph
    wait_still(graph.executor, graph.states)
    graph.received.clear()
    _, T = current_pose(panda, graph.states)
    goal = Goal(waypoints=[se3_pose_stamped(pin.SE3(T.rotation, T.translation + np.array([0.0, 0.25, 0.0]))),
                           se3_pose_stamped(T)])
    seen = []
    future = graph.client.send_goal_async(goal, feedback_callback=lambda f: seen.append(f.feedback))
    assert spin_until(graph.executor, future.done, 15.0) and future.result().accepted
    handle = future.result()
    assert spin_until(graph.executor, lambda: seen and seen[-1].stage == "executing" and seen[-1].progress >= 0.3,
                      30.0)
    handle.cancel_goal_async()
    result = handle.get_result_async()
    assert spin_until(graph.executor, result.done, 45.0)
    assert result.result().result.error_code == Result.CANCELED, result.result().result.message
    assert len(graph.received) >= 2, "no stop was published"
    stop_ratio = played_jerk_ratio(graph.received[-1])
    assert stop_ratio <= 1 + TOLERANCE
    stop = arrays(graph.received[-1])
    assert np.all(stop[2][-1] == 0.0)
    print(f"cancel: the stop plays at {stop_ratio * 100:.1f} % of the jerk limit over {stop[0][-1]:.3f} s")


def test_plan_only_results_are_within_the_jerk_limits(tmp_path_factory, panda):
    """execution: action (the default): the trajectory a FollowJointTrajectory goal would carry, returned by
    plan_only goals, path and program."""
    graph = _graph(tmp_path_factory, "action", "action")
    try:
        for goal in (rectangle_goal(panda, graph.states), program_goal(panda, graph.states)):
            goal.plan_only = True
            result = send(graph, goal)
            assert result.error_code == Result.SUCCESS, result.message
            assert played_jerk_ratio(result.trajectory) <= 1 + TOLERANCE
        refused = send(graph, Goal(waypoints=rectangle_goal(panda, graph.states).waypoints, velocity_scaling=50.0))
        assert refused.error_code == Result.INVALID_GOAL and np.isnan(refused.peak_jerk_share)
    finally:
        graph.close()
