"""One quaternion rule for every input that carries one (core/spatial.py): the same quaternion gets the same answer
as a servo pose target, a path waypoint, a program pose, a waypoint file entry, a TF transform, a scene object
from a file or a message, a calibration measurement and (where MoveIt's messages are installed) a CollisionObject
pose. Before core/spatial.py a quaternion of norm 1.01 moved the servo and a scene object sent as a message but was
refused as a waypoint, a transform and in a scene file."""
from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest
from servo_arm import IdealArm

from robokin_ros.core.classroom.calibration import parse_measurements
from robokin_ros.core.collision.clearance import ClearanceChecker
from robokin_ros.core.collision.scene import scene_from_mapping
from robokin_ros.core.collision.scene_change import SceneChange, SceneOperation, apply_scene_change
from robokin_ros.core.errors import ConfigError, InvalidInputError
from robokin_ros.core.frames import transform_from_translation_quaternion
from robokin_ros.core.path.geometry import pose_from_position_quaternion
from robokin_ros.core.program.program_file import program_from_mapping
from robokin_ros.core.servo.pose_tracking import PoseTarget, target_transform
from robokin_ros.core.spatial import SQUARED_NORM_TOLERANCE, pose_from_xyzw, quaternion_problem, unit_xyzw
from robokin_ros.tools.waypoint_file import waypoint_poses

START = pin.SE3(np.diag([1.0, -1.0, -1.0]), np.array([0.3, 0.0, 0.5]))
POSITION = np.array([0.4, 0.1, 0.5])
QUATERNIONS = {                                          # x, y, z, w
    "norm 1.01": ((0.0, 0.0, 0.0, 1.01), False),
    "norm 1 + 1e-4 (rounded in a text file)": ((0.0, 0.0, 0.0, 1.0 + 1e-4), True),
    "zero (an unset orientation)": ((0.0, 0.0, 0.0, 0.0), False),
    "NaN": ((0.0, np.nan, 0.0, 1.0), False),
}


def _servo_target(panda, q):
    arm = IdealArm(panda)
    arm.tick()
    target = PoseTarget(POSITION.copy(), np.array(q, float), "", 0, arm.now)
    arm.servo.set_pose_target(target)
    return target_transform(target).rotation


def _scene_message(panda, q):
    checker = ClearanceChecker(panda)
    apply_scene_change(checker, SceneChange(int(SceneOperation.ADD), "ball", "", POSITION.copy(), np.array(q, float),
                                            2, (0.05,)), pin.SE3.Identity())
    return checker.objects[0].base_T_object.rotation


def _scene_file(q):
    (ball,) = scene_from_mapping({"objects": [{"id": "ball", "shape": "sphere", "dimensions": [0.05],
                                               "position": POSITION.tolist(), "orientation": list(q)}]})
    return ball.base_T_object.rotation


def _program_pose(q):
    program = program_from_mapping({"moves": [{"type": "MoveL", "position": POSITION.tolist(),
                                               "orientation": list(q)}]}, START, 7)
    return program.moves[0].pose.rotation


def _moveit_pose(q):
    moveit_shapes = pytest.importorskip("robokin_ros.ros.moveit_shapes")
    x, y, z, w = q
    pose = SimpleNamespace(position=SimpleNamespace(x=0.4, y=0.1, z=0.5),
                           orientation=SimpleNamespace(x=x, y=y, z=z, w=w))
    return moveit_shapes.se3(pose, "collision object 'ball' pose").rotation


ENTRIES = {
    "servo pose target": _servo_target,
    "path waypoint": lambda panda, q: pose_from_position_quaternion(POSITION, q, 0).rotation,
    "waypoint file entry": lambda panda, q: waypoint_poses({"waypoints": [{"position": POSITION.tolist(),
                                                                          "orientation": list(q)}]}, START)[0].rotation,
    "program pose": lambda panda, q: _program_pose(q),
    "TF transform": lambda panda, q: transform_from_translation_quaternion(POSITION, q, "camera").rotation,
    "scene object message": _scene_message,
    "scene file object": lambda panda, q: _scene_file(q),
    "calibration measurement": lambda panda, q: parse_measurements(np.array([[*POSITION, *q]]), 1).rotations[0],
    "MoveIt CollisionObject pose": lambda panda, q: _moveit_pose(q),
}


def _answer(entry, panda, q):
    """(accepted, the rotation or the refusal's text)."""
    try:
        return True, ENTRIES[entry](panda, q)
    except (InvalidInputError, ConfigError) as refusal:
        return False, str(refusal)


@pytest.mark.parametrize("case", list(QUATERNIONS))
@pytest.mark.parametrize("entry", list(ENTRIES))
def test_every_entry_gives_the_same_answer(panda, entry, case):
    q, accepted = QUATERNIONS[case]
    ok, detail = _answer(entry, panda, q)
    assert ok == accepted, f"{entry}: {case} {'accepted' if ok else 'refused'}: {detail}"
    if ok:                                              # normalised: the identity, not a scaled matrix
        np.testing.assert_allclose(detail, np.eye(3), atol=1e-15)
    elif np.isfinite(q).all():                           # the refusal gives the norm
        assert f"{np.linalg.norm(q):g}" in detail and "norm" in detail, detail


def test_the_rule_is_tf2s_squared_norm_tolerance():
    # tf2 (BufferCore::setTransform) refuses |q|^2 off 1 by 0.01 or more: a norm of about 0.995 ... 1.005
    assert SQUARED_NORM_TOLERANCE == 0.01
    for w in (1.004, 0.996, 1.0 + 1e-4, np.sqrt(1.0099)):
        assert quaternion_problem((0.0, 0.0, 0.0, w)) is None, w
    for w in (1.006, 0.994, 1.0051, 2.0, 0.5, 0.0):
        assert quaternion_problem((0.0, 0.0, 0.0, w)) is not None, w
    assert quaternion_problem((0.0, 0.0, np.inf, 1.0)) is not None
    assert quaternion_problem((0.0, 0.0, 1.0)) is not None


def test_a_refusal_names_the_field_and_gives_the_norm():
    with pytest.raises(InvalidInputError, match=r"^pose target orientation quaternion \[0.0, 0.0, 0.0, 2.0\] has "
                                                r"norm 2, not 1: not a unit quaternion, so not a rotation"):
        unit_xyzw([0.0, 0.0, 0.0, 2.0], "pose target orientation quaternion")
    # all zeros is the usual mistake (an unset orientation): its words say so, as the servo's always did
    unset = r"^pose target orientation quaternion \[0.0, 0.0, 0.0, 0.0\] \(x, y, z, w\) has norm 0: not a rotation " \
        r"\(an unset orientation is all zeros; identity is w=1\)$"
    with pytest.raises(InvalidInputError, match=unset):
        unit_xyzw([0.0, 0.0, 0.0, 0.0], "pose target orientation quaternion")


def test_the_pose_is_normalised_and_placed():
    s = np.sqrt(0.5) * 1.002
    T = pose_from_xyzw([1.0, 2.0, 3.0], [0.0, 0.0, s, s])              # 90 deg about z, norm 1.002
    np.testing.assert_allclose(T.rotation @ [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(T.translation, [1.0, 2.0, 3.0])
