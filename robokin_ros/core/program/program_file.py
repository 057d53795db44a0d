"""Motion programs from YAML (or the equivalent mapping): parsing and checking, with errors naming `moves[i].field`.

    robot: panda                      # optional: embedded name or URDF path
    relative: true                    # positions are offsets from the start tool position (base axes)
    defaults: {speed: 0.5, zone: z20} # any move field; a move's own value wins
    velocity_scaling: 1.0             # program-wide fractions of the joint limits, in (0, 1] (a move's fractions
    acceleration_scaling: 1.0         # override); 0 or absent = path_ik_node's velocity/acceleration_scaling
    moves:
      - {type: MoveJ, name: home, joints: [0, -0.78, 0, -2.36, 0, 1.57, 0.78], joint_speed: 0.5}
      - {type: MoveJ, name: approach, position: [0.1, 0, 0.05], zone: 0.05}
      - {type: MoveL, name: pick, position: [0.1, 0, 0], speed: 0.1, zone: fine}
      - {type: MoveC, via: [0.15, 0.05, 0], position: [0.1, 0.1, 0], speed: 0.2}

Poses: `position` [m] plus `orientation` (quaternion x, y, z, w) or `rpy` (base-frame roll, pitch, yaw [rad]);
without either, the orientation of the previous target is kept. Zones: "fine" (exact stop), a radius in metres, or
"z<mm>" as robot languages write it ("z50" = 0.05 m). Speeds are SI numbers (m/s, rad/s).

Robots with several tips (core/program/bimanual.py): a move may name its `tip` (its pose is that tip's; relative
positions are offsets from that tip's start, and a kept orientation is that tip's previous one), give `targets`
(a list of {tip, position, orientation | rpy, via}: a bimanual move) or be `carried: true` (its pose is the held
object's: the object frame at the tips' centroid with base axes at the start, `held_object.take_grasp`):

      - {type: MoveL, tip: right_panda_hand_tcp, position: [0, 0, 0.05]}
      - {type: MoveL, targets: [{tip: left_panda_hand_tcp, position: [0, 0, 0.1]},
                                {tip: right_panda_hand_tcp, position: [0, 0, 0.1]}], zone: z10}
      - {type: MoveL, carried: true, position: [0.05, 0, 0.1], speed: 0.1}
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pinocchio as pin
from robokin_ros.core.errors import InvalidInputError, PathInputError
from robokin_ros.core.path.surface import pose_from_position_quaternion
from robokin_ros.core.program.moves import FINE, MotionProgram, Move, MoveKind, TipTarget
from robokin_ros.core.scaling import scaling_problem, speed_problem
from robokin_ros.core.tips.held_object import take_grasp
from robokin_ros.core.yaml_lines import read_yaml, where

MOVE_FIELDS = ("type", "name", "position", "orientation", "rpy", "joints", "via", "speed", "angular_speed",
               "joint_speed", "acceleration", "zone", "tip", "targets", "carried")
TARGET_FIELDS = ("tip", "position", "orientation", "rpy", "via")
DEFAULT_FIELDS = ("speed", "angular_speed", "joint_speed", "acceleration", "zone")
TOP_FIELDS = ("robot", "relative", "defaults", "moves", "velocity_scaling", "acceleration_scaling", "name",
              "start_positions", "description")


def parse_zone(value, where: str) -> float:
    """"fine" -> FINE, "z50" -> 0.05 m, a number -> metres."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "fine":
            return FINE
        if text.startswith("z"):
            try:
                return float(text[1:]) * 1e-3
            except ValueError:
                pass
        raise PathInputError(f"{where}: zone '{value}' must be 'fine', a radius in metres or 'z<mm>' (e.g. z50)")
    return _number(value, where)


