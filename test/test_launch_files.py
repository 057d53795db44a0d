"""What each launch file asks `ros2 launch` to start, for given launch arguments, checked without `launch`.

`launch` and `launch_ros` have no wheels here, so a small fake of the part of their API the files use is put in
`sys.modules` (same constructor keywords as the real classes; unknown keywords are a TypeError). The fake
evaluates the description the way launch does: declared defaults, then launch arguments, OpaqueFunction
results, conditions, IncludeLaunchDescription setting its arguments in the *shared* context (as launch's
include does, unscoped) and GroupAction scoping them. The package is found through a fake ament prefix whose
share/robokin_ros is this source tree.

What this proves: which executables, parameter files, parameter values and arguments the files request, and
that the demo registers a shutdown on its own exit. What it does not prove: that the real `launch` accepts them
or that the processes behave (test/ros/test_launch_processes.py starts the nodes with the fallback parameters;
in a ROS install, test_package.py builds every description with the real `launch`).
"""
from __future__ import annotations

import importlib.util
import os
import sys
import types
from pathlib import Path

import pytest
import yaml

from robokin_ros.core.embedded import example_robot_data_dir
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.servo.config import ServoConfig

PACKAGE_DIR = Path(__file__).resolve().parents[1]
LAUNCH_DIR = PACKAGE_DIR / "launch"


# ---- the fake launch API ---------------------------------------------------------------------------------------
class Context:
    def __init__(self, configurations: dict[str, str]) -> None:
        self.launch_configurations = dict(configurations)


class LaunchConfiguration:
    def __init__(self, variable_name, *, default=None) -> None:
        self.name, self.default = variable_name, default

    def perform(self, context: Context) -> str:
        if self.name in context.launch_configurations:
            return context.launch_configurations[self.name]
        if self.default is None:
            raise LookupError(f"launch configuration '{self.name}' is not set")
        return self.default


def _text(value, context: Context) -> str:
    return value.perform(context) if isinstance(value, LaunchConfiguration) else str(value)


class DeclareLaunchArgument:
    def __init__(self, name, *, default_value=None, description=None, choices=None) -> None:
        self.name, self.default_value = name, default_value


class OpaqueFunction:
    def __init__(self, *, function, args=None, kwargs=None) -> None:
        self.function, self.args, self.kwargs = function, args or [], kwargs or {}


class PythonLaunchDescriptionSource:
    def __init__(self, launch_file_path) -> None:
        self.path = launch_file_path


class IncludeLaunchDescription:
    def __init__(self, launch_description_source, *, launch_arguments=None, condition=None) -> None:
        self.source, self.arguments, self.condition = launch_description_source, list(launch_arguments or []), condition


class GroupAction:
    def __init__(self, actions, *, condition=None, scoped=True, forwarding=True, launch_configurations=None) -> None:
        self.actions, self.condition, self.scoped = actions, condition, scoped


class IfCondition:
    def __init__(self, predicate_expression) -> None:
        self.expression = predicate_expression

    def evaluate(self, context: Context) -> bool:
        return _text(self.expression, context).lower() in ("true", "1")


class UnlessCondition(IfCondition):
    def evaluate(self, context: Context) -> bool:
        return not super().evaluate(context)


class OnProcessExit:
    def __init__(self, *, target_action=None, on_exit=None) -> None:
        self.target_action, self.on_exit = target_action, on_exit


class RegisterEventHandler:
    def __init__(self, event_handler) -> None:
        self.event_handler = event_handler


class EmitEvent:
    def __init__(self, *, event) -> None:
        self.event = event


class Shutdown:
    def __init__(self, *, reason="reason not given") -> None:
        self.reason = reason


class Node:
    def __init__(self, *, executable, package=None, name=None, namespace=None, exec_name=None, parameters=None,
                 remappings=None, ros_arguments=None, arguments=None, output=None, condition=None,
                 respawn=False, respawn_delay=None) -> None:
        self.package, self.executable, self.name = package, executable, name
        self.parameters, self.arguments, self.condition = parameters or [], arguments or [], condition
        self.namespace, self.remappings = namespace, list(remappings or [])


