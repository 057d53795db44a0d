"""MoveIt's collision world -> robokin scene changes: moveit_msgs/CollisionObject (MoveIt's `/collision_object`) and
the world of a moveit_msgs/PlanningScene (`/monitored_planning_scene`), as `SceneChange`s for `Servo.update_scene`.

The semantics follow MoveIt's own world (moveit_core planning_scene.cpp, Jazzy), so robokin's copy agrees with what
MoveIt and RViz show:

- ADD creates the object or replaces the one with the same id; APPEND adds shapes to an existing object (relative to
  its pose as last given; the message's own pose is then unused, as in MoveIt) or creates it; MOVE gives the object
  a new pose, and its shapes new poses relative to it when the message lists one per shape; REMOVE removes it, and
  an empty id removes every object that MoveIt messages made (the scene file's and `~/scene_objects`' stay).
- The object's pose is `pose` in `header.frame_id` ("" = the robot's base frame, robokin's convention); shape i sits
  at `pose * primitive_poses[i]` (missing shape poses are identity). One shape with an unset `pose` takes its shape
  pose as the object pose (MoveIt's rule; it matters for a later MOVE).
- A robokin object holds one shape, so a MoveIt object of n shapes becomes n robokin objects: the first keeps the
  MoveIt id (what statuses and markers name for the common one-shape object), the others are `id/1`, `id/2`, ...
- BOX, SPHERE, CYLINDER and CONE map to robokin's shapes, a shape_msgs/Mesh to the convex hull of the vertices its
  triangles use (all vertices when it has no triangles): robokin sets no size bound of its own on meshes, so none
  is added here. PRISM and planes are refused, and the whole object with them: checking part of an object would
  look like protection it does not give.
- Fields robokin has no use for are named in `notes` (never dropped silently): subframes and the object type of a
  CollisionObject; of a PlanningScene, attached objects, the octomap, allowed-collision entries of world objects and
  link padding/scale. The rest of a PlanningScene (robot state, model name, fixed frames, colours) does not change
  the world's geometry.
"""
from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from typing import Union

import pinocchio as pin
from moveit_msgs.msg import CollisionObject, PlanningScene

from robokin_ros.core.collision.scene import SceneObject
from robokin_ros.core.collision.scene_change import SceneChange, SceneOperation
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.ros.moveit_shapes import (PRIMITIVE_SHAPES_BY_NAME, object_and_shape_poses, object_shapes, removal,
                                           scene_change, se3)

OCTOMAP_ID = "<octomap>"                 # MoveIt reserves this id for its occupancy map
OPERATIONS = {0: "ADD", 1: "REMOVE", 2: "APPEND", 3: "MOVE"}
MoveItMessage = Union[CollisionObject, PlanningScene]


@dataclass(frozen=True)
class MoveItObject:
    """A MoveIt collision object as robokin holds it: its pose as last given and one robokin object per shape."""

    frame: str                               # frame of `frame_T_object` ("" = base)
    frame_T_object: pin.SE3
    parts: tuple[str, ...]                   # robokin ids: id, id/1, ...
    object_T_parts: tuple[pin.SE3, ...]


@dataclass(frozen=True)
class MoveItSceneUpdate:
    """What one message does: the changes to apply in order, the MoveIt objects once they are applied, sentences on
    what was received and not used, and (PlanningScene only) the objects refused, each a sentence."""

    changes: tuple[SceneChange, ...]
    objects: Mapping[str, MoveItObject]
    notes: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


def scene_changes_from_collision_object(msg: CollisionObject,
                                        objects: Mapping[str, MoveItObject] | None = None) -> list[SceneChange]:
    """The changes a CollisionObject makes to a scene holding the MoveIt `objects` (default none).

    Raises:
        InvalidInputError: see `collision_object_update`.
    """
    return list(collision_object_update(msg, objects or {}).changes)


def scene_changes_from_planning_scene(msg: PlanningScene,
                                      objects: Mapping[str, MoveItObject] | None = None) -> list[SceneChange]:
    """The changes a PlanningScene's world makes to a scene holding the MoveIt `objects` (default none); refused
    objects are left out (`planning_scene_update` names them)."""
    return list(planning_scene_update(msg, objects or {}).changes)


