"""What the launch files share, free of `launch` itself (so it imports anywhere): the robot arguments every
robokin launch file declares, and the parameters built from them for every robokin node."""
from __future__ import annotations

from collections.abc import Callable

from robokin_ros.core.embedded import EMBEDDED_ROBOTS

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
