"""Scene objects and the scene file: every malformed entry reported by index and field, meshes as convex hulls."""
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml

from robokin_ros.core.collision.clearance import ClearanceChecker
from robokin_ros.core.collision.geometry import default_package_dirs
from robokin_ros.core.collision.scene import SceneObject, collision_shape, load_scene, scene_from_mapping
from robokin_ros.core.errors import ConfigError, InvalidInputError

EXAMPLE_SCENE = Path(__file__).resolve().parents[3] / "config" / "scene_objects.example.yaml"

# A 0.2 x 0.1 x 0.3 box as an ASCII STL (12 triangles), centred on the origin.
CUBE_STL = "solid cube\n" + "".join(
    "facet normal 0 0 0\nouter loop\n" + "".join(f"vertex {x} {y} {z}\n" for x, y, z in triangle)
    + "endloop\nendfacet\n"
    for triangle in [
        [(sx * 0.1, sy * 0.05, sz * 0.15) for sx, sy, sz in face]
        for face in [
            [(-1, -1, -1), (1, -1, -1), (1, 1, -1)], [(-1, -1, -1), (1, 1, -1), (-1, 1, -1)],
            [(-1, -1, 1), (1, 1, 1), (1, -1, 1)], [(-1, -1, 1), (-1, 1, 1), (1, 1, 1)],
            [(-1, -1, -1), (1, -1, 1), (1, -1, -1)], [(-1, -1, -1), (-1, -1, 1), (1, -1, 1)],
            [(-1, 1, -1), (1, 1, -1), (1, 1, 1)], [(-1, 1, -1), (1, 1, 1), (-1, 1, 1)],
            [(-1, -1, -1), (-1, 1, -1), (-1, 1, 1)], [(-1, -1, -1), (-1, 1, 1), (-1, -1, 1)],
            [(1, -1, -1), (1, 1, 1), (1, 1, -1)], [(1, -1, -1), (1, -1, 1), (1, 1, 1)],
        ]]) + "endsolid cube\n"


def test_the_example_scene_loads_with_the_table_top_at_the_base(panda):
    objects = load_scene(EXAMPLE_SCENE, panda.base_frame)
    by_id = {obj.id: obj for obj in objects}
    assert list(by_id) == ["table", "back_wall", "bin", "post", "lamp", "funnel"]
    table = by_id["table"]
    assert table.position[2] + table.dimensions[2] / 2 == pytest.approx(0.0)
    # rpy [0, 0, 0.3] is a rotation of 0.3 rad about z
    np.testing.assert_allclose(by_id["bin"].base_T_object.rotation, pin.rpy.rpyToMatrix(0, 0, 0.3), atol=1e-12)
    result = ClearanceChecker(panda, objects=objects).check(panda.home())
    assert result.distance > 0.05          # the home pose is clear of the example scene


def test_every_malformed_entry_is_reported_at_once_with_index_and_field():
    data = {"frame": "world", "colour": "red", "objects": [
        {"id": "a", "shape": "box", "dimensions": [1.0, 2.0]},
        {"id": "b", "shape": "pyramid"},
        {"id": "a", "shape": "sphere", "dimensions": [0.1]},
        {"id": "c", "shape": "sphere", "dimensions": [0.1], "position": [0, 0]},
        {"id": "d", "shape": "sphere", "dimensions": [0.1], "colour": "red"},
        {"id": "e", "shape": "sphere", "dimensions": [0.1], "rpy": [0, 0, 0], "orientation": [0, 0, 0, 1]},
        {"id": "f", "shape": "sphere", "dimensions": [0.1], "orientation": [0, 0, 0, 2]},
        {"id": "g", "shape": "cylinder", "dimensions": [-0.2, 0.1]},
        {"id": "", "shape": "sphere", "dimensions": ["x"]},
        "not a mapping",
        {"id": "h", "shape": "box", "dimensions": [0.1, 0.1, 0.1], "mesh": "x.stl"},
    ]}
    with pytest.raises(ConfigError) as caught:
        scene_from_mapping(data, base_frame="panda_link0", source="test.yaml")
    problems = caught.value.problems
    expected = ["'colour': unknown top-level key", "frame: 'world' is not the robot's base frame 'panda_link0'",
                "objects[0].dimensions: a box needs 3", "objects[1].shape: 'pyramid' is not one of",
                "objects[2].id: 'a' is used by an earlier object", "objects[3].position: needs 3 finite values",
                "objects[4].colour: unknown field", "objects[5].rpy: give either orientation or rpy",
                "objects[6].orientation: [0.0, 0.0, 0.0, 2.0] has norm 2, not 1: not a unit quaternion",
                "objects[7].dimensions: a cylinder needs 2 positive", "objects[8].dimensions: must be a list of finite",
                "objects[8].id: must be a non-empty string", "objects[9].entry: must be a mapping",
                "objects[10].mesh: only a mesh takes a mesh file"]
    for text in expected:
        assert any(problem.startswith(text) for problem in problems), f"{text!r} not in {problems}"
    assert len(problems) == len(expected)
    assert "test.yaml" in str(caught.value)


