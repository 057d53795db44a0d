"""Runtime changes to the collision scene (robokin_interfaces/SceneObject carries them): add, move or remove an
object, its pose given in any frame and fixed in the base frame on arrival."""
from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from robokin_ros.core.collision.clearance import ClearanceChecker
from robokin_ros.core.collision.scene import SceneObject
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.spatial import pose_from_xyzw
from robokin_ros.core.validation import check_vector

# shape_msgs/SolidPrimitive's type constants -> the scene's shape names
PRIMITIVE_SHAPES = {1: "box", 2: "sphere", 3: "cylinder", 4: "cone"}


class SceneOperation(enum.IntEnum):
    """The constants of robokin_interfaces/msg/SceneObject."""

    ADD = 0
    MOVE = 1
    REMOVE = 2


@dataclass(frozen=True)
class SceneChange:
    """One change as received; `position`/`orientation` are in `frame` ("" = base)."""

    operation: int
    id: str
    frame: str
    position: np.ndarray                       # (3,) [m]
    orientation: np.ndarray                    # (4,) x, y, z, w
    primitive_type: int = 0                    # shape_msgs/SolidPrimitive type (ADD without vertices)
    dimensions: tuple[float, ...] = ()         # [m] SolidPrimitive order
    vertices: tuple[tuple[float, float, float], ...] = ()    # [m] object frame (ADD as a mesh)


def apply_scene_change(checker: ClearanceChecker, change: SceneChange, base_T_frame: pin.SE3) -> str:
    """Apply `change` to `checker`'s scene, its pose placed by `base_T_frame` (the pose of `change.frame` in the
    base frame now); returns a sentence saying what changed.

    Raises:
        InvalidInputError: an unknown operation or primitive type, an unknown id to move or remove, an empty id,
            NaN/inf, a quaternion that is not a rotation, or dimensions that do not fit the shape.
    """
    if not change.id:
        raise InvalidInputError("scene object id is empty")
    try:
        operation = SceneOperation(change.operation)
    except ValueError:
        raise InvalidInputError(f"scene object '{change.id}': unknown operation {change.operation}; valid: "
                                + ", ".join(f"{op.name}={int(op)}" for op in SceneOperation)) from None
    if operation == SceneOperation.REMOVE:
        checker.remove_object(change.id)
        return f"scene object '{change.id}' removed"
    base_T_object = base_T_frame * _frame_T_object(change)
    position = tuple(float(v) for v in base_T_object.translation)
    x, y, z, w = pin.Quaternion(base_T_object.rotation).coeffs()
    orientation = (float(x), float(y), float(z), float(w))
    if operation == SceneOperation.MOVE:
        checker.move_object(change.id, position, orientation)
        return f"scene object '{change.id}' moved to {np.round(position, 3).tolist()} m"
    if change.vertices:
        obj = SceneObject(change.id, "mesh", position=position, orientation=orientation, vertices=change.vertices)
    else:
        shape = PRIMITIVE_SHAPES.get(change.primitive_type)
        if shape is None:
            raise InvalidInputError(f"scene object '{change.id}': primitive type {change.primitive_type} is not one "
                                    f"of {PRIMITIVE_SHAPES} and the mesh has no vertices")
        obj = SceneObject(change.id, shape, tuple(change.dimensions), position, orientation)
    checker.add_object(obj)
    return f"scene object '{change.id}' ({obj.shape}) added at {np.round(position, 3).tolist()} m"


def _frame_T_object(change: SceneChange) -> pin.SE3:
    p = check_vector(f"scene object '{change.id}' position", change.position, 3)
    q = check_vector(f"scene object '{change.id}' orientation", change.orientation, 4)
    return pose_from_xyzw(p, q, f"scene object '{change.id}': orientation")
