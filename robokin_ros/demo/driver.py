"""The demo's ROS side: a driver node that publishes the twist script and records joint states and statuses."""
from __future__ import annotations

import time

import numpy as np

from robokin_ros.core.robot import RobotModel
from robokin_ros.demo.graph import NodeGraph
from robokin_ros.demo.script import SILENCE, Phase, PhaseSpan, Recording, StatusSample

TWIST_RATE_HZ = 100.0
CONTROLLER_TOPIC = "/joint_trajectory_controller/joint_trajectory"
REJECTIONS_TOPIC = "/sim_robot/rejected"
SPIN_SLICE = 0.01       # [s] longest single spin while pacing: the twist rate needs 10 ms resolution
WAIT_SLICE = 0.05       # [s] longest single spin while waiting for a condition


def make_driver(robot: RobotModel, recording: Recording, name: str = "robokin_demo"):
    """The demo's node `name`: publishes `send(phase)` twists and records /joint_states and the servo status."""
    from geometry_msgs.msg import TwistStamped
    from rclpy.node import Node
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String
    from trajectory_msgs.msg import JointTrajectory

    from robokin_interfaces.msg import ServoStatus as ServoStatusMsg
    from robokin_ros.ros.conversions import time_nanoseconds

    class DemoDriver(Node):
        def __init__(self) -> None:
            super().__init__(name)
            self.twist_pub = self.create_publisher(TwistStamped, "/servo_node/delta_twist_cmds", 10)
            # deep enough for 10 s at 500 Hz: on a busy CPU this process may not run for seconds, and every state
            # counts for the checks
            self.create_subscription(JointState, "/joint_states", self._on_joint_state, 5000)
            # robokin's full status (locked joints, sigma_min); /servo_node/status carries MoveIt Servo's
            self.create_subscription(ServoStatusMsg, "/servo_node/robokin_status", self._on_status, 100)
            # sim_robot judges every trajectory by a default joint_trajectory_controller's rules: the demo
            # counts what it was sent and fails on any refusal
            # counted, never read: raw, so that 500 windows a second cost no deserialization here
            self.create_subscription(JointTrajectory, CONTROLLER_TOPIC, self._on_trajectory, 1000, raw=True)
            self.create_subscription(String, REJECTIONS_TOPIC, self._on_rejection, 100)

        def _on_trajectory(self, _msg) -> None:
            recording.trajectories_sent += 1

        def _on_rejection(self, msg) -> None:
            recording.rejections.append(msg.data)

        def _on_joint_state(self, msg: JointState) -> None:
            order = [msg.name.index(n) for n in robot.joint_names if n in msg.name]
            if len(order) != robot.n:
                return
            recording.times.append(time.monotonic())
            recording.stamps.append(time_nanoseconds(msg.header.stamp))
            recording.positions.append(np.array([msg.position[i] for i in order]))
            velocities = [msg.velocity[i] for i in order] if len(msg.velocity) == len(msg.name) else [0.0] * robot.n
            recording.velocities.append(np.array(velocities))

        def _on_status(self, msg) -> None:
            recording.status.append(StatusSample(time.monotonic(), msg.code, msg.message,
                                                 tuple(msg.locked_joints), msg.sigma_min, msg.peak_jerk_share))

        def send(self, phase: Phase) -> None:
            msg = TwistStamped()
            msg.header.stamp = self.get_clock().now().to_msg()
            msg.header.frame_id = robot.tip_frame if phase.frame == "tool" else phase.frame
            (msg.twist.linear.x, msg.twist.linear.y, msg.twist.linear.z) = phase.linear
            (msg.twist.angular.x, msg.twist.angular.y, msg.twist.angular.z) = phase.angular
            self.twist_pub.publish(msg)

    return DemoDriver()


def spin_for(executor, seconds: float) -> None:
    """Serve callbacks for `seconds` [s]."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=min(SPIN_SLICE, max(0.0, end - time.monotonic())))


def spin_until(executor, predicate, timeout_s: float, slice_s: float = WAIT_SLICE, check=None) -> bool:
    """Serve callbacks until `predicate()` holds or `timeout_s` [s] passes; `check()` runs after every spin
    (it may raise to give up early). Returns the final `predicate()`."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end and not predicate():
        executor.spin_once(timeout_sec=slice_s)
        if check is not None:
            check()
    return bool(predicate())


def wait_for(executor, predicate, timeout_s: float, what: str, graph: NodeGraph | None) -> None:
    """Spin until `predicate()`; RuntimeError when a node of `graph` dies or after `timeout_s` [s]."""
    def no_node_died() -> None:
        dead = graph.dead() if graph else []
        if dead:
            raise RuntimeError("a node died during start-up:\n  " + "\n  ".join(dead))

    if not spin_until(executor, predicate, timeout_s, check=no_node_died):
        raise RuntimeError(f"timed out after {timeout_s:.0f} s waiting for {what}")


def run_twist_script(executor, driver, phases: list[Phase], recording: Recording) -> None:
    """Publish each phase's twist at TWIST_RATE_HZ; the final SILENCE phase publishes nothing."""
    for phase in phases:
        start = time.monotonic()
        print(f"  - {phase.name:<30s} {phase.duration:4.1f} s   expect: {phase.expect}", flush=True)
        next_tick = start
        while time.monotonic() < start + phase.duration:
            if phase.name != SILENCE:
                driver.send(phase)
            next_tick += 1.0 / TWIST_RATE_HZ
            spin_for(executor, max(0.0, next_tick - time.monotonic()))
        recording.phase_spans.append(PhaseSpan(phase, start, time.monotonic()))
