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
from robokin_ros.launch_support import is_true, robot_arguments, robot_parameters
from robokin_ros.paths import node_params_file


def _nodes(context):
    def _arg(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    robot = _arg("robot")
    shared = robot_parameters(_arg)
    params_file = _arg("params_file") or str(node_params_file(robot, "path_ik"))
    nodes = [Node(package="robokin_ros", executable="path_ik_node", name="path_ik_node", output="screen",
                  parameters=[params_file, shared])]
    if is_true(_arg("sim")):
        nodes.append(Node(package="robokin_ros", executable="sim_robot", name="sim_robot", output="screen",
                          parameters=[shared]))
    return nodes


def generate_launch_description():
    return LaunchDescription([
        *(DeclareLaunchArgument(name, default_value=default, description=text)
          for name, default, text in robot_arguments("path_ik", sim_default="false")),
        OpaqueFunction(function=_nodes),
    ])
