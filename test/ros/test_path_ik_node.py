"""path_ik_node against a real rclpy action client: path_ik_node and sim_robot run as separate processes.

path_ik_node executes through sim_robot's FollowJointTrajectory action (its default `execution: action`);
sim_robot checks every trajectory with the default joint_trajectory_controller rules and reports each refusal on
/sim_robot/rejected, which the tests watch."""
import math
import time

import numpy as np
import pytest
import rclpy
from action_msgs.msg import GoalStatus
from node_process import Process
from path_graph import ACTION, PARAMS, PathGraph, current_pose, wait_still
from rclpy.action import ActionClient
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter, parameter_value_to_python
from rclpy.parameter_client import AsyncParameterClient
from ros_helpers import pose_stamped, spin_until
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory

from robokin_interfaces.action import ExecuteCartesianPath
from robokin_interfaces.msg import MotionMove
from robokin_ros.core.trajectory.controller_rules import jtc_rejection
from robokin_ros.ros.jtc_conversions import trajectory_facts

Result = ExecuteCartesianPath.Result


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    """sim_robot + path_ik_node processes and a client node; yields (executor, node, client, states, trajectories,
    procs, rejections): joint states, trajectories on the JTC topic and sim_robot's refusals as they arrive."""
    graph = PathGraph(tmp_path_factory.mktemp("path_ik"), "path_test_client")
    trajectories, rejections = [], []
    graph.node.create_subscription(String, "/sim_robot/rejected", lambda m: rejections.append(m.data), 10)
    graph.node.create_subscription(JointTrajectory, "/joint_trajectory_controller/joint_trajectory",
                                   trajectories.append, 10)
    try:
        graph.wait_ready()
        yield graph.executor, graph.node, graph.client, graph.states, trajectories, graph.procs, rejections
    finally:
        graph.close()


def tool_quat(T):
    import pinocchio as pin
    return pin.Quaternion(T.rotation).coeffs()


def send(executor, client, goal, timeout=60.0):
    """Send a goal, wait for its result; returns (goal_handle, result wrapper or None if rejected)."""
    future = client.send_goal_async(goal)
    assert spin_until(executor, future.done, 15.0), "goal response timed out"
    handle = future.result()
    if not handle.accepted:
        return handle, None
    result_future = handle.get_result_async()
    assert spin_until(executor, result_future.done, timeout), "no result"
    return handle, result_future.result()


def send_and_wait_executing(executor, client, goal):
    """Send a goal and wait until path_ik_node reports it executing on the controller; the goal handle."""
    stages = []
    future = client.send_goal_async(goal, feedback_callback=lambda f: stages.append(f.feedback.stage))
    assert spin_until(executor, future.done, 15.0) and future.result().accepted
    assert spin_until(executor, lambda: "executing" in stages, 15.0), "never executing"
    return future.result()


def goal_from(model, states, offsets, **kwargs):
    q, T = current_pose(model, states)
    quat = tool_quat(T)
    goal = ExecuteCartesianPath.Goal()
    goal.waypoints = [pose_stamped(T.translation + np.asarray(d), quat) for d in offsets]
    for key, value in kwargs.items():
        setattr(goal, key, value)
    return goal


def test_plan_only_rectangle_returns_a_valid_trajectory(graph, panda):
    executor, _, client, states, *_ = graph
    offsets = [[0.1, 0, 0], [0.1, 0.1, 0], [-0.05, 0.1, 0], [0, 0, 0]]
    q, _ = current_pose(panda, states)
    _, res = send(executor, client, goal_from(panda, states, offsets, blend_radius=0.02, plan_only=True))
    r = res.result
    assert r.error_code == Result.SUCCESS, r.message
    assert res.status == GoalStatus.STATUS_SUCCEEDED
    assert r.fraction == pytest.approx(1.0)
    times = [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in r.trajectory.points]
    assert times[0] == 0.0 and np.all(np.diff(times) > 0)
    np.testing.assert_allclose(r.trajectory.points[0].positions, q, atol=2e-3)   # sim moves only when told
    assert list(r.trajectory.joint_names) == list(panda.joint_names)


