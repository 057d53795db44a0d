"""A client written for MoveIt Servo (Jazzy and later) drives the real servo_node process unchanged.

It does what a MoveIt Servo user's code does: loads a MoveIt Servo parameter file (parameters under
`moveit_servo.`), calls `~/switch_command_type` with TWIST, streams TwistStamped to `~/delta_twist_cmds`, reads
moveit_msgs/ServoStatus on `~/status`, and pauses and resumes with std_srvs/SetBool on `~/pause_servo`. servo_node
and sim_robot run as processes (the installed executables); the arm's motion is judged from /joint_states.
"""
import time

import numpy as np
import pytest
from geometry_msgs.msg import TwistStamped
from moveit_msgs.msg import ServoStatus
from moveit_msgs.srv import ServoCommandType
from rclpy.node import Node
from ros_helpers import spin_for, spin_until
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool

from robokin_ros.core.robot import RobotModel

# A parameter file as MoveIt Servo's own demos write it: every setting under moveit_servo (no robokin names).
MOVEIT_PARAMS = """\
/**:
  ros__parameters:
    moveit_servo:
      move_group_name: panda_arm        # MoveIt-only: robokin ignores it (no parameter by that name)
      publish_period: 0.01
      max_expected_latency: 0.1
      command_in_type: speed_units
      incoming_command_timeout: 0.1
      command_out_type: trajectory_msgs/JointTrajectory
      command_out_topic: /joint_trajectory_controller/joint_trajectory
      joint_topic: /joint_states
      status_topic: ~/status
      cartesian_command_in_topic: ~/delta_twist_cmds
      apply_twist_commands_about_ee_frame: true
      joint_limit_margins: [0.12]
      lower_singularity_threshold: 17.0
      hard_stop_singularity_threshold: 30.0
    robot: panda
    base_frame: panda_link0
    tip_frame: panda_hand_tcp
"""
SPEED = 0.1                       # [m/s] along the base x axis
MOVEIT_CODES = {getattr(ServoStatus, name) for name in (
    "INVALID", "NO_WARNING", "DECELERATE_FOR_APPROACHING_SINGULARITY", "HALT_FOR_SINGULARITY",
    "DECELERATE_FOR_LEAVING_SINGULARITY", "DECELERATE_FOR_COLLISION", "HALT_FOR_COLLISION", "JOINT_BOUND")}


class MoveItServoClient:
    """The client side: services, the twist stream and the status, as a MoveIt Servo user writes them."""

    def __init__(self, ros, servo_name: str = "/servo_node") -> None:
        context, self.executor = ros
        self.node = Node("moveit_servo_client", context=context)
        self.executor.add_node(self.node)
        self.statuses: list[ServoStatus] = []
        self.states: list[tuple[float, np.ndarray]] = []
        self.node.create_subscription(ServoStatus, f"{servo_name}/status", self.statuses.append, 10)
        self.node.create_subscription(JointState, "/joint_states",
                                      lambda m: self.states.append((time.monotonic(), np.array(m.position))), 10)
        self.twist_pub = self.node.create_publisher(TwistStamped, f"{servo_name}/delta_twist_cmds", 10)
        self.switch = self.node.create_client(ServoCommandType, f"{servo_name}/switch_command_type")
        self.pause = self.node.create_client(SetBool, f"{servo_name}/pause_servo")

    def call(self, client, request):
        assert spin_until(self.executor, client.service_is_ready, 30.0), f"{client.srv_name} not offered"
        # A request sent just as the service is discovered can miss the reply's route (DDS matches the request
        # and reply topics separately); a client then asks again, as wait_for_service + retry code does.
        for _ in range(3):
            future = client.call_async(request)
            if spin_until(self.executor, future.done, 5.0):
                return future.result()
            client.remove_pending_request(future)
        raise AssertionError(f"{client.srv_name} did not answer three requests")

    def stream(self, seconds: float, linear=(0.0, 0.0, 0.0)) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            msg = TwistStamped()
            msg.header.stamp = self.node.get_clock().now().to_msg()
            msg.header.frame_id = "panda_link0"
            msg.twist.linear.x, msg.twist.linear.y, msg.twist.linear.z = linear
            self.twist_pub.publish(msg)
            spin_for(self.executor, 0.01)

    def position_at(self, t: float) -> np.ndarray:
        """The joint positions of the last state received before `t` (monotonic)."""
        return [q for received, q in self.states if received <= t][-1]