def _number(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PathInputError(f"{where}: {value!r} is not a number")
    value = float(value)
    if not np.isfinite(value) or value < 0.0:
        raise PathInputError(f"{where}: {value} must be a finite number >= 0")
    return value


def _fraction(value, where: str, default: str, index: int = -1) -> float:
    """A scaling field by the rule of core/scaling.py (0 = `default`)."""
    problem = scaling_problem(where, value, default)
    if problem is not None:
        raise PathInputError(problem, index)
    return float(value)


def _speed(value, where: str, unit: str, index: int) -> float:
    """A speed field by the rule of core/scaling.py (0 = no limit)."""
    problem = speed_problem(where, value, unit)
    if problem is not None:
        raise PathInputError(problem, index)
    return float(value)


def _vector(value, size: int | None, where: str) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise PathInputError(f"{where}: {value!r} is not a list of numbers") from None
    if array.ndim != 1 or (size is not None and len(array) != size) or not np.isfinite(array).all():
        raise PathInputError(f"{where}: {value!r} must be {size or 'a list of'} finite numbers")
    return array


def _target_pose(entry: Mapping, where: str, index: int, start: pin.SE3, previous: np.ndarray,
                 relative: bool) -> pin.SE3:
    position = _vector(entry["position"], 3, f"{where}.position")
    if relative:
        position = start.translation + position
    if "orientation" in entry and "rpy" in entry:
        raise PathInputError(f"{where}: give 'orientation' or 'rpy', not both", index)
    if "orientation" in entry:
        quaternion = _vector(entry["orientation"], 4, f"{where}.orientation")
        return pose_from_position_quaternion(position, quaternion, index)
    rotation = (pin.rpy.rpyToMatrix(*_vector(entry["rpy"], 3, f"{where}.rpy")) if "rpy" in entry else previous)
    return pin.SE3(np.array(rotation), position)


class _Frames:
    """Where each frame a move may be about starts, and its latest orientation: the default tool ("" key), every
    tip (several tips), the carried object ("object")."""

    def __init__(self, start: pin.SE3, tip_starts) -> None:
        self.starts = {"": start, **dict(tip_starts or {})}
        if tip_starts:
            self.starts["object"] = take_grasp(list(tip_starts.values()))[0]
        self.rotations = {key: np.array(pose.rotation) for key, pose in self.starts.items()}

    def start(self, key: str, where: str, index: int) -> pin.SE3:
        if key not in self.starts:
            what = "a carried move" if key == "object" else f"tip '{key}'"
            raise PathInputError(f"{where}: {what} needs the tips' start poses (tip_starts), known: "
                                 f"{sorted(k for k in self.starts if k not in ('', 'object'))}", index)
        return self.starts[key]

    def pose(self, entry: Mapping, key: str, where: str, index: int, relative: bool) -> pin.SE3:
        pose = _target_pose(entry, where, index, self.start(key, where, index), self.rotations[key], relative)
        self.rotations[key] = np.array(pose.rotation)
        return pose

    def via(self, entry: Mapping, key: str, where: str, index: int, relative: bool) -> np.ndarray:
        offset = self.start(key, where, index).translation if relative else 0.0
        return _vector(entry["via"], 3, f"{where}.via") + offset


def _targets(entry: Mapping, frames: _Frames, where: str, index: int, relative: bool) -> tuple[TipTarget, ...]:
    """A bimanual move's `targets` list."""
    targets = entry["targets"]
    if not isinstance(targets, list) or not targets:
        raise PathInputError(f"{where}.targets: must be a non-empty list of {{tip, position, ...}}", index)
    out = []
    for k, target in enumerate(targets):
        at = f"{where}.targets[{k}]"
        if not isinstance(target, Mapping) or set(target) - set(TARGET_FIELDS) or "tip" not in target \
                or "position" not in target:
            raise PathInputError(f"{at}: must be a mapping with 'tip' and 'position' (fields {list(TARGET_FIELDS)})",
                                 index)
        tip = str(target["tip"])
        frames.start(tip, at, index)
        out.append(TipTarget(tip, frames.pose(target, tip, at, index, relative),
                             frames.via(target, tip, at, index, relative) if "via" in target else None))
    return tuple(out)


def program_from_mapping(data: Mapping, start: pin.SE3, joint_count: int,
                         forward_kinematics=None, tip_starts: Mapping[str, pin.SE3] | None = None) -> MotionProgram:
    """A MotionProgram from parsed YAML. `start`: the tool pose the program starts from (for relative positions
    and kept orientations); `forward_kinematics(q) -> pin.SE3` gives a MoveJ-to-joints target's orientation to
    the moves after it (None: they keep the previous orientation). `tip_starts`: every tip's start pose (robots
    with several tips), for moves that name a tip, target several or carry the object."""
    if not isinstance(data, Mapping):
        raise PathInputError("a motion program must be a mapping with a 'moves' list")
    unknown = sorted(set(data) - set(TOP_FIELDS))
    if unknown:
        raise PathInputError(f"unknown program field(s) {unknown}; known: {list(TOP_FIELDS)}")
    moves_data = data.get("moves")
    if not isinstance(moves_data, list) or not moves_data:
        raise PathInputError("the program needs a non-empty 'moves' list")
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, Mapping) or set(defaults) - set(DEFAULT_FIELDS):
        raise PathInputError(f"defaults: must be a mapping of {list(DEFAULT_FIELDS)}")
    relative = bool(data.get("relative", False))
    frames = _Frames(start, tip_starts)
    moves = []
    for i, raw in enumerate(moves_data):
        where = f"moves[{i}]"
        if not isinstance(raw, Mapping):
            raise PathInputError(f"{where}: must be a mapping with a 'type'", i)
        unknown = sorted(set(raw) - set(MOVE_FIELDS))
        if unknown:
            raise PathInputError(f"{where}: unknown field(s) {unknown}; known: {list(MOVE_FIELDS)}", i)
        entry = {**defaults, **raw}
        try:
            kind = MoveKind(str(entry.get("type", "")))
        except ValueError:
            raise PathInputError(f"{where}.type: '{entry.get('type')}' must be one of "
                                 f"{[k.value for k in MoveKind]}", i) from None
        pose = joints = via = None
        tip, carried, targets = str(entry.get("tip", "")), bool(entry.get("carried", False)), ()
        key = "object" if carried else tip
        if "targets" in entry:
            targets = _targets(entry, frames, where, i, relative)
        elif kind is MoveKind.JOINT and "joints" in entry:
            if "position" in entry:
                raise PathInputError(f"{where}: a MoveJ takes 'joints' or a pose ('position'), not both", i)
            joints = _vector(entry["joints"], joint_count, f"{where}.joints")
            if forward_kinematics is not None:
                frames.rotations[""] = np.array(forward_kinematics(joints).rotation)
        elif "position" in entry:
            pose = frames.pose(entry, key, where, i, relative)
        else:
            raise PathInputError(f"{where}: a {kind.value} needs a 'position'"
                                 + (" or 'joints'" if kind is MoveKind.JOINT else ""), i)
        if "via" in entry:
            via = frames.via(entry, key, where, i, relative)
        moves.append(Move(kind, pose=pose, joints=joints, via=via, tip=tip, targets=targets, carried=carried,
                          speed=_speed(entry.get("speed", 0.0), f"{where}.speed", "m/s", i),
                          angular_speed=_speed(entry.get("angular_speed", 0.0), f"{where}.angular_speed", "rad/s", i),
                          joint_speed=_fraction(entry.get("joint_speed", 0.0), f"{where}.joint_speed",
                                                "the program's velocity_scaling", i),
                          acceleration=_fraction(entry.get("acceleration", 0.0), f"{where}.acceleration",
                                                 "the program's acceleration_scaling", i),
                          zone=parse_zone(entry.get("zone", FINE), f"{where}.zone"),
                          name=str(entry.get("name", ""))))
    return MotionProgram(tuple(moves), *(_fraction(data.get(what, 0.0), what, f"path_ik_node's {what} parameter")
                                         for what in ("velocity_scaling", "acceleration_scaling")),
                         str(data.get("name", "")))


def load_program_file(path: str | Path) -> dict:
    """The parsed YAML mapping of a program file (PathInputError when missing or not YAML, naming `file:line`).

    Mappings and lists carry their lines (core/yaml_lines.py), so that a caller can name the line of a move.
    """
    try:
        data = read_yaml(path, "program file")
    except InvalidInputError as err:
        raise PathInputError(str(err)) from None
    if not isinstance(data, dict) or "moves" not in data:
        raise PathInputError(f"{where(path, data)}: expected a mapping with a 'moves' list")
    return data
