"""A MoveIt Servo parameter file loads into servo_node without silently dropping anything.

test/data/moveit_servo_panda.yaml is a Jazzy MoveIt Servo file (everything under `moveit_servo.`): the settings
robokin has are in force under robokin's names (pose_tracking.linear_tolerance 0.005, not the default 0.001), the
ones it has not are named in one warning at start-up, and halt_all_joints_in_joint_mode is honoured.
"""
import re
import time
from pathlib import Path

import numpy as np
import pytest
from control_msgs.msg import JointJog
from moveit_msgs.msg import ServoStatus
from rclpy.node import Node
from rclpy.parameter import Parameter, parameter_dict_from_yaml_file, parameter_value_to_python
from rclpy.parameter_client import AsyncParameterClient
from ros_helpers import spin_for, spin_until
from sensor_msgs.msg import JointState

from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.ros.moveit_servo_params import (
    JAZZY_PARAMETERS,
    UNSUPPORTED,
    unsupported_moveit_parameters,
    warn_unsupported,
)
from robokin_ros.ros.params import declare_config

REPO = Path(__file__).resolve().parents[2]
PARAMS_FILE = REPO / "test" / "data" / "moveit_servo_panda.yaml"
DOC = REPO / "docs" / "moveit_servo_parameters.md"
UNSUPPORTED_IN_FILE = sorted(f"moveit_servo.{name}" for name in (
    "move_group_name", "thread_priority", "publish_joint_accelerations", "use_smoothing",
    "smoothing_filter_plugin_name", "is_primary_planning_scene_monitor", "check_octomap_collisions",
    "self_collision_proximity_threshold", "scene_collision_proximity_threshold"))
WARNING = re.compile(r"MoveIt Servo parameters not supported by robokin, ignored: (.*) \(docs/")


def _file_parameters() -> dict:
    """{name: rcl_interfaces Parameter} of the file's `/**` section."""
    return parameter_dict_from_yaml_file(str(PARAMS_FILE), use_wildcard=True)


# ---- the table ---------------------------------------------------------------------------------------------
def test_every_jazzy_parameter_is_either_read_or_named_unsupported():
    read = set(ServoConfig.moveit_names.values())
    for name in JAZZY_PARAMETERS:
        assert (name in read) != (name in UNSUPPORTED), name
    assert len(set(JAZZY_PARAMETERS)) == len(JAZZY_PARAMETERS) == 40
    assert len(read & set(JAZZY_PARAMETERS)) == 28            # as README says: 27 same name, 1 alias, 12 unsupported


def test_the_doc_lists_every_jazzy_parameter_with_the_status_the_code_gives_it():
    rows = dict(re.findall(r"^\| `([a-z_.]+)` \| (same name|alias|unsupported) \|", DOC.read_text(), re.M))
    assert set(JAZZY_PARAMETERS) <= set(rows), set(JAZZY_PARAMETERS) - set(rows)
    for name in JAZZY_PARAMETERS:
        robokin = [k for k, v in ServoConfig.moveit_names.items() if v == name]
        expected = "unsupported" if not robokin else "same name" if robokin == [name] else "alias"
        assert rows[name] == expected, (name, rows[name])


def test_the_unsupported_names_are_picked_from_what_a_node_was_given():
    given = ["moveit_servo.use_smoothing", "moveit_servo.typo_of_mine", "use_smoothing", "joint_limit_margin",
             "not_moveit_at_all"]
    assert unsupported_moveit_parameters(given) == ["joint_limit_margin", "moveit_servo.typo_of_mine",
                                                    "moveit_servo.use_smoothing", "use_smoothing"]


def test_in_process_the_file_is_read_and_the_unsupported_names_come_back(ros):
    context, executor = ros
    overrides = [Parameter(name, value=parameter_value_to_python(msg.value))
                 for name, msg in _file_parameters().items()]
    node = Node("moveit_file", context=context, parameter_overrides=overrides)
    executor.add_node(node)
    config = declare_config(node, ServoConfig)
    assert (config.pose_tracking.linear_tolerance, config.pose_tracking.angular_tolerance) == (0.005, 0.02)
    assert config.halt_all_joints_in_joint_mode and not config.halt_all_joints_in_cartesian_mode
    assert config.joint_limit_margins == (0.1,) and config.publish_period == 0.01
    assert warn_unsupported(node) == UNSUPPORTED_IN_FILE


