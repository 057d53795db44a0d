"""servo_node's inputs beyond twists, driven from another process: the installed servo_node and sim_robot run as
processes with the shipped configuration (config/panda_servo.yaml, config/sim_robot.yaml), and the arm's motion is
judged by forward kinematics of the /joint_states the simulated arm publishes."""
import time

import numpy as np
import pinocchio as pin
import pytest
from control_msgs.msg import JointJog
from geometry_msgs.msg import PoseStamped, TwistStamped, WrenchStamped
from rclpy.node import Node
from ros_helpers import se3_pose_stamped, spin_for, spin_until
from sensor_msgs.msg import JointState
from shape_msgs.msg import SolidPrimitive
from std_msgs.msg import Float64
from std_srvs.srv import SetBool
from visualization_msgs.msg import MarkerArray

from robokin_interfaces.msg import SceneObject as SceneObjectMsg
from robokin_interfaces.msg import ServoStatus as StatusMsg
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.status import ServoStatus

CONFIG = "config"


class Client:
    """Publishes the servo's inputs and records joint states (with their stamps) and robokin statuses."""

    def __init__(self, ros) -> None:
        context, self.executor = ros
        self.node = Node("servo_input_client", context=context)
        self.executor.add_node(self.node)
        self.states: list[tuple[float, np.ndarray]] = []          # (stamp [s], positions)
        self.statuses: list[StatusMsg] = []
        self.node.create_subscription(JointState, "/joint_states", self._on_state, 50)
        self.node.create_subscription(StatusMsg, "/servo_node/robokin_status", self.statuses.append, 50)
        self.poses = self.node.create_publisher(PoseStamped, "/servo_node/pose_target_cmds", 10)
        self.jogs = self.node.create_publisher(JointJog, "/servo_node/delta_joint_cmds", 10)
        self.twists = self.node.create_publisher(TwistStamped, "/servo_node/delta_twist_cmds", 10)
        self.distances = self.node.create_publisher(Float64, "/servo_node/separation_distance", 10)
        self.wrenches = self.node.create_publisher(WrenchStamped, "/servo_node/wrench", 10)
        self.guiding = self.node.create_client(SetBool, "/servo_node/enable_hand_guiding")

    def _on_state(self, msg: JointState) -> None:
        self.states.append((msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec, np.array(msg.position)))

    def ros_now(self) -> float:
        return self.node.get_clock().now().nanoseconds * 1e-9

    def pose(self, T: pin.SE3, stamp: float = 0.0, frame: str = "panda_link0") -> None:
        self.poses.publish(se3_pose_stamped(T, frame, stamp))

    def every_10_ms(self, seconds: float, publish) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            publish()
            spin_for(self.executor, 0.01)

    def call(self, client, request):
        assert spin_until(self.executor, client.service_is_ready, 30.0), f"{client.srv_name} not offered"
        future = client.call_async(request)
        assert spin_until(self.executor, future.done, 5.0)
        return future.result()

    def tool_speed(self, panda, since: float) -> float:
        """Median tool speed [m/s] over the joint states stamped after `since` (FK differences)."""
        samples = [(t, panda.fk(q).translation) for t, q in self.states if t > since]
        speeds = [np.linalg.norm(p1 - p0) / (t1 - t0) for (t0, p0), (t1, p1) in zip(samples[::5], samples[5::5])]
        return float(np.median(speeds))


def start(ros, launch, *servo_args: str) -> Client:
    servo = launch("servo_node", "--ros-args", "--params-file", f"{CONFIG}/panda_servo.yaml", *servo_args)
    sim = launch("sim_robot", "--ros-args", "--params-file", f"{CONFIG}/sim_robot.yaml")
    c = Client(ros)
    assert spin_until(c.executor, lambda: c.poses.get_subscription_count() > 0 and c.jogs.get_subscription_count()
                      > 0 and c.wrenches.get_subscription_count() > 0 and len(c.states) > 5 and c.statuses, 30.0), \
        f"servo/sim not discovered:\n{servo.output}\n{sim.output}"
    c.servo = servo
    return c


@pytest.fixture
def client(ros, launch):
    return start(ros, launch)


@pytest.fixture(scope="module")
def panda():
    return RobotModel.from_name("panda")


