"""The arm scene's wiring on a real viser server (no browser): links take their joint's colour, a locked joint's
links turn the locked colour, and the gizmo's axes follow the chosen mode."""
import numpy as np
import pinocchio as pin
import pytest
from studio_helpers import STUDIO_EXTRAS, free_port, need_modules

need_modules(*STUDIO_EXTRAS)   # before viser is imported: skips here without it (fails under CI)

import viser  # noqa: E402

from robokin_ros.studio.gizmo import Gizmo  # noqa: E402
from robokin_ros.studio.joint_colours import LOCKED, joint_shades  # noqa: E402
from robokin_ros.studio.robot_visuals import RobotVisuals  # noqa: E402
from robokin_ros.studio.scene import ArmScene  # noqa: E402


@pytest.fixture(scope="module")
def scene(panda):
    server = viser.ViserServer(host="127.0.0.1", port=free_port(), verbose=False)
    yield ArmScene(server, RobotVisuals(panda, triangle_budget=5000))
    server.stop()


def test_links_take_their_joints_colour_and_a_locked_joint_stands_out(panda, scene):
    q = panda.home()
    locked = ("panda_joint4",)
    shades = joint_shades(panda, q, locked)
    scene.update_arm(q, shades, None)
    for link, mesh in zip(scene.links, scene.visuals.meshes):
        if mesh.joint_index < 0:
            continue
        expected = LOCKED if panda.joint_names[mesh.joint_index] in locked else shades[mesh.joint_index].rgb
        assert tuple(link.color) == tuple(expected), mesh.name
    moved = [mesh for mesh in scene.visuals.meshes if mesh.joint_index == 3]
    assert moved, "the Panda has a link moved by joint 4"


def test_link_poses_are_the_visual_placements(panda, scene):
    q = panda.home() + 0.2
    scene.update_arm(q, joint_shades(panda, q), None)
    translations, quaternions = scene.visuals.poses(q)
    for i, link in enumerate(scene.links):
        np.testing.assert_allclose(link.position, translations[i], atol=1e-6)
        np.testing.assert_allclose(link.wxyz, quaternions[i], atol=1e-6)
    tool = panda.fk(q)
    np.testing.assert_allclose(scene.tool.position, tool.translation, atol=1e-6)


def test_the_gizmo_stands_for_the_same_target_with_tool_or_base_axes(panda, scene):
    gizmo = Gizmo(scene.gizmo)
    pose = panda.fk(panda.home())
    gizmo.place(pose)
    assert np.allclose(pin.log6(gizmo.target().actInv(pose)).vector, 0.0, atol=1e-9)
    gizmo.toggle_axes()                                # base axes: the handle is shown unrotated
    np.testing.assert_allclose(scene.gizmo.wxyz, [1.0, 0.0, 0.0, 0.0])
    assert np.allclose(pin.log6(gizmo.target().actInv(pose)).vector, 0.0, atol=1e-9)
    turn = pin.exp3(np.array([0.0, 0.0, 0.3]))          # a turn of the handle is a turn about base axes
    x, y, z, w = pin.Quaternion(turn).coeffs()
    scene.gizmo.wxyz = (w, x, y, z)
    np.testing.assert_allclose(gizmo.target().rotation, turn @ pose.rotation, atol=1e-9)
    gizmo.toggle_axes()                                # back to tool axes: the same target
    np.testing.assert_allclose(gizmo.target().rotation, turn @ pose.rotation, atol=1e-9)
    gizmo.set_rotate(True)
    assert gizmo.rotate and scene.gizmo.disable_axes and not scene.gizmo.disable_rotations
