"""The servo's jerk limits as configuration (issue 27 item 1): values refused at start-up with the joint named."""
import math

import pytest

from robokin_ros.core.errors import ConfigError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.servo import Servo

ACCELERATION = (15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0)       # config/panda_servo.yaml
FRANKA_JERK = (7500.0, 3750.0, 5000.0, 6250.0, 7500.0, 10000.0, 10000.0)


@pytest.fixture(scope="module")
def panda():
    return RobotModel.from_name("panda")


def test_published_limits_are_taken(panda):
    servo = Servo(panda, ServoConfig(max_joint_acceleration=ACCELERATION, max_joint_jerk=FRANKA_JERK))
    assert servo.jerk is not None and tuple(servo.jerk.jerk) == FRANKA_JERK


def test_a_jerk_limit_asking_for_a_ramp_of_minutes_is_refused_naming_the_joint(panda):
    """0.5 rad/s^3 for a 7.5 rad/s^2 joint: a 30 s ramp from -a to a, so every stop would take a quarter minute."""
    jerk = list(FRANKA_JERK)
    jerk[1] = 0.5
    with pytest.raises(ConfigError, match=r"0.5 rad/s\^3 for panda_joint2 .* 30 s ramp.*>= 1.5 rad/s\^3"):
        Servo(panda, ServoConfig(max_joint_acceleration=ACCELERATION, max_joint_jerk=tuple(jerk)))


@pytest.mark.parametrize("bad", [math.nan, math.inf, 0.0, -1.0, 2e6])
def test_a_jerk_limit_that_is_not_a_finite_positive_number_is_refused(panda, bad):
    jerk = list(FRANKA_JERK)
    jerk[3] = bad
    with pytest.raises(ConfigError, match="jerk"):
        Servo(panda, ServoConfig(max_joint_acceleration=ACCELERATION, max_joint_jerk=tuple(jerk)))


def test_the_longest_ramp_allowed_is_ten_seconds(panda):
    """The default acceleration limit (5 rad/s^2) at 1 rad/s^3: a 10 s ramp, the longest accepted; just below is
    refused."""
    assert Servo(panda, ServoConfig(max_joint_jerk=(1.0,) * 7)).jerk is not None
    with pytest.raises(ConfigError, match="panda_joint7"):
        Servo(panda, ServoConfig(max_joint_jerk=(1.0,) * 6 + (0.99,)))
