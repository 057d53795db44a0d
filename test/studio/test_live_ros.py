"""The studio's live ROS bridge over real rclpy: a stand-in servo_node in the test's own context talks to the bridge
(its own context, its own thread) over DDS on loopback; the last test drives the real servo_node and sim_robot.
"""
import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import rclpy
from geometry_msgs.msg import PoseStamped, TwistStamped
from moveit_msgs.msg import ServoStatus as MoveItStatusMsg
from moveit_msgs.srv import ServoCommandType
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import JointState

from robokin_interfaces.msg import ServoStatus as ServoStatusMsg
from robokin_ros.core.errors import ConfigError, InvalidInputError
from robokin_ros.core.servo.command_type import CommandType
from robokin_ros.share_files import executable
from robokin_ros.studio.live_ros import LiveRosBridge
from robokin_ros.studio.live_ros_topics import ServoTwistUnits, TwistLaw, servo_twist

DISCOVERY_TIMEOUT = 15.0      # [s] a wait on a condition, never a fixed sleep
PACKAGE_DIR = Path(__file__).resolve().parents[2]


def spin_until(executor, predicate, timeout_s=DISCOVERY_TIMEOUT, each=None) -> bool:
    """Spin until `predicate()` holds; `each()` runs every ~30 ms (the app's send rate) meanwhile."""
    end = time.monotonic() + timeout_s
    next_each = 0.0
    while time.monotonic() < end and not predicate():
        if each is not None and time.monotonic() >= next_each:
            each()
            next_each = time.monotonic() + 0.03
        executor.spin_once(timeout_sec=0.005)
    return bool(predicate())


class FakeServo:
    """A node named servo_node: records what arrives on its command topics and switch service, publishes statuses,
    and holds the twist parameters a real servo_node has."""

    def __init__(self, context: Context, command_in_type: str = "speed_units", about_tool: bool = True) -> None:
        self.node = Node("servo_node", context=context)
        for name, value in (("command_in_type", command_in_type), ("scale.linear", 0.4), ("scale.rotational", 0.8),
                            ("apply_twist_about_tool", about_tool)):
            self.node.declare_parameter(name, value)
        self.poses, self.twists, self.switches = [], [], []
        self.node.create_subscription(PoseStamped, "~/pose_target_cmds", self.poses.append, 10)
        self.node.create_subscription(TwistStamped, "~/delta_twist_cmds", self.twists.append, 10)
        self.node.create_service(ServoCommandType, "~/switch_command_type", self._on_switch)
        self.robokin_status = self.node.create_publisher(ServoStatusMsg, "~/robokin_status", 10)
        self.moveit_status = self.node.create_publisher(MoveItStatusMsg, "~/status", 10)

    def _on_switch(self, request, response):
        self.switches.append(request.command_type)
        response.success = True
        return response


@pytest.fixture
def graph():
    """(executor, context): the test's own rclpy context; its nodes are destroyed after the test."""
    context = Context()
    rclpy.init(context=context)
    executor = SingleThreadedExecutor(context=context)
    try:
        yield executor, context
    finally:
        for node in list(executor.get_nodes()):
            executor.remove_node(node)
            node.destroy_node()
        executor.shutdown()
        rclpy.try_shutdown(context=context)


@pytest.fixture
def bridges():
    """make(robot, **kwargs) -> a started LiveRosBridge, stopped after the test."""
    made = []

    def make(robot, **kwargs):
        bridge = LiveRosBridge(robot, **kwargs)
        made.append(bridge)
        bridge.start()
        return bridge

    yield make
    for bridge in made:
        bridge.stop()


def add_fake_servo(graph, **kwargs) -> FakeServo:
    executor, context = graph
    servo = FakeServo(context, **kwargs)
    executor.add_node(servo.node)
    return servo


def joint_state_publisher(graph):
    executor, context = graph
    node = Node("joint_state_source", context=context)
    executor.add_node(node)
    return node.create_publisher(JointState, "/joint_states", 10)


def test_joint_state_with_extra_joints_in_any_order_is_shown_in_chain_order(panda, graph, bridges):
    executor, _ = graph
    bridge = bridges(panda)
    assert bridge.latest_positions() == (None, float("inf"))
    publisher = joint_state_publisher(graph)
    chain = np.linspace(0.1, 0.7, len(panda.joint_names))
    names = ["panda_finger_joint1", *panda.joint_names, "panda_finger_joint2"]
    values = [0.04, *chain, 0.03]
    order = np.random.default_rng(7).permutation(len(names))
    msg = JointState(name=[names[i] for i in order], position=[float(values[i]) for i in order])
    assert spin_until(executor, lambda: bridge.latest_positions()[0] is not None,
                      each=lambda: publisher.publish(msg))
    positions, age = bridge.latest_positions()
    np.testing.assert_array_equal(positions, chain)
    assert 0.0 <= age < 1.0
    assert bridge.problem() == ""


