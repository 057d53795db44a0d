"""The distro choice of the scripts (scripts/distro.sh) and the second CI leg's reach (scripts/test.sh).

The second leg runs only the tests that can behave differently on another distro; a new ROS test placed where the
leg does not look would silently run on one distro only, so the leg's list is checked against every test's imports.
"""
from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROS_IMPORT = re.compile(r"^(rclpy|ament_index_python|robokin_interfaces|robokin_ros\.(ros|nodes))\b|_msgs\b|_srvs\b")


def second_leg() -> list[str]:
    line = next(line for line in (REPO / "scripts" / "test.sh").read_text().splitlines()
                if line.startswith("SECOND_LEG=("))
    return line[len("SECOND_LEG=("):line.index(")")].split()


def imports_of(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def ros_tests_outside(root: Path, patterns: list[str]) -> list[str]:
    """Test files under root/test that import ROS but match none of the leg's patterns (paths from root)."""
    missed = []
    for path in sorted((root / "test").rglob("test_*.py")):
        relative = path.relative_to(root)
        in_leg = any(relative.match(p) or str(relative).startswith(p.rstrip("/") + "/") for p in patterns)
        if not in_leg and any(ROS_IMPORT.search(name) for name in imports_of(path)):
            missed.append(str(relative))
    return missed


def test_the_second_leg_runs_every_test_that_touches_ros():
    patterns = second_leg()
    assert "test/ros" in patterns and "test/test_*.py" in patterns, patterns
    missed = ros_tests_outside(REPO, patterns)
    assert not missed, f"tests that use ROS but run on one distro only (add them to SECOND_LEG): {missed}"


def test_the_leg_check_sees_a_ros_test_outside_the_leg(tmp_path):
    """Control: in a tree like ours, a core test that imports rclpy is reported; ROS tests in the leg are not."""
    for name, text in {"test/core/test_uses_ros.py": "from rclpy.node import Node\n",
                       "test/core/test_pure.py": "import numpy\n",
                       "test/ros/test_node.py": "from sensor_msgs.msg import JointState\n",
                       "test/studio/test_live_ros.py": "import rclpy\n",
                       "test/test_top.py": "from robokin_ros.ros import params\n"}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert ros_tests_outside(tmp_path, second_leg()) == ["test/core/test_uses_ros.py"]


def distro_shell(script: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run bash with scripts/distro.sh sourced (ROOT set as the scripts set it)."""
    return subprocess.run(["bash", "-c", f'set -euo pipefail; ROOT="{REPO}"; source scripts/distro.sh; {script}'],
                          cwd=REPO, capture_output=True, text=True, timeout=30,
                          env={"PATH": "/usr/bin:/bin", **(env or {})})


@pytest.mark.parametrize("args, env, distro", [("", {}, "jazzy"),
                                               ("", {"ROBOKIN_ROS_DISTRO": "kilted"}, "kilted"),
                                               ("--distro kilted -x", {}, "kilted"),
                                               ("--distro=jazzy", {"ROBOKIN_ROS_DISTRO": "kilted"}, "jazzy")])
def test_the_distro_comes_from_the_argument_then_the_environment_then_jazzy(args, env, distro):
    result = distro_shell(f'take_distro_args {args}; echo "$ROBOKIN_ROS_DISTRO $DISTRO_GIVEN $VENV ${{ARGS[*]}}"', env)
    assert result.returncode == 0, result.stderr
    given = "1" if "--distro" in args else "0"
    assert result.stdout.split() == [distro, given, str(REPO / ".venv"), *(["-x"] if "-x" in args else [])]


@pytest.mark.parametrize("args, env", [("--distro humble", {}), ("", {"ROBOKIN_ROS_DISTRO": "rolling"}),
                                       ("--distro", {})])
def test_an_unknown_or_missing_distro_is_refused_with_the_choices(args, env):
    result = distro_shell(f"take_distro_args {args}", env)
    assert result.returncode == 2
    assert "jazzy kilted" in result.stderr, result.stderr


def fake_venv(path: Path, held: str | None) -> Path:
    path.mkdir()
    (path / "pyvenv.cfg").write_text("home = /usr/bin\n")
    if held is not None:
        (path / ".robokin-distro").write_text(held + "\n")
    return path


@pytest.mark.parametrize("held, kept", [("jazzy", True), ("kilted", False), (None, False)])
def test_a_venv_of_another_or_an_unrecorded_distro_is_rebuilt(tmp_path, held, kept):
    venv = fake_venv(tmp_path / "venv", held)
    result = distro_shell(f'VENV="{venv}"; drop_venv_of_other_distro jazzy')
    assert result.returncode == 0, result.stderr
    assert venv.exists() == kept
    if not kept:
        assert f"holds ROS 2 {held or 'an unrecorded distro'}; rebuilding it for jazzy" in result.stdout


def test_a_folder_that_is_not_a_venv_is_never_removed(tmp_path):
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "precious.txt").write_text("keep me")
    result = distro_shell(f'VENV="{folder}"; drop_venv_of_other_distro jazzy')
    assert result.returncode == 1 and "is not a venv" in result.stderr
    assert (folder / "precious.txt").read_text() == "keep me"
