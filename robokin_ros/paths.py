"""Where the package's data files live, in a source checkout (editable venv) and in a ROS 2 install alike."""
from __future__ import annotations

import sys
from pathlib import Path

PACKAGE = "robokin_ros"


def share_dir() -> Path:
    """The folder holding config/ and launch/: the ament share dir when installed, else the source package."""
    source = Path(__file__).resolve().parents[1]
    if (source / "config").is_dir():
        return source
    installed = Path(sys.prefix) / "share" / PACKAGE
    if installed.is_dir():
        return installed
    try:
        from ament_index_python.packages import get_package_share_directory
        return Path(get_package_share_directory(PACKAGE))
    except Exception as err:  # no ament index either: say where we looked
        raise FileNotFoundError(f"cannot find the {PACKAGE} share folder (looked in {source}, {installed})") from err


def config_file(name: str) -> Path:
    """Path of a file in config/ (e.g. "panda_servo.yaml"); FileNotFoundError lists what exists."""
    path = share_dir() / "config" / name
    if not path.is_file():
        available = sorted(p.name for p in path.parent.glob("*"))
        raise FileNotFoundError(f"no config file '{name}' in {path.parent}; available: {available}")
    return path


def executable(name: str) -> Path:
    """A node executable installed beside this interpreter (the venv's bin/ or a ROS lib/robokin_ros)."""
    candidates = [Path(sys.executable).parent / name, Path(sys.prefix) / "lib" / PACKAGE / name]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"executable '{name}' not found in {[str(c.parent) for c in candidates]}")
