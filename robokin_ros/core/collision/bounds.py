"""Cheap lower bounds of every pair's distance, so that only the pairs that can be nearest get an exact distance.

Two bounds, both valid for signed distances where used:

- balls: every geometry lies in a ball (centre c, radius r), so distance >= |c_a - c_b| - r_a - r_b; this also
  bounds a penetration (moving b by r_a + r_b - |c_a - c_b| along c_b - c_a separates the balls, hence the shapes);
- boxes, for robot-object pairs: the object lies in its local bounding box (an oriented box in the world), so
  distance >= dist(c_robot, box) - r_robot when that is positive (a ball that reaches into the box says nothing
  about a penetration depth, so the ball bound stands alone there). For a table under the arm this is the height
  of the ball above the table top, where the table's ball would be useless.

Pair order (the checker builds its pairs the same way): the self pairs as given, then for each object in turn,
every moving robot geometry in `moving` order. The kernels are numba-compiled (`cache=True`, like core.dls): with
~200 pairs a numpy expression per step costs more in dispatch than the arithmetic, and a Python loop over pairs
more than the exact distances it saves.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
from numba import njit

from robokin_ros.core.collision.geometry import bounding_spheres


@njit(cache=True)
def _bounds_kernel(H, slot, centre_local, radius, a, b, moving, R, t, box_centre, box_half, ball_centre,
                   ball_radius, centre, out):
    """Fill `out` (pairs,) with lower bounds and return the index of the lowest; `centre` (g, 3) receives the
    geometries' world ball centres. Scalar loops only: small temporary arrays would dominate the cost."""
    for g in range(centre_local.shape[0]):
        if slot[g] < 0:           # on the universe joint: its frame is the world
            centre[g, :] = centre_local[g, :]
        else:
            M = H[slot[g]]
            for i in range(3):
                centre[g, i] = (M[i, 0] * centre_local[g, 0] + M[i, 1] * centre_local[g, 1]
                                + M[i, 2] * centre_local[g, 2] + M[i, 3])
    lowest = 0
    for p in range(a.shape[0]):
        dx = centre[a[p], 0] - centre[b[p], 0]
        dy = centre[a[p], 1] - centre[b[p], 1]
        dz = centre[a[p], 2] - centre[b[p], 2]
        out[p] = np.sqrt(dx * dx + dy * dy + dz * dz) - radius[a[p]] - radius[b[p]]
        if out[p] < out[lowest]:
            lowest = p
    p = a.shape[0]
    for o in range(R.shape[0]):
        for g in moving:
            r = radius[g]
            dx, dy, dz = centre[g, 0] - t[o, 0], centre[g, 1] - t[o, 1], centre[g, 2] - t[o, 2]
            bx, by, bz = centre[g, 0] - ball_centre[o, 0], centre[g, 1] - ball_centre[o, 1], centre[g, 2] - \
                ball_centre[o, 2]
            ball = np.sqrt(bx * bx + by * by + bz * bz) - r - ball_radius[o]
            outside = 0.0
            for i in range(3):    # the centre in the object's frame, then its excess over the box's half sizes
                local = R[o, 0, i] * dx + R[o, 1, i] * dy + R[o, 2, i] * dz - box_centre[o, i]
                excess = abs(local) - box_half[o, i]
                if excess > 0.0:
                    outside += excess * excess
            box = np.sqrt(outside) - r
            out[p] = max(ball, box) if box > 0.0 else ball
            if out[p] < out[lowest]:
                lowest = p
            p += 1
    return lowest


@njit(cache=True)
def _select_kernel(bounds, cutoff, skip, first, second, active_map):
    """Mark the pairs with bound < cutoff (but `skip`) in the upper-triangular `active_map`.

    Returns (how many were marked, the lowest bound among the pairs left out, inf when none).
    """
    active_map[:, :] = False
    count, rest = 0, np.inf
    for p in range(bounds.shape[0]):
        if p == skip:
            continue
        if bounds[p] < cutoff:
            active_map[first[p], second[p]] = True
            count += 1
        elif bounds[p] < rest:
            rest = bounds[p]
    return count, rest


class PairBounds:
    """Per-check lower bounds (pairs,) [m] of the robot's self pairs and robot-object pairs."""

    def __init__(self, robot_geometry: pin.GeometryModel, self_pairs: tuple[tuple[int, int], ...]) -> None:
        joints = np.array([g.parentJoint for g in robot_geometry.geometryObjects], dtype=np.int64)
        self._centre_local, self._radius = bounding_spheres(robot_geometry)   # in the parent joint's frame
        self.moving = np.flatnonzero(joints != 0).astype(np.int64)            # geometry moved by a chain joint
        unique, slot = np.unique(joints[self.moving], return_inverse=True)
        self._joints = [int(j) for j in unique]      # Pinocchio vectors take Python ints only
        self._slot = np.full(len(joints), -1, dtype=np.int64)
        self._slot[self.moving] = slot.ravel()
        self.centre = np.zeros((len(joints), 3))    # world ball centres after `update`
        pairs = np.array(self_pairs, dtype=np.int64).reshape(-1, 2)
        self._a, self._b = pairs[:, 0].copy(), pairs[:, 1].copy()
        self.set_objects([])

    def set_objects(self, objects: list[pin.GeometryObject]) -> None:
        """The static objects (geometry on the universe joint, placement = world pose), in pair order."""
        n = len(objects)
        self._R, self._t = np.zeros((n, 3, 3)), np.zeros((n, 3))
        self._box_centre, self._box_half = np.zeros((n, 3)), np.zeros((n, 3))
        self._ball_centre, self._ball_radius = np.zeros((n, 3)), np.zeros(n)
        for k, geometry in enumerate(objects):
            shape = geometry.geometry
            shape.computeLocalAABB()
            lo, hi = np.array(shape.aabb_local.min_), np.array(shape.aabb_local.max_)
            self._R[k], self._t[k] = geometry.placement.rotation, geometry.placement.translation
            self._box_centre[k], self._box_half[k] = 0.5 * (lo + hi), 0.5 * (hi - lo)
            single = pin.GeometryModel()
            single.addGeometryObject(geometry)
            (self._ball_centre[k],), (self._ball_radius[k],) = bounding_spheres(single)
        self._out = np.zeros(len(self._a) + n * len(self.moving))

    def update(self, data: pin.Data) -> tuple[np.ndarray, int]:
        """(bounds (pairs,) [m], index of the lowest) at the joint placements in `data.oMi` (forward kinematics
        done); the array is a buffer reused by the next call. Needs at least one pair."""
        oMi = data.oMi
        H = np.array([oMi[j].homogeneous for j in self._joints]).reshape(-1, 4, 4)     # (joints, 4, 4)
        lowest = _bounds_kernel(H, self._slot, self._centre_local, self._radius, self._a, self._b, self.moving,
                                self._R, self._t, self._box_centre, self._box_half, self._ball_centre,
                                self._ball_radius, self.centre, self._out)
        return self._out, int(lowest)


def select_pairs(bounds: np.ndarray, cutoff: float, skip: int, first: np.ndarray, second: np.ndarray,
                 active_map: np.ndarray) -> tuple[int, float]:
    """Mark pairs whose bound is below `cutoff` (except `skip`) in `active_map` (an upper-triangular (g, g) bool
    matrix, as GeometryData.setActiveCollisionPairs reads it).

    Returns:
        (the number marked, the lowest bound of the pairs not marked, skip excluded; inf when there is none).
    """
    count, rest = _select_kernel(bounds, cutoff, skip, first, second, active_map)
    return int(count), float(rest)
