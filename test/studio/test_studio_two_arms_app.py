"""The studio app with two arms, without a browser (the app not started: the tests run its ticks): the robot picker
loads dual_panda, dual_panda_torso and Baxter; every tip has its tool frame, gizmo and overlays in the scene at its
forward kinematics; the scripted gizmo calls drive the tips and the object; the mode control shows and hides the
gizmos. A one-tip robot loaded after them has none of these."""
import numpy as np
import pinocchio as pin
import pytest
from studio_helpers import free_port, need_modules

need_modules("viser", "fast_simplification", "imageio")

from robokin_ros.core.capability.per_tip import analyze_tip  # noqa: E402
from robokin_ros.core.errors import RobokinError  # noqa: E402
from robokin_ros.studio.scene import rotation_of  # noqa: E402

LEFT, RIGHT = "left_panda_hand_tcp", "right_panda_hand_tcp"
RATE = 60.0
SHOWN = 1e-5      # [m] viser skips a handle update within np.allclose of its value (rtol 1e-5): what it can show


@pytest.fixture(scope="module")
def app():
    from robokin_ros.studio.app import StudioApp
    studio = StudioApp("dual_panda", port=free_port(), render="light")
    yield studio
    studio.server.stop()


@pytest.fixture
def two_arms(app):
    if app.robot.name != "dual_panda":
        app.picker.choice.value = "dual_panda"
        app.picker._load_clicked()
    app.set_tips_mode("independent")
    app.set_positions(app.robot.home())
    app.tick(0.0)
    return app


def ticks(app, seconds):
    for _ in range(int(seconds * RATE)):
        app.tick(1.0 / RATE)


def placed(handle) -> pin.SE3:
    return pin.SE3(rotation_of(handle.wxyz), np.array(handle.position, float))


def assert_at(handle, pose, atol=SHOWN):
    np.testing.assert_allclose(handle.position, pose.translation, atol=atol)
    np.testing.assert_allclose(rotation_of(handle.wxyz), pose.rotation, atol=atol)


def test_both_arms_are_drawn_with_a_tool_frame_and_a_gizmo_per_tip(two_arms):
    app, robot = two_arms, two_arms.robot
    scene = app.arm.scene
    q = app.session.positions
    assert robot.tip_frames == (LEFT, RIGHT)
    # links of both arms are in the scene
    names = " ".join(mesh.name for mesh in scene.visuals.meshes)
    assert "left_panda_link" in names and "right_panda_link" in names
    assert_at(scene.tool, robot.fk(q, LEFT))
    assert_at(scene.others[0].tool, robot.fk(q, RIGHT))
    gizmos = scene.tip_gizmos
    assert len(gizmos) == 2 and all(g.visible for g in gizmos)
    for gizmo, tip in zip(gizmos, robot.tip_frames):
        np.testing.assert_allclose(gizmo.position, robot.fk(q, tip).translation, atol=1e-9)
    assert not scene.object_gizmo.visible
    assert "right_panda_hand_tcp" in app.arm.panels.tips_text.content


def test_a_scripted_drag_of_the_right_gizmo_moves_the_right_tip_there_and_the_left_holds(two_arms):
    app, robot = two_arms, two_arms.robot
    left0, right0 = (robot.fk(app.session.positions, tip) for tip in (LEFT, RIGHT))
    goal = right0.translation + np.array([0.04, 0.03, -0.03])
    app.move_tip_gizmo(RIGHT, goal)
    worst = 0.0
    for _ in range(int(2.0 * RATE)):
        app.tick(1.0 / RATE)
        worst = max(worst, float(np.linalg.norm(robot.fk(app.session.positions, LEFT).translation
                                                - left0.translation)))
    right = robot.fk(app.session.positions, RIGHT)
    assert np.linalg.norm(right.translation - goal) <= app.session.servo_config.pose_tracking.linear_tolerance
    assert worst < 1e-4
    scene = app.arm.scene
    assert_at(scene.others[0].tool, right)                    # the shown right tool is where FK puts it
    assert scene.others[0].target.visible and not scene.target.visible
    np.testing.assert_allclose(scene.gizmo.position, left0.translation, atol=1e-9)   # the left gizmo stays on it


