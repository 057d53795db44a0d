"""Closed-form IK of the UR family (UR3/UR5/UR10 and any arm of the same structure): all 8 solutions.

Geometry comes from the loaded RobotModel, not from a table: at the model's zero configuration, Pinocchio's
spatial Jacobian (base axes) gives each joint axis w_i and a point p_i on it, and FK gives the tool pose M.
The solver works on the product of exponentials T(q) = e^[S1]q1 ... e^[S6]q6 M (Lynch & Park), so the joint
zero positions and signs are exactly the URDF's (for ur_description: the arm stretched along the base frame's
horizontal, all joints 0), and frames are the RobotModel's base frame and tip frame (tool0). The structure it
needs, checked on load (ModelError names the failed check): w1 _|_ w2; w2 || w3 || w4; w5 _|_ w4; w6 _|_ w5;
axes 5 and 6 intersect at the wrist point c.

Steps (each a Paden-Kahan subproblem; derivation in the comments):
  q1: rotations about w2..w4 keep a point's w2 component, and joints 5, 6 keep c fixed, so
      (R1(q1) w2) . (c_target - p1) = w2 . (c - p1) =: d4        -> 2 roots ("shoulder" a/b)
  q5: the same holds for the tool axis direction: w2 . R1^T z_target = w2 . R5(q5) w6 = cos(q5 + phi)
                                                                      -> 2 roots ("wrist" a/b)
  q6: R6^T R5^T w2 = R_M R_target^T R1 w2, a rotation about w6 (free when sin(q5 + phi) = 0: seed's q6)
  q2, q3, q4: a planar 3R arm with parallel axes: law of cosines for q3 (2 roots, "elbow" a/b), then q2, and
      q4 from the summed angle.
Singularities are flagged (see solutions.py): wrist (sin(q5 + phi) ~ 0), shoulder (the wrist point's in-plane
distance to the base axis ~ 0), elbow (arm stretched or folded: cos(q3 - psi) ~ +-1).
Joint limits: the UR joints span +-2 pi, so each angle is taken at its 2 pi representative closest to the seed
(solutions.rank); the elbow (+-pi) keeps its principal value.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numba import njit

from robokin_ros.core.errors import InvalidInputError, ModelError
from robokin_ros.core.ik.solutions import (REACH_TOLERANCE, SINGULARITY_TOLERANCE, IkResult, IkSolution,
                                           as_homogeneous, branch_labels, collect, wrap_rank)
from robokin_ros.core.robot import RobotModel

STRUCTURE_TOLERANCE = 1e-6      # [- | m] parallel / perpendicular / intersecting checks on the URDF axes
LABELS = branch_labels(("shoulder", ("a", "b")), ("wrist", ("a", "b")), ("elbow", ("a", "b")))
REASONS = {1: "the wrist point is closer to the base axis than the shoulder-wrist offset d4 (shoulder cannot "
              "turn toward it)",
           2: "the wrist point is out of the arm's reach (too far, or too close to the shoulder) on every branch"}


@dataclass(frozen=True, eq=False)     # array fields: identity comparison, not element-wise
class UrGeometry:
    """Screw axes of a UR-type arm at its zero configuration, in the base frame, plus derived constants."""

    axes: np.ndarray          # (6, 3) unit joint axes w_i
    points: np.ndarray        # (6, 3) a point on each axis [m]
    M: np.ndarray             # (4, 4) base_T_tip at q = 0
    lower: np.ndarray         # (6,) joint limits [rad]
    upper: np.ndarray         # (6,)
    a2: float                 # [m] distance between axes 2 and 3 (UR5: 0.425)
    a3: float                 # [m] distance between axes 3 and 4 (UR5: 0.39225)
    d4: float                 # [m] offset of the wrist point along w2 from axis 1 (UR5: 0.10915)
    wrist_point: np.ndarray   # (3,) [m] where axes 5 and 6 cross, at q = 0
    constants: np.ndarray     # packed kernel inputs (see _pack)
    fk: object = None         # optional q -> pin.SE3 (the RobotModel's) used to verify solutions

    @classmethod
    def from_robot(cls, robot: RobotModel) -> UrGeometry:
        """Read the geometry from the model's joint placements (ModelError if it is not UR-shaped)."""
        if robot.n != 6:
            raise ModelError(f"UR closed-form IK needs 6 joints; '{robot.name}' has {robot.n}")
        zero = np.zeros(6)
        J = robot.jacobian(zero, reference="world")          # (6, 6) spatial: [p x w; w] per column
        w = J[3:].T.copy()
        points = np.cross(w, J[:3].T)                          # w x (p x w) = p - w (w . p): foot of the axis
        return cls.from_axes(w, points, robot.fk(zero).homogeneous, robot.limits.lower, robot.limits.upper,
                             fk=robot.fk, name=robot.name)

    @classmethod
    def from_axes(cls, axes, points, M, lower, upper, fk=None, name: str = "robot") -> UrGeometry:
        """Geometry from zero-configuration axes (6, 3), points on them (6, 3) [m] and base_T_tip M (4, 4)."""
        norms = np.linalg.norm(np.asarray(axes, float), axis=1)
        if np.any(norms < 0.5):
            raise ModelError(f"'{name}': joints {np.flatnonzero(norms < 0.5).tolist()} are not revolute")
        w = np.asarray(axes, float) / norms[:, None]
        p = np.asarray(points, float)
        _check_structure(w, p, name)
        c = _closest_point(p[4], w[4], p[5], w[5])
        perp = np.cross(w[1], [[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]][int(np.argmin(np.abs(w[1])))])
        perp /= np.linalg.norm(perp)
        a2 = float(np.linalg.norm(_in_plane(p[2] - p[1], w[1])))
        a3 = float(np.linalg.norm(_in_plane(p[3] - p[2], w[1])))
        d4 = float(np.dot(c - p[0], w[1]))
        M = np.asarray(M, float)
        constants = _pack(w, p, M, c, perp)
        return cls(w, p, M, np.asarray(lower, float), np.asarray(upper, float), a2, a3, abs(d4), c, constants, fk)

    def solve(self, pose, seed=None, verify: bool = True) -> IkResult:
        """All solutions for `pose` (base_T_tip, pin.SE3 or (4, 4)); see `solve_ur`."""
        return solve_ur(self, pose, seed, verify)


