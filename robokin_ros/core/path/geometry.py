"""Cartesian path geometry: straight segments, circular arcs, Bezier corner blends and dense interpolation.

A path runs from a start pose through N waypoints. Each segment moves the position on a straight line (MoveL)
or, with an `arc_vias` entry, on the circular arc through that via position (MoveC, see core/path/segments.py), and
the orientation by SLERP (shortest rotation) in proportion to the distance travelled along the segment.
At an interior corner with blend radius r > 0 the position follows a Bezier curve from the point r (of arc
length) before the corner (B0) to the point r after it: between two lines a quadratic with the corner as
control point; next to an arc the tangent-continuous cubic of `segments.cubic_blend` (the same curve for two
lines). The orientation is SLERPed over the blend's Bezier parameter between the segment orientations at the
two cut points, so orientation stays continuous and is consistent with both neighbouring segments.

Handling of awkward input (documented contract, tested):
- NaN/inf, a rotation that is not orthonormal, a quaternion that core/spatial.py does not accept as a rotation
  (its squared norm off 1 by 0.01 or more, tf2's rule): `PathInputError` naming the waypoint. A quaternion within
  that tolerance is renormalized (text files round to a few digits).
- A waypoint equal to the previous pose (within 1e-7 m and 1e-7 rad) is dropped and listed in
  `DensePath.dropped_waypoints`; if nothing is left, `EmptyPathError`.
- The blend radius is one number for every corner or one per waypoint (the last entry is unused: the path
  ends at rest); a radius of 0 makes that corner unblended. A radius larger than half the shorter
  neighbouring segment (arc length): `BlendRadiusError` (default) or, with `clamp_blend=True`, clamped to that
  half; clamped corners are listed in `DensePath.clamped_corners`.
- Corners next to a pure-rotation segment and collinear corners are not blended (radius 0 reported).
  Collinear means the incoming segment's end tangent equals the outgoing one's start tangent: a line
  tangent to an arc is passed as it is.
- Arcs: a via that is not finite, that lies within 1e-6 m of an end or of the chord's line, or an arc whose
  end position equals its start (also a pure rotation, or a dropped duplicate waypoint, with a via):
  `PathInputError` naming the waypoint. The orientation follows the arc like a line (SLERP by arc length),
  whether it changes or not.
- An unblended interior corner is a stop (`DensePath.stops`: the timing brings the arm to rest there) unless
  its turn is at most `max_unstopped_turn` (see `unstopped_turn_limit`): collinear and near-collinear
  waypoints, e.g. a polyline sampling a curve, are passed at speed. The turn is the angle between the
  directions of the two segments (tangents at the corner) in the combined space where `max_step` of travel
  weighs like `max_angle_step` of rotation (the metric of `DensePath.progress`), so a change of rotation axis
  or a start of rotation counts too.
- Dense samples are at most `MAX_STEP` (1 mm) and `MAX_ANGLE_STEP` (1 mrad) apart; callers may ask for
  finer spacing, never coarser, because the solver's one-step-per-sample accuracy relies on it. Arcs tighter
  than ~6 mm radius and cubic blends are sampled finer where needed so that the quadratic through sample,
  midpoint, sample (what core/path/deviation.py takes as the path) stays within 1e-8 m of the curve.
- A path needing more than `max_samples` (default `MAX_DENSE_SAMPLES`) dense samples is refused with
  `PathInputError` before anything is allocated (a far or absurd waypoint would otherwise take GBs).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import BlendRadiusError, EmptyPathError, PathInputError
from robokin_ros.core.path.budget import UNLIMITED, PlanningBudget
from robokin_ros.core.path.segments import Segment, arc_spacing, corner_blend, end_tangents, make_segments
from robokin_ros.core.so3 import log3_batch, relative_angles
from robokin_ros.core.spatial import pose_from_xyzw

MAX_STEP = 1e-3            # [m] coarsest allowed dense spacing in translation
MAX_ANGLE_STEP = 1e-3      # [rad] coarsest allowed dense spacing in rotation
DUPLICATE_TOLERANCE = 1e-7  # [m | rad]
MAX_DENSE_SAMPLES = 2_000_000   # ~1000x a full-reach move at 1 mm; about 0.5 GB of dense arrays
_ROTATION_TOLERANCE = 1e-6
_COLLINEAR_TURN = 1.5e-6   # [rad] a turn below this is rounding noise: collinear (as for blends, cos > 1 - 1e-12)
MAX_UNSTOPPED_TURN = 0.5 * np.pi   # [rad] a corner turning more always stops, whatever the tolerances


@dataclass(frozen=True)
class DensePath:
    """Dense samples of a path (base frame) plus the geometric midpoints between consecutive samples."""

    positions: np.ndarray          # (N, 3) [m]
    rotations: np.ndarray          # (N, 3, 3)
    mid_positions: np.ndarray      # (N-1, 3) [m] path point half-way (in path parameter) between samples
    mid_rotations: np.ndarray      # (N-1, 3, 3)
    arc_length: np.ndarray         # (N,) [m] cumulative translational arc length
    progress: np.ndarray           # (N,) 0..1; 1 mrad of rotation counts like 1 mm of travel
    segment: np.ndarray            # (N,) int, index of the waypoint the sample is heading to
    blend_radii: tuple[float, ...]  # [m] radius used at each interior corner (waypoints 0..N-2)
    clamped_corners: tuple[int, ...]
    dropped_waypoints: tuple[int, ...]
    stops: tuple[int, ...] = ()     # dense indices of unblended interior corners: the arm stops there

    @property
    def size(self) -> int:
        """Number of dense samples (the start pose included)."""
        return len(self.positions)

    @property
    def length(self) -> float:
        """Total translational arc length [m]."""
        return float(self.arc_length[-1])

    def section(self, first: int, last: int) -> DensePath:
        """Samples first..last (inclusive) as a path of their own (progress and arc length kept)."""
        return replace(self, positions=self.positions[first:last + 1], rotations=self.rotations[first:last + 1],
                       mid_positions=self.mid_positions[first:last], mid_rotations=self.mid_rotations[first:last],
                       arc_length=self.arc_length[first:last + 1], progress=self.progress[first:last + 1],
                       segment=self.segment[first:last + 1], stops=())

    def pose(self, index: int) -> pin.SE3:
        """Dense sample `index` as base_T_tool."""
        return pin.SE3(self.rotations[index], self.positions[index])


def resting_path(start: pin.SE3, waypoint_count: int) -> DensePath:
    """The one-sample path of a request whose `waypoint_count` waypoints all equal `start` (all dropped)."""
    p, R = np.array(start.translation, float), np.array(start.rotation, float)
    return DensePath(positions=p[None], rotations=R[None], mid_positions=np.empty((0, 3)),
                     mid_rotations=np.empty((0, 3, 3)), arc_length=np.zeros(1), progress=np.ones(1),
                     segment=np.zeros(1, dtype=int), blend_radii=(), clamped_corners=(),
                     dropped_waypoints=tuple(range(waypoint_count)))


def pose_from_position_quaternion(position: Sequence[float], quaternion_xyzw: Sequence[float],
                                  waypoint: int = -1) -> pin.SE3:
    """A pose from a position [m] and a quaternion (x, y, z, w); renormalizes tiny norm errors.

    Raises:
        PathInputError: non-finite values or a quaternion that `spatial.quaternion_problem` refuses.
    """
    p = np.asarray(position, dtype=float)
    quat = np.asarray(quaternion_xyzw, dtype=float)
    if p.shape != (3,) or quat.shape != (4,):
        raise PathInputError(f"waypoint {waypoint}: position needs 3 and quaternion 4 entries, got "
                             f"{p.shape} and {quat.shape}", waypoint)
    if not (np.isfinite(p).all() and np.isfinite(quat).all()):
        raise PathInputError(f"waypoint {waypoint} has non-finite values: position {p.tolist()}, "
                             f"quaternion {quat.tolist()}", waypoint)
    return pose_from_xyzw(p, quat, f"waypoint {waypoint}: quaternion",
                          lambda message: PathInputError(message, waypoint))


def _check_pose(pose: pin.SE3, waypoint: int) -> tuple[np.ndarray, np.ndarray]:
    p, R = np.array(pose.translation), np.array(pose.rotation)
    if not (np.isfinite(p).all() and np.isfinite(R).all()):
        raise PathInputError(f"waypoint {waypoint} has non-finite values", waypoint)
    if np.abs(R.T @ R - np.eye(3)).max() > _ROTATION_TOLERANCE or np.linalg.det(R) < 0:
        raise PathInputError(f"waypoint {waypoint}: orientation is not a rotation matrix "
                             "(normalize the quaternion)", waypoint)
    return p, R


@dataclass(frozen=True)
class _Node:
    p: np.ndarray
    R: np.ndarray
    index: int       # waypoint index (-1 = start)


def _checked_poses(start: pin.SE3, waypoints: Sequence[pin.SE3]) -> tuple[np.ndarray, np.ndarray]:
    """Positions (K+1, 3) and rotations (K+1, 3, 3) of start and waypoints, checked in one batch (the
    per-pose check runs only to name the first bad one)."""
    p = np.array([start.translation, *(pose.translation for pose in waypoints)], dtype=float)
    R = np.array([start.rotation, *(pose.rotation for pose in waypoints)], dtype=float)
    orthonormal = np.abs(np.einsum("kji,kjl->kil", R, R) - np.eye(3)).max(axis=(1, 2)) <= _ROTATION_TOLERANCE
    good = np.isfinite(p).all(axis=1) & np.isfinite(R).all(axis=(1, 2)) & orthonormal & (np.linalg.det(R) >= 0)
    for k in np.flatnonzero(~good)[:1]:
        _check_pose(start if k == 0 else waypoints[k - 1], k - 1)      # raises, naming the waypoint
    return p, R


def _nodes(start: pin.SE3, waypoints: Sequence[pin.SE3]) -> tuple[list[_Node], list[int]]:
    if len(waypoints) == 0:
        raise EmptyPathError("the path has no waypoints")
    p, R = _checked_poses(start, waypoints)
    near = ((np.linalg.norm(np.diff(p, axis=0), axis=1) < DUPLICATE_TOLERANCE)
            & (log3_batch(np.einsum("kji,kjl->kil", R[:-1], R[1:])).angle < DUPLICATE_TOLERANCE))
    nodes, dropped = [_Node(p[0], R[0], -1)], []
    for i in range(len(waypoints)):
        last = nodes[-1]
        # without a dropped predecessor the previous node is the previous waypoint: `near` decides
        if (near[i] if last.index == i - 1 else
                np.linalg.norm(p[i + 1] - last.p) < DUPLICATE_TOLERANCE
                and np.linalg.norm(pin.log3(last.R.T @ R[i + 1])) < DUPLICATE_TOLERANCE):
            dropped.append(i)
            continue
        nodes.append(_Node(p[i + 1], R[i + 1], i))
    if len(nodes) == 1:
        raise EmptyPathError(f"the path has no motion: all {len(waypoints)} waypoint(s) equal the start pose")
    return nodes, dropped


def _per_waypoint(blend_radius: float | Sequence[float], arc_vias: Sequence[np.ndarray | None] | None,
                  count: int) -> tuple[np.ndarray, list]:
    """Blend radius (count,) [m] and arc via (or None) wanted at each waypoint, checked."""
    if np.ndim(blend_radius) == 0:
        if not np.isfinite(blend_radius) or blend_radius < 0.0:
            raise PathInputError(f"blend_radius={blend_radius} must be a finite number >= 0 [m]")
        wanted = np.full(count, float(blend_radius))
    else:
        wanted = np.asarray(blend_radius, dtype=float)
        if wanted.shape != (count,):
            raise PathInputError(f"blend_radius has {len(wanted)} entries: give one number or one per waypoint "
                                 f"({count})")
        for k in np.flatnonzero(~(np.isfinite(wanted) & (wanted >= 0.0)))[:1]:
            raise PathInputError(f"waypoint {k}: blend radius {wanted[k]} must be a finite number >= 0 [m]", int(k))
    vias = [None] * count if arc_vias is None else list(arc_vias)
    if len(vias) != count:
        raise PathInputError(f"arc_vias has {len(vias)} entries: give one per waypoint ({count}), None for a line")
    return wanted, vias


def _corner_radii(nodes: list[_Node], lengths: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                  wanted: np.ndarray, clamp: bool) -> tuple[np.ndarray, list[int]]:
    """Blend radius per node (0 at both ends) from the radius wanted at each waypoint; refuses or clamps radii
    beyond half the shorter segment. starts, ends (M, 3): unit tangents at each segment's ends."""
    radii, clamped = np.zeros(len(nodes)), []
    for i in range(1, len(nodes) - 1):
        radius = float(wanted[nodes[i].index])
        if radius <= 0.0 or lengths[i - 1] < DUPLICATE_TOLERANCE or lengths[i] < DUPLICATE_TOLERANCE:
            continue
        if np.dot(ends[i - 1], starts[i]) > 1.0 - 1e-12:     # collinear (tangent-continuous): nothing to blend
            continue
        limit = 0.5 * min(lengths[i - 1], lengths[i])
        r = radius
        if r > limit * (1.0 + 1e-9):
            if not clamp:
                raise BlendRadiusError(nodes[i].index, radius, limit)
            r = limit
            clamped.append(nodes[i].index)
        radii[i] = r
    return radii, clamped


