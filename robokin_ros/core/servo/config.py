"""ServoConfig: every parameter of the servo core and of `servo_node`, with docs, units and bounds."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from robokin_ros.core.process_options import SchedulingConfig
from robokin_ros.core.schema import ParameterGroup, group, spec

# override_velocity_scaling_factor below this means "no override" (MoveIt Servo's SCALING_OVERRIDE_THRESHOLD)
SCALING_OVERRIDE_THRESHOLD = 0.01


@dataclass(frozen=True)
class ScaleConfig(ParameterGroup):
    """Speeds of a unitless command of 1 (`scale.*`)."""

    what = "scale parameters"
    linear: float = spec(0.4, "linear speed of a unitless command of 1", unit="m/s", gt=0.0, le=10.0)
    rotational: float = spec(0.8, "angular speed of a unitless command of 1", unit="rad/s", gt=0.0, le=20.0)
    joint: float = spec(0.5, "joint speed of a unitless joint jog of 1", unit="rad/s", gt=0.0, le=20.0)


@dataclass(frozen=True)
class PoseTrackingConfig(ParameterGroup):
    """Pose target tracking (`pose_tracking.*`, core/servo/pose_tracking.py)."""

    what = "pose tracking parameters"
    linear_tolerance: float = spec(0.001, "a pose target is reached when the tool is this close (and within "
                                   "the angular tolerance)", unit="m", gt=0.0, le=1.0)
    angular_tolerance: float = spec(0.01, "angular part of the pose target tolerance", unit="rad", gt=0.0, le=3.2)
    linear_gain: float = spec(20.0, "tool speed per metre of position error (the error decays at this rate)",
                              unit="1/s", gt=0.0, le=200.0)
    angular_gain: float = spec(10.0, "tool angular speed per radian of orientation error", unit="1/s", gt=0.0,
                               le=200.0)
    max_linear_speed: float = spec(0.25, "tool speed limit while approaching a pose target", unit="m/s", gt=0.0,
                                   le=10.0)
    max_angular_speed: float = spec(1.0, "tool angular speed limit while approaching a pose target",
                                    unit="rad/s", gt=0.0, le=20.0)
    max_linear_acceleration: float = spec(1.0, "braking deceleration toward a pose target: the tool arrives "
                                          "at rest, without overshoot", unit="m/s^2", gt=0.0, le=100.0)
    max_angular_acceleration: float = spec(3.0, "angular braking deceleration toward a pose target",
                                           unit="rad/s^2", gt=0.0, le=200.0)


TIP_MODES = ("independent", "coordinated", "relative")


@dataclass(frozen=True)
class TipsConfig(ParameterGroup):
    """Several tips in one model (`tips.*`, core/servo/tips_motion.py); a robot with one tip ignores the group."""

    what = "tips parameters"
    mode: str = spec("independent", "independent: one twist per tip (a tip without a fresh one holds still); "
                     "coordinated: one twist of an object held by every tip (their relative poses stay fixed); "
                     "relative: a tip's twist is relative to the reference tip, which holds still in the world "
                     "unless it gets its own twist", choices=TIP_MODES)
    reference_tip: str = spec("", "relative mode: the tip the others move relative to (empty = the first tip)")
    hold_gain: float = spec(20.0, "feedback on a held pose (the reference tip in relative mode, the hands' relative "
                            "pose in coordinated mode): the drift decays at this rate", unit="1/s", gt=0.0,
                            le=200.0)
    conflict_tolerance: float = spec(0.001, "independent mode: a tip that misses its twist by more than this "
                                     "(the stacked solve could not give every tip its command, e.g. through a "
                                     "shared joint) is named in the status", unit="m/s", gt=0.0, le=1.0)


@dataclass(frozen=True)
class CollisionConfig(ParameterGroup):
    """Collision-aware speed scaling (core/collision/); the parameters keep MoveIt Servo's names."""

    what = "collision parameters"
    check_collisions: bool = spec(False, "slow down and halt motion toward a self- or scene collision (needs the "
                                  "URDF's collision meshes)", read_only=True)
    collision_check_rate: float = spec(100.0, "how often the nearest pair and its distance gradient are computed",
                                       unit="Hz", gt=0.0, le=1000.0)
    collision_distance_safety_factor: float = spec(10.0, "the braking distance is multiplied by this before it "
                                                   "must fit in the clearance (MoveIt's stop-distance meaning)",
                                                   ge=1.0, le=100000.0)
    min_allowable_collision_distance: float = spec(0.01, "motion that brings a pair closer halts at this distance",
                                                   unit="m", ge=0.0, le=1.0)
    srdf: str = spec("", "SRDF file (or XML) whose disabled pairs are not checked; empty = the embedded robot's, "
                     "else adjacent links are skipped", read_only=True)
    scene_objects_file: str = spec("", "YAML file of static scene objects (config/scene_objects.example.yaml)",
                                   read_only=True)
    collision_object_topic: str = spec("/collision_object", "MoveIt collision objects in (moveit_msgs/"
                                       "CollisionObject, as MoveIt's planning scene interface publishes them; "
                                       "used when check_collisions); '' = off", read_only=True)
    planning_scene_topic: str = spec("", "MoveIt planning scene in (moveit_msgs/PlanningScene: its world's collision "
                                     "objects, diffs and full scenes, e.g. /monitored_planning_scene; used when "
                                     "check_collisions); '' = off", read_only=True)


