"""ClearanceChecker against independent evidence: hand-computed primitive distances, brute force over every pair,
finite differences of the distance, and the scene edits."""
from pathlib import Path

import coal
import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial import ConvexHull
from test_collision import BOXES_URDF

from robokin_ros.core.collision.clearance import ClearanceChecker
from robokin_ros.core.collision.geometry import RobotGeometry, build_robot_geometry
from robokin_ros.core.collision.scene import SceneObject, load_scene
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.robot import RobotModel

EXAMPLE_SCENE = Path(__file__).resolve().parents[3] / "config" / "scene_objects.example.yaml"


@pytest.fixture(scope="module")
def boxes():
    return RobotModel.from_urdf_string(BOXES_URDF, "base", "tip")


@pytest.fixture(scope="module")
def panda_scene(panda):
    return ClearanceChecker(panda, objects=load_scene(EXAMPLE_SCENE, panda.base_frame), relevant_distance=0.3)


def arm_box_distance(q1: float, centre: np.ndarray, radius: float) -> float:
    """Hand computation: a ball against BOXES_URDF's arm, a 0.5 x 0.1 x 0.1 box from the j1 axis along x at z=0.3."""
    c, s = np.cos(q1), np.sin(q1)
    local = np.array([[c, s, 0], [-s, c, 0], [0, 0, 1]]) @ (centre - [0, 0, 0.3]) - [0.25, 0, 0]
    outside = np.maximum(np.abs(local) - [0.25, 0.05, 0.05], 0.0)
    return float(np.linalg.norm(outside)) - radius


def fd_gradient(checker, q, h=1e-4):
    """Central differences of the distance; None where the nearest pair changes within the step."""
    base = checker.check(q).names
    column = []
    for i in range(len(q)):
        e = np.zeros(len(q))
        e[i] = h
        plus, minus = checker.check(q + e), checker.check(q - e)
        if plus.names != base or minus.names != base:
            return None
        column.append((plus.distance - minus.distance) / (2 * h))
    return np.array(column)


def test_a_ball_above_the_arm_matches_the_hand_computation(boxes):
    centre, radius = np.array([0.3, 0.0, 0.5]), 0.05
    checker = ClearanceChecker(boxes, objects=(SceneObject("ball", "sphere", (radius,), tuple(centre)),))
    for q in ([0.0, 0.0, 0.0], [0.3, 1.0, -0.5], [-0.4, 2.0, 1.0], [0.1, -1.2, 0.4]):
        result = checker.check(q)
        assert result.names == ("arm_0", "ball") and result.exact
        assert result.distance == pytest.approx(arm_box_distance(q[0], centre, radius), abs=1e-6)
        # only j1 moves the arm; the derivative of the hand formula in q1
        slope = (arm_box_distance(q[0] + 1e-6, centre, radius) - arm_box_distance(q[0] - 1e-6, centre, radius)) / 2e-6
        np.testing.assert_allclose(result.gradient, [slope, 0.0, 0.0], atol=1e-6)
        assert np.linalg.norm(result.point_b - centre) == pytest.approx(radius, abs=1e-6)


def test_box_object_over_the_arm_gives_the_vertical_gap_and_witnesses(boxes):
    checker = ClearanceChecker(boxes, objects=(SceneObject("crate", "box", (0.2, 0.2, 0.2), (0.25, 0.0, 0.6)),))
    result = checker.check([0.0, 1.5, 0.0])          # forearm swung aside
    assert result.names == ("arm_0", "crate")
    assert result.distance == pytest.approx(0.6 - 0.1 - 0.35, abs=1e-9)     # crate bottom 0.5, arm top 0.35
    np.testing.assert_allclose(result.normal, [0, 0, 1], atol=1e-9)
    assert result.point_a[2] == pytest.approx(0.35) and result.point_b[2] == pytest.approx(0.5)
    np.testing.assert_allclose(result.point_b - result.point_a, result.distance * result.normal, atol=1e-9)


