"""The studio's live ROS mode: the arm from `/joint_states`, gizmo motion to servo_node, the servo's status sentence.

ROS is optional for the studio: only this module (and live_ros_topics.py) import rclpy. The bridge runs its own
rclpy context and node (`robokin_studio`) on a daemon thread, so it never touches the global context another part
of the process may use. The app calls `latest_positions()` each tick, `send_target(...)` while the gizmo moves
(~30 Hz) and shows `status_text()` and `problem()`.

Command type: MoveIt Servo drops input of a type other than its current one, and robokin's servo_node drops it
while another client's command is fresh. The bridge therefore calls `<servo>/switch_command_type` (POSE or TWIST)
when a stream starts, i.e. on the first target and after a pause in sending of RESWITCH_AFTER.
"""
from __future__ import annotations

import threading
import time

import numpy as np
import pinocchio as pin
import rclpy
from geometry_msgs.msg import PoseStamped, TwistStamped
from moveit_msgs.msg import ServoStatus as MoveItStatusMsg
from moveit_msgs.srv import ServoCommandType
from rclpy.context import Context
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.parameter_client import AsyncParameterClient
from sensor_msgs.msg import JointState

from robokin_interfaces.msg import ServoStatus as ServoStatusMsg
from robokin_ros.core.errors import ConfigError, InvalidInputError, RobokinError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.command_type import CommandType
from robokin_ros.core.stamp_order import StampOrder
from robokin_ros.ros.conversions import concerns_chain, measurement_from_joint_state, time_nanoseconds
from robokin_ros.ros.runtime import QUEUE_DEPTH, receive_time
from robokin_ros.studio.live_ros_topics import (
    COMMANDS,
    POSE_TOPIC,
    TWIST_PARAMETERS,
    TWIST_TOPIC,
    ServoTwistUnits,
    TwistLaw,
    pose_target_msg,
    servo_twist,
    twist_msg,
)

NODE_NAME = "robokin_studio"
RESWITCH_AFTER = 1.0     # [s] a gap in sending this long starts a new stream: switch the command type again
STOP_TIMEOUT = 2.0       # [s] longest wait for the spin thread at stop()


