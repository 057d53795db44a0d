"""The README stays true: its parameter tables are the config schemas, its commands are what CI runs."""
import importlib
import re
from pathlib import Path

import pytest

from robokin_ros.tools.param_table import CONFIGS, markdown_table

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_parameter_tables_match_the_config_schema(name):
    module, cls = CONFIGS[name].split(":")
    table = markdown_table(getattr(importlib.import_module(module), cls))
    assert table in README, (f"README's {name} parameter table is stale: regenerate it with "
                             f"`.venv/bin/python -m robokin_ros.tools.param_table {name}`")


def test_the_two_commands_are_in_the_readme_and_ci_runs_the_test_one():
    blocks = re.findall(r"```bash\n(.*?)```", README, re.S)
    first = blocks[0]
    assert "bash scripts/demo.sh" in first and "bash scripts/test.sh" in first
    assert "bash scripts/test.sh" in (REPO / ".ci" / "run").read_text()
    for script in ("demo.sh", "test.sh"):
        assert 'scripts/setup.sh"' in (REPO / "scripts" / script).read_text(), f"{script} must do all set-up"


def test_the_python_api_example_runs(capsys):
    """The README's Python API block is real code: it runs as printed and produces its outputs."""
    section = README.split("## Python API", 1)[1].split("\n## ", 1)[0]
    code = re.findall(r"```python\n(.*?)```", section, re.S)[0]
    exec(compile(code, "README.md (Python API)", "exec"), {"__name__": "readme_example"})
    printed = capsys.readouterr().out
    assert "OK" in printed and "path solved" in printed and "force polytope" in printed, printed


def test_the_classroom_example_prints_its_textbook_numbers(capsys):
    """The classroom block runs as printed, and prints the numbers the README explains."""
    section = README.split("## The classroom toolbox", 1)[1].split("\n## ", 1)[0]
    code = re.findall(r"```python\n(.*?)```", section, re.S)[0]
    exec(compile(code, "README.md (classroom)", "exec"), {"__name__": "readme_classroom"})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "[0.1 0.2 0.3] 4.0"
    assert lines[2] == "True" and lines[3] == "8 True"
    assert lines[4].endswith("[1.618 0.618]") and lines[5] == "1.0 [2. 0.]"
    assert lines[6] == "0.8 0.2" and lines[7] == "True" and lines[8] == "1.7 1.7"
    assert lines[9].startswith("6.29 mm -> 0.08") and "13 unidentifiable" in lines[9]


# ---- docs/use_with_your_robot.md: every name it uses exists ------------------------------------------------------
PAGE_PATH = REPO / "docs" / "use_with_your_robot.md"
PAGE = PAGE_PATH.read_text()
# Names the page takes from upstream, with where they come from (checked by hand against each project's source).
UPSTREAM = {
    # ur_robot_driver (jazzy): config/ur_controllers.yaml, launch/ur_control.launch.py; ur_moveit_config/config
    "ur_robot_driver", "ur_type", "robot_ip", "launch_rviz", "use_mock_hardware", "initial_joint_controller",
    "tf_prefix", "scaled_joint_trajectory_controller", "joint_trajectory_controller", "forward_position_controller",
    "forward_velocity_controller", "tcp_pose_broadcaster", "base_link", "base", "tool0", "tool0_controller",
    "ur_servo", "ur_moveit_config",
    # franka_ros2: franka_moveit_config (panda_ros_controllers.yaml, moveit.launch.py); jazzy: fr3_* names,
    # franka_description's <arm>_hand_tcp
    "franka_ros2", "franka_moveit_config", "panda_arm_controller", "fr3_arm_controller", "fr3_link0",
    "fr3_hand_tcp", "panda_link0", "panda_link8", "panda_hand", "panda_hand_tcp",
    # moveit_resources panda_moveit_config (package name, demo.launch.py, moveit_controllers.yaml); moveit_servo
    "moveit_resources_panda_moveit_config", "action_ns", "follow_joint_trajectory", "joint_trajectory", "commands",
    # ros2_control / ros2_controllers (jazzy): mock_components, controller_manager, joint_state_broadcaster
    "joint_state_broadcaster", "list_controllers", "controller_manager", "ros2_control_node", "robot_state_publisher",
}
UPSTREAM_NAMES = {"/robot_description", "/joint_states"}
NAME = r"(?<![\w.])(/[a-z_][a-z0-9_]*(?:/[a-z0-9_]+)*)"          # an absolute topic or action name


def _known_identifiers() -> set[str]:
    from dataclasses import fields

    from robokin_ros import launch_support
    from robokin_ros.core.embedded import EMBEDDED_ROBOTS
    from robokin_ros.core.schema import param_name, parameter_aliases
    names = set(UPSTREAM)
    for module, cls in (value.split(":") for value in CONFIGS.values()):
        config = getattr(importlib.import_module(module), cls)
        names |= {param_name(f) for f in fields(config)}
        names |= {a for aliases in parameter_aliases(config).values() for a in aliases}
    names |= {name for name, _, _ in launch_support.robot_arguments("servo") + launch_support.viewer_arguments("")}
    names |= set(launch_support.PRESETS) | set(EMBEDDED_ROBOTS)
    names |= set(re.findall(r'"(\w+) = robokin_ros', (REPO / "setup.py").read_text()))     # executables
    status_msg = REPO / "robokin_interfaces" / "msg" / "ServoStatus.msg"
    names |= set(re.findall(r"int8 (\w+) = ", status_msg.read_text()))
    return names


