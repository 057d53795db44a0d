"""True tool deviation of a timed trajectory from the requested path, as a trajectory controller plays it.

Playback: joint_trajectory_controller interpolates between the published points with a quintic when they carry
positions, velocities and accelerations and with a cubic Hermite when they carry positions and velocities, and
samples that at its update rate. `controller_positions` does the same, so the check sees what the arm is asked to do,
not the toppra spline the points were sampled from.

Reference: the requested geometry itself, not the solved joint samples. Matching by the solved samples (nearest
joint configuration) turns running ahead of or behind schedule into deviation. Here each played pose is projected
onto the path and only its distance from it counts. The geometry is exact: within one dense interval the position is
a straight line or a quadratic Bezier in a uniformly sampled parameter, so the quadratic through the two samples and
the geometric midpoint between them (`DensePath.mid_positions`) *is* the path there, and the orientation is one
geodesic, so SLERP between the two samples is exact too (see core/path/geometry.py).

Projection metric: the pose error on the constrained axes (`AxisSelection`, in base or tool axes), rotation weighted
by `angle_weight` [m/rad] (the planner uses sample_step / sample_angle_step: 1 mrad counts like 1 mm, the metric of
`DensePath.progress`). The rotation term picks the reference on pure-rotation and rotation-dominated stretches, where
the position alone cannot tell where along the path the tool is; the orientation deviation is measured there. The
position deviation is the distance to the nearest point of the path (position alone picks it) wherever the path
rotates: with the combined metric, an orientation lag of 0.4 mrad within tolerance shifted the reference along a
rotating MoveC and reported 0.19 mm for a tool 0.03 mm from the geometry. On a path of constant orientation the two
projections are the same point, and one is computed.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from numba import njit
from scipy.spatial import cKDTree

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.path.budget import UNLIMITED, PlanningBudget
from robokin_ros.core.path.chain import WHOLE_ANGLE, pose_error_norms
from robokin_ros.core.path.geometry import DensePath
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays, sample_times
from robokin_ros.core.so3 import log3_batch, log3_into, relative_angles, slerp_batch

INTERPOLATIONS = ("quintic", "cubic")
_NEWTON_STEPS = 3        # from the chord solution; the quadratic term of a <= 1 mm interval is tiny
# nearest dense samples whose neighbouring intervals are searched: 2 so that a path touching itself (closed,
# crossing) offers both branches
_CANDIDATES = 2

Fk = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]      # (K, n) -> rotations (K, 3, 3), positions (K, 3)


class AxisSelection(NamedTuple):
    """The constrained axes of a solve (from `PathIkSolver.axes`)."""

    rows: np.ndarray          # (m,) constrained axis indices, 0-2 linear, 3-5 angular
    tool_axes: bool           # True: the mask is in the tool's axes, False: in the base axes


class PoseErrors(NamedTuple):
    """Deviations per pose on the constrained axes."""

    position: np.ndarray      # (K,) [m]
    orientation: np.ndarray   # (K,) [rad]


def pose_errors(R_act: np.ndarray, p_act: np.ndarray, R_tgt: np.ndarray, p_tgt: np.ndarray,
                axes: AxisSelection) -> PoseErrors:
    """Position [m] and orientation [rad] deviation on the constrained axes, per pose (K,) each.

    Errors are target minus actual, in base axes or in the actual tool's axes (`axes.tool_axes`), and only
    the components of the constrained `axes.rows` (0-2 linear, 3-5 angular) count.
    """
    rows = axes.rows
    e_p = p_tgt - p_act                                                   # (K, 3) base axes
    log = log3_batch(np.einsum("kij,klj->kil", R_tgt, R_act))             # of R_tgt R_act^T, base axes
    e_w = log.vector
    if axes.tool_axes:
        e_p = np.einsum("kji,kj->ki", R_act, e_p)                          # R_act^T e
        e_w = np.einsum("kji,kj->ki", R_act, e_w)
    lin, ang = rows[rows < 3], rows[rows >= 3] - 3
    pos = np.linalg.norm(e_p[:, lin], axis=1) if len(lin) else np.zeros(len(e_p))
    rot = np.linalg.norm(e_w[:, ang], axis=1) if len(ang) else np.zeros(len(e_p))
    rot = np.where(log.angle > WHOLE_ANGLE, log.angle, rot) if len(ang) else rot
    return PoseErrors(pos, rot)


class TrajectoryDeviation(NamedTuple):
    """Largest deviation of the played trajectory from the requested path, on the constrained axes."""

    position: float          # [m]
    orientation: float       # [rad]
    position_time: float     # [s] time from start of the largest position deviation
    samples: int             # played samples checked


class PathProjection(NamedTuple):
    """Nearest points of the path: dense interval, fraction in it, and the reference poses there."""

    interval: np.ndarray     # (K,) int, between dense samples i and i + 1
    fraction: np.ndarray     # (K,) in [0, 1]
    positions: np.ndarray    # (K, 3) [m] base frame
    rotations: np.ndarray    # (K, 3, 3)


def controller_positions(trajectory: JointTrajectoryArrays, times: npt.NDArray[np.float64],
                         interpolation: str = "quintic") -> np.ndarray:
    """Joint positions (K, n) at `times` [s] between the trajectory's points, as joint_trajectory_controller plays
    them: "quintic" (positions, velocities, accelerations) or "cubic" (Hermite on positions and velocities).

    Raises:
        InvalidInputError: an unknown interpolation or times outside [0, duration].
    """
    if interpolation not in INTERPOLATIONS:
        raise InvalidInputError(f"interpolation='{interpolation}' is not one of {INTERPOLATIONS}")
    t_knots = trajectory.times
    times = np.asarray(times, dtype=float)
    if len(times) and (times.min() < t_knots[0] or times.max() > t_knots[-1]):
        raise InvalidInputError(f"times span [{times.min():g}, {times.max():g}] s, outside the trajectory's "
                                f"[{t_knots[0]:g}, {t_knots[-1]:g}] s")
    if len(t_knots) == 1:
        return np.repeat(trajectory.positions, len(times), axis=0)
    k = np.clip(np.searchsorted(t_knots, times, side="right") - 1, 0, len(t_knots) - 2)     # (K,)
    h = (t_knots[k + 1] - t_knots[k])[:, None]                                              # (K, 1)
    s = (times - t_knots[k])[:, None] / h                                                   # (K, 1) in [0, 1]
    p0, p1 = trajectory.positions[k], trajectory.positions[k + 1]                           # (K, n)
    v0, v1 = trajectory.velocities[k] * h, trajectory.velocities[k + 1] * h                 # per unit s
    if interpolation == "cubic":
        s2, s3 = s * s, s * s * s
        return ((2 * s3 - 3 * s2 + 1) * p0 + (s3 - 2 * s2 + s) * v0 + (3 * s2 - 2 * s3) * p1 + (s3 - s2) * v1)
    a0, a1 = trajectory.accelerations[k] * h * h, trajectory.accelerations[k + 1] * h * h
    # the quintic matching position, velocity and acceleration at both ends, in the unit parameter s
    dp = p1 - p0
    c3 = 10 * dp - 6 * v0 - 4 * v1 - 1.5 * a0 + 0.5 * a1
    c4 = -15 * dp + 8 * v0 + 7 * v1 + 1.5 * a0 - a1
    c5 = 6 * dp - 3 * (v0 + v1) - 0.5 * a0 + 0.5 * a1
    return p0 + s * (v0 + s * (0.5 * a0 + s * (c3 + s * (c4 + s * c5))))


def _axis_weights(axes: AxisSelection, angle_weight: float) -> np.ndarray:
    """(6,) weight of each error component in the projection metric: 0 on free axes."""
    w = np.zeros(6)
    w[axes.rows] = 1.0
    w[3:] *= angle_weight
    return w


def _features(positions: np.ndarray, rotations: np.ndarray, axes: AxisSelection, angle_weight: float) -> np.ndarray:
    """Points for the nearest-sample search in the projection metric. The chordal distance |Ra - Rb|_F / sqrt(2)
    approximates the angle; tool-axis masks use every coordinate of a constrained kind (the tool's axes change from
    pose to pose), base-axis masks only the constrained coordinates."""
    lin, ang = axes.rows[axes.rows < 3], axes.rows[axes.rows >= 3]
    parts = []
    if len(lin):
        parts.append(positions if axes.tool_axes else positions[:, lin])
    if len(ang):
        parts.append(rotations.reshape(-1, 9) * (angle_weight / np.sqrt(2.0)))
    return np.hstack(parts)


def _interval_rotations(path: DensePath) -> np.ndarray:
    """(N - 1, 3) body rotation log(R_i^T R_i+1) of every dense interval."""
    R = path.rotations
    return log3_batch(R[:-1].transpose(0, 2, 1) @ R[1:]).vector


_TREES: dict = {}         # the KD-trees of the path last projected on: `played_deviation` projects block by block


def _path_tree(path: DensePath, key: tuple, points: Callable[[], np.ndarray]) -> cKDTree:
    """The KD-tree of `points()` of `path`, built once while the same path is projected on (the cache holds the
    path, so its identity is not reused)."""
    held = _TREES.get(key)
    if held is None or held[0] is not path:
        if len(_TREES) >= 4 or any(entry[0] is not path for entry in _TREES.values()):
            _TREES.clear()
        held = _TREES[key] = (path, cKDTree(points()))
    return held[1]


def project_onto_path(path: DensePath, R: np.ndarray, p: np.ndarray, axes: AxisSelection,
                      angle_weight: float) -> PathProjection:
    """Nearest points of `path` to the poses R (K, 3, 3), p (K, 3) in the metric of the module docstring.

    Candidates: the dense intervals on both sides of the `_CANDIDATES` nearest samples (KD-tree); the best fraction
    in each, then the best interval.
    """
    count = len(p)
    if path.size == 1:
        zeros = np.zeros(count, dtype=int)
        return PathProjection(zeros, np.zeros(count), path.positions[zeros], path.rotations[zeros])
    tree = _path_tree(path, ("features", tuple(axes.rows), bool(axes.tool_axes), angle_weight),
                      lambda: _features(path.positions, path.rotations, axes, angle_weight))
    k = min(_CANDIDATES, path.size)
    _, nearest = tree.query(_features(p, R, axes, angle_weight), k=k)
    nearest = nearest.reshape(count, k)
    candidates = np.clip(np.hstack([nearest - 1, nearest]), 0, path.size - 2)                  # (K, 2k)
    i, f = np.empty(count, dtype=np.int64), np.empty(count)
    nearest_on_intervals(path.positions, path.mid_positions, path.rotations, _interval_rotations(path),
                         np.ascontiguousarray(candidates, dtype=np.int64), np.ascontiguousarray(R, dtype=float),
                         np.ascontiguousarray(p, dtype=float), _axis_weights(axes, angle_weight),
                         bool(axes.tool_axes), _NEWTON_STEPS, i, f)
    a, m, b = path.positions[i], path.mid_positions[i], path.positions[i + 1]
    f2 = f[:, None]
    positions = a + f2 * (4 * m - 3 * a - b) + f2 * f2 * (2 * a + 2 * b - 4 * m)
    return PathProjection(i, f, positions, slerp_batch(path.rotations[i], path.rotations[i + 1], f))


def trajectory_deviation(trajectory: JointTrajectoryArrays, path: DensePath, fk: Fk, axes: AxisSelection,
                         control_rate_hz: float, angle_weight: float = 1.0, interpolation: str = "quintic",
                         budget: PlanningBudget = UNLIMITED) -> TrajectoryDeviation:
    """Largest deviation on the constrained axes of the trajectory, played at `control_rate_hz` [Hz] with
    `interpolation`, from the requested path (both poses base_T_tool).

    Args:
        fk: batched tool FK of the joint positions (e.g. `PathIkSolver.fk`).
        angle_weight: [m/rad] weight of rotation against translation when choosing the nearest point.
        budget: checked before every block of CHECK_BLOCK played samples (PlanningStopped).
    """
    times = sample_times(trajectory.duration, control_rate_hz) if trajectory.duration > 0 else np.zeros(1)
    return played_deviation(trajectory, times, path, fk, axes, angle_weight, interpolation, budget)


CHECK_BLOCK = 8192       # played samples between budget checks: ~10 ms of FK and projection


def played_deviation(trajectory: JointTrajectoryArrays, times: np.ndarray, path: DensePath, fk: Fk,
                     axes: AxisSelection, angle_weight: float = 1.0, interpolation: str = "quintic",
                     budget: PlanningBudget = UNLIMITED) -> TrajectoryDeviation:
    """`trajectory_deviation` at the given `times` [s], in blocks between budget checks."""
    worst = TrajectoryDeviation(0.0, 0.0, float(times[0]), len(times))
    for first in range(0, len(times), CHECK_BLOCK):
        budget.check("verification", first, len(times))
        block = times[first:first + CHECK_BLOCK]
        R, p = fk(controller_positions(trajectory, block, interpolation))
        pos, rot = pose_deviations(path, R, p, axes, angle_weight)
        k = int(np.argmax(pos))
        if first == 0 or pos[k] > worst.position:
            worst = worst._replace(position=float(pos[k]), position_time=float(block[k]))
        worst = worst._replace(orientation=max(worst.orientation, float(rot.max())))
    return worst


def pose_deviations(path: DensePath, R: np.ndarray, p: np.ndarray, axes: AxisSelection,
                    angle_weight: float) -> tuple[np.ndarray, np.ndarray]:
    """Position [m] and orientation [rad] deviation (K,) of poses R (K, 3, 3), p (K, 3) from `path`, on the
    constrained axes: orientation at the combined-metric projection, position at the nearest point of the path
    (see the module docstring)."""
    ref = project_onto_path(path, R, p, axes, angle_weight)
    pos, rot = pose_error_norms(R, p, ref.rotations, ref.positions, axes)
    rotates = path.size > 1 and relative_angles(path.rotations[:1], path.rotations).max() > 0.0
    lin = axes.rows[axes.rows < 3]
    if rotates and angle_weight > 0.0 and len(lin) == 3:
        pos = _position_distances(path, p)
    elif rotates and angle_weight > 0.0 and len(lin):
        nearest = project_onto_path(path, R, p, axes, 0.0)
        pos = pose_errors(R, p, nearest.rotations, nearest.positions, axes)[0]
    return pos, rot


def _position_distances(path: DensePath, p: np.ndarray) -> np.ndarray:
    """Distance [m] (K,) of the points p (K, 3) from the path's positions: `project_onto_path` with angle weight
    0 when all three linear axes are constrained, in 3-D. The distance is then the same in base and tool axes
    (a rotation keeps lengths), so neither rotations nor logs are needed, and it is the error norm at the best
    fraction itself."""
    count = len(p)
    k = min(_CANDIDATES, path.size)
    _, nearest = _path_tree(path, ("positions",), lambda: path.positions).query(p, k=k)
    nearest = nearest.reshape(count, k)
    candidates = np.clip(np.hstack([nearest - 1, nearest]), 0, path.size - 2)                  # (K, 2k)
    distance = np.empty(count)
    nearest_distances(path.positions, path.mid_positions, np.ascontiguousarray(candidates, dtype=np.int64),
                      np.ascontiguousarray(p, dtype=float), _NEWTON_STEPS, distance)
    return distance


# The compiled core of `project_onto_path`: the best point of each pose's candidate intervals.
#
# For every pose and candidate interval i it forms the weighted error E(u) = e0 + u e1 + u^2 e2 (6,) of
# `project_onto_path` (position: the quadratic through sample, midpoint and next sample; orientation:
# log(R_i R^T) + u R_i w_i to first order), minimises |E(u)|^2 over u in [0, 1] from the chord's minimiser with
# Newton steps, and keeps the interval with the smallest error. In numpy this took a dozen (K * 4, 6) temporaries
# and two batched logs per call: most of a program's verification time.


@njit(cache=True)
def _dot(x, y):
    total = 0.0
    for j in range(x.shape[0]):
        total += x[j] * y[j]
    return total


@njit(cache=True)
def _best_fraction(e0, e1, e2, newton_steps):
    """(u, |E(u)|^2) minimising |e0 + u e1 + u^2 e2|^2 on [0, 1]: chord minimiser, then Newton steps."""
    chord = e1 + e2
    u = min(max(-_dot(e0, chord) / max(_dot(chord, chord), 1e-300), 0.0), 1.0)
    for _ in range(newton_steps):
        E, dE = e0 + u * (e1 + u * e2), e1 + 2.0 * u * e2
        curvature = _dot(dE, dE) + 2.0 * _dot(E, e2)
        if curvature > 0.0:
            u = min(max(u - _dot(E, dE) / max(curvature, 1e-300), 0.0), 1.0)
    E = e0 + u * (e1 + u * e2)
    return u, _dot(E, E)


@njit(cache=True)
def _to_tool_axes(R, e):
    """Both 3-vectors of e (6,) in the axes of R (R^T v), in place."""
    for half in range(2):
        x, y, z = e[3 * half], e[3 * half + 1], e[3 * half + 2]
        for r in range(3):
            e[3 * half + r] = R[0, r] * x + R[1, r] * y + R[2, r] * z


@njit(cache=True)
def nearest_on_intervals(positions, mids, rotations, w_body, candidates, R, p, weights, tool_axes, newton_steps,
                         interval, fraction):
    """interval[k], fraction[k] = the best of candidates[k] (K, C) for the pose R[k], p[k], in the weighted
    metric `weights` (6,); positions (N, 3), mids (N - 1, 3), rotations (N, 3, 3) of the path, w_body (N - 1, 3)
    the body rotation of each interval. Ties go to the first candidate."""
    e0, e1, e2, g, D = np.empty(6), np.empty(6), np.empty(6), np.empty(3), np.empty((3, 3))
    for k in range(candidates.shape[0]):
        best = np.inf
        for c in range(candidates.shape[1]):
            i = candidates[k, c]
            Ra = rotations[i]
            for r in range(3):
                for s in range(3):
                    D[r, s] = Ra[r, 0] * R[k, s, 0] + Ra[r, 1] * R[k, s, 1] + Ra[r, 2] * R[k, s, 2]   # Ra R^T
            log3_into(D, g)
            for r in range(3):
                a, m, b = positions[i, r], mids[i, r], positions[i + 1, r]
                e0[r], e1[r], e2[r] = a - p[k, r], 4.0 * m - 3.0 * a - b, 2.0 * a + 2.0 * b - 4.0 * m
                e0[3 + r] = g[r]
                e1[3 + r] = Ra[r, 0] * w_body[i, 0] + Ra[r, 1] * w_body[i, 1] + Ra[r, 2] * w_body[i, 2]
                e2[3 + r] = 0.0
            if tool_axes:
                _to_tool_axes(R[k], e0)
                _to_tool_axes(R[k], e1)
                _to_tool_axes(R[k], e2)
            u, cost = _best_fraction(e0 * weights, e1 * weights, e2 * weights, newton_steps)
            if cost < best or c == 0:
                best, interval[k], fraction[k] = cost, i, u


@njit(cache=True)
def nearest_distances(positions, mids, candidates, p, newton_steps, distance):
    """distance[k] = the smallest distance of the point p[k] from the path's position curve over candidates[k]
    (K, C): the position-only form of `nearest_on_intervals`, in 3-D."""
    e0, e1, e2 = np.empty(3), np.empty(3), np.empty(3)
    for k in range(candidates.shape[0]):
        best = np.inf
        for c in range(candidates.shape[1]):
            i = candidates[k, c]
            for r in range(3):
                a, m, b = positions[i, r], mids[i, r], positions[i + 1, r]
                e0[r], e1[r], e2[r] = a - p[k, r], 4.0 * m - 3.0 * a - b, 2.0 * a + 2.0 * b - 4.0 * m
            cost = _best_fraction(e0, e1, e2, newton_steps)[1]
            if cost < best or c == 0:
                best = cost
        distance[k] = np.sqrt(best)
