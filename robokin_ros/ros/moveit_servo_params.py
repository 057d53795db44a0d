"""MoveIt Servo's parameters as robokin reads them: which it takes (ServoConfig.moveit_names) and which it cannot.

A MoveIt Servo parameter file sets its parameters under `moveit_servo.` (Jazzy and later; Humble and Iron files
are often written bare). robokin declares the ones it supports (`params.declare_config`); a parameter it has no
counterpart for would otherwise be dropped without a word, so `warn_unsupported` names every such one, in one
warning at start-up. docs/moveit_servo_parameters.md has the whole table, with the reasons below.
"""
from __future__ import annotations

from collections.abc import Iterable

from rclpy.node import Node

from robokin_ros.core.schema import MOVEIT_SERVO_NAMESPACE

# Every parameter of MoveIt Servo's Jazzy schema (moveit_ros/moveit_servo/config/servo_parameters.yaml, branch
# jazzy), in its order. The ones robokin supports are the values of ServoConfig.moveit_names (a test checks it).
JAZZY_PARAMETERS = (
    "thread_priority", "publish_period", "max_expected_latency", "move_group_name", "active_subgroup",
    "pose_command_in_topic", "cartesian_command_in_topic", "joint_command_in_topic", "command_in_type",
    "scale.linear", "scale.rotational", "scale.joint", "incoming_command_timeout",
    "apply_twist_commands_about_ee_frame", "pose_tracking.linear_tolerance", "pose_tracking.angular_tolerance",
    "status_topic", "command_out_topic", "command_out_type", "publish_joint_positions", "publish_joint_velocities",
    "publish_joint_accelerations", "monitored_planning_scene_topic", "joint_topic", "check_octomap_collisions",
    "is_primary_planning_scene_monitor", "use_smoothing", "smoothing_filter_plugin_name", "check_collisions",
    "self_collision_proximity_threshold", "scene_collision_proximity_threshold", "collision_check_rate",
    "lower_singularity_threshold", "hard_stop_singularity_threshold", "leaving_singularity_threshold_multiplier",
    "singularity_step_scale", "halt_all_joints_in_joint_mode", "halt_all_joints_in_cartesian_mode",
    "joint_limit_margins", "override_velocity_scaling_factor",
)

# MoveIt Servo parameters robokin does not support, with the reason: Jazzy's, then Humble's and Iron's that Jazzy
# dropped (robokin accepts the Humble/Iron names it has a counterpart for: planning_frame, ee_frame,
# num_outgoing_halt_msgs_to_publish).
UNSUPPORTED = {
    "thread_priority": "no SCHED_FIFO thread: the loop runs on the node's executor (docs/performance.md)",
    "move_group_name": "no MoveIt model: the chain is robot (or robot_description) from base_frame to tip_frame",
    "active_subgroup": "one chain per servo_node",
    "publish_joint_accelerations": "JointTrajectory points carry positions and velocities only",
    "monitored_planning_scene_topic": "no planning scene: collision objects come on ~/scene_objects or from "
                                      "scene_objects_file",
    "check_octomap_collisions": "no octomap",
    "is_primary_planning_scene_monitor": "no planning scene monitor",
    "use_smoothing": "no smoothing plugins: every output is limited in velocity and acceleration",
    "smoothing_filter_plugin_name": "no smoothing plugins",
    "self_collision_proximity_threshold": "collision slowing follows the stop-distance rule instead: "
                                          "collision_distance_safety_factor, min_allowable_collision_distance",
    "scene_collision_proximity_threshold": "as self_collision_proximity_threshold",
    "singularity_step_scale": "the direction to the singularity comes from the SVD, no test step",
    "joint_limit_margin": "Humble/Iron's scalar; robokin reads Jazzy's list joint_limit_margins",
    "ee_frame_name": "Humble's name; robokin reads tip_frame (or Iron's ee_frame)",
    "robot_link_command_frame": "Humble's; a twist's header.frame_id names its frame",
    "low_latency_mode": "Humble's; the loop always publishes once per publish_period",
    "use_gazebo": "Humble's; nothing to switch",
}


def unsupported_moveit_parameters(undeclared: Iterable[str]) -> list[str]:
    """The MoveIt Servo parameters among `undeclared` (names a node received but did not declare), sorted:
    everything under `moveit_servo.`, and bare names of MoveIt Servo parameters (Humble/Iron files)."""
    moveit_names = set(JAZZY_PARAMETERS) | set(UNSUPPORTED)
    prefix = f"{MOVEIT_SERVO_NAMESPACE}."
    return sorted(name for name in set(undeclared) if name.startswith(prefix) or name in moveit_names)


def parameter_overrides(node: Node) -> list[str]:
    """The names of the parameters given to `node` (parameter files, `-p`, the constructor's overrides).

    rclpy keeps them in `Node._parameter_overrides` (Jazzy 7.1 and Kilted 9.1 alike) and has no public getter.
    """
    return list(getattr(node, "_parameter_overrides", {}))


def warn_unsupported(node: Node) -> list[str]:
    """Log one warning naming every MoveIt Servo parameter given to `node` that it did not declare (call it
    after the node declared its parameters); returns those names."""
    names = unsupported_moveit_parameters(n for n in parameter_overrides(node) if not node.has_parameter(n))
    if names:
        node.get_logger().warning(
            f"MoveIt Servo parameters not supported by robokin, ignored: {', '.join(names)} "
            "(docs/moveit_servo_parameters.md says why)")
    return names
