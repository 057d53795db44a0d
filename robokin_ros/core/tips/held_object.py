"""An object held rigidly by several tips, and one tip moving relative to another: the kinematics they share.

Conventions (the same as the servo's and `RobotModel.jacobian`'s default): a twist is [v; w] of a point, in base
axes; a tip's Jacobian is LOCAL_WORLD_ALIGNED (its origin's velocity, base axes). A wrench is [f; m] about a point,
in base axes.

The object frame is fixed in the hands when the grasp is taken (`take_grasp`): its origin is the centroid of the tip
origins and its axes are the base axes at that moment; from then on it moves rigidly with the first tip, and the
others must keep their pose in it (`Grasp.object_T_tips`).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pinocchio as pin
from numba import njit

from robokin_ros.core.so3 import log3_into


class Grasp(NamedTuple):
    """The tips' poses in the object frame, fixed while the object is held."""

    object_T_tips: tuple[pin.SE3, ...]

    def base_T_object(self, base_T_first_tip: pin.SE3) -> pin.SE3:
        """Where the object is, from where the first tip is (the object rides on the first tip)."""
        return base_T_first_tip * self.object_T_tips[0].inverse()

    def base_T_tips(self, base_T_object: pin.SE3) -> tuple[pin.SE3, ...]:
        """Where each tip must be for the object to be at `base_T_object`."""
        return tuple(base_T_object * object_T_tip for object_T_tip in self.object_T_tips)


def take_grasp(base_T_tips: Sequence[pin.SE3]) -> tuple[pin.SE3, Grasp]:
    """(base_T_object, grasp) for tips at `base_T_tips`: the object frame at their centroid, with base axes."""
    centroid = np.mean([tip.translation for tip in base_T_tips], axis=0)        # (3,)
    base_T_object = pin.SE3(np.eye(3), centroid)
    return base_T_object, Grasp(tuple(base_T_object.actInv(tip) for tip in base_T_tips))


def cross_matrix(r: np.ndarray) -> np.ndarray:
    """(3, 3) [r]x: [r]x @ a = r x a."""
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def move_twist(twist: np.ndarray, from_point: np.ndarray, to_point: np.ndarray) -> np.ndarray:
    """(6,) the twist of the rigid body moving with `twist` (6,) at `from_point`, taken at `to_point` (3,)."""
    moved = twist.copy()
    moved[:3] += np.cross(twist[3:], to_point - from_point)
    return moved


def point_jacobian(tip_jacobian: np.ndarray, tip_origin: np.ndarray, point: np.ndarray) -> np.ndarray:
    """(6, n) the Jacobian of `point` (3,) fixed on the tip's body, from the tip's (6, n) Jacobian at `tip_origin`."""
    moved = tip_jacobian.copy()
    moved[:3] -= cross_matrix(point - tip_origin) @ tip_jacobian[3:]
    return moved


def relative_jacobian(jacobian_a: np.ndarray, jacobian_b: np.ndarray, base_T_a: pin.SE3,
                      base_T_b: pin.SE3) -> np.ndarray:
    """(6, n) the motion of tip b as seen from tip a, in base axes.

    Rows: d/dt of b's origin in a's frame, rotated into base axes (ṗ_b - ṗ_a - w_a x (p_b - p_a)), and w_b - w_a.
    Zero rows-times-velocity means b keeps its pose in a's frame: the two hands move as one body.
    """
    p_ab = base_T_b.translation - base_T_a.translation                     # (3,)
    relative = jacobian_b - jacobian_a
    relative[:3] += cross_matrix(p_ab) @ jacobian_a[3:]
    return relative


def relative_pose_error(base_T_a: pin.SE3, base_T_b: pin.SE3, a_T_b_held: pin.SE3) -> np.ndarray:
    """(6,) [m, rad] how far b has drifted from its held pose in a's frame, in base axes: the relative twist over one
    second that would bring it back is minus this (the same rows as `relative_jacobian`)."""
    a_T_b = base_T_a.actInv(base_T_b)
    position = a_T_b.translation - a_T_b_held.translation                               # (3,) a's axes
    rotation = pin.log3(a_T_b.rotation @ a_T_b_held.rotation.T)                         # (3,) a's axes
    return np.concatenate((base_T_a.rotation @ position, base_T_a.rotation @ rotation))


