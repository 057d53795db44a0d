"""Waypoint files of `plan_path` (YAML or CSV), checked entry by entry; every problem names `file:line`.

YAML: `robot` (optional), `start_positions` (optional), `blend_radius`, `relative`, `waypoints`: a list of
{position: [x, y, z], orientation: [qx, qy, qz, qw] or rpy: [r, p, y]} (`name` and `description` are free text).
CSV: rows `x, y, z[, qx, qy, qz, qw]`, `#` comments, an optional header row; absolute positions.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.path.geometry import pose_from_position_quaternion
from robokin_ros.core.validation import is_real_number
from robokin_ros.core.yaml_lines import line_of, read_yaml, where

TOP_FIELDS = ("robot", "start_positions", "blend_radius", "relative", "waypoints", "name", "description")
WAYPOINT_FIELDS = ("position", "orientation", "rpy")
SIZES = {"position": 3, "orientation": 4, "rpy": 3}


def numbers(value: Any, size: int | None, what: str) -> np.ndarray:
    """A list of `size` finite real numbers (strings and booleans refused) as a float array.

    Raises:
        InvalidInputError: "<what> must be <size> finite numbers, got <value>".
    """
    ok = (isinstance(value, (list, tuple)) and (size is None or len(value) == size) and len(value) > 0
          and all(is_real_number(v) and np.isfinite(float(v)) for v in value))
    if not ok:
        raise InvalidInputError(f"{what} must be {size or 'a list of'} finite numbers, got {value!r}")
    return np.array([float(v) for v in value])


def load_request(path: str | Path) -> dict:
    """A waypoint file as {robot, start_positions, blend_radius, relative, waypoints}, every value checked.

    Each waypoint is {"position": (3,)} plus "orientation" (4,) or "rpy" (3,) arrays. Raises InvalidInputError
    naming `file:line` and the problem.
    """
    path = Path(path)
    if not path.is_file():
        raise InvalidInputError(f"{path}: waypoint file not found")
    if path.suffix.lower() == ".csv":
        return {"waypoints": _csv_waypoints(path)}
    data = read_yaml(path, "waypoint file")
    if not isinstance(data, dict) or not isinstance(data.get("waypoints"), list) or not data["waypoints"]:
        raise InvalidInputError(f"{where(path, data)}: expected a mapping with a non-empty 'waypoints' list")
    unknown = [key for key in data if key not in TOP_FIELDS]
    if unknown:
        raise InvalidInputError(f"{where(path, line_of(data, unknown[0]))}: unknown field '{unknown[0]}'; "
                                f"known: {list(TOP_FIELDS)}")
    request = {"waypoints": [_waypoint(path, data["waypoints"], i) for i in range(len(data["waypoints"]))],
               "relative": _flag(path, data, "relative")}
    if data.get("robot") is not None:
        request["robot"] = _field(path, data, "robot", lambda v, w: _text(v, w))
    if data.get("start_positions") is not None:
        request["start_positions"] = _field(path, data, "start_positions", lambda v, w: numbers(v, None, w))
    if data.get("blend_radius") is not None:
        request["blend_radius"] = _field(path, data, "blend_radius", _length)
    return request


def _field(path: Path, data: dict, key: str, check) -> Any:
    """`check(value, key)`, its InvalidInputError prefixed with the key's `file:line`."""
    try:
        return check(data[key], key)
    except InvalidInputError as err:
        raise InvalidInputError(f"{where(path, line_of(data, key))}: {err}") from None


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"{what} must be a robot name or URDF path, got {value!r}")
    return value


def _length(value: Any, what: str) -> float:
    if not is_real_number(value) or not np.isfinite(float(value)) or float(value) < 0.0:
        raise InvalidInputError(f"{what} must be a finite number >= 0 [m], got {value!r}")
    return float(value)


def _flag(path: Path, data: dict, key: str) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise InvalidInputError(f"{where(path, line_of(data, key))}: {key} must be true or false, got {value!r}")
    return value


def _waypoint(path: Path, waypoints: list, index: int) -> dict:
    entry, at = waypoints[index], where(path, line_of(waypoints, index))
    if not isinstance(entry, dict):
        raise InvalidInputError(f"{at}: waypoint {index} must be a mapping with a 'position', got {entry!r}")
    unknown = [key for key in entry if key not in WAYPOINT_FIELDS]
    if unknown or "position" not in entry:
        problem = f"unknown field '{unknown[0]}'" if unknown else "no 'position'"
        raise InvalidInputError(f"{at}: waypoint {index}: {problem}; fields: {list(WAYPOINT_FIELDS)}")
    if "orientation" in entry and "rpy" in entry:
        raise InvalidInputError(f"{at}: waypoint {index}: give 'orientation' or 'rpy', not both")
    checked = {}
    for key in (k for k in WAYPOINT_FIELDS if k in entry):
        try:
            checked[key] = numbers(entry[key], SIZES[key], f"waypoint {index}: {key}")
        except InvalidInputError as err:
            raise InvalidInputError(f"{where(path, line_of(entry, key))}: {err}") from None
    return checked


def _csv_waypoints(path: Path) -> list[dict]:
    rows = []
    for line, row in enumerate(csv.reader(path.read_text().splitlines()), start=1):
        if not row or not "".join(row).strip() or row[0].strip().startswith("#"):
            continue
        try:
            values = [float(cell) for cell in row]
        except ValueError:
            if not rows and not any(_is_number(cell) for cell in row):
                continue                            # the header row
            bad = next(cell for cell in row if not _is_number(cell))
            raise InvalidInputError(f"{path}:{line}: {bad.strip()!r} is not a number") from None
        if len(values) not in (3, 7) or not np.isfinite(values).all():
            raise InvalidInputError(f"{path}:{line}: a row is x, y, z [m] or x, y, z, qx, qy, qz, qw, all finite; "
                                    f"got {len(values)} values {row}")
        rows.append({"position": np.array(values[:3]),
                     **({"orientation": np.array(values[3:])} if len(values) == 7 else {})})
    if not rows:
        raise InvalidInputError(f"{path}: no waypoint rows")
    return rows


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def waypoint_poses(request: dict, start: pin.SE3) -> list[pin.SE3]:
    """Checked waypoint dicts -> base-frame poses (relative offsets and missing orientations resolved)."""
    poses = []
    for i, wp in enumerate(request["waypoints"]):
        position = np.asarray(wp["position"], float)
        if request.get("relative", False):
            position = start.translation + position
        if "orientation" in wp:
            poses.append(pose_from_position_quaternion(position, wp["orientation"], i))
        else:
            R = pin.rpy.rpyToMatrix(*map(float, wp["rpy"])) if "rpy" in wp else start.rotation
            poses.append(pin.SE3(np.array(R), position))
    return poses


def waypoint_line(path: str | Path, index: int) -> int:
    """The line of waypoint `index` in a YAML waypoint file (0 when unknown: CSV, or no such waypoint)."""
    if Path(path).suffix.lower() == ".csv":
        return 0
    try:
        data = read_yaml(path, "waypoint file")
    except InvalidInputError:
        return 0
    waypoints = data.get("waypoints") if isinstance(data, dict) else None
    return line_of(waypoints, index) if isinstance(waypoints, list) and 0 <= index < len(waypoints) else 0
