"""Frames outside the model: the transform tree (tf2's composition and errors) and twists given in such a frame.

Evidence: chains are checked against plain 4x4 matrix products; a twist in an external frame is checked against
the same twist in a model frame placed at that pose (the arm must move identically), and against rigid-body
motion integrated with the exponential map.
"""
import dataclasses

import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.embedded import embedded_robot
from robokin_ros.core.errors import InvalidInputError, RobokinError, UnknownFrameError
from robokin_ros.core.frames import TransformLookupError, TransformTree, transform_from_translation_quaternion
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.servo import Servo
from robokin_ros.core.servo.types import JointMeasurement, TwistCommand

DT = 0.002
# A camera looking down at the table, turned about a skewed axis: no axis of it is parallel to one of the base.
BASE_T_CAMERA = pin.SE3(pin.exp3(np.array([0.4, -1.1, 2.0])), np.array([0.6, -0.3, 0.9]))


def random_pose(rng):
    return pin.SE3(pin.exp3(rng.normal(size=3)), rng.normal(size=3))


def matrix(pose: pin.SE3) -> np.ndarray:
    return np.array(pose.homogeneous)


# ---- transform tree ------------------------------------------------------------------------------------
def test_lookup_composes_through_the_common_ancestor(seed=3):
    rng = np.random.default_rng(seed)
    world_T_base, base_T_mount, mount_T_camera, world_T_table = (random_pose(rng) for _ in range(4))
    tree = TransformTree()
    tree.set_transform("world", "base", world_T_base)
    tree.set_transform("base", "mount", base_T_mount)
    tree.set_transform("mount", "camera", mount_T_camera)
    tree.set_transform("world", "table", world_T_table)
    expected = (np.linalg.inv(matrix(world_T_table)) @ matrix(world_T_base) @ matrix(base_T_mount)
                @ matrix(mount_T_camera))                                 # table_T_camera, (4, 4)
    np.testing.assert_allclose(matrix(tree.lookup("table", "camera")), expected, atol=1e-12)
    np.testing.assert_allclose(matrix(tree.lookup("camera", "table")), np.linalg.inv(expected), atol=1e-12)
    np.testing.assert_allclose(matrix(tree.lookup("/base", "camera")),
                               matrix(base_T_mount) @ matrix(mount_T_camera), atol=1e-12)
    assert tree.lookup("camera", "camera").isIdentity(1e-15)
    assert tree.frames == ("base", "camera", "mount", "table", "world")


def test_the_newest_transform_wins_and_a_new_parent_reparents():
    tree = TransformTree()
    tree.set_transform("base", "camera", pin.SE3(np.eye(3), np.array([1.0, 0, 0])))
    tree.set_transform("base", "camera", pin.SE3(np.eye(3), np.array([2.0, 0, 0])))
    np.testing.assert_allclose(tree.lookup("base", "camera").translation, [2.0, 0, 0])
    tree.set_transform("base", "arm", pin.SE3(np.eye(3), np.array([0, 1.0, 0])))
    tree.set_transform("arm", "camera", pin.SE3(np.eye(3), np.array([0, 0, 1.0])))
    np.testing.assert_allclose(tree.lookup("base", "camera").translation, [0, 1.0, 1.0])


def test_lookup_errors_read_like_tf2():
    tree = TransformTree()
    tree.set_transform("panda_link0", "panda_link1", pin.SE3.Identity())
    tree.set_transform("map", "camera", pin.SE3.Identity())
    with pytest.raises(TransformLookupError) as err:
        tree.lookup("panda_link0", "kamera")
    assert str(err.value).startswith('"kamera" passed to lookupTransform argument source_frame does not exist')
    with pytest.raises(TransformLookupError, match='"odom" passed to lookupTransform argument target_frame'):
        tree.lookup("odom", "camera")
    with pytest.raises(TransformLookupError) as err:
        tree.lookup("panda_link0", "camera")
    assert "Could not find a connection between 'panda_link0' and 'camera'" in str(err.value)
    assert isinstance(err.value, RobokinError) and (err.value.target, err.value.source) == ("panda_link0", "camera")


def test_bad_transforms_are_refused():
    tree = TransformTree()
    with pytest.raises(InvalidInputError, match="empty frame name"):
        tree.set_transform("", "camera", pin.SE3.Identity())
    with pytest.raises(InvalidInputError, match="'camera' to itself"):
        tree.set_transform("camera", "/camera", pin.SE3.Identity())
    assert tree.frames == ()


def test_transform_from_translation_quaternion():
    s = np.sqrt(0.5)
    T = transform_from_translation_quaternion([1, 2, 3], [0, 0, s, s], "camera")       # 90 deg about z
    np.testing.assert_allclose(T.rotation @ [1, 0, 0], [0, 1, 0], atol=1e-15)
    np.testing.assert_allclose(T.translation, [1, 2, 3])
    slightly_off = transform_from_translation_quaternion([0, 0, 0], [0, 0, 0, 1.004])     # tf2 accepts this
    np.testing.assert_allclose(slightly_off.rotation, np.eye(3), atol=1e-15)
    with pytest.raises(InvalidInputError, match="frame 'camera' has a denormalized quaternion"):
        transform_from_translation_quaternion([0, 0, 0], [0, 0, 0, 0], "camera")
    with pytest.raises(InvalidInputError, match="frame 'camera' has NaN/inf"):
        transform_from_translation_quaternion([0, np.nan, 0], [0, 0, 0, 1], "camera")


