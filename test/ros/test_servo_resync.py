"""Re-synchronising to the measured state during motion, against the real servo_node and sim_robot processes.

Issue 9's attacks: back-to-back pause/resume calls during a fast twist, and joint states that stop for 150 ms and
come back. Re-anchoring used to zero the commanded velocity in one tick (8.8-14.2 x the acceleration limit).
Measured on what the servo publishes: each JointTrajectory's velocity at its time 0 (its stamp) against the
velocity the previous one commands at that instant (sampled as the controller interpolates it), per joint, over
the acceleration limit times the time between the two. The arm's own acceleration is not used: on this shared
2-core machine a loaded sim_robot steps unevenly and that noise alone reaches several times the limit.
"""
import sys

import numpy as np
import yaml
from geometry_msgs.msg import TwistStamped
from ros_helpers import spin_for, spin_until
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool
from trajectory_msgs.msg import JointTrajectory

from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.window import sample_window

CONFIG = "config"
ALLOWED = 1.02                 # x the acceleration limit (stamps are rounded to the nanosecond)


def _acceleration_limits() -> np.ndarray:
    params = yaml.safe_load(open(f"{CONFIG}/panda_servo.yaml"))["/**"]["ros__parameters"]
    return np.array(params["max_joint_acceleration"])


def _velocity_step_share(windows: list[tuple[float, JointTrajectory]], since: float) -> float:
    """Largest commanded velocity change between consecutive windows stamped after `since`, per joint, as a
    share of what the acceleration limits allow in the time between them."""
    amax, worst = _acceleration_limits(), 0.0
    for (t0, old), (t1, new) in zip(windows, windows[1:]):
        if t1 < since or t1 <= t0:
            continue
        times = np.array([p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in old.points])
        q_then, v_then = np.empty(len(amax)), np.empty(len(amax))
        sample_window(times, np.array([p.positions for p in old.points]),
                      np.array([p.velocities for p in old.points]), t1 - t0, q_then, v_then)
        step = np.abs(np.array(new.points[0].velocities) - v_then)
        worst = max(worst, float(np.max(step / (amax * (t1 - t0)))))
    return worst


def _start(launch, probe, joint_topic="/joint_states", *servo_params: str):
    node, executor = probe
    launch("sim_robot", "--ros-args", "--params-file", f"{CONFIG}/sim_robot.yaml")
    launch("servo_node", "--ros-args", "--params-file", f"{CONFIG}/panda_servo.yaml", "-p",
           f"joint_topic:={joint_topic}", *servo_params)
    samples, windows = [], []
    node.create_subscription(JointState, "/joint_states", lambda m: samples.append(
        (m.header.stamp.sec + m.header.stamp.nanosec * 1e-9, np.array(m.position))), 200)
    node.create_subscription(JointTrajectory, "/joint_trajectory_controller/joint_trajectory", lambda m: windows.append(
        (m.header.stamp.sec + m.header.stamp.nanosec * 1e-9, m)), 1000)
    twist_pub = node.create_publisher(TwistStamped, "/servo_node/delta_twist_cmds", 10)
    assert spin_until(executor, lambda: twist_pub.get_subscription_count() > 0 and len(samples) > 10, 30.0)
    return node, executor, samples, windows, twist_pub


def _twist(twist_pub, unitless: float = 0.75) -> None:
    msg = TwistStamped()
    msg.twist.linear.y = unitless          # x scale.linear 0.4 m/s
    twist_pub.publish(msg)


def _stream(executor, twist_pub, seconds: float, unitless: float = 0.75) -> None:
    for _ in range(int(seconds / 0.01)):
        _twist(twist_pub, unitless)
        spin_for(executor, 0.01)


