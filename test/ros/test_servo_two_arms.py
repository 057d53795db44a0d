"""servo_node on two Pandas (issue 26), driven as a user would: the servo_node and sim_robot executables started
with config/dual_panda_servo.yaml (the sim holds the hands facing each other 0.3 m apart, as around a box), twists
and joint jogs on the servo's topics, the mode switched with the parameter service (as `ros2 param set` does).

Every figure is measured on what the simulated arms did: the /joint_states the sim publishes, through the model's
forward kinematics (and for the arm-against-arm halt, an exact distance computed here), never the servo's numbers.
The processes run once for the module; each test sets the mode it needs and starts from where the last one left
the hands (the collision test, which leaves them close together, comes last).
"""
import time

import numpy as np
import pinocchio as pin
import pytest
import rclpy
from control_msgs.msg import JointJog
from geometry_msgs.msg import PoseStamped, TwistStamped
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from ros_helpers import se3_pose_stamped, spin_for, spin_until
from sensor_msgs.msg import JointState
from visualization_msgs.msg import MarkerArray

from node_process import PACKAGE_DIR, Process
from robokin_interfaces.msg import ServoStatus as StatusMsg
from robokin_ros.core.collision.clearance import ClearanceChecker
from robokin_ros.core.collision.geometry import build_robot_geometry
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.ros.launch_sim_start import sim_section, with_sim_section
from robokin_ros.launch_support import arm_nodes, parameter_files
from robokin_ros.nodes.servo_node import ServoNode
from robokin_ros.ros.servo_tips import tip_token, tip_topics

CONFIG = PACKAGE_DIR / "config" / "dual_panda_servo.yaml"
LEFT, RIGHT = "left_panda_hand_tcp", "right_panda_hand_tcp"
TIMEOUT = 0.1                       # [s] incoming_command_timeout in the config
MIN_DISTANCE = 0.01                 # [m] min_allowable_collision_distance in the config


@pytest.fixture(scope="module")
def dual():
    return RobotModel.load("dual_panda")


