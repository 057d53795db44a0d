"""Twist servo next to a robot driver: servo_node (+ sim_robot, robot_state_publisher and RViz on request).

    ros2 launch robokin_ros servo.launch.py robot:=panda sim:=true rviz:=true
    ros2 launch robokin_ros servo.launch.py robot:=ur5 sim:=true rviz:=true
    ros2 launch robokin_ros servo.launch.py robot:=/path/to/arm.urdf base_frame:=base_link tip_frame:=tool0

Parameters: config/<robot>_servo.yaml for a robot that has one (panda, ur5), else config/generic_servo.yaml
(no joint-specific values); params_file:= overrides. Every node gets use_sim_time; RViz's fixed frame is the
robot's base frame.
"""
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription
from robokin_ros.core.embedded import default_base_frame, urdf_xml
from robokin_ros.launch_support import arm_nodes, is_true, robot_arguments
from robokin_ros.paths import config_file


def _nodes(context):
    def _arg(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    robot = _arg("robot")
    nodes, shared = arm_nodes(Node, _arg, "servo_node", "servo")
    if is_true(_arg("rviz")):
        base_frame = shared.get("base_frame") or default_base_frame(robot)
        nodes += [
            Node(package="robot_state_publisher", executable="robot_state_publisher", output="screen",
                 parameters=[{"robot_description": urdf_xml(robot), "use_sim_time": shared["use_sim_time"]}]),
            Node(package="rviz2", executable="rviz2", name="rviz2",
                 arguments=["-d", str(config_file("servo.rviz")), *(["-f", base_frame] if base_frame else [])],
                 parameters=[{"use_sim_time": shared["use_sim_time"]}]),
        ]
    return nodes


def generate_launch_description():
    return LaunchDescription([
        *(DeclareLaunchArgument(name, default_value=default, description=text)
          for name, default, text in robot_arguments("servo", sim_default="true")),
        DeclareLaunchArgument("rviz", default_value="false", description="start robot_state_publisher + RViz"),
        OpaqueFunction(function=_nodes),
    ])
