"""The driver presets against a stand-in driver: the processes the launch files would start for
`preset:=ur_robot_driver robot:=ur5` (command lines built from launch_support, the code the launch files run), with
sim_robot serving scaled_joint_trajectory_controller as ur_robot_driver names it; path_ik_node executes a goal through
its FollowJointTrajectory action and servo_node publishes on its topic. And the robot_state_publisher graph check.

Nodes run as subprocesses; a probe node in the test process talks to them.
"""
import json

import numpy as np
import pinocchio as pin
import pytest
import rclpy
from geometry_msgs.msg import TwistStamped
from node_process import Process
from rclpy.action import ActionClient
from rclpy.action.graph import get_action_names_and_types
from rclpy.qos import DurabilityPolicy, QoSProfile
from ros_helpers import pose_stamped, spin_until
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory

from robokin_interfaces.action import ExecuteCartesianPath
from robokin_ros import launch_support
from robokin_ros.core.robot import RobotModel

CONTROLLER = "scaled_joint_trajectory_controller"
# every launch argument at its default, as a launch file declares them, then the UR driver's choices
ARGUMENTS = {**{name: default for name, default, _ in launch_support.robot_arguments("servo")},
             "robot": "ur5", "preset": "ur_robot_driver", "sim": "true"}
READY_TIMEOUT = 60.0      # [s]


class Recorded:
    """Stands in for launch_ros's Node: keeps what a launch file would start."""

    def __init__(self, *, executable, name=None, namespace=None, parameters=(), **_) -> None:
        self.executable, self.name, self.namespace, self.parameters = executable, name, namespace, list(parameters)

    def ros_args(self) -> list[str]:
        """The command line launch_ros gives the executable: node name, parameter files, then values."""
        args = ["--ros-args", "-r", f"__node:={self.name}"]
        for entry in self.parameters:
            if isinstance(entry, dict):
                for key, value in entry.items():
                    args += ["-p", f"{key}:={json.dumps(value)}"]
            else:
                args += ["--params-file", entry]
        return args


def _launched(kind: str, executable: str) -> dict[str, Recorded]:
    nodes, _ = launch_support.arm_nodes(Recorded, ARGUMENTS.__getitem__, executable, kind)
    return {node.executable: node for node in nodes}


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    """sim_robot (as the UR driver's scaled JTC), path_ik_node and servo_node, as path_ik.launch.py and
    servo.launch.py start them with preset:=ur_robot_driver robot:=ur5 (sim:=true for the first only)."""
    path_nodes = _launched("path_ik", "path_ik_node")
    servo = _launched("servo", "servo_node")["servo_node"]
    log_dir = tmp_path_factory.mktemp("driver_presets")
    extra = {"sim_robot": ["-p", "publish_tf:=false"]}       # no TF needed: less load on a small machine
    procs = {node.executable: Process(node.executable, node.ros_args() + extra.get(node.executable, []), log_dir)
             for node in (path_nodes["sim_robot"], path_nodes["path_ik_node"], servo)}
    yield procs, path_nodes
    for process in procs.values():
        process.stop()


def _log(procs) -> str:
    return "\n".join(f"--- {name}\n{p.output[-3000:]}" for name, p in procs.items())


def test_the_launch_gives_every_node_the_ur_drivers_names(driver):
    _, path_nodes = driver
    sim_values = path_nodes["sim_robot"].parameters[-1]
    assert sim_values["trajectory_topic"] == f"/{CONTROLLER}/joint_trajectory"
    assert sim_values["follow_joint_trajectory_action"] == f"/{CONTROLLER}/follow_joint_trajectory"
    assert path_nodes["path_ik_node"].parameters[1].endswith("config/ur_robot_driver_path_ik.yaml")