class LaunchDescription:
    def __init__(self, initial_entities=None) -> None:
        self.entities = list(initial_entities or [])


FAKE_MODULES = {
    "launch": {"LaunchDescription": LaunchDescription},
    "launch.actions": {c.__name__: c for c in (DeclareLaunchArgument, OpaqueFunction, IncludeLaunchDescription,
                                               GroupAction, RegisterEventHandler, EmitEvent)},
    "launch.conditions": {"IfCondition": IfCondition, "UnlessCondition": UnlessCondition},
    "launch.substitutions": {"LaunchConfiguration": LaunchConfiguration},
    "launch.launch_description_sources": {"PythonLaunchDescriptionSource": PythonLaunchDescriptionSource},
    "launch.event_handlers": {"OnProcessExit": OnProcessExit},
    "launch.events": {"Shutdown": Shutdown},
    "launch_ros": {},
    "launch_ros.actions": {"Node": Node},
}


# ---- evaluating a description ----------------------------------------------------------------------------------
class Started:
    """What one launch would start: each Node with its parameters merged (files loaded), and event handlers."""

    def __init__(self) -> None:
        self.nodes: list[tuple[Node, dict, list[str]]] = []      # (node, merged parameters, parameter files)
        self.handlers: list[RegisterEventHandler] = []

    def node(self, executable: str) -> tuple[Node, dict, list[str]]:
        found = [entry for entry in self.nodes if entry[0].executable == executable]
        assert len(found) == 1, f"{executable}: started {len(found)} times; started: {self.executables()}"
        return found[0]

    def executables(self) -> list[str]:
        return sorted(entry[0].executable for entry in self.nodes)


def _parameters(node: Node, context: Context) -> tuple[dict, list[str]]:
    merged, files = {}, []
    for entry in node.parameters:
        if isinstance(entry, dict):
            merged.update({k: yaml.safe_load(_text(v, context)) if isinstance(v, LaunchConfiguration) else v
                           for k, v in entry.items()})
        else:                                           # a parameter file: a path or a substitution
            files.append(_text(entry, context))
            merged.update(yaml.safe_load(Path(files[-1]).read_text())["/**"]["ros__parameters"])
    return merged, files


def _visit(entities, context: Context, started: Started) -> None:
    for entity in entities:
        if getattr(entity, "condition", None) is not None and not entity.condition.evaluate(context):
            continue
        if isinstance(entity, DeclareLaunchArgument):
            context.launch_configurations.setdefault(entity.name, entity.default_value)
        elif isinstance(entity, OpaqueFunction):
            _visit(entity.function(context, *entity.args, **entity.kwargs) or [], context, started)
        elif isinstance(entity, IncludeLaunchDescription):
            for name, value in entity.arguments:        # launch's include: set in the shared context
                context.launch_configurations[name] = _text(value, context)
            _visit(load(Path(entity.source.path)).generate_launch_description().entities, context, started)
        elif isinstance(entity, GroupAction):
            inner = Context(context.launch_configurations) if entity.scoped else context
            _visit(entity.actions, inner, started)
        elif isinstance(entity, Node):
            merged, files = _parameters(entity, context)
            arguments = [_text(a, context) for a in entity.arguments]
            started.nodes.append((entity, merged, files))
            entity.evaluated_arguments = arguments
        elif isinstance(entity, RegisterEventHandler):
            started.handlers.append(entity)
        else:
            raise TypeError(f"the fake launch does not know {type(entity).__name__}")


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"launch_file_{path.stem.replace('.', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Graph:
    """What the robot_state_publisher check sees (`rsp_running`), and the namespaces it was asked about."""

    def __init__(self) -> None:
        self.rsp_running, self.asked = False, []

    def check(self, namespace: str = "", wait: float = 0.0) -> bool:
        self.asked.append(namespace)
        return self.rsp_running


@pytest.fixture
def graph(monkeypatch):
    """The ROS graph as launch_support's robot_state_publisher check sees it (no ROS here)."""
    from robokin_ros import launch_support

    fake = Graph()
    monkeypatch.setattr(launch_support, "robot_state_publisher_running", fake.check)
    return fake


