"""Jerk limits from MoveIt's joint limit parameters (robokin_ros/ros/joint_limits_params.py), read by a bare rclpy
node as a MoveIt config hands them over: a parameter file whose `robot_description_planning.joint_limits` section is
a joint_limits.yaml (what moveit_configs_utils passes), on the distro of the venv running the test."""
import math

import pytest
import rclpy
from rclpy.context import Context
from rclpy.node import Node
from rclpy.parameter import Parameter

from robokin_ros.core.errors import ConfigError
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.ros.joint_limits_params import (
    jerk_parameter_names,
    merged_max_joint_jerk,
    planning_jerk_limits,
    with_planning_jerk,
)

JOINTS = [f"panda_joint{i}" for i in range(1, 8)]
FRANKA_JERK = [7500.0, 3750.0, 5000.0, 6250.0, 7500.0, 10000.0, 10000.0]   # frankaemika control_parameters


def joint_limits_yaml(entries: dict[str, dict]) -> str:
    """A ROS parameter file with a MoveIt joint_limits section (other limits next to jerk, as real files have)."""
    lines = ["/**:", "  ros__parameters:", "    robot_description_planning:", "      joint_limits:"]
    for joint, fields in entries.items():
        lines.append(f"        {joint}:")
        lines += ["          has_velocity_limits: true", "          max_velocity: 2.175"]
        lines += [f"          {key}: {value}" for key, value in fields.items()]
    return "\n".join(lines) + "\n"


@pytest.fixture
def node_from(tmp_path):
    """node_from(yaml_text, automatic=False) -> a bare Node in its own context, given the file as `--params-file`
    (automatic: created with automatically_declare_parameters_from_overrides, as some MoveIt nodes are)."""
    made = []

    def make(text: str, automatic: bool = False) -> Node:
        path = tmp_path / f"limits{len(made)}.yaml"
        path.write_text(text)
        context = Context()
        rclpy.init(context=context, args=["--ros-args", "--params-file", str(path)])
        node = Node("limits_reader", context=context,
                    automatically_declare_parameters_from_overrides=automatic)
        made.append((node, context))
        return node

    yield make
    for node, context in made:
        node.destroy_node()
        rclpy.try_shutdown(context=context)


@pytest.mark.parametrize("automatic", [False, True])
def test_franka_figures_in_a_joint_limits_file_become_the_jerk_limits(node_from, automatic):
    text = joint_limits_yaml({j: {"has_acceleration_limits": "true", "max_acceleration": 7.5,
                                  "has_jerk_limits": "true", "max_jerk": jerk}
                              for j, jerk in zip(JOINTS, FRANKA_JERK)})
    node = node_from(text, automatic)
    assert planning_jerk_limits(node, JOINTS) == tuple(FRANKA_JERK)
    assert node.has_parameter(jerk_parameter_names("panda_joint3")[1])


def test_moveit_reads_max_jerk_only_where_has_jerk_limits_is_true(node_from):
    """As MoveIt's RobotModelLoader: max_jerk without has_jerk_limits: true is no limit; no joint limited is None
    (nothing changes); integers are numbers."""
    node = node_from(joint_limits_yaml({"panda_joint1": {"has_jerk_limits": "false", "max_jerk": 300.0},
                                        "panda_joint2": {"max_jerk": 300.0}}))
    assert planning_jerk_limits(node, JOINTS) is None
    node = node_from(joint_limits_yaml({"panda_joint2": {"has_jerk_limits": "true", "max_jerk": 300}}))
    limits = planning_jerk_limits(node, JOINTS)
    assert limits[1] == 300.0 and all(math.isinf(j) for k, j in enumerate(limits) if k != 1)


def test_no_moveit_parameters_leave_the_config_as_it_is(node_from):
    node = node_from("/**:\n  ros__parameters:\n    robot: panda\n")
    config = ServoConfig()
    assert with_planning_jerk(config, node, JOINTS) is config