def test_a_pose_target_10_cm_away_settles_within_tolerance_and_says_so(client, panda):
    tolerance = ServoConfig().pose_tracking.linear_tolerance
    start = panda.fk(client.states[-1][1])
    step = np.array([0.0, 0.08, -0.06])                      # 10 cm
    goal = pin.SE3(start.rotation, start.translation + step)
    client.pose(goal)
    spin_for(client.executor, 2.5)
    reached = panda.fk(client.states[-1][1])
    assert np.linalg.norm(reached.translation - goal.translation) <= tolerance, client.servo.output
    assert np.linalg.norm(pin.log3(goal.rotation @ reached.rotation.T)) <= ServoConfig().pose_tracking.angular_tolerance
    progress = [float(step @ (panda.fk(q).translation - start.translation)) / 0.1 for _, q in client.states]
    assert max(progress) <= 0.1 + 2e-4, max(progress)                   # no overshoot past the target
    last = client.statuses[-1]
    assert last.code == ServoStatus.TARGET_REACHED and "pose target reached: remaining error" in last.message
    assert any(s.message.startswith("moving to the pose target") for s in client.statuses)


def test_a_target_moving_on_a_10_cm_circle_at_0_1_m_s_is_followed_within_2_mm(client, panda):
    start = panda.fk(client.states[-1][1])
    radius, speed = 0.05, 0.1
    omega, t0 = speed / radius, client.ros_now()

    def target(t):
        a = omega * (t - t0)
        return pin.SE3(start.rotation, start.translation + radius * np.array([0.0, np.cos(a) - 1.0, np.sin(a)]))

    first = len(client.states)
    end = time.monotonic() + 6.0
    while time.monotonic() < end:            # a stamped stream at ~100 Hz, as a tracker would publish it
        now = client.ros_now()
        client.pose(target(now), stamp=now)
        spin_for(client.executor, 0.01)
    errors = [(stamp, np.linalg.norm(panda.fk(q).translation - target(stamp).translation))
              for stamp, q in client.states[first:]]
    steady = np.array([e for stamp, e in errors if stamp > t0 + 2.0])   # after the first lap's catch-up
    assert len(steady) > 100
    print(f"circle: steady-state error max {steady.max() * 1e3:.3f} mm, median {np.median(steady) * 1e3:.3f} mm")
    assert steady.max() <= 0.002, f"steady-state error max {steady.max() * 1e3:.2f} mm"


def test_a_joint_jog_from_another_process_moves_that_joint_alone(client):
    start = client.states[-1][1].copy()
    msg = JointJog(joint_names=["panda_joint4"], velocities=[-0.4])        # unitless x scale.joint 0.5
    end = time.monotonic() + 0.6
    while time.monotonic() < end:
        client.jogs.publish(msg)
        spin_for(client.executor, 0.01)
    spin_for(client.executor, 0.4)
    moved = client.states[-1][1] - start
    assert -0.2 * (0.6 + 0.2) < moved[3] < -0.08, moved
    assert np.abs(np.delete(moved, 3)).max() < 1e-6, moved


def _twist(y: float) -> TwistStamped:
    msg = TwistStamped()
    msg.header.frame_id = "panda_link0"
    msg.twist.linear.y = y
    return msg


def test_separation_distance_scales_the_tool_speed_and_stops_inside_the_protective_distance(ros, launch, panda):
    c = start(ros, launch, "-p", "separation.enabled:=true")
    cfg = ServoConfig()
    command = _twist(0.5)                                   # unitless 0.5 x scale.linear 0.4 = 0.2 m/s

    def both(distance):
        c.distances.publish(Float64(data=distance))
        c.twists.publish(command)

    c.every_10_ms(0.6, lambda: both(0.5))
    since = c.ros_now()
    c.every_10_ms(0.6, lambda: both(0.5))
    expected = cfg.separation.safe_speed * 0.5 / cfg.separation.safety_distance     # 0.125 m/s
    assert abs(c.tool_speed(panda, since) - expected) <= 0.05 * expected, c.tool_speed(panda, since)
    assert c.statuses[-1].code == ServoStatus.SEPARATION_LIMITED and "500 mm" in c.statuses[-1].message
    c.every_10_ms(0.6, lambda: both(0.2))                   # inside the protective distance
    still = c.states[-1][1]
    c.every_10_ms(0.3, lambda: both(0.2))
    assert np.abs(c.states[-1][1] - still).max() < 1e-6
    assert c.statuses[-1].code == ServoStatus.PROTECTIVE_STOP
    # the distance stops arriving: the slowest speed (the one at the protective distance), not the full speed
    c.every_10_ms(0.8, lambda: c.twists.publish(command))
    since = c.ros_now()
    c.every_10_ms(0.6, lambda: c.twists.publish(command))
    slowest = cfg.separation.safe_speed * cfg.separation.protective_distance / cfg.separation.safety_distance
    assert c.tool_speed(panda, since) <= slowest * 1.05