@pytest.fixture
def client(ros, launch, tmp_path):
    params = tmp_path / "moveit_servo.yaml"
    params.write_text(MOVEIT_PARAMS)
    servo = launch("servo_node", "--ros-args", "--params-file", str(params))
    sim = launch("sim_robot", "--ros-args", "--params-file", "config/sim_robot.yaml")
    moveit_client = MoveItServoClient(ros)
    assert spin_until(moveit_client.executor, lambda: moveit_client.twist_pub.get_subscription_count() > 0
                      and len(moveit_client.states) > 5 and moveit_client.statuses, 30.0), \
        f"servo/sim not discovered:\n{servo.output}\n{sim.output}"
    moveit_client.servo_process = servo
    return moveit_client


def test_a_moveit_servo_client_switches_to_twist_streams_reads_status_pauses_and_resumes(client):
    panda = RobotModel.from_name("panda")
    tool = lambda q: panda.fk(q).translation           # noqa: E731  (base = panda_link0 = world here)

    # the command type: all three are served; an unknown type is refused and leaves the type as it was
    switch = lambda kind: client.call(client.switch, ServoCommandType.Request(command_type=kind))  # noqa: E731
    assert switch(ServoCommandType.Request.JOINT_JOG).success
    assert switch(ServoCommandType.Request.POSE).success
    assert not switch(7).success
    assert "unknown command type 7" in client.servo_process.output
    assert switch(ServoCommandType.Request.TWIST).success

    # stream: the tool moves along +x at the commanded speed; ~/status carries MoveIt's codes
    start = tool(client.states[-1][1])
    client.stream(0.8, linear=(SPEED, 0.0, 0.0))
    moved = tool(client.states[-1][1]) - start
    assert moved[0] > 0.5 * SPEED * 0.8 and np.linalg.norm(moved[1:]) < 0.05 * moved[0], moved
    assert {s.code for s in client.statuses} <= MOVEIT_CODES
    assert client.statuses[-1].code == ServoStatus.NO_WARNING and client.statuses[-1].message

    # pause while commanding: the arm decelerates and stays put although twists keep coming
    assert client.call(client.pause, SetBool.Request(data=True)).success
    paused_at = time.monotonic()
    client.stream(0.8, linear=(SPEED, 0.0, 0.0))
    settled = client.position_at(paused_at + 0.4)                 # after the ramp down and the window's tail
    still = client.states[-1][1]
    np.testing.assert_allclose(still, settled, atol=1e-6)
    assert any("paused" in s.message for s in client.statuses)

    # resume: the next twists move the arm again, along the same direction
    assert client.call(client.pause, SetBool.Request(data=False)).success
    before = tool(client.states[-1][1])
    client.stream(0.8, linear=(SPEED, 0.0, 0.0))
    moved = tool(client.states[-1][1]) - before
    assert moved[0] > 0.5 * SPEED * 0.8 and np.linalg.norm(moved[1:]) < 0.05 * moved[0], moved
    assert client.servo_process.popen.poll() is None, client.servo_process.output


def test_moveit_parameter_names_reach_the_node(client):
    """The MoveIt names in the file set robokin's parameters (the node logs each one it took)."""
    output = client.servo_process.output
    for alias, name in (("moveit_servo.publish_period", "publish_period"),
                        ("moveit_servo.joint_limit_margins", "joint_limit_margins"),
                        ("moveit_servo.apply_twist_commands_about_ee_frame", "apply_twist_about_tool")):
        assert f"parameter {alias} (MoveIt Servo's name) sets {name}" in output, output
    assert "100 Hz" in output                                      # publish_period 0.01 from the MoveIt name
