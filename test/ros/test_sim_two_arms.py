"""Robots with several tips in the ROS layer (issue 26): the `tip_frames` parameter every node declares, and
sim_robot simulating `dual_panda` / `dual_panda_torso` with both arms' links on /tf.

The /tf tree is judged against the model's forward kinematics: composing the published parent -> child transforms
from each tip up to `world` must give that tip's pose at the joint positions the sim publishes.
"""
import numpy as np
import pinocchio as pin
import pytest
import rclpy
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionClient
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from ros_helpers import spin_until
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robokin_ros.core.embedded import urdf_xml
from robokin_ros.core.errors import ConfigError, ModelError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.sim.config import SimRobotConfig
from robokin_ros.nodes.sim_robot import SimRobot
from robokin_ros.ros.params import declare_config
from robokin_ros.ros.robot_description import load_robot

TIPS = ("left_panda_hand_tcp", "right_panda_hand_tcp")
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
ACTION = "/joint_trajectory_controller/follow_joint_trajectory"


def _node(ros, name="tips_test", **overrides):
    context, executor = ros
    node = Node(name, context=context, parameter_overrides=[Parameter(k, value=v) for k, v in overrides.items()])
    executor.add_node(node)
    return node


# ---- the tip_frames parameter --------------------------------------------------------------------------------
def test_tip_frames_is_a_read_only_string_list_and_the_other_lists_keep_their_types(ros):
    node = _node(ros)
    config = declare_config(node, SimRobotConfig)
    assert config.tip_frames == ()
    described = node.describe_parameter("tip_frames")
    # as every list parameter: dynamic typing, so that YAML's `[]` (which reaches rclpy as "not set") is accepted
    assert described.read_only and described.dynamic_typing
    given_node = _node(ros, "given", tip_frames=list(TIPS[::-1]), initial_positions=[0.1] * 14)
    given = declare_config(given_node, SimRobotConfig)
    assert given.tip_frames == TIPS[::-1] and isinstance(given.tip_frames, tuple)
    assert given_node.get_parameter("tip_frames").type_ == Parameter.Type.STRING_ARRAY
    assert given.initial_positions == (0.1,) * 14            # a number list is still a number list
    with pytest.raises(ConfigError, match=r"initial_positions=.*must be a list of numbers"):
        declare_config(_node(ros, "names_as_positions", initial_positions=["a"]), SimRobotConfig)


def test_tip_frames_of_numbers_is_refused(ros):
    with pytest.raises(ConfigError, match=r"tip_frames=.*must be a list of strings"):
        declare_config(_node(ros, tip_frames=[1.0, 2.0]), SimRobotConfig)


def test_load_robot_takes_the_tips_from_the_parameters(ros):
    node = _node(ros)
    both = load_robot(node, SimRobotConfig(robot="dual_panda"))
    assert both.tip_frames == TIPS                      # empty tip_frames: every tip of the embedded robot
    reversed_tips = load_robot(node, SimRobotConfig(robot="dual_panda", tip_frames=TIPS[::-1]))
    assert reversed_tips.tip_frames == TIPS[::-1] and reversed_tips.tip_frame == TIPS[1]
    one = load_robot(node, SimRobotConfig(robot="dual_panda", tip_frame=TIPS[1]))
    assert one.tip_frames == (TIPS[1],) and one.n == 7
    panda = load_robot(node, SimRobotConfig(robot="panda"))
    assert panda.tip_frames == ("panda_hand_tcp",)
    with pytest.raises(ModelError, match="not the first of tip_frames"):
        load_robot(node, SimRobotConfig(robot="dual_panda", tip_frame=TIPS[1], tip_frames=TIPS))


def test_the_topic_needs_a_base_frame_and_some_tip(ros):
    node = _node(ros)
    with pytest.raises(ModelError, match="base_frame and tip_frame are not both set"):
        load_robot(node, SimRobotConfig(tip_frames=TIPS))
    with pytest.raises(ModelError, match="robot_description topic"):      # frames given, but no waiting
        load_robot(node, SimRobotConfig(base_frame="world", tip_frames=TIPS, robot_description_timeout=0.0))


# ---- sim_robot with two arms -----------------------------------------------------------------------------------
def _make_sim(ros, robot):
    context, executor = ros
    overrides = [Parameter(k, value=v) for k, v in {"robot": robot, "publish_tf": True, "tf_rate": 100.0}.items()]
    sim = SimRobot(context=context, parameter_overrides=overrides)
    probe = rclpy.create_node("probe", context=context)
    executor.add_node(sim)
    executor.add_node(probe)
    return sim, probe, executor


