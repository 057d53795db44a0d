"""A sim_robot and a servo_node process with a client node that records what the controller receives (the servo's
JointTrajectory windows, in chain order), the joint states (with their arrival time) and the servo's statuses."""
import os
import random
import time
from typing import NamedTuple

import numpy as np
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from robokin_interfaces.msg import ServoStatus as StatusMsg
from robokin_ros.core.robot import RobotModel

os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(1, 100)))
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

import rclpy  # noqa: E402
from node_process import Process  # noqa: E402

TRAJECTORY_TOPIC = "/joint_trajectory_controller/joint_trajectory"


class Window(NamedTuple):
    stamp: float             # [s] header stamp
    times: np.ndarray        # (k,) [s]
    positions: np.ndarray    # (k, n) chain order
    velocities: np.ndarray   # (k, n)


class ServoRig:
    """Processes started from the shipped config/sim_robot.yaml and config/panda_servo.yaml (`servo_args`: more
    `-p name:=value` arguments), and the client node `client`; subclasses add their publishers."""

    def __init__(self, tmp_path, client: str, servo_args: list[str]) -> None:
        self.context = Context()
        rclpy.init(context=self.context, args=["--ros-args", "-p", "robot:=panda"])
        self.executor = SingleThreadedExecutor(context=self.context)
        self.panda = RobotModel.from_name("panda")
        self.processes = [Process("sim_robot", ["--ros-args", "--params-file", "config/sim_robot.yaml", "-p",
                                                "publish_tf:=false"], tmp_path),
                          Process("servo_node", ["--ros-args", "--params-file", "config/panda_servo.yaml",
                                                 *servo_args], tmp_path)]
        self.node = Node(client, context=self.context)
        self.executor.add_node(self.node)
        self.windows: list[Window] = []
        self.states: list[tuple[float, np.ndarray]] = []
        self.statuses: list[StatusMsg] = []
        self.node.create_subscription(JointTrajectory, TRAJECTORY_TOPIC, self._on_window, 1000)
        self.node.create_subscription(JointState, "/joint_states", self._on_state, 100)
        self.node.create_subscription(StatusMsg, "/servo_node/robokin_status", self.statuses.append, 100)

    def _on_window(self, msg: JointTrajectory) -> None:
        order = [list(msg.joint_names).index(name) for name in self.panda.joint_names]
        points = msg.points
        self.windows.append(Window(msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9,
                                   np.array([p.time_from_start.sec + p.time_from_start.nanosec * 1e-9
                                             for p in points]),
                                   np.array([p.positions for p in points])[:, order],
                                   np.array([p.velocities for p in points])[:, order]))

    def _on_state(self, msg: JointState) -> None:
        order = [list(msg.name).index(name) for name in self.panda.joint_names]
        self.states.append((time.monotonic(), np.array(msg.position)[order]))

    def output(self) -> str:
        return "\n".join(p.output[-3000:] for p in self.processes)

    def close(self) -> None:
        for process in self.processes:
            process.stop()
        self.executor.remove_node(self.node)
        self.node.destroy_node()
        self.executor.shutdown()
        rclpy.try_shutdown(context=self.context)
