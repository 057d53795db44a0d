"""Cartesian path IK: path_ik_node (+ sim_robot standing in for the robot driver on request).

    ros2 launch robokin_ros path_ik.launch.py robot:=panda sim:=true
    ros2 launch robokin_ros path_ik.launch.py robot:=ur5 params_file:=/path/to/my_path_ik.yaml
"""
from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription


def _nodes(context):
    share = Path(get_package_share_directory("robokin_ros"))
    robot = LaunchConfiguration("robot").perform(context)
    params = LaunchConfiguration("params_file").perform(context) or str(share / "config" / f"{robot}_path_ik.yaml")
    return [
        Node(package="robokin_ros", executable="path_ik_node", name="path_ik_node", output="screen",
             parameters=[params]),
        Node(package="robokin_ros", executable="sim_robot", name="sim_robot", output="screen",
             parameters=[{"robot": robot}], condition=IfCondition(LaunchConfiguration("sim"))),
    ]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("robot", default_value="panda", description="embedded robot (panda, ur5)"),
        DeclareLaunchArgument("sim", default_value="false", description="start sim_robot as the driver"),
        DeclareLaunchArgument("params_file", default_value="",
                              description="path_ik_node parameters (default: config/<robot>_path_ik.yaml)"),
        OpaqueFunction(function=_nodes),
    ])
