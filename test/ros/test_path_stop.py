"""Cancel, preemption and execution timeout stop the arm within the acceleration limits (issue 9, item 4).

path_ik_node and sim_robot run as separate processes (execution through sim_robot's FollowJointTrajectory action,
the default). A 25 cm path at full speed is stopped at ~40 % progress; the arm's acceleration is measured
independently from /joint_states (parabolas fitted to the positions over 50 ms windows, on the messages' stamps)
from the stop request until the arm is at rest. Before the fix (the controller's goal cancelled, which a
JTC answers by holding the arm where it is) the same measurement gave 6.7x (cancel), 6.7x (preemption) and 1.6x
(timeout of an arm at 15 % speed); with the stop along the path 0.95x.

At full scaling (issue 24, item 8) the plan runs at the acceleration limits, and a stop that the controller blended
into from the arm's state (a default JTC's quintic assumes zero acceleration there: up to 1.37x) or that failed
robokin's own check (the controller's goal was then cancelled: a hold at once) measured 1.3-30x; its message said
"in 0.07 s" where the arm took 0.3 s to come to rest. sim_robot plays trajectories as a default JTC does (quintic
through points with accelerations, a trajectory stamped in the past from the clock's point, a cancel holds at once).
"""
import re

import numpy as np
import pinocchio as pin
import pytest
from action_msgs.msg import GoalStatus
from geometry_msgs.msg import PoseStamped
from path_graph import PathGraph, wait_still
from ros_helpers import spin_until

from robokin_interfaces.action import ExecuteCartesianPath

Result = ExecuteCartesianPath.Result
A_MAX = np.array([15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0])    # config/panda_path_ik.yaml [rad/s^2]
FIT_WINDOW = 0.05        # [s] of joint states per fitted parabola
BOUND = 1.2              # measured |qdd| / a_max allowed (10 ms differences of a 500 Hz sim)
LAGGING_BOUND = 2.0      # the same for an arm that saturates its velocities (see the timeout test)
LENGTH = 0.25            # [m]


_RUNNING: list[PathGraph] = []     # the graph a test runs on, whose process logs a missing result reports


def _graph(log_dir, sim_args=(), node_args=()):
    """(executor, node, client, states) of a started PathGraph, and the graph to close."""
    graph = PathGraph(log_dir, "path_stop_client", sim_args, node_args, state_depth=100)
    _RUNNING[:] = [graph]
    try:
        graph.wait_ready()
    except AssertionError:
        graph.close()
        raise
    return (graph.executor, graph.node, graph.client, graph.states), graph


@pytest.fixture
def graph(tmp_path_factory):
    """An arm that keeps up with the plan; preemption on. (Per test: two graphs must never run at once, they
    share the action and topic names.)"""
    parts, graph = _graph(tmp_path_factory.mktemp("stop"), node_args=["-p", "preempt:=true"])
    try:
        yield parts
    finally:
        graph.close()


@pytest.fixture
def lagging_graph(tmp_path_factory):
    """An arm at 15 % of the URDF velocity limits: it falls behind a full-speed plan and times out."""
    parts, graph = _graph(tmp_path_factory.mktemp("lag"), ["-p", "velocity_limit_scale:=0.15"],
                          ["-p", "execution_timeout_margin:=0.1"])
    try:
        yield parts
    finally:
        graph.close()


def joint_positions(model, msg):
    named = dict(zip(msg.name, msg.position))
    return np.array([named[n] for n in model.joint_names])


def stamp(msg):
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def acceleration_ratio(model, states, t_from, t_to):
    """Peak |qdd| / a_max over joints and the peak speed [rad/s], from least-squares parabolas through the positions
    over sliding FIT_WINDOW windows (a 500 Hz sim stamps its states with up to ~2 ms of scheduling jitter; raw
    second differences over 10 ms would measure the stamps, not the arm)."""
    t = np.array([stamp(m) for m in states])
    keep = (t >= t_from - FIT_WINDOW) & (t <= t_to)
    t, q = t[keep], np.array([joint_positions(model, m) for m, k in zip(states, keep) if k])      # (K,), (K, n)
    accelerations, speeds = [], []
    # A gap (sim_robot starved for 0.1-0.3 s on a loaded CPU) leaves no fit window across it; the chord over it is
    # the mean speed there, never above the peak, so a gap at the velocity peak does not hide that the arm ran fast.
    gap = np.flatnonzero(np.diff(t) >= 0.4 * FIT_WINDOW)
    speeds.extend(np.abs(q[gap + 1] - q[gap]) / (t[gap + 1] - t[gap])[:, None])
    for i in range(len(t)):
        inside = (t >= t[i]) & (t < t[i] + FIT_WINDOW)
        if t[inside][-1] - t[i] < 0.8 * FIT_WINDOW:         # the end, or a gap in the received states
            continue
        dt = t[inside] - t[i]
        coeffs = np.polyfit(dt, q[inside], 2)                    # (3, n): highest power first
        accelerations.append(2.0 * coeffs[0])
        speeds.append(np.abs(coeffs[1]))
    return float((np.abs(np.array(accelerations)) / A_MAX).max()), float(np.max(speeds))


