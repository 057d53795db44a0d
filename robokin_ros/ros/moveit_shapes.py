"""CollisionObject shapes and poses -> robokin's: each shape's robokin shape, dimensions or mesh vertices, and
geometry_msgs/Pose -> SE3 with robokin's quaternion rule (used by ros/moveit_scene.py, which documents the rules)."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
from moveit_msgs.msg import CollisionObject
from shape_msgs.msg import SolidPrimitive

from robokin_ros.core.collision.scene_change import PRIMITIVE_SHAPES, SceneChange, SceneOperation
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.spatial import pose_from_xyzw
from robokin_ros.core.validation import check_vector

PRIMITIVE_NAMES = {SolidPrimitive.BOX: "BOX", SolidPrimitive.SPHERE: "SPHERE", SolidPrimitive.CYLINDER: "CYLINDER",
                   SolidPrimitive.CONE: "CONE", SolidPrimitive.PRISM: "PRISM"}
PRIMITIVE_SHAPES_BY_NAME = {shape: kind for kind, shape in PRIMITIVE_SHAPES.items()}


def object_shapes(msg: CollisionObject) -> list[tuple[str, str, tuple[float, ...], tuple]]:
    """(field for messages, robokin shape, dimensions [m], vertices [m]) per shape, primitives then meshes."""
    name = f"collision object '{msg.id}'"
    if msg.planes or msg.plane_poses:
        raise InvalidInputError(f"{name}: planes are not supported (robokin checks bounded shapes only; use a "
                                "large thin BOX); nothing of the object was applied")
    for shapes, poses, field in ((msg.primitives, msg.primitive_poses, "primitive"),
                                 (msg.meshes, msg.mesh_poses, "mesh")):
        if len(poses) > len(shapes):
            raise InvalidInputError(f"{name}: {len(poses)} {field}_poses for {len(shapes)} {field}s")
    if not msg.primitives and not msg.meshes:
        raise InvalidInputError(f"{name}: no shapes to add (primitives and meshes are empty)")
    out = []
    for i, primitive in enumerate(msg.primitives):
        kind = PRIMITIVE_NAMES.get(primitive.type, str(primitive.type))
        what = f"primitives[{i}] ({kind})"
        if primitive.type not in PRIMITIVE_SHAPES:
            hint = " (send a PRISM as a mesh of its corners)" if primitive.type == SolidPrimitive.PRISM else ""
            raise InvalidInputError(f"{name} {what}: not supported; supported: "
                                    + ", ".join(f"{PRIMITIVE_NAMES[k]}={k}" for k in PRIMITIVE_SHAPES) + hint)
        if len(primitive.polygon.points):
            raise InvalidInputError(f"{name} {what}: a polygon is only used by a PRISM, got "
                                    f"{len(primitive.polygon.points)} points")
        out.append((what, PRIMITIVE_SHAPES[primitive.type], tuple(float(d) for d in primitive.dimensions), ()))
    for i, mesh in enumerate(msg.meshes):
        out.append((f"meshes[{i}]", "mesh", (), mesh_vertices(mesh, f"{name} meshes[{i}]")))
    return out


def mesh_vertices(mesh, what: str) -> tuple[tuple[float, float, float], ...]:
    """shape_msgs/Mesh -> the vertices [m] its triangles use (all of them when it has none): robokin checks their
    convex hull. Raises InvalidInputError for a triangle naming a missing vertex."""
    vertices = np.array([(v.x, v.y, v.z) for v in mesh.vertices], dtype=float).reshape(-1, 3)    # (k, 3)
    if len(mesh.triangles):
        indices = np.array([t.vertex_indices for t in mesh.triangles], dtype=np.int64).reshape(-1, 3)
        bad = np.flatnonzero((indices >= len(vertices)).any(axis=1))
        if bad.size:
            raise InvalidInputError(f"{what}: triangle {int(bad[0])} names vertex {int(indices[bad[0]].max())}, the "
                                    f"mesh has {len(vertices)} vertices")
        vertices = vertices[np.unique(indices)]          # the shape MoveIt checks: vertices its triangles use
    return tuple((float(x), float(y), float(z)) for x, y, z in vertices)


def object_and_shape_poses(msg: CollisionObject, count: int) -> tuple[pin.SE3, list[pin.SE3]]:
    """(header_T_object, [object_T_shape] primitives then meshes) of an ADD or APPEND of `count` shapes; a missing
    shape pose is identity, and one shape with an unset object pose gives its pose to the object (MoveIt's rule)."""
    name = f"collision object '{msg.id}'"
    pose_msgs = [*msg.primitive_poses, *([None] * (len(msg.primitives) - len(msg.primitive_poses))),
                 *msg.mesh_poses, *([None] * (len(msg.meshes) - len(msg.mesh_poses)))]
    poses = [pin.SE3.Identity() if p is None else se3(p, f"{name} shape pose {i}") for i, p in enumerate(pose_msgs)]
    if count == 1 and unset(msg.pose):      # MoveIt: the one shape's pose becomes the object's
        return poses[0], [pin.SE3.Identity()]
    return se3(msg.pose, f"{name} pose"), poses


def unset(pose) -> bool:
    """True for the default geometry_msgs/Pose (origin, identity), as MoveIt's isEmpty tests it."""
    p, q = pose.position, pose.orientation
    return (p.x, p.y, p.z, q.x, q.y, q.z, q.w) == (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)


def se3(pose, what: str) -> pin.SE3:
    """geometry_msgs/Pose -> SE3, with robokin's one rule for quaternions (core/spatial.py, tf2's tolerance):
    normalised when its squared norm is within 0.01 of 1, refused otherwise (a zero quaternion is not a rotation)."""
    p, o = pose.position, pose.orientation
    position = check_vector(f"{what} position", (p.x, p.y, p.z), 3)
    q = check_vector(f"{what} orientation", (o.x, o.y, o.z, o.w), 4)
    return pose_from_xyzw(position, q, f"{what}: orientation")


def scene_change(operation: SceneOperation, part: str, frame: str, frame_T_part: pin.SE3, primitive_type: int = 0,
                 dimensions: tuple[float, ...] = (), vertices: tuple = ()) -> SceneChange:
    """A SceneChange placing robokin object `part` at `frame_T_part` (its pose in `frame`)."""
    x, y, z, w = pin.Quaternion(frame_T_part.rotation).coeffs()
    return SceneChange(int(operation), part, frame, np.array(frame_T_part.translation), np.array((x, y, z, w)),
                       primitive_type, dimensions, vertices)


def removal(part: str) -> SceneChange:
    """A SceneChange removing robokin object `part`."""
    return SceneChange(int(SceneOperation.REMOVE), part, "", np.zeros(3), np.array((0.0, 0.0, 0.0, 1.0)))