def test_bad_goals_get_clear_results_and_node_keeps_serving(graph, panda):
    executor, _, client, states, *_ = graph
    q, T = current_pose(panda, states)
    cases = {
        "empty": (ExecuteCartesianPath.Goal(plan_only=True), "no waypoints"),
        "nan": (goal_from(panda, states, [[math.nan, 0, 0]], plan_only=True), "non-finite"),
        "unknown frame": (goal_from(panda, states, [[0.1, 0, 0]], plan_only=True), "not_a_frame"),
        "unknown tip": (goal_from(panda, states, [[0.1, 0, 0]], plan_only=True, tip_frame="bad_tip"),
                        "bad_tip"),
        "radius": (goal_from(panda, states, [[0.1, 0, 0], [0.1, 0.1, 0]], plan_only=True,
                             blend_radius=0.2), "blend radius"),
        "negative scaling": (goal_from(panda, states, [[0.1, 0, 0]], plan_only=True, velocity_scaling=-0.5),
                             "velocity_scaling"),
        "bad quaternion": (ExecuteCartesianPath.Goal(waypoints=[pose_stamped(T.translation, [0, 0, 0, 0.5])],
                                                     plan_only=True), "unit quaternion"),
    }
    cases["unknown frame"][0].waypoints[0].header.frame_id = "not_a_frame"
    for name, (goal, expected) in cases.items():
        _, res = send(executor, client, goal)
        assert res is not None, name
        assert res.result.error_code == Result.INVALID_GOAL, (name, res.result.message)
        assert expected in res.result.message, (name, res.result.message)
        assert res.status == GoalStatus.STATUS_ABORTED
    _, res = send(executor, client, goal_from(panda, states, [[0, 0, -0.05]], plan_only=True))
    assert res.result.error_code == Result.SUCCESS, res.result.message


def test_waypoint_in_another_frame(graph, panda):
    executor, _, client, states, *_ = graph
    # 5 cm along the tool's own z axis, expressed in the tool frame
    goal = ExecuteCartesianPath.Goal(plan_only=True)
    goal.waypoints = [pose_stamped([0, 0, 0.05], [0, 0, 0, 1], frame="panda_hand_tcp")]
    _, res = send(executor, client, goal)
    assert res.result.error_code == Result.SUCCESS, res.result.message
    assert res.result.arc_length == pytest.approx(0.05, abs=1e-6)


def test_beyond_reach_returns_the_solved_prefix(graph, panda):
    executor, _, client, states, *_ = graph
    _, res = send(executor, client, goal_from(panda, states, [[0.9, 0, 0]], plan_only=True))
    r = res.result
    assert r.error_code in (Result.PATH_DEVIATION, Result.SINGULARITY, Result.JOINT_LIMIT), r.message
    assert 0.0 < r.fraction < 1.0 and r.failed_sample > 0
    assert len(r.trajectory.points) > 1
    assert r.failure_pose.position.x > current_pose(panda, states)[1].translation[0]


def test_execute_then_cancel_and_concurrent_clients(graph, panda):
    executor, node, client, states, trajectories, _, rejections = graph
    # 1) execute a short move to completion
    _, res = send(executor, client, goal_from(panda, states, [[0, 0, -0.03]], velocity_scaling=1.0,
                                              acceleration_scaling=1.0))
    assert res.result.error_code == Result.SUCCESS, res.result.message
    end = np.array(res.result.trajectory.points[-1].positions)
    assert spin_until(executor, lambda: np.abs(current_pose(panda, states)[0] - end).max() < 0.01, 10.0)
    # 2) a slow goal; a second client's goal is rejected while it runs; then cancel the first
    other = ActionClient(node, ExecuteCartesianPath, ACTION)
    try:
        assert spin_until(executor, other.server_is_ready, 15.0)
        slow = goal_from(panda, states, [[0, 0, 0.1]], velocity_scaling=0.05, acceleration_scaling=0.05)
        handle = send_and_wait_executing(executor, client, slow)
        rejected_handle, rejected = send(executor, other, goal_from(panda, states, [[0, 0.02, 0]]))
        assert rejected is None and not rejected_handle.accepted
        cancel = handle.cancel_goal_async()
        assert spin_until(executor, cancel.done, 15.0)
        result_future = handle.get_result_async()
        assert spin_until(executor, result_future.done, 20.0)
        assert result_future.result().result.error_code == Result.CANCELED
        assert result_future.result().status == GoalStatus.STATUS_CANCELED
        # the controller's goal was canceled: the arm stops short of the end and stays there
        wait_still(executor, states)
        q_stop = current_pose(panda, states)[0]
        end = np.array(result_future.result().result.trajectory.points[-1].positions)
        assert np.abs(q_stop - end).max() > 0.01, "the arm went on to the end after the cancel"
        spin_until(executor, lambda: False, 0.3)
        np.testing.assert_allclose(current_pose(panda, states)[0], q_stop, atol=1e-6)
        assert not trajectories, "execution: action published on the trajectory topic"
        assert not rejections, f"sim_robot (default JTC rules) refused: {rejections}"
    finally:
        other.destroy()