def _robokin_names() -> set[str]:
    """Every absolute topic / action name robokin's code, launch support and parameter files write."""
    sources = [*(REPO / "robokin_ros").rglob("*.py"), *(REPO / "launch").glob("*.py"),
               *(REPO / "config").glob("*.yaml")]
    names = {n for path in sources for n in re.findall(NAME, path.read_text())}
    for node, private in (("servo_node", "servo_node.py"), ("path_ik_node", "path_ik_node.py"),
                          ("sim_robot", "sim_robot.py")):
        names |= {f"/{node}/{n}" for n in re.findall(r'"~/(\w+)"', (REPO / "robokin_ros" / "nodes" / private)
                                                     .read_text())}
    names |= {f"/servo_node/{n}" for n in ("status", "robokin_status", "delta_twist_cmds")}
    controllers = {"scaled_joint_trajectory_controller", "joint_trajectory_controller", "panda_arm_controller",
                   "forward_position_controller", "my_controller"}
    leaves = ("joint_trajectory", "follow_joint_trajectory", "commands")
    names |= {f"/{c}/{leaf}" for c in controllers for leaf in leaves}
    return names | UPSTREAM_NAMES


def _launch_arguments(file_name: str) -> set[str]:
    from robokin_ros import launch_support
    text = (REPO / "launch" / file_name).read_text()
    names = set(re.findall(r'DeclareLaunchArgument\("(\w+)"', text))
    if "robot_arguments(" in text:
        names |= {name for name, _, _ in launch_support.robot_arguments("servo")}
    if "viewer_arguments(" in text:
        names |= {name for name, _, _ in launch_support.viewer_arguments("")}
    return names


def test_readme_links_the_use_with_your_robot_page():
    assert "(docs/use_with_your_robot.md)" in README


def test_the_pages_robokin_launch_lines_use_declared_arguments_and_real_files():
    from robokin_ros.launch_support import PRESETS
    lines = [line for block in re.findall(r"```bash\n(.*?)```", PAGE, re.S) for line in block.splitlines()
             if line.startswith("ros2 launch robokin_ros ")]
    assert len(lines) >= 8
    for line in lines:
        file_name, *arguments = re.sub(r"\$\([^)]*\)", "PREFIX", line).split()[3:]
        declared = _launch_arguments(file_name)
        for argument in arguments:
            name, value = argument.split(":=", 1)
            assert name in declared, f"{line}: {file_name} declares no '{name}'; it declares {sorted(declared)}"
            assert name != "preset" or value in PRESETS, f"{line}: no preset '{value}'"
            assert name != "robot" or value in ("", "panda", "ur5"), line
            for config in re.findall(r"config/([\w.]+\.yaml)", value):
                assert (REPO / "config" / config).is_file(), f"{line}: no config/{config}"


def test_every_config_file_and_parameter_the_page_names_exists():
    known = _known_identifiers()
    for config in re.findall(r"config/([\w]+\.yaml)", PAGE):
        assert (REPO / "config" / config).is_file(), f"the page names config/{config}, which does not exist"
    for code in re.findall(r"(?<!`)`([^`\n]+)`(?!`)", PAGE):
        setting = re.fullmatch(r"([\w.]+)(:=|: )(.*)", code)
        if setting:
            assert setting.group(1) in known, f"`{code}`: no parameter or launch argument '{setting.group(1)}'"
        elif re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)+|[a-z]+\d+", code) and not code.startswith(("ros2", "xacro")):
            assert code in known, f"`{code}` is neither a robokin name nor one of the upstream names the test lists"


def test_every_topic_and_action_name_the_page_uses_exists():
    robokin = _robokin_names()
    code = re.findall(r"`([^`\n]+)`", PAGE) + re.findall(r"```bash\n(.*?)```", PAGE, re.S)
    used = {name.removeprefix("/left") for text in code for name in re.findall(rf"(?<![)$>]){NAME}(?![\w.])", text)}
    assert "/scaled_joint_trajectory_controller/follow_joint_trajectory" in used          # ("/left": the example)
    assert not used - robokin, f"names the code and the listed upstream names do not know: {sorted(used - robokin)}"


def test_the_pages_preset_table_matches_the_preset_files():
    import yaml

    from robokin_ros.launch_support import PRESETS
    rows = {cells[0].strip("` "): cells for line in PAGE.splitlines() if line.startswith("| `")
            for cells in [[c.strip() for c in line.strip("|").split("|")]] if cells[0].strip("` ") in PRESETS}
    assert set(rows) == set(PRESETS)
    for preset, cells in rows.items():
        servo = yaml.safe_load((REPO / "config" / f"{preset}_servo.yaml").read_text())["/**"]["ros__parameters"]
        path = yaml.safe_load((REPO / "config" / f"{preset}_path_ik.yaml").read_text())["/**"]["ros__parameters"]
        assert cells[3] == f"`{servo['command_out_topic']}`"
        assert cells[4] == f"`{path['follow_joint_trajectory_action']}`"
        if "base_frame" in servo:
            assert cells[5] == f"`{servo['base_frame']}` → `{servo['tip_frame']}`" == \
                f"`{path['base_frame']}` → `{path['tip_frame']}`"
