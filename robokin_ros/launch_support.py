"""What the launch files share, free of `launch` itself (so it imports anywhere): the robot arguments every
robokin launch file declares, the parameters built from them for every robokin node, and the node plus optional
sim_robot pair each launch file starts."""
from __future__ import annotations

from collections.abc import Callable

from robokin_ros.core.embedded import EMBEDDED_ROBOTS
from robokin_ros.paths import node_params_file

TRUE = ("true", "1", "yes", "on")


def is_true(text: str) -> bool:
    """A launch argument's text read as a boolean, as launch reads conditions."""
    return text.lower() in TRUE


def robot_arguments(node: str, sim_default: str) -> list[tuple[str, str, str]]:
    """(name, default, description) of the launch arguments of a launch file around `node` (servo, path_ik)."""
    return [
        ("robot", "panda", f"embedded robot {sorted(EMBEDDED_ROBOTS)} or a URDF path"),
        ("base_frame", "", "chain base (default: the robot's)"),
        ("tip_frame", "", "chain tip (default: the robot's)"),
        ("params_file", "", f"{node} parameters (default: config/<robot>_{node}.yaml, else "
                            f"config/generic_{node}.yaml)"),
        ("sim", sim_default, "start sim_robot as the driver"),
        ("use_sim_time", "false", "every node follows /clock"),
    ]


def robot_parameters(value: Callable[[str], str]) -> dict:
    """The robot-source parameters every robokin node shares, plus use_sim_time; `value(name)` reads an argument."""
    params = {"robot": value("robot"), "use_sim_time": is_true(value("use_sim_time"))}
    params.update({key: value(key) for key in ("base_frame", "tip_frame") if value(key)})
    return params


def arm_nodes(node_class: Callable[..., object], value: Callable[[str], str], executable: str,
              node: str) -> tuple[list, dict]:
    """The launch actions of a robokin launch file around `node` (servo, path_ik): `executable` with its parameter
    file and the shared robot parameters, plus sim_robot when the `sim` argument is true; and those shared
    parameters. `node_class` is launch_ros's Node, passed in so that this module stays free of launch.
    """
    shared = robot_parameters(value)
    params_file = value("params_file") or str(node_params_file(value("robot"), node))
    nodes = [node_class(package="robokin_ros", executable=executable, name=executable, output="screen",
                        parameters=[params_file, shared])]
    if is_true(value("sim")):
        nodes.append(node_class(package="robokin_ros", executable="sim_robot", name="sim_robot", output="screen",
                                parameters=[shared]))
    return nodes, shared