def test_no_joint_states_gives_a_result(tmp_path):
    proc = Process("path_ik_node", ["--ros-args", "--params-file", PARAMS, "-r", "__ns:=/lonely",
                                    "-p", "joint_topic:=/lonely/joint_states"], tmp_path)
    context = Context()
    rclpy.init(context=context)
    executor = SingleThreadedExecutor(context=context)
    node = rclpy.create_node("lonely_client", context=context)
    executor.add_node(node)
    client = ActionClient(node, ExecuteCartesianPath, "/lonely/path_ik_node/execute_cartesian_path")
    try:
        assert spin_until(executor, client.server_is_ready, 60.0), proc.output
        goal = ExecuteCartesianPath.Goal(waypoints=[pose_stamped([0.4, 0, 0.4], [1, 0, 0, 0])])
        _, res = send(executor, client, goal)
        assert res.result.error_code == Result.NO_JOINT_STATE
        assert "joint state" in res.result.message
    finally:
        client.destroy()
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)
        proc.stop()
        time.sleep(0)


def test_nav_path_topic_executes_and_markers_show_the_plan_and_the_failure(graph, panda):
    """Fire-and-forget nav_msgs/Path on ~/path: a reachable path is sent to the controller (its action) and drawn;
    an unreachable one is refused, sends nothing, and its failure point is drawn."""
    from nav_msgs.msg import Path
    from visualization_msgs.msg import Marker, MarkerArray
    executor, node, _, states, trajectories, *_ = graph
    markers = []
    node.create_subscription(MarkerArray, "/path_ik_node/markers", markers.append, 10)
    pub = node.create_publisher(Path, "/path_ik_node/path", 10)
    assert spin_until(executor, lambda: pub.get_subscription_count() > 0, 15.0)

    def still():                                       # the previous test's motion has finished
        if len(states) < 2 or states[-1].header.stamp == states[0].header.stamp:
            return False
        recent = states[-60:]
        return np.abs(np.array(recent[-1].position) - np.array(recent[0].position)).max() < 1e-7
    assert spin_until(executor, still, 20.0), "the arm never came to rest"
    _, T = current_pose(panda, states)
    target = T.translation + np.array([0.0, 0.0, 0.05])
    path = Path()
    path.poses = [pose_stamped(target, tool_quat(T), panda.base_frame)]
    markers_before = len(markers)
    pub.publish(path)
    assert spin_until(executor, lambda: len(markers) > markers_before, 15.0), "no plan drawn"
    strips = [m for m in markers[-1].markers if m.type == Marker.LINE_STRIP]
    assert strips and len(strips[0].points) >= 2
    assert spin_until(executor, lambda: np.linalg.norm(current_pose(panda, states)[1].translation
                                                       - target) < 1e-3, 15.0), "the arm did not get there"

    far = Path()
    # beyond the arm's reach but inside the reach bound, so the IK runs and fails part way
    far.poses = [pose_stamped(target + np.array([1.0, 0.0, 0.0]), tool_quat(T), panda.base_frame)]
    markers_before = len(markers)
    pub.publish(far)
    assert spin_until(executor, lambda: len(markers) > markers_before, 15.0)
    spin_until(executor, lambda: False, 0.5)
    assert np.linalg.norm(current_pose(panda, states)[1].translation - target) < 1e-3, \
        "the arm moved on an unreachable path"
    assert not trajectories, "execution: action published on the trajectory topic"
    assert any(m.type == Marker.SPHERE for m in markers[-1].markers), "the failure point is drawn"