def _in_plane(v: np.ndarray, axis: np.ndarray) -> np.ndarray:
    return v - np.dot(v, axis) * axis


def _closest_point(p1, w1, p2, w2) -> np.ndarray:
    """Midpoint of the common perpendicular of two non-parallel lines."""
    n = np.cross(w1, w2)
    t1 = np.dot(np.cross(p2 - p1, w2), n) / np.dot(n, n)
    t2 = np.dot(np.cross(p2 - p1, w1), n) / np.dot(n, n)
    return 0.5 * (p1 + t1 * w1 + p2 + t2 * w2)


def _check_structure(w: np.ndarray, p: np.ndarray, name: str) -> None:
    tol = STRUCTURE_TOLERANCE
    checks = [("axis 1 perpendicular to axis 2", abs(w[0] @ w[1])),
              ("axis 3 parallel to axis 2", np.linalg.norm(np.cross(w[1], w[2]))),
              ("axis 4 parallel to axis 2", np.linalg.norm(np.cross(w[1], w[3]))),
              ("axis 5 perpendicular to axis 4", abs(w[3] @ w[4])),
              ("axis 6 perpendicular to axis 5", abs(w[4] @ w[5]))]
    failed = [f"{what} (off by {value:.3g})" for what, value in checks if value > tol]
    if not failed:
        n = np.cross(w[4], w[5])
        gap = abs((p[5] - p[4]) @ n) / np.linalg.norm(n)
        if gap > tol:
            failed.append(f"axes 5 and 6 intersect (they are {gap:.3g} m apart)")
    if failed:
        raise ModelError(f"'{name}' is not a UR-type arm; failed: " + "; ".join(failed))


