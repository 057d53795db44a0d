"""Configuration of the simulated robot (`sim_robot` node), declared the same way as ServoConfig.

The trajectory controller's switches carry joint_trajectory_controller's parameter names and defaults, so a
user reproduces their controller by copying its values (per-joint `constraints.<joint>.trajectory|goal` are
declared by the node once the joints are known).
"""
from __future__ import annotations

from dataclasses import dataclass

from robokin_ros.core.process_options import SchedulingConfig
from robokin_ros.core.schema import spec

ACTION_SUFFIX = "follow_joint_trajectory"


@dataclass(frozen=True)
class SimRobotConfig(SchedulingConfig):
    """A stand-in for a ros2_control driver: trajectory and forward command controllers, /joint_states."""

    what = "sim_robot configuration"

    rate: float = spec(500.0, "simulation and /joint_states publish rate", unit="Hz", gt=0.0, le=5000.0,
                       read_only=True)
    initial_positions: tuple = spec((), "start configuration in chain order (empty = the robot's home)",
                                    unit="rad", read_only=True)
    joint_states_topic: str = spec("/joint_states", "published joint states", read_only=True)
    trajectory_topic: str = spec("/joint_trajectory_controller/joint_trajectory",
                                 "JointTrajectory commands (JointTrajectoryController)", read_only=True)
    position_command_topic: str = spec("/forward_position_controller/commands",
                                       "Float64MultiArray position commands in chain order", read_only=True)
    velocity_command_topic: str = spec("/forward_velocity_controller/commands",
                                       "Float64MultiArray velocity commands in chain order", read_only=True)
    follow_joint_trajectory_action: str = spec("", "FollowJointTrajectory action (empty = <controller namespace "
                                               "of trajectory_topic>/follow_joint_trajectory, as JTC names it)",
                                               read_only=True)
    driver_check_wait: float = spec(3.0, "the sim_robot executable, at start-up: look this long for another "
                                    "publisher of joint_states_topic (then as long for its first message) and refuse "
                                    "to start when it carries any of the simulated joints (0 = no check)", unit="s",
                                    ge=0.0, le=30.0, read_only=True)
    publish_tf: bool = spec(True, "publish the URDF link tree (moving joints on /tf, fixed ones on /tf_static) "
                            "while no robot_state_publisher node is running", read_only=True)
    tf_rate: float = spec(50.0, "/tf publish rate", unit="Hz", gt=0.0, le=1000.0, read_only=True)
    velocity_limit_scale: float = spec(1.0, "share of the URDF velocity limits the simulated arm reaches "
                                       "(below 1: the arm lags fast commands)", gt=0.0, le=1.0, read_only=True)
    # --- joint_trajectory_controller switches (JTC's names and defaults) ---
    allow_partial_joints_goal: bool = spec(False, "JTC: accept trajectories naming only some of the joints")
    allow_nonzero_velocity_at_trajectory_end: bool = spec(False, "JTC: accept a last point with non-zero velocity")
    allow_integration_in_goal_trajectories: bool = spec(False, "JTC: accept points without positions (the sim "
                                                        "still refuses them: it does not integrate)")
    goal_time: float = spec(0.0, "JTC constraints.goal_time: time allowed past the last point to get within the "
                            "goal tolerances (0 = wait forever)", unit="s", param="constraints.goal_time", ge=0.0,
                            le=3600.0)
    action_monitor_rate: float = spec(20.0, "JTC: FollowJointTrajectory feedback rate", unit="Hz", ge=0.1,
                                      le=1000.0, read_only=True)

    def action_name(self) -> str:
        """The FollowJointTrajectory action name (see `follow_joint_trajectory_action`)."""
        if self.follow_joint_trajectory_action:
            return self.follow_joint_trajectory_action
        namespace, slash, _ = self.trajectory_topic.rpartition("/")
        return f"{namespace}{slash}{ACTION_SUFFIX}"