@pytest.fixture
def launch(monkeypatch, tmp_path, graph):
    """launch(file, **arguments) -> Started, under the fake launch API and a fake ament install of this package."""
    for name, attributes in FAKE_MODULES.items():
        module = types.ModuleType(name)
        module.__dict__.update(attributes)
        monkeypatch.setitem(sys.modules, name, module)
    prefix = tmp_path / "install"
    (prefix / "share" / "ament_index" / "resource_index" / "packages").mkdir(parents=True)
    (prefix / "share" / "ament_index" / "resource_index" / "packages" / "robokin_ros").write_text("")
    (prefix / "share" / "robokin_ros").symlink_to(PACKAGE_DIR)
    others = os.environ.get("AMENT_PREFIX_PATH")
    monkeypatch.setenv("AMENT_PREFIX_PATH", os.pathsep.join([str(prefix), others]) if others else str(prefix))

    def run(file_name: str, **arguments: str) -> Started:
        started = Started()
        context = Context(arguments)
        _visit(load(LAUNCH_DIR / file_name).generate_launch_description().entities, context, started)
        return started

    return run


def _ur5_urdf() -> Path:
    return example_robot_data_dir() / "ur_description" / "urdf" / "ur5_robot.urdf"


# ---- the tests ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("robot", ["panda", "ur5"])
def test_servo_launch_loads_the_robots_own_parameters(launch, robot):
    _, params, files = launch("servo.launch.py", robot=robot).node("servo_node")
    assert [Path(f).name for f in files] == [f"{robot}_servo.yaml"]
    assert params["robot"] == robot


@pytest.mark.parametrize("robot", ["panda", "ur5"])
def test_path_ik_launch_loads_the_robots_own_parameters(launch, robot):
    _, params, files = launch("path_ik.launch.py", robot=robot).node("path_ik_node")
    assert [Path(f).name for f in files] == [f"{robot}_path_ik.yaml"]
    assert params["robot"] == robot


@pytest.mark.parametrize("file_name, executable, kind", [("servo.launch.py", "servo_node", "servo"),
                                                         ("path_ik.launch.py", "path_ik_node", "path_ik")])
def test_other_robots_and_urdf_paths_get_the_generic_parameters(launch, file_name, executable, kind):
    _, params, files = launch(file_name, robot="xarm7").node(executable)
    assert [Path(f).name for f in files] == [f"generic_{kind}.yaml"] and params["robot"] == "xarm7"
    urdf = str(_ur5_urdf())
    _, params, files = launch(file_name, robot=urdf, base_frame="base_link", tip_frame="tool0").node(executable)
    assert [Path(f).name for f in files] == [f"generic_{kind}.yaml"]
    assert (params["robot"], params["base_frame"], params["tip_frame"]) == (urdf, "base_link", "tool0")


@pytest.mark.parametrize("config_cls, file_name", [(ServoConfig, "generic_servo.yaml"),
                                                   (PathConfig, "generic_path_ik.yaml")])
def test_generic_parameter_files_hold_nothing_robot_specific(config_cls, file_name):
    """No robot, frames or per-joint lists: whatever the launch passes as the robot, the file fits it."""
    from robokin_ros.core.schema import param_name, parameter_fields
    values = yaml.safe_load((PACKAGE_DIR / "config" / file_name).read_text())["/**"]["ros__parameters"]
    flat = {f"{k}.{sub}" if isinstance(v, dict) else k for k, v in values.items()
            for sub in (v if isinstance(v, dict) else [None])}
    declared = {param_name(f): f for f in parameter_fields(config_cls)}
    assert flat <= set(declared), f"{file_name} sets undeclared parameters: {sorted(flat - set(declared))}"
    specific = {name for name in flat if declared[name].metadata.get("per_joint")
                or name in ("robot", "robot_description", "base_frame", "tip_frame")}
    assert not specific, f"{file_name} sets robot-specific parameters: {sorted(specific)}"


