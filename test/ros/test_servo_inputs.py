"""servo_node's inputs beyond twists, driven from another process: the installed servo_node and sim_robot run as
processes with the shipped configuration (config/panda_servo.yaml, config/sim_robot.yaml), and the arm's motion is
judged by forward kinematics of the /joint_states the simulated arm publishes."""
import time

import numpy as np
import pinocchio as pin
import pytest
from control_msgs.msg import JointJog
from geometry_msgs.msg import PoseStamped
from rclpy.node import Node
from ros_helpers import spin_for, spin_until
from sensor_msgs.msg import JointState

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

    def _on_state(self, msg: JointState) -> None:
        self.states.append((msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec, np.array(msg.position)))

    def ros_now(self) -> float:
        return self.node.get_clock().now().nanoseconds * 1e-9

    def pose(self, T: pin.SE3, stamp: float = 0.0, frame: str = "panda_link0") -> None:
        msg = PoseStamped()
        msg.header.frame_id = frame
        if stamp:
            msg.header.stamp.sec, msg.header.stamp.nanosec = int(stamp), int(round((stamp % 1.0) * 1e9)) % 10**9
        p, q = T.translation, pin.Quaternion(T.rotation)
        msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = (float(v) for v in p)
        msg.pose.orientation.x, msg.pose.orientation.y, msg.pose.orientation.z, msg.pose.orientation.w = \
            float(q.x), float(q.y), float(q.z), float(q.w)
        self.poses.publish(msg)


@pytest.fixture
def client(ros, launch):
    servo = launch("servo_node", "--ros-args", "--params-file", f"{CONFIG}/panda_servo.yaml")
    sim = launch("sim_robot", "--ros-args", "--params-file", f"{CONFIG}/sim_robot.yaml")
    c = Client(ros)
    assert spin_until(c.executor, lambda: c.poses.get_subscription_count() > 0 and c.jogs.get_subscription_count()
                      > 0 and len(c.states) > 5 and c.statuses, 30.0), \
        f"servo/sim not discovered:\n{servo.output}\n{sim.output}"
    c.servo = servo
    return c


@pytest.fixture(scope="module")
def panda():
    return RobotModel.from_name("panda")


def test_a_pose_target_10_cm_away_settles_within_tolerance_and_says_so(client, panda):
    tolerance = ServoConfig().pose_linear_tolerance
    start = panda.fk(client.states[-1][1])
    step = np.array([0.0, 0.08, -0.06])                      # 10 cm
    goal = pin.SE3(start.rotation, start.translation + step)
    client.pose(goal)
    spin_for(client.executor, 2.5)
    reached = panda.fk(client.states[-1][1])
    assert np.linalg.norm(reached.translation - goal.translation) <= tolerance, client.servo.output
    assert np.linalg.norm(pin.log3(goal.rotation @ reached.rotation.T)) <= ServoConfig().pose_angular_tolerance
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
