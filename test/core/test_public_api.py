"""The public API: `robokin_ros` re-exports the core's main classes, documented, without loading ROS."""
import ast
import inspect
import subprocess
import sys
from pathlib import Path

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


EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("0*.py"))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_examples_import_only_the_public_api(example):
    """Examples show what a user writes: `from robokin_ros import ...`, never a module path inside the package."""
    for node in ast.walk(ast.parse(example.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("robokin_ros"):
            assert node.module == "robokin_ros", f"{example.name}:{node.lineno} imports from {node.module}"
            assert {alias.name for alias in node.names} <= set(robokin_ros.__all__)
        elif isinstance(node, ast.Import):
            assert not any(a.name.startswith("robokin_ros.") for a in node.names), f"{example.name}:{node.lineno}"