def test_back_to_back_pause_and_resume_during_a_twist_stay_within_the_acceleration_limits(launch, probe):
    node, executor, samples, windows, twist_pub = _start(launch, probe)
    pause = node.create_client(SetBool, "/servo_node/pause_servo")
    assert pause.wait_for_service(timeout_sec=20.0)
    _stream(executor, twist_pub, 1.0)                      # up to speed
    since = samples[-1][0]
    moved_from = RobotModel.from_name("panda").fk(samples[-1][1]).translation
    for _ in range(3):
        for paused in (True, False):
            future = pause.call_async(SetBool.Request(data=paused))
            assert spin_until(executor, future.done, 10.0)
            _twist(twist_pub)
        _stream(executor, twist_pub, 0.15)
    _stream(executor, twist_pub, 0.3)
    share = _velocity_step_share(windows, since)
    print(f"largest commanded velocity step through 3 pause/resume pairs: {share:.2f} x the acceleration limit")
    assert share <= ALLOWED
    moved = RobotModel.from_name("panda").fk(samples[-1][1]).translation - moved_from
    assert moved[1] > 0.05, moved                          # it kept moving along +y between the calls


def test_joint_states_back_after_150_ms_stay_within_the_acceleration_limits(launch, probe):
    """The servo reads a relay of /joint_states that the test interrupts for 150 ms."""
    node, executor, samples, windows, twist_pub = _start(launch, probe, joint_topic="/relayed_joint_states")
    relay = node.create_publisher(JointState, "/relayed_joint_states", 10)
    relaying = [True]
    node.create_subscription(JointState, "/joint_states", lambda m: relay.publish(m) if relaying[0] else None, 10)
    assert spin_until(executor, lambda: relay.get_subscription_count() > 0, 20.0)
    _stream(executor, twist_pub, 1.0)
    since = samples[-1][0]
    relaying[0] = False
    _stream(executor, twist_pub, 0.15)
    relaying[0] = True
    _stream(executor, twist_pub, 0.5)
    share = _velocity_step_share(windows, since)
    print(f"largest commanded velocity step through a 150 ms joint-state outage: {share:.2f} x the acceleration "
          "limit")
    assert share <= ALLOWED


BURNER = "import time\nend = time.monotonic() + 20.0\nwhile time.monotonic() < end:\n    pass\n"


def test_under_cpu_load_the_tool_covers_the_commanded_distance(launch, probe):
    """A CPU-bound process beside the nodes on this 2-core machine, and the servo asked for 1 kHz: its ticks come
    late and irregularly, but it integrates the real time between ticks, so the tool still moves at the commanded
    speed (it covered 35-86 % of the distance when every tick integrated one nominal period)."""
    node, executor, samples, windows, twist_pub = _start(launch, probe, "/joint_states", "-p", "publish_period:=0.001")
    panda = RobotModel.from_name("panda")
    slow = 0.2                                              # 0.08 m/s: 20 cm in all, far from limits
    _stream(executor, twist_pub, 0.5, slow)                 # up to speed (the ramp takes ~0.1 s)
    burners = [launch(sys.executable.rsplit("/", 1)[-1], "-c", BURNER)]      # as in the issue: one
    _stream(executor, twist_pub, 0.5, slow)                 # the load settles in
    start_stamp, start = samples[-1][0], panda.fk(samples[-1][1]).translation
    _stream(executor, twist_pub, 1.5, slow)
    end_stamp, end = samples[-1][0], panda.fk(samples[-1][1]).translation
    for burner in burners:
        burner.stop()
    ticks = [t for t, _ in windows if start_stamp <= t <= end_stamp]
    gaps = np.diff(ticks)
    print(f"window gaps: median {np.median(gaps) * 1e3:.1f} ms, max {gaps.max() * 1e3:.1f} ms, "
          f"over 50 ms: {(gaps > 0.05).sum()}")
    rate = len(ticks) / (end_stamp - start_stamp)
    covered = (end[1] - start[1]) / (slow * 0.4 * (end_stamp - start_stamp))
    print(f"under load: servo output {rate:.0f} Hz, tool covered {covered:.1%} of the commanded distance")
    assert 0.95 <= covered <= 1.05
