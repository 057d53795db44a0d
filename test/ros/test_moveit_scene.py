"""MoveIt's collision world -> robokin scene changes (ros/moveit_scene.py): every operation, primitive and refusal,
pose composition checked against scipy's rotations, and the changes applied to a real ClearanceChecker."""
import math

import numpy as np
import pinocchio as pin
import pytest
from geometry_msgs.msg import Point, Point32, Pose
from hypothesis import given, settings
from hypothesis import strategies as st
from moveit_msgs.msg import AttachedCollisionObject, CollisionObject, LinkPadding, PlanningScene
from scipy.spatial.transform import Rotation
from shape_msgs.msg import Mesh, MeshTriangle, Plane, SolidPrimitive

from robokin_ros.core.collision.clearance import ClearanceChecker
from robokin_ros.core.collision.scene_change import SceneOperation, apply_scene_change
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.ros.moveit_scene import (MoveItSceneMirror, collision_object_update, planning_scene_update,
                                          scene_changes_from_collision_object, scene_changes_from_planning_scene)

ADD, MOVE, REMOVE = int(SceneOperation.ADD), int(SceneOperation.MOVE), int(SceneOperation.REMOVE)
BOX = SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[0.1, 0.2, 0.3])
SPHERE = SolidPrimitive(type=SolidPrimitive.SPHERE, dimensions=[0.05])
CYLINDER = SolidPrimitive(type=SolidPrimitive.CYLINDER, dimensions=[0.4, 0.02])
CONE = SolidPrimitive(type=SolidPrimitive.CONE, dimensions=[0.3, 0.1])
# a tetrahedron and a square in one plane
TETRA = [(0.0, 0.0, 0.0), (0.1, 0.0, 0.0), (0.0, 0.1, 0.0), (0.0, 0.0, 0.1)]


def pose(x=0.0, y=0.0, z=0.0, yaw=0.0) -> Pose:
    msg = Pose()
    msg.position.x, msg.position.y, msg.position.z = float(x), float(y), float(z)
    msg.orientation.z, msg.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
    return msg


def obj(object_id="thing", operation=CollisionObject.ADD, frame="world", object_pose=None, primitives=(),
        primitive_poses=(), meshes=(), mesh_poses=()) -> CollisionObject:
    msg = CollisionObject(id=object_id, operation=operation, primitives=list(primitives),
                          primitive_poses=list(primitive_poses), meshes=list(meshes), mesh_poses=list(mesh_poses))
    msg.header.frame_id = frame
    if object_pose is not None:
        msg.pose = object_pose
    return msg


def mesh(vertices, triangles=()) -> Mesh:
    return Mesh(vertices=[Point(x=float(x), y=float(y), z=float(z)) for x, y, z in vertices],
                triangles=[MeshTriangle(vertex_indices=list(t)) for t in triangles])


def summary(changes):
    return [(c.operation, c.id) for c in changes]


# ---- ADD --------------------------------------------------------------------------------------------------------
def test_add_composes_the_object_pose_with_each_shape_pose_in_the_header_frame():
    # object at (1, 0, 0) turned 90 deg about z; its shape 0.1 m along the object's x -> (1, 0.1, 0) in `world`
    msg = obj(object_pose=pose(1.0, yaw=math.pi / 2), primitives=[BOX], primitive_poses=[pose(0.1)])
    (change,) = scene_changes_from_collision_object(msg)
    assert (change.operation, change.id, change.frame, change.primitive_type) == (ADD, "thing", "world", 1)
    np.testing.assert_allclose(change.position, [1.0, 0.1, 0.0], atol=1e-12)
    np.testing.assert_allclose(change.orientation, [0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4)])
    assert change.dimensions == (0.1, 0.2, 0.3)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_shape_placement_agrees_with_scipy_rotations(seed):
    rng = np.random.default_rng(seed)
    (q_obj, q_shape), (p_obj, p_shape) = rng.standard_normal((2, 4)), rng.uniform(-1, 1, (2, 3))
    object_pose, shape_pose = Pose(), Pose()
    for msg, p, q in ((object_pose, p_obj, q_obj), (shape_pose, p_shape, q_shape)):
        q = q / np.linalg.norm(q)
        msg.position.x, msg.position.y, msg.position.z = p.tolist()
        msg.orientation.x, msg.orientation.y, msg.orientation.z, msg.orientation.w = q.tolist()
    (change,) = scene_changes_from_collision_object(obj(object_pose=object_pose, primitives=[SPHERE],
                                                        primitive_poses=[shape_pose]))
    r_obj, r_shape = Rotation.from_quat(q_obj), Rotation.from_quat(q_shape)     # scipy: (x, y, z, w)
    np.testing.assert_allclose(change.position, r_obj.apply(p_shape) + p_obj, atol=1e-9)
    expected = (r_obj * r_shape).as_quat()
    assert min(np.abs(change.orientation - expected).max(), np.abs(change.orientation + expected).max()) < 1e-9