def test_joint_state_missing_a_chain_joint_is_reported_and_not_used(panda, graph, bridges):
    executor, _ = graph
    bridge = bridges(panda)
    publisher = joint_state_publisher(graph)
    full = JointState(name=list(panda.joint_names), position=[0.2] * len(panda.joint_names))
    assert spin_until(executor, lambda: bridge.latest_positions()[0] is not None, each=lambda: publisher.publish(full))
    partial = JointState(name=list(panda.joint_names[:-1]), position=[0.5] * (len(panda.joint_names) - 1))
    assert spin_until(executor, lambda: bridge.problem() != "", each=lambda: publisher.publish(partial))
    assert "/joint_states" in bridge.problem() and "panda_joint7" in bridge.problem()
    np.testing.assert_array_equal(bridge.latest_positions()[0], [0.2] * len(panda.joint_names))


def test_pose_mode_publishes_the_target_in_the_base_frame_and_switches_to_pose(panda, graph, bridges):
    executor, _ = graph
    servo = add_fake_servo(graph)
    bridge = bridges(panda, command="pose")
    target = pin.SE3(pin.rpy.rpyToMatrix(0.3, -0.2, 1.0), np.array([0.4, -0.1, 0.5]))
    assert spin_until(executor, lambda: servo.poses and servo.switches, each=lambda: bridge.send_target(target))
    msg = servo.poses[-1]
    assert msg.header.frame_id == panda.base_frame == "panda_link0"
    assert msg.header.stamp.sec > 0
    p, o = msg.pose.position, msg.pose.orientation
    received = pin.XYZQUATToSE3(np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w]))
    np.testing.assert_allclose(pin.log6(received.actInv(target)).vector, np.zeros(6), atol=1e-12)
    assert servo.switches == [CommandType.POSE]       # once per stream, not at every send
    assert servo.twists == []


def test_twist_mode_heads_for_the_target_at_the_capped_speed(panda, graph, bridges):
    executor, _ = graph
    servo = add_fake_servo(graph, command_in_type="speed_units")
    bridge = bridges(panda, command="twist", max_linear_speed=0.1, max_angular_speed=0.5)
    tool = panda.fk(panda.home())
    offset = np.array([0.3, -0.2, 0.1])                # far: the proportional law would ask 2 * 0.37 m/s
    turn = np.array([0.0, 0.0, 0.8])                  # [rad] about the base z axis
    target = pin.SE3(pin.exp3(turn) @ tool.rotation, tool.translation + offset)
    assert spin_until(executor, lambda: servo.twists, each=lambda: bridge.send_target(target, tool))
    msg = servo.twists[-1]
    assert msg.header.frame_id == panda.base_frame
    v = np.array([msg.twist.linear.x, msg.twist.linear.y, msg.twist.linear.z])
    w = np.array([msg.twist.angular.x, msg.twist.angular.y, msg.twist.angular.z])
    np.testing.assert_allclose(v, 0.1 * offset / np.linalg.norm(offset), atol=1e-12)
    np.testing.assert_allclose(w, 0.5 * turn / np.linalg.norm(turn), atol=1e-12)
    assert servo.switches == [CommandType.TWIST]
    with pytest.raises(InvalidInputError, match="base_T_tool"):
        bridge.send_target(target)


def test_twist_mode_uses_the_servo_units_and_waits_for_them(panda, graph, bridges):
    executor, _ = graph
    bridge = bridges(panda, command="twist")
    tool = panda.fk(panda.home())
    target = pin.SE3(tool.rotation, tool.translation + np.array([0.0, 0.0, 0.02]))    # near: proportional
    assert bridge.send_target(target, tool) is False                 # no servo yet: nothing sent, and why
    assert "waiting for /servo_node's parameters" in bridge.problem()
    servo = add_fake_servo(graph, command_in_type="unitless")
    assert spin_until(executor, lambda: servo.twists, each=lambda: bridge.send_target(target, tool))
    linear = servo.twists[-1].twist.linear
    # 2 /s * 0.02 m = 0.04 m/s, in units of scale.linear = 0.4 m/s
    np.testing.assert_allclose([linear.x, linear.y, linear.z], [0.0, 0.0, 0.1], atol=1e-12)
    assert bridge.problem() == ""


def test_servo_twist_about_the_base_origin_moves_the_tool_origin_as_asked(panda):
    tool = panda.fk(panda.home())
    twist_tool = TwistLaw().twist_toward(tool, pin.SE3(pin.exp3(np.array([0.2, 0.0, 0.3])) @ tool.rotation,
                                                       tool.translation + np.array([0.01, 0.02, -0.01])))
    spatial = servo_twist(twist_tool, tool, ServoTwistUnits(False, 0.4, 0.8, about_tool=False))
    # the rigid motion given by the spatial twist moves the tool origin at v + w x p
    v_tool = spatial[:3] + np.cross(spatial[3:], tool.translation)
    np.testing.assert_allclose(v_tool, twist_tool[:3], atol=1e-12)
    np.testing.assert_array_equal(spatial[3:], twist_tool[3:])