def test_a_guided_push_moves_the_tool_at_force_over_damping_and_pauses_when_the_wrench_goes_stale(client, panda):
    cfg = ServoConfig()

    def wrench(fx, fy):
        msg = WrenchStamped()
        msg.header.frame_id = "panda_link0"
        msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = fx, fy, 4.0       # 4 N of sensor offset
        return msg

    client.every_10_ms(0.3, lambda: client.wrenches.publish(wrench(0.0, 0.0)))
    answer = client.call(client.guiding, SetBool.Request(data=True))
    assert answer.success, answer.message
    client.every_10_ms(1.0, lambda: client.wrenches.publish(wrench(0.0, 10.0)))
    since = client.ros_now()
    client.every_10_ms(0.6, lambda: client.wrenches.publish(wrench(0.0, 10.0)))
    expected = (10.0 - cfg.hand_guiding.force_deadband) / cfg.hand_guiding.damping            # 0.16 m/s along +y
    assert abs(client.tool_speed(panda, since) - expected) <= 0.05 * expected, client.tool_speed(panda, since)
    assert client.statuses[-1].code == ServoStatus.HAND_GUIDING
    spin_for(client.executor, 0.6)                           # the sensor goes silent
    still = client.states[-1][1]
    spin_for(client.executor, 0.3)
    assert np.abs(client.states[-1][1] - still).max() < 1e-6
    assert "hand guiding paused: no wrench for" in client.statuses[-1].message       # within resume_timeout


def test_a_scene_object_added_at_runtime_halts_the_arm_at_the_minimum_distance_and_its_removal_frees_it(
        ros, launch, panda):
    c = start(ros, launch, "-p", "check_collisions:=true")
    scene = c.node.create_publisher(SceneObjectMsg, "/servo_node/scene_objects", 10)
    markers: list[MarkerArray] = []
    c.node.create_subscription(MarkerArray, "/servo_node/collision_markers", markers.append, 10)
    assert spin_until(c.executor, lambda: scene.get_subscription_count() > 0 and markers, 15.0)
    tool = panda.fk(c.states[-1][1]).translation
    block = SceneObjectMsg(operation=SceneObjectMsg.ADD, id="block")
    block.header.frame_id = "panda_link0"
    block.pose.position.x, block.pose.position.y, block.pose.position.z = float(tool[0]) + 0.05, float(tool[1]), 0.25
    block.pose.orientation.w = 1.0
    block.primitive = SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[0.2, 0.2, 0.04])
    scene.publish(block)
    c.every_10_ms(3.5, lambda: c.twists.publish(twist_z(-0.25)))          # 0.1 m/s down onto the block
    halted = c.statuses[-1]
    assert halted.code == ServoStatus.HALT_FOR_COLLISION and "block" in halted.message, halted.message
    still = c.states[-1][1]
    c.every_10_ms(0.3, lambda: c.twists.publish(twist_z(-0.25)))
    assert np.abs(c.states[-1][1] - still).max() < 1e-6
    texts = [m.text for array in markers for m in array.markers if m.type == m.TEXT_VIEW_FACING]
    assert any("block" in t and "mm" in t for t in texts), texts[-3:]
    # the block removed: the same command moves the arm down again
    scene.publish(SceneObjectMsg(operation=SceneObjectMsg.REMOVE, id="block"))
    c.every_10_ms(0.5, lambda: c.twists.publish(twist_z(-0.25)))
    assert panda.fk(c.states[-1][1]).translation[2] < panda.fk(still).translation[2] - 0.01
    # a malformed object is refused with its reason, and the node keeps running
    scene.publish(SceneObjectMsg(operation=SceneObjectMsg.MOVE, id="nothing"))
    spin_for(c.executor, 0.3)
    assert any("scene object rejected" in s.message and "nothing" in s.message for s in c.statuses)


def twist_z(z: float) -> TwistStamped:
    msg = TwistStamped()
    msg.header.frame_id = "panda_link0"
    msg.twist.linear.z = z
    return msg
