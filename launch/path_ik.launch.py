"""Cartesian path IK: path_ik_node (+ sim_robot standing in for the robot driver on request).

    ros2 launch robokin_ros path_ik.launch.py robot:=panda sim:=true
    ros2 launch robokin_ros path_ik.launch.py robot:=ur5 params_file:=/path/to/my_path_ik.yaml
    ros2 launch robokin_ros path_ik.launch.py robot:=/path/to/arm.urdf base_frame:=base_link tip_frame:=tool0

Parameters: config/<robot>_path_ik.yaml for a robot that has one (panda, ur5), else config/generic_path_ik.yaml
(no joint-specific values); params_file:= overrides. Every node gets use_sim_time.
"""
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription
from robokin_ros.core.embedded import EMBEDDED_ROBOTS
from robokin_ros.paths import node_params_file

TRUE = ("true", "1", "yes", "on")


def _arg(context, name: str) -> str:
    return LaunchConfiguration(name).perform(context)


def _nodes(context):
    robot = _arg(context, "robot")
    shared = {"robot": robot, "use_sim_time": _arg(context, "use_sim_time").lower() in TRUE}
    shared.update({key: _arg(context, key) for key in ("base_frame", "tip_frame") if _arg(context, key)})
    params_file = _arg(context, "params_file") or str(node_params_file(robot, "path_ik"))
    nodes = [Node(package="robokin_ros", executable="path_ik_node", name="path_ik_node", output="screen",
                  parameters=[params_file, shared])]
    if _arg(context, "sim").lower() in TRUE:
        nodes.append(Node(package="robokin_ros", executable="sim_robot", name="sim_robot", output="screen",
                          parameters=[shared]))
    return nodes


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("robot", default_value="panda",
                              description=f"embedded robot {sorted(EMBEDDED_ROBOTS)} or a URDF path"),
        DeclareLaunchArgument("base_frame", default_value="", description="chain base (default: the robot's)"),
        DeclareLaunchArgument("tip_frame", default_value="", description="chain tip (default: the robot's)"),
        DeclareLaunchArgument("sim", default_value="false", description="start sim_robot as the driver"),
        DeclareLaunchArgument("params_file", default_value="",
                              description="path_ik_node parameters (default: config/<robot>_path_ik.yaml, else "
                                          "config/generic_path_ik.yaml)"),
        DeclareLaunchArgument("use_sim_time", default_value="false", description="every node follows /clock"),
        OpaqueFunction(function=_nodes),
    ])
