"""The installed executables as a user starts them: parameter files, start-up errors, a twist flood.

Nodes run as subprocesses (`.venv/bin/servo_node --ros-args ...`); a probe node in the test process talks to
them over DDS on loopback.
"""
import sys
import textwrap
import time

import numpy as np
import pytest
from geometry_msgs.msg import TwistStamped
from ros_helpers import spin_for, spin_until
from sensor_msgs.msg import JointState

from robokin_interfaces.msg import ServoStatus as StatusMsg
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.status import ServoStatus

CONFIG = "config"
FLOOD_HZ, FLOOD_S = 10_000, 2.0

# A separate process publishing twists as fast as it can be paced: the servo must keep its loop.
FLOODER = textwrap.dedent(f"""
    import time, rclpy
    from geometry_msgs.msg import TwistStamped
    rclpy.init()
    node = rclpy.create_node("flooder")
    pub = node.create_publisher(TwistStamped, "/servo_node/delta_twist_cmds", 10)
    end = time.monotonic() + 15.0
    while pub.get_subscription_count() == 0 and time.monotonic() < end:
        time.sleep(0.01)
    msg = TwistStamped()
    msg.twist.linear.z = 0.3
    start = time.monotonic()
    sent = 0
    while time.monotonic() - start < {FLOOD_S}:
        if sent < (time.monotonic() - start) * {FLOOD_HZ}:
            pub.publish(msg)
            sent += 1
    print("window", start, time.monotonic(), "sent", sent, flush=True)
""")
# A light process counting the servo's commands by their arrival (CLOCK_MONOTONIC, shared by all processes) until
# a file appears: the test process, which also takes joint states and statuses, fell behind on a loaded machine
# and counted 352 Hz where the servo kept its rate.
COUNTER = textwrap.dedent("""
    import os, sys, time, rclpy
    from trajectory_msgs.msg import JointTrajectory
    rclpy.init()
    node = rclpy.create_node("command_counter")
    arrivals = []
    def arrived(message):
        arrivals.append(time.monotonic())
        if len(arrivals) == 1:
            open(sys.argv[2], "w").close()
    node.create_subscription(JointTrajectory, "/joint_trajectory_controller/joint_trajectory", arrived, 1000)
    while not os.path.exists(sys.argv[1]):
        rclpy.spin_once(node, timeout_sec=0.02)
    print("arrivals", *arrivals, flush=True)
""")


