"""What the launch files share, free of `launch` itself (so it imports anywhere and is tested without it): the
launch arguments, the parameter files and values each robokin node gets from them, the optional sim_robot serving
the same controller, and RViz with a robot_state_publisher only when the graph has none.

Parameters are layered, later wins (as ROS applies several parameter files and then values):
  config/<robot>_<node>.yaml (config/generic_<node>.yaml for other robots and for robot:="")
  config/<preset>_<node>.yaml (preset:=), then params_file:=,
  then what launch arguments set: robot, base_frame, tip_frame, controller_name / command_topic, and with
  namespace:= every absolute topic or action name of the result moved into the namespace.
"""
from __future__ import annotations

import importlib
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from robokin_ros.core.embedded import EMBEDDED_ROBOTS, urdf_xml
from robokin_ros.core.schema import default_of, param_name, parameter_aliases, parameter_fields
from robokin_ros.share_files import config_file, node_params_file

TRUE = ("true", "1", "yes", "on")
FLOAT64_ARRAY = "std_msgs/Float64MultiArray"
# preset -> the driver it fits; each has config/<preset>_servo.yaml and config/<preset>_path_ik.yaml
PRESETS = {
    "ur_robot_driver": "Universal Robots ur_robot_driver (Jazzy): scaled_joint_trajectory_controller",
    "franka_panda": "franka_ros2 / MoveIt's panda_moveit_config: panda_arm_controller",
    "mock_components": "ros2_control mock_components/GenericSystem: joint_trajectory_controller",
}
RSP_CHOICES = ("auto", "true", "false")
CONFIG_CLASSES = {"servo": "robokin_ros.core.servo.config:ServoConfig",
                  "path_ik": "robokin_ros.core.path.config:PathConfig",
                  "sim_robot": "robokin_ros.core.sim.config:SimRobotConfig",
                  "capability": "robokin_ros.core.capability.config:CapabilityConfig"}
NAME_SUFFIXES = ("_topic", "_action")      # parameters holding a topic or action name
GRAPH_WAIT = 3.0                           # [s] discovery time the robot_state_publisher check allows

Value = Callable[[str], str]               # reads a launch argument: value("robot") -> "panda"


def is_true(text: str) -> bool:
    """A launch argument's text read as a boolean, as launch reads conditions."""
    return text.lower() in TRUE


def robot_arguments(node: str, robot_default: str = "") -> list[tuple[str, str, str]]:
    """(name, default, description) of the launch arguments of a launch file around `node` (servo, path_ik)."""
    return [
        ("robot", robot_default, f"embedded robot {sorted(EMBEDDED_ROBOTS)}, a URDF or xacro path; empty = the "
                                 "model on /robot_description (the driver's robot_state_publisher)"),
        ("xacro_args", "", "arguments of a xacro robot, e.g. 'ur_type:=ur5e name:=ur'"),
        ("base_frame", "", "chain base (default: the preset's, else the robot's)"),
        ("tip_frame", "", "chain tip (default: the preset's, else the robot's)"),
        ("preset", "", f"driver preset {sorted(PRESETS)}: config/<preset>_{node}.yaml over the robot's defaults"),
        ("params_file", "", f"{node} parameters, layered over config/<robot>_{node}.yaml (else "
                            f"config/generic_{node}.yaml) and the preset's file"),
        ("controller_name", "", "trajectory controller to drive, e.g. scaled_joint_trajectory_controller "
                                "(empty: the parameter files' choice)"),
        ("command_topic", "", "command topic (empty: /<controller_name>/joint_trajectory, or "
                              "/<controller_name>/commands for std_msgs/Float64MultiArray output)"),
        ("sim", "false", "start sim_robot as the driver, serving the same controller (needs robot:=)"),
        ("use_sim_time", "false", "every node follows /clock"),
        ("namespace", "", "namespace of every node; absolute topic and action names move into it"),
    ]


