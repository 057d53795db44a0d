"""The robot's collision geometry on RobotModel's reduced chain, with the self-collision pairs worth checking.

`build_robot_geometry` loads the URDF's <collision> elements with coal through Pinocchio, locks the same joints as
the RobotModel (at the same positions), and keeps every pair of geometries that can move relative to each other
except:

- with an SRDF that has <disable_collisions> entries: the link pairs it disables (MoveIt's allowed collision
  matrix, written by the setup assistant: "Adjacent", "Never", "Default");
- without one (no SRDF, or an SRDF with no such entry): pairs of adjacent bodies, i.e. bodies whose parent joints
  are parent and child in the chain (a link and the link one joint further).

Pairs on one rigid body (the same link, or links joined by fixed or locked joints) are never checked.

Meshes become their convex hulls (coal's `buildConvexRepresentation`): GJK on a hull takes about a microsecond,
BVH distance between two meshes about a hundred times more. A hull contains its mesh, so a hull distance is a
lower bound of the mesh distance (equal for convex meshes); primitives (box, sphere, cylinder, ...) stay exact.
"""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import coal
import numpy as np
import pinocchio as pin

from robokin_ros.core.embedded import EMBEDDED_ROBOTS, embedded_srdf_text, example_robot_data_dirs
from robokin_ros.core.errors import InvalidInputError, ModelError
from robokin_ros.core.robot import RobotModel


@dataclass(frozen=True)
class RobotGeometry:
    """Collision geometry of a RobotModel's chain (geometry indices refer to `geometry_model`)."""

    geometry_model: pin.GeometryModel    # robot geometries, placed on the joints of `robot.model`
    self_pairs: tuple[tuple[int, int], ...]   # geometry index pairs checked for self-collision
    pair_filter: str                     # how the pairs were chosen, for logs ("SRDF <path>" or "adjacent links")
    unknown_srdf_links: tuple[str, ...] = ()  # SRDF link names this URDF lacks (their entries were skipped)

    @property
    def names(self) -> tuple[str, ...]:
        """Geometry names (`<link>_<k>`, as Pinocchio names the k-th <collision> of a link)."""
        return tuple(g.name for g in self.geometry_model.geometryObjects)


def default_package_dirs() -> list[str]:
    """Where `package://` mesh URIs are looked up: example-robot-data's share/ folders, then every ament prefix."""
    dirs = [str(folder.parent.parent) for folder in example_robot_data_dirs() if folder.is_dir()]
    dirs += [str(Path(prefix) / "share") for prefix in filter(None, os.environ.get("AMENT_PREFIX_PATH", "").split(
        os.pathsep))]
    return list(dict.fromkeys(dirs))


def build_robot_geometry(robot: RobotModel, srdf: str | Path | None = None, *, urdf_xml: str | None = None,
                         package_dirs: list[str] | None = None, convex: bool = True) -> RobotGeometry:
    """Collision geometry and self-collision pairs of `robot`'s chain.

    Args:
        robot: the chain; its `model` is the one the geometry placements are computed with.
        srdf: an SRDF file path or XML text; None: the SRDF shipped for the embedded robot named `robot.name`
            (`core.embedded.embedded_srdf_text`), else none.
        urdf_xml: the URDF document; default `robot.urdf_xml` (kept by every RobotModel constructor but __init__).
        package_dirs: folders holding the packages of `package://` mesh URIs; default `default_package_dirs()`.
        convex: replace meshes by their convex hulls (see the module docstring); False keeps BVH meshes.

    Raises:
        ModelError: no URDF text, a mesh that cannot be found or read, a malformed SRDF, or a URDF whose chain
            differs from `robot.model`.
    """
    xml = urdf_xml if urdf_xml is not None else robot.urdf_xml
    if not xml:
        raise ModelError(f"robot '{robot.name}' has no URDF text to read collision geometry from; pass urdf_xml")
    geometry_model = reduced_geometry_model(robot, xml, package_dirs if package_dirs is not None else
                                            default_package_dirs())
    if convex:
        _meshes_to_convex_hulls(geometry_model)
    geometry_model.addAllCollisionPairs()      # every pair on two different joints (rigid bodies)
    srdf_xml, srdf_name = _srdf_text(robot, srdf)
    disabled, unknown = _srdf_disabled_links(robot.model, srdf_xml, srdf_name) if srdf_xml else (set(), ())
    if disabled:
        _drop_pairs(geometry_model, lambda a, b: frozenset((link_name(robot.model, a), link_name(robot.model, b)))
                    in disabled)
        pair_filter = f"SRDF {srdf_name}: {len(disabled)} disabled link pairs"
    else:
        parents = robot.model.parents
        _drop_pairs(geometry_model, lambda a, b: parents[a.parentJoint] == b.parentJoint
                    or parents[b.parentJoint] == a.parentJoint)
        pair_filter = "adjacent links" + (f" (SRDF {srdf_name} disables no pair)" if srdf_xml else " (no SRDF)")
    pairs = tuple((int(cp.first), int(cp.second)) for cp in geometry_model.collisionPairs)
    return RobotGeometry(geometry_model, pairs, pair_filter, tuple(unknown))


