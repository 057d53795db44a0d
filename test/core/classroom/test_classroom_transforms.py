"""The classroom transforms against Pinocchio, the UR5 URDF and their own round trips."""
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.classroom import transforms as tf
from robokin_ros.core.embedded import embedded_robot
from robokin_ros.core.errors import InvalidInputError

RNG_SEEDS = range(200)


def random_rotation(rng):
    return pin.exp3(rng.uniform(-np.pi, np.pi, 3) * 0.999)


def test_elementary_rotations_match_pinocchio_and_textbook_values():
    for axis, fn in zip(np.eye(3), (tf.rot_x, tf.rot_y, tf.rot_z)):
        for angle in (-2.0, 0.3, np.pi / 2):
            np.testing.assert_allclose(fn(angle)[:3, :3], pin.exp3(angle * axis), atol=1e-15)
    # Rz(90 deg) turns x into y (a right-handed frame); Tx then Rz differs from Rz then Tx
    np.testing.assert_allclose(tf.rot_z(np.pi / 2)[:3, :3] @ [1, 0, 0], [0, 1, 0], atol=1e-15)
    np.testing.assert_allclose((tf.rot_z(np.pi / 2) @ tf.trans(1, 0, 0))[:3, 3], [0, 1, 0], atol=1e-15)
    np.testing.assert_allclose((tf.trans(1, 0, 0) @ tf.rot_z(np.pi / 2))[:3, 3], [1, 0, 0], atol=1e-15)


@pytest.mark.parametrize("seed", RNG_SEEDS[:50])
def test_inverse_is_the_rigid_inverse(seed):
    rng = np.random.default_rng(seed)
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = random_rotation(rng), rng.normal(size=3)
    np.testing.assert_allclose(tf.inverse(T) @ T, np.eye(4), atol=1e-14)
    np.testing.assert_allclose(tf.inverse(T), pin.SE3(T).inverse().homogeneous, atol=1e-14)


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_rpy_matches_pinocchio_both_ways(seed):
    rng = np.random.default_rng(seed)
    rpy = rng.uniform([-np.pi, -np.pi / 2, -np.pi], [np.pi, np.pi / 2, np.pi])
    R = tf.rpy_to_rotation(rpy)
    np.testing.assert_allclose(R, pin.rpy.rpyToMatrix(*rpy), atol=1e-15)
    np.testing.assert_allclose(tf.rotation_to_rpy(R), pin.rpy.matrixToRpy(R), atol=1e-12)
    np.testing.assert_allclose(tf.rotation_to_rpy(R), rpy, atol=1e-9)          # away from +/-pi edges


@pytest.mark.parametrize("pitch", [np.pi / 2, -np.pi / 2])
def test_rpy_at_gimbal_lock_returns_zero_roll_and_the_same_rotation(pitch):
    # roll and yaw are not separable here: only yaw -/+ roll is defined, so roll = 0 by our convention
    R = tf.rpy_to_rotation([0.7, pitch, -0.4])
    rpy = tf.rotation_to_rpy(R)
    assert rpy[0] == 0.0 and rpy[1] == pytest.approx(pitch, abs=1e-12)
    np.testing.assert_allclose(tf.rpy_to_rotation(rpy), R, atol=1e-12)
    np.testing.assert_allclose(pin.rpy.rpyToMatrix(pin.rpy.matrixToRpy(R)), tf.rpy_to_rotation(rpy), atol=1e-9)
    # the combined angle: yaw - roll = -0.4 - 0.7 at +pi/2, yaw + roll = -0.4 + 0.7 at -pi/2
    assert rpy[2] == pytest.approx(-1.1 if pitch > 0 else 0.3, abs=1e-12)


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_axis_angle_matches_exp3_log3(seed):
    rng = np.random.default_rng(seed)
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    angle = rng.uniform(0.0, np.pi)
    R = tf.axis_angle_to_rotation(axis, angle)
    np.testing.assert_allclose(R, pin.exp3(angle * axis), atol=1e-14)
    k, a = tf.rotation_to_axis_angle(R)
    np.testing.assert_allclose(a * k, pin.log3(R), atol=1e-9)
    np.testing.assert_allclose(tf.axis_angle_to_rotation(k, a), R, atol=1e-12)


@pytest.mark.parametrize("angle", [0.0, 1e-9, np.pi - 1e-8, np.pi])
def test_axis_angle_near_zero_and_pi(angle):
    axis = np.array([1.0, -2.0, 0.5]) / np.linalg.norm([1.0, -2.0, 0.5])
    R = tf.axis_angle_to_rotation(axis, angle)
    k, a = tf.rotation_to_axis_angle(R)
    np.testing.assert_allclose(tf.axis_angle_to_rotation(k, a), R, atol=1e-12)
    assert a == pytest.approx(angle, abs=1e-7)


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_quaternion_matches_pinocchio_both_ways(seed):
    rng = np.random.default_rng(seed)
    R = random_rotation(rng)
    q = tf.rotation_to_quaternion(R)
    expected = pin.Quaternion(R).coeffs()                   # (x, y, z, w)
    expected = expected if expected[3] >= 0 else -expected
    np.testing.assert_allclose(q, expected, atol=1e-14)
    np.testing.assert_allclose(tf.quaternion_to_rotation(q), R, atol=1e-14)
    np.testing.assert_allclose(tf.quaternion_to_rotation(q), pin.Quaternion(*q[[3, 0, 1, 2]]).matrix(), atol=1e-14)


def test_quaternion_of_half_turns_uses_every_branch():
    # rotations by pi about x, y, z have w = 0: the branches that start from x, y or z must be taken
    for axis in np.eye(3):
        q = tf.rotation_to_quaternion(tf.axis_angle_to_rotation(axis, np.pi))
        np.testing.assert_allclose(np.abs(q), np.append(axis, 0.0), atol=1e-15)


def test_urdf_joint_origins_equal_the_placements_pinocchio_built():
    """ur5.urdf's joint origins (one has pitch = pi/2, gimbal lock) through pose() vs Pinocchio's parser."""
    xml = embedded_robot("ur5").xml
    model = pin.buildModelFromXML(xml)
    checked = 0
    for joint in ET.fromstring(xml).findall("joint"):      # direct children: transmissions name joints too
        if joint.get("type") == "fixed":
            continue
        origin = joint.find("origin")
        xyz = [float(v) for v in origin.get("xyz").split()]
        rpy = [float(v) for v in origin.get("rpy").split()]
        placement = model.jointPlacements[model.getJointId(joint.get("name"))]
        np.testing.assert_allclose(tf.pose(xyz, rpy), placement.homogeneous, atol=1e-15)
        np.testing.assert_allclose(tf.rpy_to_rotation(tf.rotation_to_rpy(placement)), placement.rotation,
                                   atol=1e-12)
        checked += 1
    assert checked == 6


def test_bad_inputs_name_the_culprit():
    with pytest.raises(InvalidInputError, match="axis must be a non-zero vector"):
        tf.axis_angle_to_rotation([0, 0, 0], 1.0)
    with pytest.raises(InvalidInputError, match="quaternion must have a non-zero norm"):
        tf.quaternion_to_rotation([0, 0, 0, 0])
    with pytest.raises(InvalidInputError, match=r"rpy has non-finite entries at indices \[1\]"):
        tf.rpy_to_rotation([0, np.nan, 0])
    with pytest.raises(InvalidInputError, match=r"got shape \(2, 2\)"):
        tf.rotation_to_rpy(np.eye(2))
