"""sim_robot as a joint_trajectory_controller in one process: topic validation, the FollowJointTrajectory action
(success, rejection, cancel, preemption, path and goal tolerances) and the URDF link tree on /tf; and, as a
process, its refusal to start next to another source of its joint states."""
import numpy as np
import pinocchio as pin
import pytest
import rclpy
import rclpy.time
from action_msgs.msg import GoalStatus
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance
from rclpy.action import ActionClient
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from ros_helpers import spin_for, spin_until
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from tf2_msgs.msg import TFMessage
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robokin_ros.core.robot import RobotModel
from robokin_ros.nodes.sim_robot import SimRobot

ACTION = "/joint_trajectory_controller/follow_joint_trajectory"
Result = FollowJointTrajectory.Result


@pytest.fixture(scope="module")
def panda():
    return RobotModel.from_name("panda")


def make_sim(ros, **params):
    context, executor = ros
    overrides = [Parameter(k, value=v) for k, v in {"publish_tf": False, **params}.items()]
    sim = SimRobot(context=context, parameter_overrides=overrides)
    probe = rclpy.create_node("probe", context=context)
    executor.add_node(sim)
    executor.add_node(probe)
    return sim, probe, executor


def trajectory(names, *points):
    """points: (time [s], positions) with zero velocity."""
    return JointTrajectory(joint_names=list(names), points=[
        JointTrajectoryPoint(positions=[float(v) for v in q], velocities=[0.0] * len(q),
                             time_from_start=Duration(sec=int(t), nanosec=int(round((t % 1) * 1e9))))
        for t, q in points])


def send_goal(executor, client, goal):
    future = client.send_goal_async(goal)
    assert spin_until(executor, future.done), "no goal response"
    return future.result()


def result_of(executor, handle, timeout=15.0):
    future = handle.get_result_async()
    assert spin_until(executor, future.done, timeout), "no result"
    return future.result()


def test_a_rejected_topic_trajectory_is_counted_logged_and_leaves_the_previous_command(ros, panda):
    sim, probe, executor = make_sim(ros)
    rejected = []
    probe.create_subscription(String, "/sim_robot/rejected", lambda m: rejected.append(m.data), 10)
    velocities = probe.create_publisher(Float64MultiArray, "/forward_velocity_controller/commands", 10)
    commands = probe.create_publisher(JointTrajectory, "/joint_trajectory_controller/joint_trajectory", 10)
    assert spin_until(executor, lambda: velocities.get_subscription_count() and commands.get_subscription_count())
    velocities.publish(Float64MultiArray(data=[0.05] * panda.n))
    assert spin_until(executor, lambda: np.allclose(sim.joint_velocities, 0.05))
    q = sim.joint_positions
    moving_end = trajectory(panda.joint_names, (0.5, q + 0.1))
    moving_end.points[0].velocities = [0.0, 0.3] + [0.0] * (panda.n - 2)
    commands.publish(moving_end)
    assert spin_until(executor, lambda: rejected)
    expected = "Velocity of last trajectory point of joint panda_joint2 is not zero: 0.300000000000000"
    assert rejected == [expected] and sim.rejected_count == 1 and sim.last_rejection == expected
    spin_for(executor, 0.1)
    np.testing.assert_allclose(sim.joint_velocities, 0.05)          # the velocity command still runs
    commands.publish(trajectory(panda.joint_names[:3], (0.5, q[:3])))   # partial: JTC's default refuses it
    assert spin_until(executor, lambda: sim.rejected_count == 2)
    assert sim.last_rejection == "Joints on incoming trajectory don't match the controller joints."
    commands.publish(trajectory(panda.joint_names, (0.5, q)))           # valid: accepted, nothing counted
    assert spin_until(executor, lambda: np.allclose(sim.joint_velocities, 0.0, atol=1e-6), 5.0)
    assert sim.rejected_count == 2


def test_switches_reproduce_a_permissive_controller(ros, panda):
    sim, probe, executor = make_sim(ros, allow_partial_joints_goal=True,
                                    allow_nonzero_velocity_at_trajectory_end=True)
    commands = probe.create_publisher(JointTrajectory, "/joint_trajectory_controller/joint_trajectory", 10)
    assert spin_until(executor, commands.get_subscription_count)
    q0 = sim.joint_positions
    partial = trajectory(["panda_joint3"], (0.3, [q0[2] + 0.1]))
    partial.points[0].velocities = [0.2]
    commands.publish(partial)
    assert spin_until(executor, lambda: abs(sim.joint_positions[2] - q0[2] - 0.1) < 1e-9)
    assert sim.rejected_count == 0
    np.testing.assert_allclose(np.delete(sim.joint_positions, 2), np.delete(q0, 2), atol=1e-12)   # held


