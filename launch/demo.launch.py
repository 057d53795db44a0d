"""The README demo in a ROS 2 install: sim_robot + servo_node + path_ik_node + capability_node + RViz,
driven by the scripted twist sequence and path goal of `robokin_demo --attach`; the launch ends with the demo.

    ros2 launch robokin_ros demo.launch.py            # rviz:=false for a headless run, namespace:=demo1
"""
from launch.actions import DeclareLaunchArgument, EmitEvent, GroupAction, IncludeLaunchDescription, OpaqueFunction
from launch.actions import RegisterEventHandler
from launch.event_handlers import OnProcessExit
from launch.events import Shutdown
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription
from robokin_ros.core.embedded import default_base_frame
from robokin_ros.launch_support import (
    arm_nodes,
    is_true,
    namespace_of,
    node_parameters,
    robokin_node,
    viewer_arguments,
    viewer_nodes,
)
from robokin_ros.share_files import config_file, share_dir

ROBOT = "panda"         # the robot robokin_demo drives
# what the demo's nodes get whatever the command line says (the demo drives this exact set-up)
FIXED = {"robot": ROBOT, "xacro_args": "", "base_frame": "", "tip_frame": "", "preset": "", "params_file": "",
         "controller_name": "", "command_topic": "", "sim": "false"}
# the absolute names robokin_demo uses (robokin_ros/demo/), remapped into namespace:= (a test keeps this complete)
DEMO_NAMES = ("/joint_states", "/joint_trajectory_controller/joint_trajectory", "/sim_robot/rejected",
              "/servo_node/delta_twist_cmds", "/servo_node/delta_joint_cmds", "/servo_node/pose_target_cmds",
              "/servo_node/wrench", "/servo_node/enable_hand_guiding", "/servo_node/scene_objects",
              "/servo_node/robokin_status", "/path_ik_node/execute_cartesian_path",
              "/servo_node/set_parameters")     # the two-arm phase's mode switch (that phase never runs --attach)


def _nodes(context):
    def _arg(name: str) -> str:
        return FIXED[name] if name in FIXED else LaunchConfiguration(name).perform(context)

    use_sim_time = is_true(_arg("use_sim_time"))
    nodes, _ = arm_nodes(Node, _arg, "path_ik_node", "path_ik")
    capability = node_parameters(_arg, "capability", "capability_node", [str(config_file("capability.yaml"))])
    namespace = namespace_of(_arg)
    demo = Node(package="robokin_ros", executable="robokin_demo", name="robokin_demo", output="screen",
                arguments=["--attach"], parameters=[{"use_sim_time": use_sim_time}],
                remappings=[(name, f"{namespace}{name}") for name in DEMO_NAMES] if namespace else [],
                **({"namespace": namespace} if namespace else {}))
    return [*nodes, robokin_node(Node, _arg, "capability_node", capability),
            *viewer_nodes(Node, _arg, default_base_frame(ROBOT), "demo.rviz", use_sim_time), demo,
            RegisterEventHandler(OnProcessExit(target_action=demo, on_exit=[
                EmitEvent(event=Shutdown(reason="robokin_demo finished"))]))]


def generate_launch_description():
    return LaunchDescription([
        *(DeclareLaunchArgument(name, default_value=default, description=text)
          for name, default, text in viewer_arguments("true")),
        DeclareLaunchArgument("use_sim_time", default_value="false", description="every node follows /clock"),
        DeclareLaunchArgument("namespace", default_value="", description="namespace of every node"),
        # scoped: an included file's launch arguments would otherwise overwrite this file's (rviz among them)
        GroupAction([IncludeLaunchDescription(
            PythonLaunchDescriptionSource(str(share_dir() / "launch" / "servo.launch.py")),
            launch_arguments={"robot": ROBOT, "sim": "true", "rviz": "false",
                              "use_sim_time": LaunchConfiguration("use_sim_time"),
                              "namespace": LaunchConfiguration("namespace")}.items())]),
        OpaqueFunction(function=_nodes),
    ])
