"""Frames from TF: twists and waypoints given in a camera frame published on /tf_static, and clear errors.

servo_node, path_ik_node and sim_robot run in this process; a test node publishes the camera frame on
/tf_static (transient local, as tf2's static broadcaster does) before any listener exists, so the lazily
created listener also proves that late joiners get static transforms. Motion is judged by forward kinematics
of the joint states the simulated arm publishes.
"""
import importlib
import sys
import time
import types

import numpy as np
import pinocchio as pin
import pytest
from action_msgs.msg import GoalStatus
from geometry_msgs.msg import PoseStamped, TwistStamped
from rclpy.action import ActionClient
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from ros_helpers import spin_for, spin_until
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from robokin_interfaces.action import ExecuteCartesianPath
from robokin_ros.core.errors import UnknownFrameError
from robokin_ros.core.frames import TransformLookupError
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.nodes.path_ik_node import PathIkNode
from robokin_ros.nodes.servo_node import ServoNode
from robokin_ros.nodes.sim_robot import SimRobot
from robokin_ros.ros.conversions import transform_msg
from robokin_ros.ros.path_conversions import pose_msg, waypoints_in_base
from robokin_ros.ros.tf_frames import TfFrames

Result = ExecuteCartesianPath.Result
BASE = "panda_link0"
# turned about a skewed axis and offset: no camera axis is parallel to a base axis
BASE_T_CAMERA = pin.SE3(pin.exp3(np.array([0.4, -1.1, 2.0])), np.array([0.6, -0.3, 0.9]))
STATIC_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                        reliability=ReliabilityPolicy.RELIABLE)        # tf2_ros StaticTransformBroadcaster's
TF_LISTENER_SUFFIX = "_tf_listener"


def stamped(pose: pin.SE3, frame: str) -> PoseStamped:
    msg = PoseStamped(pose=pose_msg(pose))
    msg.header.frame_id = frame
    return msg


def positions_of(model, msg: JointState) -> np.ndarray:
    by_name = dict(zip(msg.name, msg.position))
    return np.array([by_name[n] for n in model.joint_names])


class Graph:
    """The nodes under test plus a probe node that publishes the camera frame and records joint states."""

    def __init__(self, ros, *nodes):
        self.context, self.executor = ros
        for node in nodes:
            self.executor.add_node(node)
        self.probe = Node("tf_probe", context=self.context)
        self.executor.add_node(self.probe)
        self.joint_states: list[JointState] = []
        self.probe.create_subscription(JointState, "/joint_states", self.joint_states.append, 50)
        self._static = self.probe.create_publisher(TFMessage, "/tf_static", STATIC_QOS)

    def publish_camera(self):
        stamp = self.probe.get_clock().now().to_msg()
        self._static.publish(TFMessage(transforms=[transform_msg(BASE, "camera", BASE_T_CAMERA, stamp)]))

    def tf_listeners(self) -> tuple[int, list[str]]:
        """(subscriptions on /tf_static in the graph, TF listener nodes in the graph)."""
        names = [n for n in self.probe.get_node_names() if n.endswith(TF_LISTENER_SUFFIX)]
        return self.probe.count_subscribers("/tf_static"), names

    def listening(self) -> bool:
        count, names = self.tf_listeners()
        return count > 0 and bool(names)


# ---- waypoints_in_base with a lookup (no ROS graph) -----------------------------------------------------
def test_waypoints_in_a_looked_up_frame_compose_with_base_T_frame(panda):
    camera_T_waypoint = pin.SE3(pin.exp3(np.array([0.1, 0.2, -0.3])), np.array([0.05, -0.1, 0.4]))
    calls = []

    def lookup(frame):
        calls.append(frame)
        return BASE_T_CAMERA

    q = panda.home()
    poses = waypoints_in_base(panda, q, [stamped(camera_T_waypoint, "camera"),
                                         stamped(camera_T_waypoint, "camera"),
                                         stamped(camera_T_waypoint, "panda_link0")], lookup)
    expected = np.array(BASE_T_CAMERA.homogeneous) @ np.array(camera_T_waypoint.homogeneous)       # (4, 4)
    np.testing.assert_allclose(poses[0].homogeneous, expected, atol=1e-12)
    np.testing.assert_allclose(poses[1].homogeneous, expected, atol=1e-12)
    np.testing.assert_allclose(poses[2].homogeneous, camera_T_waypoint.homogeneous, atol=1e-12)
    assert calls == ["camera"], "one lookup per frame and goal; none for model frames"
    with pytest.raises(UnknownFrameError, match="frame 'camera' is not in the model"):
        waypoints_in_base(panda, q, [stamped(camera_T_waypoint, "camera")])