class Cell:
    """The two processes and a probe node: records /joint_states (by name, in the model's order) and the status."""

    def __init__(self, robot, log_dir):
        self.robot = robot
        self.context = Context()
        rclpy.init(context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.node = Node("two_arms_probe", context=self.context)
        self.executor.add_node(self.node)
        self.states: list[tuple[float, np.ndarray]] = []
        self.statuses: list[StatusMsg] = []
        self.markers: list[MarkerArray] = []
        self.node.create_subscription(JointState, "/joint_states", self._on_state, 100)
        self.node.create_subscription(StatusMsg, "/servo_node/robokin_status", self.statuses.append, 100)
        self.node.create_subscription(MarkerArray, "/servo_node/collision_markers", self.markers.append, 10)
        self.twist_pubs = {"": self.node.create_publisher(TwistStamped, "/servo_node/delta_twist_cmds", 10)}
        for tip, (twist_topic, _) in tip_topics(robot.tip_frames).items():
            self.twist_pubs[tip] = self.node.create_publisher(TwistStamped, twist_topic.replace("~", "/servo_node"),
                                                              10)
        self.jog_pub = self.node.create_publisher(JointJog, "/servo_node/delta_joint_cmds", 10)
        self.params = self.node.create_client(SetParameters, "/servo_node/set_parameters")
        self.processes = [Process("servo_node", ["--ros-args", "--params-file", str(CONFIG)], log_dir),
                          Process("sim_robot", ["--ros-args", "--params-file", str(CONFIG)], log_dir)]

    def _on_state(self, msg: JointState) -> None:
        where = {name: i for i, name in enumerate(msg.name)}
        self.states.append((time.monotonic(), np.array([msg.position[where[n]] for n in self.robot.joint_names])))

    def wait_ready(self):
        assert spin_until(self.executor, lambda: all(p.get_subscription_count() > 0 for p in self.twist_pubs.values())
                          and len(self.states) > 10 and self.statuses and self.params.service_is_ready(), 60.0), \
            "\n".join(p.output for p in self.processes)

    def close(self):
        for process in self.processes:
            process.stop()
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)

    # ---- acting -----------------------------------------------------------------------------------
    def set_mode(self, mode: str):
        request = SetParameters.Request(parameters=[ParameterMsg(
            name="tips.mode", value=ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=mode))])
        future = self.params.call_async(request)
        assert spin_until(self.executor, future.done)
        result = future.result().results[0]
        assert result.successful, result.reason

    def twist(self, tip, linear=(0.0, 0.0, 0.0), angular=(0.0, 0.0, 0.0), frame=""):
        msg = TwistStamped()
        msg.header.frame_id = frame
        msg.twist.linear.x, msg.twist.linear.y, msg.twist.linear.z = (float(v) for v in linear)
        msg.twist.angular.x, msg.twist.angular.y, msg.twist.angular.z = (float(v) for v in angular)
        self.twist_pubs[tip].publish(msg)

    def stream(self, seconds, commands, period=0.01):
        """Publish `commands` [(tip, linear, angular, frame)] every `period` on a fixed schedule, the last exactly
        `seconds` after the first (a late message is sent at once: the schedule does not slip). Returns the
        monotonic times of the first and last publication."""
        start = time.monotonic()
        count = int(round(seconds / period))
        for k in range(count + 1):
            due = start + k * period
            while time.monotonic() < due:
                self.executor.spin_once(timeout_sec=min(0.002, max(due - time.monotonic(), 0.0)))
            for tip, linear, angular, frame in commands:
                self.twist(tip, linear, angular, frame)
            if k == count:
                return start, time.monotonic()

    def settle(self, seconds=0.6):
        """Spin until the arms are at rest (the last 20 states equal) and `seconds` have passed."""
        spin_for(self.executor, seconds)
        assert spin_until(self.executor, lambda: len(self.states) > 20 and np.ptp(
            np.array([q for _, q in self.states[-20:]]), axis=0).max() < 1e-9, 10.0)

    # ---- measuring --------------------------------------------------------------------------------
    def positions(self) -> np.ndarray:
        return self.states[-1][1]

    def since(self, t: float) -> list[np.ndarray]:
        return [q for at, q in self.states if at >= t]

    def pose(self, q, tip) -> pin.SE3:
        return self.robot.fk(q, tip)


@pytest.fixture(scope="module")
def cell(dual, tmp_path_factory):
    cell = Cell(dual, tmp_path_factory.mktemp("two_arms"))
    try:
        cell.wait_ready()
        yield cell
    finally:
        cell.close()


def relative_drift(a_T_b, a_T_b0):
    """([m], [rad]) how far b moved in a's frame."""
    return (float(np.linalg.norm(a_T_b.translation - a_T_b0.translation)),
            float(np.linalg.norm(pin.log3(a_T_b.rotation @ a_T_b0.rotation.T))))


# ---- names ------------------------------------------------------------------------------------------------------
def test_tip_topic_tokens_are_valid_ros_names_and_distinct():
    assert tip_token("left_panda_hand_tcp") == "left_panda_hand_tcp"
    assert tip_token("arm/tool-0") == "arm_tool_0" and tip_token("a__b") == "a_b" and tip_token("0tool") == "tip_0tool"
    assert tip_topics(("a.b", "c"))["a.b"] == ("~/a_b/delta_twist_cmds", "~/a_b/pose_target_cmds")
    with pytest.raises(Exception, match="same topic token 'a_b'"):
        tip_topics(("a.b", "a-b"))


def test_a_one_tip_servo_refuses_a_mode_it_cannot_have_with_the_reason(ros):
    """`ros2 param set /servo_node tips.mode coordinated` on a Panda: refused, saying why; the mode stays."""
    context, executor = ros
    servo = ServoNode(context=context)
    executor.add_node(servo)
    result = servo.set_parameters([Parameter("tips.mode", value="coordinated")])[0]
    assert not result.successful
    assert "needs a robot with several tips" in result.reason and "panda_hand_tcp" in result.reason, result.reason
    assert servo.get_parameter("tips.mode").value == "independent"
    assert servo.servo.config.tips.mode == "independent"


