"""The moves between consecutive path nodes (straight lines and circular arcs) and the corner blends between them.

A move spreads its rotation over its travel (SLERP by distance or arc length). `corner_blend` builds the piece
that replaces the corner between two moves cut at travel r on each side: the quadratic Bezier with the corner as
control point between two lines (the original construction, kept bit for bit), the tangent-continuous cubic of
`cubic_blend` when an arc is involved.

Arcs (MoveC): an arc is the circle through three points (segment start, via, waypoint), travelled from the start
through the via to the waypoint; positions and unit tangents are evaluated at fractions of its arc length
(vectorised).

Fit of the dense representation (what core/path/deviation.py relies on): within a dense interval the deviation
check takes the position as the quadratic through sample, midpoint, sample. On an arc of radius rho with samples
h apart in arc length, that quadratic is the parabola through three points of the circle symmetric about the
middle one; it leaves the circle by at most rho a^4 / 32 = h^4 / (512 rho^3) (a = h / (2 rho), the half angle of
the interval; leading order of the difference of the two graphs over the chord). At h = 1 mm that is 1.6e-8 m
for rho = 5 mm and below 1e-8 m from rho = 5.9 mm on, so `arc_spacing` shortens h on tighter arcs to keep every
arc within FIT_TOLERANCE (test_path_arcs checks the true distance). A cubic blend is checked the same way with
the interpolation bound |B'''| d^3 / (72 sqrt 3) over a parameter interval d (`cubic_intervals`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import PathInputError
from robokin_ros.core.so3 import exp3_scaled

FIT_TOLERANCE = 1e-8         # [m] quadratic (sample, midpoint, sample) vs the true curve in one dense interval
COLLINEAR_TOLERANCE = 1e-6   # [m] a via this close to an end or to the chord leaves the circle undefined


@dataclass(frozen=True)
class CircleArc:
    """Arc of the circle `centre`, `radius` in the plane normal to `normal`, from angle 0 (direction `u` from the
    centre) to `sweep` about `normal` (`v` = normal x u is the direction of travel at the start)."""

    centre: np.ndarray     # (3,) [m]
    radius: float          # [m]
    normal: np.ndarray     # (3,) unit
    u: np.ndarray          # (3,) unit
    v: np.ndarray          # (3,) unit
    sweep: float           # (0, 2 pi) [rad]

    @property
    def length(self) -> float:
        """Arc length [m]."""
        return self.radius * self.sweep

    def points(self, s: np.ndarray) -> np.ndarray:
        """Positions (K, 3) at arc-length fractions s (K,) in [0, 1]."""
        phi = np.asarray(s, dtype=float) * self.sweep
        return self.centre + self.radius * (np.outer(np.cos(phi), self.u) + np.outer(np.sin(phi), self.v))

    def tangents(self, s: np.ndarray) -> np.ndarray:
        """Unit tangents (K, 3) in the direction of travel at arc-length fractions s (K,)."""
        phi = np.asarray(s, dtype=float) * self.sweep
        return np.outer(-np.sin(phi), self.u) + np.outer(np.cos(phi), self.v)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b for two (3,) vectors: np.cross takes ~19 us a call here, this ~1 us."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def circle_through(start: np.ndarray, via: np.ndarray, end: np.ndarray, waypoint: int) -> CircleArc:
    """The arc from `start` through `via` to `end` (all [m], base frame) of the move to `waypoint`.

    Raises:
        PathInputError naming the waypoint: a via that is not 3 finite numbers, an arc ending where it starts
        (a full circle takes two moves), a via within COLLINEAR_TOLERANCE of an end or of the chord's line.
    """
    via = np.asarray(via, dtype=float)
    if via.shape != (3,) or not np.isfinite(via).all():
        raise PathInputError(f"waypoint {waypoint}: the arc via {np.asarray(via).tolist()} must be 3 finite "
                             "coordinates [m]", waypoint)
    chord = end - start                                                           # (3,)
    if np.linalg.norm(chord) < COLLINEAR_TOLERANCE:
        raise PathInputError(f"waypoint {waypoint}: the arc ends where it starts, so the circle is undefined; "
                             "split a full circle into two arcs", waypoint)
    a = via - start
    if min(np.linalg.norm(a), np.linalg.norm(end - via)) < COLLINEAR_TOLERANCE:
        raise PathInputError(f"waypoint {waypoint}: the arc via {via.tolist()} coincides with an end of the arc "
                             f"(within {COLLINEAR_TOLERANCE} m), so the circle is undefined", waypoint)
    n = _cross(a, chord)              # the circle A -> via -> end turns positively about a x chord
    nn = float(n @ n)
    if np.sqrt(nn) / np.linalg.norm(chord) < COLLINEAR_TOLERANCE:
        raise PathInputError(f"waypoint {waypoint}: the arc's start, via {via.tolist()} and end are collinear "
                             f"(within {COLLINEAR_TOLERANCE} m), so the circle is undefined; use a line", waypoint)
    # circumcentre: in the plane of the three points and equidistant from them
    centre = start + (float(a @ a) * _cross(chord, n) - float(chord @ chord) * _cross(a, n)) / (2.0 * nn)
    normal = n / np.sqrt(nn)
    radius = float(np.linalg.norm(start - centre))
    u = (start - centre) / radius
    v = _cross(normal, u)
    e = end - centre
    sweep = float(np.arctan2(e @ v, e @ u)) % (2.0 * np.pi)
    return CircleArc(centre, radius, normal, u, v, sweep)


def arc_spacing(radius: float, step: float) -> float:
    """Dense spacing [m] of arc length on an arc of `radius` [m]: at most `step`, and short enough that the
    quadratic through sample, midpoint, sample stays within FIT_TOLERANCE of the circle (module docstring)."""
    return min(step, 2.0 * radius * (32.0 * FIT_TOLERANCE / radius) ** 0.25)


def cubic_blend(cut_in: np.ndarray, tangent_in: np.ndarray, cut_out: np.ndarray, tangent_out: np.ndarray,
                radius: float) -> np.ndarray:
    """Control points (4, 3) of the corner blend from `cut_in` to `cut_out`, tangent to the unit tangents there.

    The inner points sit 2r/3 along the tangents: for two lines meeting at the corner (cuts r from it) this is the
    degree elevation of the quadratic Bezier with the corner as control point, so both blends agree.
    """
    return np.array([cut_in, cut_in + (2.0 * radius / 3.0) * tangent_in,
                     cut_out - (2.0 * radius / 3.0) * tangent_out, cut_out])


def bezier_points(ctrl: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Positions (K, 3) of the cubic Bezier with control points `ctrl` (4, 3) at parameters t (K,)."""
    s = 1.0 - t
    return (np.outer(s ** 3, ctrl[0]) + np.outer(3.0 * s * s * t, ctrl[1]) + np.outer(3.0 * s * t * t, ctrl[2])
            + np.outer(t ** 3, ctrl[3]))