class LiveRosBridge:
    """Joint states in, pose targets or twists out to servo_node, its status sentence in; thread-safe.

    Args:
        robot: the chain shown and commanded; `robot.joint_names` give the chain order, `robot.base_frame` the
            frame of the targets sent.
        servo_node: servo_node's fully qualified name; its topics are `<servo_node>/pose_target_cmds` etc.
        joint_topic: the JointState topic.
        command: "pose" (PoseStamped targets; the servo tracks them) or "twist" (TwistStamped from a
            proportional law on the pose error).
        linear_gain, angular_gain: [1/s] twist mode's proportional gains.
        max_linear_speed, max_angular_speed: [m/s], [rad/s] twist mode's caps on the commanded tool speed.

    Raises:
        ConfigError: an unknown `command` or a gain or cap that is not > 0 (all problems at once).
    """

    def __init__(self, robot: RobotModel, servo_node: str = "/servo_node", joint_topic: str = "/joint_states",
                 command: str = "pose", *, linear_gain: float = 2.0, angular_gain: float = 2.0,
                 max_linear_speed: float = 0.25, max_angular_speed: float = 1.0) -> None:
        problems = [] if command in COMMANDS else [f"command={command!r}; valid: {list(COMMANDS)}"]
        if not servo_node.startswith("/"):
            problems.append(f"servo_node={servo_node!r} must be a fully qualified name such as '/servo_node'")
        try:
            self.law = TwistLaw(linear_gain, angular_gain, max_linear_speed, max_angular_speed)
        except ConfigError as err:
            problems.extend(err.problems)
        if problems:
            raise ConfigError(problems, "live ROS settings")
        self.robot, self.joint_topic, self.command = robot, joint_topic, command
        self.servo_node = servo_node.rstrip("/")
        self._joint_names = tuple(robot.joint_names)
        self._chain = frozenset(self._joint_names)
        self._lock = threading.Lock()
        self._positions: np.ndarray | None = None        # (n,) chain order [rad | m]
        self._received_at = 0.0                          # [s] receive_time() of _positions
        self._stamp_order = StampOrder()
        self._problems: dict[str, str] = {}              # source -> latest problem sentence
        self._robokin_status, self._moveit_status = "", ""
        self._units: ServoTwistUnits | None = None
        self._units_pending = False
        self._switched, self._switch_pending, self._last_send = False, False, -np.inf
        self._context: Context | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle ---------------------------------------------------------------------------------------
    def start(self) -> None:
        """Create the private context and node, subscribe and advertise, and spin on a daemon thread."""
        if self._context is not None:
            return
        context = Context()
        rclpy.init(context=context)
        node = rclpy.create_node(NODE_NAME, context=context, start_parameter_services=False)
        node.create_subscription(JointState, self.joint_topic, self._on_joint_state, QUEUE_DEPTH)
        node.create_subscription(ServoStatusMsg, f"{self.servo_node}/robokin_status", self._on_robokin_status,
                                 QUEUE_DEPTH)
        node.create_subscription(MoveItStatusMsg, f"{self.servo_node}/status", self._on_moveit_status, QUEUE_DEPTH)
        msg_type, topic = (PoseStamped, POSE_TOPIC) if self.command == "pose" else (TwistStamped, TWIST_TOPIC)
        self._publisher = node.create_publisher(msg_type, f"{self.servo_node}/{topic}", QUEUE_DEPTH)
        self._switch_client = node.create_client(ServoCommandType, f"{self.servo_node}/switch_command_type")
        self._parameters = AsyncParameterClient(node, self.servo_node)
        self._executor = SingleThreadedExecutor(context=context)
        self._executor.add_node(node)
        self._node, self._context = node, context
        self._thread = threading.Thread(target=self._spin, name=NODE_NAME, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:
            self._executor.spin()
        except (ExternalShutdownException, Exception):  # noqa: BLE001 - stopping: nothing left to report to
            pass

    def stop(self) -> None:
        """Stop spinning, destroy the node and shut the private context down; calling it again does nothing."""
        context, self._context = self._context, None
        if context is None:
            return
        self._executor.shutdown(timeout_sec=STOP_TIMEOUT)      # ends spin(): the thread returns
        if self._thread is not None:
            self._thread.join(timeout=STOP_TIMEOUT)
        self._node.destroy_node()
        rclpy.try_shutdown(context=context)

    @property
    def running(self) -> bool:
        """True between start() and stop()."""
        return self._context is not None

    # ---- what the app reads ------------------------------------------------------------------------------
    def latest_positions(self) -> tuple[np.ndarray | None, float]:
        """(positions, age): the newest accepted chain positions (n,) [rad | m] in `robot.joint_names` order and
        their age [s] since receipt; (None, inf) before any."""
        with self._lock:
            if self._positions is None:
                return None, float("inf")
            return self._positions.copy(), receive_time() - self._received_at

    def status_text(self) -> str:
        """The servo's newest status sentence: robokin's full one if it publishes it, else MoveIt's; "" before."""
        with self._lock:
            return self._robokin_status or self._moveit_status

    def problem(self) -> str:
        """The bridge's current problems as sentences ("" when none): a refused joint state, a command not sent."""
        with self._lock:
            return "; ".join(self._problems.values())

    # ---- callbacks (executor thread): store only --------------------------------------------------------
    def _on_joint_state(self, msg: JointState) -> None:
        if not concerns_chain(msg, self._chain):     # another device's state on the same topic
            return
        now = receive_time()
        with self._lock:
            try:
                measured = measurement_from_joint_state(msg, self._joint_names, now)
                # the servo's own ordering rule (core/stamp_order.py): a replayed old state must not show
                self._stamp_order.admit(self._joint_names, time_nanoseconds(msg.header.stamp), now)
            except RobokinError as err:
                self._problems["joint_state"] = f"{self.joint_topic} refused: {err}"
                return
            self._positions, self._received_at = measured.positions.copy(), now
            self._problems.pop("joint_state", None)

    def _on_robokin_status(self, msg: ServoStatusMsg) -> None:
        with self._lock:
            self._robokin_status = msg.message

    def _on_moveit_status(self, msg: MoveItStatusMsg) -> None:
        with self._lock:
            self._moveit_status = msg.message

    # ---- commands (app thread) ---------------------------------------------------------------------------
    def send_target(self, base_T_target: pin.SE3, base_T_tool: pin.SE3 | None = None) -> bool:
        """Send the gizmo's target for the servo's tip frame, `base_T_target` in `robot.base_frame`.

        Pose mode publishes it as a PoseStamped (stamped now: the servo follows a stamped stream with
        feed-forward). Twist mode publishes the capped proportional twist from `base_T_tool` (the tip frame's
        current pose in the base frame, required) toward it, in the servo's units. Returns whether a message
        was published; why not is in `problem()`.

        Raises:
            RuntimeError: not started. InvalidInputError: twist mode without `base_T_tool`.
        """
        if self._context is None:
            raise RuntimeError("LiveRosBridge.send_target before start()")
        if self.command == "twist" and base_T_tool is None:
            raise InvalidInputError("twist mode needs base_T_tool, the tip frame's current pose in the base frame")
        self._ensure_command_type()
        stamp = self._node.get_clock().now().to_msg()
        if self.command == "pose":
            self._publisher.publish(pose_target_msg(base_T_target, self.robot.base_frame, stamp))
            return True
        with self._lock:
            units = self._units
        if units is None:
            self._request_units()
            self._set_problem("command", f"twist not sent: waiting for {self.servo_node}'s parameters "
                                         f"{list(TWIST_PARAMETERS)} (is servo_node running?)")
            return False
        values = servo_twist(self.law.twist_toward(base_T_tool, base_T_target), base_T_tool, units)
        self._publisher.publish(twist_msg(values, self.robot.base_frame, stamp))
        return True

    def _set_problem(self, source: str, sentence: str) -> None:
        with self._lock:
            if sentence:
                self._problems[source] = sentence
            else:
                self._problems.pop(source, None)

    def _ensure_command_type(self) -> None:
        """Ask the servo for this bridge's command type at the start of a stream (once its service is up)."""
        now = time.monotonic()
        with self._lock:
            new_stream, self._last_send = now - self._last_send > RESWITCH_AFTER, now
            if new_stream:
                self._switched = False
            if self._switched or self._switch_pending or not self._switch_client.service_is_ready():
                return
            self._switch_pending = True
        wanted = CommandType.POSE if self.command == "pose" else CommandType.TWIST
        future = self._switch_client.call_async(ServoCommandType.Request(command_type=int(wanted)))
        future.add_done_callback(lambda f: self._on_switched(f, wanted))

    def _on_switched(self, future, wanted: CommandType) -> None:
        response = future.result() if future.exception() is None else None
        with self._lock:
            self._switch_pending, self._switched = False, True    # one try per stream: no call at 30 Hz
        self._set_problem("command_type", "" if response is not None and response.success else
                          f"{self.servo_node} refused switch_command_type {wanted.name}: its input of this "
                          "type may be dropped")

    def _request_units(self) -> None:
        with self._lock:
            if self._units_pending or not self._parameters.services_are_ready():
                return
            self._units_pending = True
        self._parameters.get_parameters(list(TWIST_PARAMETERS), self._on_units)

    def _on_units(self, future) -> None:
        try:
            units = ServoTwistUnits.from_values(list(future.result().values))
            sentence = ""
        except Exception as err:  # noqa: BLE001 - a failed call or odd values: reported, asked again later
            units, sentence = None, f"twist not sent: {err}"
        with self._lock:
            self._units, self._units_pending = units, False
        self._set_problem("command", sentence)
