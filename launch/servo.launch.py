"""Twist servo next to a robot driver: servo_node (+ sim_robot, RViz and a robot_state_publisher on request).

    ros2 launch robokin_ros servo.launch.py preset:=ur_robot_driver          # next to ur_robot_driver
    ros2 launch robokin_ros servo.launch.py robot:=panda controller_name:=panda_arm_controller
    ros2 launch robokin_ros servo.launch.py robot:=panda sim:=true rviz:=true
    ros2 launch robokin_ros servo.launch.py robot:=/path/to/arm.urdf base_frame:=base_link tip_frame:=tool0

robot:="" (the default) takes the model from the driver's /robot_description. Parameters, later wins:
config/<robot>_servo.yaml (panda, ur5; else config/generic_servo.yaml), config/<preset>_servo.yaml, params_file:=,
then robot / frames / controller_name / command_topic; namespace:= moves every absolute name into the namespace.
Every node gets use_sim_time; RViz's fixed frame is the chain's base frame.
A robot with several tips (robot:=dual_panda) takes config/dual_panda_servo.yaml; with sim:=true the sim starts
where that file's sim_robot section says (the hands around a box), the launch's own settings still winning.
"""
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription
from robokin_ros.core.embedded import default_base_frame
from robokin_ros.ros.launch_sim_start import with_sim_section
from robokin_ros.launch_support import arm_nodes, parameter_files, robot_arguments, viewer_arguments, viewer_nodes


def _nodes(context):
    def _arg(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    nodes, params = arm_nodes(with_sim_section(Node, parameter_files(_arg, "servo")), _arg, "servo_node", "servo")
    base_frame = params.get("base_frame") or default_base_frame(_arg("robot"))
    return nodes + viewer_nodes(Node, _arg, base_frame, "servo.rviz", params["use_sim_time"])


def generate_launch_description():
    return LaunchDescription([
        *(DeclareLaunchArgument(name, default_value=default, description=text)
          for name, default, text in [*robot_arguments("servo"), *viewer_arguments("false")]),
        OpaqueFunction(function=_nodes),
    ])
