"""servo_node: twist commands in, joint commands out, driven by the core `Servo` (no arithmetic here).

Interfaces (MoveIt Servo names where it has them):
    ~/delta_twist_cmds  geometry_msgs/TwistStamped in; header.frame_id = any model frame ("" = base) or a TF frame
                        (topic: cartesian_command_in_topic)
    ~/delta_joint_cmds  control_msgs/JointJog in: joint names with velocities (or displacements over duration)
                        (topic: joint_command_in_topic)
    ~/pose_target_cmds  geometry_msgs/PoseStamped in: the tip frame's target in any model or TF frame; one message
                        is enough, a stamped stream is followed with feed-forward (topic: pose_command_in_topic)
    Robots with several tips (tip_frames; ros/servo_tips.py names the topics), by the dynamic parameter tips.mode:
    ~/<tip>/delta_twist_cmds  TwistStamped in: that tip's twist (independent: in its header frame; relative: the
                        moving tip's twist in the reference tip's axes, the reference tip's own in its header frame;
                        coordinated: refused, the held object takes no tip's twist)
    ~/<tip>/pose_target_cmds  PoseStamped in: that tip's pose target (independent mode; the other tips hold)
    ~/delta_twist_cmds and ~/pose_target_cmds keep their meaning for the first tip (tip_frames[0]); in coordinated
                        mode ~/delta_twist_cmds is the held object's twist (object frame: the tips' centroid with
                        the base axes, taken when the mode starts; header.frame_id gives the twist's axes).
                        ~/delta_joint_cmds jogs any joint of either arm by name
    ~/separation_distance  std_msgs/Float64 in: a person's distance [m] (used when separation.enabled)
    ~/wrench            geometry_msgs/WrenchStamped in: the tool force/torque sensor (header.frame_id = its frame)
    ~/scene_objects     robokin_interfaces/SceneObject in: add, move or remove a collision scene object (pose in any
                        model or TF frame); used when check_collisions. Scene topics are keep-all (every change
                        counts) and refuse messages over SCENE_MESSAGE_MAX_BYTES by their size
    collision_object_topic  moveit_msgs/CollisionObject in (default /collision_object, as MoveIt publishes them):
                        ADD, APPEND, MOVE, REMOVE of MoveIt's world (ros/moveit_scene.py); used when check_collisions
    planning_scene_topic  moveit_msgs/PlanningScene in (default off; e.g. /monitored_planning_scene): its world's
                        collision objects, diffs and full scenes
    ~/collision_markers visualization_msgs/MarkerArray out (10 Hz, when check_collisions): the nearest pair and its
                        distance, the scene objects
    ~/enable_hand_guiding  std_srvs/SetBool: true zeroes the sensor on its latest reading and starts guiding (the
                        admittance's twist drives the arm; other inputs are dropped until false); false stops. A
                        wrench gap pauses guiding, fresh wrenches within hand_guiding.resume_timeout resume it
    joint_topic         sensor_msgs/JointState in (default /joint_states; reordered by name)
    command_out_topic   trajectory_msgs/JointTrajectory (ends at rest: a default JTC accepts it) or
                        std_msgs/Float64MultiArray out
    ~/status            moveit_msgs/ServoStatus: MoveIt Servo's code and robokin's sentence (topic: status_topic)
    ~/robokin_status    robokin_interfaces/ServoStatus: the full status (stamped, in the base frame); both on
                        change and every status_period
    ~/pause_servo       std_srvs/SetBool: true pauses, false resumes (as MoveIt Servo since Jazzy)
    ~/switch_command_type  moveit_msgs/ServoCommandType: JOINT_JOG, TWIST (the start type) and POSE; an idle servo
                        also switches to the type of the input that arrives
One timer (publish_period) does the work; an internal error in a tick drops the command (a ramp to rest) and is
named in the status, and the node runs on. Joint states arrive by callback and are checked on arrival (a refused one
cannot displace a good one); the tick takes the newest twist itself (ros/tick_inboxes.py) and publishes the
window as refilled serialized bytes (ros/serialized_trajectory.py). Spun by the EventsExecutor (see run_node).
"""
from __future__ import annotations

import traceback