def collision_object_update(msg: CollisionObject, objects: Mapping[str, MoveItObject]) -> MoveItSceneUpdate:
    """One CollisionObject applied to the MoveIt `objects` (not modified).

    Raises:
        InvalidInputError: an unknown operation, the reserved id, an object to move or remove that MoveIt messages did
            not make, no shapes to add, more shape poses than shapes, a PRISM, a plane, a primitive or mesh robokin
            rejects (dimensions, vertices spanning no volume, a triangle naming a missing vertex), a pose with NaN or
            a quaternion that is not a rotation, a MOVE whose shape poses do not match the object's shapes, or a
            shape id taken by another MoveIt object. The message names the object and the field.
    """
    work = dict(objects)
    changes: list[SceneChange] = []
    notes: list[str] = []
    operation = msg.operation[0] if isinstance(msg.operation, bytes) else int(msg.operation)
    if msg.id == OCTOMAP_ID:
        raise InvalidInputError(f"collision object id '{OCTOMAP_ID}' is reserved by MoveIt for the octomap")
    if operation in (CollisionObject.ADD[0], CollisionObject.APPEND[0]):
        _add(msg, operation == CollisionObject.APPEND[0], work, changes)
        notes += _object_notes(msg)
    elif operation == CollisionObject.REMOVE[0]:
        _remove(msg.id, work, changes)
    elif operation == CollisionObject.MOVE[0]:
        notes += _move(msg, work, changes)
    else:
        raise InvalidInputError(f"collision object '{msg.id}': unknown operation {operation}; valid: "
                                + ", ".join(f"{name}={value}" for value, name in OPERATIONS.items()))
    return MoveItSceneUpdate(tuple(changes), work, tuple(notes))


def planning_scene_update(msg: PlanningScene, objects: Mapping[str, MoveItObject]) -> MoveItSceneUpdate:
    """A PlanningScene's world applied to the MoveIt `objects` (not modified). A diff (`is_diff`) applies its
    collision objects in order; a full scene replaces the MoveIt objects with its own (objects kept by id are
    replaced in place, never removed and added again, so they are checked throughout). A refused object is named
    in `problems` and the others still apply, as in MoveIt."""
    work = dict(objects) if msg.is_diff else {}
    changes: list[SceneChange] = []
    notes: list[str] = []
    problems: list[str] = []
    for obj in msg.world.collision_objects:
        try:
            single = collision_object_update(obj, work)
        except InvalidInputError as err:
            problems.append(str(err))
            continue
        work = dict(single.objects)
        changes += single.changes
        notes += single.notes
    if not msg.is_diff:
        kept = {part for obj in work.values() for part in obj.parts}
        changes += [removal(part) for obj in objects.values() for part in obj.parts if part not in kept]
    return MoveItSceneUpdate(tuple(changes), work, tuple(notes + _scene_notes(msg, work)), tuple(problems))


class MoveItSceneMirror:
    """The MoveIt objects robokin holds, updated message by message. Call `update` when the changes are about to be
    applied, all of them before the next message: with `present` (the ids in the scene now), objects whose shapes
    were since removed or never applied (a frame TF did not know) are forgotten first."""

    def __init__(self) -> None:
        self.objects: dict[str, MoveItObject] = {}

    def update(self, msg: MoveItMessage, present: Collection[str] | None = None) -> MoveItSceneUpdate:
        """The update `msg` makes (see `collision_object_update`, `planning_scene_update`); the mirror keeps its
        result. Raises InvalidInputError for a refused CollisionObject (the mirror is then unchanged)."""
        known = self.objects if present is None else _only_present(self.objects, frozenset(present))
        if isinstance(msg, CollisionObject):
            update = collision_object_update(msg, known)
        else:
            update = planning_scene_update(msg, known)
        self.objects = dict(update.objects)
        return update


# ---- operations -------------------------------------------------------------------------------------------------
def _add(msg: CollisionObject, append: bool, work: dict[str, MoveItObject], changes: list[SceneChange]) -> None:
    if not msg.id:
        raise InvalidInputError("collision object: an ADD or APPEND needs an id")
    shapes = object_shapes(msg)
    frame_T_object, object_T_shapes = object_and_shape_poses(msg, len(shapes))
    existing = work.get(msg.id)
    frame = msg.header.frame_id
    if append and existing is not None:      # MoveIt keeps the object's pose; the message's shape poses are on it
        frame, frame_T_object = existing.frame, existing.frame_T_object
        kept_parts, kept_poses = existing.parts, existing.object_T_parts
    else:
        kept_parts, kept_poses = (), ()
    new_parts = _free_part_ids(msg.id, kept_parts, len(shapes))
    _check_parts_are_free(msg.id, new_parts, work)
    for part, (what, shape, dimensions, vertices) in zip(new_parts, shapes):
        try:                                                   # robokin's own checks, before anything is applied
            SceneObject(part, shape, dimensions, vertices=vertices)
        except InvalidInputError as err:
            raise InvalidInputError(f"collision object '{msg.id}' {what}: {err}") from None
    for part, (_, shape, dimensions, vertices), object_T_shape in zip(new_parts, shapes, object_T_shapes):
        changes.append(scene_change(SceneOperation.ADD, part, frame, frame_T_object * object_T_shape,
                                    PRIMITIVE_SHAPES_BY_NAME.get(shape, 0), dimensions, vertices))
    if existing is not None and not append:   # replaced in place first, so the object is never missing
        changes += [removal(part) for part in existing.parts if part not in new_parts]
    work[msg.id] = MoveItObject(frame, frame_T_object, kept_parts + new_parts, kept_poses + tuple(object_T_shapes))