def test_penetration_is_a_negative_distance(boxes):
    ball = SceneObject("ball", "sphere", (0.05,), (0.25, 0.0, 0.37))   # bottom at 0.32, arm top at 0.35
    result = ClearanceChecker(boxes, objects=(ball,)).check([0.0, 1.5, 0.0])
    assert result.in_contact and result.distance == pytest.approx(-0.03, abs=1e-4)
    np.testing.assert_allclose(result.point_b - result.point_a, result.distance * result.normal, atol=1e-6)


def test_mesh_pair_distance_is_the_distance_between_the_meshes_convex_hulls(panda):
    """Independent of coal (scipy's qhull on the raw mesh vertices): the witness points lie in the meshes' hulls,
    so the hull distance is at most |p_b - p_a| = distance; the Minkowski difference's hull gives a lower bound,
    max over its facets of their distance to the origin, which is exact when the nearest feature is a facet."""
    checker = ClearanceChecker(panda)
    meshes = build_robot_geometry(panda, convex=False).geometry_model
    data = panda.model.createData()
    rng = np.random.default_rng(4)
    tight = compared = 0
    while compared < 8:
        q = panda.random_positions(rng)
        result = checker.check(q)
        objects = [meshes.geometryObjects[meshes.getGeometryId(name)] for name in result.names]
        if result.distance < 0.01 or not all(isinstance(o.geometry, coal.BVHModelBase) for o in objects):
            continue
        pin.forwardKinematics(panda.model, data, q)
        clouds = []
        for o, point in zip(objects, (result.point_a, result.point_b)):
            world_T_geometry = data.oMi[o.parentJoint] * o.placement
            cloud = np.asarray(o.geometry.vertices()) @ world_T_geometry.rotation.T + world_T_geometry.translation
            facets = ConvexHull(cloud).equations                       # n . x + c <= 0 inside
            assert np.max(facets[:, :3] @ point + facets[:, 3]) < 1e-9, f"witness outside the hull of {o.name}"
            clouds.append(cloud)
        difference = (clouds[1][None, :, :] - clouds[0][:, None, :]).reshape(-1, 3)
        lower = np.max(ConvexHull(difference).equations[:, 3])       # the origin's largest facet distance
        assert result.distance >= lower - 1e-9
        tight += result.distance == pytest.approx(lower, abs=1e-9)
        compared += 1
    assert tight >= compared // 2


def test_check_finds_the_brute_force_nearest_pair(panda, panda_scene):
    rng = np.random.default_rng(11)
    exact = 0
    for _ in range(60):
        q = panda.random_positions(rng)
        result, every = panda_scene.check(q), panda_scene.pair_distances(q)
        if result.exact:
            exact += 1
            # GJK warm-started from another configuration stops within ~2e-5 m on curved shapes
            assert result.distance == pytest.approx(every.distances.min(), abs=5e-5)
            assert every.distances[every.names.index(result.names)] == pytest.approx(result.distance, abs=5e-5)
        else:
            assert result.lower_bound >= panda_scene.relevant_distance
            assert every.distances.min() >= result.lower_bound - 5e-5
    assert exact > 30


def test_beyond_the_relevant_distance_only_a_bound_is_promised(panda):
    checker = ClearanceChecker(panda, relevant_distance=0.02)
    result = checker.check(panda.home())
    every = checker.pair_distances(panda.home())
    assert not result.exact and 0.02 <= result.lower_bound <= every.distances.min() + 1e-9
    assert result.evaluated < len(every.distances)
    assert result.distance >= every.distances.min() - 1e-9


@pytest.mark.parametrize("seed", range(6))
def test_gradient_matches_finite_differences_of_the_distance(panda, panda_scene, seed):
    rng = np.random.default_rng(100 + seed)
    checked = 0
    while checked < 3:
        q = panda.random_positions(rng, margin=0.05)
        result = panda_scene.check(q)
        fd = fd_gradient(panda_scene, q)
        if result.distance < 0.003 or not result.exact or fd is None:
            continue                     # nearest pair switches within the step, or (non-smooth) contact
        assert np.linalg.norm(fd) > 1e-3
        np.testing.assert_allclose(result.gradient, fd, atol=2e-3 + 1e-2 * np.abs(fd).max(),
                                   err_msg=f"{result.names} at {q}")
        checked += 1


