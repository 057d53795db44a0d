"""The public API: `robokin_ros` re-exports the core's main classes, documented, without loading ROS."""
import inspect
import subprocess
import sys

import pytest

import robokin_ros


@pytest.mark.parametrize("name", robokin_ros.__all__)
def test_every_public_name_resolves_to_a_documented_core_object(name):
    value = getattr(robokin_ros, name)
    assert value.__module__.startswith("robokin_ros.core."), f"{name} comes from {value.__module__}"
    assert inspect.getdoc(value), f"{name} has no docstring"


def test_an_unknown_name_lists_the_public_api():
    with pytest.raises(AttributeError, match="RobotModel"):
        robokin_ros.NoSuchThing        # noqa: B018


def test_the_public_api_loads_no_ros_and_nothing_until_used():
    code = ("import sys, robokin_ros\n"
            "assert 'robokin_ros.core.robot' not in sys.modules, 'import robokin_ros loaded the core eagerly'\n"
            "for name in robokin_ros.__all__: getattr(robokin_ros, name)\n"
            "loaded = [m for m in sys.modules if m.split('.')[0] in ('rclpy', 'launch') or m.endswith('_msgs')]\n"
            "sys.exit(f'loaded {loaded}' if loaded else 0)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
