"""Model sources: the precedence, xacro files with arguments, clear errors, and the no-model message."""
import numpy as np
import pytest

from robokin_ros.core.embedded import urdf_xml
from robokin_ros.core.errors import ModelError
from robokin_ros.core.model_source import (choose_source, expand_xacro, missing_model_error, parse_xacro_args,
                                           robot_file_name)
from robokin_ros.core.robot import RobotModel

# a one-joint arm whose link length is a xacro argument
ARM_XACRO = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="stick">
  <xacro:arg name="length" default="0.5"/>
  <xacro:arg name="prefix" default=""/>
  <xacro:property name="prefix" value="$(arg prefix)"/>
  <link name="${prefix}base"/>
  <link name="${prefix}arm"/>
  <link name="${prefix}tip"/>
  <joint name="${prefix}joint" type="revolute">
    <parent link="${prefix}base"/><child link="${prefix}arm"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="10" velocity="2"/>
  </joint>
  <joint name="${prefix}tip_joint" type="fixed">
    <parent link="${prefix}arm"/><child link="${prefix}tip"/><origin xyz="$(arg length) 0 0"/>
  </joint>
</robot>
"""


@pytest.fixture
def arm_xacro(tmp_path):
    path = tmp_path / "stick.urdf.xacro"
    path.write_text(ARM_XACRO)
    return path


@pytest.mark.parametrize("robot, description, expected", [
    ("", "<robot/>", "robot_description"), ("ur5e", "<robot/>", "robot_description"), ("ur5e", "", "robot"),
    ("/a/b.urdf.xacro", " ", "robot"), ("", "", "topic"), ("  ", "\n", "topic")])
def test_precedence_parameter_then_robot_then_topic(robot, description, expected):
    assert choose_source(robot, description) == expected


def test_xacro_args_are_parsed_and_bad_words_named():
    assert parse_xacro_args("ur_type:=ur5e  name:=ur") == {"ur_type": "ur5e", "name": "ur"}
    assert parse_xacro_args("label:='two words' empty:=") == {"label": "two words", "empty": ""}
    assert parse_xacro_args("") == {}
    with pytest.raises(ModelError, match="'ur_type=ur5e' is not name:=value"):
        parse_xacro_args("ur_type=ur5e")
    with pytest.raises(ModelError, match="cannot be split"):
        parse_xacro_args("label:='unclosed")


def test_a_xacro_file_is_expanded_with_its_arguments(arm_xacro):
    default = RobotModel.load(str(arm_xacro), "base", "tip")
    longer = RobotModel.from_source(str(arm_xacro), "", "left_base", "left_tip",
                                    xacro_args="length:=0.8 prefix:=left_")
    np.testing.assert_allclose(default.fk([0.0]).translation, [0.5, 0.0, 0.0])
    np.testing.assert_allclose(longer.fk([np.pi / 2]).translation, [0.0, 0.8, 0.0], atol=1e-15)
    assert longer.joint_names == ("left_joint",) and longer.name == "stick"
    assert "<robot" in longer.urdf_xml and "xacro:" not in longer.urdf_xml
    assert "0.8" in urdf_xml(str(arm_xacro), "length:=0.8")


@pytest.mark.parametrize("text, words", [
    ('<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="x"><link name="a">', ["broken.xacro"]),
    ('<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="x"><xacro:no_such_macro/></robot>',
     ["broken.xacro", "no_such_macro"]),
    ('<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="x"><link name="${undefined_property}"/></robot>',
     ["broken.xacro", "undefined_property"]),
])
def test_malformed_xacro_is_a_clear_error_naming_the_file(tmp_path, text, words):
    broken = tmp_path / "broken.xacro"
    broken.write_text(text)
    with pytest.raises(ModelError, match="cannot expand xacro file") as raised:
        RobotModel.load(str(broken), "a", "b")
    for word in words:
        assert word in str(raised.value)


def test_wrong_combinations_are_refused(arm_xacro, tmp_path):
    plain = tmp_path / "plain.urdf"
    plain.write_text(expand_xacro(arm_xacro))
    with pytest.raises(ModelError, match="not a xacro file"):
        RobotModel.from_source(str(plain), "", "base", "tip", xacro_args="length:=1")
    with pytest.raises(ModelError, match="is an embedded robot"):
        RobotModel.from_source("ur5e", "", xacro_args="ur_type:=ur5e")
    with pytest.raises(ModelError, match="xacro file not found"):
        expand_xacro(tmp_path / "nope.urdf.xacro")
    with pytest.raises(ModelError, match="neither an embedded robot"):
        RobotModel.from_source(str(tmp_path / "nope.urdf.xacro"), "", "base", "tip")


def test_no_model_lists_every_way_to_give_one():
    with pytest.raises(ModelError) as raised:
        RobotModel.from_source("", "", "", "")
    message = str(raised.value)
    for way in ("robot:=<name>", "'ur5e'", "robot:=<file.urdf>", "xacro_args", "robot_description:=<XML>",
                "robot_description topic", "/robot_description", "transient local", "base_frame and tip_frame"):
        assert way in message, message
    waited = str(missing_model_error(["panda"], "/left/robot_description", waited=2.5))
    assert "nothing arrived within robot_description_timeout = 2.5 s" in waited and "/left/robot_description" in waited


def test_robot_file_names():
    assert robot_file_name("/x/ur.urdf.xacro") == "ur" and robot_file_name("arm.xacro") == "arm"
    assert robot_file_name("arm.urdf") == "arm"
