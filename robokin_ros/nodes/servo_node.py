"""servo_node: twist commands in, joint commands out, driven by the core `Servo` (no arithmetic here).

Interfaces (MoveIt Servo names where it has them):
    ~/delta_twist_cmds  geometry_msgs/TwistStamped in; header.frame_id = any model frame ("" = base)
    joint_topic         sensor_msgs/JointState in (default /joint_states; reordered by name)
    command_out_topic   trajectory_msgs/JointTrajectory or std_msgs/Float64MultiArray out
    ~/status            robokin_interfaces/ServoStatus, on change and every status_period
    ~/pause_servo, ~/unpause_servo   std_srvs/Trigger
Callbacks only store the newest message with its receive time; one timer (publish_period) does the work.
"""
from __future__ import annotations

from builtin_interfaces.msg import Time
from geometry_msgs.msg import TwistStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from robokin_interfaces.msg import ServoStatus as ServoStatusMsg
from robokin_ros.core.errors import RobokinError
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.servo import Servo, warm_up
from robokin_ros.core.servo.stamp_clock import StampClock
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.status_report import StatusReporter
from robokin_ros.core.servo.types import ServoOutput
from robokin_ros.ros.conversions import (
    concerns_chain,
    float64_array_msg,
    measurement_from_joint_state,
    status_msg,
    time_msg,
    trajectory_msg,
    twist_command_from_msg,
)
from robokin_ros.ros.params import watch_config
from robokin_ros.ros.runtime import LATEST_ONLY, QUEUE_DEPTH, RobokinNode, receive_time, run_node

# Rejections are throttled per kind: a reason's start names the kind, its end carries the values.
REJECTION_KIND_CHARS = 60
_TRAJECTORY = "trajectory_msgs/JointTrajectory"


class ServoNode(RobokinNode):
    """Twist servo node; see the module docstring for its interfaces."""

    default_name = "servo_node"
    config_class = ServoConfig

    def __init__(self, node_name: str | None = None, **kwargs) -> None:
        super().__init__(node_name, **kwargs)
        cfg, robot = self._config, self._robot
        self._servo = Servo(robot, cfg)
        warm_up(robot, cfg)
        self._joint_names = tuple(self._servo.joint_names)
        self._chain_joints = frozenset(self._joint_names)
        watch_config(self, lambda: self._config, self._apply_config)
        self._twist: tuple[TwistStamped, float] | None = None
        self._joint_state: tuple[JointState, float] | None = None
        self._status = StatusReporter()
        self._stamps = StampClock()
        self._reuse: JointTrajectory | None = None

        # only the newest twist matters: a deeper queue would replay old twists after a stall
        self.create_subscription(TwistStamped, "~/delta_twist_cmds", self._on_twist, LATEST_ONLY)
        # several publishers may share the joint-state topic (arm driver, gripper): with a queue of one a gripper's
        # message could evict the arm's before it is taken, so every message is looked at
        self.create_subscription(JointState, cfg.joint_topic, self._on_joint_state, QUEUE_DEPTH)
        out_type = JointTrajectory if cfg.command_out_type == _TRAJECTORY else Float64MultiArray
        self._command_pub = self.create_publisher(out_type, cfg.command_out_topic, QUEUE_DEPTH)
        self._status_pub = self.create_publisher(ServoStatusMsg, "~/status", QUEUE_DEPTH)
        self.create_service(Trigger, "~/pause_servo", self._on_pause)
        self.create_service(Trigger, "~/unpause_servo", self._on_unpause)
        self._timer = self.create_timer(cfg.publish_period, self._tick)
        self.get_logger().info(f"servo for {robot.name}: {robot.base_frame} -> {robot.tip_frame}, joints "
                               f"{list(self._joint_names)}, {cfg.rate_hz:.0f} Hz, output "
                               f"{cfg.command_out_type} on {self._command_pub.topic_name}")

    # ---- callbacks: store only ----------------------------------------------------------------------
    def _on_twist(self, msg: TwistStamped) -> None:
        self._twist = (msg, receive_time())

    def _on_joint_state(self, msg: JointState) -> None:
        if concerns_chain(msg, self._chain_joints):
            self._joint_state = (msg, receive_time())

    def _on_pause(self, _request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        self._servo.pause()
        response.success, response.message = True, "servo paused: commands are ignored until unpause"
        return response

    def _on_unpause(self, _request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        self._servo.resume()
        self._twist = None     # a command that arrived while paused must not move the arm now
        response.success, response.message = True, "servo resumed from the measured joint state"
        return response

    def _apply_config(self, config: ServoConfig) -> None:
        self._servo.update_config(config)    # raises ConfigError: the update is rejected whole
        self._config = config

    # ---- the loop ----------------------------------------------------------------------------------
    def _tick(self) -> None:
        now = receive_time()
        # The trajectory's time 0 is this tick: a controller that receives it late samples it at the right
        # time instead of rushing from its state to the first point (latency jitter would become jerk).
        stamp = time_msg(self._stamps.next(self.get_clock().now().nanoseconds, self._config))
        self._take_inputs(now)
        output = self._servo.step(now)
        if output.publish:
            self._publish_command(output, stamp)
        self._publish_status(output, now)

    def _take_inputs(self, now: float) -> None:
        if self._joint_state is not None:
            msg, received_at = self._joint_state
            self._joint_state = None
            try:
                self._servo.set_measurement(measurement_from_joint_state(msg, self._joint_names, received_at))
            except RobokinError as err:
                self._reject(ServoStatus.JOINT_STATE_MISSING, f"joint state rejected: {err}", now)
        if self._twist is not None:
            msg, received_at = self._twist
            self._twist = None
            try:
                self._servo.set_command(twist_command_from_msg(msg, received_at))
                self._status.command_accepted()
            except RobokinError as err:
                self._reject(ServoStatus.INVALID_COMMAND, f"{ServoStatus.INVALID_COMMAND.sentence}: {err}", now)

    def _reject(self, code: ServoStatus, reason: str, now: float) -> None:
        self._status.reject(code, reason, now, self._config.status_period)
        self._log.warning(reason[:REJECTION_KIND_CHARS], reason, now)

    def _publish_command(self, output: ServoOutput, stamp: Time) -> None:
        cfg = self._config
        if cfg.command_out_type == _TRAJECTORY:
            self._reuse = trajectory_msg(self._joint_names, output.window, self._reuse)
            self._reuse.header.stamp = stamp
            self._command_pub.publish(self._reuse)
        else:
            values = output.positions if cfg.publish_joint_positions else output.velocities
            self._command_pub.publish(float64_array_msg(values))

    def _publish_status(self, output: ServoOutput, now: float) -> None:
        report = self._status.report(output, now, self._config.status_period)
        if report is None:
            return
        if report.changed:
            text = f"status {report.code.name}: {report.message}"
            log = self._log.info if report.code.routine else self._log.warning
            log(f"status {report.code.name}", text)
        self._status_pub.publish(status_msg(report.code, report.message, output.locked_joints, output.sigma_min,
                                            output.condition_number, output.velocity_scale))


def main(args: list[str] | None = None) -> int:
    """Entry point of the `servo_node` executable."""
    return run_node(ServoNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