# ---- the servo_node process --------------------------------------------------------------------------------
def _get(executor, client, names):
    future = client.get_parameters(names)
    assert spin_until(executor, future.done, 15.0), "get_parameters timed out"
    return [parameter_value_to_python(v) for v in future.result().values]


def test_servo_node_warns_once_reads_the_file_and_halts_all_jogged_joints(ros, launch):
    servo = launch("servo_node", "--ros-args", "--params-file", str(PARAMS_FILE))
    sim = launch("sim_robot", "--ros-args", "--params-file", "config/sim_robot.yaml")
    context, executor = ros
    node = Node("moveit_file_client", context=context)
    executor.add_node(node)
    states, statuses = [], []
    node.create_subscription(JointState, "/joint_states", lambda m: states.append(np.array(m.position)), 50)
    node.create_subscription(ServoStatus, "/servo_node/status", statuses.append, 50)
    jogs = node.create_publisher(JointJog, "/servo_node/delta_joint_cmds", 10)
    params = AsyncParameterClient(node, "servo_node")
    assert params.wait_for_services(30.0), servo.output
    assert spin_until(executor, lambda: jogs.get_subscription_count() > 0 and len(states) > 5, 30.0), \
        f"servo/sim not discovered:\n{servo.output}\n{sim.output}"

    # one warning, naming exactly the unsupported parameters of the file
    warnings = WARNING.findall(servo.output)
    assert len(warnings) == 1, servo.output
    assert warnings[0].split(", ") == UNSUPPORTED_IN_FILE

    # the values in force, under robokin's names and MoveIt's
    names = ["pose_tracking.linear_tolerance", "moveit_servo.pose_tracking.linear_tolerance",
             "pose_tracking.angular_tolerance", "halt_all_joints_in_joint_mode", "halt_all_joints_in_cartesian_mode",
             "joint_limit_margins"]
    assert _get(executor, params, names) == [0.005, 0.005, 0.02, True, False, [0.1]]

    # jog joints 5 and 7 (2 rad/s) toward joint 7's upper limit: halt_all_joints_in_joint_mode stops both there
    panda = RobotModel.from_name("panda")
    stop_at = panda.limits.upper[6] - 0.1
    start = states[-1].copy()

    def jog() -> None:
        msg = JointJog()
        msg.header.stamp = node.get_clock().now().to_msg()
        msg.joint_names = ["panda_joint5", "panda_joint7"]
        msg.velocities = [0.5, 2.0]
        jogs.publish(msg)

    end = time.monotonic() + 3.0                      # ~1.2 s to the margin, then 1.8 s more of pushing
    give_up = end + 7.0                               # a loaded machine delays the servo: push until it says halted
    halted_at = None
    while time.monotonic() < end or (time.monotonic() < give_up and statuses
                                     and "all jogged joints halted" not in statuses[-1].message):
        jog()
        spin_for(executor, 0.01)
        if halted_at is None and states[-1][6] > stop_at - 1e-3:
            halted_at = states[-1].copy()
    final = states[-1]
    assert halted_at is not None, f"joint 7 never reached its margin: {final}\n{servo.output}"
    # (sim_robot interpolates the trajectory windows as a JTC does: a few 1e-5 rad of overshoot, 0.1 rad to spare)
    assert final[6] == pytest.approx(stop_at, abs=2e-3) and max(q[6] for q in states) <= stop_at + 1e-3
    assert 0.3 < final[4] - start[4] < 0.8, "joint 5 must move, then stop with joint 7"
    assert final[4] == pytest.approx(halted_at[4], abs=0.02), "joint 5 kept moving after joint 7 stopped"
    last = statuses[-1]
    assert last.code == ServoStatus.JOINT_BOUND and "panda_joint7" in last.message, last
    assert "all jogged joints halted" in last.message