def _pack(w, p, M, c, perp) -> np.ndarray:
    """Everything the kernel needs in one contiguous (n,) array (numba takes it without boxing)."""
    Minv = np.linalg.inv(M)
    R_M = M[:3, :3]
    c_tool = Minv[:3, :3] @ c + Minv[:3, 3]
    w6_tool = R_M.T @ w[5]
    w5x2 = np.cross(w[4], w[1])
    e = _in_plane(p[2] - p[1], w[1])                  # axis 2 -> axis 3 in the arm plane
    u3 = _in_plane(p[3] - p[2], w[1])                 # axis 3 -> axis 4
    psi = np.arctan2(e @ np.cross(w[2], u3), e @ u3)  # elbow angle offset of the law of cosines
    extra = [c_tool, w6_tool, np.cross(w[0], w[1]), perp,
             [np.dot(c - p[0], w[1]), np.dot(w[5], w[1]), np.dot(w[5], w5x2), np.dot(w[2], w[1]),
              np.dot(w[3], w[1]), np.linalg.norm(e), np.linalg.norm(u3), psi]]
    return np.concatenate([w.ravel(), p.ravel(), Minv.ravel()] + [np.asarray(e, float).ravel() for e in extra])


# 3-vectors are tuples inside the kernel: numba keeps them in registers, where array temporaries would each be
# a heap allocation (they made the first version 10 us slower), and `@` would call BLAS for a 3x3 product.
@njit(cache=True)
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True)
def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit(cache=True)
def _axpy(s, a, b):
    """s a + b."""
    return (s * a[0] + b[0], s * a[1] + b[1], s * a[2] + b[2])


@njit(cache=True)
def _row(A, i):
    return (A[i, 0], A[i, 1], A[i, 2])


@njit(cache=True)
def _mv(A, x, t):
    """A[:3, :3] x + t."""
    return (A[0, 0] * x[0] + A[0, 1] * x[1] + A[0, 2] * x[2] + t[0],
            A[1, 0] * x[0] + A[1, 1] * x[1] + A[1, 2] * x[2] + t[1],
            A[2, 0] * x[0] + A[2, 1] * x[1] + A[2, 2] * x[2] + t[2])


@njit(cache=True)
def _mtv(A, x):
    """A[:3, :3]^T x."""
    return (A[0, 0] * x[0] + A[1, 0] * x[1] + A[2, 0] * x[2],
            A[0, 1] * x[0] + A[1, 1] * x[1] + A[2, 1] * x[2],
            A[0, 2] * x[0] + A[1, 2] * x[1] + A[2, 2] * x[2])


@njit(cache=True)
def _rotate(w, th, x):
    """Rodrigues on a vector: x rotated by th [rad] about the unit axis w."""
    c, s = math.cos(th), math.sin(th)
    return _axpy(_dot(w, x) * (1.0 - c), w, _axpy(s, _cross(w, x), (x[0] * c, x[1] * c, x[2] * c)))


@njit(cache=True)
def _screw_inv_point(w, p, th, x):
    """e^{-[S] th} applied to the point x, for the revolute screw through p along w."""
    return _axpy(1.0, _rotate(w, -th, _axpy(-1.0, p, x)), p)


@njit(cache=True)
def _angle_about(w, u, v):
    """Angle [rad] of the rotation about w taking u's projection onto v's; and |projection of u|."""
    uu = _axpy(-_dot(u, w), w, u)
    vv = _axpy(-_dot(v, w), w, v)
    return math.atan2(_dot(w, _cross(uu, vv)), _dot(uu, vv)), math.sqrt(_dot(uu, uu))


