"""Every scaling field of ExecuteCartesianPath through the real path_ik_node process (issue 23 part C), and the check
every trajectory passes before it leaves the node.

Measured before: a one-waypoint goal with a MoveJ approach 22 cm away planned velocity_scaling 50 at 7.5x the
velocity limit and -1 at 3.2x; NaN and inf came back as INTERNAL_ERROR. Now each field follows core/scaling.py: 0 =
the node's default (config/panda_path_ik.yaml: 0.5), (0, 1] as given, anything else INVALID_GOAL naming the field,
its value and the rule. All goals are plan_only: the arm never moves; the returned trajectories are measured on the
spline a joint_trajectory_controller plays through them.
"""
import math
import re

import numpy as np
import pinocchio as pin
import pytest
from path_graph import PathGraph, current_pose, send, wait_still
from ros_helpers import se3_pose_stamped
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robokin_interfaces.action import ExecuteCartesianPath
from robokin_interfaces.msg import MotionMove
from robokin_ros.core.limits import MotionLimits
from robokin_ros.core.trajectory.outgoing_check import spline_peaks
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.program.planner import MotionPlanner
from robokin_ros.ros.conversions import duration_msg
from robokin_ros.ros.goals import GoalAbort
from robokin_ros.ros.trajectory_execution import check_outgoing

Goal, Result = ExecuteCartesianPath.Goal, ExecuteCartesianPath.Result
VALUES = (0.0, 1.0, 1.0001, 50.0, math.nan, math.inf, -1.0)
VALID = {0.0, 1.0}
NODE_DEFAULT = 0.5            # velocity_scaling and acceleration_scaling in config/panda_path_ik.yaml
RULE = re.escape("a scaling must be a finite number in (0, 1] (a fraction of the limits), or 0 for")


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    graph = PathGraph(tmp_path_factory.mktemp("scaling_goals"), "scaling_test_client")
    try:
        graph.wait_ready()
        wait_still(graph.executor, graph.states)
        yield graph
    finally:
        graph.close()


@pytest.fixture(scope="module")
def limits(panda):
    """The node's joint limits (config/panda_path_ik.yaml's accelerations, the URDF's velocities)."""
    return MotionPlanner(panda, PathConfig(max_joint_acceleration=(15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0))).limits()


def played(result, limits):
    """Peak |qd| / v_max and |qdd| / a_max on the controller's spline through the returned trajectory."""
    points = result.trajectory.points
    t = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in points])
    peaks = spline_peaks(t, np.array([p.positions for p in points]), np.array([p.velocities for p in points]),
                         np.array([p.accelerations for p in points]))
    return (peaks.velocity / limits.velocity).max(), (peaks.acceleration / limits.acceleration).max()


def assert_refused(result, name, value):
    assert result.error_code == Result.INVALID_GOAL, (result.error_code, result.message)
    assert re.search(re.escape(f"{name}={value!r} is refused: ") + RULE, result.message), result.message
    assert len(result.trajectory.points) == 0


@pytest.mark.parametrize("field", ["velocity_scaling", "acceleration_scaling"])
@pytest.mark.parametrize("value", VALUES)
def test_waypoint_goal_with_a_movej_approach(graph, panda, limits, field, value):
    """One waypoint 22 cm away, APPROACH_MOVEJ, plan_only."""
    q, T = current_pose(panda, graph.states)
    target = pin.SE3(T.rotation, T.translation + np.array([0.15, 0.1, -0.12]))
    assert np.linalg.norm(target.translation - T.translation) == pytest.approx(0.22, abs=0.01)
    result = send(graph, Goal(waypoints=[se3_pose_stamped(target)], approach=Goal.APPROACH_MOVEJ, plan_only=True,
                              **{field: value}))
    if value not in VALID:
        assert_refused(result, field, value)
        return
    assert result.error_code == Result.SUCCESS, result.message
    v_ratio, a_ratio = played(result, limits)
    assert a_ratio <= 1 + 2e-3
    # 0 = the node's default, 0.5; the MoveJ is limited by some joint's velocity or acceleration
    scale = NODE_DEFAULT if value == 0.0 else 1.0
    assert v_ratio <= (scale if field == "velocity_scaling" else NODE_DEFAULT) * (1 + 2e-3)
    print(f"{field}={value}: played peaks {v_ratio:.3f} x velocity limit, {a_ratio:.3f} x acceleration limit")


@pytest.mark.parametrize("value", VALUES)
def test_program_goal_and_move_fractions(graph, panda, limits, value):
    """The goal's fractions of a program, and each move's joint_speed_scaling / acceleration_scaling."""
    q, _ = current_pose(panda, graph.states)
    target = (q + np.array([0.2, -0.1, 0.1, 0.1, -0.1, 0.1, 0.2])).tolist()
    names = list(panda.joint_names)
    cases = {
        "velocity_scaling": Goal(program=[MotionMove(type=MotionMove.MOVE_J, joint_names=names,
                                                     joint_positions=target)], velocity_scaling=value),
        "acceleration_scaling": Goal(program=[MotionMove(type=MotionMove.MOVE_J, joint_names=names,
                                                         joint_positions=target)], acceleration_scaling=value),
        "move 0 (MoveJ): joint_speed": Goal(program=[MotionMove(type=MotionMove.MOVE_J, joint_names=names,
                                                                joint_positions=target, joint_speed_scaling=value)]),
        "move 0 (MoveJ): acceleration": Goal(program=[MotionMove(type=MotionMove.MOVE_J, joint_names=names,
                                                                 joint_positions=target,
                                                                 acceleration_scaling=value)]),
    }
    for name, goal in cases.items():
        goal.plan_only = True
        result = send(graph, goal)
        if value not in VALID:
            assert_refused(result, name, value)
            continue
        assert result.error_code == Result.SUCCESS, (name, result.message)
        v_ratio, a_ratio = played(result, limits)
        assert v_ratio <= 1 + 2e-3 and a_ratio <= 1 + 2e-3, (name, v_ratio, a_ratio)


def test_a_trajectory_beyond_the_limits_never_leaves(panda, limits):
    """What the node runs on everything it sends or returns (TrajectoryExecutor.check): a trajectory its planners would
    never make, 3x the velocity limit of joint 1 on the controller's spline, is an INTERNAL_ERROR naming the joint,
    the peak and the limit; the controller's rules are checked first."""
    msg = JointTrajectory(joint_names=list(panda.joint_names))
    q0 = panda.home()
    step = np.zeros(panda.n)
    step[0] = 3.0 * limits.velocity[0] * 0.5              # 3x the limit over 0.5 s
    for t, q in ((0.0, q0), (0.5, q0 + step)):
        msg.points.append(JointTrajectoryPoint(positions=q.tolist(), velocities=[0.0] * panda.n,
                                               accelerations=[0.0] * panda.n, time_from_start=duration_msg(t)))
    with pytest.raises(GoalAbort, match=r"robokin planned a trajectory it must not have sent, and sent nothing: "
                                        r"joint 'panda_joint1' reaches velocity [\d.]+ rad/s .* x its limit") as err:
        check_outgoing(msg, panda.joint_names, limits, 0)
    assert err.value.code == Result.INTERNAL_ERROR
    check_outgoing(msg, panda.joint_names, MotionLimits(limits.velocity * 10, limits.acceleration * 100), 0)
    msg.points[-1].velocities[0] = 1.0                      # JTC refuses a last point that moves
    with pytest.raises(GoalAbort, match="Velocity of last trajectory point of joint panda_joint1 is not zero"):
        check_outgoing(msg, panda.joint_names, limits, 0, "returned")