def line_goal(model, states, **kwargs):
    """A LENGTH line along x at full speed (half the acceleration limits), outwards from the home pose, back
    once out: it runs at up to 1.7 rad/s and is still fast at 40 % + the stop's lead."""
    q = joint_positions(model, states[-1])
    start = model.fk(q)
    direction = np.array([-1.0 if start.translation[0] > model.fk(model.home()).translation[0] + 0.1 else 1.0,
                          0.0, 0.0])
    goal = ExecuteCartesianPath.Goal(velocity_scaling=1.0, acceleration_scaling=0.5, **kwargs)
    target = PoseStamped()
    p = start.translation + LENGTH * direction
    target.pose.position.x, target.pose.position.y, target.pose.position.z = (float(v) for v in p)
    o = target.pose.orientation
    o.x, o.y, o.z, o.w = (float(v) for v in pin.Quaternion(start.rotation).coeffs())
    goal.waypoints = [target]
    return goal, start.translation, p


def start_at_progress(executor, client, goal, progress):
    """Send a goal and spin until path_ik_node reports `progress` of its execution; the handle."""
    seen = []
    future = client.send_goal_async(goal, feedback_callback=lambda f: seen.append(f.feedback))
    assert spin_until(executor, future.done, 15.0) and future.result().accepted
    result = future.result().get_result_async()
    reached = spin_until(executor, lambda: result.done() or (seen and seen[-1].stage == "executing"
                                                             and seen[-1].progress >= progress), 30.0)
    assert reached and not result.done(), f"never reached the progress: {result.result()}"
    return future.result()


def result_of(executor, handle):
    """The goal's result; a failure with the nodes' logs when none comes (every goal must get one: the wait is
    long enough for each controller call of a stop to take its full controller_response_timeout on a busy CPU)."""
    future = handle.get_result_async()
    assert spin_until(executor, future.done, 45.0), "no result within 45 s\n" + "\n".join(
        f"--- {p.log_path.name}:\n{p.output[-4000:]}" for graph in _RUNNING for p in graph.procs)
    return future.result()


def stop_figures(model, graph, begun, stopped_at):
    """(ratio before the stop, ratio from the stop request to rest, peak speed before); prints them."""
    executor, node, _, states = graph
    wait_still(executor, states)
    now = node.get_clock().now().nanoseconds * 1e-9
    before, speed = acceleration_ratio(model, states, begun, stopped_at)
    during, _ = acceleration_ratio(model, states, stopped_at, now)
    print(f"peak |qdd|/a_max before the stop {before:.2f}, during the stop {during:.2f} (speed {speed:.2f} rad/s)")
    return before, during, speed


def off_line(model, states, start, end):
    """[m] distance of the tool at rest from the line start-end."""
    p = model.fk(joint_positions(model, states[-1])).translation
    direction = (end - start) / np.linalg.norm(end - start)
    return float(np.linalg.norm((p - start) - direction * np.dot(p - start, direction)))


def line_at_40_percent(graph, model):
    """From rest, a line goal run to 40 %: (handle, line start, line end, when it was sent, when 40 % was seen)."""
    executor, node, client, states = graph
    wait_still(executor, states)
    goal, start, end = line_goal(model, states)
    begun = node.get_clock().now().nanoseconds * 1e-9
    handle = start_at_progress(executor, client, goal, 0.4)
    return handle, start, end, begun, node.get_clock().now().nanoseconds * 1e-9


def test_cancel_at_40_percent_stops_along_the_path_within_the_limits(graph, panda):
    executor, node, client, states = graph
    handle, start, end, begun, stopped_at = line_at_40_percent(graph, panda)
    handle.cancel_goal_async()
    done = result_of(executor, handle)
    _, during, speed = stop_figures(panda, graph, begun, stopped_at)
    assert done.status == GoalStatus.STATUS_CANCELED and done.result.error_code == Result.CANCELED
    assert "stopped along the path within the acceleration limits" in done.result.message, done.result.message
    assert speed > 1.0, "the path did not run fast enough to test a stop"
    assert during <= BOUND, f"the stop reached {during:.2f} x the acceleration limit"
    assert np.linalg.norm(panda.fk(joint_positions(panda, states[-1])).translation - end) > 0.01
    assert off_line(panda, states, start, end) < 1e-3, "the tool left the path while stopping"


