"""A node given no robot parameter takes its model from the robot_description topic (transient local, as
robot_state_publisher publishes it), and a node given no model at all exits with every way to give one."""
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from ros_helpers import spin_until
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from robokin_ros.core.classroom.ur_eseries import JOINT_NAMES
from robokin_ros.core.embedded import urdf_xml

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)


def _exit_output(process, timeout: float = 30.0) -> tuple[int, str]:
    return process.wait(timeout=timeout), process.output


def test_a_node_without_robot_builds_its_model_from_the_latched_topic(probe, launch):
    node, executor = probe
    description = node.create_publisher(String, "/robot_description", LATCHED)
    description.publish(String(data=urdf_xml("ur5e")))        # before the node starts: it must be latched
    names: list[tuple[str, ...]] = []
    node.create_subscription(JointState, "/joint_states", lambda msg: names.append(tuple(msg.name)), 10)
    sim = launch("sim_robot", "--ros-args", "-p", "base_frame:=base_link", "-p", "tip_frame:=tool0",
                 "-p", "publish_tf:=false")
    assert spin_until(executor, lambda: names, 30.0), sim.output
    assert names[-1] == JOINT_NAMES
    assert "waiting up to 10 s for the URDF on /robot_description" in sim.output
    assert "robot model from /robot_description" in sim.output and "base_link -> tool0" in sim.output


def test_a_node_with_no_model_at_all_exits_listing_the_ways(launch):
    code, output = _exit_output(launch("servo_node"))
    assert code == 1, output
    for way in ("no robot model given", "robot:=<name>", "'panda'", "'ur5e'", "robot:=<file.urdf>",
                "robot:=<file.urdf.xacro>", "xacro_args", "robot_description:=<XML>", "robot_description topic",
                "/robot_description", "transient local"):
        assert way in output, output
    assert "panda_link0" not in output                      # no silent Panda


def test_the_wait_for_the_topic_is_bounded(launch):
    node = launch("capability_node", "--ros-args", "-r", "__ns:=/nobody", "-p", "base_frame:=base_link",
                  "-p", "tip_frame:=tool0", "-p", "robot_description_timeout:=0.5")
    code, output = _exit_output(node)
    assert code == 1, output
    assert "waiting up to 0.5 s for the URDF on /nobody/robot_description" in output
    assert "nothing arrived within robot_description_timeout = 0.5 s" in output