def _remove(object_id: str, work: dict[str, MoveItObject], changes: list[SceneChange]) -> None:
    if not object_id:                         # MoveIt: an empty id clears the world
        changes += [removal(part) for obj in work.values() for part in obj.parts]
        work.clear()
        return
    changes += [removal(part) for part in _known(object_id, work, "remove").parts]
    del work[object_id]


def _move(msg: CollisionObject, work: dict[str, MoveItObject], changes: list[SceneChange]) -> list[str]:
    existing = _known(msg.id, work, "move")
    notes = []
    if msg.primitives or msg.meshes or msg.planes:
        notes.append(f"collision object '{msg.id}': MOVE does not use the shapes in the message (as in MoveIt)")
    frame_T_object = se3(msg.pose, f"collision object '{msg.id}' pose")
    shape_poses = [*msg.primitive_poses, *msg.mesh_poses, *msg.plane_poses]
    object_T_parts = existing.object_T_parts
    if shape_poses:
        if len(shape_poses) != len(existing.parts):
            raise InvalidInputError(f"collision object '{msg.id}': MOVE gives {len(shape_poses)} shape poses, the "
                                    f"object has {len(existing.parts)} shapes (give all or none)")
        object_T_parts = tuple(se3(p, f"collision object '{msg.id}' shape pose {i}")
                               for i, p in enumerate(shape_poses))
    for part, object_T_part in zip(existing.parts, object_T_parts):
        changes.append(scene_change(SceneOperation.MOVE, part, msg.header.frame_id, frame_T_object * object_T_part))
    work[msg.id] = replace(existing, frame=msg.header.frame_id, frame_T_object=frame_T_object,
                           object_T_parts=object_T_parts)
    return notes


# ---- ids --------------------------------------------------------------------------------------------------------
def _part_id(object_id: str, index: int) -> str:
    return object_id if index == 0 else f"{object_id}/{index}"


def _free_part_ids(object_id: str, taken: tuple[str, ...], count: int) -> tuple[str, ...]:
    ids: list[str] = []
    index = 0
    while len(ids) < count:
        if _part_id(object_id, index) not in taken:
            ids.append(_part_id(object_id, index))
        index += 1
    return tuple(ids)


def _check_parts_are_free(object_id: str, parts: tuple[str, ...], work: Mapping[str, MoveItObject]) -> None:
    for other_id, other in work.items():
        clash = sorted(set(parts) & set(other.parts)) if other_id != object_id else []
        if clash:
            raise InvalidInputError(f"collision object '{object_id}': robokin id '{clash[0]}' of one of its shapes "
                                    f"is taken by collision object '{other_id}' (shape i > 0 of object X is "
                                    "'X/i'); rename one of them")


def _known(object_id: str, work: Mapping[str, MoveItObject], verb: str) -> MoveItObject:
    if object_id not in work:
        raise InvalidInputError(f"cannot {verb} collision object '{object_id}': no MoveIt object has that id; "
                                f"MoveIt objects: {sorted(work)}")
    return work[object_id]


def _only_present(objects: Mapping[str, MoveItObject], present: frozenset[str]) -> dict[str, MoveItObject]:
    """The objects with their shapes that are in the scene; an object none of whose shapes is left is dropped."""
    kept = {}
    for object_id, obj in objects.items():
        pairs = [(part, pose) for part, pose in zip(obj.parts, obj.object_T_parts) if part in present]
        if pairs:
            kept[object_id] = replace(obj, parts=tuple(p for p, _ in pairs),
                                      object_T_parts=tuple(t for _, t in pairs))
    return kept


# ---- notes ------------------------------------------------------------------------------------------------------
def _object_notes(msg: CollisionObject) -> list[str]:
    notes = []
    if len(msg.subframe_names) or len(msg.subframe_poses):
        notes.append(f"collision object '{msg.id}': subframes {list(msg.subframe_names)} not used (robokin has no "
                     "subframes; they name planning targets, not geometry)")
    if msg.type.key or msg.type.db:
        notes.append(f"collision object '{msg.id}': object type (key '{msg.type.key}') not used")
    return notes


def _scene_notes(msg: PlanningScene, work: Mapping[str, MoveItObject]) -> list[str]:
    notes = []
    attached = msg.robot_state.attached_collision_objects
    if len(attached):
        notes.append("planning scene: attached objects "
                     f"{[(a.object.id, a.link_name) for a in attached]} not checked (robokin checks the arm's own "
                     "geometry; an object carried by the arm is not part of it)")
    if len(msg.world.octomap.octomap.data):
        notes.append("planning scene: octomap not checked (robokin checks no occupancy map)")
    allowed = sorted(set(msg.allowed_collision_matrix.entry_names) & set(work))
    if allowed:
        notes.append(f"planning scene: allowed collisions of {allowed} not used (robokin checks those pairs too)")
    if any(p.padding != 0.0 for p in msg.link_padding) or any(s.scale != 1.0 for s in msg.link_scale):
        notes.append("planning scene: link padding and scale not used (robokin keeps "
                     "min_allowable_collision_distance instead)")
    return notes