# ---- the node with two arms -------------------------------------------------------------------------------------
def test_independent_each_tip_follows_its_own_topic(cell):
    cell.set_mode("independent")
    cell.settle(0.3)
    q0 = cell.positions()
    left0, right0 = cell.pose(q0, LEFT), cell.pose(q0, RIGHT)
    cell.stream(0.6, [(LEFT, (0.0, 0.0, 0.05), (0.0, 0.0, 0.0), ""), (RIGHT, (0.05, 0.0, 0.0), (0.0, 0.0, 0.0), "")])
    cell.settle()
    q1 = cell.positions()
    left_moved = cell.pose(q1, LEFT).translation - left0.translation
    right_moved = cell.pose(q1, RIGHT).translation - right0.translation
    # ~0.6 s + the timeout at 5 cm/s: 35 mm, each along its own command only
    assert 0.025 < left_moved[2] < 0.045 and np.linalg.norm(left_moved[:2]) < 1e-3, left_moved
    assert 0.025 < right_moved[0] < 0.045 and np.linalg.norm(right_moved[1:]) < 1e-3, right_moved
    # the standard topic is the first tip's: only the left hand moves
    cell.stream(0.5, [("", (0.0, 0.0, -0.05), (0.0, 0.0, 0.0), "")])
    cell.settle()
    q2 = cell.positions()
    assert cell.pose(q2, LEFT).translation[2] - cell.pose(q1, LEFT).translation[2] < -0.01
    assert np.linalg.norm(cell.pose(q2, RIGHT).translation - cell.pose(q1, RIGHT).translation) < 1e-4
    assert any(s.tips_mode == "independent" and set(s.moving_tips) == {LEFT, RIGHT} for s in cell.statuses)
    # RViz: each hand drawn and named at its pose
    assert spin_until(cell.executor, lambda: cell.markers, 5.0)
    names = {m.text for m in cell.markers[-1].markers if m.ns == "robokin_tips" and m.text}
    assert names == {LEFT, RIGHT}


def test_a_joint_jog_moves_joints_of_both_arms_by_name(cell):
    cell.settle(0.2)
    q0 = cell.positions()
    msg = JointJog(joint_names=["left_panda_joint1", "right_panda_joint7"], velocities=[0.1, -0.2])
    end = time.monotonic() + 0.5
    while time.monotonic() < end:
        cell.jog_pub.publish(msg)
        spin_for(cell.executor, 0.01)
    cell.settle()
    moved = cell.positions() - q0
    names = list(cell.robot.joint_names)
    i, j = names.index("left_panda_joint1"), names.index("right_panda_joint7")
    assert moved[i] > 0.03 and moved[j] < -0.06, moved
    assert np.abs(np.delete(moved, [i, j])).max() < 1e-9, moved


def test_a_pose_target_on_a_tip_s_topic_moves_that_hand_there_and_the_other_holds(cell):
    cell.set_mode("independent")
    cell.settle(0.3)
    q0 = cell.positions()
    right0, left0 = cell.pose(q0, RIGHT), cell.pose(q0, LEFT)
    target = pin.SE3(right0.rotation, right0.translation + np.array([0.0, 0.0, 0.02]))
    publisher = cell.node.create_publisher(PoseStamped, f"/servo_node/{tip_token(RIGHT)}/pose_target_cmds", 10)
    assert spin_until(cell.executor, lambda: publisher.get_subscription_count() > 0)
    start = time.monotonic()
    publisher.publish(se3_pose_stamped(target))          # one message is enough
    spin_for(cell.executor, 1.5)
    cell.settle()
    right1 = cell.pose(cell.positions(), RIGHT)
    assert np.linalg.norm(right1.translation - target.translation) < 1e-3, right1.translation - target.translation
    drift = max(np.linalg.norm(cell.pose(q, LEFT).translation - left0.translation) for q in cell.since(start))
    assert drift < 1e-4, drift
    assert any(s.code == ServoStatus.TARGET_REACHED and RIGHT in s.message for s in cell.statuses)


