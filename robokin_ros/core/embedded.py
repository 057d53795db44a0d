"""Robots shipped inside the `example-robot-data` wheel, resolved offline by short name."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from robokin_ros.core.errors import ModelError


@dataclass(frozen=True)
class EmbeddedRobot:
    """Where an embedded robot's URDF lives and which chain a servo drives by default."""

    urdf: str                    # relative to the robots/ folder of example-robot-data
    base_frame: str
    tip_frame: str
    home: tuple[float, ...]      # a well-conditioned start configuration [rad | m], chain order


EMBEDDED_ROBOTS: dict[str, EmbeddedRobot] = {
    "panda": EmbeddedRobot("panda_description/urdf/panda.urdf", "panda_link0", "panda_hand_tcp",
                           (0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785)),
    "ur3": EmbeddedRobot("ur_description/urdf/ur3_robot.urdf", "base_link", "tool0",
                         (0.0, -1.571, 1.571, -1.571, -1.571, 0.0)),
    "ur5": EmbeddedRobot("ur_description/urdf/ur5_robot.urdf", "base_link", "tool0",
                         (0.0, -1.571, 1.571, -1.571, -1.571, 0.0)),
    "ur10": EmbeddedRobot("ur_description/urdf/ur10_robot.urdf", "base_link", "tool0",
                          (0.0, -1.571, 1.571, -1.571, -1.571, 0.0)),
    "xarm7": EmbeddedRobot("xarm_description/urdf/xarm7.urdf", "link_base", "link_eef",
                           (0.0, -0.3, 0.0, 0.6, 0.0, 0.9, 0.0)),
    "z1": EmbeddedRobot("z1_description/urdf/z1.urdf", "link00", "link06",
                        (0.0, 1.0, -1.0, 0.0, 0.0, 0.0)),
    "so101": EmbeddedRobot("so_arm_description/urdf/so101.urdf", "base_link", "gripper_frame_link",
                           (0.0, -0.5, 0.5, 0.5, 0.0)),
    "kinova": EmbeddedRobot("kinova_description/robots/kinova.urdf", "j2s6s200_link_base",
                            "j2s6s200_end_effector", (0.0, 2.9, 1.3, -2.07, 1.4, 0.0)),
}


def example_robot_data_dir() -> Path:
    """The robots/ folder of the example-robot-data wheel (its Python import is broken in 6.0.0)."""
    candidates = [Path(p) / "cmeel.prefix" / "share" / "example-robot-data" / "robots" for p in sys.path if p]
    candidates.append(Path(sys.prefix) / "share" / "example-robot-data" / "robots")   # a ROS 2 / apt install
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise ModelError("example-robot-data is not installed: no robots/ folder found on sys.path "
                     "(pip install example-robot-data, or run scripts/setup.sh)")


class EmbeddedUrdf(NamedTuple):
    """An embedded robot and the URDF file it is loaded from."""

    robot: EmbeddedRobot
    urdf: Path


def embedded_robot(name: str) -> EmbeddedUrdf:
    """Look up an embedded robot by name; the error lists the known names."""
    try:
        robot = EMBEDDED_ROBOTS[name]
    except KeyError:
        raise ModelError(f"no embedded robot named '{name}'; known: {sorted(EMBEDDED_ROBOTS)}") from None
    path = example_robot_data_dir() / robot.urdf
    if not path.is_file():
        raise ModelError(f"embedded robot '{name}': {path} is missing from example-robot-data")
    return EmbeddedUrdf(robot, path)