# ---- twists in a frame outside the model ---------------------------------------------------------------
@pytest.fixture(scope="module")
def panda_with_camera():
    """The Panda with a fixed model frame 'fake_camera' at BASE_T_CAMERA: the reference a TF frame must match."""
    model = pin.buildModelFromUrdf(str(embedded_robot("panda").urdf))
    base = model.frames[model.getFrameId("panda_link0")]
    world_T_base = base.placement if base.parentJoint == 0 else None
    assert world_T_base is not None, "panda_link0 should hang on the universe joint"
    model.addFrame(pin.Frame("fake_camera", 0, model.getFrameId("panda_link0"), world_T_base * BASE_T_CAMERA,
                             pin.FrameType.OP_FRAME))
    robot = RobotModel(model, "panda_link0", "panda_hand_tcp", name="panda")
    np.testing.assert_allclose(matrix(robot.fk(robot.home(), "fake_camera")), matrix(BASE_T_CAMERA), atol=1e-12)
    return robot


def run(robot, command, base_T_frame=None, ticks=60, **config):
    """Positions commanded over `ticks` by a servo whose measurement follows its command."""
    servo = Servo(robot, ServoConfig(publish_period=DT, **config))
    servo.set_measurement(JointMeasurement(robot.home(), 0.0))
    positions = []
    for k in range(1, ticks + 1):
        servo.set_command(dataclasses.replace(command, received_at=k * DT), base_T_frame)
        out = servo.step(k * DT)
        servo.set_measurement(JointMeasurement(out.positions, k * DT))
        positions.append(out.positions)
    return np.array(positions)                                             # (ticks, n)


@pytest.mark.parametrize("about_tool", [True, False])
@pytest.mark.parametrize("units", ["unitless", "speed_units"])
def test_a_tf_frame_moves_the_arm_exactly_like_a_model_frame_at_that_pose(panda_with_camera, about_tool, units):
    # unitless components beyond 1 are clipped in the command frame's axes in both cases
    if units == "unitless":
        linear, angular = (0.3, -1.7, 0.5), (0.4, 0.2, -1.3)
    else:
        linear, angular = (0.05, -0.08, 0.03), (0.2, 0.1, -0.3)
    command = TwistCommand(np.array(linear), np.array(angular), "fake_camera", 0.0)
    config = dict(command_in_type=units, apply_twist_about_tool=about_tool)
    reference = run(panda_with_camera, command, **config)
    external = run(panda_with_camera, dataclasses.replace(command, frame="camera"), BASE_T_CAMERA, **config)
    assert np.linalg.norm(reference[-1] - reference[0]) > 1e-3, "the arm should move"
    np.testing.assert_allclose(external, reference, atol=1e-12)
    # control: the same numbers given in base axes move the arm differently
    base = run(panda_with_camera, dataclasses.replace(command, frame=""), **config)
    assert np.abs(base[-1] - reference[-1]).max() > 1e-3


def tool_twist(robot, q0, q1, dt=DT):
    T0, T1 = robot.fk(q0), robot.fk(q1)
    return np.concatenate((T1.translation - T0.translation, pin.log3(T1.rotation @ T0.rotation.T))) / dt


def test_spatial_twist_about_the_tf_frame_origin_matches_rigid_body_motion(panda):
    v, w = np.array([0.02, -0.01, 0.03]), np.array([0.1, -0.2, 0.15])      # camera axes, about its origin
    command = TwistCommand(v, w, "camera", 0.0)
    positions = run(panda, command, BASE_T_CAMERA, ticks=20, command_in_type="speed_units",
                    apply_twist_about_tool=False, default_joint_acceleration=1000.0)
    # a body moved by the twist xi given in camera coordinates: camera_T_tool(h) = exp6(xi h) camera_T_tool(0)
    camera_T_tool = BASE_T_CAMERA.actInv(panda.fk(positions[-2]))
    h = 1e-6
    moved = BASE_T_CAMERA * pin.exp6(pin.Motion(v, w) * h) * camera_T_tool
    expected = np.concatenate((moved.translation - (BASE_T_CAMERA * camera_T_tool).translation,
                               pin.log3(moved.rotation @ (BASE_T_CAMERA * camera_T_tool).rotation.T))) / h
    np.testing.assert_allclose(tool_twist(panda, positions[-2], positions[-1]), expected, atol=1e-4)


def test_tool_twist_in_tf_frame_axes_is_only_rotated(panda):
    v, w = np.array([0.03, 0.0, 0.0]), np.array([0.0, 0.0, 0.2])
    positions = run(panda, TwistCommand(v, w, "camera", 0.0), BASE_T_CAMERA, ticks=20,
                    command_in_type="speed_units", default_joint_acceleration=1000.0)
    R = BASE_T_CAMERA.rotation
    np.testing.assert_allclose(tool_twist(panda, positions[-2], positions[-1]), np.concatenate((R @ v, R @ w)),
                               atol=1e-4)


def test_without_a_pose_an_unknown_frame_is_still_refused(panda):
    servo = Servo(panda, ServoConfig())
    with pytest.raises(UnknownFrameError, match="frame 'camera' is not in the model"):
        servo.set_command(TwistCommand(np.zeros(3), np.zeros(3), "camera", 0.0))