def unstopped_turn_limit(position_tolerance: float, orientation_tolerance: float, max_step: float = MAX_STEP,
                         max_angle_step: float = MAX_ANGLE_STEP) -> float:
    """Largest turn [rad] of an unblended corner the arm may pass without stopping.

    Not stopping lets the timed joint spline round the corner. With a knot at every dense sample it can do so
    within one sample on each side, which cuts the corner by at most h/2 * sin(turn/2) (h: the dense spacing;
    the quadratic Bezier B0 = C - h d1, B2 = C + h d2 passes h/4 * |d2 - d1| from C). The turn is allowed when
    that cut is within the tolerances (position with `max_step`, orientation with `max_angle_step`), capped at
    MAX_UNSTOPPED_TURN. The cut is a bound for choosing, not the guarantee: downsampling and the timed-deviation
    check still verify the spline against the path at every sample and midpoint.

    Args:
        position_tolerance: [m] e.g. the downsampling position tolerance.
        orientation_tolerance: [rad] e.g. the downsampling orientation tolerance.
        max_step, max_angle_step: the dense spacing [m], [rad].
    """
    ratio = 2.0 * min(position_tolerance / max_step, orientation_tolerance / max_angle_step)
    return float(min(2.0 * np.arcsin(min(ratio, 1.0)), MAX_UNSTOPPED_TURN))