def test_each_primitive_maps_to_its_robokin_shape_and_several_shapes_become_id_id_1_id_2():
    msg = obj(primitives=[BOX, SPHERE, CYLINDER, CONE], primitive_poses=[pose(0.1), pose(0.2)])
    changes = scene_changes_from_collision_object(msg)
    assert [(c.id, c.primitive_type, c.dimensions) for c in changes] == [
        ("thing", 1, (0.1, 0.2, 0.3)), ("thing/1", 2, (0.05,)), ("thing/2", 3, (0.4, 0.02)),
        ("thing/3", 4, (0.3, 0.1))]
    # poses missing at the end are identity: on the object's origin
    np.testing.assert_allclose([c.position[0] for c in changes], [0.1, 0.2, 0.0, 0.0])


def test_one_shape_with_an_unset_object_pose_takes_the_shape_pose_as_the_object_pose():
    update = collision_object_update(obj(primitives=[BOX], primitive_poses=[pose(0.3, yaw=1.0)]), {})
    np.testing.assert_allclose(update.changes[0].position, [0.3, 0.0, 0.0])
    # MoveIt's rule: a later MOVE places the shape exactly at the new object pose (not pose * old shape pose)
    (moved,) = collision_object_update(obj(operation=CollisionObject.MOVE, object_pose=pose(0.0, 0.5)),
                                       update.objects).changes
    np.testing.assert_allclose(moved.position, [0.0, 0.5, 0.0], atol=1e-12)
    np.testing.assert_allclose(moved.orientation, [0.0, 0.0, 0.0, 1.0], atol=1e-12)


def test_add_over_an_object_replaces_it_in_place_and_then_removes_its_extra_shapes():
    first = collision_object_update(obj(primitives=[BOX, SPHERE, CONE]), {})
    again = collision_object_update(obj(primitives=[CYLINDER], object_pose=pose(0.2)), first.objects)
    assert summary(again.changes) == [(ADD, "thing"), (REMOVE, "thing/1"), (REMOVE, "thing/2")]
    assert again.objects["thing"].parts == ("thing",)


def test_a_mesh_is_the_vertices_its_triangles_use_or_all_without_triangles():
    stray = (5.0, 5.0, 5.0)
    msg = obj(meshes=[mesh(TETRA + [stray], [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)]), mesh(TETRA)],
              primitives=[SPHERE])
    sphere, with_triangles, without = scene_changes_from_collision_object(msg)
    assert (sphere.id, with_triangles.id, without.id) == ("thing", "thing/1", "thing/2")   # primitives first
    assert set(with_triangles.vertices) == set(TETRA) and with_triangles.primitive_type == 0
    assert without.vertices == tuple(TETRA)


# ---- APPEND, MOVE, REMOVE ---------------------------------------------------------------------------------------
def test_append_adds_shapes_on_the_objects_pose_as_last_given_and_creates_a_missing_object():
    first = collision_object_update(obj(object_pose=pose(1.0, yaw=math.pi / 2), primitives=[BOX, SPHERE]), {})
    appended = collision_object_update(obj(operation=CollisionObject.APPEND, frame="elsewhere",
                                           object_pose=pose(9.0), primitives=[CONE, BOX],
                                           primitive_poses=[pose(0.1), pose(0.2)]), first.objects)
    assert summary(appended.changes) == [(ADD, "thing/2"), (ADD, "thing/3")]
    # the message's own pose and frame are unused, as in MoveIt: the shapes sit on the existing object
    assert {c.frame for c in appended.changes} == {"world"}
    np.testing.assert_allclose(appended.changes[0].position, [1.0, 0.1, 0.0], atol=1e-12)
    assert appended.objects["thing"].parts == ("thing", "thing/1", "thing/2", "thing/3")
    created = collision_object_update(obj("new", operation=CollisionObject.APPEND, primitives=[BOX]), {})
    assert summary(created.changes) == [(ADD, "new")]