def viewer_arguments(rviz_default: str) -> list[tuple[str, str, str]]:
    """(name, default, description) of the RViz launch arguments."""
    return [
        ("rviz", rviz_default, "start RViz (and a robot_state_publisher, see robot_state_publisher)"),
        ("robot_state_publisher", "auto", "with rviz: auto = start one unless the graph has a robot_state_publisher "
                                          "or a robot_description publisher; true; false"),
    ]


def namespace_of(value: Value) -> str:
    """The namespace argument as "/name" ("" for none)."""
    name = value("namespace").strip().strip("/")
    return f"/{name}" if name else ""


def preset_file(preset: str, node: str) -> Path:
    """config/<preset>_<node>.yaml; ValueError naming the presets for an unknown one."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset '{preset}'; valid: {sorted(PRESETS)} (or empty for none)")
    return config_file(f"{preset}_{node}.yaml")


def parameter_files(value: Value, node: str) -> list[str]:
    """The parameter files of `node` (servo, path_ik) in layering order: robot default, preset, params_file."""
    files = [str(node_params_file(value("robot"), node))]
    if value("preset"):
        files.append(str(preset_file(value("preset"), node)))
    if value("params_file"):
        files.append(value("params_file"))
    return files


def _flat(section: dict, prefix: str = "") -> dict:
    """Nested parameter dicts as dotted names ({"scale": {"linear": 1}} -> {"scale.linear": 1})."""
    flat = {}
    for key, item in section.items():
        if isinstance(item, dict):
            flat.update(_flat(item, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = item
    return flat


def file_parameters(files: list[str], node_fqn: str) -> dict:
    """What the parameter files set for the node `node_fqn` ("/ns/name"), later files winning."""
    name = node_fqn.rsplit("/", 1)[-1]
    keys = ("/**", name, f"/{name}", f"/**/{name}", node_fqn)
    values: dict = {}
    for path in files:
        try:
            document = yaml.safe_load(Path(path).read_text()) or {}
        except (OSError, yaml.YAMLError) as err:
            raise ValueError(f"cannot read parameter file {path}: {err}") from err
        for key in keys:
            values.update(_flat((document.get(key) or {}).get("ros__parameters") or {}))
    return values


def _config_class(kind: str) -> type:
    module, name = CONFIG_CLASSES[kind].split(":")
    return getattr(importlib.import_module(module), name)


class Parameters:
    """A node's parameters as the launch sees them: the schema defaults, what its files set, and the values the
    launch adds on top (`overrides`). A setting has MoveIt Servo's names too (schema.parameter_aliases): the launch
    writes a value under every name the files use for it, so that a MoveIt Servo file layered over a robokin one
    wins as a later file does, instead of disagreeing with it (which the node refuses)."""

    def __init__(self, kind: str, files: list[str], node_fqn: str) -> None:
        cls = _config_class(kind)
        self.files = files
        per_file = [file_parameters([path], node_fqn) for path in files]
        self.from_files = {key: item for values in per_file for key, item in values.items()}
        self.aliases = parameter_aliases(cls) if hasattr(cls, "moveit_names") else {}
        self.effective = {param_name(f): default_of(f) for f in parameter_fields(cls)}
        self.overrides: dict = {}
        for name in self.effective:
            for values in per_file:                     # the last file naming the setting wins
                given = [key for key in self.names(name) if key in values]
                if given:
                    self.effective[name] = values[given[0]]
            used = [key for key in self.names(name) if key in self.from_files]
            if len({repr(self.from_files[key]) for key in used}) > 1:
                self.set(name, self.effective[name])

    def names(self, name: str) -> tuple[str, ...]:
        """The names a setting goes by: robokin's and MoveIt Servo's."""
        return (name, *self.aliases.get(name, ()))

    def set(self, name: str, value) -> None:
        """Set `name` on top of the files (under each of its names the files use)."""
        for key in [key for key in self.names(name) if key in self.from_files] or [name]:
            self.overrides[key] = value
        self.effective[name] = value

    def move_into(self, namespace: str) -> None:
        """Every absolute topic / action name not yet inside `namespace`, moved into it."""
        for name, value in list(self.effective.items()):
            if (namespace and name.endswith(NAME_SUFFIXES) and isinstance(value, str) and value.startswith("/")
                    and not value.startswith(f"{namespace}/")):
                self.set(name, f"{namespace}{value}")


def _robot_and_frames(params: Parameters, value: Value) -> None:
    params.set("use_sim_time", is_true(value("use_sim_time")))
    if value("robot") or not {"robot", "robot_description"} & set(params.from_files):
        params.set("robot", value("robot"))     # "" = the model on /robot_description
    if value("xacro_args"):
        params.set("xacro_args", value("xacro_args"))
    for frame in ("base_frame", "tip_frame"):
        if value(frame):
            params.set(frame, value(frame))


def _controller(params: Parameters, value: Value, kind: str) -> None:
    controller, topic = value("controller_name").strip("/"), value("command_topic")
    if controller and kind == "path_ik":
        params.set("follow_joint_trajectory_action", f"/{controller}/follow_joint_trajectory")
    if controller or topic:
        float_array = kind == "servo" and params.effective.get("command_out_type") == FLOAT64_ARRAY
        params.set("command_out_topic", topic or f"/{controller}/{'commands' if float_array else 'joint_trajectory'}")


def node_parameters(value: Value, kind: str, executable: str, files: list[str]) -> Parameters:
    """The parameters of robokin node `executable` (config kind `kind`) given `files` and the launch arguments."""
    namespace = namespace_of(value)
    params = Parameters(kind, files, f"{namespace}/{executable}")
    _robot_and_frames(params, value)
    if kind in ("servo", "path_ik"):
        _controller(params, value, kind)
    params.move_into(namespace)
    return params


def _namespace_kw(value: Value) -> dict:
    namespace = namespace_of(value)
    return {"namespace": namespace} if namespace else {}


def robokin_node(node_class: Callable[..., object], value: Value, executable: str, params: Parameters):
    """launch_ros Node of a robokin executable with its files and overrides, in the namespace."""
    return node_class(package="robokin_ros", executable=executable, name=executable, output="screen",
                      parameters=[*params.files, params.overrides], **_namespace_kw(value))


def sim_parameters(value: Value, kind: str, arm: Parameters) -> Parameters:
    """sim_robot's parameters: the arm node's robot, chain and topics, so it serves the controller that node
    drives (trajectory topic and FollowJointTrajectory action, or the forward command topic)."""
    if not value("robot"):
        raise ValueError("sim:=true needs robot:=<embedded name or URDF path>: sim_robot simulates that model "
                         "(robot:=\"\" takes the model from a driver's /robot_description)")
    sim = Parameters("sim_robot", [], f"{namespace_of(value)}/sim_robot")
    for name in ("robot", "use_sim_time", "base_frame", "tip_frame", "tip_frames"):
        if arm.effective.get(name) not in (None, "", (), []):
            sim.set(name, arm.effective[name])
    sim.set("joint_states_topic", arm.effective["joint_topic"])
    if kind == "servo" and arm.effective["command_out_type"] == FLOAT64_ARRAY:
        positions = arm.effective["publish_joint_positions"]
        sim.set("position_command_topic" if positions else "velocity_command_topic", arm.effective["command_out_topic"])
    else:
        sim.set("trajectory_topic", arm.effective["command_out_topic"])
    if kind == "path_ik":
        sim.set("follow_joint_trajectory_action", arm.effective["follow_joint_trajectory_action"])
    sim.move_into(namespace_of(value))
    return sim


def arm_nodes(node_class: Callable[..., object], value: Value, executable: str, kind: str) -> tuple[list, dict]:
    """The launch actions of a robokin launch file around `kind` (servo, path_ik): `executable` with its layered
    parameters, plus sim_robot serving the same controller when `sim` is true; and the arm node's effective
    parameters. `node_class` is launch_ros's Node, passed in so that this module stays free of launch."""
    params = node_parameters(value, kind, executable, parameter_files(value, kind))
    nodes = [robokin_node(node_class, value, executable, params)]
    if is_true(value("sim")):
        nodes.append(robokin_node(node_class, value, "sim_robot", sim_parameters(value, kind, params)))
    return nodes, params.effective


