"""Joint-space pieces of a program: MoveJ lines and the blends at zones next to a MoveJ.

A MoveJ is a straight line in joint space, sampled every JOINT_SAMPLE_STEP so the zone search and the timing spline
see its shape. A zone where a MoveJ meets another move is a joint-space blend: both neighbours are cut where the
tool is `zone` away from the corner (the zone is a tool distance, as in robot languages), at most half-way along
each move, and the cut points are joined by a cubic Bezier tangent to both neighbours. For two straight joint lines
it is the quadratic Bezier over the corner configuration, raised to a cubic: control points 2/3 of the way to the
corner, so the velocity direction is continuous and the curve stays inside the corner's triangle.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

JOINT_SAMPLE_STEP = 0.01       # [rad | m] largest joint change between MoveJ samples
BLEND_SAMPLE_STEP = 0.005      # [rad | m] spacing of blend samples (chord), at least MIN_BLEND_SAMPLES
MIN_BLEND_SAMPLES = 8


def joint_line(q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
    """Samples (K, n) of the straight joint-space line q0 -> q1, ends included, at most JOINT_SAMPLE_STEP apart."""
    count = max(1, int(np.ceil(float(np.abs(q1 - q0).max()) / JOINT_SAMPLE_STEP - 1e-9)))
    t = np.linspace(0.0, 1.0, count + 1)[:, None]
    return q0 + t * (q1 - q0)


class Cut(NamedTuple):
    """Where a zone cuts a neighbouring piece: the sample index kept last (incoming) or first (outgoing)."""

    index: int
    tool_distance: float       # [m] of the tool at the cut from the corner


def incoming_cut(tool_positions: np.ndarray, first_of_move: int, zone: float) -> Cut:
    """The last sample at least `zone` from the piece's end point, but not before the middle of its last move
    (samples first_of_move..end)."""
    end = len(tool_positions) - 1
    distance = np.linalg.norm(tool_positions - tool_positions[end], axis=1)
    middle = first_of_move + (end - first_of_move) // 2
    far = np.flatnonzero(distance[middle:end] >= zone)
    index = middle + int(far[-1]) if len(far) else middle
    return Cut(index, float(distance[index]))


def outgoing_cut(tool_positions: np.ndarray, last_of_move: int, zone: float) -> Cut:
    """The first sample at least `zone` from the piece's start point, but not after the middle of its first
    move (samples 0..last_of_move)."""
    distance = np.linalg.norm(tool_positions - tool_positions[0], axis=1)
    middle = max(1, last_of_move // 2)
    far = np.flatnonzero(distance[1:middle + 1] >= zone)
    index = 1 + int(far[0]) if len(far) else middle
    return Cut(index, float(distance[index]))


def joint_blend(before: np.ndarray, corner: np.ndarray, after: np.ndarray, tangent_in: np.ndarray,
                tangent_out: np.ndarray) -> np.ndarray:
    """Interior samples (K, n) of the cubic Bezier from `before` to `after` (both excluded).

    tangent_in / tangent_out: unit joint-space directions of the neighbouring pieces at the cuts. The control
    points lie 2/3 of the distance to `corner` along them, which for straight neighbours is exactly the quadratic
    Bezier over the corner."""
    b1 = before + (2.0 / 3.0) * np.linalg.norm(corner - before) * tangent_in
    b2 = after - (2.0 / 3.0) * np.linalg.norm(after - corner) * tangent_out
    chord = float(np.linalg.norm(after - before))
    count = max(MIN_BLEND_SAMPLES, int(np.ceil(chord / BLEND_SAMPLE_STEP)))
    t = (np.arange(1, count) / count)[:, None]
    u = 1.0 - t
    return u ** 3 * before + 3 * u * u * t * b1 + 3 * u * t * t * b2 + t ** 3 * after


def unit_direction(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(b - a) / |b - a| (zero vector when they coincide)."""
    d = b - a
    norm = float(np.linalg.norm(d))
    return d / norm if norm > 0 else d
