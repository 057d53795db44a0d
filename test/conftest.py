"""Shared fixtures: robot models built once per session, a derandomized hypothesis profile for CI."""
import os
import random

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# ROS tests in one run share a random domain so parallel runs on one machine never see each other.
os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(1, 100)))
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")


@pytest.fixture(scope="session")
def panda():
    from robokin_ros.core.robot import RobotModel
    return RobotModel.from_name("panda")


@pytest.fixture(scope="session")
def ur5():
    from robokin_ros.core.robot import RobotModel
    return RobotModel.from_name("ur5")