def cubic_intervals(ctrl: np.ndarray, step: float) -> float:
    """Dense intervals (float) for a cubic blend sampled uniformly in its parameter.

    |B'(t)| <= 3 max |P(k+1) - P(k)| bounds the travel between samples by `step`; B''' = 6 (P3 - 3 P2 + 3 P1 - P0)
    is constant, so the quadratic through sample, midpoint, sample of an interval d = 1/n is within
    |B'''| d^3 / (72 sqrt 3) of the curve, kept below FIT_TOLERANCE.
    """
    speed = 3.0 * np.linalg.norm(np.diff(ctrl, axis=0), axis=1).max()
    jerk = 6.0 * np.linalg.norm(ctrl[3] - 3.0 * ctrl[2] + 3.0 * ctrl[1] - ctrl[0])
    return max(speed / step, (jerk / (72.0 * np.sqrt(3.0) * FIT_TOLERANCE)) ** (1.0 / 3.0))


@dataclass(frozen=True)
class Segment:
    """The move from pose (p0, R0) to waypoint `index`: a straight line, or the circular arc `arc` when set."""

    p0: np.ndarray                # (3,) [m]
    R0: np.ndarray                # (3, 3)
    index: int                    # waypoint the move heads to
    delta: np.ndarray             # (3,) [m] end - start (the chord of an arc)
    length: float                 # [m] travel: chord or arc length
    w: np.ndarray                 # (3,) rotation vector of R0^T R_end, spread over the travel
    arc: CircleArc | None = None

    def positions(self, s: np.ndarray) -> np.ndarray:
        """Positions (K, 3) at travel fractions s (K,)."""
        return self.p0 + np.outer(s, self.delta) if self.arc is None else self.arc.points(s)

    def tangent(self, s: float) -> np.ndarray:
        """Unit direction of travel (3,) at travel fraction s."""
        return self.delta / self.length if self.arc is None else self.arc.tangents(np.array([s]))[0]

    def rotations(self, s: np.ndarray) -> np.ndarray:
        """Orientations (K, 3, 3) at travel fractions s (K,)."""
        return self.R0 @ exp3_scaled(self.w, s)