def test_a_file_that_is_not_a_scene_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_scene(tmp_path / "missing.yaml")
    (tmp_path / "bad.yaml").write_text("objects: [unclosed")
    with pytest.raises(ConfigError, match="cannot read"):
        load_scene(tmp_path / "bad.yaml")
    (tmp_path / "list.yaml").write_text("- id: a")
    with pytest.raises(ConfigError, match="a mapping with an 'objects' list"):
        load_scene(tmp_path / "list.yaml")


def test_an_empty_scene_file_has_no_objects(tmp_path):
    (tmp_path / "empty.yaml").write_text("objects: []\n")
    assert load_scene(tmp_path / "empty.yaml") == ()


def test_a_mesh_object_is_the_convex_hull_of_its_scaled_vertices(panda, tmp_path):
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "cube.stl").write_text(CUBE_STL)
    scene = {"objects": [{"id": "crate", "shape": "mesh", "mesh": "meshes/cube.stl", "scale": [2.0, 2.0, 1.0],
                          "position": [0.5, 0.0, 0.15]}]}
    (tmp_path / "scene.yaml").write_text(yaml.safe_dump(scene))
    (mesh,) = load_scene(tmp_path / "scene.yaml")
    assert Path(mesh.mesh).is_absolute()
    box = SceneObject("crate", "box", (0.4, 0.2, 0.3), (0.5, 0.0, 0.15))
    shape = collision_shape(mesh)
    shape.computeLocalAABB()
    np.testing.assert_allclose(shape.aabb_local.max_, [0.2, 0.1, 0.15], atol=1e-12)
    rng = np.random.default_rng(2)
    mesh_checker, box_checker = ClearanceChecker(panda, objects=(mesh,)), ClearanceChecker(panda, objects=(box,))
    for _ in range(10):
        q = panda.random_positions(rng)
        a, b = mesh_checker.check(q), box_checker.check(q)
        assert a.names == b.names and a.distance == pytest.approx(b.distance, abs=1e-6)


def test_a_mesh_uri_resolves_through_package_dirs():
    scene = {"objects": [{"id": "link", "shape": "mesh",
                          "mesh": "package://example-robot-data/robots/panda_description/meshes/collision/link3.stl"}]}
    (obj,) = scene_from_mapping(scene, package_dirs=default_package_dirs())
    assert Path(obj.mesh).is_file()
    assert collision_shape(obj).num_points == 152       # that mesh is convex: every vertex is on its hull


def test_a_missing_mesh_names_the_entry(tmp_path):
    scene = {"objects": [{"id": "ok", "shape": "sphere", "dimensions": [0.1]},
                         {"id": "gone", "shape": "mesh", "mesh": "nope.stl"}]}
    with pytest.raises(ConfigError, match=r"objects\[1\]\.mesh: mesh 'nope.stl' not found"):
        scene_from_mapping(scene, base_dir=tmp_path)


def test_flat_vertices_are_refused_before_qhull_sees_them():
    square = ((0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0))
    with pytest.raises(InvalidInputError, match="do not span a volume"):
        SceneObject("plate", "mesh", vertices=square)
    tetrahedron = SceneObject("tet", "mesh", vertices=square[:3] + ((0, 0, 1),))
    assert collision_shape(tetrahedron).num_points == 4


@pytest.mark.parametrize("kwargs, words", [
    (dict(shape="sphere", dimensions=(0.0,)), "dimensions: a sphere needs 1 positive"),
    (dict(shape="box", dimensions=(1, 1, 1), position=(0, 0, np.nan)), "position: needs 3 finite"),
    (dict(shape="cone", dimensions=(0.1, 0.1), orientation=(0, 0, 0, 0)),
     r"orientation: \[0.0, 0.0, 0.0, 0.0\] \(x, y, z, w\) has norm 0: not a rotation"),
    (dict(shape="mesh", dimensions=(1.0,), mesh="a.stl"), "dimensions: a mesh takes none"),
    (dict(shape="mesh"), "exactly one of a mesh file or inline vertices"),
    # beyond MAX_SCENE_EXTENT: coal's distances degenerate (-inf mm, or a robot inside a 1e20 m box reads as clear)
    # and qhull crashed the process (SIGSEGV) on 1e308 m vertices
    (dict(shape="box", dimensions=(1e20, 1e20, 1e20)), r"dimensions: .* exceed 1000 m"),
    (dict(shape="sphere", dimensions=(0.1,), position=(1e308, 0, 0)), "position: .* farther than 1000 m"),
    (dict(shape="mesh", vertices=((0, 0, 0), (1e308, 0, 0), (0, 1e308, 0), (0, 0, 1e308))),
     "within 1000 m"),
    (dict(shape="mesh", vertices=((0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)), scale=(1e4, 1, 1)), "scale included"),
])
def test_invalid_objects_raise_naming_the_field(kwargs, words):
    with pytest.raises(InvalidInputError, match=words):
        SceneObject("thing", **kwargs)


def test_orientation_is_normalised_and_moved_keeps_the_shape():
    obj = SceneObject("b", "box", (1, 2, 3), orientation=(0, 0, 0.7072, 0.7072))
    assert np.linalg.norm(obj.orientation) == pytest.approx(1.0, abs=1e-15)
    moved = obj.moved((1.0, 2.0, 3.0))
    assert moved.dimensions == (1, 2, 3) and moved.position == (1.0, 2.0, 3.0) and moved.orientation[3] == 1.0