def corner_turns(nodes: list[_Node], max_step: float, max_angle_step: float,
                 translations: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Turn [rad] at every node (0 at both ends): angle between the neighbouring segments' directions in the
    combined space (translation / max_step, rotation / max_angle_step), rotation as the spatial rotation vector
    (the segment's constant angular velocity direction in the base frame).

    translations: the translation per unit travel fraction (M, 3) at each segment's start and at its end
    (length x unit tangent on an arc); default the chords, which are both for lines.
    """
    p = np.array([n.p for n in nodes])                                               # (M+1, 3)
    R = np.array([n.R for n in nodes])                                               # (M+1, 3, 3)
    w_body = log3_batch(np.einsum("kji,kjl->kil", R[:-1], R[1:])).vector            # (M, 3) of Ra^T Rb
    w_base = np.einsum("kij,kj->ki", R[:-1], w_body)                                 # (M, 3)
    start_t, end_t = (np.diff(p, axis=0),) * 2 if translations is None else translations
    leaving, arriving = (np.hstack([t / max_step, w_base / max_angle_step]) for t in (start_t, end_t))  # (M, 6)
    leaving = leaving / np.linalg.norm(leaving, axis=1)[:, None]                      # nodes differ: norm > 0
    arriving = arriving / np.linalg.norm(arriving, axis=1)[:, None]
    chord = np.linalg.norm(leaving[1:] - arriving[:-1], axis=1)
    return np.r_[0.0, 2.0 * np.arcsin(np.minimum(0.5 * chord, 1.0)), 0.0]


def _pieces(segments: list[Segment], radii: np.ndarray, stop_at: np.ndarray, step: float, angle_step: float):
    """Yield (positions_fn, rotations_fn, n_intervals, segment index, ends at a stop) for every piece;
    `stop_at` (per node) marks the unblended corners where the arm stops.

    n_intervals is a float (possibly inf or huge) so the caller can check the sample budget before any
    integer conversion or allocation.
    """
    for j, seg in enumerate(segments):
        L = seg.length
        s0 = radii[j] / L if L > 0 else 0.0
        s1 = 1.0 - (radii[j + 1] / L if L > 0 else 0.0)
        span = s1 - s0
        spacing = step if seg.arc is None else arc_spacing(seg.arc.radius, step)
        n = np.maximum(1.0, np.ceil(max(L * span / spacing, np.linalg.norm(seg.w) * span / angle_step) - 1e-9))
        yield ((lambda t, seg=seg, s0=s0, span=span: seg.positions(s0 + span * t)),
               (lambda t, seg=seg, s0=s0, span=span: seg.rotations(s0 + span * t)),
               n, seg.index, bool(stop_at[j + 1]))
        if radii[j + 1] > 0.0:
            yield corner_blend(seg, segments[j + 1], radii[j + 1], step, angle_step)


def build_path(start: pin.SE3, waypoints: Sequence[pin.SE3], blend_radius: float | Sequence[float] = 0.0, *,
               arc_vias: Sequence[np.ndarray | None] | None = None,
               max_step: float = MAX_STEP, max_angle_step: float = MAX_ANGLE_STEP,
               clamp_blend: bool = False, max_samples: int = MAX_DENSE_SAMPLES,
               max_unstopped_turn: float = 0.0, budget: PlanningBudget = UNLIMITED) -> DensePath:
    """Dense samples of the blended path from `start` through `waypoints` (all poses base_T_tool).

    Args:
        start: current tool pose.
        waypoints: target poses in order.
        blend_radius: corner blend radius [m], >= 0: one for all corners or one per waypoint (the radius at
            that waypoint; the last is unused).
        arc_vias: one entry per waypoint: None for a straight move to it, or a via position (3,) [m] (base
            frame) for the circular arc from the previous waypoint through the via to it.
        max_step: dense spacing in translation [m], 0 < max_step <= 1 mm.
        max_angle_step: dense spacing in rotation [rad], 0 < max_angle_step <= 1 mrad.
        clamp_blend: clamp too-large blend radii instead of raising BlendRadiusError.
        max_samples: refuse paths needing more dense samples than this.
        max_unstopped_turn: [rad] unblended corners turning at most this much are not stops (0: only
            collinear ones); see `unstopped_turn_limit`.
        budget: checked between pieces (PlanningStopped).

    Raises:
        PathInputError, EmptyPathError, BlendRadiusError: see the module docstring.
    """
    wanted, vias = _per_waypoint(blend_radius, arc_vias, len(waypoints))
    if not (0.0 < max_step <= MAX_STEP and 0.0 < max_angle_step <= MAX_ANGLE_STEP):
        raise PathInputError(f"dense spacing ({max_step} m, {max_angle_step} rad) must be in (0, {MAX_STEP}] m "
                             f"and (0, {MAX_ANGLE_STEP}] rad; coarser spacing would break the solver's accuracy")
    with np.errstate(over="ignore", invalid="ignore"):    # absurd distances overflow to inf: budget refuses
        nodes, dropped = _nodes(start, waypoints)
        for i in dropped:
            if vias[i] is not None:
                raise PathInputError(f"waypoint {i}: the arc ends where it starts (the waypoint equals the "
                                     "previous pose), so the circle is undefined", i)
        segments = make_segments(np.array([n.p for n in nodes]), np.array([n.R for n in nodes]),
                                 [n.index for n in nodes], vias)
        lengths, starts, ends, start_t, end_t = end_tangents(segments)
        radii, clamped = _corner_radii(nodes, lengths, starts, ends, wanted, clamp_blend)
        turns = corner_turns(nodes, max_step, max_angle_step, (start_t, end_t))
        stop_at = (radii == 0.0) & (turns > max(max_unstopped_turn, _COLLINEAR_TURN))
        pieces = list(_pieces(segments, radii, stop_at, max_step, max_angle_step))
    _check_budget(pieces, max_samples, max_step, max_angle_step)

    positions, rotations, segment = [nodes[0].p[None]], [nodes[0].R[None]], [np.array([nodes[1].index])]
    stops, fine_count = [], 1
    for done, (pos_fn, rot_fn, n, seg, stop) in enumerate(pieces):
        budget.check("geometry", done, len(pieces))
        n = int(n)
        t = np.arange(1, 2 * n + 1) / (2 * n)          # half steps: odd entries become midpoints
        fine_count += 2 * n
        if stop:
            stops.append((fine_count - 1) // 2)
        positions.append(pos_fn(t))
        rotations.append(rot_fn(t))
        segment.append(np.full(2 * n, seg))
    fine_p, fine_R, fine_seg = np.concatenate(positions), np.concatenate(rotations), np.concatenate(segment)
    chord = np.linalg.norm(np.diff(fine_p, axis=0), axis=1)
    turn = relative_angles(fine_R[:-1], fine_R[1:])
    arc = np.concatenate([[0.0], np.cumsum(chord)])
    combined = np.concatenate([[0.0], np.cumsum(chord + turn * (max_step / max_angle_step))])
    corner_radii = tuple(float(radii[k]) for k in range(1, len(nodes) - 1))
    return DensePath(positions=fine_p[::2].copy(), rotations=fine_R[::2].copy(),
                     mid_positions=fine_p[1::2].copy(), mid_rotations=fine_R[1::2].copy(),
                     arc_length=arc[::2].copy(), progress=combined[::2] / combined[-1],
                     segment=fine_seg[::2].copy(), blend_radii=corner_radii,
                     clamped_corners=tuple(clamped), dropped_waypoints=tuple(dropped),
                     stops=tuple(stops))


def _check_budget(pieces: list, max_samples: int, step: float, angle_step: float) -> None:
    """PathInputError if the dense path would exceed `max_samples`, naming the biggest contributor."""
    counts = np.array([p[2] for p in pieces], dtype=float)
    total = 1.0 + counts.sum()
    if total <= max_samples:
        return
    worst = int(np.argmax(counts))
    waypoint = int(pieces[worst][3])
    coarser = ", or use a coarser spacing" if step < MAX_STEP or angle_step < MAX_ANGLE_STEP else ""
    raise PathInputError(f"the path needs {total:.3g} dense samples ({step} m / {angle_step} rad spacing), more "
                         f"than the budget of {max_samples}; waypoint {waypoint} contributes {counts[worst]:.3g} "
                         f"of them: split the motion or check the waypoint units{coarser}", waypoint)