@pytest.mark.parametrize("file_name", ["servo.launch.py", "path_ik.launch.py", "demo.launch.py"])
def test_every_node_gets_use_sim_time(launch, file_name):
    for value in ("true", "false"):
        started = launch(file_name, robot="panda", use_sim_time=value, sim="true", rviz="true")
        assert started.nodes
        for node, params, _ in started.nodes:
            assert params.get("use_sim_time") is (value == "true"), f"{file_name}: {node.executable} {params}"


@pytest.mark.parametrize("file_name, arguments, base_frame", [
    ("servo.launch.py", {"robot": "panda"}, "panda_link0"),
    ("servo.launch.py", {"robot": "ur5"}, "base_link"),
    ("servo.launch.py", {"robot": "xarm7"}, "link_base"),
    ("servo.launch.py", {"robot": str(_ur5_urdf()), "base_frame": "shoulder_link", "tip_frame": "tool0"},
     "shoulder_link"),
    ("demo.launch.py", {}, "panda_link0"),
])
def test_rviz_fixed_frame_is_the_base_frame(launch, file_name, arguments, base_frame):
    node, _, _ = launch(file_name, rviz="true", **arguments).node("rviz2")
    args = node.evaluated_arguments
    assert args[args.index("-f") + 1] == base_frame, args


def test_robot_state_publisher_gets_the_urdf_the_nodes_load(launch):
    _, params, _ = launch("servo.launch.py", robot="panda", rviz="true").node("robot_state_publisher")
    assert "panda_hand_tcp" in params["robot_description"]
    _, params, _ = launch("servo.launch.py", robot=str(_ur5_urdf()), rviz="true").node("robot_state_publisher")
    assert params["robot_description"] == _ur5_urdf().read_text()


def test_demo_starts_every_node_and_rviz_when_asked(launch):
    """The included servo.launch.py is given rviz:=false; that must not switch off the demo's own RViz."""
    started = launch("demo.launch.py", rviz="true")
    assert started.executables() == sorted(["servo_node", "sim_robot", "path_ik_node", "capability_node",
                                            "robot_state_publisher", "rviz2", "robokin_demo"])
    assert launch("demo.launch.py", rviz="false").executables() == sorted(
        ["servo_node", "sim_robot", "path_ik_node", "capability_node", "robokin_demo"])


def test_demo_launch_shuts_down_when_the_demo_ends(launch):
    started = launch("demo.launch.py", rviz="false")
    demo, _, _ = started.node("robokin_demo")
    assert "--attach" in demo.evaluated_arguments
    on_demo_exit = [h.event_handler for h in started.handlers
                    if isinstance(h.event_handler, OnProcessExit) and h.event_handler.target_action is demo]
    assert on_demo_exit, "no OnProcessExit handler targets the robokin_demo node"
    actions = on_demo_exit[0].on_exit if isinstance(on_demo_exit[0].on_exit, list) else [on_demo_exit[0].on_exit]
    assert any(isinstance(a, EmitEvent) and isinstance(a.event, Shutdown) for a in actions)


def test_fake_include_is_unscoped_like_launch(launch, tmp_path):
    """Control for the fake: an include's arguments leak into the including file unless a GroupAction scopes
    them (what made the old demo lose its RViz)."""
    context = Context({"rviz": "true"})
    include = IncludeLaunchDescription(PythonLaunchDescriptionSource(str(LAUNCH_DIR / "path_ik.launch.py")),
                                       launch_arguments={"rviz": "false"}.items())
    _visit([include], context, Started())
    assert context.launch_configurations["rviz"] == "false"
    context = Context({"rviz": "true"})
    _visit([GroupAction([include])], context, Started())
    assert context.launch_configurations["rviz"] == "true"


# ---- next to a real driver: defaults, layering, presets, controller names, namespace, robot_state_publisher -------
CONTROLLER = "scaled_joint_trajectory_controller"
PRESET_CONTROLLERS = {"ur_robot_driver": ("scaled_joint_trajectory_controller", "base_link", "tool0"),
                      "franka_panda": ("panda_arm_controller", "panda_link0", "panda_hand_tcp"),
                      "mock_components": ("joint_trajectory_controller", None, None)}