def test_move_places_every_shape_relative_to_the_new_object_pose():
    first = collision_object_update(obj(object_pose=pose(1.0), primitives=[BOX, SPHERE],
                                        primitive_poses=[pose(), pose(0.0, 0.1)]), {})
    moved = collision_object_update(obj(operation=CollisionObject.MOVE, frame="table", object_pose=pose(yaw=math.pi)),
                                    first.objects)
    assert summary(moved.changes) == [(MOVE, "thing"), (MOVE, "thing/1")]
    assert {c.frame for c in moved.changes} == {"table"} and moved.notes == ()
    np.testing.assert_allclose(moved.changes[1].position, [0.0, -0.1, 0.0], atol=1e-12)
    # shape poses, one per shape, replace the old ones; the shapes given are unused and said so
    reposed = collision_object_update(obj(operation=CollisionObject.MOVE, primitives=[BOX],
                                          primitive_poses=[pose(0.5), pose(0.6)]), moved.objects)
    np.testing.assert_allclose([c.position[0] for c in reposed.changes], [0.5, 0.6])
    assert "MOVE does not use the shapes" in reposed.notes[0]


def test_remove_by_id_and_an_empty_id_removes_every_moveit_object():
    objects = collision_object_update(obj("a", primitives=[BOX, SPHERE]), {}).objects
    objects = collision_object_update(obj("b", primitives=[CONE]), objects).objects
    one = collision_object_update(obj("a", operation=CollisionObject.REMOVE), objects)
    assert summary(one.changes) == [(REMOVE, "a"), (REMOVE, "a/1")] and set(one.objects) == {"b"}
    everything = collision_object_update(obj("", operation=CollisionObject.REMOVE), objects)
    assert summary(everything.changes) == [(REMOVE, "a"), (REMOVE, "a/1"), (REMOVE, "b")]
    assert everything.objects == {}


# ---- refusals ---------------------------------------------------------------------------------------------------
def _prism():
    return SolidPrimitive(type=SolidPrimitive.PRISM, dimensions=[0.1],
                          polygon={"points": [Point32(x=0.0), Point32(x=1.0), Point32(y=1.0)]})


def _box_with_polygon():
    box = SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[0.1, 0.1, 0.1])
    box.polygon.points = [Point32(x=1.0)]
    return box


def _bad_pose(**fields):
    msg = pose()
    for name, value in fields.items():
        target, attribute = name.split("_")
        setattr(getattr(msg, target), attribute, value)
    return msg


def _with(msg, **fields):
    for name, value in fields.items():
        setattr(msg, name, value)
    return msg