# ---- RViz and robot_state_publisher -----------------------------------------------------------------------------
def _rsp_seen(node, namespace: str) -> bool:
    topics = {f"{namespace}/robot_description", "/robot_description"}
    if any(node.count_publishers(topic) for topic in topics):
        return True
    return any(name == "robot_state_publisher" for name, _ in node.get_node_names_and_namespaces())


def robot_state_publisher_running(namespace: str = "", wait: float = GRAPH_WAIT) -> bool:
    """Whether the ROS graph has a node named robot_state_publisher or a publisher of robot_description (at the
    root or in `namespace`), looked for during up to `wait` [s] by a temporary node in a context of its own.
    False when the graph cannot be read: the launch then starts its own robot_state_publisher, as it used to."""
    try:
        import rclpy
        from rclpy.context import Context
    except ImportError:
        return False
    context = Context()
    try:
        rclpy.init(args=[], context=context)
        node = rclpy.create_node(f"robokin_launch_graph_check_{os.getpid()}", context=context,
                                 start_parameter_services=False, enable_rosout=False)
        try:
            deadline = time.monotonic() + wait
            while not _rsp_seen(node, namespace):
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.05)
            return True
        finally:
            node.destroy_node()
    except Exception as err:   # noqa: BLE001  (the check must never stop a launch)
        print(f"[robokin launch] cannot read the ROS graph ({err}); starting robot_state_publisher", file=sys.stderr)
        return False
    finally:
        rclpy.try_shutdown(context=context)