def test_coordinated_mode_shows_the_object_gizmo_and_moves_both_hands_with_it(two_arms):
    app, robot = two_arms, two_arms.robot
    app.set_tips_mode("coordinated")
    scene = app.arm.scene
    assert scene.object_gizmo.visible and not any(g.visible for g in scene.tip_gizmos)
    assert app.arm.panels.mode.value == "coordinated"
    left0, right0 = (robot.fk(app.session.positions, tip) for tip in (LEFT, RIGHT))
    centre = 0.5 * (left0.translation + right0.translation)
    np.testing.assert_allclose(scene.object_gizmo.position, centre, atol=1e-9)     # take_grasp's centroid
    np.testing.assert_allclose(scene.object_gizmo.wxyz, [1, 0, 0, 0], atol=1e-9)   # base axes
    step = np.array([0.0, 0.05, 0.0])
    app.move_object_gizmo(centre + step)
    held, worst = left0.actInv(right0), 0.0
    for _ in range(int(2.0 * RATE)):
        app.tick(1.0 / RATE)
        left, right = (robot.fk(app.session.positions, tip) for tip in (LEFT, RIGHT))
        worst = max(worst, float(np.linalg.norm(left.actInv(right).translation - held.translation)))
    assert worst <= 1e-4
    for hand, start in ((left, left0), (right, right0)):
        np.testing.assert_allclose(hand.translation - start.translation, step, atol=1e-4)
    assert_at(scene.object_frame, app.session.object_pose())
    np.testing.assert_allclose(scene.object_frame.position, centre + step, atol=1e-4)
    # the hidden tip gizmos followed their hands
    for gizmo, hand in zip(scene.tip_gizmos, (left, right)):
        np.testing.assert_allclose(gizmo.position, hand.translation, atol=SHOWN)
    app.set_tips_mode("independent")
    assert not scene.object_gizmo.visible and all(g.visible for g in scene.tip_gizmos)


def test_each_tip_has_its_own_ellipsoids_from_its_own_jacobian(two_arms):
    app, robot = two_arms, two_arms.robot
    q = app.session.positions
    q = q.copy()
    q[robot.joint_index("right_panda_joint2")] += 0.4            # the two arms in different configurations
    app.set_positions(q)
    app.tick(0.0)
    scales = []
    for tip, nodes in ((LEFT, app.arm.scene.overlays), (RIGHT, app.arm.scene.others[0].overlays)):
        analysis = analyze_tip(robot, q, tip)
        assert analysis.jacobian.shape[1] == 7                    # the tip's own arm
        ellipsoid = nodes.ellipsoids["velocity"]
        assert ellipsoid.visible
        np.testing.assert_allclose(ellipsoid.position, robot.fk(q, tip).translation, atol=SHOWN)
        # the velocity ellipsoid's axes are the singular values of the tip's own Jv, times the display scale
        singular = np.linalg.svd(analysis.jacobian[:3], compute_uv=False)
        scales.append(np.sort(ellipsoid.scale) / np.sort(singular))
    np.testing.assert_allclose(np.concatenate(scales), scales[0][0], rtol=1e-5)     # one scale for every axis
    assert not np.allclose(app.arm.scene.overlays.ellipsoids["velocity"].scale,
                           app.arm.scene.others[0].overlays.ellipsoids["velocity"].scale, rtol=1e-3)
    measures = app.arm.panels.measures.content
    assert f"**{LEFT}**" in measures and f"**{RIGHT}**" in measures


def test_bad_scripted_calls_name_what_is_wrong(two_arms):
    app = two_arms
    with pytest.raises(RobokinError, match=f"no gizmo 'middle'.*{LEFT}.*{RIGHT}.*object"):
        app.move_tip_gizmo("middle", (0.4, 0.0, 0.5))
    with pytest.raises(RobokinError, match="unknown tips mode 'sideways'"):
        app.set_tips_mode("sideways")
    assert app.session.tips_mode == "independent" and app.arm.panels.mode.value == "independent"
    app.move_object_gizmo((0.4, 0.0, 0.5))          # not in coordinated mode: refused, said in the status
    assert "coordinated mode" in app.session.message


@pytest.mark.parametrize("name, tips", [("dual_panda_torso", (LEFT, RIGHT)),
                                        ("baxter", ("left_gripper", "right_gripper"))])
def test_the_picker_loads_the_other_two_arm_robots_with_a_gizmo_per_tip(app, name, tips):
    app.picker.choice.value = name
    app.picker._load_clicked()
    assert app.robot.name == name and app.robot.tip_frames == tips
    app.tick(1.0 / RATE)
    scene = app.arm.scene
    for handle, tip in zip((scene.tool, scene.others[0].tool), tips):
        assert_at(handle, app.robot.fk(app.session.positions, tip))
    assert [f"Reach of {tip}" in app.picker.info.content for tip in tips] == [True, True]


def test_a_one_tip_robot_after_two_arms_has_one_gizmo_and_no_tips_controls(app):
    app.picker.choice.value = "panda"
    app.picker._load_clicked()
    assert app.tips is None and not hasattr(app.arm.scene, "object_gizmo")
    assert not hasattr(app.arm.panels, "mode")
    with pytest.raises(RobokinError, match="one tip"):
        app.set_tips_mode("coordinated")
    with pytest.raises(RobokinError, match="one tip"):
        app.move_object_gizmo((0.4, 0.0, 0.5))
