"""declare_config / watch_config: the schema reaches ROS, every bad value is reported, updates are all-or-nothing."""
import pytest
from rcl_interfaces.msg import ParameterType
from rclpy.node import Node
from rclpy.parameter import Parameter

from robokin_ros.core.errors import ConfigError, RobokinError
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.sim.config import SimRobotConfig
from robokin_ros.ros.params import declare_config, watch_config


def _node(ros, name="params_test", **overrides):
    context, executor = ros
    node = Node(name, context=context,
                parameter_overrides=[Parameter(k, value=v) for k, v in overrides.items()])
    executor.add_node(node)
    return node


def test_descriptors_carry_doc_unit_bounds_and_read_only(ros):
    node = _node(ros)
    declare_config(node, ServoConfig)
    scale = node.describe_parameter("scale.linear")
    assert "[m/s]" in scale.description and scale.type == ParameterType.PARAMETER_DOUBLE
    assert (scale.floating_point_range[0].from_value, scale.floating_point_range[0].to_value) == (0.0, 10.0)
    assert node.describe_parameter("publish_period").read_only
    assert not node.describe_parameter("scale.linear").read_only
    halt = node.describe_parameter("num_outgoing_halt_msgs_to_publish")
    assert halt.type == ParameterType.PARAMETER_INTEGER and halt.integer_range[0].to_value == 100000
    assert "one of ['unitless', 'speed_units']" in node.describe_parameter("command_in_type").description
    assert node.describe_parameter("max_joint_acceleration").dynamic_typing


def test_defaults_and_lists_are_read_into_the_dataclass(ros):
    node = _node(ros, **{"scale.linear": 0.25, "max_joint_acceleration": [15, 7, 10, 12, 15, 20, 20],
                         "home_positions": [0.0, 0.1]})
    config = declare_config(node, ServoConfig)
    assert config.scale.linear == 0.25
    assert config.max_joint_acceleration == (15.0, 7.0, 10.0, 12.0, 15.0, 20.0, 20.0)
    assert all(isinstance(v, float) for v in config.max_joint_acceleration)
    assert config.home_positions == (0.0, 0.1)
    assert config.max_joint_velocity == ()


def test_overrides_argument_replaces_defaults_but_not_user_values(ros):
    node = _node(ros, tf_rate=20.0)
    config = declare_config(node, SimRobotConfig, overrides={"rate": 250.0, "tf_rate": 10.0})
    assert (config.rate, config.tf_rate) == (250.0, 20.0)
    with pytest.raises(ConfigError, match="unknown parameter 'rat'"):
        declare_config(_node(ros, "other"), SimRobotConfig, overrides={"rat": 1.0})


def test_every_invalid_value_is_reported_at_once(ros):
    node = _node(ros, **{"scale.linear": 50.0, "publish_period": 1, "command_in_type": "furlongs",
                         "lower_singularity_threshold": 100.0, "max_joint_velocity": "fast"})
    with pytest.raises(ConfigError) as err:
        declare_config(node, ServoConfig)
    text = str(err.value)
    assert "scale.linear out of range" in text and "value: 50.0" in text
    assert "'publish_period' to '1' of type 'INTEGER'" in text
    assert "command_in_type='furlongs' must be one of ['unitless', 'speed_units']" in text
    assert "hard_stop_singularity_threshold=90.0 must exceed lower_singularity_threshold=100.0" in text
    assert "max_joint_velocity='fast' must be a list of numbers" in text
    assert len(err.value.problems) == 5


