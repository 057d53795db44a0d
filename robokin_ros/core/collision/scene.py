"""Scene objects: boxes, spheres, cylinders, cones and meshes fixed in the robot's base frame, and their YAML file.

A scene file (see `config/scene_objects.example.yaml`) is a mapping with:

- `frame` (optional): the frame the poses are given in; it must name the robot's base frame (or be empty).
- `objects`: a list of objects, each a mapping with
  - `id` (required): a unique name, used in statuses and to move or remove the object later;
  - `shape` (required): `box`, `sphere`, `cylinder`, `cone` or `mesh`;
  - `dimensions` [m]: in shape_msgs/SolidPrimitive's order: box `[x, y, z]` (full sizes), sphere `[radius]`,
    cylinder and cone `[height, radius]` (axis along the object's z, centred on its origin);
  - `mesh`: for `shape: mesh`, the mesh file (STL, DAE, OBJ, ...): an absolute path, a path relative to the
    scene file, or `package://<package>/<path>`; `scale: [sx, sy, sz]` (optional, default 1);
  - `position: [x, y, z]` [m] (default 0) and at most one of `orientation: [x, y, z, w]` (a unit quaternion,
    within core/spatial.py's tolerance) or `rpy: [roll, pitch, yaw]` [rad] (fixed axes x, y, z, as URDF); default:
    no rotation.

Meshes are used as their convex hull (the hull of the vertices): split a concave object into convex parts, or
accept a distance that is a lower bound. `load_scene` reports every malformed entry at once, each with its index
and field (`objects[2].dimensions: ...`), in one ConfigError.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import coal
import numpy as np
import pinocchio as pin
import yaml

from robokin_ros.core.collision.geometry import convex_hull, spans_volume
from robokin_ros.core.errors import ConfigError, InvalidInputError
from robokin_ros.core.spatial import quaternion_problem, unit_xyzw

DIMENSIONS = {"box": ("x", "y", "z"), "sphere": ("radius",), "cylinder": ("height", "radius"),
              "cone": ("height", "radius"), "mesh": ()}
FIELDS = ("id", "shape", "dimensions", "mesh", "scale", "position", "orientation", "rpy")
# [m] largest size, coordinate or vertex coordinate of a scene object: no robot's scene spans a kilometre. coal's
# distances stay exact to 1e6 m (measured), but degenerate far beyond (a robot inside a 1e20 m box read as clear, a
# 1e308 m box as -inf mm apart) and qhull crashes the process (SIGSEGV) on vertices of 1e308 m.
MAX_SCENE_EXTENT = 1000.0
OBJECT_FIELDS = ("id", "shape", "dimensions", "position", "orientation", "mesh", "vertices", "scale")
OBJECT_DEFAULTS = {"dimensions": (), "position": (0.0, 0.0, 0.0), "orientation": (0.0, 0.0, 0.0, 1.0), "mesh": "",
                   "vertices": (), "scale": (1.0, 1.0, 1.0)}


@dataclass(frozen=True)
class SceneObject:
    """A collision object fixed in the robot's base frame; invalid values raise InvalidInputError.

    `mesh` is a file (see the module docstring); `vertices` give a mesh inline instead (shape_msgs/Mesh). Either
    way the object is the convex hull of the (scaled) vertices.
    """

    id: str
    shape: str
    dimensions: tuple[float, ...] = ()                        # [m], SolidPrimitive order
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)      # [m] in the base frame
    orientation: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0)   # (x, y, z, w), normalised on init
    mesh: str = ""
    vertices: tuple[tuple[float, float, float], ...] = ()       # [m] in the object frame
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    package_dirs: tuple[str, ...] = field(default=(), compare=False)   # for package:// mesh URIs

    def __post_init__(self) -> None:
        for name in ("dimensions", "position", "orientation", "scale"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "vertices", tuple(tuple(v) for v in self.vertices))
        problems = object_problems({name: getattr(self, name) for name in OBJECT_FIELDS})
        if problems:
            raise InvalidInputError(f"scene object '{self.id}': " + "; ".join(problems))
        object.__setattr__(self, "orientation", tuple(float(x) for x in unit_xyzw(self.orientation)))

    @property
    def base_T_object(self) -> pin.SE3:
        """The object's pose in the base frame."""
        x, y, z, w = self.orientation
        return pin.SE3(pin.Quaternion(w, x, y, z).toRotationMatrix(), np.array(self.position, dtype=float))

    def moved(self, position: Sequence[float], orientation: Sequence[float] = (0.0, 0.0, 0.0, 1.0)) -> SceneObject:
        """The same object at another pose (position [m], quaternion x, y, z, w) in the base frame."""
        return replace(self, position=tuple(position), orientation=tuple(orientation))


