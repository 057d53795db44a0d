"""One run of a program (the moves between two exact stops) as one joint path: the pieces cut at their zones and
joined by joint-space blends, the knots the timing spline passes through, and the stretch of limits each part of
the path runs under."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robokin_ros.core.path.surface import AxisSelection, DensePath, PlanningBudget, downsample, path_parameter
from robokin_ros.core.program.joint_blends import incoming_cut, joint_blend, outgoing_cut, unit_direction
from robokin_ros.core.program.pieces import Piece

INITIAL_KNOT_STRIDE = 32       # dense samples between the first-guess knots of a Cartesian part
JOINT_KNOT_STRIDE = 4          # every 4th MoveJ sample (0.04 rad) is a spline knot: a straight line needs few


@dataclass(frozen=True)
class CartesianWindow:
    """Dense samples first..last of a run that follow `path` (a Cartesian piece minus its joint blends)."""

    first: int
    last: int
    path: DensePath


@dataclass(frozen=True)
class AssembledRun:
    """A run's dense joint path and what the timing needs from it."""

    positions: np.ndarray          # (N, n)
    labels: np.ndarray             # (N,) move index per sample (nondecreasing): whose limits apply
    parameter: np.ndarray          # (N,) cumulative joint distance: the spline parameter
    knots: np.ndarray              # (M,) dense indices the timing spline passes through
    windows: tuple[CartesianWindow, ...]
    joint_zones: dict          # move index -> zone used at its end where a joint blend joins it [m] (the tool's
    #                            distance from the corner at the nearer cut: smaller than programmed when a cut
    #                            stopped half-way along a short move)


def _range_of(labels: np.ndarray, move: int) -> tuple[int, int]:
    hits = np.flatnonzero(labels == move)
    return int(hits[0]), int(hits[-1])


def assemble(pieces: list[Piece], zones: list[float]) -> tuple[list[tuple[int, int]], list[np.ndarray], dict]:
    """Cut ranges (lo, hi) of every piece, the joint blend samples between piece p and p + 1 for the zones
    `zones[p]` [m] at their junctions (0 = the pieces meet without a blend: the run's last move only), and the zone
    each junction's incoming move got."""
    ranges = [[0, len(p.positions) - 1] for p in pieces]
    blends, used = [], {}
    for p, zone in enumerate(zones):
        a, b = pieces[p], pieces[p + 1]
        if zone <= 0.0:
            blends.append(np.empty((0, a.positions.shape[1])))
            continue
        lo = ranges[p][0]
        first_of_move = max(_range_of(a.labels, int(a.labels[-1]))[0], lo)
        incoming = incoming_cut(a.tools[lo:], first_of_move - lo, zone)
        cut_in = lo + incoming.index
        last_of_move = _range_of(b.labels, int(b.labels[0]))[1]
        outgoing = outgoing_cut(b.tools, max(last_of_move, 1), zone)
        cut_out = outgoing.index
        used[int(a.labels[-1])] = min(incoming.tool_distance, outgoing.tool_distance)
        ranges[p][1], ranges[p + 1][0] = cut_in, cut_out
        qa, qb = a.positions, b.positions
        t_in = unit_direction(qa[max(cut_in - 1, 0)], qa[cut_in] if cut_in > 0 else qa[1])
        t_out = unit_direction(qb[cut_out], qb[min(cut_out + 1, len(qb) - 1)])
        blends.append(joint_blend(qa[cut_in], qa[-1], qb[cut_out], t_in, t_out))
    return [tuple(r) for r in ranges], blends, used


def build_run(pieces: list[Piece], zones: list[float], fk, config, axes: AxisSelection,
              budget: PlanningBudget) -> AssembledRun:
    """The dense joint path of a run, its spline knots (Cartesian parts downsampled within the path tolerances)
    and the windows where it follows a Cartesian path."""
    ranges, blends, joint_zones = assemble(pieces, zones)
    positions, labels, knots, windows = [], [], [], []
    offset = 0
    for p, (piece, (lo, hi)) in enumerate(zip(pieces, ranges)):
        budget.check("downsampling", p, len(pieces))
        q = piece.positions[lo:hi + 1]
        positions.append(q)
        labels.append(piece.labels[lo:hi + 1])
        if piece.cartesian:
            section = piece.path.section(lo, hi)
            # where a segment, arc or blend begins the spline needs a knot anyway, and the refinement ends with a
            # knot every ~20 samples on these paths: a first guess of one per INITIAL_KNOT_STRIDE saves its rounds
            changes = np.r_[np.flatnonzero(np.diff(section.segment) != 0) + 1,
                            np.arange(0, hi - lo + 1, INITIAL_KNOT_STRIDE)]
            reduced = downsample(q, section, fk, config.downsample_joint_tolerance,
                                 config.downsample_position_tolerance, config.downsample_orientation_tolerance,
                                 axes, budget, initial=changes)
            knots.append(reduced.indices + offset)
            windows.append(CartesianWindow(offset, offset + hi - lo, section))
        else:
            knots.append(np.unique(np.r_[np.arange(0, hi - lo + 1, JOINT_KNOT_STRIDE), hi - lo]) + offset)
        offset += hi - lo + 1
        if p < len(blends) and len(blends[p]):
            count = len(blends[p])
            positions.append(blends[p])
            incoming, outgoing = int(piece.labels[-1]), int(pieces[p + 1].labels[0])
            # halves, as in Cartesian zones
            labels.append(np.where(np.arange(count) < count // 2, incoming, outgoing))
            knots.append(np.arange(count) + offset)
            offset += count
    # zones inside a run are > 0 (a run ends at its first exact stop), so pieces never share a sample
    Q = np.concatenate(positions)
    return AssembledRun(Q, np.concatenate(labels), path_parameter(Q),
                        np.unique(np.concatenate(knots)), tuple(windows), joint_zones)


def stretches(run: AssembledRun) -> tuple[np.ndarray, np.ndarray]:
    """The limit stretches: (dense start index, move) of each move's contiguous samples."""
    starts = np.flatnonzero(np.r_[True, np.diff(run.labels) != 0])
    return starts, run.labels[starts]