def link_name(model: pin.Model, geometry: pin.GeometryObject) -> str:
    """The URDF link a geometry object belongs to (Pinocchio keeps it as the geometry's parent frame)."""
    return model.frames[geometry.parentFrame].name


def reduced_geometry_model(robot: RobotModel, xml: str, package_dirs: list[str],
                           geometry_type: pin.GeometryType = pin.GeometryType.COLLISION) -> pin.GeometryModel:
    """The URDF's <collision> (or <visual>) geometry placed on `robot.model`'s joints (the same joints locked).

    Raises:
        ModelError: the URDF cannot be parsed, a mesh cannot be found or read, or its joints differ from the robot's.
    """
    kind = "visual" if geometry_type == pin.GeometryType.VISUAL else "collision"
    try:
        full_model = pin.buildModelFromXML(xml)
    except Exception as err:   # pinocchio raises ValueError/RuntimeError with the parser's text
        raise ModelError(f"cannot parse URDF: {err}") from err
    try:
        geometry_model = pin.buildGeomFromUrdfString(full_model, xml, geometry_type, package_dirs=package_dirs)
    except Exception as err:
        raise ModelError(f"cannot load the {kind} geometry of '{robot.name}': {err} (package:// URIs were "
                         f"looked up in {package_dirs})") from err
    mismatch = ModelError(f"the URDF's joints {list(full_model.names)[1:]} differ from the robot's (chain "
                          f"{list(robot.model.names)[1:]}, locked {list(robot.locked_joint_names)}); pass the URDF "
                          "the robot was built from")
    known = all(full_model.existJointName(name) for name in robot.locked_joint_names)
    if full_model.nq != len(robot.full_reference_q) or not known:
        raise mismatch
    locked = [full_model.getJointId(name) for name in robot.locked_joint_names]
    reduced = full_model
    if locked:
        reduced, geometry_model = pin.buildReducedModel(full_model, geometry_model, locked,
                                                        robot.full_reference_q)
    if tuple(reduced.names) != tuple(robot.model.names) or reduced.nq != robot.model.nq:
        raise mismatch
    return geometry_model


def _meshes_to_convex_hulls(geometry_model: pin.GeometryModel) -> None:
    """Replace each mesh by its convex hull (qhull through coal).

    Not `buildConvexRepresentation`: that only relabels the mesh as a convex shape, and GJK's hill-climbing
    support function then returns wrong (too large) distances for a non-convex mesh.
    """
    for geometry in geometry_model.geometryObjects:
        shape = geometry.geometry
        if isinstance(shape, coal.BVHModelBase) and spans_volume(_vertices(shape)):    # a flat mesh stays a mesh
            geometry.geometry = convex_hull(_vertices(shape), f"collision mesh of '{geometry.name}'")


