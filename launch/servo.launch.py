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
from robokin_ros.core.embedded import EMBEDDED_ROBOTS, default_base_frame, urdf_xml
from robokin_ros.paths import config_file, node_params_file

TRUE = ("true", "1", "yes", "on")


def _arg(context, name: str) -> str:
    return LaunchConfiguration(name).perform(context)


def robot_parameters(context) -> dict:
    """The robot-source parameters every robokin node shares, plus use_sim_time."""
    params = {"robot": _arg(context, "robot"), "use_sim_time": _arg(context, "use_sim_time").lower() in TRUE}
    params.update({key: _arg(context, key) for key in ("base_frame", "tip_frame") if _arg(context, key)})
    return params


def _nodes(context):
    robot = _arg(context, "robot")
    shared = robot_parameters(context)
    params_file = _arg(context, "params_file") or str(node_params_file(robot, "servo"))
    nodes = [Node(package="robokin_ros", executable="servo_node", name="servo_node", output="screen",
                  parameters=[params_file, shared])]
    if _arg(context, "sim").lower() in TRUE:
        nodes.append(Node(package="robokin_ros", executable="sim_robot", name="sim_robot", output="screen",
                          parameters=[shared]))
    if _arg(context, "rviz").lower() in TRUE:
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
        DeclareLaunchArgument("robot", default_value="panda",
                              description=f"embedded robot {sorted(EMBEDDED_ROBOTS)} or a URDF path"),
        DeclareLaunchArgument("base_frame", default_value="", description="chain base (default: the robot's)"),
        DeclareLaunchArgument("tip_frame", default_value="", description="chain tip (default: the robot's)"),
        DeclareLaunchArgument("params_file", default_value="",
                              description="servo parameters (default: config/<robot>_servo.yaml, else "
                                          "config/generic_servo.yaml)"),
        DeclareLaunchArgument("sim", default_value="true", description="start sim_robot as the driver"),
        DeclareLaunchArgument("rviz", default_value="false", description="start robot_state_publisher + RViz"),
        DeclareLaunchArgument("use_sim_time", default_value="false", description="every node follows /clock"),
        OpaqueFunction(function=_nodes),
    ])