def wants_robot_state_publisher(value: Value) -> bool:
    """Whether RViz needs a robot_state_publisher from this launch (see the robot_state_publisher argument)."""
    choice = value("robot_state_publisher").strip().lower()
    if choice not in RSP_CHOICES:
        raise ValueError(f"robot_state_publisher:={choice!r}; valid: {list(RSP_CHOICES)}")
    if choice == "true" and not value("robot"):
        raise ValueError("robot_state_publisher:=true needs robot:=<embedded name or URDF path>; with robot:=\"\" "
                         "the model comes from the driver's robot_state_publisher")
    if choice == "false" or not value("robot"):
        return False
    return choice == "true" or not robot_state_publisher_running(namespace_of(value))


def rviz_remappings(rviz_file: Path, namespace: str) -> list[tuple[str, str]]:
    """(name, namespaced name) for every absolute topic an RViz config displays."""
    def topics(item) -> list[str]:
        if isinstance(item, dict):
            own = [v["Value"] for k, v in item.items() if k.endswith("Topic") and isinstance(v, dict)
                   and str(v.get("Value", "")).startswith("/")]
            return own + [t for v in item.values() for t in topics(v)]
        return [t for v in item for t in topics(v)] if isinstance(item, list) else []
    if not namespace:
        return []
    return [(topic, f"{namespace}{topic}") for topic in sorted(set(topics(yaml.safe_load(rviz_file.read_text()))))]


def viewer_nodes(node_class: Callable[..., object], value: Value, base_frame: str, rviz_config: str,
                 use_sim_time: bool) -> list:
    """RViz (fixed frame `base_frame` when known) and, when wanted, a robot_state_publisher of the robot's URDF."""
    if not is_true(value("rviz")):
        return []
    namespace, rviz_file = namespace_of(value), config_file(rviz_config)
    nodes = []
    if wants_robot_state_publisher(value):
        nodes.append(node_class(package="robot_state_publisher", executable="robot_state_publisher", output="screen",
                                parameters=[{"robot_description": urdf_xml(value("robot"), value("xacro_args")),
                                             "use_sim_time": use_sim_time}], **_namespace_kw(value)))
    nodes.append(node_class(package="rviz2", executable="rviz2", name="rviz2",
                            arguments=["-d", str(rviz_file), *(["-f", base_frame] if base_frame else [])],
                            parameters=[{"use_sim_time": use_sim_time}],
                            remappings=rviz_remappings(rviz_file, namespace), **_namespace_kw(value)))
    return nodes
