"""RobotVisuals: mesh poses against Pinocchio on the full (unreduced) URDF model, triangle budget, simplification."""
import numpy as np
import pinocchio as pin
import pytest
from studio_helpers import STUDIO_EXTRAS, need_modules

need_modules(*STUDIO_EXTRAS)   # before robot_visuals imports fast-simplification: skips here without it

from robokin_ros.core.collision.geometry import default_package_dirs  # noqa: E402
from robokin_ros.core.errors import InvalidInputError  # noqa: E402
from robokin_ros.studio.robot_visuals import MIN_TRIANGLES, RobotVisuals  # noqa: E402

ARMS = ("panda", "ur5")


@pytest.fixture(scope="module")
def visuals(panda, ur5):
    """Simplified (default budget) and full visuals per arm, built once: each costs ~0.7 s."""
    return {robot.name: (RobotVisuals(robot), RobotVisuals(robot, triangle_budget=None)) for robot in (panda, ur5)}


class FullModel:
    """The URDF's full model and visual geometry, with every non-chain joint at the robot's reference value."""

    def __init__(self, robot):
        self.robot = robot
        self.model = pin.buildModelFromXML(robot.urdf_xml)
        self.geometry = pin.buildGeomFromUrdfString(self.model, robot.urdf_xml, pin.GeometryType.VISUAL,
                                                    package_dirs=default_package_dirs())
        self.data, self.geometry_data = self.model.createData(), pin.GeometryData(self.geometry)
        self.base_id = self.model.getFrameId(robot.base_frame)

    def q(self, positions):
        q = self.robot.full_reference_q.copy()          # locked joints (fingers) where the robot froze them
        for name, value in zip(self.robot.joint_names, positions):
            joint = self.model.joints[self.model.getJointId(name)]
            if joint.nq == 1:
                q[joint.idx_q] = value
            else:                                       # continuous: (cos, sin)
                q[joint.idx_q:joint.idx_q + 2] = np.cos(value), np.sin(value)
        return q

    def base_poses(self, positions) -> dict[str, pin.SE3]:
        pin.framesForwardKinematics(self.model, self.data, self.q(positions))
        pin.updateGeometryPlacements(self.model, self.data, self.geometry, self.geometry_data)
        base_T_world = self.data.oMf[self.base_id].inverse()
        return {g.name: base_T_world * self.geometry_data.oMg[i] for i, g in enumerate(self.geometry.geometryObjects)}


def as_se3(translation, wxyz) -> pin.SE3:
    w, x, y, z = wxyz
    return pin.SE3(pin.Quaternion(w, x, y, z).normalized().matrix(), np.asarray(translation))


def random_configurations(robot, count, seed):
    rng = np.random.default_rng(seed)
    return [robot.random_positions(rng) for _ in range(count)]


@pytest.mark.parametrize("name", ARMS)
def test_mesh_poses_equal_pinocchio_on_the_full_model(request, visuals, name):
    robot = request.getfixturevalue(name)
    full = FullModel(robot)
    shown = visuals[name][0]
    assert {m.name for m in shown.meshes} <= set(full.base_poses(robot.home()))
    for q in [robot.home()] + random_configurations(robot, 5, seed=3):
        translations, quaternions = shown.poses(q)
        assert np.allclose(np.linalg.norm(quaternions, axis=1), 1.0, atol=1e-9)
        expected = full.base_poses(q)
        for mesh, t, wxyz in zip(shown.meshes, translations, quaternions):
            got, want = as_se3(t, wxyz), expected[mesh.name]
            np.testing.assert_allclose(got.translation, want.translation, atol=1e-9, err_msg=mesh.name)
            assert np.linalg.norm(pin.log3(got.rotation.T @ want.rotation)) < 1e-7, mesh.name


