"""The README and the docs pages stay true.

- the parameter tables in docs/parameters.md are the config schemas;
- the README's two commands are what CI runs; the README stays a front page linking every docs page;
- every code block has a known language; a block marked `<!-- not run: <why> -->` (it needs a ROS 2 install, a
  robot, or runs until stopped) is checked statically: the files, executables, launch files and launch arguments
  it names exist;
- docs/use_with_your_robot.md names only things that exist.
The runnable blocks are run by test/docs/test_docs_blocks.py and the site is built by test/docs/test_docs_site.py,
in the first leg only: they need no ROS, so one distro is enough (docs/testing.md).
"""
import importlib
import re
import shlex

import pytest
from docs_pages import BLOCKS, KNOWN_LANGUAGES, REPO, RUNNABLE, blocks, command_lines, console_scripts

from robokin_ros.tools.param_table import CONFIGS, markdown_table

README = (REPO / "README.md").read_text()
PARAMETERS_PAGE = (REPO / "docs" / "parameters.md").read_text()


# ---- the parameter tables and the two commands -------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_parameter_tables_match_the_config_schema(name):
    module, cls = CONFIGS[name].split(":")
    table = markdown_table(getattr(importlib.import_module(module), cls))
    assert f"<!-- param_table {name} -->\n{table}\n" in PARAMETERS_PAGE, (
        f"docs/parameters.md's {name} table is stale: replace the table under `<!-- param_table {name} -->` with "
        f"the output of `.venv/bin/python -m robokin_ros.tools.param_table {name}`")


def test_the_two_commands_are_in_the_readme_and_ci_runs_the_test_one():
    blocks = re.findall(r"```bash\n(.*?)```", README, re.S)
    first = blocks[0]
    assert "bash scripts/demo.sh" in first and "bash scripts/test.sh" in first
    site_home = (REPO / "docs" / "index.md").read_text()
    assert re.findall(r"```bash\n(.*?)```", site_home, re.S)[0] == first, "docs/index.md shows other commands"
    assert "bash scripts/test.sh" in (REPO / ".ci" / "run").read_text()
    for script in ("demo.sh", "test.sh"):
        assert 'scripts/setup.sh"' in (REPO / "scripts" / script).read_text(), f"{script} must do all set-up"


def test_the_readme_stays_a_front_page_that_links_every_docs_page():
    assert len(README.encode()) <= 15_000, f"README.md is {len(README.encode())} bytes: move detail to docs/"
    for page in sorted((REPO / "docs").glob("*.md")):
        if page.name != "index.md":
            assert f"(docs/{page.name}" in README, f"the README's page list misses docs/{page.name}"


def test_the_ros_install_recipe_is_the_same_on_the_front_page_and_in_the_docs():
    """test/test_package.py builds a workspace from the README's copy; docs/running.md must not drift from it."""
    def recipe(text: str) -> str:
        section = text[text.index("In a ROS 2 install (Jazzy / Kilted)"):]
        return re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    assert recipe(README) == recipe((REPO / "docs" / "running.md").read_text())


# ---- code blocks: known languages; those not run are checked statically -------------------------------------
def test_every_code_block_has_a_known_language_and_only_runnable_ones_carry_a_marker():
    for block in BLOCKS:
        assert block.language in KNOWN_LANGUAGES, f"{block.id}: a ```{block.language} block; use one of " \
                                                  f"{KNOWN_LANGUAGES} (docs/testing.md)"
        assert not block.not_run or block.language in ("bash", "python"), f"{block.id}: only code is marked"
        if block.not_run and block.language == "python":
            compile(block.code, block.id, "exec")                  # what cannot run must at least be Python
    assert sum(1 for b in BLOCKS if b.language in RUNNABLE and not b.not_run) >= 10


_PATH_TOKEN = re.compile(r"(?:^|=|/robokin_ros/)((?:scripts|config|examples|bench|launch|test|docs)/[\w./-]*\w)")


@pytest.mark.parametrize("block", blocks("bash", run=False))
def test_blocks_not_run_name_files_executables_and_launch_arguments_that_exist(block):
    from robokin_ros.launch_support import PRESETS
    scripts = console_scripts()
    for line in command_lines(block.code):
        words = shlex.split(re.sub(r"\$\([^)]*\)", "PREFIX", line), comments=True)
        for word in words:
            for path in _PATH_TOKEN.findall(word):
                assert (REPO / path).exists(), f"{block.id}: `{line}` names {path}, which does not exist"
        for word in words:
            if word.startswith(".venv/bin/"):
                name = word.removeprefix(".venv/bin/")
                assert name in scripts or name in ("python", "mkdocs"), f"{block.id}: no executable {name}"
        if words[:3] == ["ros2", "run", "robokin_ros"]:
            assert words[3] in scripts, f"{block.id}: `{line}`: robokin_ros has no executable {words[3]}"
        if words[:3] == ["ros2", "launch", "robokin_ros"]:
            file_name, *arguments = words[3:]
            declared = _launch_arguments(file_name)
            for argument in arguments:
                name, value = argument.split(":=", 1)
                assert name in declared, f"{block.id}: {file_name} declares no '{name}'; it has {sorted(declared)}"
                assert name != "preset" or value in PRESETS, f"{block.id}: `{line}`: no preset '{value}'"


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
    from robokin_ros import launch_support
    from robokin_ros.core.embedded import EMBEDDED_ROBOTS
    from robokin_ros.core.schema import param_name, parameter_aliases, parameter_fields
    names = set(UPSTREAM)
    for module, cls in (value.split(":") for value in CONFIGS.values()):
        config = getattr(importlib.import_module(module), cls)
        names |= {param_name(f) for f in parameter_fields(config)}
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
