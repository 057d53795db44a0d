"""PathConfig: every parameter of the Cartesian path IK core and of `path_ik_node`, with docs and bounds."""
from __future__ import annotations

from dataclasses import dataclass

from robokin_ros.core.schema import NodeConfig, spec


@dataclass(frozen=True)
class PathConfig(NodeConfig):
    """Path IK, downsampling, timing and node settings; docs/parameters.md has the parameter table."""

    what = "path configuration"

    # --- geometry ---
    blend_radius: float = spec(0.0, "default corner blend radius (nav_msgs/Path input)", unit="m", ge=0.0, le=10.0)
    clamp_blend_radius: bool = spec(False, "false: refuse a radius larger than half the shorter neighbouring "
                                    "segment; true: clamp it and report the corner")
    sample_step: float = spec(1e-3, "dense sample spacing in translation (1 mm at most)", unit="m",
                              gt=0.0, le=1e-3)
    sample_angle_step: float = spec(1e-3, "dense sample spacing in rotation (1 mrad at most)", unit="rad",
                                    gt=0.0, le=1e-3)
    # --- incremental IK ---
    axis_mask: tuple = spec((True,) * 6, "constrained axes as six booleans (vx vy vz wx wy wz), e.g. "
                            "[true, true, true, true, true, false] leaves rotation about z free; at least one true")
    axis_mask_frame: str = spec("tool", "frame the axis mask is expressed in", choices=("tool", "base"))
    max_optimizer_iterations: int = spec(1, "DLS iterations per dense sample (more = tighter, null-space "
                                         "objectives converge further)", ge=1, le=100)
    convergence_tolerance: float = spec(1e-7, "stop iterating a sample below this pose error", unit="m|rad",
                                        gt=0.0, le=1e-3)
    max_position_deviation: float = spec(1e-4, "fail when the tool is farther than this from the path",
                                         unit="m", gt=0.0, le=0.1)
    max_orientation_deviation: float = spec(1e-3, "fail when the tool orientation is off by more",
                                            unit="rad", gt=0.0, le=1.0)
    max_joint_step: float = spec(0.05, "fail when a joint moves more than this between two dense samples",
                                 unit="rad", gt=0.0, le=1.0)
    joint_limit_margin: float = spec(0.01, "joints stay this far inside their position limits", unit="rad",
                                     ge=0.0, le=0.5)
    singularity_sigma_threshold: float = spec(0.01, "damping starts below this smallest singular value",
                                              unit="m/rad", gt=0.0, le=1.0)
    max_damping: float = spec(0.02, "damping at sigma_min = 0", ge=0.0, le=1.0)
    joint_limit_avoidance_gain_per_sample: float = spec(0.0, "null-space push per dense sample away from the "
                                                        "outer zone of each joint range (0 = off)", ge=0.0, le=1.0)
    joint_limit_avoidance_zone: float = spec(0.1, "share of the range on each side where the push acts",
                                             gt=0.0, le=0.5)
    posture_gain_per_sample: float = spec(0.0, "null-space pull per dense sample toward home_positions (0 = off)",
                                          ge=0.0, le=1.0)
    home_positions: tuple = spec((), "posture target (empty = the robot's home)", unit="rad", per_joint=True)
    # --- downsampling ---
    downsample_joint_tolerance: float = spec(2e-3, "max joint deviation of the timed spline from the dense "
                                             "solution", unit="rad", gt=0.0, le=0.1)
    downsample_position_tolerance: float = spec(5e-5, "max tool deviation of the timed spline from the path",
                                                unit="m", gt=0.0, le=0.01)
    downsample_orientation_tolerance: float = spec(5e-4, "max tool orientation deviation of the timed spline",
                                                   unit="rad", gt=0.0, le=0.1)
    # --- timing ---
    max_joint_velocity: tuple = spec((), "per-joint velocity limits (empty = URDF)", unit="rad/s", gt=0.0,
                                     per_joint=True)
    max_joint_acceleration: tuple = spec((), "per-joint acceleration limits (empty = "
                                         "default_joint_acceleration)", unit="rad/s^2", gt=0.0, per_joint=True)
    default_joint_acceleration: float = spec(5.0, "acceleration limit of joints without one", unit="rad/s^2",
                                             gt=0.0, le=1000.0)
    velocity_scaling: float = spec(1.0, "default fraction of the velocity limits", gt=0.0, le=1.0)
    acceleration_scaling: float = spec(1.0, "default fraction of the acceleration limits", gt=0.0, le=1.0)
    max_joint_jerk: tuple = spec((), "per-joint jerk limits (empty = default_joint_jerk)", unit="rad/s^3", gt=0.0,
                                 le=1e6, per_joint=True)
    default_joint_jerk: float = spec(0.0, "jerk limit of every joint when max_joint_jerk is empty (0 = no jerk "
                                     "limit: the acceleration-limited timing)", unit="rad/s^3", ge=0.0, le=1e6)
    max_cartesian_speed: float = spec(0.0, "peak speed of the tool frame origin on every path, on top of the "
                                      "joint limits; absolute, not scaled by velocity_scaling (0 = no limit)",
                                      unit="m/s", ge=0.0, le=100.0)
    max_cartesian_angular_speed: float = spec(0.0, "peak angular speed of the tool on every path (0 = no limit)",
                                              unit="rad/s", ge=0.0, le=1000.0)
    max_cartesian_jerk: float = spec(0.0, "peak jerk of the tool frame origin on tool-speed-limited paths, with joint "
                                     "jerk limits set (0 = no limit)", unit="m/s^3", ge=0.0, le=1e6)
    max_cartesian_angular_jerk: float = spec(0.0, "peak angular jerk of the tool on tool-speed-limited paths "
                                             "(0 = no limit)", unit="rad/s^3", ge=0.0, le=1e6)
    trajectory_rate_hz: float = spec(100.0, "sample rate of the output trajectory", unit="Hz", gt=0.0, le=2000.0)
    control_rate_hz: float = spec(500.0, "rate at which the timed trajectory is verified", unit="Hz",
                                  gt=0.0, le=10000.0)
    joint_move_profile: str = spec("trapezoid", "velocity profile of joint-space moves between stops (approach "
                                   "moves, MoveJ between fine points): 'trapezoid' is time-optimal within what a "
                                   "trajectory controller's spline can play (up to 8 % slower than the ideal "
                                   "trapezoid), 'quintic' is smoother (no acceleration steps) and about 1.1-1.9x "
                                   "slower",
                                   choices=("trapezoid", "quintic"))
    planning_timeout: float = spec(10.0, "planning (geometry, IK, downsampling, timing) ends with "
                                   "PLANNING_TIMEOUT when it takes longer", unit="s", gt=0.0, le=3600.0)
    # --- node ---
    execution: str = spec("action", "how a planned path is executed: 'action' sends a control_msgs/"
                          "FollowJointTrajectory goal (as MoveIt does) and reports the controller's result; 'topic' "
                          "publishes on command_out_topic and watches joint_topic", choices=("action", "topic"))
    follow_joint_trajectory_action: str = spec("/joint_trajectory_controller/follow_joint_trajectory",
                                               "the trajectory controller's FollowJointTrajectory action "
                                               "(execution: action)")
    controller_response_timeout: float = spec(5.0, "wait this long for the action server and for it to accept "
                                              "or reject a goal", unit="s", gt=0.0, le=60.0)
    path_tolerance: float = spec(0.0, "position tolerance of every joint while the controller follows the path, "
                                 "sent with the goal (0 = the controller's constraints.<joint>.trajectory)",
                                 unit="rad", ge=0.0, le=10.0)
    command_out_topic: str = spec("/joint_trajectory_controller/joint_trajectory", "trajectory output topic "
                                  "(execution: topic, and the nav_msgs/Path input in that mode)", read_only=True)
    joint_topic: str = spec("/joint_states", "measured joint states", read_only=True)
    joint_state_timeout: float = spec(0.5, "joint states older than this refuse a goal", unit="s", gt=0.0,
                                      le=60.0)
    preempt: bool = spec(False, "a new goal while one runs: false = reject the new goal, true = stop the "
                         "running goal along its path within the acceleration limits and accept the new one")
    goal_tolerance: float = spec(0.01, "execution is done when every joint is this close to the end (sent as "
                                 "the goal's goal_tolerance with execution: action)", unit="rad", gt=0.0, le=1.0)
    execution_timeout_margin: float = spec(2.0, "abort execution this long after the planned duration (sent as "
                                           "the goal's goal_time_tolerance with execution: action)",
                                           unit="s", gt=0.0, le=600.0)

    def cross_field_problems(self) -> list[str]:
        return axis_mask_problems(self.axis_mask)


def axis_mask_problems(mask) -> list[str]:
    """The one rule for an axis mask (parameter or request): six booleans, at least one true."""
    entries = tuple(mask) if isinstance(mask, (tuple, list)) else (mask,)
    if len(entries) != 6 or not all(isinstance(v, bool) for v in entries) or not any(entries):
        return [f"axis_mask={mask!r} must be six booleans with at least one true"]
    return []