@pytest.mark.parametrize("name", ARMS)
def test_tool_link_meshes_move_rigidly_with_the_tool(request, visuals, name):
    robot = request.getfixturevalue(name)
    shown = visuals[name][0]
    last = robot.n - 1
    riding = [i for i, m in enumerate(shown.meshes) if m.joint_index == last]
    assert riding, "no mesh on the joint that carries the tool frame"
    relative = []
    for q in random_configurations(robot, 6, seed=7):
        translations, quaternions = shown.poses(q)
        tool_T_base = robot.fk(q).inverse()
        relative.append([tool_T_base * as_se3(translations[i], quaternions[i]) for i in riding])
    for later in relative[1:]:
        for first, other in zip(relative[0], later):
            np.testing.assert_allclose(other.homogeneous, first.homogeneous, atol=1e-9)
    # and a mesh on an earlier joint does not ride along (the check above can tell the difference)
    earlier = next(i for i, m in enumerate(shown.meshes) if 0 <= m.joint_index < last)
    poses = [robot.fk(q).inverse() * as_se3(*(a[earlier] for a in shown.poses(q)))
             for q in random_configurations(robot, 2, seed=8)]
    assert not np.allclose(poses[0].homogeneous, poses[1].homogeneous, atol=1e-3)


@pytest.mark.parametrize("name", ARMS)
def test_joint_index_is_the_geometry_parent_joint(request, visuals, name):
    robot = request.getfixturevalue(name)
    full = FullModel(robot)
    parent_of = {}
    for g in full.geometry.geometryObjects:
        # the full model's parent joint, walked up to the nearest chain joint (locked joints are rigid)
        joint_id = g.parentJoint
        while joint_id != 0 and full.model.names[joint_id] not in robot.joint_names:
            joint_id = full.model.parents[joint_id]
        joint = full.model.names[joint_id]
        parent_of[g.name] = robot.joint_names.index(joint) if joint in robot.joint_names else -1
    meshes = visuals[name][0].meshes
    assert [m.joint_index for m in meshes] == [parent_of[m.name] for m in meshes]
    assert any(m.joint_index == -1 for m in meshes), "the base link's mesh is fixed to the base"


@pytest.mark.parametrize("name", ARMS)
def test_triangle_budget_is_respected_and_none_keeps_every_triangle(request, visuals, name):
    robot = request.getfixturevalue(name)
    shown, whole = visuals[name]
    full = FullModel(robot)
    # the unsimplified count from the coal meshes themselves (every visual of these arms is a mesh)
    source = {g.name: g.geometry.num_tris for g in full.geometry.geometryObjects}
    assert whole.triangle_count == sum(source[m.name] for m in whole.meshes)
    assert whole.triangle_count > 60000                                # so the budget below really bites
    assert shown.triangle_count <= 1.05 * 30000
    assert shown.triangle_count >= 0.8 * 30000                         # simplified to, not far below, the budget
    for mesh in shown.meshes:
        assert mesh.faces.max() < len(mesh.vertices)
        assert len(mesh.faces) >= min(MIN_TRIANGLES, source[mesh.name]) * 0.9


def used_bounds(vertices, faces):
    """Bounding box of the vertices the triangles use: the UR5's meshes carry unreferenced vertices."""
    used = vertices[np.unique(faces)]
    return used.min(0), used.max(0)


@pytest.mark.parametrize("name", ["panda", "ur5"])
def test_simplified_meshes_keep_their_bounding_box(visuals, name):
    shown, whole = visuals[name]
    for small, big in zip(shown.meshes, whole.meshes):
        assert small.name == big.name
        for got, want in zip(used_bounds(small.vertices, small.faces), used_bounds(big.vertices, big.faces)):
            np.testing.assert_allclose(got, want, atol=3e-3, err_msg=small.name)


def test_bad_positions_raise(visuals, panda):
    shown = visuals["panda"][0]
    q = panda.home()
    q[2] = np.nan
    with pytest.raises(InvalidInputError, match="non-finite entries at indices \\[2\\]"):
        shown.poses(q)
    with pytest.raises(InvalidInputError, match="must have 7 entries"):
        shown.poses(panda.home()[:6])
