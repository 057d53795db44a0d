"""Where the package's data files and executables live, in a ROS 2 install and in a source checkout alike.

Search order, first hit wins (the errors list every place tried):
- share files (config/, launch/): the ament index (`get_package_share_directory`), then `<sys.prefix>/share/
  robokin_ros`, then the source tree this module sits in (an editable install);
- executables: the ament index (`<get_package_prefix>/lib/robokin_ros`, where colcon installs console scripts),
  then beside `sys.executable` (a venv's bin/), then `<sys.prefix>/lib/robokin_ros`.
"""
from __future__ import annotations

import sys
from pathlib import Path

from robokin_ros.core.embedded import EMBEDDED_ROBOTS

PACKAGE = "robokin_ros"
SOURCE_TREE = Path(__file__).resolve().parents[1]


def _ament(lookup: str) -> Path | None:
    """The ament index's answer for this package (`share` or `prefix`); None when it does not know it."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_prefix, get_package_share_directory
    except ImportError:
        return None
    try:
        return Path(get_package_share_directory(PACKAGE) if lookup == "share" else get_package_prefix(PACKAGE))
    except (PackageNotFoundError, ValueError, OSError):   # not registered, or AMENT_PREFIX_PATH unset
        return None


def share_dir_candidates() -> list[Path]:
    """Every folder `share_dir` tries, in order."""
    ament = _ament("share")
    return [*([ament] if ament else []), Path(sys.prefix) / "share" / PACKAGE, SOURCE_TREE]


def share_dir() -> Path:
    """The folder holding config/ and launch/ (see the module docstring for the search order)."""
    candidates = share_dir_candidates()
    for candidate in candidates:
        if (candidate / "config").is_dir():
            return candidate
    raise FileNotFoundError(f"cannot find the {PACKAGE} share folder; looked in {[str(c) for c in candidates]} "
                            "(is the workspace's install/setup.bash sourced?)")


def config_file(name: str) -> Path:
    """Path of a file in config/ (e.g. "panda_servo.yaml"); FileNotFoundError lists what exists."""
    path = share_dir() / "config" / name
    if not path.is_file():
        available = sorted(p.name for p in path.parent.glob("*"))
        raise FileNotFoundError(f"no config file '{name}' in {path.parent}; available: {available}")
    return path


def example_program(name: str) -> Path:
    """A motion program of examples/programs (e.g. "pick_place_zoned.yaml"), installed or in the source tree."""
    for base in (share_dir() / "examples" / "programs", SOURCE_TREE / "examples" / "programs"):
        if (base / name).is_file():
            return base / name
    raise FileNotFoundError(f"no example program '{name}' in {share_dir() / 'examples' / 'programs'}")


def node_params_file(robot: str, node: str) -> Path:
    """The parameter file of `node` ("servo", "path_ik") for `robot`: config/<robot>_<node>.yaml for an embedded
    robot that has one (panda, ur5), else config/generic_<node>.yaml, which holds no joint-specific values and so
    fits any embedded robot or URDF path."""
    if robot in EMBEDDED_ROBOTS and (share_dir() / "config" / f"{robot}_{node}.yaml").is_file():
        return config_file(f"{robot}_{node}.yaml")
    return config_file(f"generic_{node}.yaml")


def executable_dirs() -> list[Path]:
    """Every folder `executable` tries, in order."""
    prefix = _ament("prefix")
    ament = [prefix / "lib" / PACKAGE] if prefix else []
    return [*ament, Path(sys.executable).parent, Path(sys.prefix) / "lib" / PACKAGE]


def executable(name: str) -> Path:
    """A node executable (`servo_node`, ...): see the module docstring for the search order."""
    folders = executable_dirs()
    for folder in folders:
        if (folder / name).is_file():
            return folder / name
    raise FileNotFoundError(f"executable '{name}' not found in {[str(f) for f in folders]}")
