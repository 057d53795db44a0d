"""Cartesian path IK: path_ik_node (+ sim_robot standing in for the robot driver on request).

    ros2 launch robokin_ros path_ik.launch.py preset:=ur_robot_driver        # next to ur_robot_driver
    ros2 launch robokin_ros path_ik.launch.py robot:=panda sim:=true
    ros2 launch robokin_ros path_ik.launch.py robot:=ur5 params_file:=/path/to/my_path_ik.yaml
    ros2 launch robokin_ros path_ik.launch.py robot:=/path/to/arm.urdf base_frame:=base_link tip_frame:=tool0

robot:="" (the default) takes the model from the driver's /robot_description. Parameters, later wins:
config/<robot>_path_ik.yaml (panda, ur5; else config/generic_path_ik.yaml), config/<preset>_path_ik.yaml,
params_file:=, then robot / frames / controller_name (-> its follow_joint_trajectory action) / command_topic;
namespace:= moves every absolute name into the namespace. Every node gets use_sim_time.
"""
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription
from robokin_ros.launch_support import arm_nodes, robot_arguments


def _nodes(context):
    nodes, _ = arm_nodes(Node, lambda name: LaunchConfiguration(name).perform(context), "path_ik_node", "path_ik")
    return nodes


def generate_launch_description():
    return LaunchDescription([
        *(DeclareLaunchArgument(name, default_value=default, description=text)
          for name, default, text in robot_arguments("path_ik")),
        OpaqueFunction(function=_nodes),
    ])
