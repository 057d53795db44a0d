"""The core must stay usable without ROS: no rclpy, launch or message package anywhere under core/."""
import ast
import re
import subprocess
import sys
from pathlib import Path

import robokin_ros.core

ROS_IMPORT = re.compile(r"^(rclpy|launch|launch_ros|builtin_interfaces|rosidl\w*|ament_\w+)\b|_msgs\b|_srvs\b|"
                        r"^robokin_interfaces\b|^robokin_ros\.(ros|nodes)\b")


def _imported_names(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield node.lineno, [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            yield node.lineno, [node.module or ""]


def test_core_sources_import_no_ros():
    core_dir = Path(robokin_ros.core.__file__).parent
    files = sorted(core_dir.rglob("*.py"))
    assert len(files) >= 5, f"expected the core modules under {core_dir}"
    for path in files:
        for lineno, names in _imported_names(ast.parse(path.read_text())):
            bad = [n for n in names if ROS_IMPORT.search(n)]
            assert not bad, f"{path.relative_to(core_dir)}:{lineno} imports {bad}"


def test_the_pattern_catches_ros_imports():
    """Control: the checker must flag what it is meant to flag."""
    tree = ast.parse("import rclpy\nfrom sensor_msgs.msg import JointState\nfrom robokin_ros.ros import params\n")
    flagged = [n for _, names in _imported_names(tree) for n in names if ROS_IMPORT.search(n)]
    assert flagged == ["rclpy", "sensor_msgs.msg", "robokin_ros.ros"]


def test_importing_the_core_loads_no_rclpy():
    core_dir = Path(robokin_ros.core.__file__).parent
    modules = [".".join(p.relative_to(core_dir).with_suffix("").parts) for p in core_dir.rglob("*.py")]
    modules = [m.removesuffix(".__init__").removesuffix("__init__") for m in modules]
    assert "servo.velocity_ik" in modules and "program.planner" in modules, modules
    code = ("import sys, importlib\n"
            f"for m in {modules!r}: importlib.import_module(('robokin_ros.core.' + m).rstrip('.'))\n"
            "import robokin_ros\n"
            "loaded = [m for m in sys.modules if m.split('.')[0] in ('rclpy', 'launch') or m.endswith('_msgs')]\n"
            "print(loaded); sys.exit(1 if loaded else 0)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_tools_are_ros_free_command_line_tools():
    """tools/ holds the ROS-free command-line tools only (the ROS demo lives in demo/)."""
    tools_dir = Path(robokin_ros.__file__).parent / "tools"
    files = sorted(tools_dir.glob("*.py"))
    assert any(p.stem == "plan_path" for p in files)
    for path in files:
        for lineno, names in _imported_names(ast.parse(path.read_text())):
            bad = [n for n in names if ROS_IMPORT.search(n) or n.startswith("robokin_ros.demo")]
            assert not bad, f"tools/{path.name}:{lineno} imports {bad}"
