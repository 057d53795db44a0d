"""The moves between consecutive path nodes (straight lines and circular arcs) and the corner blends between them.

A move spreads its rotation over its travel (SLERP by distance or arc length). `corner_blend` builds the piece
that replaces the corner between two moves cut at travel r on each side: the quadratic Bezier with the corner as
control point between two lines (the original construction, kept bit for bit), the tangent-continuous cubic of
`arcs.cubic_blend` when an arc is involved.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from robokin_ros.core.path.arcs import CircleArc, bezier_points, circle_through, cubic_blend, cubic_intervals
from robokin_ros.core.so3 import exp3_scaled


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