@pytest.mark.parametrize("msg, words", [
    (obj(primitives=[_prism()]), "primitives[0] (PRISM): not supported; supported: BOX=1, SPHERE=2, CYLINDER=3, "
                                 "CONE=4 (send a PRISM as a mesh of its corners)"),
    (obj(primitives=[SolidPrimitive(type=9, dimensions=[1.0])]), "primitives[0] (9): not supported"),
    (obj(primitives=[BOX, _box_with_polygon()]), "primitives[1] (BOX): a polygon is only used by a PRISM"),
    (_with(obj(primitives=[BOX]), planes=[Plane(coef=[0.0, 0.0, 1.0, 0.0])]),
     "'thing': planes are not supported (robokin checks bounded shapes only; use a large thin BOX)"),
    (obj(primitives=[BOX], primitive_poses=[pose(), pose()]), "'thing': 2 primitive_poses for 1 primitives"),
    (obj(meshes=[mesh(TETRA)], mesh_poses=[pose(), pose()]), "'thing': 2 mesh_poses for 1 meshs"),
    (obj(), "'thing': no shapes to add (primitives and meshes are empty)"),
    (obj("", primitives=[BOX]), "an ADD or APPEND needs an id"),
    (obj("<octomap>", primitives=[BOX]), "'<octomap>' is reserved by MoveIt for the octomap"),
    (obj(operation=7, primitives=[BOX]), "unknown operation 7; valid: ADD=0, REMOVE=1, APPEND=2, MOVE=3"),
    (obj(primitives=[SolidPrimitive(type=SolidPrimitive.SPHERE, dimensions=[0.1, 0.2])]),
     "'thing' primitives[0] (SPHERE): scene object 'thing': dimensions: a sphere needs 1 positive"),
    (obj(primitives=[BOX, SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[0.1, -0.1, 0.1])]),
     "'thing' primitives[1] (BOX): scene object 'thing/1': dimensions: a box needs 3 positive"),
    (obj(meshes=[mesh([(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0)])]),
     "'thing' meshes[0]: scene object 'thing': vertices: 4 vertices do not span a volume"),
    (obj(meshes=[mesh(TETRA, [(0, 1, 7)])]), "'thing' meshes[0]: triangle 0 names vertex 7, the mesh has 4"),
    (obj(object_pose=_bad_pose(position_y=float("nan")), primitives=[BOX, BOX]),
     "'thing' pose position has non-finite entries at indices [1]"),
    (obj(primitives=[BOX], primitive_poses=[_bad_pose(orientation_w=0.0)]),
     "'thing' shape pose 0: orientation [0.0, 0.0, 0.0, 0.0] (x, y, z, w) has norm 0: not a rotation"),
    (obj(operation=CollisionObject.MOVE), "cannot move collision object 'thing': no MoveIt object has that id"),
    (obj(operation=CollisionObject.REMOVE), "cannot remove collision object 'thing': no MoveIt object has that id"),
], ids=lambda value: None if isinstance(value, CollisionObject) else value[:40])
def test_every_unsupported_or_malformed_object_is_refused_with_its_field(msg, words):
    with pytest.raises(InvalidInputError) as err:
        scene_changes_from_collision_object(msg)
    assert words in str(err.value)


def test_a_move_with_the_wrong_number_of_shape_poses_and_a_taken_shape_id_are_refused():
    objects = collision_object_update(obj(primitives=[BOX, SPHERE]), {}).objects
    with pytest.raises(InvalidInputError, match=r"MOVE gives 1 shape poses, the object has 2 shapes"):
        collision_object_update(obj(operation=CollisionObject.MOVE, primitive_poses=[pose()]), objects)
    with pytest.raises(InvalidInputError, match=r"'thing/1'.*robokin id 'thing/1'.*taken by collision object 'thing'"):
        collision_object_update(obj("thing/1", primitives=[BOX]), objects)


def test_subframes_and_the_object_type_are_named_as_unused():
    msg = obj(primitives=[BOX])
    msg.subframe_names, msg.subframe_poses = ["tip"], [pose(0.1)]
    msg.type.key = "mug"
    notes = collision_object_update(msg, {}).notes
    assert "subframes ['tip'] not used" in notes[0] and "object type (key 'mug') not used" in notes[1]


# ---- PlanningScene ----------------------------------------------------------------------------------------------
def scene(*objects, is_diff=True) -> PlanningScene:
    msg = PlanningScene(is_diff=is_diff)
    msg.world.collision_objects = list(objects)
    return msg


def test_a_diff_applies_its_objects_in_order_and_a_refused_one_does_not_stop_the_others():
    update = planning_scene_update(scene(obj("a", primitives=[BOX]), obj("bad", primitives=[_prism()]),
                                         obj("a", operation=CollisionObject.MOVE, object_pose=pose(0.4)),
                                         obj("b", primitives=[SPHERE])), {})
    assert summary(update.changes) == [(ADD, "a"), (MOVE, "a"), (ADD, "b")]
    assert set(update.objects) == {"a", "b"}
    assert len(update.problems) == 1 and "'bad' primitives[0] (PRISM)" in update.problems[0]
    assert summary(scene_changes_from_planning_scene(scene())) == []


def test_a_full_scene_replaces_the_moveit_objects_in_place_and_removes_the_rest_last():
    before = planning_scene_update(scene(obj("a", primitives=[BOX, SPHERE]), obj("b", primitives=[CONE])), {})
    full = planning_scene_update(scene(obj("a", primitives=[BOX]), obj("c", primitives=[BOX]), is_diff=False),
                                 before.objects)
    assert summary(full.changes) == [(ADD, "a"), (ADD, "c"), (REMOVE, "a/1"), (REMOVE, "b")]
    assert set(full.objects) == {"a", "c"}
    # a MOVE in a full scene finds an empty world, as in MoveIt (which clears the world first)
    moved = planning_scene_update(scene(obj("a", operation=CollisionObject.MOVE), is_diff=False), full.objects)
    assert "cannot move collision object 'a'" in moved.problems[0]


