"""Homogeneous transforms on plain 4x4 numpy arrays, and the rotation parameterizations a course meets.

Every function here is written out from its textbook formula (Craig, *Introduction to Robotics*, ch. 2;
Siciliano et al., *Robotics*, ch. 2) so a student can read it; the tests check each one against Pinocchio.

Conventions:
    * A pose `a_T_b` is a (4, 4) array [[R, p], [0, 0, 0, 1]]: the pose of frame b in frame a, p in [m].
    * Roll-pitch-yaw is ZYX (fixed-axis XYZ): R = Rz(yaw) Ry(pitch) Rx(roll), the URDF `rpy` convention.
    * Quaternions are (x, y, z, w), w last as in ROS messages and Eigen's `coeffs()`.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.validation import check_vector

Array = npt.NDArray[np.float64]

#: |cos(pitch)| below this is treated as gimbal lock: roll and yaw are then no longer separable.
GIMBAL_EPS = 1e-9


class AxisAngle(NamedTuple):
    """A rotation by `angle` [rad] in [0, pi] about the unit vector `axis` (3,)."""

    axis: Array
    angle: float


def _rotation(R: npt.ArrayLike) -> Array:
    """The rotation block of a (3, 3) rotation or a (4, 4) transform."""
    M = np.asarray(R, dtype=float)
    if M.shape not in ((3, 3), (4, 4)):
        raise InvalidInputError(f"expected a (3, 3) rotation or a (4, 4) transform, got shape {M.shape}")
    if not np.isfinite(M).all():
        raise InvalidInputError("rotation has non-finite entries")
    return M[:3, :3]


def _homogeneous(R: Array, p: npt.ArrayLike = (0.0, 0.0, 0.0)) -> Array:
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def rot_x(angle: float) -> Array:
    """Rotation about x by `angle` [rad] as a (4, 4) transform."""
    c, s = np.cos(angle), np.sin(angle)
    return _homogeneous(np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]]))


def rot_y(angle: float) -> Array:
    """Rotation about y by `angle` [rad] as a (4, 4) transform."""
    c, s = np.cos(angle), np.sin(angle)
    return _homogeneous(np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]))


def rot_z(angle: float) -> Array:
    """Rotation about z by `angle` [rad] as a (4, 4) transform."""
    c, s = np.cos(angle), np.sin(angle)
    return _homogeneous(np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]))


def trans(x: float, y: float, z: float) -> Array:
    """Pure translation by (x, y, z) [m] as a (4, 4) transform."""
    return _homogeneous(np.eye(3), (x, y, z))


def inverse(T: npt.ArrayLike) -> Array:
    """Inverse of a rigid transform: [R^T, -R^T p].

    Exact for any rigid transform and cheaper than a general inverse; it also never turns a nearly singular
    (non-rigid) matrix into huge numbers, which is what np.linalg.inv would do.
    """
    T = np.asarray(T, dtype=float)
    if T.shape != (4, 4):
        raise InvalidInputError(f"inverse expects a (4, 4) transform, got shape {T.shape}")
    Rt = T[:3, :3].T
    return _homogeneous(Rt, -Rt @ T[:3, 3])


def pose(xyz: npt.ArrayLike, rpy: npt.ArrayLike = (0.0, 0.0, 0.0)) -> Array:
    """The (4, 4) transform of a URDF `<origin xyz=... rpy=...>` [m, rad]."""
    return _homogeneous(rpy_to_rotation(rpy), check_vector("xyz", xyz, 3))


def rpy_to_rotation(rpy: npt.ArrayLike) -> Array:
    """(roll, pitch, yaw) [rad] -> R = Rz(yaw) Ry(pitch) Rx(roll), (3, 3)."""
    roll, pitch, yaw = check_vector("rpy", rpy, 3)
    return (rot_z(yaw) @ rot_y(pitch) @ rot_x(roll))[:3, :3]


def rotation_to_rpy(R: npt.ArrayLike) -> Array:
    """R (3, 3) or T (4, 4) -> (roll, pitch, yaw) [rad] with pitch in [-pi/2, pi/2].

    From R = Rz(y) Ry(p) Rx(r): r20 = -sin p, r21 / r22 = tan r, r10 / r00 = tan y (divided by cos p).

    Gimbal lock (|cos p| < GIMBAL_EPS, pitch = +/-pi/2): only yaw - roll (pitch +pi/2) or yaw + roll
    (pitch -pi/2) is defined. We return roll = 0 and put the whole rotation about the vertical into yaw;
    with roll = 0, R = Rz(y) Ry(p) whose middle column is (-sin y, cos y, 0), which gives yaw directly.
    The returned angles always reproduce R exactly; they need not equal the angles R was built from.
    """
    M = _rotation(R)
    cos_pitch = np.hypot(M[0, 0], M[1, 0])
    pitch = np.arctan2(-M[2, 0], cos_pitch)
    if cos_pitch < GIMBAL_EPS:
        return np.array([0.0, pitch, np.arctan2(-M[0, 1], M[1, 1])])
    return np.array([np.arctan2(M[2, 1], M[2, 2]), pitch, np.arctan2(M[1, 0], M[0, 0])])


def _skew(v: Array) -> Array:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def axis_angle_to_rotation(axis: npt.ArrayLike, angle: float) -> Array:
    """Rodrigues' formula: R = I + sin(a) K + (1 - cos(a)) K^2, K = skew(unit axis), (3, 3).

    Raises:
        InvalidInputError: a zero or non-finite axis (a zero axis has no direction to rotate about).
    """
    k = check_vector("axis", axis, 3)
    norm = np.linalg.norm(k)
    if norm < 1e-12:
        raise InvalidInputError(f"axis must be a non-zero vector, got {k.tolist()}")
    K = _skew(k / norm)
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * (K @ K)


def rotation_to_axis_angle(R: npt.ArrayLike) -> AxisAngle:
    """R (3, 3) or T (4, 4) -> AxisAngle with angle in [0, pi]; axis (1, 0, 0) for the identity.

    The skew part R - R^T = 2 sin(a) K gives the axis except near a = pi, where sin(a) vanishes; there the
    symmetric part R + I = 2 k k^T (at a = pi) is used instead, read from its largest column for accuracy.
    """
    M = _rotation(R)
    w = np.array([M[2, 1] - M[1, 2], M[0, 2] - M[2, 0], M[1, 0] - M[0, 1]])   # 2 sin(a) k
    # atan2 of sin and cos keeps small angles accurate, where arccos((trace - 1) / 2) rounds them to 0
    angle = float(np.arctan2(0.5 * np.linalg.norm(w), 0.5 * (np.trace(M) - 1.0)))
    if angle == 0.0:
        return AxisAngle(np.array([1.0, 0.0, 0.0]), 0.0)
    if angle < np.pi - 1e-6:
        return AxisAngle(w / np.linalg.norm(w), angle)
    # R = cos(a) I + sin(a) K + (1 - cos a) k k^T, so its symmetric part minus cos(a) I is (1 - cos a) k k^T
    B = 0.5 * (M + M.T) - np.cos(angle) * np.eye(3)
    column = B[:, int(np.argmax(np.diag(B)))]
    k = column / np.linalg.norm(column)
    if k @ w < 0.0:              # the sign of k is fixed by the (small) skew part when there is one
        k = -k
    return AxisAngle(k, angle)


def quaternion_to_rotation(quat: npt.ArrayLike) -> Array:
    """(x, y, z, w) -> R (3, 3); the quaternion is normalised first.

    Raises:
        InvalidInputError: a zero-norm or non-finite quaternion.
    """
    q = check_vector("quaternion", quat, 4)
    norm = np.linalg.norm(q)
    if norm < 1e-12:
        raise InvalidInputError("quaternion must have a non-zero norm")
    x, y, z, w = q / norm
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def rotation_to_quaternion(R: npt.ArrayLike) -> Array:
    """R (3, 3) or T (4, 4) -> unit quaternion (x, y, z, w) with w >= 0.

    Shepperd's method: start from the largest of w^2, x^2, y^2, z^2 (read from the trace and the diagonal) so
    the division below is never by a small number.
    """
    M = _rotation(R)
    squares = np.array([1 + M[0, 0] - M[1, 1] - M[2, 2], 1 - M[0, 0] + M[1, 1] - M[2, 2],
                        1 - M[0, 0] - M[1, 1] + M[2, 2], 1 + np.trace(M)])          # 4 x^2, 4 y^2, 4 z^2, 4 w^2
    i = int(np.argmax(squares))
    s = 2.0 * np.sqrt(squares[i])                                                    # 4 * component i
    sums = {(0, 1): M[0, 1] + M[1, 0], (0, 2): M[0, 2] + M[2, 0], (1, 2): M[1, 2] + M[2, 1]}
    diffs = np.array([M[2, 1] - M[1, 2], M[0, 2] - M[2, 0], M[1, 0] - M[0, 1]])     # 4 w x, 4 w y, 4 w z
    q = np.empty(4)
    q[i] = 0.25 * s
    for j in range(3):
        if j != i:
            q[j] = (diffs[j] if i == 3 else sums[(min(i, j), max(i, j))]) / s
    if i != 3:
        q[3] = diffs[i] / s
    return q if q[3] >= 0.0 else -q