def test_goal_succeeds_with_feedback_and_a_rejected_goal_is_rejected(ros, panda):
    sim, probe, executor = make_sim(ros)
    client = ActionClient(probe, FollowJointTrajectory, ACTION)
    assert spin_until(executor, client.server_is_ready)
    q0 = sim.joint_positions
    feedback = []
    future = client.send_goal_async(FollowJointTrajectory.Goal(
        trajectory=trajectory(panda.joint_names, (0.4, q0 + 0.1))), feedback_callback=feedback.append)
    assert spin_until(executor, future.done) and future.result().accepted
    done = result_of(executor, future.result())
    assert done.status == GoalStatus.STATUS_SUCCEEDED
    assert (done.result.error_code, done.result.error_string) == (Result.SUCCESSFUL, "Goal successfully reached!")
    np.testing.assert_allclose(sim.joint_positions, q0 + 0.1, atol=1e-9)
    last = feedback[-1].feedback
    assert list(last.joint_names) == list(panda.joint_names) and len(feedback) >= 3
    np.testing.assert_allclose(np.array(last.desired.positions) - last.actual.positions, last.error.positions)

    stale = trajectory(panda.joint_names, (0.4, q0))
    stale.header.stamp.sec = 1                                    # ends in 1970: JTC refuses the goal
    assert not send_goal(executor, client, FollowJointTrajectory.Goal(trajectory=stale)).accepted
    assert sim.rejected_count == 1
    assert sim.last_rejection.startswith("Received trajectory with non-zero start time (1.000000) that ends in "
                                         "the past (1.400000)")


def test_cancel_holds_the_arm_and_a_newer_goal_preempts(ros, panda):
    sim, probe, executor = make_sim(ros)
    client = ActionClient(probe, FollowJointTrajectory, ACTION)
    assert spin_until(executor, client.server_is_ready)
    q0 = sim.joint_positions
    handle = send_goal(executor, client, FollowJointTrajectory.Goal(
        trajectory=trajectory(panda.joint_names, (2.0, q0 + 0.4))))
    assert spin_until(executor, lambda: sim.joint_positions[0] > q0[0] + 0.05)
    cancel = handle.cancel_goal_async()
    assert spin_until(executor, cancel.done)
    done = result_of(executor, handle)
    assert done.status == GoalStatus.STATUS_CANCELED and done.result.error_code == Result.SUCCESSFUL
    stopped = sim.joint_positions
    spin_for(executor, 0.2)
    np.testing.assert_allclose(sim.joint_positions, stopped, atol=1e-6)     # held, not continued
    assert stopped[0] < q0[0] + 0.3

    first = send_goal(executor, client, FollowJointTrajectory.Goal(
        trajectory=trajectory(panda.joint_names, (2.0, q0))))
    second = send_goal(executor, client, FollowJointTrajectory.Goal(
        trajectory=trajectory(panda.joint_names, (0.3, stopped))))
    preempted = result_of(executor, first)
    assert preempted.status == GoalStatus.STATUS_ABORTED
    assert (preempted.result.error_code, preempted.result.error_string) == (
        Result.INVALID_GOAL, "Current goal preempted by new incoming action.")
    assert result_of(executor, second).status == GoalStatus.STATUS_SUCCEEDED


def test_path_tolerance_violation_aborts_and_holds(ros, panda):
    sim, probe, executor = make_sim(ros, velocity_limit_scale=0.2)      # an arm that lags fast commands
    client = ActionClient(probe, FollowJointTrajectory, ACTION)
    assert spin_until(executor, client.server_is_ready)
    q0 = sim.joint_positions
    goal = FollowJointTrajectory.Goal(trajectory=trajectory(panda.joint_names, (0.5, q0 + 0.5)))
    goal.path_tolerance = [JointTolerance(name=n, position=0.05) for n in panda.joint_names]
    done = result_of(executor, send_goal(executor, client, goal))
    assert done.status == GoalStatus.STATUS_ABORTED
    assert (done.result.error_code, done.result.error_string) == (
        Result.PATH_TOLERANCE_VIOLATED, "Aborted due to path tolerance violation")
    stopped = sim.joint_positions
    assert np.all(stopped - q0 < 0.1)                                   # stopped soon after the violation
    spin_for(executor, 0.1)
    np.testing.assert_allclose(sim.joint_positions, stopped, atol=1e-6)


def test_goal_time_tolerance_aborts_a_goal_the_arm_cannot_reach_in_time(ros, panda):
    sim, probe, executor = make_sim(ros, velocity_limit_scale=0.1)
    client = ActionClient(probe, FollowJointTrajectory, ACTION)
    assert spin_until(executor, client.server_is_ready)
    q0 = sim.joint_positions
    goal = FollowJointTrajectory.Goal(trajectory=trajectory(panda.joint_names, (0.2, q0 + 0.3)))
    goal.goal_tolerance = [JointTolerance(name=n, position=0.01) for n in panda.joint_names]
    goal.goal_time_tolerance = Duration(nanosec=100_000_000)
    done = result_of(executor, send_goal(executor, client, goal))
    assert done.status == GoalStatus.STATUS_ABORTED
    assert done.result.error_code == Result.GOAL_TOLERANCE_VIOLATED
    assert done.result.error_string.startswith("Aborted due to goal_time_tolerance exceeding by 0.10")