def test_relative_the_still_hand_drifts_at_most_0_1_mm(cell):
    """The right hand moves relative to the left (its topic read in the left hand's axes); the left hand, which
    gets no twist, holds its pose in the world within 0.1 mm at every joint state."""
    cell.set_mode("relative")
    cell.settle(0.3)
    q0 = cell.positions()
    left0, right0 = cell.pose(q0, LEFT), cell.pose(q0, RIGHT)
    start, _ = cell.stream(1.0, [(RIGHT, (0.03, 0.0, 0.0), (0.0, 0.0, 0.0), "")])
    cell.settle()
    drift = max(np.linalg.norm(cell.pose(q, LEFT).translation - left0.translation) for q in cell.since(start))
    assert drift <= 1e-4, drift
    q1 = cell.positions()
    # moved along the left hand's x axis, as seen from the left hand (1.1 s at 3 cm/s: 33 mm, less a loaded
    # machine's stalls)
    relative = left0.actInv(cell.pose(q1, RIGHT)).translation - left0.actInv(right0).translation
    assert 0.015 < relative[0] < 0.04 and np.linalg.norm(relative[1:]) < 1e-3, relative


def test_coordinated_a_held_box_moved_5_cm_s_for_2_s_travels_100_mm_with_the_grasp_kept(cell):
    """The issue's figure: the held object's twist of 5 cm/s along x for 2 s (the stream ends `incoming_command_
    timeout` before: the last twist is followed until stale) keeps the hands' relative pose within 0.1 mm / 1 mrad
    at every joint state, and the object frame (the hands' centroid when the mode started, base axes, riding on the
    hands) moves 100 mm +- 1 mm."""
    cell.set_mode("coordinated")
    cell.settle(0.3)
    q0 = cell.positions()
    left0, right0 = cell.pose(q0, LEFT), cell.pose(q0, RIGHT)
    held = left0.actInv(right0)
    left_T_object = left0.actInv(pin.SE3(np.eye(3), 0.5 * (left0.translation + right0.translation)))
    first, last = cell.stream(2.0 - TIMEOUT, [("", (0.05, 0.0, 0.0), (0.0, 0.0, 0.0), "")])
    cell.settle()
    worst = (0.0, 0.0)
    for q in cell.since(first):
        drift = relative_drift(cell.pose(q, LEFT).actInv(cell.pose(q, RIGHT)), held)
        worst = (max(worst[0], drift[0]), max(worst[1], drift[1]))
    assert worst[0] <= 1e-4 and worst[1] <= 1e-3, worst
    q1 = cell.positions()
    travel = (cell.pose(q1, LEFT) * left_T_object).translation - (left0 * left_T_object).translation
    commanded = last - first + TIMEOUT
    times = np.array([at for at, _ in cell.states if at >= first])
    xs = np.array([(cell.pose(q, LEFT) * left_T_object).translation[0] for q in cell.since(first)])
    middle = (times > first + 0.5) & (times < first + 1.5)
    cruise = np.polyfit(times[middle], xs[middle], 1)[0]
    moving = times[np.abs(np.gradient(xs, times)) > 1e-3]
    assert abs(travel[0] - 0.1) <= 1e-3, (travel, commanded, cruise, moving[0] - first, moving[-1] - first)
    assert np.linalg.norm(travel[1:]) <= 1e-3, travel
    assert any(s.tips_mode == "coordinated" and list(s.moving_tips) == ["object"] for s in cell.statuses)
    # a tip's own topic takes no twist in this mode: refused, saying why, and nothing moves
    cell.statuses.clear()
    cell.stream(0.2, [(LEFT, (0.05, 0.0, 0.0), (0.0, 0.0, 0.0), "")])
    cell.settle()
    assert np.abs(cell.positions() - q1).max() < 1e-9
    assert any(s.code == ServoStatus.INVALID_COMMAND and "coordinated" in s.message for s in cell.statuses)