def test_runtime_update_is_validated_whole_and_applied_whole(ros):
    node = _node(ros)
    current = [declare_config(node, ServoConfig)]
    applied = []

    def apply(config):
        applied.append(config)
        current[0] = config

    watch_config(node, lambda: current[0], apply)
    ok = node.set_parameters_atomically([Parameter("scale.linear", value=0.3),
                                         Parameter("incoming_command_timeout", value=0.2)])
    assert ok.successful and (current[0].scale.linear, current[0].incoming_command_timeout) == (0.3, 0.2)
    # one good and one bad value: nothing changes, the reason names the bad rule
    bad = node.set_parameters_atomically([Parameter("scale.linear", value=0.9),
                                          Parameter("lower_singularity_threshold", value=95.0)])
    assert not bad.successful and "must exceed lower_singularity_threshold=95.0" in bad.reason
    assert current[0].scale.linear == 0.3 and node.get_parameter("scale.linear").value == 0.3
    wrong_type = node.set_parameters([Parameter("home_positions", value="home")])[0]
    assert not wrong_type.successful and "home_positions='home' must be a list of numbers" in wrong_type.reason
    read_only = node.set_parameters([Parameter("publish_period", value=0.01)])[0]
    assert not read_only.successful and "read-only" in read_only.reason
    assert len(applied) == 1


def test_apply_may_refuse_with_a_reason(ros):
    node = _node(ros)
    current = declare_config(node, ServoConfig)

    def refuse(_config):
        raise RobokinError("max_joint_velocity has 2 entries but the chain has 7 joints")

    watch_config(node, lambda: current, refuse)
    result = node.set_parameters([Parameter("max_joint_velocity", value=[1.0, 2.0])])[0]
    assert not result.successful and "2 entries but the chain has 7" in result.reason
    assert node.get_parameter("max_joint_velocity").value is None   # still the declared (empty) value


def test_unrelated_parameters_pass_through(ros):
    node = _node(ros)
    current = declare_config(node, ServoConfig)
    watch_config(node, lambda: current, lambda c: pytest.fail("must not be called"))
    node.declare_parameter("something_else", 1)
    assert node.set_parameters([Parameter("something_else", value=2)])[0].successful


def test_boolean_array_parameters(ros):
    """PathConfig.axis_mask is a ROS boolean array: read as a tuple of bools, numbers and strings refused."""
    from robokin_ros.core.path.config import PathConfig
    node = _node(ros, "bool_array_ok", axis_mask=[True, True, True, True, True, False])
    assert declare_config(node, PathConfig).axis_mask == (True, True, True, True, True, False)
    assert node.describe_parameter("axis_mask").type == ParameterType.PARAMETER_BOOL_ARRAY
    assert declare_config(_node(ros, "bool_array_default"), PathConfig).axis_mask == (True,) * 6
    for name, value, reason in (("bool_array_ints", [1, 1, 1, 1, 1, 1], "must be a list of booleans"),
                                ("bool_array_short", [True, True], "must be six booleans with at least one true"),
                                ("bool_array_none", [False] * 6, "must be six booleans with at least one true")):
        with pytest.raises(ConfigError) as err:
            declare_config(_node(ros, name, axis_mask=value), PathConfig)
        assert "axis_mask=" in str(err.value) and reason in str(err.value), (name, str(err.value))


# ---- MoveIt Servo's parameter names ----------------------------------------------------------------------
def test_moveit_names_are_accepted_bare_and_under_the_moveit_servo_namespace(ros):
    """A MoveIt Servo parameter file works unchanged: Jazzy's `moveit_servo.*` names and Humble/Iron's bare ones."""
    node = _node(ros, **{"moveit_servo.apply_twist_commands_about_ee_frame": False,
                         "moveit_servo.joint_limit_margins": [0.1],
                         "moveit_servo.scale.linear": 0.2,
                         "moveit_servo.publish_period": 0.01,
                         "moveit_servo.override_velocity_scaling_factor": 0.5,
                         "planning_frame": "panda_link0", "ee_frame": "panda_hand"})
    config = declare_config(node, ServoConfig)
    assert config.apply_twist_about_tool is False and config.joint_limit_margins == (0.1,)
    assert (config.scale.linear, config.publish_period, config.override_velocity_scaling_factor) == (0.2, 0.01, 0.5)
    assert (config.base_frame, config.tip_frame) == ("panda_link0", "panda_hand")
    # the robokin name reports the value that is in force, and the alias says what it stands for
    assert node.get_parameter("apply_twist_about_tool").value is False
    assert node.get_parameter("scale.linear").value == 0.2
    alias = node.describe_parameter("moveit_servo.scale.linear")
    assert alias.read_only and "scale.linear" in alias.description
    # names equal to robokin's are not repeated bare; every MoveIt name has its namespaced form
    for name, moveit in ServoConfig.moveit_names.items():
        assert node.has_parameter(f"moveit_servo.{moveit}"), moveit
        assert node.has_parameter(moveit) and node.has_parameter(name)