@pytest.mark.parametrize("value, words", [
    ("-300.0", "must be a finite jerk limit above 0"),
    (".nan", "must be a finite jerk limit above 0"),
    (".inf", "must be a finite jerk limit above 0"),
    ("0.0", "must be a finite jerk limit above 0"),
    ("'fast'", "must be a number"),
    ("true", "must be a number"),
    ("5.0e+7", "is above 1e+06 rad/s^3"),
])
def test_a_wrong_max_jerk_is_an_error_naming_the_parameter(node_from, value, words):
    node = node_from(joint_limits_yaml({"panda_joint4": {"has_jerk_limits": "true", "max_jerk": value}}))
    with pytest.raises(ConfigError) as error:
        planning_jerk_limits(node, JOINTS)
    assert "robot_description_planning.joint_limits.panda_joint4.max_jerk=" in str(error.value)
    assert words in str(error.value)
    assert "limits_reader" in str(error.value)


def test_every_wrong_parameter_is_named_at_once(node_from):
    node = node_from(joint_limits_yaml({"panda_joint1": {"has_jerk_limits": "'yes'"},
                                        "panda_joint2": {"has_jerk_limits": "true"},
                                        "panda_joint3": {"has_jerk_limits": "true", "max_jerk": -1.0}}))
    with pytest.raises(ConfigError) as error:
        planning_jerk_limits(node, JOINTS)
    problems = error.value.problems
    assert len(problems) == 3
    assert "panda_joint1.has_jerk_limits='yes' must be true or false" in problems[0]
    assert "panda_joint2.has_jerk_limits is true but" in problems[1]
    assert "panda_joint2.max_jerk is not set" in problems[1]
    assert "panda_joint3.max_jerk=-1.0" in problems[2]


def test_the_nodes_own_max_joint_jerk_wins_then_moveits_then_the_default(node_from):
    text = joint_limits_yaml({j: {"has_jerk_limits": "true", "max_jerk": jerk}
                              for j, jerk in zip(JOINTS[:6], FRANKA_JERK)})       # panda_joint7 without one
    node = node_from(text)
    own = ServoConfig(max_joint_jerk=tuple([1000.0] * 7))
    assert with_planning_jerk(own, node, JOINTS) is own
    with pytest.raises(ConfigError, match="but not for panda_joint7"):
        with_planning_jerk(ServoConfig(), node, JOINTS)
    merged = with_planning_jerk(PathConfig(default_joint_jerk=2000.0), node, JOINTS)
    assert merged.max_joint_jerk == tuple(FRANKA_JERK[:6]) + (2000.0,)
    assert merged.default_joint_jerk == 2000.0
    assert merged_max_joint_jerk((), None, 0.0, JOINTS) == ()
    assert merged_max_joint_jerk((5.0,) * 7, tuple(FRANKA_JERK), 0.0, JOINTS) == (5.0,) * 7


def test_constructor_overrides_are_read_too(node_from):
    """Parameters given in code (Node parameter_overrides), as a test rig or a composed node gives them."""
    context = Context()
    rclpy.init(context=context)
    has_name, max_name = jerk_parameter_names("j2")
    node = Node("limits_code", context=context, parameter_overrides=[Parameter(has_name, value=True),
                                                                     Parameter(max_name, value=450.0)])
    try:
        assert planning_jerk_limits(node, ["j1", "j2"]) == (math.inf, 450.0)
    finally:
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def test_a_node_booting_takes_moveit_jerk_limits_unless_its_own_are_set(node_from):
    """ros/runtime.py's `boot`, which every robokin node starts from, applies the rule to the config it returns."""
    from robokin_ros.ros.runtime import boot
    entries = {j: {"has_jerk_limits": "true", "max_jerk": jerk} for j, jerk in zip(JOINTS, FRANKA_JERK)}
    text = joint_limits_yaml(entries).replace("  ros__parameters:\n", "  ros__parameters:\n    robot: panda\n")
    servo = boot(node_from(text), ServoConfig).config
    assert servo.max_joint_jerk == tuple(FRANKA_JERK)
    own = text.replace("    robot: panda\n", "    robot: panda\n    max_joint_jerk: [100.0, 100.0, 100.0, 100.0, "
                       "100.0, 100.0, 100.0]\n")
    assert boot(node_from(own), PathConfig).config.max_joint_jerk == (100.0,) * 7
