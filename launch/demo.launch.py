"""The README demo in a ROS 2 install: sim_robot + servo_node + path_ik_node + capability_node + RViz,
driven by the scripted twist sequence and path goal of `robokin_demo --attach`; the launch ends with the demo.

    ros2 launch robokin_ros demo.launch.py            # rviz:=false for a headless run
"""
from launch.actions import DeclareLaunchArgument, EmitEvent, GroupAction, IncludeLaunchDescription, OpaqueFunction
from launch.actions import RegisterEventHandler
from launch.event_handlers import OnProcessExit
from launch.events import Shutdown
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription
from robokin_ros.core.embedded import default_base_frame, urdf_xml
from robokin_ros.launch_support import is_true
from robokin_ros.paths import config_file, node_params_file, share_dir

ROBOT = "panda"         # the robot robokin_demo drives


def _nodes(context):
    use_sim_time = is_true(LaunchConfiguration("use_sim_time").perform(context))
    sim_time = {"use_sim_time": use_sim_time}
    nodes = [
        Node(package="robokin_ros", executable="path_ik_node", name="path_ik_node", output="screen",
             parameters=[str(node_params_file(ROBOT, "path_ik")), sim_time]),
        Node(package="robokin_ros", executable="capability_node", name="capability_node", output="screen",
             parameters=[str(config_file("capability.yaml")), sim_time]),
    ]
    if is_true(LaunchConfiguration("rviz").perform(context)):
        nodes += [
            Node(package="robot_state_publisher", executable="robot_state_publisher", output="screen",
                 parameters=[{"robot_description": urdf_xml(ROBOT)}, sim_time]),
            Node(package="rviz2", executable="rviz2", name="rviz2",
                 arguments=["-d", str(config_file("demo.rviz")), "-f", default_base_frame(ROBOT)],
                 parameters=[sim_time]),
        ]
    return nodes


def generate_launch_description():
    demo = Node(package="robokin_ros", executable="robokin_demo", name="robokin_demo", output="screen",
                arguments=["--attach"], parameters=[{"use_sim_time": LaunchConfiguration("use_sim_time")}])
    return LaunchDescription([
        DeclareLaunchArgument("rviz", default_value="true", description="start robot_state_publisher + RViz"),
        DeclareLaunchArgument("use_sim_time", default_value="false", description="every node follows /clock"),
        # scoped: an included file's launch arguments would otherwise overwrite this file's (rviz among them)
        GroupAction([IncludeLaunchDescription(
            PythonLaunchDescriptionSource(str(share_dir() / "launch" / "servo.launch.py")),
            launch_arguments={"robot": ROBOT, "sim": "true", "rviz": "false",
                              "use_sim_time": LaunchConfiguration("use_sim_time")}.items())]),
        OpaqueFunction(function=_nodes),
        demo,
        RegisterEventHandler(OnProcessExit(target_action=demo, on_exit=[
            EmitEvent(event=Shutdown(reason="robokin_demo finished"))])),
    ])