# ---- servo_node --------------------------------------------------------------------------------------
def status_type(graph: Graph, topic: str):
    """The message type servo_node publishes on `topic`, found in the graph (whatever ServoStatus type it is)."""
    found = {}

    def discover():
        found.update(dict(graph.probe.get_topic_names_and_types()))
        return topic in found
    assert spin_until(graph.executor, discover), f"{topic} not found"
    package, _, name = found[topic][0].split("/")
    return getattr(importlib.import_module(f"{package}.msg"), name)


@pytest.fixture
def servo_graph(ros):
    context, _ = ros
    graph = Graph(ros, ServoNode(context=context), SimRobot(context=context))
    graph.twist_pub = graph.probe.create_publisher(TwistStamped, "/servo_node/delta_twist_cmds", 10)
    graph.statuses = []
    graph.probe.create_subscription(status_type(graph, "/servo_node/status"), "/servo_node/status",
                                    graph.statuses.append, 50)
    assert spin_until(graph.executor, lambda: graph.twist_pub.get_subscription_count() > 0
                      and len(graph.joint_states) > 2), "servo/sim not discovered"
    return graph


def stream(graph: Graph, seconds: float, linear, frame: str, period: float = 0.01):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        msg = TwistStamped()
        msg.header.frame_id = frame
        msg.twist.linear.x, msg.twist.linear.y, msg.twist.linear.z = (float(v) for v in linear)
        graph.twist_pub.publish(msg)
        spin_for(graph.executor, period)


def settle(graph: Graph, model) -> np.ndarray:
    """Tool position once the arm has stopped (two joint states 50 ms apart agree to 1e-6 rad)."""
    def still():
        before = positions_of(model, graph.joint_states[-1])
        spin_for(graph.executor, 0.05)
        return np.abs(positions_of(model, graph.joint_states[-1]) - before).max() < 1e-6
    assert spin_until(graph.executor, still), "the arm did not stop"
    return model.fk(positions_of(model, graph.joint_states[-1])).translation


def angle_deg(a, b) -> float:
    return float(np.degrees(np.arccos(np.clip(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)), -1.0, 1.0))))


def test_servo_twist_in_a_tf_frame_moves_along_the_rotated_direction_and_listens_only_then(
        servo_graph, panda):
    graph = servo_graph
    graph.publish_camera()
    # model frames only: no TF subscription, no listener node
    stream(graph, 0.3, (0.3, 0.0, 0.0), "")
    stream(graph, 0.3, (0.0, 0.0, 0.3), "panda_hand_tcp")
    assert graph.tf_listeners() == (0, []), "a TF listener exists although only model frames were used"

    v_camera = np.array([0.0, 0.4, 0.3])                     # unitless; camera axes
    start = settle(graph, panda)
    stream(graph, 1.0, v_camera, "camera")
    moved = settle(graph, panda) - start
    expected = BASE_T_CAMERA.rotation @ v_camera
    assert np.linalg.norm(moved) > 0.02, moved
    assert angle_deg(moved, expected) < 3.0, (moved, expected)
    assert angle_deg(moved, v_camera) > 30.0, "control: the command's own axes would give another direction"
    assert spin_until(graph.executor, graph.listening), "the camera frame should have started a TF listener"


def test_servo_reports_the_tf_error_for_an_unknown_frame(servo_graph):
    graph = servo_graph
    stream(graph, 0.2, (0.3, 0.0, 0.0), "nowhere")
    expected_codes = {ServoStatus.INVALID_COMMAND.value, getattr(ServoStatus.INVALID_COMMAND, "moveit_code", None)}

    def rejected():
        return [s for s in graph.statuses if "nowhere" in s.message]
    assert spin_until(graph.executor, rejected), [s.message for s in graph.statuses]
    status = rejected()[-1]
    assert status.code in expected_codes, (status.code, status.message)
    assert ServoStatus.INVALID_COMMAND.sentence in status.message
    assert "frame 'nowhere' is not in the robot model" in status.message
    assert "passed to lookupTransform argument" in status.message, status.message


# ---- path_ik_node ------------------------------------------------------------------------------------
@pytest.fixture
def path_graph(ros):
    context, _ = ros
    graph = Graph(ros, PathIkNode(context=context), SimRobot(context=context))
    graph.client = ActionClient(graph.probe, ExecuteCartesianPath, "/path_ik_node/execute_cartesian_path")
    assert spin_until(graph.executor, lambda: graph.client.server_is_ready() and len(graph.joint_states) > 2), \
        "path_ik_node/sim not discovered"
    yield graph
    graph.client.destroy()