def test_arm_against_arm_the_hands_slow_and_halt_at_the_minimum_distance_and_the_status_names_the_pair(cell, dual):
    """Both hands driven toward each other at 5 cm/s each (independent mode): they slow down, halt with the
    nearest arm-against-arm pair at min_allowable_collision_distance (distance computed here from the sim's joint
    states), and the status names the pair and both tips."""
    cell.set_mode("independent")
    cell.settle(0.3)
    cell.statuses.clear()
    q0 = cell.positions()
    gap0 = np.linalg.norm(cell.pose(q0, LEFT).translation - cell.pose(q0, RIGHT).translation)
    start, _ = cell.stream(5.0, [(LEFT, (0.0, -0.05, 0.0), (0.0, 0.0, 0.0), ""),
                                 (RIGHT, (0.0, 0.05, 0.0), (0.0, 0.0, 0.0), "")])
    cell.settle()
    checker = ClearanceChecker(dual, build_robot_geometry(dual))
    clearance = checker.check(cell.positions())
    arms = {name.split("_", 1)[0] for name in clearance.names}
    assert arms == {"left", "right"}, clearance.names             # the nearest pair is arm against arm
    assert MIN_DISTANCE - 5e-4 <= clearance.distance <= MIN_DISTANCE + 3e-3, clearance.distance
    q1 = cell.positions()
    gap1 = np.linalg.norm(cell.pose(q1, LEFT).translation - cell.pose(q1, RIGHT).translation)
    assert gap0 - gap1 > 0.05, (gap0, gap1)
    # decelerating before the halt: the closing speed between joint states falls from 10 cm/s toward 0
    times = np.array([at for at, _ in cell.states if at >= start])
    gaps = np.array([np.linalg.norm(cell.pose(q, LEFT).translation - cell.pose(q, RIGHT).translation)
                     for q in cell.since(start)])
    speed = -np.gradient(gaps, times)
    assert np.quantile(speed, 0.9) > 0.08
    slowed = [s.code for s in cell.statuses]
    assert ServoStatus.DECELERATE_FOR_COLLISION in slowed and ServoStatus.HALT_FOR_COLLISION in slowed, slowed
    halted = [s for s in cell.statuses if s.code == ServoStatus.HALT_FOR_COLLISION]
    assert all(set(s.limiting_tips) == {LEFT, RIGHT} for s in halted), [s.limiting_tips for s in halted]
    assert all("arm against arm" in s.message and LEFT in s.message and RIGHT in s.message for s in halted), \
        halted[0].message


# ---- launch -----------------------------------------------------------------------------------------------------
def test_servo_launch_on_dual_panda_takes_the_two_arm_file_and_starts_the_sim_around_the_box(dual):
    """`ros2 launch robokin_ros servo.launch.py robot:=dual_panda sim:=true` (its nodes as launch/servo.launch.py makes
    them: arm_nodes through with_sim_section): servo_node reads
    config/dual_panda_servo.yaml (both tips, one acceleration per joint of both arms); sim_robot gets both tips and
    the file's start configuration, the launch's own settings after it (they win); a one-arm file adds nothing."""
    arguments = {"robot": "dual_panda", "sim": "true"}

    def value(name: str) -> str:
        return arguments.get(name, "")

    files = parameter_files(value, "servo")
    nodes, effective = arm_nodes(with_sim_section(lambda **kw: kw, files), value, "servo_node", "servo")
    assert nodes[0]["parameters"][0].endswith("dual_panda_servo.yaml")
    assert list(effective["tip_frames"]) == [LEFT, RIGHT] and len(effective["max_joint_acceleration"]) == dual.n
    start, *_, sim_overrides = nodes[1]["parameters"]
    assert len(start["initial_positions"]) == dual.n
    assert list(sim_overrides["tip_frames"]) == [LEFT, RIGHT] and sim_overrides["robot"] == "dual_panda"
    # the start holds the hands 0.3 m apart, facing each other
    q = np.array(start["initial_positions"])
    left, right = dual.fk(q, LEFT), dual.fk(q, RIGHT)
    assert np.linalg.norm(left.translation - right.translation) == pytest.approx(0.3, abs=1e-4)
    assert left.rotation[:, 2] @ right.rotation[:, 2] == pytest.approx(-1.0, abs=1e-6)
    assert sim_section([str(PACKAGE_DIR / "config" / "panda_servo.yaml")]) == {}