from control_msgs.msg import JointJog
from geometry_msgs.msg import PoseStamped, TwistStamped, WrenchStamped
from moveit_msgs.msg import CollisionObject, PlanningScene
from moveit_msgs.msg import ServoStatus as MoveItStatusMsg
from moveit_msgs.srv import ServoCommandType
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, Float64MultiArray
from std_srvs.srv import SetBool
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray

from robokin_interfaces.msg import SceneObject as SceneObjectMsg
from robokin_interfaces.msg import ServoStatus as ServoStatusMsg
from robokin_ros.core.errors import RobokinError
from robokin_ros.core.process_options import apply_process_options
from robokin_ros.core.servo.command_type import CommandType, CommandTypeSwitch
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.servo import Servo, warm_up
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.status_report import StatusReporter
from robokin_ros.core.servo.tick_clock import TickStamps, TickWatchdog
from robokin_ros.core.servo.types import JointMeasurement, ServoOutput
from robokin_ros.core.stamp_order import StampOrder
from robokin_ros.ros.collision_markers import collision_markers, tip_markers
from robokin_ros.ros.conversions import (
    concerns_chain,
    float64_array_msg,
    joint_jog_command_from_msg,
    measurement_from_joint_state,
    moveit_status_msg,
    pose_target_from_msg,
    status_msg,
    time_msg,
    time_nanoseconds,
    TipsStatus,
    trajectory_msg,
    twist_command_from_msg,
    wrench_from_msg,
)
from robokin_ros.ros.params import watch_config
from robokin_ros.ros.rclpy_compat import events_executor
from robokin_ros.ros.runtime import LATEST_ONLY, QUEUE_DEPTH, RobokinNode, receive_time, run_node
from robokin_ros.ros.serialized_trajectory import SerializedTrajectory
from robokin_ros.ros.servo_tips import TipsOfLinks, limiting_tips, tip_topics, warm_up_tip_modes
from robokin_ros.ros.tf_frames import TfFrames
from robokin_ros.ros.tick_inboxes import PolledSubscription, SceneInbox

# Rejections are throttled per kind: a reason's start names the kind, its end carries the values.
REJECTION_KIND_CHARS = 60
_TRAJECTORY = "trajectory_msgs/JointTrajectory"
ROBOKIN_STATUS_TOPIC = "~/robokin_status"
SCENE_TOPIC = "~/scene_objects"
# The tick applies one scene change (ros/tick_inboxes.py); beyond this many pending messages a flood is refused.
SCENE_QUEUE_LIMIT = 100
# Every scene message must reach the inbox, which counts what it refuses: a keep-last reader of 10 silently lost
# 20-35 of a burst of 50 boxes. Keep-all makes a reliable publisher wait instead of the reader dropping.
SCENE_QOS = QoSProfile(history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE)
# [bytes] larger scene messages are refused by size, before deserializing (ros/tick_inboxes.py): at this size a mesh
# costs one tick 20-30 ms (deserializing, or building its hull: measured), inside one trajectory window (50 ms).
SCENE_MESSAGE_MAX_BYTES = 128 * 1024
MARKER_PERIOD = 0.1          # [s] the collision markers are for a person: 10 Hz is plenty


