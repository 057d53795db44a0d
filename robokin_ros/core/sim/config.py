"""Configuration of the simulated robot (`sim_robot` node), declared the same way as ServoConfig."""
from __future__ import annotations

from dataclasses import dataclass

from robokin_ros.core.schema import NodeConfig, spec


@dataclass(frozen=True)
class SimRobotConfig(NodeConfig):
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
    publish_tf: bool = spec(True, "publish base -> chain link poses on /tf", read_only=True)
    tf_rate: float = spec(50.0, "/tf publish rate", unit="Hz", gt=0.0, le=1000.0, read_only=True)
