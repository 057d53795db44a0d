"""Twist servo next to a robot driver: servo_node (+ sim_robot, robot_state_publisher and RViz on request).

    ros2 launch robokin_ros servo.launch.py robot:=panda sim:=true rviz:=true
    ros2 launch robokin_ros servo.launch.py robot:=ur5 params_file:=/path/to/my_servo.yaml
"""
from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription
from robokin_ros.core.embedded import EMBEDDED_ROBOTS, embedded_robot


def robot_description_nodes(context):
    """robot_state_publisher for an embedded robot, so RViz can draw it from /joint_states."""
    robot = LaunchConfiguration("robot").perform(context)
    if robot not in EMBEDDED_ROBOTS:
        return []   # a custom robot: start your own robot_state_publisher with its URDF
    _, urdf_path = embedded_robot(robot)
    return [Node(package="robot_state_publisher", executable="robot_state_publisher",
                 parameters=[{"robot_description": Path(urdf_path).read_text()}],
                 condition=IfCondition(LaunchConfiguration("rviz")))]


def generate_launch_description():
    share = Path(get_package_share_directory("robokin_ros"))
    robot = LaunchConfiguration("robot")
    params_file = LaunchConfiguration("params_file")
    return LaunchDescription([
        DeclareLaunchArgument("robot", default_value="panda",
                              description=f"embedded robot {sorted(EMBEDDED_ROBOTS)} or a URDF path"),
        DeclareLaunchArgument("params_file", default_value=str(share / "config" / "panda_servo.yaml"),
                              description="servo parameters (config/<robot>_servo.yaml)"),
        DeclareLaunchArgument("sim", default_value="true", description="start sim_robot as the driver"),
        DeclareLaunchArgument("rviz", default_value="false", description="start robot_state_publisher + RViz"),
        Node(package="robokin_ros", executable="sim_robot", name="sim_robot", output="screen",
             parameters=[{"robot": robot}], condition=IfCondition(LaunchConfiguration("sim"))),
        Node(package="robokin_ros", executable="servo_node", name="servo_node", output="screen",
             parameters=[params_file, {"robot": robot}]),
        OpaqueFunction(function=robot_description_nodes),
        Node(package="rviz2", executable="rviz2", name="rviz2",
             arguments=["-d", str(share / "config" / "servo.rviz")],
             condition=IfCondition(LaunchConfiguration("rviz"))),
    ])