def make_segments(p: np.ndarray, R: np.ndarray, index: list[int], vias: list) -> list[Segment]:
    """Moves between the node poses p (M+1, 3), R (M+1, 3, 3) heading to waypoints index[1:]; an arc where the
    waypoint's via is set (PathInputError naming it when the circle is undefined)."""
    segments = []
    for j in range(len(p) - 1):
        delta, w, via = p[j + 1] - p[j], pin.log3(R[j].T @ R[j + 1]), vias[index[j + 1]]
        if via is None:
            segments.append(Segment(p[j], R[j], index[j + 1], delta, float(np.linalg.norm(delta)), w))
        else:
            arc = circle_through(p[j], via, p[j + 1], index[j + 1])
            segments.append(Segment(p[j], R[j], index[j + 1], delta, arc.length, w, arc))
    return segments


def end_tangents(segments: list[Segment]) -> tuple[np.ndarray, ...]:
    """Travel (M,) [m], unit tangents at each move's start and end (M, 3) each, and the translation per unit
    travel fraction there (M, 3) each: the chord for lines (as `geometry.corner_turns` takes it), length x
    tangent for arcs."""
    deltas = np.array([s.delta for s in segments])                                   # (M, 3)
    lengths = np.linalg.norm(deltas, axis=1)
    starts = deltas / np.where(lengths > 0, lengths, 1.0)[:, None]
    ends, start_t, end_t = starts.copy(), deltas.copy(), deltas.copy()
    for j, seg in enumerate(segments):
        if seg.arc is not None:
            lengths[j] = seg.length
            starts[j], ends[j] = seg.arc.tangents(np.array([0.0, 1.0]))
            start_t[j], end_t[j] = seg.length * starts[j], seg.length * ends[j]
    return lengths, starts, ends, start_t, end_t


def corner_blend(into: Segment, out: Segment, r: float, step: float, angle_step: float):
    """The blend piece (positions_fn, rotations_fn, n_intervals, segment index, False) at the corner between
    `into` and `out`, cut at travel r > 0 on each side; the orientation SLERPs over the Bezier parameter between
    the moves' orientations at the cuts."""
    s_in, s_out = 1.0 - r / into.length, r / out.length
    Ra = into.R0 @ exp3_scaled(into.w, np.array([s_in]))[0]
    Rb = out.R0 @ exp3_scaled(out.w, np.array([s_out]))[0]
    wb = pin.log3(Ra.T @ Rb)
    if into.arc is None and out.arc is None:
        C = out.p0
        B0 = C - r * into.delta / into.length
        B2 = C + r * out.delta / out.length
        # |B'(t)| <= 2r, so 2r/n bounds the translation between parameter-uniform samples.
        nb = max(2 * r / step, np.linalg.norm(wb) / angle_step)
        positions = (lambda t, B0=B0, C=C, B2=B2: np.outer((1 - t) ** 2, B0) + np.outer(2 * t * (1 - t), C)
                     + np.outer(t ** 2, B2))
    else:
        ctrl = cubic_blend(into.positions(np.array([s_in]))[0], into.tangent(s_in),
                           out.positions(np.array([s_out]))[0], out.tangent(s_out), r)   # (4, 3)
        nb = max(cubic_intervals(ctrl, step), np.linalg.norm(wb) / angle_step)
        positions = (lambda t, ctrl=ctrl: bezier_points(ctrl, t))
    return (positions, (lambda t, Ra=Ra, wb=wb: Ra @ exp3_scaled(wb, t)), np.maximum(1.0, np.ceil(nb - 1e-9)),
            out.index, False)