@njit(cache=True)
def _ur_kernel(T, k, seed, Q, valid, flags):
    """Fill Q (8, 6) [rad], valid (8,), flags (8,); return 0, or a REASONS key when nothing is reachable."""
    W, P, Minv = k[0:18].reshape(6, 3), k[18:36].reshape(6, 3), k[36:52].reshape(4, 4)
    w1, w2, w5, w6 = _row(W, 0), _row(W, 1), _row(W, 4), _row(W, 5)
    p1, p4, p5, p6 = _row(P, 0), _row(P, 3), _row(P, 4), _row(P, 5)
    c_tool, w6_tool, w12, perp = (k[52], k[53], k[54]), (k[55], k[56], k[57]), (k[58], k[59], k[60]), \
        (k[61], k[62], k[63])
    d4, a5, b5 = k[64], k[65], k[66]
    t, zero, m_t = (T[0, 3], T[1, 3], T[2, 3]), (0.0, 0.0, 0.0), (Minv[0, 3], Minv[1, 3], Minv[2, 3])
    d = _axpy(-1.0, p1, _mv(T, c_tool, t))                       # wrist point, from axis 1
    A, B = _dot(d, w2), _dot(d, w12)
    disc = A * A + B * B - d4 * d4
    if disc < -SINGULARITY_TOLERANCE ** 2:
        return 1
    root1 = math.sqrt(max(disc, 0.0))
    phi1 = math.atan2(B, A) if A * A + B * B > 1e-24 else seed[0]
    z = _mv(T, w6_tool, zero)
    phi5 = math.atan2(b5, a5)
    out = 0
    for i1 in range(2):
        q1 = phi1 + (1 - 2 * i1) * math.atan2(root1, d4)
        r1w2 = _rotate(w1, q1, w2)
        g = min(1.0, max(-1.0, _dot(r1w2, z)))
        n5 = _cross(r1w2, z)
        root5 = math.sqrt(_dot(n5, n5))                 # sin(q5 + phi) without sqrt(1 - g^2)'s 1e-8 noise
        v = _mtv(Minv, _mtv(T, r1w2))                            # R_M R^T R1 w2 (Minv's rotation: R_M^T)
        for i5 in range(2):
            q5 = (1 - 2 * i5) * math.atan2(root5, g) - phi5
            th, lever = _angle_about(w6, _rotate(w5, -q5, w2), v)
            q6 = -th if lever > 1e-12 else seed[5]
            # T234 = e^-S1q1 T M^-1 e^-S6q6 e^-S5q5: applied to the point p4 and to the direction perp
            x = _screw_inv_point(w6, p6, q6, _screw_inv_point(w5, p5, q5, p4))
            y = _screw_inv_point(w1, p1, q1, _mv(T, _mv(Minv, x, m_t), t))
            r = _rotate(w6, -q6, _rotate(w5, -q5, perp))
            r = _rotate(w1, -q1, _mv(T, _mv(Minv, r, zero), zero))
            th_sum, _ = _angle_about(w2, perp, r)
            flag = (1 if root5 < SINGULARITY_TOLERANCE else 0) | (2 if root1 < SINGULARITY_TOLERANCE else 0)
            out += _planar_3r(P, k, y, th_sum, Q, valid, flags, 4 * i1 + 2 * i5, flag, q1, q5, q6)
    return 0 if out > 0 else 2


@njit(cache=True)
def _planar_3r(P, k, y, th_sum, Q, valid, flags, base, flag, q1, q5, q6):
    """Both elbow branches of the parallel-axis arm (q2, q3, q4); returns how many are valid."""
    w2, w3 = (k[3], k[4], k[5]), (k[6], k[7], k[8])
    p2, p3, p4 = _row(P, 1), _row(P, 2), _row(P, 3)
    s3, s4, L1, L2, psi = k[67], k[68], k[69], k[70], k[71]
    yy = _axpy(-1.0, p2, y)
    yy = _axpy(-_dot(yy, w2), w2, yy)                              # in the arm plane
    ce = (_dot(yy, yy) - L1 * L1 - L2 * L2) / (2.0 * L1 * L2)
    if abs(ce) > 1.0 + REACH_TOLERANCE:
        return 0
    ce = min(1.0, max(-1.0, ce))
    root3 = math.sqrt(1.0 - ce * ce)
    for i3 in range(2):
        q3 = psi + (1 - 2 * i3) * math.atan2(root3, ce)
        x = _axpy(-1.0, p2, _axpy(1.0, _rotate(w3, q3, _axpy(-1.0, p3, p4)), p3))
        q2, _ = _angle_about(w2, x, yy)
        j = base + i3
        Q[j, 0], Q[j, 1], Q[j, 2], Q[j, 4], Q[j, 5] = q1, q2, q3, q5, q6
        Q[j, 3] = s4 * (th_sum - q2 - s3 * q3)
        for m in range(6):                                           # back to (-pi, pi]
            Q[j, m] = math.atan2(math.sin(Q[j, m]), math.cos(Q[j, m]))
        valid[j] = True
        flags[j] = flag | (4 if root3 < SINGULARITY_TOLERANCE else 0)
    return 2