@dataclass(frozen=True)
class SeparationConfig(ParameterGroup):
    """Speed and separation monitoring (`separation.*`, core/servo/separation.py)."""

    what = "separation parameters"
    enabled: bool = spec(False, "scale the tool speed by a person's distance on separation_distance_topic")
    distance_topic: str = spec("~/separation_distance", "separation distance in (std_msgs/Float64, "
                               "metres, from a safety scanner or camera)", param="separation_distance_topic",
                               read_only=True)
    safe_speed: float = spec(0.25, "tool speed allowed at and beyond the safety distance", unit="m/s", gt=0.0,
                             le=10.0)
    safety_distance: float = spec(1.0, "from this distance on, the full safe speed is allowed "
                                  "(below: v = safe_speed * d / safety_distance)", unit="m", gt=0.0, le=100.0)
    protective_distance: float = spec(0.3, "closer than this: protective stop within the acceleration "
                                      "limits", unit="m", ge=0.0, le=100.0)
    timeout: float = spec(0.2, "a distance older than this counts as missing: the slowest speed (the "
                          "one at the protective distance)", unit="s", gt=0.0, le=10.0)


@dataclass(frozen=True)
class HandGuidingConfig(ParameterGroup):
    """Hand guiding: the admittance and its wrench input (`hand_guiding.*`, core/servo/admittance.py)."""

    what = "hand guiding parameters"
    mass: float = spec(5.0, "admittance mass per linear axis", unit="kg", gt=0.0)
    damping: float = spec(50.0, "admittance damping: a push F beyond the dead band settles at F / damping",
                          unit="N s/m", gt=0.0)
    inertia: float = spec(0.5, "admittance inertia per angular axis", unit="kg m^2", gt=0.0)
    angular_damping: float = spec(5.0, "admittance angular damping", unit="N m s/rad", gt=0.0)
    force_deadband: float = spec(2.0, "force below this counts as no push (subtracted above it)", unit="N", ge=0.0)
    torque_deadband: float = spec(0.2, "torque below this counts as no twist (subtracted above it)",
                                  unit="N m", ge=0.0)
    force_saturation: float = spec(60.0, "largest effective force", unit="N", gt=0.0)
    torque_saturation: float = spec(6.0, "largest effective torque", unit="N m", gt=0.0)
    wrench_timeout: float = spec(0.1, "a wrench older than this pauses guiding: a ramp to rest, resumed "
                                 "by fresh wrenches within resume_timeout", unit="s", gt=0.0)
    resume_timeout: float = spec(1.0, "a wrench gap longer than this ends guiding (re-enable it); "
                                 "shorter gaps only pause it", unit="s", gt=0.0, le=60.0)
    max_force: float = spec(1e4, "a reading with a larger force norm is refused as not physical (a "
                            "sensor fault or wrong units)", unit="N", gt=0.0, le=1e6)
    max_torque: float = spec(1e3, "a reading with a larger torque norm is refused as not physical",
                             unit="N m", gt=0.0, le=1e5)
    max_linear_speed: float = spec(0.25, "guided tool speed cap", unit="m/s", gt=0.0, le=10.0)
    max_angular_speed: float = spec(0.5, "guided tool angular speed cap", unit="rad/s", gt=0.0, le=20.0)