def test_preemption_stops_the_first_goal_within_the_limits(graph, panda):
    executor, node, client, states = graph
    handle, start, end, begun, stopped_at = line_at_40_percent(graph, panda)
    second, _, _ = line_goal(panda, states, plan_only=True)
    second_future = client.send_goal_async(second)
    done = result_of(executor, handle)
    assert done.result.error_code == Result.PREEMPTED, done.result.message
    assert spin_until(executor, second_future.done, 15.0) and second_future.result().accepted
    assert result_of(executor, second_future.result()).result.error_code == Result.SUCCESS
    _, during, speed = stop_figures(panda, graph, begun, stopped_at)
    assert speed > 1.0, "the path did not run fast enough to test a stop"
    assert during <= BOUND, f"the stop reached {during:.2f} x the acceleration limit"
    assert off_line(panda, states, start, end) < 1e-3, "the tool left the path while stopping"


def test_execution_timeout_brakes_a_lagging_arm_from_its_measured_velocity(lagging_graph, panda):
    executor, node, client, states = lagging_graph
    wait_still(executor, states)
    goal, start, end = line_goal(panda, states)
    executing = []                                             # when path_ik_node reported executing
    future = client.send_goal_async(goal, feedback_callback=lambda f: executing.append(
        node.get_clock().now().nanoseconds * 1e-9) if f.feedback.stage == "executing" else None)
    assert spin_until(executor, future.done, 15.0) and future.result().accepted
    done = result_of(executor, future.result())
    ended = node.get_clock().now().nanoseconds * 1e-9
    # the node times out the planned duration + the margin (0.1 s) after the execution started
    duration = done.result.trajectory.points[-1].time_from_start
    begun = executing[0]
    timed_out = begun + duration.sec + 1e-9 * duration.nanosec + 0.1
    _, during, speed = stop_figures(panda, lagging_graph, begun, timed_out)
    assert done.result.error_code == Result.EXECUTION_FAILED, done.result.message
    assert "stopped along its velocity within the acceleration limits" in done.result.message, done.result.message
    assert speed > 0.25, "the lagging arm did not move fast enough to test a stop"
    # Not held to BOUND: at 15 % of its velocity limits the sim saturates each joint on its own, and the stop, which
    # brakes from the measured velocity, measured 0.94-1.51 x here (the old one-point hold 1.58 x). The guard
    # still catches a dead stop from speed.
    assert during <= LAGGING_BOUND, (f"the stop reached {during:.2f} x the acceleration limit "
                                     f"(result at {ended - begun:.2f} s)")
    assert np.linalg.norm(panda.fk(joint_positions(panda, states[-1])).translation - end) > 0.01


def rest_time(model, states, t_from):
    """[s] stamp of the last joint state after `t_from` that moved faster than 2e-3 rad/s over >= 10 ms."""
    t = np.array([stamp(m) for m in states])
    q = np.array([joint_positions(model, m) for m in states])
    moved = t_from
    k = int(np.searchsorted(t, t_from))
    while k < len(t) - 1:
        j = int(np.searchsorted(t, t[k] + 0.01))
        if j >= len(t):
            break
        if np.abs(q[j] - q[k]).max() > 2e-3 * (t[j] - t[k]):
            moved = t[j]
        k = j
    return moved - t_from


def check_full_scaling_stop(panda, graph, interrupt, code):
    """A line at full scaling interrupted half-way by `interrupt(handle)`: the result has `code`, the stop stays
    within BOUND of the limits (measured from /joint_states) and its message states the measured time to rest."""
    executor, node, client, states = graph
    wait_still(executor, states)
    goal, start, end = line_goal(panda, states)
    goal.acceleration_scaling = 1.0
    begun = node.get_clock().now().nanoseconds * 1e-9
    handle = start_at_progress(executor, client, goal, 0.5)
    stopped_at = node.get_clock().now().nanoseconds * 1e-9
    interrupt(handle)
    done = result_of(executor, handle)
    before, during, speed = stop_figures(panda, graph, begun, stopped_at)
    assert done.result.error_code == code, done.result.message
    assert speed > 1.5 and before <= BOUND, "the path did not run as planned at full scaling"
    assert during <= BOUND, f"the stop reached {during:.2f} x the acceleration limit: {done.result.message}"
    stated = re.search(r"stopped along the path within the acceleration limits; at rest (\d+\.\d+) s after the "
                       r"request \(measured\)", done.result.message)
    assert stated, done.result.message
    measured = rest_time(panda, states, stopped_at)
    print(f"rest {measured:.3f} s after the request, stated {stated.group(1)} s")
    assert abs(float(stated.group(1)) - measured) <= 0.06, done.result.message
    assert off_line(panda, states, start, end) < 1e-3, "the tool left the path while stopping"


def test_full_scaling_cancel_and_preemption_half_way_stop_within_the_limits_in_the_time_stated(graph, panda):
    executor, _, client, states = graph
    check_full_scaling_stop(panda, graph, lambda handle: handle.cancel_goal_async(), Result.CANCELED)
    second = []
    check_full_scaling_stop(panda, graph, lambda _: second.append(
        client.send_goal_async(line_goal(panda, states, plan_only=True)[0])), Result.PREEMPTED)
    assert spin_until(executor, second[0].done, 15.0) and second[0].result().accepted