def test_status_text_prefers_robokins_sentence(panda, graph, bridges):
    executor, _ = graph
    servo = add_fake_servo(graph)
    bridge = bridges(panda)
    assert bridge.status_text() == ""
    moveit = MoveItStatusMsg(code=0, message="no warnings")
    assert spin_until(executor, lambda: bridge.status_text() == "no warnings",
                      each=lambda: servo.moveit_status.publish(moveit))
    robokin = ServoStatusMsg(code=0, message="tracking the pose target, 12 mm away")
    assert spin_until(executor, lambda: bridge.status_text() == robokin.message,
                      each=lambda: (servo.robokin_status.publish(robokin), servo.moveit_status.publish(moveit)))


def test_bad_settings_are_all_reported_and_stop_is_idempotent(panda):
    with pytest.raises(ConfigError) as raised:
        LiveRosBridge(panda, servo_node="servo_node", command="joint", max_linear_speed=0.0)
    text = str(raised.value)
    assert "command='joint'" in text and "'pose', 'twist'" in text and "max_linear_speed=0.0" in text
    bridge = LiveRosBridge(panda)
    with pytest.raises(RuntimeError, match="before start"):
        bridge.send_target(pin.SE3.Identity())
    bridge.start()
    assert bridge.running
    bridge.stop()
    bridge.stop()
    assert not bridge.running


def launch(name, *args):
    """A node executable as a subprocess, found and started as a user's `ros2 run` would; stopped by the caller."""
    return subprocess.Popen([str(executable(name)), "--ros-args", *args], cwd=PACKAGE_DIR,
                            env=os.environ.copy(), stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)


@pytest.fixture
def servo_and_sim():
    processes = [launch("servo_node", "--params-file", "config/panda_servo.yaml", "-p", "check_collisions:=false"),
                 launch("sim_robot", "--params-file", "config/sim_robot.yaml")]
    yield processes
    for process in processes:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.mark.parametrize("command", ["pose", "twist"])
def test_a_target_moves_the_real_servo_and_simulated_arm_to_it(panda, servo_and_sim, bridges, command):
    bridge = bridges(panda, command=command)
    end = time.monotonic() + DISCOVERY_TIMEOUT
    while bridge.latest_positions()[0] is None and time.monotonic() < end:
        time.sleep(0.03)
    positions, _ = bridge.latest_positions()
    assert positions is not None, "no /joint_states from sim_robot"
    start = panda.fk(positions)
    target = pin.SE3(start.rotation, start.translation + np.array([0.0, 0.05, -0.03]))
    distance = np.linalg.norm(target.translation - start.translation)
    end = time.monotonic() + DISCOVERY_TIMEOUT
    while time.monotonic() < end:
        tool = panda.fk(bridge.latest_positions()[0])
        bridge.send_target(target, tool)               # streamed as the app does while the gizmo is held
        distance = np.linalg.norm(tool.translation - target.translation)
        if distance < 0.002:
            break
        time.sleep(0.033)
    assert distance < 0.002, (f"arm still {distance * 1e3:.1f} mm from the target; servo says "
                              f"{bridge.status_text()!r}; bridge says {bridge.problem()!r}")
    assert bridge.status_text() != ""


def test_the_studio_in_live_mode_shows_the_joint_states_and_sends_the_gizmo(panda, graph):
    """The app wired to a bridge: the arm it shows is /joint_states, a gizmo move is a pose target, the status
    panel says what the servo says (the app's update is called directly: no browser, no loop thread)."""
    from studio_helpers import STUDIO_EXTRAS, free_port, need_modules
    need_modules(*STUDIO_EXTRAS)

    from robokin_ros.studio.app import StudioApp
    executor, _ = graph
    servo = add_fake_servo(graph)
    publisher = joint_state_publisher(graph)
    bridge = LiveRosBridge(panda)
    bridge.start()
    app = StudioApp("panda", port=free_port(), live=bridge)
    try:
        app.tick(0.03)
        assert "no joint state on /joint_states yet" in app.status_text()
        measured = panda.home() + np.linspace(0.05, 0.35, panda.n)
        state = JointState(name=list(panda.joint_names), position=[float(v) for v in measured])

        def shown() -> bool:
            app.tick(0.03)
            return np.array_equal(app.session.positions, measured)
        assert spin_until(executor, shown, each=lambda: publisher.publish(state))
        assert "joint state" not in app.status_text()
        time.sleep(0.6)                              # no state for longer than LIVE_STALE_AFTER
        app.tick(0.03)
        assert "s old: the arm shown may not be where the robot is" in app.status_text()
        target = panda.fk(measured).translation + np.array([0.03, 0.0, -0.02])
        assert spin_until(executor, lambda: servo.poses, each=lambda: app.move_gizmo(target))
        p = servo.poses[-1].pose.position
        np.testing.assert_allclose([p.x, p.y, p.z], target, atol=1e-12)
        assert app.session.mode == "idle"           # the simulated servo stays out of it in live mode
        status = ServoStatusMsg()
        status.message = "moving to the pose target"
        assert spin_until(executor, lambda: "moving to the pose target" in app.status_text(),
                          each=lambda: servo.robokin_status.publish(status))
    finally:
        app.stop()
