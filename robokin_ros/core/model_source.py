"""Where a node's robot model comes from, and xacro expansion.

Precedence, first that is given wins (`choose_source`):

1. `robot_description`: URDF XML in the parameter of that name (as MoveIt and ros2_control pass it).
2. `robot`: an embedded robot name (`core.embedded`), a URDF file path, or a xacro file path (`*.xacro`, expanded
   with the `xacro` package and the `xacro_args` parameter, "name:=value name:=value").
3. The `robot_description` topic (std_msgs/String, transient local: what robot_state_publisher publishes and
   controller_manager reads), waited for by the ROS layer for at most `robot_description_timeout` [s]; it needs
   `base_frame` and `tip_frame`, as the parameter does.

Explicit parameters win over the topic, so a node can be pointed at another model next to a running driver; a
node given none of the three fails with a message listing them (`missing_model_error`) rather than guess a robot.
"""
from __future__ import annotations

import shlex
from collections.abc import Iterable
from pathlib import Path

from robokin_ros.core.errors import ModelError

XACRO_SUFFIX = ".xacro"
TOPIC = "robot_description"          # relative: resolved in the node's namespace, as robot_state_publisher's is
SOURCES = ("robot_description", "robot", "topic")


def choose_source(robot: str, robot_description: str) -> str:
    """Which of `SOURCES` a node's parameters select (see the module docstring for the order)."""
    if robot_description.strip():
        return "robot_description"
    if robot.strip():
        return "robot"
    return "topic"


def is_xacro(path: str | Path) -> bool:
    """True for a `.xacro` file name (`arm.urdf.xacro`, `arm.xacro`)."""
    return str(path).endswith(XACRO_SUFFIX)


def parse_xacro_args(text: str) -> dict[str, str]:
    """"ur_type:=ur5e name:=ur" -> {"ur_type": "ur5e", "name": "ur"} (shell quoting allowed for values with spaces).

    Raises:
        ModelError: a word that is not `name:=value`, naming it.
    """
    try:
        words = shlex.split(text)
    except ValueError as err:
        raise ModelError(f"xacro_args {text!r} cannot be split into words: {err}") from None
    mappings = {}
    for word in words:
        name, sep, value = word.partition(":=")
        if not sep or not name:
            raise ModelError(f"xacro_args: {word!r} is not name:=value (whole value: {text!r})")
        mappings[name] = value
    return mappings


def expand_xacro(path: str | Path, xacro_args: str = "") -> str:
    """The URDF a xacro file expands to, with `xacro_args` ("name:=value ...") as its arguments.

    Raises:
        ModelError: the file is missing, the xacro package is not installed, or the expansion fails (malformed XML,
            an unknown macro or property, a missing `$(find pkg)` package, ...); the message names the file.
    """
    path = Path(path)
    mappings = parse_xacro_args(xacro_args)
    if not path.is_file():
        raise ModelError(f"xacro file not found: {path}")
    try:
        import xacro
    except ImportError:
        raise ModelError(f"cannot expand {path}: the xacro package is not installed (pip install xacro, or "
                         "install ros-<distro>-xacro)") from None
    try:
        document = xacro.process_file(str(path), mappings=mappings)
    except Exception as err:  # xacro raises XacroException, expat's ExpatError, OSError, NameError, ...
        raise ModelError(f"cannot expand xacro file {path}: {type(err).__name__}: {err}") from err
    return document.toprettyxml(indent="  ")


def robot_file_xml(robot: str, xacro_args: str = "") -> str:
    """The URDF document of a robot file: a URDF read as it is, a xacro expanded with `xacro_args`.

    Raises:
        ModelError: the file does not exist, the expansion fails, or `xacro_args` is given for a plain URDF.
    """
    if is_xacro(robot):
        return expand_xacro(robot, xacro_args)
    if xacro_args.strip():
        raise ModelError(f"xacro_args={xacro_args!r} is set but robot '{robot}' is not a xacro file (*.xacro)")
    path = Path(robot)
    if not path.is_file():
        raise ModelError(f"URDF file not found: {path}")
    return path.read_text()


def robot_file_name(robot: str) -> str:
    """A model name for a robot file: the file name without `.xacro` and `.urdf` (`ur.urdf.xacro` -> `ur`)."""
    name = Path(robot).name
    for suffix in (XACRO_SUFFIX, ".urdf"):
        name = name.removesuffix(suffix)
    return name or "robot"


def missing_model_error(embedded: Iterable[str], topic: str = "/" + TOPIC, waited: float | None = None,
                        frames_missing: bool = False) -> ModelError:
    """The error of a node given no model: every way to give one.

    Args:
        embedded: the embedded robot names.
        topic: the description topic as the node resolved it.
        waited: how long the node listened on `topic` [s] (None: it did not listen).
        frames_missing: base_frame or tip_frame is empty, which the topic (and robot_description) need.
    """
    if waited is None:
        heard = (" (not listened to: base_frame and tip_frame are not both set)" if frames_missing
                 else " (not listened to)")
    else:
        heard = f" (nothing arrived within robot_description_timeout = {waited:g} s)"
    return ModelError(
        "no robot model given; give one of:\n"
        f"  robot:=<name>               an embedded robot {sorted(embedded)}\n"
        "  robot:=<file.urdf>          a URDF file path (base_frame and tip_frame too unless embedded)\n"
        "  robot:=<file.urdf.xacro>    a xacro file path, with xacro_args:='name:=value ...'\n"
        "  robot_description:=<XML>    URDF XML in the parameter, with base_frame and tip_frame\n"
        f"  the robot_description topic std_msgs/String on {topic}, transient local (robot_state_publisher "
        f"publishes it), with base_frame and tip_frame{heard}")