def test_servo_and_sim_executables_move_the_arm_and_survive_a_twist_flood(launch, probe, tmp_path):
    node, executor = probe
    servo = launch("servo_node", "--ros-args", "--params-file", f"{CONFIG}/panda_servo.yaml")
    sim = launch("sim_robot", "--ros-args", "--params-file", f"{CONFIG}/sim_robot.yaml")
    states, statuses = [], []
    node.create_subscription(JointState, "/joint_states", lambda m: states.append(np.array(m.position)), 50)
    node.create_subscription(StatusMsg, "/servo_node/robokin_status", statuses.append, 50)
    twist_pub = node.create_publisher(TwistStamped, "/servo_node/delta_twist_cmds", 10)
    assert spin_until(executor, lambda: twist_pub.get_subscription_count() > 0 and len(states) > 5
                      and statuses), f"no discovery:\n{servo.output}\n{sim.output}"
    # The counter must have received a window before the flood: that alone proves the servo's publisher matched
    # it. The probe seeing the counter's subscription does not (CI runs counted 0 Hz through a whole flood, and
    # none of a 0.6 s motion's windows: DDS discovery can miss a participant's first announcements on a loaded
    # machine, and the next come seconds later). Small back-and-forth nudges run until a window has arrived.
    done, matched = tmp_path / "flood_done", tmp_path / "counter_matched"
    counter = launch(sys.executable.rsplit("/", 1)[-1], "-c", COUNTER, str(done), str(matched))
    topic = "/joint_trajectory_controller/joint_trajectory"
    assert spin_until(executor, lambda: node.count_subscribers(topic) >= 2, 30.0), counter.output   # and sim
    nudge, deadline = TwistStamped(), time.monotonic() + 30.0
    while not matched.exists() and time.monotonic() < deadline:
        nudge.twist.linear.z = -0.02 if nudge.twist.linear.z > 0 else 0.02
        for _ in range(20):
            twist_pub.publish(nudge)
            spin_for(executor, 0.01)
    assert matched.exists(), f"the servo's windows never reached the counter in 30 s:\n{counter.output}"
    spin_for(executor, 1.0)
    panda = RobotModel.from_name("panda")
    start = panda.fk(states[-1]).translation
    msg = TwistStamped()
    msg.twist.linear.y = -0.5
    end = time.monotonic() + 0.6
    while time.monotonic() < end:
        twist_pub.publish(msg)
        spin_for(executor, 0.01)
    spin_for(executor, 0.3)
    moved = panda.fk(states[-1]).translation - start
    assert moved[1] < -0.04 and abs(moved[0]) + abs(moved[2]) < 0.05 * abs(moved[1]), moved
    # the flood, from another process
    flooder = launch(sys.executable.rsplit("/", 1)[-1], "-c", FLOODER)
    assert flooder.wait(timeout=40) == 0, flooder.output            # the probe does not spin: less load
    done.touch()
    assert counter.wait(timeout=20) == 0, counter.output
    words = flooder.output.split("window")[-1].split()
    flood_start, flood_end, sent = float(words[0]), float(words[1]), int(words[3])
    arrivals = [float(t) for t in counter.output.split("arrivals")[-1].split()]
    assert any(t < flood_start for t in arrivals), "the counter saw no window before the flood"
    window = [t for t in arrivals if flood_start + 0.2 < t < flood_end - 0.1]
    rate = len(window) / (flood_end - flood_start - 0.3)
    # What the flood must not do is take the servo's loop: a twist callback per message (20 kHz) would. The average
    # rate and the longest silence depend on what else the shared machine runs (CI saw 79-500 Hz, and gaps up to
    # 124 ms in a process that counts arrivals late): figures for a benchmark, printed here, not judged.
    edges = [flood_start + 0.2, *window, flood_end - 0.1]
    longest_gap = max(b - a for a, b in zip(edges, edges[1:]))
    assert sent > 0.5 * FLOOD_HZ * FLOOD_S, f"flooder only managed {sent} messages"
    print(f"flood: {sent} twists sent, servo published {rate:.0f} Hz, longest gap {longest_gap * 1e3:.1f} ms")
    assert rate > 0.1 * 500, f"servo published {rate:.0f} Hz during the flood (nominal 500):\n{servo.output}"
    assert servo.popen.poll() is None, servo.output
    spin_for(executor, 0.3)                                          # the status after the flood
    assert ServoStatus(statuses[-1].code) in (ServoStatus.OK, ServoStatus.STALE_COMMAND, ServoStatus.STOPPED,
                                              ServoStatus.VELOCITY_LIMITED, ServoStatus.JOINT_BOUND)


def _fails_with(process, *words):
    code = process.wait(timeout=30)
    output = process.output
    assert code != 0, output
    for word in words:
        assert word in output, output
    return output


@pytest.mark.parametrize("args, words", [
    (["-p", "scale.linear:=50.0", "-p", "command_in_type:=furlongs", "-p", "publish_period:=1"],
     ["scale.linear out of range", "command_in_type='furlongs'", "'publish_period' to '1' of type 'INTEGER'"]),
    (["-p", "robot:=panda", "-p", "max_joint_acceleration:=[1.0, 2.0]"],
     ["max_joint_acceleration has 2 entries but the chain has 7"]),
])
def test_bad_parameters_are_all_reported_and_the_node_exits_non_zero(launch, args, words):
    _fails_with(launch("servo_node", "--ros-args", *args), *words)


def test_malformed_urdf_is_a_clear_error(launch):
    servo = launch("servo_node", "--ros-args", "-p", 'robot_description:=<robot name="broken"><link name="a">',
                   "-p", "base_frame:=a", "-p", "tip_frame:=b")
    _fails_with(servo, "cannot parse URDF")


def test_unknown_robot_name_lists_the_embedded_ones(launch):
    servo = launch("sim_robot", "--ros-args", "-p", "robot:=r2d2")
    _fails_with(servo, "r2d2", "panda", "ur5")


def test_malformed_yaml_is_a_clear_error(launch, tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("/**:\n  ros__parameters:\n    scale: {linear: [0.1\n")
    servo = launch("servo_node", "--ros-args", "--params-file", str(broken))
    _fails_with(servo, "cannot start", "broken.yaml")
