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
    assert config.scale_linear == 0.25
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
    assert ok.successful and (current[0].scale_linear, current[0].incoming_command_timeout) == (0.3, 0.2)
    # one good and one bad value: nothing changes, the reason names the bad rule
    bad = node.set_parameters_atomically([Parameter("scale.linear", value=0.9),
                                          Parameter("lower_singularity_threshold", value=95.0)])
    assert not bad.successful and "must exceed lower_singularity_threshold=95.0" in bad.reason
    assert current[0].scale_linear == 0.3 and node.get_parameter("scale.linear").value == 0.3
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