def object_problems(values: Mapping[str, Any]) -> list[str]:
    """Every invalid field of a scene object given as {field: value}, each as "field: reason"."""
    problems = []
    if not isinstance(values["id"], str) or not values["id"]:
        problems.append(f"id: must be a non-empty string, got {values['id']!r}")
    shape = values["shape"]
    if shape not in DIMENSIONS:
        return problems + [f"shape: {shape!r} is not one of {list(DIMENSIONS)}"]
    names, dimensions = DIMENSIONS[shape], values["dimensions"]
    if shape != "mesh" and (len(dimensions) != len(names) or not _all_positive(dimensions)):
        problems.append(f"dimensions: a {shape} needs {len(names)} positive finite values {list(names)} [m], "
                        f"got {list(dimensions)}")
    elif shape != "mesh" and max(dimensions) > MAX_SCENE_EXTENT:
        problems.append(f"dimensions: {list(dimensions)} [m] exceed {MAX_SCENE_EXTENT:g} m (MAX_SCENE_EXTENT)")
    if shape == "mesh":
        problems += _mesh_problems(values)
    elif values["mesh"] or len(values["vertices"]):
        problems.append(f"mesh: only a mesh takes a mesh file or vertices, not a {shape}")
    if len(values["position"]) != 3 or not _all_finite(values["position"]):
        problems.append(f"position: needs 3 finite values [m], got {list(values['position'])}")
    elif max(abs(v) for v in values["position"]) > MAX_SCENE_EXTENT:
        problems.append(f"position: {list(values['position'])} [m] is farther than {MAX_SCENE_EXTENT:g} m "
                        "(MAX_SCENE_EXTENT) along an axis")
    orientation = values["orientation"]
    if len(orientation) != 4 or not _all_finite(orientation):
        problems.append(f"orientation: needs 4 finite values (x, y, z, w), got {list(orientation)}")
    elif (problem := quaternion_problem(orientation)) is not None:
        problems.append(f"orientation: {problem}")
    return problems


def _mesh_problems(values: Mapping[str, Any]) -> list[str]:
    problems = []
    mesh, vertices = values["mesh"], values["vertices"]
    if not isinstance(mesh, str):
        problems.append(f"mesh: must be a file path or URI, got {mesh!r}")
    elif bool(mesh) == bool(len(vertices)):
        problems.append("mesh: a mesh needs exactly one of a mesh file or inline vertices")
    elif len(vertices) and not _within_extent(vertices, values["scale"]):
        problems.append(f"vertices: {len(vertices)} vertices must be finite and within {MAX_SCENE_EXTENT:g} m "
                        "(MAX_SCENE_EXTENT) of the object's origin, scale included")
    elif len(vertices) and not spans_volume(np.array(vertices, dtype=float)):
        problems.append(f"vertices: {len(vertices)} vertices do not span a volume (need 4 or more, not all in "
                        "one plane)")
    if len(values["scale"]) != 3 or not _all_positive(values["scale"]):
        problems.append(f"scale: needs 3 positive finite values, got {list(values['scale'])}")
    if values["dimensions"]:
        problems.append(f"dimensions: a mesh takes none, got {list(values['dimensions'])}")
    return problems


def _within_extent(vertices: Sequence[Any], scale: Sequence[Any]) -> bool:
    points = np.asarray(vertices, dtype=float)
    factor = np.asarray(scale, dtype=float) if len(scale) == 3 and _all_finite(scale) else np.ones(3)
    with np.errstate(over="ignore", invalid="ignore"):
        return points.ndim == 2 and points.shape[1] == 3 and bool(np.all(np.abs(points * factor) <= MAX_SCENE_EXTENT))


def _all_finite(values: Sequence[Any]) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v) for v in values)


def _all_positive(values: Sequence[Any]) -> bool:
    return _all_finite(values) and all(v > 0 for v in values)


# ---- coal shapes -------------------------------------------------------------------------------------------
def collision_shape(obj: SceneObject) -> coal.CollisionGeometry:
    """The coal geometry of `obj`, centred on the object frame.

    Raises:
        InvalidInputError: a mesh file that cannot be found or read, or whose vertices span no volume.
    """
    d = obj.dimensions
    if obj.shape == "box":
        return coal.Box(*d)
    if obj.shape == "sphere":
        return coal.Sphere(d[0])
    if obj.shape == "cylinder":
        return coal.Cylinder(d[1], d[0])
    if obj.shape == "cone":
        return coal.Cone(d[1], d[0])
    points = np.array(obj.vertices, dtype=float) if obj.vertices else _mesh_vertices(obj)
    if not _within_extent(points, obj.scale):         # a mesh file's vertices are seen here first
        raise InvalidInputError(f"scene object '{obj.id}': mesh vertices must be finite and within "
                                f"{MAX_SCENE_EXTENT:g} m (MAX_SCENE_EXTENT) of the object's origin, scale included")
    return convex_hull(points * np.array(obj.scale), f"scene object '{obj.id}'")