def _user_file(tmp_path, **values) -> str:
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({"/**": {"ros__parameters": values}}))
    return str(path)


@pytest.mark.parametrize("file_name, executable, kind", [("servo.launch.py", "servo_node", "servo"),
                                                         ("path_ik.launch.py", "path_ik_node", "path_ik")])
def test_by_default_the_node_takes_the_robot_description_and_starts_alone(launch, file_name, executable, kind):
    """No sim, no RViz, robot "" (the model on /robot_description), the generic parameters."""
    started = launch(file_name)
    assert started.executables() == [executable]
    node, params, files = started.node(executable)
    assert params["robot"] == "" and [Path(f).name for f in files] == [f"generic_{kind}.yaml"]
    assert node.namespace is None


def test_demo_keeps_the_panda(launch):
    for executable in ("servo_node", "path_ik_node", "sim_robot"):
        assert launch("demo.launch.py", rviz="false").node(executable)[1]["robot"] == "panda"


@pytest.mark.parametrize("file_name, executable, kind", [("servo.launch.py", "servo_node", "servo"),
                                                         ("path_ik.launch.py", "path_ik_node", "path_ik")])
def test_params_file_layers_over_the_robot_defaults_and_the_preset(launch, tmp_path, file_name, executable, kind):
    mine = _user_file(tmp_path, joint_topic="/my_states")
    _, params, files = launch(file_name, robot="ur5", params_file=mine).node(executable)
    assert [Path(f).name for f in files] == [f"ur5_{kind}.yaml", "mine.yaml"] and files[-1] == mine
    assert params["joint_topic"] == "/my_states" and params["tip_frame"] == "tool0"    # mine, and ur5's own
    _, params, files = launch(file_name, robot="ur5", preset="ur_robot_driver", params_file=mine).node(executable)
    assert [Path(f).name for f in files] == [f"ur5_{kind}.yaml", f"ur_robot_driver_{kind}.yaml", "mine.yaml"]
    assert params["joint_topic"] == "/my_states"


def test_a_robot_named_in_the_users_file_is_kept(launch, tmp_path):
    mine = _user_file(tmp_path, robot="ur5")
    _, params, _ = launch("servo.launch.py", params_file=mine).node("servo_node")
    assert params["robot"] == "ur5"
    _, params, _ = launch("servo.launch.py", robot="panda", params_file=mine).node("servo_node")
    assert params["robot"] == "panda"                   # the launch argument, when given, wins


@pytest.mark.parametrize("preset", sorted(PRESET_CONTROLLERS))
def test_presets_drive_their_drivers_controller(launch, preset):
    controller, base_frame, tip_frame = PRESET_CONTROLLERS[preset]
    _, servo, _ = launch("servo.launch.py", preset=preset).node("servo_node")
    _, path, _ = launch("path_ik.launch.py", preset=preset).node("path_ik_node")
    assert servo["command_out_topic"] == path["command_out_topic"] == f"/{controller}/joint_trajectory"
    assert path["follow_joint_trajectory_action"] == f"/{controller}/follow_joint_trajectory"
    assert path["execution"] == "action" and servo["command_out_type"] == "trajectory_msgs/JointTrajectory"
    for params in (servo, path):
        assert params.get("base_frame") == base_frame and params.get("tip_frame") == tip_frame
        assert params["joint_topic"] == "/joint_states" and params["robot"] == ""


def test_an_unknown_preset_names_the_valid_ones(launch):
    with pytest.raises(ValueError, match="unknown preset 'ur'.*franka_panda.*mock_components.*ur_robot_driver"):
        launch("servo.launch.py", preset="ur")


