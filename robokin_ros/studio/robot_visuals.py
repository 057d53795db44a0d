"""The robot's meshes for the browser: triangles read from Pinocchio's geometry model, placed by Pinocchio's FK.

Pinocchio (through coal and assimp) already loads every URDF <visual> mesh, with its scale, into a triangle
model; the studio reads the triangles out of it once instead of parsing meshes a second time, and places each one
with `pin.updateGeometryPlacements` at every configuration. Primitive shapes (box, cylinder, sphere, capsule)
become triangle meshes through trimesh, which viser already depends on.

Heavy meshes are simplified to a triangle budget with fast_simplification (quadric edge collapse, pyvista's
library): a browser without a GPU (SwiftShader, as in CI) spends its frame on triangles, and an arm's silhouette
survives a 4x reduction. Each mesh keeps its share of the budget; `triangle_budget=None` keeps every triangle.

Everything is in the robot's base frame: the studio's world is the base (so tool poses read as the nodes'
`base_frame` poses).
"""
from __future__ import annotations

from dataclasses import dataclass

import coal
import fast_simplification
import numpy as np
import numpy.typing as npt
import pinocchio as pin
import trimesh

from robokin_ros.core.collision.geometry import default_package_dirs, reduced_geometry_model
from robokin_ros.core.errors import ModelError
from robokin_ros.core.robot import RobotModel

Array = npt.NDArray[np.float64]
DEFAULT_RGBA = (0.82, 0.82, 0.85, 1.0)
DEFAULT_TRIANGLE_BUDGET = 30000
MIN_TRIANGLES = 200           # below this a mesh is left whole: small parts lose their shape first


@dataclass(frozen=True)
class LinkMesh:
    """One <visual> element as triangles in its own geometry frame."""

    name: str                              # Pinocchio's geometry name (<link>_<k>)
    joint_index: int                       # chain joint (0..n-1) that moves it; -1 = fixed to the base
    vertices: npt.NDArray[np.float32]      # (k, 3) [m], geometry frame
    faces: npt.NDArray[np.uint32]          # (m, 3)
    rgba: tuple[float, float, float, float]


def _primitive_mesh(shape) -> trimesh.Trimesh | None:
    if isinstance(shape, coal.Box):
        return trimesh.creation.box(extents=2.0 * np.asarray(shape.halfSide))
    if isinstance(shape, coal.Cylinder):
        return trimesh.creation.cylinder(radius=shape.radius, height=2.0 * shape.halfLength, sections=24)
    if isinstance(shape, coal.Sphere):
        return trimesh.creation.icosphere(subdivisions=2, radius=shape.radius)
    if isinstance(shape, coal.Capsule):
        return trimesh.creation.capsule(height=2.0 * shape.halfLength, radius=shape.radius, count=(16, 16))
    return None


def _triangles(shape, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(vertices, faces) of a coal shape; raises ModelError for a shape the browser cannot draw."""
    primitive = _primitive_mesh(shape)
    if primitive is not None:
        return np.asarray(primitive.vertices, np.float32), np.asarray(primitive.faces, np.uint32)
    if isinstance(shape, coal.BVHModelBase) and shape.num_tris > 0:
        vertices = np.asarray(shape.vertices(), np.float32)                       # (k, 3)
        faces = np.array([[t[0], t[1], t[2]] for t in map(shape.tri_indices, range(shape.num_tris))],
                         np.uint32)                                               # (m, 3)
        return vertices, faces
    raise ModelError(f"visual geometry '{name}' is a {type(shape).__name__}, which the studio cannot draw")


def simplified(vertices: np.ndarray, faces: np.ndarray, target: int) -> tuple[np.ndarray, np.ndarray]:
    """The mesh with about `target` triangles (unchanged when it has fewer, or at most MIN_TRIANGLES)."""
    target = max(target, MIN_TRIANGLES)
    if len(faces) <= target:
        return vertices, faces
    # agg=3 (not the default 7): the default wears the UR5's shoulder down by 13 mm at the same triangle count
    points, triangles = fast_simplification.simplify(vertices, faces.astype(np.int32),
                                                     target_reduction=1.0 - target / len(faces), agg=3)
    return np.asarray(points, np.float32), np.asarray(triangles, np.uint32)


class RobotVisuals:
    """The chain's visual meshes and their base-frame poses at any configuration."""

    def __init__(self, robot: RobotModel, package_dirs: list[str] | None = None,
                 triangle_budget: int | None = DEFAULT_TRIANGLE_BUDGET) -> None:
        if not robot.urdf_xml:
            raise ModelError(f"robot '{robot.name}' has no URDF text to read its meshes from")
        dirs = package_dirs if package_dirs is not None else default_package_dirs()
        self.robot = robot
        self.geometry_model = reduced_geometry_model(robot, robot.urdf_xml, dirs, pin.GeometryType.VISUAL)
        self.geometry_data = pin.GeometryData(self.geometry_model)
        self._data = robot.model.createData()
        self._base_T_world = robot.world_T_base.inverse()
        self.meshes: list[LinkMesh] = []
        shapes = [_triangles(g.geometry, g.name) for g in self.geometry_model.geometryObjects]
        total = sum(len(faces) for _, faces in shapes)
        for geometry, (vertices, faces) in zip(self.geometry_model.geometryObjects, shapes):
            if triangle_budget is not None and total > triangle_budget:
                vertices, faces = simplified(vertices, faces, int(triangle_budget * len(faces) / total))
            rgba = tuple(float(c) for c in geometry.meshColor)
            # Pinocchio's default colour for a mesh without a URDF material is a flat grey; keep ours instead
            rgba = rgba if geometry.overrideMaterial else DEFAULT_RGBA
            self.meshes.append(LinkMesh(geometry.name, geometry.parentJoint - 1, vertices, faces, rgba))

    @property
    def triangle_count(self) -> int:
        return sum(len(m.faces) for m in self.meshes)

    def poses(self, positions: npt.ArrayLike) -> tuple[Array, Array]:
        """Base-frame poses of every mesh at `positions`: translations (k, 3) [m] and quaternions (k, 4) w, x, y, z.

        Raises:
            InvalidInputError: positions of the wrong size or with NaN/inf.
        """
        q = self.robot.to_pinocchio_q(self.robot.check_positions(positions))
        pin.forwardKinematics(self.robot.model, self._data, q)
        pin.updateGeometryPlacements(self.robot.model, self._data, self.geometry_model, self.geometry_data)
        k = len(self.meshes)
        translations, quaternions = np.empty((k, 3)), np.empty((k, 4))
        for i, world_T_geometry in enumerate(self.geometry_data.oMg):
            base_T_geometry = self._base_T_world * world_T_geometry
            translations[i] = base_T_geometry.translation
            x, y, z, w = pin.Quaternion(base_T_geometry.rotation).coeffs()
            quaternions[i] = (w, x, y, z)
        return translations, quaternions