def test_link_tree_on_tf_matches_forward_kinematics_and_pauses_for_robot_state_publisher(ros, panda):
    sim, probe, executor = make_sim(ros, publish_tf=True, tf_rate=100.0)
    static, moving = [], []
    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    probe.create_subscription(TFMessage, "/tf_static", static.append, latched)
    probe.create_subscription(TFMessage, "/tf", moving.append, 10)
    states = []
    probe.create_subscription(JointState, "/joint_states", states.append, 10)
    assert spin_until(executor, lambda: static and moving and states)
    edges = {t.child_frame_id: t for msg in (static[-1], moving[-1]) for t in msg.transforms}
    assert {t.child_frame_id for t in static[-1].transforms} >= {"panda_link8", "panda_hand", "panda_hand_tcp"}
    assert {t.child_frame_id for t in moving[-1].transforms} == {f"panda_link{i}" for i in range(1, 8)}
    base_T_tip, frame = pin.SE3.Identity(), panda.tip_frame
    while frame != panda.base_frame:                                  # compose the tree from tip to base
        t = edges[frame].transform
        q = pin.Quaternion(t.rotation.w, t.rotation.x, t.rotation.y, t.rotation.z)
        base_T_tip = pin.SE3(q.matrix(), np.array([t.translation.x, t.translation.y, t.translation.z])) * base_T_tip
        frame = edges[frame].header.frame_id
    np.testing.assert_allclose(base_T_tip.homogeneous, panda.fk(sim.joint_positions).homogeneous, atol=1e-6)

    context, _ = ros
    rsp = rclpy.create_node("robot_state_publisher", context=context)
    executor.add_node(rsp)
    assert spin_until(executor, lambda: sim.tf_paused)
    paused_at = sim.get_clock().now().nanoseconds
    spin_for(executor, 0.2)
    later = [m for m in moving if rclpy.time.Time.from_msg(m.transforms[0].header.stamp).nanoseconds > paused_at]
    assert not later, "sim_robot kept publishing /tf next to robot_state_publisher"
    executor.remove_node(rsp)
    rsp.destroy_node()
    assert spin_until(executor, lambda: not sim.tf_paused and moving)


def _publish_states(probe, executor, names, node_name="ur_driver_stand_in"):
    """A node named `node_name` publishing joint states of `names` at 100 Hz (spun by the test's executor)."""
    context = probe.context
    driver = rclpy.create_node(node_name, context=context)
    publisher = driver.create_publisher(JointState, "/joint_states", 10)
    driver.create_timer(0.01, lambda: publisher.publish(JointState(name=list(names), position=[0.0] * len(names))))
    executor.add_node(driver)
    return driver


def test_refuses_to_start_next_to_a_driver_publishing_its_joints(launch, probe, panda):
    """A driver's joint_state_broadcaster (here a stand-in publishing the Panda's joints and a gripper's) already
    publishes /joint_states: sim_robot exits with code 1 and a message naming that node."""
    node, executor = probe
    _publish_states(node, executor, [*panda.joint_names, "panda_finger_joint1"], "joint_state_broadcaster")
    # a long wait: on a loaded machine discovery of the other publisher took longer than the default 3 s
    sim = launch("sim_robot", "--ros-args", "-p", "robot:=panda", "-p", "publish_tf:=false",
                 "-p", "driver_check_wait:=20.0")
    assert spin_until(executor, lambda: sim.popen.poll() is not None, 60.0), sim.output
    assert sim.popen.returncode == 1, sim.output
    assert "/joint_states is already published by /joint_state_broadcaster" in sim.output, sim.output
    assert "panda_joint1" in sim.output and "does not start" in sim.output


def test_starts_next_to_a_publisher_of_other_joints(launch, probe):
    """A gripper's own joint states on /joint_states are no second source of the arm's joints: the sim runs."""
    node, executor = probe
    _publish_states(node, executor, ["gripper_finger_joint"], "gripper_driver")
    sim = launch("sim_robot", "--ros-args", "-p", "robot:=panda", "-p", "publish_tf:=false")
    simulated = []
    node.create_subscription(JointState, "/joint_states",
                             lambda m: simulated.append(m) if "panda_joint1" in m.name else None, 10)
    assert spin_until(executor, lambda: simulated or sim.popen.poll() is not None, 30.0)
    assert sim.popen.poll() is None and simulated, sim.output