def test_far_waypoints_are_invalid_goals_naming_the_waypoint(graph, panda):
    executor, _, client, states, *_ = graph
    q, T = current_pose(panda, states)
    for far, shown in ((1e5, "1e+05"), (1e300, "1e+300")):
        goal = ExecuteCartesianPath.Goal(plan_only=True, waypoints=[
            pose_stamped(T.translation + [0.02, 0, 0], tool_quat(T), panda.base_frame),
            pose_stamped([far, 0.0, 0.0], tool_quat(T), panda.base_frame)])
        _, res = send(executor, client, goal)
        r = res.result
        assert r.error_code == Result.INVALID_GOAL, r.message
        assert res.status == GoalStatus.STATUS_ABORTED
        assert f"waypoint 1 is {shown} m from the arm's shoulder" in r.message, r.message
        assert "millimetres given as metres?" in r.message
    _, res = send(executor, client, goal_from(panda, states, [[0, 0, -0.02]], plan_only=True))
    assert res.result.error_code == Result.SUCCESS, res.result.message


def test_a_path_out_of_reach_returns_its_reachable_part_and_executes_it_when_asked(graph, panda):
    """1.5 m outward: planned as far as the arm can follow (the fraction, the reason, the solved part timed);
    with execute_partial the arm goes there and the result keeps the failure code. The arm is brought back."""
    executor, _, client, states, *_ = graph
    wait_still(executor, states)
    q, T = current_pose(panda, states)
    outward = T.translation * np.array([1.0, 1.0, 0.0])
    outward /= np.linalg.norm(outward)
    far = [1.5 * outward]
    _, res = send(executor, client, goal_from(panda, states, far, plan_only=True))
    r = res.result
    # the arm stretches out: the reason names the singularity and the distance covered, not the path tolerance
    assert r.error_code == Result.SINGULARITY and 0.1 < r.fraction < 0.6, r.message
    assert "the arm cannot follow further" in r.message and "mm of 1500.0 mm" in r.message, r.message
    # the solved part ends at rest as a default JTC requires (|v| within float epsilon)
    assert len(r.trajectory.points) >= 2
    assert jtc_rejection(trajectory_facts(r.trajectory), panda.joint_names, 0) is None
    _, res = send(executor, client, goal_from(panda, states, far, execute_partial=True))
    r = res.result
    assert r.error_code == Result.SINGULARITY and "executed the solved part" in r.message, r.message
    wait_still(executor, states)
    moved = current_pose(panda, states)[1].translation - T.translation
    np.testing.assert_allclose(moved, r.arc_length * outward, atol=1e-3)
    # back in joint space: a Cartesian line out of the stretched arm starts next to the singularity the solved part
    # ended at, where the 0.1 mm path tolerance may not hold in its first millimetre
    home = MotionMove(type=MotionMove.MOVE_J, joint_names=list(panda.joint_names), joint_positions=q.tolist())
    _, res = send(executor, client, ExecuteCartesianPath.Goal(program=[home]))
    assert res.result.error_code == Result.SUCCESS, res.result.message
    wait_still(executor, states)


def test_back_to_back_goals_never_both_run(graph, panda):
    """preempt=false: the goal callback claims the busy state, so goals sent right after the first (before
    the first's execute callback starts) are rejected every time. (With the busy flag set only in the execute
    callback, this caught two accepted goals in 3 of 4 runs.)"""
    executor, _, client, states, *_ = graph
    wait_still(executor, states)
    for k in range(15):
        dz = 0.01 if k % 2 == 0 else -0.01                  # up and down: the arm stays where it was
        goal = goal_from(panda, states, [[0, 0, dz]], velocity_scaling=1.0, acceleration_scaling=1.0)
        futures = [client.send_goal_async(goal) for _ in range(3)]   # no spin in between
        assert spin_until(executor, lambda: all(f.done() for f in futures), 15.0), "goal responses timed out"
        accepted = [f.result() for f in futures if f.result().accepted]
        results = [h.get_result_async() for h in accepted]
        assert spin_until(executor, lambda: all(r.done() for r in results), 20.0), f"burst {k}: no result"
        outcomes = [(r.result().result.error_code, r.result().result.message) for r in results]
        assert len(accepted) == 1, f"burst {k}: {len(accepted)} goals accepted: {outcomes}"
        assert accepted[0] is futures[0].result(), f"burst {k}: a later goal overtook the first"
        assert outcomes[0][0] == Result.SUCCESS, outcomes


def set_params(executor, params, **values):
    future = params.set_parameters([Parameter(name, value=value) for name, value in values.items()])
    assert spin_until(executor, future.done, 15.0), "set_parameters timed out"
    return future.result().results


def get_param(executor, params, name):
    future = params.get_parameters([name])
    assert spin_until(executor, future.done, 15.0), "get_parameters timed out"
    return parameter_value_to_python(future.result().values[0])