def test_the_finite_difference_check_catches_a_wrong_sign(panda, panda_scene):
    """Control: a gradient along the opposite normal must fail the comparison above."""
    q = panda.home()
    result, fd = panda_scene.check(q), fd_gradient(panda_scene, q)
    assert np.abs(-result.gradient - fd).max() > 1e-2


def test_points_and_normal_are_in_a_base_frame_that_is_not_the_world():
    robot = RobotModel.from_name("kinova")          # base link on a mounting block, continuous joints
    assert not robot.world_T_base.isIdentity(1e-9)
    q = robot.home()
    tool = robot.fk(q).translation                  # base frame
    ball = SceneObject("ball", "sphere", (0.03,), tuple(tool + [0.0, 0.0, 0.15]))
    checker = ClearanceChecker(robot, objects=(ball,))
    result = checker.check(q)
    assert result.names[1] == "ball"
    assert np.linalg.norm(result.point_b - ball.position) == pytest.approx(0.03, abs=1e-6)
    np.testing.assert_allclose(result.point_b - result.point_a, result.distance * result.normal, atol=1e-6)
    fd = fd_gradient(checker, q)
    np.testing.assert_allclose(result.gradient, fd, atol=2e-3)


def test_scene_add_move_remove(panda):
    checker = ClearanceChecker(panda)
    home = panda.home()
    assert checker.check(home).names[1].startswith("panda_")          # self pair only
    tcp = panda.fk(home).translation
    checker.add_object(SceneObject("ball", "sphere", (0.02,), tuple(tcp + [0.0, 0.0, -0.05])))
    near = checker.check(home)
    assert near.names[1] == "ball" and near.distance < 0.05
    checker.move_object("ball", tcp + [0.0, 0.0, -0.13])
    moved = checker.check(home)
    assert moved.names[1] == "ball" and moved.distance == pytest.approx(near.distance + 0.08, abs=2e-3)
    checker.add_object(SceneObject("ball", "sphere", (0.02,), (2.0, 0.0, 0.0)))   # same id: replaced
    assert len(checker.objects) == 1 and checker.check(home).names[1] != "ball"
    checker.remove_object("ball")
    assert checker.objects == ()
    with pytest.raises(InvalidInputError, match="no scene object 'ball'; objects: \\[\\]"):
        checker.remove_object("ball")
    with pytest.raises(InvalidInputError, match="name of a robot collision geometry"):
        checker.add_object(SceneObject("panda_hand_0", "sphere", (0.02,)))


def test_objects_are_never_paired_with_the_fixed_base(panda_scene):
    pairs = panda_scene.pair_names
    assert ("panda_link1_0", "table") in pairs
    assert not any(pair[0] == "panda_link0_0" and pair[1] == "table" for pair in pairs)
    assert len(pairs) == 44 + 6 * 16        # self pairs + 6 objects x 16 moving geometries


def test_results_do_not_change_after_the_next_check(panda, panda_scene):
    first = panda_scene.check(panda.home())
    kept = (first.distance, first.point_a.copy(), first.gradient.copy())
    panda_scene.check(panda.random_positions(np.random.default_rng(1)))
    assert first.distance == kept[0]
    np.testing.assert_array_equal(first.point_a, kept[1])
    np.testing.assert_array_equal(first.gradient, kept[2])


def test_bad_inputs_are_refused(panda):
    with pytest.raises(InvalidInputError, match="relevant_distance"):
        ClearanceChecker(panda, relevant_distance=0.0)
    checker = ClearanceChecker(panda)
    with pytest.raises(InvalidInputError, match="7 entries"):
        checker.check(np.zeros(6))
    with pytest.raises(InvalidInputError, match="non-finite"):
        checker.check([np.nan] * 7)


def test_a_robot_without_pairs_is_always_clear():
    robot = RobotModel(pin.buildSampleModelManipulator(), "universe", "effector_body")
    checker = ClearanceChecker(robot, RobotGeometry(pin.GeometryModel(), (), "none"))
    result = checker.check(np.zeros(robot.n))
    assert result.distance == np.inf and result.exact and not result.gradient.any()