def _pose(transform) -> pin.SE3:
    t = transform.transform
    q = pin.Quaternion(t.rotation.w, t.rotation.x, t.rotation.y, t.rotation.z)
    return pin.SE3(q.matrix(), np.array([t.translation.x, t.translation.y, t.translation.z]))


def _world_T(frame: str, edges: dict) -> pin.SE3:
    """The pose of `frame` composed from the published transforms up to the root of the tree."""
    world_T_frame = pin.SE3.Identity()
    while frame in edges:
        world_T_frame = _pose(edges[frame]) * world_T_frame
        frame = edges[frame].header.frame_id
    return world_T_frame


def _watch(probe):
    static, moving, states = [], [], []
    probe.create_subscription(TFMessage, "/tf_static", static.append, LATCHED)
    probe.create_subscription(TFMessage, "/tf", moving.append, 10)
    probe.create_subscription(JointState, "/joint_states", states.append, 10)
    return static, moving, states


@pytest.mark.parametrize("name", ["dual_panda", "dual_panda_torso", "baxter"])
def test_sim_publishes_every_joint_and_both_arms_on_tf(ros, name):
    robot = RobotModel.load(name)
    sim, probe, executor = _make_sim(ros, name)
    static, moving, states = _watch(probe)
    assert spin_until(executor, lambda: static and moving and states)
    assert tuple(states[-1].name) == robot.joint_names and len(states[-1].name) == robot.n
    np.testing.assert_array_equal(states[-1].position, robot.home())
    edges = {t.child_frame_id: t for msg in (static[-1], moving[-1]) for t in msg.transforms}
    moving_links = {t.child_frame_id for t in moving[-1].transforms}
    assert len(moving_links) == robot.n                   # one link per joint: both arms (and the torso) move
    assert ("torso" in moving_links) == (name == "dual_panda_torso")
    assert robot.world_T_base.isIdentity(1e-12)           # the tree's root is the base: compare with FK directly
    for tip in robot.tip_frames:
        np.testing.assert_allclose(_world_T(tip, edges).homogeneous, robot.fk(sim.joint_positions, tip).homogeneous,
                                   atol=1e-9)


def test_a_trajectory_of_all_joints_moves_both_arms_and_the_torso_on_tf(ros):
    robot = RobotModel.load("dual_panda_torso")
    sim, probe, executor = _make_sim(ros, "dual_panda_torso")
    static, moving, states = _watch(probe)
    client = ActionClient(probe, FollowJointTrajectory, ACTION)
    assert client.wait_for_server(timeout_sec=10.0)
    target = robot.home() + np.linspace(0.1, -0.1, robot.n)
    goal = FollowJointTrajectory.Goal(trajectory=JointTrajectory(joint_names=list(robot.joint_names), points=[
        JointTrajectoryPoint(positions=target.tolist(), velocities=[0.0] * robot.n,
                             time_from_start=Duration(sec=0, nanosec=500_000_000))]))
    sent = client.send_goal_async(goal)
    assert spin_until(executor, sent.done) and sent.result().accepted
    result = sent.result().get_result_async()
    assert spin_until(executor, result.done, 15.0)
    assert result.result().result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    np.testing.assert_allclose(sim.joint_positions, target, atol=1e-9)
    moving.clear()
    assert spin_until(executor, lambda: moving and static)
    edges = {t.child_frame_id: t for msg in (static[-1], moving[-1]) for t in msg.transforms}
    for tip in TIPS:
        np.testing.assert_allclose(_world_T(tip, edges).homogeneous, robot.fk(target, tip).homogeneous, atol=1e-9)


def test_sim_process_reads_a_two_arm_model_from_the_topic_with_tip_frames(probe, launch):
    node, executor = probe
    description = node.create_publisher(String, "/robot_description", LATCHED)
    description.publish(String(data=urdf_xml("dual_panda")))
    names: list[tuple[str, ...]] = []
    node.create_subscription(JointState, "/joint_states", lambda msg: names.append(tuple(msg.name)), 10)
    sim = launch("sim_robot", "--ros-args", "-p", "base_frame:=world",
                 "-p", f"tip_frames:=[{TIPS[0]}, {TIPS[1]}]", "-p", "publish_tf:=false")
    assert spin_until(executor, lambda: names, 30.0), sim.output
    assert names[-1] == RobotModel.load("dual_panda").joint_names
    assert f"world -> {TIPS[0]}, {TIPS[1]}" in sim.output, sim.output