def plan(graph: Graph, waypoints) -> Result:
    goal = ExecuteCartesianPath.Goal(waypoints=waypoints, plan_only=True)
    future = graph.client.send_goal_async(goal)
    assert spin_until(graph.executor, future.done), "goal response timed out"
    handle = future.result()
    assert handle.accepted
    result_future = handle.get_result_async()
    assert spin_until(graph.executor, result_future.done, 60.0), "no result"
    wrapper = result_future.result()
    return wrapper.result, wrapper.status


def test_waypoint_in_a_tf_frame_lands_at_base_T_camera_times_camera_T_waypoint(path_graph, panda):
    graph = path_graph
    graph.publish_camera()
    q0 = positions_of(panda, graph.joint_states[-1])
    base_T_tool = panda.fk(q0)
    # model frames only: no TF subscription, no listener node
    result, _ = plan(graph, [stamped(base_T_tool * pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.03])), "panda_link0")])
    assert result.error_code == Result.SUCCESS, result.message
    assert graph.tf_listeners() == (0, []), "a TF listener exists although only model frames were used"

    base_T_target = pin.SE3(base_T_tool.rotation, base_T_tool.translation + np.array([0.04, 0.05, -0.06]))
    camera_T_waypoint = BASE_T_CAMERA.actInv(base_T_target)
    result, status = plan(graph, [stamped(camera_T_waypoint, "camera")])
    assert result.error_code == Result.SUCCESS and status == GoalStatus.STATUS_SUCCEEDED, result.message
    trajectory = result.trajectory
    by_name = dict(zip(trajectory.joint_names, trajectory.points[-1].positions))
    reached = panda.fk(np.array([by_name[n] for n in panda.joint_names]))
    expected = BASE_T_CAMERA * camera_T_waypoint
    assert np.linalg.norm(reached.translation - expected.translation) < 1e-3
    assert np.linalg.norm(pin.log3(reached.rotation @ expected.rotation.T)) < 1e-3
    assert np.linalg.norm(reached.translation - base_T_tool.translation) > 0.05, "control: the tool must move"
    assert spin_until(graph.executor, graph.listening), "the camera frame should have started a TF listener"


def test_path_goal_reports_the_tf_error_for_an_unknown_frame(path_graph, panda):
    graph = path_graph
    result, status = plan(graph, [stamped(pin.SE3.Identity(), "nowhere")])
    assert result.error_code == Result.INVALID_GOAL, result.message
    assert status == GoalStatus.STATUS_ABORTED
    assert "frame 'nowhere' is not in the robot model" in result.message
    assert "passed to lookupTransform argument" in result.message, result.message


# ---- the tf2_ros backend (a real install), against a stand-in with tf2_ros's rclpy API -------------------
class FakeTf2Ros(types.ModuleType):
    """tf2_ros's names as tf2_ros_py (geometry2) defines them: Buffer.lookup_transform(target, source, time,
    timeout), TransformListener(buffer, node), TransformException."""

    class TransformException(Exception):
        pass

    def __init__(self):
        super().__init__("tf2_ros")
        fake = self
        self.calls, self.listener_nodes = [], []

        class Buffer:
            def lookup_transform(self, target, source, time, timeout=Duration()):
                fake.calls.append((target, source, time, timeout))
                if source != "camera":
                    raise fake.TransformException(f'"{source}" passed to lookupTransform argument source_frame '
                                                  "does not exist. ")
                return transform_msg(BASE, "camera", BASE_T_CAMERA, time.to_msg())

        class TransformListener:
            def __init__(self, buffer, node):
                fake.listener_nodes.append(node.get_name())

        self.Buffer, self.TransformListener = Buffer, TransformListener


def test_tf2_ros_is_used_when_installed(ros, monkeypatch, panda):
    fake = FakeTf2Ros()
    monkeypatch.setitem(sys.modules, "tf2_ros", fake)
    context, _ = ros
    owner = Node("owner", context=context)
    frames = TfFrames(owner, panda, first_lookup_wait=0.5)
    try:
        assert frames.pose_if_external("panda_hand") is None and not frames.listening
        pose = frames.pose_if_external("/camera")
        np.testing.assert_allclose(pose.homogeneous, BASE_T_CAMERA.homogeneous, atol=1e-12)
        target, source, stamp, timeout = fake.calls[0]
        assert (target, source, stamp.nanoseconds) == (BASE, "camera", 0)       # Time() = the newest transform
        assert 0.0 < timeout.nanoseconds <= 0.5e9
        assert fake.listener_nodes == ["owner_tf_listener"], "tf2_ros must listen on a side node of its own"
        with pytest.raises(TransformLookupError) as err:
            frames.lookup("nowhere")
        assert "frame 'nowhere' is not in the robot model" in str(err.value)
        assert '"nowhere" passed to lookupTransform argument source_frame does not exist' in str(err.value)
    finally:
        frames.close()
        owner.destroy_node()