def test_scene_fields_that_change_collisions_and_are_unused_are_named():
    msg = scene(obj("mug", primitives=[BOX]))
    msg.robot_state.attached_collision_objects = [AttachedCollisionObject(link_name="panda_hand",
                                                                          object=obj("tool", primitives=[BOX]))]
    msg.world.octomap.octomap.data = [1, 2, 3]
    msg.allowed_collision_matrix.entry_names = ["panda_hand", "mug"]
    msg.link_padding = [LinkPadding(link_name="panda_hand", padding=0.01)]
    notes = " | ".join(planning_scene_update(msg, {}).notes)
    for words in ("attached objects [('tool', 'panda_hand')] not checked", "octomap not checked",
                  "allowed collisions of ['mug'] not used", "link padding and scale not used"):
        assert words in notes
    plain = scene(obj("mug", primitives=[BOX]))
    plain.link_padding = [LinkPadding(link_name="panda_hand", padding=0.0)]     # MoveIt's full scenes list zeros
    assert planning_scene_update(plain, {}).notes == ()


# ---- the mirror, and the changes applied to robokin's scene ------------------------------------------------------
def test_the_mirror_forgets_shapes_that_are_not_in_the_scene_and_is_unchanged_by_a_refused_message():
    mirror = MoveItSceneMirror()
    mirror.update(obj("a", primitives=[BOX, SPHERE, CONE]))
    # 'a/1' was removed through ~/scene_objects: REMOVE no longer names it, APPEND reuses its name
    assert summary(mirror.update(obj("a", operation=CollisionObject.APPEND, primitives=[BOX]),
                                 present={"a", "a/2", "scene_file_box"}).changes) == [(ADD, "a/1")]
    before = dict(mirror.objects)
    with pytest.raises(InvalidInputError):
        mirror.update(obj("a", primitives=[_prism()]))
    assert mirror.objects == before
    assert sorted(summary(mirror.update(scene(obj("", operation=CollisionObject.REMOVE))).changes)) == [
        (REMOVE, "a"), (REMOVE, "a/1"), (REMOVE, "a/2")]
    # an object none of whose shapes is in the scene (its ADD failed when applied) is forgotten
    mirror.update(obj("ghost", primitives=[BOX]))
    with pytest.raises(InvalidInputError, match="no MoveIt object has that id"):
        mirror.update(obj("ghost", operation=CollisionObject.REMOVE), present=set())


def test_the_changes_build_the_same_scene_in_robokins_checker(panda):
    checker = ClearanceChecker(panda)
    mirror = MoveItSceneMirror()
    world_T_base = pin.SE3.Identity()

    def apply(msg):
        for change in mirror.update(msg, present={o.id for o in checker.objects}).changes:
            apply_scene_change(checker, change, world_T_base)

    apply(obj("rack", object_pose=pose(0.6, yaw=math.pi / 2), primitives=[BOX, CYLINDER],
              primitive_poses=[pose(), pose(0.0, 0.0, 0.3)], meshes=[mesh(TETRA)], mesh_poses=[pose(0.1)]))
    assert [(o.id, o.shape) for o in checker.objects] == [("rack", "box"), ("rack/1", "cylinder"),
                                                          ("rack/2", "mesh")]
    np.testing.assert_allclose(checker.objects[2].position, [0.6, 0.1, 0.0], atol=1e-12)
    apply(obj("rack", operation=CollisionObject.MOVE, object_pose=pose(0.0, 0.7)))
    np.testing.assert_allclose(checker.objects[1].position, [0.0, 0.7, 0.3], atol=1e-12)
    np.testing.assert_allclose(checker.objects[2].position, [0.1, 0.7, 0.0], atol=1e-12)
    apply(scene(obj("rack", primitives=[SPHERE], object_pose=pose(0.5)), obj("post", primitives=[CONE]),
                is_diff=False))
    assert [(o.id, o.shape) for o in checker.objects] == [("rack", "sphere"), ("post", "cone")]
    apply(obj("", operation=CollisionObject.REMOVE))
    assert checker.objects == ()