def duration_of(trajectory):
    t = trajectory.points[-1].time_from_start
    return t.sec + 1e-9 * t.nanosec


def test_runtime_parameters_are_validated_and_applied(graph, panda):
    executor, node, client, states, trajectories, *_ = graph
    params = AsyncParameterClient(node, "path_ik_node")
    assert params.wait_for_services(15.0)
    refused = {
        "axis_mask": ([True, True], "axis_mask=(True, True) must be six booleans with at least one true"),
        "max_joint_acceleration": ([1.0, 2.0], "max_joint_acceleration has 2 entries but the chain has 7"),
        "velocity_scaling": (0.0, "velocity_scaling"),
        "preempt": ("yes", "Wrong parameter type"),       # rclpy checks the declared type itself
        "joint_topic": ("/elsewhere", "read-only"),
    }
    refused_masks = {"all false": ([False] * 6, "at least one true"), "digits": ("111111", "a list of booleans")}
    for name, (value, reason) in [*refused.items(), *(("axis_mask", v) for v in refused_masks.values())]:
        (res,) = set_params(executor, params, **{name: value})
        assert not res.successful, name
        assert reason in res.reason, (name, res.reason)
    assert get_param(executor, params, "axis_mask") == [True] * 6        # nothing half applied
    wait_still(executor, states)
    plan = goal_from(panda, states, [[0, 0.05, 0]], plan_only=True)
    _, res = send(executor, client, plan)
    assert res.result.error_code == Result.SUCCESS, res.result.message
    base = duration_of(res.result.trajectory)
    try:
        # slower defaults are used by the next goal (goal scaling 0 = the node's default)
        results = set_params(executor, params, velocity_scaling=0.1, acceleration_scaling=0.1)
        assert all(r.successful for r in results), [r.reason for r in results]
        _, res = send(executor, client, plan)
        assert res.result.error_code == Result.SUCCESS, res.result.message
        # 5x slower limits: between sqrt(5)x and 5x, less the share of the acceleration limits the faster plan
        # gave up so that the controller's spline stays within them (core/path/timing.py; ~0.75 on this line)
        assert duration_of(res.result.trajectory) > 1.5 * base
        # preempt=true: a second goal cancels the running one (PREEMPTED) and runs itself
        (res,) = set_params(executor, params, preempt=True)
        assert res.successful, res.reason
        slow = goal_from(panda, states, [[0, 0, 0.05]])
        first_handle = send_and_wait_executing(executor, client, slow)
        _, second = send(executor, client, goal_from(panda, states, [[0, 0, -0.01]], velocity_scaling=1.0,
                                                     acceleration_scaling=1.0))
        assert second is not None and second.result.error_code == Result.SUCCESS, second.result.message
        first_result = first_handle.get_result_async()
        assert spin_until(executor, first_result.done, 15.0)
        assert first_result.result().result.error_code == Result.PREEMPTED
    finally:
        results = set_params(executor, params, velocity_scaling=0.5, acceleration_scaling=0.5, preempt=False)
        assert all(r.successful for r in results)


@pytest.fixture
def path_params(graph):
    """A parameter client of path_ik_node; the execution parameters are restored after the test."""
    executor, node, *_ = graph
    params = AsyncParameterClient(node, "path_ik_node")
    assert params.wait_for_services(15.0)
    yield params
    results = set_params(executor, params, execution="action", path_tolerance=0.0, controller_response_timeout=5.0,
                         follow_joint_trajectory_action="/joint_trajectory_controller/follow_joint_trajectory")
    assert all(r.successful for r in results), [r.reason for r in results]


def test_path_tolerance_violation_is_reported_in_the_controllers_words(graph, panda, path_params):
    """A tolerance the arm cannot hold (sim_robot's error is one control cycle of motion): the controller aborts,
    the result says so and quotes it, and the arm holds where the controller stopped it."""
    executor, _, client, states, *_, rejections = graph
    wait_still(executor, states)
    assert all(r.successful for r in set_params(executor, path_params, path_tolerance=1e-5))
    _, res = send(executor, client, goal_from(panda, states, [[0, 0, -0.03]]))
    r = res.result
    assert r.error_code == Result.PATH_TOLERANCE_VIOLATED, r.message
    assert res.status == GoalStatus.STATUS_ABORTED
    assert ('/joint_trajectory_controller/follow_joint_trajectory aborted the goal with error_code -4: '
            '"Aborted due to path tolerance violation"') in r.message
    wait_still(executor, states)
    end = np.array(r.trajectory.points[-1].positions)
    assert np.abs(current_pose(panda, states)[0] - end).max() > 0.005, "the arm finished anyway"
    # the next goal carries the default tolerances again (a JTC keeps a goal's tolerances until the next goal)
    assert all(r.successful for r in set_params(executor, path_params, path_tolerance=0.0))
    _, res = send(executor, client, goal_from(panda, states, [[0, 0, 0.01]]))
    assert res.result.error_code == Result.SUCCESS, res.result.message
    assert not rejections