def test_path_ik_executes_through_the_scaled_controllers_action(driver, probe):
    procs, _ = driver
    node, executor = probe
    states, rejected = [], []
    node.create_subscription(JointState, "/joint_states", states.append, 10)
    node.create_subscription(String, "/sim_robot/rejected", lambda m: rejected.append(m.data), 10)
    client = ActionClient(node, ExecuteCartesianPath, "/path_ik_node/execute_cartesian_path")
    assert spin_until(executor, lambda: client.server_is_ready() and states, READY_TIMEOUT), _log(procs)
    # the graph lists another process's action server once discovery has reached this node: wait for it (on a
    # loaded machine it came after the path action's server and the joint states)
    wanted = f"/{CONTROLLER}/follow_joint_trajectory"
    assert spin_until(executor, lambda: wanted in {name for name, _ in get_action_names_and_types(node)},
                      READY_TIMEOUT), sorted(name for name, _ in get_action_names_and_types(node))
    actions = {name for name, _ in get_action_names_and_types(node)}
    assert "/joint_trajectory_controller/follow_joint_trajectory" not in actions, sorted(actions)

    ur5 = RobotModel.from_name("ur5")
    q0 = np.array([dict(zip(states[-1].name, states[-1].position))[n] for n in ur5.joint_names])
    start = ur5.fk(q0)
    goal = ExecuteCartesianPath.Goal(waypoints=[pose_stamped(start.translation + [0.0, 0.0, 0.03],
                                                             pin.Quaternion(start.rotation).coeffs())])
    sent = client.send_goal_async(goal)
    assert spin_until(executor, sent.done, 15.0) and sent.result().accepted
    result = sent.result().get_result_async()
    assert spin_until(executor, result.done, 30.0), _log(procs)
    assert result.result().result.error_code == ExecuteCartesianPath.Result.SUCCESS, result.result().result
    q1 = np.array([dict(zip(states[-1].name, states[-1].position))[n] for n in ur5.joint_names])
    np.testing.assert_allclose(ur5.fk(q1).translation - start.translation, [0.0, 0.0, 0.03], atol=2e-3)
    assert "Goal reached, success!" in procs["sim_robot"].output and not rejected, rejected


def test_servo_publishes_on_the_scaled_controllers_topic(driver, probe):
    procs, _ = driver
    node, executor = probe
    commands, rejected = [], []
    node.create_subscription(JointTrajectory, f"/{CONTROLLER}/joint_trajectory", commands.append, 10)
    node.create_subscription(String, "/sim_robot/rejected", lambda m: rejected.append(m.data), 10)
    twists = node.create_publisher(TwistStamped, "/servo_node/delta_twist_cmds", 10)
    assert spin_until(executor, lambda: twists.get_subscription_count() > 0, READY_TIMEOUT), _log(procs)
    assert node.count_publishers("/joint_trajectory_controller/joint_trajectory") == 0
    twist = TwistStamped()
    twist.twist.linear.z = 0.2

    def streamed() -> bool:
        twists.publish(twist)
        return len(commands) > 5
    assert spin_until(executor, streamed, 20.0), _log(procs)
    assert list(commands[-1].joint_names) == list(RobotModel.from_name("ur5").joint_names)
    spin_until(executor, lambda: False, 0.3)
    assert not rejected, rejected                 # the sim, judging as a default JTC, took every window


def test_the_robot_state_publisher_check_sees_the_graph(probe):
    """What rviz:=true robot_state_publisher:=auto looks for: a robot_description publisher or a node named
    robot_state_publisher; nothing of the kind -> False after the wait."""
    node, executor = probe
    assert launch_support.robot_state_publisher_running("", wait=1.0) is False
    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    description = node.create_publisher(String, "/arm/robot_description", latched)
    assert launch_support.robot_state_publisher_running("/arm", wait=15.0) is True
    assert launch_support.robot_state_publisher_running("/other", wait=1.0) is False
    node.destroy_publisher(description)
    rsp = rclpy.create_node("robot_state_publisher", namespace="/somewhere", context=node.context)
    executor.add_node(rsp)
    assert launch_support.robot_state_publisher_running("", wait=15.0) is True