def test_controller_name_sets_the_topic_and_the_action(launch):
    _, servo, _ = launch("servo.launch.py", controller_name="scaled_joint_trajectory_controller").node("servo_node")
    assert servo["command_out_topic"] == "/scaled_joint_trajectory_controller/joint_trajectory"
    _, path, _ = launch("path_ik.launch.py", controller_name="panda_arm_controller").node("path_ik_node")
    assert path["follow_joint_trajectory_action"] == "/panda_arm_controller/follow_joint_trajectory"
    assert path["command_out_topic"] == "/panda_arm_controller/joint_trajectory"
    _, servo, _ = launch("servo.launch.py", preset="ur_robot_driver", controller_name="joint_trajectory_controller",
                         command_topic="/my_jtc/joint_trajectory").node("servo_node")
    assert servo["command_out_topic"] == "/my_jtc/joint_trajectory"        # command_topic wins over the name


def test_a_float64_array_servo_gets_the_forward_controllers_commands_topic(launch):
    forward = str(PACKAGE_DIR / "config" / "forward_position_servo.yaml")
    _, servo, _ = launch("servo.launch.py", preset="ur_robot_driver", params_file=forward).node("servo_node")
    assert servo["command_out_topic"] == "/forward_position_controller/commands"
    assert servo["command_out_type"] == "std_msgs/Float64MultiArray"
    _, servo, _ = launch("servo.launch.py", params_file=forward, controller_name="my_position_controller").node(
        "servo_node")
    assert servo["command_out_topic"] == "/my_position_controller/commands"


def test_a_moveit_servo_file_layers_like_any_other(launch, tmp_path):
    """A MoveIt Servo parameter file names the topic `moveit_servo.command_out_topic`, robokin's file
    `command_out_topic`: the launch writes the winner under both names (the node refuses one setting given under two
    names with different values), the later file's value, or the controller_name's."""
    mine = tmp_path / "moveit.yaml"
    mine.write_text(yaml.safe_dump({"/**": {"ros__parameters": {"moveit_servo": {
        "command_out_topic": "/panda_arm_controller/joint_trajectory"}}}}))
    for arguments, topic in (({}, "/panda_arm_controller/joint_trajectory"),
                             ({"controller_name": "joint_trajectory_controller"},
                              "/joint_trajectory_controller/joint_trajectory")):
        node, _, _ = launch("servo.launch.py", params_file=str(mine), **arguments).node("servo_node")
        overrides = node.parameters[-1]
        assert overrides["moveit_servo.command_out_topic"] == overrides["command_out_topic"] == topic


@pytest.mark.parametrize("file_name, executable", [("servo.launch.py", "servo_node"),
                                                   ("path_ik.launch.py", "path_ik_node")])
def test_sim_serves_the_controller_the_node_drives(launch, file_name, executable):
    started = launch(file_name, robot="ur5", preset="ur_robot_driver", sim="true")
    _, node, _ = started.node(executable)
    _, sim, files = started.node("sim_robot")
    assert files == [] and (sim["robot"], sim["base_frame"], sim["tip_frame"]) == ("ur5", "base_link", "tool0")
    assert sim["trajectory_topic"] == node["command_out_topic"] == f"/{CONTROLLER}/joint_trajectory"
    assert sim["joint_states_topic"] == node["joint_topic"]
    if executable == "path_ik_node":
        assert sim["follow_joint_trajectory_action"] == node["follow_joint_trajectory_action"]


def test_sim_serves_a_forward_position_servo(launch):
    forward = str(PACKAGE_DIR / "config" / "forward_position_servo.yaml")
    _, sim, _ = launch("servo.launch.py", robot="panda", sim="true", params_file=forward).node("sim_robot")
    assert sim["position_command_topic"] == "/forward_position_controller/commands"


def test_sim_without_a_robot_says_what_it_needs(launch):
    with pytest.raises(ValueError, match="sim:=true needs robot:="):
        launch("servo.launch.py", sim="true")