def test_a_controller_that_rejects_the_goal_gives_controller_rejected(ros_free_graph_sim, graph, panda,
                                                                      path_params):
    """A JTC configured for other joints (a UR5's) rejects the Panda trajectory: CONTROLLER_REJECTED, and the
    controller logged why in its own words."""
    executor, _, client, states, *_ = graph
    ur5_sim = ros_free_graph_sim
    assert all(r.successful for r in set_params(executor, path_params,
                                                follow_joint_trajectory_action="/ur5_jtc/follow_joint_trajectory"))
    _, res = send(executor, client, goal_from(panda, states, [[0, 0, -0.02]]))
    assert res.result.error_code == Result.CONTROLLER_REJECTED, res.result.message
    assert "/ur5_jtc/follow_joint_trajectory rejected the goal" in res.result.message
    assert ur5_sim.rejected_count == 1
    assert ur5_sim.last_rejection == "Joints on incoming trajectory don't match the controller joints."


@pytest.fixture
def ros_free_graph_sim(graph):
    """An in-process sim_robot for a UR5 serving /ur5_jtc/follow_joint_trajectory on the graph's executor."""
    from rclpy.parameter import Parameter as P

    from robokin_ros.nodes.sim_robot import SimRobot
    executor, node, *_ = graph
    overrides = [P("robot", value="ur5"), P("publish_tf", value=False), P("trajectory_topic", value="/ur5_jtc/jt"),
                 P("joint_states_topic", value="/ur5/joint_states"),
                 P("position_command_topic", value="/ur5/positions"), P("velocity_command_topic", value="/ur5/vel")]
    sim = SimRobot("ur5_sim", context=node.context, parameter_overrides=overrides)
    executor.add_node(sim)
    yield sim
    executor.remove_node(sim)
    sim.destroy_node()


def test_no_controller_gives_controller_unavailable(graph, panda, path_params):
    executor, _, client, states, *_ = graph
    assert all(r.successful for r in set_params(executor, path_params, controller_response_timeout=1.0,
                                                follow_joint_trajectory_action="/nobody/follow_joint_trajectory"))
    _, res = send(executor, client, goal_from(panda, states, [[0, 0, -0.02]]))
    assert res.result.error_code == Result.CONTROLLER_UNAVAILABLE, res.result.message
    assert "no FollowJointTrajectory server at /nobody/follow_joint_trajectory within 1 s" in res.result.message


def test_topic_execution_publishes_trajectories_a_default_jtc_accepts(graph, panda, path_params):
    """execution: topic publishes the plan and, on cancel, a stop that ends at rest; both pass the default JTC rules
    (checked here independently of sim_robot, and by sim_robot, which refuses nothing)."""
    executor, _, client, states, trajectories, _, rejections = graph
    assert all(r.successful for r in set_params(executor, path_params, execution="topic"))
    wait_still(executor, states)
    _, res = send(executor, client, goal_from(panda, states, [[0, 0, 0.02]]))
    assert res.result.error_code == Result.SUCCESS, res.result.message
    handle = send_and_wait_executing(executor, client, goal_from(panda, states, [[0, 0, 0.1]],
                                                                 velocity_scaling=0.05, acceleration_scaling=0.05))
    cancel = handle.cancel_goal_async()
    assert spin_until(executor, cancel.done, 15.0)
    assert spin_until(executor, lambda: len(trajectories) >= 3, 10.0)
    assert not any(trajectories[-1].points[-1].velocities), "the stop must end at rest"
    for msg in trajectories:
        assert jtc_rejection(trajectory_facts(msg), panda.joint_names, 0) is None
    assert not rejections, f"sim_robot (default JTC rules) refused: {rejections}"