def resolve_mesh(uri: str, package_dirs: Sequence[str], base_dir: Path | None = None) -> Path:
    """The file a mesh URI names: `package://pkg/path` (searched in package_dirs), `file://`, absolute or relative.

    Raises:
        InvalidInputError: no such file (the message lists where it looked).
    """
    if uri.startswith("package://"):
        candidates = [Path(folder) / uri[len("package://"):] for folder in package_dirs]
    else:
        path = Path(uri[len("file://"):] if uri.startswith("file://") else uri)
        candidates = [path if path.is_absolute() or base_dir is None else base_dir / path]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise InvalidInputError(f"mesh '{uri}' not found; looked at {[str(c) for c in candidates]}")


def _mesh_vertices(obj: SceneObject) -> np.ndarray:
    path = resolve_mesh(obj.mesh, obj.package_dirs)
    try:
        mesh = coal.MeshLoader().load(str(path), np.ones(3))
    except Exception as err:   # coal raises ValueError with assimp's text
        raise InvalidInputError(f"scene object '{obj.id}': cannot read mesh {path}: {err}") from err
    return np.asarray(mesh.vertices(), dtype=float).reshape(-1, 3)


# ---- YAML ----------------------------------------------------------------------------------------------------
def load_scene(path: str | Path, base_frame: str = "", package_dirs: Sequence[str] = ()) -> tuple[SceneObject, ...]:
    """Read a scene file (format: module docstring); ConfigError lists every malformed entry by index and field."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise ConfigError([f"cannot read {path}: {err}"], what=f"scene file {path}") from err
    return scene_from_mapping(data, base_frame, package_dirs, base_dir=path.parent, source=str(path))


def scene_from_mapping(data: Any, base_frame: str = "", package_dirs: Sequence[str] = (),
                       base_dir: Path | None = None, source: str = "scene") -> tuple[SceneObject, ...]:
    """Scene objects from parsed YAML (see `load_scene`)."""
    if not isinstance(data, Mapping) or not isinstance(data.get("objects", []), list):
        raise ConfigError(["the top level must be a mapping with an 'objects' list"], what=f"scene file {source}")
    problems = [f"'{key}': unknown top-level key; valid: ['frame', 'objects']" for key in data
                if key not in ("frame", "objects")]
    frame = str(data.get("frame") or "").lstrip("/")
    if frame and base_frame and frame != base_frame:
        problems.append(f"frame: '{frame}' is not the robot's base frame '{base_frame}' (objects are fixed in it)")
    objects, seen = [], set()
    for index, entry in enumerate(data.get("objects") or []):
        obj, entry_problems = _entry(entry, package_dirs, base_dir)
        object_id = entry.get("id") if isinstance(entry, Mapping) else None
        if isinstance(object_id, str) and object_id in seen:
            entry_problems.append(f"id: '{object_id}' is used by an earlier object")
        if isinstance(object_id, str):
            seen.add(object_id)
        problems += [f"objects[{index}].{p}" for p in entry_problems]
        if obj is not None and not entry_problems:
            objects.append(obj)
    if problems:
        raise ConfigError(problems, what=f"scene file {source}")
    return tuple(objects)


def _entry(entry: Any, package_dirs: Sequence[str], base_dir: Path | None) -> tuple[SceneObject | None, list[str]]:
    """(the object or None, problems as "field: reason") for one YAML entry."""
    if not isinstance(entry, Mapping):
        return None, [f"entry: must be a mapping with {list(FIELDS)}, got {entry!r}"]
    problems = [f"{key}: unknown field; valid: {list(FIELDS)}" for key in entry if key not in FIELDS]
    if "orientation" in entry and "rpy" in entry:
        problems.append("rpy: give either orientation or rpy, not both")
    values = {}
    for key in ("dimensions", "position", "orientation", "rpy", "scale"):
        if key in entry:
            value = entry[key]
            if not isinstance(value, list) or not _all_finite(value):
                problems.append(f"{key}: must be a list of finite numbers, got {value!r}")
            else:
                values[key] = tuple(float(v) for v in value)
    if "rpy" in values:
        if len(values["rpy"]) != 3:
            problems.append(f"rpy: needs 3 values [rad], got {list(values['rpy'])}")
        else:
            quaternion = pin.Quaternion(pin.rpy.rpyToMatrix(*values.pop("rpy")))
            values["orientation"] = (quaternion.x, quaternion.y, quaternion.z, quaternion.w)
    values.pop("rpy", None)
    mesh = entry.get("mesh", "")
    if mesh and isinstance(mesh, str) and entry.get("shape") == "mesh":
        try:
            mesh = str(resolve_mesh(mesh, package_dirs, base_dir))
        except InvalidInputError as err:
            problems.append(f"mesh: {err}")
            mesh = ""
    values = {**OBJECT_DEFAULTS, "id": entry.get("id", ""), "shape": entry.get("shape", ""), "mesh": mesh,
              "package_dirs": tuple(package_dirs), **values}
    reported = {problem.split(":")[0] for problem in problems}    # one message per field
    problems += [p for p in object_problems(values) if p.split(":")[0] not in reported]
    return (None if problems else SceneObject(**values)), problems