def grasp_matrix(object_origin: np.ndarray, tip_origins: Sequence[np.ndarray]) -> np.ndarray:
    """(6, 6 k) G: the wrench on the object (about its origin) = G @ the stacked wrenches the k tips apply (each
    about its own origin). Its transpose carries the object's twist to every tip: stacked tip twists = G.T @ twist."""
    blocks = []
    for origin in tip_origins:
        block = np.eye(6)
        block[3:, :3] = cross_matrix(np.asarray(origin) - object_origin)
        blocks.append(block)
    return np.hstack(blocks)


# ---- the same rows, compiled, into caller-owned arrays (the servo's per-tick stacked task) ------------------------
# `point_jacobian`, `relative_jacobian` and `relative_pose_error` above are the reference; these write the same
# numbers without allocating (test_tip_task checks them against the reference to rounding): assembled in numpy a
# two-hand task cost ~35 us a tick, most of it in small temporaries.
@njit(cache=True)
def point_rows_into(tip_jacobian, tip_origin, point, out):
    """out (6, n) = `point_jacobian(tip_jacobian, tip_origin, point)`."""
    r0, r1, r2 = point[0] - tip_origin[0], point[1] - tip_origin[1], point[2] - tip_origin[2]
    for j in range(tip_jacobian.shape[1]):
        wx, wy, wz = tip_jacobian[3, j], tip_jacobian[4, j], tip_jacobian[5, j]
        out[0, j] = tip_jacobian[0, j] - (r1 * wz - r2 * wy)
        out[1, j] = tip_jacobian[1, j] - (r2 * wx - r0 * wz)
        out[2, j] = tip_jacobian[2, j] - (r0 * wy - r1 * wx)
        out[3, j], out[4, j], out[5, j] = wx, wy, wz


@njit(cache=True)
def relative_rows_into(jacobian_a, jacobian_b, origin_a, origin_b, out):
    """out (6, n) = `relative_jacobian(jacobian_a, jacobian_b, base_T_a, base_T_b)` from the tips' origins (3,)."""
    p0, p1, p2 = origin_b[0] - origin_a[0], origin_b[1] - origin_a[1], origin_b[2] - origin_a[2]
    for j in range(jacobian_a.shape[1]):
        wx, wy, wz = jacobian_a[3, j], jacobian_a[4, j], jacobian_a[5, j]
        out[0, j] = jacobian_b[0, j] - jacobian_a[0, j] + (p1 * wz - p2 * wy)
        out[1, j] = jacobian_b[1, j] - jacobian_a[1, j] + (p2 * wx - p0 * wz)
        out[2, j] = jacobian_b[2, j] - jacobian_a[2, j] + (p0 * wy - p1 * wx)
        for i in range(3, 6):
            out[i, j] = jacobian_b[i, j] - jacobian_a[i, j]


@njit(cache=True)
def relative_error_into(rotation_a, origin_a, rotation_b, origin_b, held_rotation, held_translation, out):
    """out (6,) = `relative_pose_error(base_T_a, base_T_b, a_T_b_held)` from the poses' rotations (3, 3) and
    origins (3,)."""
    d = np.empty(3)
    for i in range(3):
        d[i] = origin_b[i] - origin_a[i]
    position = np.empty(3)
    for i in range(3):                                   # a's axes: R_a^T (p_b - p_a) - p_held
        position[i] = rotation_a[0, i] * d[0] + rotation_a[1, i] * d[1] + rotation_a[2, i] * d[2] \
            - held_translation[i]
    a_R_b = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            a_R_b[i, j] = rotation_a[0, i] * rotation_b[0, j] + rotation_a[1, i] * rotation_b[1, j] \
                + rotation_a[2, i] * rotation_b[2, j]
    drift = np.empty((3, 3))                               # (a_R_b) (a_R_b_held)^T
    for i in range(3):
        for j in range(3):
            drift[i, j] = a_R_b[i, 0] * held_rotation[j, 0] + a_R_b[i, 1] * held_rotation[j, 1] \
                + a_R_b[i, 2] * held_rotation[j, 2]
    rotation = np.empty(3)
    log3_into(drift, rotation)
    for i in range(3):
        out[i] = rotation_a[i, 0] * position[0] + rotation_a[i, 1] * position[1] + rotation_a[i, 2] * position[2]
        out[3 + i] = rotation_a[i, 0] * rotation[0] + rotation_a[i, 1] * rotation[1] + rotation_a[i, 2] * rotation[2]