def test_namespace_puts_every_node_and_absolute_name_in_it(launch, tmp_path):
    mine = _user_file(tmp_path, cartesian_command_in_topic="~/twist", status_topic="/left/servo_status")
    started = launch("servo.launch.py", robot="ur5", preset="ur_robot_driver", sim="true", rviz="true",
                     robot_state_publisher="true", namespace="left/", params_file=mine)
    for node, _, _ in started.nodes:
        assert node.namespace == "/left", node.executable
    _, servo, _ = started.node("servo_node")
    assert servo["command_out_topic"] == "/left/scaled_joint_trajectory_controller/joint_trajectory"
    assert servo["joint_topic"] == "/left/joint_states"
    assert servo["cartesian_command_in_topic"] == "~/twist" and servo["status_topic"] == "/left/servo_status"
    _, sim, _ = started.node("sim_robot")
    assert sim["trajectory_topic"] == servo["command_out_topic"] and sim["joint_states_topic"] == "/left/joint_states"
    assert sim["position_command_topic"] == "/left/forward_position_controller/commands"
    rviz, _, _ = started.node("rviz2")
    assert ("/robot_description", "/left/robot_description") in rviz.remappings
    _, path, _ = launch("path_ik.launch.py", controller_name="panda_arm_controller", namespace="/right").node(
        "path_ik_node")
    assert path["follow_joint_trajectory_action"] == "/right/panda_arm_controller/follow_joint_trajectory"


def test_namespaced_demo_remaps_every_name_robokin_demo_uses(launch):
    """robokin_demo names its topics absolutely: the demo launch remaps each into the namespace, and its list holds
    every absolute name in robokin_ros/demo/."""
    import re
    used = {name for path in (PACKAGE_DIR / "robokin_ros" / "demo").glob("*.py")
            for name in re.findall(r"\"(/[a-z_]+(?:/[a-z_]+)+|/joint_states)\"", path.read_text())}
    demo_module = load(LAUNCH_DIR / "demo.launch.py")
    assert used and used <= set(demo_module.DEMO_NAMES), sorted(used - set(demo_module.DEMO_NAMES))
    started = launch("demo.launch.py", rviz="false", namespace="demo1")
    demo, _, _ = started.node("robokin_demo")
    assert demo.namespace == "/demo1"
    assert ("/servo_node/delta_twist_cmds", "/demo1/servo_node/delta_twist_cmds") in demo.remappings
    assert all(node.namespace == "/demo1" for node, _, _ in started.nodes)
    _, servo, _ = started.node("servo_node")
    assert servo["command_out_topic"] == "/demo1/joint_trajectory_controller/joint_trajectory"
    assert launch("demo.launch.py", rviz="false").node("robokin_demo")[0].remappings == []


@pytest.mark.parametrize("choice, running, robot, expected", [
    ("auto", False, "panda", True), ("auto", True, "panda", False), ("true", True, "panda", True),
    ("false", False, "panda", False), ("auto", False, "", False),
])
def test_rviz_starts_a_robot_state_publisher_only_when_none_runs(launch, graph, choice, running, robot, expected):
    graph.rsp_running = running
    started = launch("servo.launch.py", robot=robot, rviz="true", robot_state_publisher=choice, namespace="arm")
    assert ("robot_state_publisher" in started.executables()) is expected and "rviz2" in started.executables()
    assert graph.asked == (["/arm"] if choice == "auto" and robot else [])


def test_robot_state_publisher_true_without_a_robot_says_why(launch):
    with pytest.raises(ValueError, match="robot_state_publisher:=true needs robot:="):
        launch("servo.launch.py", rviz="true", robot_state_publisher="true")
    with pytest.raises(ValueError, match="valid: \\['auto', 'true', 'false'\\]"):
        launch("servo.launch.py", robot="panda", rviz="true", robot_state_publisher="maybe")


def test_rviz_fixed_frame_comes_from_the_preset(launch):
    node, _, _ = launch("servo.launch.py", preset="franka_panda", rviz="true").node("rviz2")
    assert node.evaluated_arguments[node.evaluated_arguments.index("-f") + 1] == "panda_link0"


def test_every_launch_file_declares_namespace(launch):
    for file_name in ("servo.launch.py", "path_ik.launch.py", "demo.launch.py"):
        entities = load(LAUNCH_DIR / file_name).generate_launch_description().entities
        assert "namespace" in {e.name for e in entities if isinstance(e, DeclareLaunchArgument)}, file_name
