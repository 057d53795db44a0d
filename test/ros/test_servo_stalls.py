"""servo_node and sim_robot (a default JTC's rules) as processes, each stopped (SIGSTOP) for 80-150 ms while a twist
streams: what a busy robot PC does to them (issue 23 A). Whatever the stalls, no window is refused for arriving
late, consecutive windows join (no position step, no velocity step beyond the acceleration limits), the servo does
not halt for joint states, and its watchdog reports the stalls it suffered.
The figures on a loaded machine are in bench/busy_cpu.py; this test checks the properties, not timings.
"""
import os
import signal
import time

import numpy as np
from geometry_msgs.msg import TwistStamped
from ros_helpers import spin_for, spin_until
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory

from robokin_interfaces.msg import ServoStatus as StatusMsg
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.window import sample_window

TRAJECTORY_TOPIC = "/joint_trajectory_controller/joint_trajectory"
POSITION_STEP = 1e-5       # [rad] the outside check's threshold
STALLS = (("servo", 0.08), ("sim", 0.15), ("servo", 0.15), ("sim", 0.08))


def _window(msg, order):
    times = np.array([p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in msg.points])
    positions = np.array([p.positions for p in msg.points])[:, order]
    velocities = np.array([p.velocities for p in msg.points])[:, order]
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9, times, positions, velocities


def _sample(window, t):
    _, times, positions, velocities = window
    q, v = np.empty(positions.shape[1]), np.empty(positions.shape[1])
    sample_window(times, positions, velocities, t, q, v)
    return q, v


def _stall(pid: int, seconds: float) -> None:
    os.kill(pid, signal.SIGSTOP)
    try:
        time.sleep(seconds)
    finally:
        os.kill(pid, signal.SIGCONT)


def test_stalled_servo_and_controller_processes_keep_the_stream_whole(launch, probe):
    node, executor = probe
    panda = RobotModel.from_source("panda")
    amax = np.array([15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0])          # config/panda_servo.yaml
    sim = launch("sim_robot", "--ros-args", "--params-file", "config/sim_robot.yaml", "-p", "publish_tf:=false")
    servo = launch("servo_node", "--ros-args", "--params-file", "config/panda_servo.yaml")
    messages, refusals, statuses = [], [], []
    node.create_subscription(JointTrajectory, TRAJECTORY_TOPIC, messages.append, 1000)
    node.create_subscription(String, "/sim_robot/rejected", lambda m: refusals.append(m.data), 100)
    node.create_subscription(StatusMsg, "/servo_node/robokin_status", statuses.append, 100)
    twists = node.create_publisher(TwistStamped, "/servo_node/delta_twist_cmds", 10)
    twist = TwistStamped()
    twist.twist.linear.y = 0.25             # unitless: 0.1 m/s

    def stream(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            twists.publish(twist)
            spin_for(executor, 0.01)

    assert spin_until(executor, lambda: statuses and statuses[-1].code != ServoStatus.JOINT_STATE_MISSING, 90.0), \
        servo.output + sim.output
    stream(1.0)
    assert messages and statuses[-1].code == ServoStatus.OK, servo.output
    start, first_status = len(messages), len(statuses)
    pids = {"servo": servo.popen.pid, "sim": sim.popen.pid}
    for who, seconds in STALLS:
        _stall(pids[who], seconds)
        stream(0.4)
    windows = [_window(m, [m.joint_names.index(n) for n in panda.joint_names]) for m in messages[start:]]
    assert len(windows) > 200
    worst_position, worst_velocity, where = 0.0, 0.0, ""
    for i, (w1, w2) in enumerate(zip(windows, windows[1:])):
        gap = w2[0] - w1[0]
        q1, v1 = _sample(w1, gap)
        q2, v2 = _sample(w2, 0.0)
        if np.abs(q2 - q1).max() > worst_position:
            worst_position = np.abs(q2 - q1).max()
            where = (f" (window {i + 1} of {len(windows)}, {gap * 1e3:.1f} ms after the one before, velocities "
                     f"{np.round(v1, 3)} -> {np.round(v2, 3)})")
        worst_velocity = max(worst_velocity, (np.abs(v2 - v1) / (amax * gap + 1e-6)).max())
    assert not refusals, refusals[:3]
    assert worst_position <= POSITION_STEP, \
        f"a position step of {worst_position * 1e3:.3f} mrad between windows{where}\n{servo.output[-3000:]}"
    assert worst_velocity <= 1.001, f"a velocity step of {worst_velocity:.2f} x what the limits allow"
    during = statuses[first_status:]
    assert ServoStatus.JOINT_STATE_MISSING not in [s.code for s in during], \
        [s.message for s in during if s.code == ServoStatus.JOINT_STATE_MISSING][:2]
    assert max(s.late_ticks for s in statuses) >= 2              # the servo's own two stalls, at least
    assert max(s.worst_tick_lateness for s in statuses) >= 0.07
    assert "ms late" in servo.output                             # the watchdog's warning