def test_moveit_names_match_the_config_schema():
    """Every robokin name of the mapping is a parameter of ServoConfig (a typo would silently alias nothing)."""
    from robokin_ros.core.schema import param_name, parameter_aliases, parameter_fields
    names = {param_name(f) for f in parameter_fields(ServoConfig)}
    assert set(ServoConfig.moveit_names) <= names, set(ServoConfig.moveit_names) - names
    aliases = parameter_aliases(ServoConfig)
    assert aliases["apply_twist_about_tool"] == ("apply_twist_commands_about_ee_frame",
                                                 "moveit_servo.apply_twist_commands_about_ee_frame")
    assert aliases["scale.linear"] == ("moveit_servo.scale.linear",)
    assert parameter_aliases(SimRobotConfig) == {}


def test_a_setting_given_under_two_names_with_different_values_is_refused(ros):
    cases = [({"apply_twist_about_tool": True, "apply_twist_commands_about_ee_frame": False},
              "apply_twist_about_tool=True and apply_twist_commands_about_ee_frame=False set the same parameter"),
             ({"scale.linear": 0.3, "moveit_servo.scale.linear": 0.2},
              "scale.linear=0.3 and moveit_servo.scale.linear=0.2 set the same parameter"),
             ({"planning_frame": "panda_link0", "moveit_servo.planning_frame": "world"},
              "planning_frame='panda_link0' and moveit_servo.planning_frame='world' set the same parameter")]
    for i, (values, words) in enumerate(cases):
        with pytest.raises(ConfigError) as err:
            declare_config(_node(ros, f"conflict_{i}", **values), ServoConfig)
        assert words in str(err.value) and "set it under one name only" in str(err.value), str(err.value)
    # the same value under both names is no conflict
    same = declare_config(_node(ros, "agree", **{"scale.linear": 0.3, "moveit_servo.scale.linear": 0.3}),
                          ServoConfig)
    assert same.scale.linear == 0.3


def test_bad_values_under_a_moveit_name_name_the_moveit_name(ros):
    node = _node(ros, "bad_alias", **{"moveit_servo.scale.linear": "fast",
                                      "moveit_servo.joint_limit_margins": [0.1, 0.2, 0.3],
                                      "moveit_servo.publish_period": 5.0})
    with pytest.raises(ConfigError) as err:
        declare_config(node, ServoConfig)
    text = str(err.value)
    assert "moveit_servo.scale.linear='fast' must be a number with a decimal point" in text
    assert "given as moveit_servo.publish_period" in text, text
    config_node = _node(ros, "short_margins", **{"moveit_servo.joint_limit_margins": [0.1, 0.2, 0.3]})
    config = declare_config(config_node, ServoConfig)          # sizes are checked against the robot later
    from robokin_ros.core.robot import RobotModel
    with pytest.raises(ConfigError, match="joint_limit_margins has 3 entries but the chain has 7 joints"):
        config.check_joint_lists(RobotModel.from_name("panda").joint_names)


def test_moveit_names_are_read_once_at_start_up(ros):
    node = _node(ros, "alias_runtime")
    current = [declare_config(node, ServoConfig)]
    watch_config(node, lambda: current[0], lambda c: current.__setitem__(0, c))
    result = node.set_parameters([Parameter("moveit_servo.scale.linear", value=0.1)])[0]
    assert not result.successful and "read-only" in result.reason
    assert node.set_parameters([Parameter("scale.linear", value=0.1)])[0].successful
    assert current[0].scale.linear == 0.1