@njit(cache=True)
def _ur_ranked(T, k, seed, lower, upper, Q, valid, flags, distance):
    """Kernel and ranking in one call: (status, dropped by limits, order); status 3: non-finite seed."""
    for value in seed:
        if not np.isfinite(value):
            return 3, 0, np.zeros(0, dtype=np.int64)
    status = _ur_kernel(T, k, seed, Q, valid, flags)
    dropped, order = wrap_rank(Q, valid, seed, lower, upper, distance)
    return status, dropped, order


def solve_ur(geometry: UrGeometry, pose, seed=None, verify: bool = True) -> IkResult:
    """All (up to 8) joint solutions reaching `pose` [base_T_tip], sorted by distance to `seed` [rad].

    `verify`: compute each solution's FK error with the model's (Pinocchio) FK when the geometry has one.
    Never raises on an unreachable or singular pose: the result says why / flags the singularity.
    """
    T = as_homogeneous(pose)
    seed_vec = _ZERO6 if seed is None else np.asarray(seed, dtype=np.float64)
    if seed_vec.shape != (6,):
        raise InvalidInputError(f"seed must be 6 joint positions [rad], got shape {seed_vec.shape}")
    Q, valid, flags, distance = np.zeros((8, 6)), np.zeros(8, np.bool_), np.zeros(8, np.int64), np.empty(8)
    status, dropped, order = _ur_ranked(T, geometry.constants, seed_vec, geometry.lower, geometry.upper, Q, valid,
                                        flags, distance)
    if status == 3:
        raise InvalidInputError(f"seed has non-finite entries: {seed_vec.tolist()}")
    fk = geometry.fk if verify else None
    return collect(Q, order, distance, flags, LABELS, dropped, status == 0, REASONS.get(status, ""), fk,
                   pin.SE3(T) if fk is not None else None)


_ZERO6 = np.zeros(6)
_GEOMETRY_CACHE: dict[int, tuple[RobotModel, UrGeometry]] = {}


def all_solutions(robot_or_geometry, pose, seed=None, verify: bool = True) -> list[IkSolution]:
    """Every closed-form solution, nearest to `seed` first: the MoveJ planner's branch menu.

    `robot_or_geometry`: a UR-type RobotModel (geometry read once and cached), a UrGeometry, or any geometry
    with `.solve(pose, seed, verify)` (opw.OpwGeometry, planar_2r.Planar2R). [] when unreachable.
    """
    if isinstance(robot_or_geometry, RobotModel):
        cached = _GEOMETRY_CACHE.get(id(robot_or_geometry))
        if cached is None or cached[0] is not robot_or_geometry:
            cached = (robot_or_geometry, UrGeometry.from_robot(robot_or_geometry))
            _GEOMETRY_CACHE[id(robot_or_geometry)] = cached
        robot_or_geometry = cached[1]
    if not hasattr(robot_or_geometry, "solve"):
        raise InvalidInputError(f"all_solutions needs a RobotModel or an IK geometry, got {type(robot_or_geometry)}")
    return list(robot_or_geometry.solve(pose, seed, verify).solutions)