def _srdf_text(robot: RobotModel, srdf: str | Path | None) -> tuple[str, str]:
    """(SRDF XML, a name for messages); ("", "") when there is none."""
    if srdf is None:
        return embedded_srdf_text(robot.name) if robot.name in EMBEDDED_ROBOTS else ("", "")
    text = str(srdf)
    if text.lstrip().startswith("<"):
        return text, "(XML text)"
    path = Path(srdf)
    if not path.is_file():
        raise ModelError(f"SRDF file not found: {path}")
    return path.read_text(), str(path)


def _srdf_disabled_links(model: pin.Model, xml: str, name: str) -> tuple[set[frozenset[str]], list[str]]:
    """Disabled link pairs of an SRDF (links this model has), and the link names it does not have."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as err:
        raise ModelError(f"malformed SRDF {name}: {err}") from err
    disabled, unknown = set(), []
    for k, entry in enumerate(root.iter("disable_collisions")):
        links = (entry.get("link1"), entry.get("link2"))
        if not all(links):
            raise ModelError(f"malformed SRDF {name}: <disable_collisions> #{k} needs link1 and link2, "
                             f"got {dict(entry.attrib)}")
        missing = [link for link in links if not model.existBodyName(link)]
        unknown += [link for link in missing if link not in unknown]
        if not missing:
            disabled.add(frozenset(links))
    return disabled, unknown


def _drop_pairs(geometry_model: pin.GeometryModel, drop) -> None:
    objects = geometry_model.geometryObjects
    keep = [(cp.first, cp.second) for cp in geometry_model.collisionPairs
            if not drop(objects[cp.first], objects[cp.second])]
    geometry_model.removeAllCollisionPairs()
    for first, second in keep:
        geometry_model.addCollisionPair(pin.CollisionPair(first, second))


def bounding_spheres(geometry_model: pin.GeometryModel) -> tuple[np.ndarray, np.ndarray]:
    """Per geometry: a bounding sphere's centre in its parent joint's frame (k, 3) [m] and radius (k,) [m].

    The centre is the middle of the local AABB; the radius is the farthest vertex for point-based shapes (hulls,
    meshes), else the AABB's half diagonal.
    """
    centres, radii = [], []
    for geometry in geometry_model.geometryObjects:
        shape = geometry.geometry
        shape.computeLocalAABB()
        centre = np.array(shape.aabb_center, dtype=float)
        radius = float(shape.aabb_radius)
        points = _vertices(shape)
        if points is not None and len(points):
            radius = float(np.max(np.linalg.norm(points - centre, axis=1)))
        centres.append(geometry.placement.act(centre))
        radii.append(radius + float(shape.getSweptSphereRadius()))
    return np.array(centres).reshape(-1, 3), np.array(radii)


def _vertices(shape) -> np.ndarray | None:
    if isinstance(shape, coal.ConvexBase):
        return np.asarray(shape.points(), dtype=float).reshape(-1, 3)
    if isinstance(shape, coal.BVHModelBase):
        return np.asarray(shape.vertices(), dtype=float).reshape(-1, 3)
    return None


def spans_volume(points: np.ndarray) -> bool:
    """True when the points are not (nearly) coplanar; qhull crashes the process on flat input."""
    if points.ndim != 2 or points.shape[0] < 4 or points.shape[1] != 3 or not np.isfinite(points).all():
        return False
    singular = np.linalg.svd(points - points.mean(axis=0), compute_uv=False)
    return bool(singular[2] > 1e-6 * max(singular[0], 1e-12))


def convex_hull(points: np.ndarray, what: str) -> coal.ConvexBase:
    """coal's convex hull of points (k, 3) [m]; InvalidInputError when they span no volume."""
    if not spans_volume(points):
        raise InvalidInputError(f"{what}: {len(points)} vertices do not span a volume (coplanar or fewer than 4)")
    vertices = coal.StdVec_Vec3s()
    vertices.extend(list(points))
    return coal.ConvexBase.convexHull(vertices, False, "")
