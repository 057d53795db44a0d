"""The README demo in a ROS 2 install: sim_robot + servo_node + path_ik_node + capability_node + RViz,
driven by the scripted twist sequence and path goal of `robokin_demo --attach`.

    ros2 launch robokin_ros demo.launch.py            # rviz:=false for a headless run
"""
from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription
from launch.conditions import IfCondition
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription


def generate_launch_description():
    share = Path(get_package_share_directory("robokin_ros"))
    config = share / "config"
    return LaunchDescription([
        DeclareLaunchArgument("rviz", default_value="true", description="start robot_state_publisher + RViz"),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(str(share / "launch" / "servo.launch.py")),
            launch_arguments={"robot": "panda", "sim": "true", "rviz": "false",
                              "params_file": str(config / "panda_servo.yaml")}.items()),
        Node(package="robokin_ros", executable="path_ik_node", name="path_ik_node", output="screen",
             parameters=[str(config / "panda_path_ik.yaml")]),
        Node(package="robokin_ros", executable="capability_node", name="capability_node", output="screen",
             parameters=[str(config / "capability.yaml")]),
        Node(package="robot_state_publisher", executable="robot_state_publisher",
             parameters=[{"robot_description": Path(_panda_urdf()).read_text()}],
             condition=IfCondition(LaunchConfiguration("rviz"))),
        Node(package="rviz2", executable="rviz2", name="rviz2", arguments=["-d", str(config / "demo.rviz")],
             condition=IfCondition(LaunchConfiguration("rviz"))),
        Node(package="robokin_ros", executable="robokin_demo", name="robokin_demo", output="screen",
             arguments=["--attach"]),
    ])


def _panda_urdf():
    from robokin_ros.core.embedded import embedded_robot
    return embedded_robot("panda")[1]