class ServoNode(RobokinNode):
    """Twist servo node; see the module docstring for its interfaces."""

    default_name = "servo_node"
    config_class = ServoConfig
    executor_factory = staticmethod(events_executor)

    def __init__(self, node_name: str | None = None, **kwargs) -> None:
        super().__init__(node_name, **kwargs)
        cfg, robot = self._config, self._robot
        self._servo = Servo(robot, cfg)
        warm_up(robot, cfg)
        if len(robot.tip_frames) > 1:
            warm_up_tip_modes(robot, cfg)
        self._joint_names = tuple(self._servo.joint_names)
        self._chain_joints = frozenset(self._joint_names)
        watch_config(self, lambda: self._config, self._apply_config)
        self._joint_state: JointMeasurement | None = None      # checked on arrival, applied at the next tick
        self._joint_state_rejection: str | None = None
        self._measured_positions = None                         # the last joint state the servo took (markers)
        self._stamp_order = StampOrder()
        self._status = StatusReporter()
        self._stamps = TickStamps()
        self._watchdog = TickWatchdog(cfg.publish_period)
        self._failure_reported_at = -float("inf")     # [s] when a failed tick last published its status
        self._reuse: JointTrajectory | None = None
        self._serialized: dict[int, SerializedTrajectory | None] = {}     # by point count: see _publish_command
        self._prepare_serialized()
        self._command_type = CommandTypeSwitch()
        self._tf_frames = TfFrames(self, robot)        # no TF listener until a frame outside the model arrives

        # Only the newest twist matters: a deeper queue would replay old twists after a stall. The tick takes it
        # (ros/tick_inboxes.py): a client streaming twists faster than the loop costs nothing in Python.
        self._twists = PolledSubscription(self, "commands", TwistStamped, cfg.cartesian_command_in_topic,
                                          LATEST_ONLY)
        self._joint_jogs = PolledSubscription(self, "joint_commands", JointJog, cfg.joint_command_in_topic,
                                              LATEST_ONLY)
        self._pose_targets = PolledSubscription(self, "pose_commands", PoseStamped, cfg.pose_command_in_topic,
                                                LATEST_ONLY)
        self._distances = PolledSubscription(self, "separation", Float64, cfg.separation.distance_topic, LATEST_ONLY)
        self._wrenches = PolledSubscription(self, "wrench", WrenchStamped, cfg.wrench_topic, LATEST_ONLY)
        # several tips: a twist and a pose topic per tip, taken by the tick like the standard ones
        self._tip_inputs: list[tuple[str, PolledSubscription, PolledSubscription]] = []
        self._tips_of_links: TipsOfLinks | None = None
        if len(robot.tip_frames) > 1:
            for i, (tip, (twist_topic, pose_topic)) in enumerate(tip_topics(robot.tip_frames).items()):
                self._tip_inputs.append((tip, PolledSubscription(self, f"tip{i}_commands", TwistStamped, twist_topic,
                                                                 LATEST_ONLY),
                                         PolledSubscription(self, f"tip{i}_pose_commands", PoseStamped, pose_topic,
                                                            LATEST_ONLY)))
            guard = self._servo.collision_guard
            if guard is not None:
                self._tips_of_links = TipsOfLinks(robot, guard.checker.geometry.geometry_model.geometryObjects)
        # several publishers may share the joint-state topic (arm driver, gripper): with a queue of one a gripper's
        # message could evict the arm's before it is taken, so every message is looked at
        self.create_subscription(JointState, cfg.joint_topic, self._on_joint_state, QUEUE_DEPTH)
        out_type = JointTrajectory if cfg.command_out_type == _TRAJECTORY else Float64MultiArray
        self._command_pub = self.create_publisher(out_type, cfg.command_out_topic, QUEUE_DEPTH)
        self._moveit_status_pub = self.create_publisher(MoveItStatusMsg, cfg.status_topic, QUEUE_DEPTH)
        self._status_pub = self.create_publisher(ServoStatusMsg, ROBOKIN_STATUS_TOPIC, QUEUE_DEPTH)
        self.create_service(SetBool, "~/pause_servo", self._on_pause)
        self.create_service(ServoCommandType, "~/switch_command_type", self._on_switch_command_type)
        self.create_service(SetBool, "~/enable_hand_guiding", self._on_enable_hand_guiding)
        self._scene = SceneInbox(SCENE_QUEUE_LIMIT, SCENE_MESSAGE_MAX_BYTES)
        self.create_subscription(SceneObjectMsg, SCENE_TOPIC, self._scene.offer_serialized(SceneObjectMsg),
                                 SCENE_QOS, raw=True)
        if cfg.collision.check_collisions:   # MoveIt publishes for every client: unchecked, each would only be refused
            for moveit_type, topic in ((CollisionObject, cfg.collision.collision_object_topic),
                                       (PlanningScene, cfg.collision.planning_scene_topic)):
                if topic:
                    self.create_subscription(moveit_type, topic, self._scene.offer_serialized(moveit_type),
                                             SCENE_QOS, raw=True)
        if cfg.collision.check_collisions:
            self._marker_pub = self.create_publisher(MarkerArray, "~/collision_markers", QUEUE_DEPTH)
            self.create_timer(MARKER_PERIOD, self._publish_collision_markers)
        for applied, sentence in apply_process_options(cfg.process_options):
            # one call site per severity: rclpy raises when a call site logs at a second severity
            if applied:
                self.get_logger().info(f"process: {sentence}")
            else:
                self.get_logger().warning(f"process: {sentence}")
        self._timer = self.create_timer(cfg.publish_period, self._tick)
        tips = robot.tip_frame if len(robot.tip_frames) == 1 else \
            f"{list(robot.tip_frames)} (tips.mode {cfg.tips.mode}; per-tip topics " \
            f"{[sub.topic for _, *subs in self._tip_inputs for sub in subs]})"
        self.get_logger().info(f"servo for {robot.name}: {robot.base_frame} -> {tips}, joints "
                               f"{list(self._joint_names)}, {cfg.rate_hz:.0f} Hz, output "
                               f"{cfg.command_out_type} on {self._command_pub.topic_name}")

    # ---- read-only views for tests and tools that watch the node (nothing here changes what the node does) -------
    @property
    def servo(self) -> Servo:
        """The core servo this node drives (its config, limits, step)."""
        return self._servo

    @property
    def command_type(self) -> CommandType:
        """The command type the servo follows now (switched by the service or by a fresh command)."""
        return self._command_type.current

    @property
    def scene_inbox(self) -> SceneInbox:
        """The bounded queue of scene changes waiting for the tick (what the scene subscriptions offer to)."""
        return self._scene

    @property
    def tick_timer(self):
        """The rclpy timer that runs the servo tick at publish_period."""
        return self._timer

    # ---- callbacks: store only ----------------------------------------------------------------------
    def _on_joint_state(self, msg: JointState) -> None:
        # Checked on arrival, not at the tick: a refused state (a joint named twice, an old stamp) must not displace
        # a good one that arrived earlier in the same tick. Ordered by stamp per joint set: see core/stamp_order.py.
        if not concerns_chain(msg, self._chain_joints):
            return
        now = receive_time()
        try:
            measurement = measurement_from_joint_state(msg, self._joint_names, now)
            self._stamp_order.admit(self._joint_names, time_nanoseconds(msg.header.stamp), now)
        except RobokinError as err:
            self._joint_state_rejection = f"joint state rejected: {err}"
            return
        self._joint_state = measurement

    def destroy_node(self) -> None:
        # rclpy's context shutdown also destroys a node whose __init__ raised, before _tf_frames existed
        for side in (getattr(self, "_tf_frames", None), getattr(self, "_twists", None),
                     getattr(self, "_joint_jogs", None), getattr(self, "_pose_targets", None),
                     getattr(self, "_distances", None), getattr(self, "_wrenches", None),
                     *(sub for _, *subs in getattr(self, "_tip_inputs", ()) for sub in subs)):
            if side is not None:
                side.close()
        super().destroy_node()

    def _on_pause(self, request: SetBool.Request, response: SetBool.Response) -> SetBool.Response:
        if request.data == self._servo.paused:
            response.message = f"servo is already {'paused' if request.data else 'running'}"
        elif request.data:
            self._servo.pause()
            response.message = "servo paused: commands are ignored until resumed"
        else:
            self._servo.resume()
            for commands in (self._twists, self._joint_jogs, self._pose_targets,
                             *(sub for _, *subs in self._tip_inputs for sub in subs)):
                commands.drop_pending()     # a command that arrived while paused must not move the arm now
            response.message = "servo resumed from the measured joint state"
        response.success = True
        self.get_logger().info(response.message)
        return response

    def _on_enable_hand_guiding(self, request: SetBool.Request, response: SetBool.Response) -> SetBool.Response:
        self._take_sensors(receive_time())        # the newest wrench is the one to zero against
        if not request.data:
            self._servo.stop_guiding()
            response.success, response.message = True, "hand guiding off: the arm comes to rest"
        else:
            try:
                response.message = self._servo.start_guiding(receive_time())
                response.success = True
            except RobokinError as err:
                response.message = f"hand guiding not started: {err}"
        # one call site per severity: rclpy raises when a call site logs at a second severity (a refused call after
        # an accepted one killed the node, and the caller got no answer)
        if response.success:
            self.get_logger().info(response.message)
        else:
            self.get_logger().warning(response.message)
        return response

    def _on_switch_command_type(self, request: ServoCommandType.Request,
                                response: ServoCommandType.Response) -> ServoCommandType.Response:
        result = self._command_type.request(request.command_type)
        # one call site per severity: rclpy refuses a call site that logs at two
        if result.success:
            self.get_logger().info(f"switch_command_type: {result.reason}")
        else:
            self.get_logger().warning(f"switch_command_type: {result.reason}")
        response.success = result.success
        return response

    def _apply_config(self, config: ServoConfig) -> None:
        self._servo.update_config(config)    # raises ConfigError: the update is rejected whole
        self._config = config
        self._watchdog.period = config.publish_period
        self._prepare_serialized()

    def _prepare_serialized(self) -> None:
        """Locate the byte layouts of the windows the servo can publish now, rather than on a tick."""
        for points in self._servo.window_point_counts:
            if points not in self._serialized:
                self._serialized[points] = SerializedTrajectory.build(self._joint_names, points)

    # ---- the loop ----------------------------------------------------------------------------------
    def _tick(self) -> None:
        now = receive_time()
        try:
            self._run_tick(now)
        except Exception as err:     # noqa: BLE001  the node must outlive any one tick
            if not self.context.ok():
                raise                # shutting down: run_node treats it as the shutdown itself
            self._tick_failed(err, now)

    def _tick_failed(self, err: Exception, now: float) -> None:
        """An internal error in a tick: the command is dropped, so the next tick ramps the arm to rest within the
        acceleration limits (and if the servo cannot step at all, the last window it published ends at rest); the
        status names the error until status_period has passed, and the node keeps running."""
        if not self._servo.paused:
            self._servo.resume()     # drops the command (guiding too) and keeps the commanded velocity to ramp down
        reason = f"internal error in the servo tick, command dropped and the arm brought to rest: " \
                 f"{type(err).__name__}: {err}"
        self._status.reject(ServoStatus.INVALID, reason, now, self._config.status_period)
        self._log.error("internal error", f"{reason}\n{traceback.format_exc()}", now)
        if now - self._failure_reported_at >= self._config.status_period:
            self._failure_reported_at = now
            self._moveit_status_pub.publish(moveit_status_msg(ServoStatus.INVALID.moveit_code, reason))
            msg = status_msg(ServoStatus.INVALID, reason, (), float("nan"), float("nan"), 0.0,
                             self.get_clock().now().to_msg(), self._robot.base_frame, self._watchdog.figures(now))
            msg.peak_jerk_share = float("nan")
            self._status_pub.publish(msg)

    def _run_tick(self, now: float) -> None:
        # The trajectory's time 0 is this tick (the core integrates the real time between ticks): a controller
        # that receives it late samples it at the right time instead of rushing from its state to the first
        # point (latency jitter would become jerk). Its hold point keeps it acceptable up to max_delivery_delay.
        stamp_ns = self._stamps.stamp(now, self.get_clock().now().nanoseconds)
        lateness = self._watchdog.tick_started(now)
        if lateness > self._config.tick_lateness_warning:
            self._log.warning("late tick", f"servo tick {lateness * 1e3:.1f} ms late (publish_period "
                              f"{self._config.publish_period * 1e3:g} ms): the CPU is busy; windows stay valid up "
                              f"to max_delivery_delay {self._config.max_delivery_delay:g} s late", now)
        self._take_inputs(now)
        output = self._servo.step(now)
        if output.publish:
            self._publish_command(output, stamp_ns)
        self._publish_status(output, now)
        self._watchdog.tick_finished(now, receive_time())

    def _take_inputs(self, now: float) -> None:
        if self._joint_state_rejection is not None:
            self._reject(ServoStatus.JOINT_STATE_MISSING, self._joint_state_rejection, now)
            self._joint_state_rejection = None
        if self._joint_state is not None:
            measurement, self._joint_state = self._joint_state, None
            try:
                self._servo.set_measurement(measurement)
                self._measured_positions = measurement.positions
            except RobokinError as err:
                self._reject(ServoStatus.JOINT_STATE_MISSING, f"joint state rejected: {err}", now)
        self._take_sensors(now)
        if self._scene.pending:
            self._take_scene_change(now)
        self._take_command(self._twists, CommandType.TWIST, now, self._apply_twist)
        self._take_command(self._joint_jogs, CommandType.JOINT_JOG, now, self._apply_joint_jog)
        self._take_command(self._pose_targets, CommandType.POSE, now, self._apply_pose_target)
        for tip, twists, poses in self._tip_inputs:
            self._take_command(twists, CommandType.TWIST, now,
                               lambda msg, received_at, tip=tip: self._apply_twist(msg, received_at, tip))
            self._take_command(poses, CommandType.POSE, now,
                               lambda msg, received_at, tip=tip: self._apply_pose_target(msg, received_at, tip))

    def _take_scene_change(self, now: float) -> None:
        guard = self._servo.collision_guard
        present = {obj.id for obj in guard.checker.objects} if guard is not None else set()
        try:
            taken = self._scene.take(present)
            for note in taken.notes:
                self.get_logger().info(note)
            if taken.dropped or taken.refused:
                why = list(taken.refused)
                if taken.dropped:
                    why.append(f"{taken.dropped} message(s) dropped, more than {SCENE_QUEUE_LIMIT} changes were "
                               "pending (the servo applies one per tick)")
                self._reject(ServoStatus.INVALID_COMMAND, "scene object rejected: " + "; ".join(why), now, False)
                return              # this tick's status is the drop: a change's own verdict would replace it
            if taken.problems:
                self._reject(ServoStatus.INVALID_COMMAND, f"scene object rejected: {taken.problems}", now, False)
            if taken.change is not None:
                change = taken.change
                self.get_logger().info(self._servo.update_scene(change, self._tf_frames.pose_if_external(
                    change.frame)))
        except RobokinError as err:
            self._reject(ServoStatus.INVALID_COMMAND, f"scene object rejected: {err}", now, False)

    def _publish_collision_markers(self) -> None:
        collision = self._servo.collision_guard
        if collision is None:
            return
        warning = 2.0 * self._config.collision.min_allowable_collision_distance
        stamp = self.get_clock().now().to_msg()
        markers = collision_markers(collision.clearance, collision.checker.objects, warning, self._robot.base_frame,
                                    stamp)
        if self._tip_inputs:          # several tips: each named at its pose (the commanded state's)
            robot, positions = self._robot, self._measured_positions
            if positions is not None:
                markers.markers += tip_markers([(tip, robot.fk(positions, tip)) for tip in robot.tip_frames],
                                               robot.base_frame, stamp)
        self._marker_pub.publish(markers)

    def _take_sensors(self, now: float) -> None:
        distance = self._distances.take_newest()
        if distance is not None:
            try:
                self._servo.set_separation_distance(distance.message.data, distance.received_at)
            except RobokinError as err:
                self._reject(ServoStatus.INVALID_COMMAND, f"separation distance rejected: {err}", now, False)
        wrench = self._wrenches.take_newest()
        if wrench is not None:
            try:
                values, frame = wrench_from_msg(wrench.message)
                self._servo.set_wrench(values, frame, wrench.received_at, self._tf_frames.pose_if_external(frame))
            except RobokinError as err:
                self._reject(ServoStatus.INVALID_COMMAND, f"wrench rejected: {err}", now, False)

    def _take_command(self, commands: PolledSubscription, kind: CommandType, now: float, apply) -> None:
        """The newest input of one kind, if any and admitted, into the servo; a bad one is reported, not used."""
        received = commands.take_newest()
        if received is None or not self._admit(kind, now):
            return
        try:
            apply(received.message, received.received_at)
            self._status.command_accepted()
        except RobokinError as err:
            self._reject(ServoStatus.INVALID_COMMAND, f"{ServoStatus.INVALID_COMMAND.sentence}: {err}", now)

    def _apply_twist(self, msg: TwistStamped, received_at: float, tip: str = "") -> None:
        command = twist_command_from_msg(msg, received_at, tip)
        # a frame outside the model is looked up in TF (never blocks: "waiting for TF" until it arrives)
        self._servo.set_command(command, self._tf_frames.pose_if_external(command.frame))

    def _apply_joint_jog(self, msg: JointJog, received_at: float) -> None:
        self._servo.set_joint_command(joint_jog_command_from_msg(msg, received_at))

    def _apply_pose_target(self, msg: PoseStamped, received_at: float, tip: str = "") -> None:
        target = pose_target_from_msg(msg, received_at, tip)
        self._servo.set_pose_target(target, self._tf_frames.pose_if_external(target.frame))

    def _admit(self, kind: CommandType, now: float) -> bool:
        """Whether an input of `kind` is used: of the current command type, or switching an idle servo to it
        (core/servo/command_type.py); dropped with a warning otherwise, as MoveIt Servo drops it."""
        if self._servo.guiding:
            self._log.warning(f"guiding {kind.name}", f"{kind.name} input ignored: hand guiding is on (call "
                              "~/enable_hand_guiding with false first)", now)
            return False
        before = self._command_type.current
        result = self._command_type.offer(kind, idle=not self._servo.command_is_fresh(now))
        if not result.success:
            self._log.warning(f"command type {kind.name}", result.reason, now)
        elif self._command_type.current != before:
            self.get_logger().info(result.reason)
        return result.success

    def _reject(self, code: ServoStatus, reason: str, now: float, of_command: bool = True) -> None:
        self._status.reject(code, reason, now, self._config.status_period, of_command)
        self._log.warning(reason[:REJECTION_KIND_CHARS], reason, now)

    def _publish_command(self, output: ServoOutput, stamp_ns: int) -> None:
        cfg = self._config
        if cfg.command_out_type == _TRAJECTORY:
            window = output.window
            # the window's bytes refilled in place (ros/serialized_trajectory.py): a fraction of building the message
            points = len(window.times)
            if points not in self._serialized:
                self._serialized[points] = SerializedTrajectory.build(self._joint_names, points)
            serialized = self._serialized[points]
            if serialized is not None:
                self._command_pub.publish(serialized.fill(window, stamp_ns))
                return
            self._reuse = trajectory_msg(self._joint_names, window, self._reuse)
            self._reuse.header.stamp = time_msg(stamp_ns)
            self._command_pub.publish(self._reuse)
        else:
            values = output.positions if cfg.publish_joint_positions else output.velocities
            self._command_pub.publish(float64_array_msg(values))

    def _publish_status(self, output: ServoOutput, now: float) -> None:
        report = self._status.report(output, now, self._config.status_period)
        if report is None:
            return
        message, tips = report.message, None
        if self._tip_inputs:
            message, tips = self._tips_status(report.code, message)
        if report.changed:
            text = f"status {report.code.name}: {message}"
            log = self._log.info if report.code.routine else self._log.warning
            log(f"status {report.code.name}", text)
        self._moveit_status_pub.publish(moveit_status_msg(report.code.moveit_code, message))
        msg = status_msg(report.code, message, output.locked_joints, output.sigma_min, output.condition_number,
                         output.velocity_scale, self.get_clock().now().to_msg(), self._robot.base_frame,
                         self._watchdog.figures(now), tips)
        msg.peak_jerk_share = float(output.peak_jerk_share)      # NaN without jerk limits
        self._status_pub.publish(msg)

    def _tips_status(self, code: ServoStatus, message: str) -> tuple[str, TipsStatus]:
        """Several tips: the status fields naming the tips, and the sentence naming the arms of a collision pair."""
        report = self._servo.tips_report
        collision = self._servo.collision_guard
        clearance = collision.clearance if collision is not None else None
        pair = clearance.names if clearance is not None else None
        limiting = limiting_tips(code, report, pair, self._tips_of_links)
        if code in (ServoStatus.DECELERATE_FOR_COLLISION, ServoStatus.HALT_FOR_COLLISION) and pair is not None:
            arms = [" and ".join(self._tips_of_links(name)) or "fixed" for name in pair] \
                if self._tips_of_links is not None else []
            if len(arms) == 2 and arms[0] != arms[1]:
                message = f"{message} (arm against arm: {arms[0]} vs {arms[1]})"
        return message, TipsStatus(report.mode, report.moving, limiting)


def main(args: list[str] | None = None) -> int:
    """Entry point of the `servo_node` executable."""
    return run_node(ServoNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