@dataclass(frozen=True)
class ServoConfig(SchedulingConfig):
    """Everything the twist servo core and its node need; docs/parameters.md has the parameter table."""

    what = "servo configuration"
    # robokin parameter -> MoveIt Servo's name for the same setting (moveit_servo's servo_parameters.yaml: Jazzy
    # and later; planning_frame, ee_frame from Iron, num_outgoing_halt_msgs_to_publish from Humble). Each MoveIt
    # name is accepted too, bare and under `moveit_servo.` (see schema.parameter_aliases);
    # docs/parameters.md has the table.
    moveit_names: ClassVar[dict[str, str]] = {
        "base_frame": "planning_frame",
        "tip_frame": "ee_frame",
        "command_in_type": "command_in_type",
        "scale.linear": "scale.linear",
        "scale.rotational": "scale.rotational",
        "scale.joint": "scale.joint",
        "apply_twist_about_tool": "apply_twist_commands_about_ee_frame",
        "incoming_command_timeout": "incoming_command_timeout",
        "cartesian_command_in_topic": "cartesian_command_in_topic",
        "joint_command_in_topic": "joint_command_in_topic",
        "pose_command_in_topic": "pose_command_in_topic",
        "publish_period": "publish_period",
        "command_out_type": "command_out_type",
        "command_out_topic": "command_out_topic",
        "publish_joint_positions": "publish_joint_positions",
        "publish_joint_velocities": "publish_joint_velocities",
        "max_expected_latency": "max_expected_latency",
        "num_outgoing_halt_msgs_to_publish": "num_outgoing_halt_msgs_to_publish",
        "joint_topic": "joint_topic",
        "status_topic": "status_topic",
        "lower_singularity_threshold": "lower_singularity_threshold",
        "hard_stop_singularity_threshold": "hard_stop_singularity_threshold",
        "leaving_singularity_threshold_multiplier": "leaving_singularity_threshold_multiplier",
        "joint_limit_margins": "joint_limit_margins",
        "halt_all_joints_in_joint_mode": "halt_all_joints_in_joint_mode",
        "halt_all_joints_in_cartesian_mode": "halt_all_joints_in_cartesian_mode",
        "pose_tracking.linear_tolerance": "pose_tracking.linear_tolerance",
        "pose_tracking.angular_tolerance": "pose_tracking.angular_tolerance",
        "override_velocity_scaling_factor": "override_velocity_scaling_factor",
        "check_collisions": "check_collisions",
        "collision_check_rate": "collision_check_rate",
        "collision_distance_safety_factor": "collision_distance_safety_factor",
        "min_allowable_collision_distance": "min_allowable_collision_distance",
    }

    # --- input ---
    command_in_type: str = spec("unitless", "unitless: twist in [-1, 1] scaled by scale.*; speed_units: SI",
                                choices=("unitless", "speed_units"))
    scale: ScaleConfig = group(ScaleConfig, "scale.")
    apply_twist_about_tool: bool = spec(True, "true: the twist is the tool origin's velocity (rotation "
                                        "about the tool); false: a spatial twist about the command frame's origin")
    incoming_command_timeout: float = spec(0.1, "a command older than this (by receive time) is stale",
                                           unit="s", gt=0.0, le=10.0)
    cartesian_command_in_topic: str = spec("~/delta_twist_cmds", "twist command topic (TwistStamped)",
                                           read_only=True)
    joint_command_in_topic: str = spec("~/delta_joint_cmds", "joint jog command topic (control_msgs/JointJog)",
                                       read_only=True)
    pose_command_in_topic: str = spec("~/pose_target_cmds", "pose target topic (geometry_msgs/PoseStamped): the "
                                      "tip frame's target in any model or TF frame", read_only=True)
    override_velocity_scaling_factor: float = spec(0.0, "speed override, a fraction in (0, 1] multiplying every "
                                                   "commanded velocity; 0 = none (the default; as in MoveIt Servo, "
                                                   "anything below 0.01 is none too); NaN, inf, < 0, > 1 refused",
                                                   ge=0.0, le=1.0)
    joint_state_timeout: float = spec(0.5, "halt when no joint state has arrived for this long while the servo "
                                      "itself was running (its own stalls do not count)", unit="s",
                                      gt=0.0, le=10.0)
    # --- pose tracking (core/servo/pose_tracking.py) ---
    pose_tracking: PoseTrackingConfig = group(PoseTrackingConfig, "pose_tracking.")
    # --- several tips (core/servo/tips_motion.py) ---
    tips: TipsConfig = group(TipsConfig, "tips.")
    # --- collision-aware speed scaling (core/collision/) ---
    collision: CollisionConfig = group(CollisionConfig, "")
    # --- speed and separation monitoring (core/servo/separation.py) ---
    separation: SeparationConfig = group(SeparationConfig, "separation.")
    # --- hand guiding (core/servo/admittance.py) ---
    wrench_topic: str = spec("~/wrench", "tool force/torque sensor in (geometry_msgs/WrenchStamped; header.frame_id "
                             "= the sensor frame, the torque about its origin)", read_only=True)
    hand_guiding: HandGuidingConfig = group(HandGuidingConfig, "hand_guiding.")
    # --- loop and output ---
    publish_period: float = spec(0.002, "control period of the servo loop", unit="s", ge=0.0002, le=0.1,
                                 read_only=True)
    command_out_type: str = spec("trajectory_msgs/JointTrajectory", "output message type",
                                 choices=("trajectory_msgs/JointTrajectory", "std_msgs/Float64MultiArray"),
                                 read_only=True)
    command_out_topic: str = spec("/joint_trajectory_controller/joint_trajectory", "output topic",
                                  read_only=True)
    publish_joint_positions: bool = spec(True, "Float64MultiArray output carries positions (forward "
                                         "position controller)", read_only=True)
    publish_joint_velocities: bool = spec(False, "Float64MultiArray output carries velocities (forward "
                                          "velocity controller)", read_only=True)
    max_expected_latency: float = spec(0.05, "trajectory window length: covers the controller's latency",
                                       unit="s", gt=0.0, le=1.0)
    max_delivery_delay: float = spec(1.0, "each trajectory window ends held at rest until this long after its "
                                     "stamp, so a controller still accepts one that reaches it this late (a busy "
                                     "CPU); no motion is added: the arm stops as the window's tail says",
                                     unit="s", gt=0.0, le=60.0)
    tick_lateness_warning: float = spec(0.02, "the watchdog warns (throttled) when a tick starts this much later "
                                        "than its period allows; ~/robokin_status always carries the figures",
                                        unit="s", gt=0.0, le=10.0)
    num_outgoing_halt_msgs_to_publish: int = spec(4, "after stopping, publish this many hold messages, then "
                                                  "go silent; 0 = keep holding forever", ge=0, le=100000)
    joint_topic: str = spec("/joint_states", "measured joint states", read_only=True)
    status_topic: str = spec("~/status", "moveit_msgs/ServoStatus for MoveIt Servo clients (robokin's full "
                             "status goes to ~/robokin_status)", read_only=True)
    status_period: float = spec(0.5, "status is republished at least this often", unit="s", gt=0.0, le=60.0)
    max_state_divergence: float = spec(0.05, "re-anchor the integrated command to the measured state "
                                       "when any joint differs by more", unit="rad", gt=0.0, le=3.2)
    # --- velocity IK ---
    singularity_sigma_threshold: float = spec(0.04, "below this smallest singular value of the task "
                                              "Jacobian, damping grows (zero above)", unit="m/rad", gt=0.0)
    max_damping: float = spec(0.05, "damping factor reached at sigma_min = 0", gt=0.0, le=10.0)
    singularity_escape: bool = spec(True, "leave a damped singularity toward the command along the joint motion that "
                                    "makes it reachable (second order, e.g. bending a stretched elbow); off: damping "
                                    "alone, which barely moves the arm back out of a deep singularity")
    use_condition_number_thresholds: bool = spec(False, "MoveIt-Servo-style slow-down / halt by "
                                                 "condition number (off: damping alone handles singularities)")
    lower_singularity_threshold: float = spec(30.0, "start slowing above this condition number", gt=1.0)
    hard_stop_singularity_threshold: float = spec(90.0, "halt motion toward the singularity above this "
                                                  "condition number", gt=1.0)
    leaving_singularity_threshold_multiplier: float = spec(2.0, "when moving away from a singularity the "
                                                           "thresholds are multiplied by this", ge=1.0)
    joint_limit_margins: tuple = spec((0.02,), "a joint pushed this close to its limit stops there (halt_all_joints_"
                                      "in_*: all joints with it, or it alone); one value for every joint, or one "
                                      "per joint", unit="rad", ge=0.0, le=1.0, per_joint=True, one_for_all=True)
    halt_all_joints_in_joint_mode: bool = spec(True, "joint jog: when a jogged joint reaches its limit margin, true "
                                               "stops every jogged joint with it (all decelerating in proportion, "
                                               "within the acceleration limits); false stops that joint alone")
    halt_all_joints_in_cartesian_mode: bool = spec(True, "twist and hand guiding: when a joint would pass its limit "
                                                   "margin, true slows the whole motion so that joint stops at the "
                                                   "margin (the tool stops along the commanded direction); false "
                                                   "locks that joint and the others carry on as far as they can")
    joint_limit_avoidance_gain: float = spec(1.0, "null-space push away from the outer 25 % of each joint "
                                             "range", unit="1/s", ge=0.0, le=100.0)
    joint_limit_avoidance_zone: float = spec(0.25, "share of the range on each side where the push acts",
                                             gt=0.0, le=0.5)
    locked_direction_tolerance: float = spec(0.2, "with joints held at a limit, slow down when the other "
                                             "joints move the tool this share off the commanded twist "
                                             "(halt at it, slowing from half of it)", gt=0.0, le=10.0)
    posture_gain: float = spec(0.0, "null-space pull toward home_positions", unit="1/s", ge=0.0, le=100.0)
    home_positions: tuple = spec((), "posture target (empty = the robot's home)", unit="rad", per_joint=True)
    max_joint_velocity: tuple = spec((), "per-joint velocity limits (empty = URDF)", unit="rad/s", gt=0.0,
                                     per_joint=True)
    velocity_scaling: float = spec(1.0, "fraction of the joint velocity limits the servo may use",
                                   gt=0.0, le=1.0)
    max_joint_acceleration: tuple = spec((), "per-joint acceleration limits (empty = default_joint_"
                                         "acceleration)", unit="rad/s^2", gt=0.0, per_joint=True)
    default_joint_acceleration: float = spec(5.0, "acceleration limit of joints without one",
                                             unit="rad/s^2", gt=0.0, le=1000.0)
    max_joint_jerk: tuple = spec((), "per-joint jerk limits (empty = default_joint_jerk); with a jerk limit every "
                                 "window and every transition keeps the acceleration continuous", unit="rad/s^3",
                                 gt=0.0, le=1e6, per_joint=True)
    default_joint_jerk: float = spec(0.0, "jerk limit of every joint when max_joint_jerk is empty (0 = no jerk "
                                     "limit: velocity and acceleration limits only)", unit="rad/s^3", ge=0.0,
                                     le=1e6)

    @property
    def rate_hz(self) -> float:
        """Control rate of the servo loop [Hz]."""
        return 1.0 / self.publish_period

    def cross_field_problems(self) -> list[str]:
        problems = []
        if self.hard_stop_singularity_threshold <= self.lower_singularity_threshold:
            problems.append(f"hard_stop_singularity_threshold={self.hard_stop_singularity_threshold} must "
                            f"exceed lower_singularity_threshold={self.lower_singularity_threshold}")
        if self.command_out_type == "std_msgs/Float64MultiArray" and \
                self.publish_joint_positions == self.publish_joint_velocities:
            problems.append("std_msgs/Float64MultiArray output needs exactly one of publish_joint_positions "
                            f"({self.publish_joint_positions}) and publish_joint_velocities "
                            f"({self.publish_joint_velocities})")
        if self.command_out_type == "trajectory_msgs/JointTrajectory" and not self.publish_joint_positions:
            problems.append("trajectory_msgs/JointTrajectory output needs publish_joint_positions=true "
                            "(JointTrajectoryController requires positions)")
        if not self.joint_limit_margins:
            problems.append("joint_limit_margins=[] needs one value (for every joint) or one per joint")
        pose, separation, guiding = self.pose_tracking, self.separation, self.hand_guiding
        for name, gain in (("pose_tracking.linear_gain", pose.linear_gain),
                           ("pose_tracking.angular_gain", pose.angular_gain)):
            if gain * self.publish_period >= 0.5:
                # the error shrinks by (1 - gain * dt) a tick: near 1 it would overshoot and ring
                problems.append(f"{name}={gain} times publish_period={self.publish_period} must be below 0.5")
        if self.tips.hold_gain * self.publish_period >= 0.5:
            problems.append(f"tips.hold_gain={self.tips.hold_gain} times publish_period={self.publish_period} must be "
                            "below 0.5")
        if separation.protective_distance >= separation.safety_distance:
            problems.append(f"separation.protective_distance={separation.protective_distance} must be below "
                            f"separation.safety_distance={separation.safety_distance}")
        if guiding.resume_timeout < guiding.wrench_timeout:
            problems.append(f"hand_guiding.resume_timeout={guiding.resume_timeout} must be >= "
                            f"hand_guiding.wrench_timeout={guiding.wrench_timeout}")
        if self.max_expected_latency < self.publish_period:
            problems.append(f"max_expected_latency={self.max_expected_latency} must be >= "
                            f"publish_period={self.publish_period}")
        return problems + super().cross_field_problems()
