"""Dense paths of several tips on one sample grid: sample k of every tip is where that tip must be at the same moment.

Two ways to give them (`TipsPath`):
- per tip (`per_tip_moves`): each move names targets for some tips; the others hold their pose (their path is their
  pose repeated). Every move is a straight line (or an arc through a via) per tip, SLERP by travel, sampled with
  one count for all tips: the tip that needs most samples for the 1 mm / 1 mrad rule sets it, the others are sampled
  uniformly in their own travel, so all tips reach each target at the same sample. A move's end is a stop.
- a carried object (`carried_paths`): the object's path is built as a single tip's is (`build_path`, blends and
  arcs included); each tip's path is the object's composed with the grasp, base_T_tip = base_T_object * object_T_tip,
  so the tips are synchronised by construction. The object's spacing is chosen so that every tip's samples are at
  most `max_step` / `max_angle_step` apart (a tip away from the object's origin travels farther when it turns).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import EmptyPathError, PathInputError
from robokin_ros.core.path.budget import UNLIMITED, PlanningBudget
from robokin_ros.core.path.geometry import DUPLICATE_TOLERANCE, MAX_ANGLE_STEP, MAX_STEP, DensePath, build_path
from robokin_ros.core.path.segments import arc_spacing, make_segments
from robokin_ros.core.so3 import relative_angles, slerp_batch
from robokin_ros.core.tips.held_object import Grasp

_SPACING_TRIES = 4       # rebuilds of an object path whose tips travel farther than the spacing per sample


@dataclass(frozen=True)
class TipsPath:
    """One dense path per tip, all of the same size; `moving[i]` False: tip i holds its pose."""

    tips: tuple[str, ...]
    paths: tuple[DensePath, ...]
    moving: tuple[bool, ...]
    relative: pin.SE3 | None = None        # tips[0]_T_tips[1] held all along (a carried object), None = free
    object_path: DensePath | None = None   # the carried object's own path, when carried

    @property
    def size(self) -> int:
        """Dense samples, the start included."""
        return self.paths[0].size

    @property
    def lead(self) -> DensePath:
        """The path whose segments, stops and progress stand for all (they are shared)."""
        return self.paths[0]

    def section(self, first: int, last: int) -> TipsPath:
        """Samples first..last of every tip."""
        return replace(self, paths=tuple(p.section(first, last) for p in self.paths),
                       object_path=None if self.object_path is None else self.object_path.section(first, last))


def _shared_progress(paths: Sequence[tuple[np.ndarray, np.ndarray]], step: float, angle_step: float) -> np.ndarray:
    """(N,) 0..1 along the tips' paths (positions, rotations): per interval the largest combined travel of any tip,
    1 mrad counting like 1 mm (`DensePath.progress`'s metric)."""
    travel = np.zeros(len(paths[0][0]) - 1)
    for p, R in paths:
        chord = np.linalg.norm(np.diff(p, axis=0), axis=1)
        travel = np.maximum(travel, chord + relative_angles(R[:-1], R[1:]) * (step / angle_step))
    total = np.r_[0.0, np.cumsum(travel)]
    return total / total[-1] if total[-1] > 0 else np.linspace(0.0, 1.0, len(total))


def _dense(p, R, mid_p, mid_R, segment, progress, stops=(), like: DensePath | None = None) -> DensePath:
    arc = np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(p, axis=0), axis=1))]
    path = DensePath(p, R, mid_p, mid_R, arc, progress, segment, (), (), (), tuple(stops))
    if like is not None:
        path = replace(path, blend_radii=like.blend_radii, clamped_corners=like.clamped_corners,
                       dropped_waypoints=like.dropped_waypoints)
    return path


class TipMove:
    """A move's target for one tip: `pose` (base frame) and, for an arc, `via` (3,) [m]."""

    def __init__(self, pose: pin.SE3, via: np.ndarray | None = None) -> None:
        self.pose, self.via = pose, via


def per_tip_moves(tips: Sequence[str], starts: Sequence[pin.SE3], moves: Sequence[dict],
                  max_step: float = MAX_STEP, max_angle_step: float = MAX_ANGLE_STEP) -> TipsPath:
    """The synchronised path of `moves` (each a dict tip -> TipMove; a tip not named holds its pose) from the tips'
    poses `starts`; every move ends at a stop. A move that moves no tip is dropped (`DensePath.dropped_waypoints`
    of every tip names it); EmptyPathError when no move moves.

    Raises:
        PathInputError: an arc whose circle is undefined (naming the move).
    """
    current = [(np.array(s.translation, float), np.array(s.rotation, float)) for s in starts]
    samples = [([c[0][None]], [c[1][None]], [], []) for c in current]
    segment, stops, dropped, moving = [np.array([0])], [], [], [False] * len(tips)
    for j, move in enumerate(moves):
        segs, count = {}, 0
        for i, tip in enumerate(tips):
            if tip not in move:
                continue
            target = move[tip]
            p1, R1 = np.array(target.pose.translation, float), np.array(target.pose.rotation, float)
            p0, R0 = current[i]
            if np.linalg.norm(p1 - p0) < DUPLICATE_TOLERANCE and \
                    np.linalg.norm(pin.log3(R0.T @ R1)) < DUPLICATE_TOLERANCE and target.via is None:
                continue
            vias = {j: None if target.via is None else np.asarray(target.via, float)}
            seg = make_segments(np.array([p0, p1]), np.array([R0, R1]), [-1, j], vias)[0]
            spacing = max_step if seg.arc is None else arc_spacing(seg.arc.radius, max_step)
            count = max(count, int(np.ceil(max(seg.length / spacing, np.linalg.norm(seg.w) / max_angle_step)
                                           - 1e-9)), 1)
            segs[i] = seg
        if not segs:
            dropped.append(j)
            continue
        if len(segment) > 1:                         # the previous move ends at rest
            stops.append(sum(len(s) for s in segment) - 1)
        t = np.arange(1, count + 1) / count
        mid = (np.arange(count) + 0.5) / count
        for i in range(len(tips)):
            pos, rot, mpos, mrot = samples[i]
            if i in segs:
                seg = segs[i]
                pos.append(seg.positions(t))
                rot.append(seg.rotations(t))
                mpos.append(seg.positions(mid))
                mrot.append(seg.rotations(mid))
                current[i] = (pos[-1][-1], rot[-1][-1])
                moving[i] = True
            else:
                p, R = current[i]
                for out, value, k in ((pos, p, count), (rot, R, count), (mpos, p, count), (mrot, R, count)):
                    out.append(np.repeat(value[None], k, axis=0))
        segment.append(np.full(count, j))
    if len(segment) == 1:
        raise EmptyPathError(f"no move moves a tip: all {len(moves)} target(s) equal the poses they start from")
    joined = [tuple(np.concatenate(part) for part in tip_samples) for tip_samples in samples]
    progress = _shared_progress([(p, R) for p, R, _, _ in joined], max_step, max_angle_step)
    seg = np.concatenate(segment)
    seg[0] = seg[1]
    paths = tuple(replace(_dense(p, R, mp, mR, seg, progress, stops), dropped_waypoints=tuple(dropped))
                  for p, R, mp, mR in joined)
    return TipsPath(tuple(tips), paths, tuple(moving))


def carried_paths(tips: Sequence[str], grasp: Grasp, base_T_object: pin.SE3, waypoints: Sequence[pin.SE3],
                  blend_radius, arc_vias=None, max_step: float = MAX_STEP, max_angle_step: float = MAX_ANGLE_STEP,
                  clamp_blend: bool = False, max_unstopped_turn: float = 0.0,
                  budget: PlanningBudget = UNLIMITED) -> TipsPath:
    """The tips' paths carrying the object from `base_T_object` through `waypoints` (object poses, base frame):
    the object's dense path (`build_path`, with `blend_radius` and `arc_vias` as there) composed with the grasp.

    Raises:
        PathInputError, EmptyPathError, BlendRadiusError: as `build_path`.
    """
    if len(grasp.object_T_tips) != len(tips):
        raise PathInputError(f"the grasp holds {len(grasp.object_T_tips)} tip(s), the robot has {len(tips)}: "
                             f"{list(tips)}")
    step, angle_step = max_step, max_angle_step
    for _ in range(_SPACING_TRIES):
        obj = build_path(base_T_object, waypoints, blend_radius, arc_vias=arc_vias, max_step=step,
                         max_angle_step=angle_step, clamp_blend=clamp_blend, max_unstopped_turn=max_unstopped_turn,
                         budget=budget)
        paths = tuple(_composed(obj, object_T_tip) for object_T_tip in grasp.object_T_tips)
        travel = max(_largest_step(p) for p in paths)
        if travel <= max_step * (1.0 + 1e-9):
            break
        # a tip off the object's origin travels |v + w x r| per sample: shrink the spacing by the excess
        step = step * max_step / travel * 0.999
    else:
        raise PathInputError(f"no object path spacing keeps the tips within {max_step * 1e3:g} mm per sample")
    progress = _shared_progress([(p.positions, p.rotations) for p in paths], max_step, max_angle_step)
    paths = tuple(replace(p, progress=progress) for p in paths)
    relative = grasp.object_T_tips[0].actInv(grasp.object_T_tips[1]) if len(tips) > 1 else None
    return TipsPath(tuple(tips), paths, (True,) * len(tips), relative, obj)


def _composed(obj: DensePath, object_T_tip: pin.SE3) -> DensePath:
    """The path of a point rigidly fixed on the object: base_T_tip = base_T_object * object_T_tip, per sample."""
    r, R_ot = np.asarray(object_T_tip.translation), np.asarray(object_T_tip.rotation)
    p = obj.positions + obj.rotations @ r
    mid_p = obj.mid_positions + obj.mid_rotations @ r
    return _dense(p, obj.rotations @ R_ot, mid_p, obj.mid_rotations @ R_ot, obj.segment, obj.progress, obj.stops,
                  like=obj)


def _largest_step(path: DensePath) -> float:
    """[m] the largest distance between neighbouring samples, midpoints included (half intervals)."""
    if path.size < 2:
        return 0.0
    to_mid = np.linalg.norm(path.mid_positions - path.positions[:-1], axis=1)
    from_mid = np.linalg.norm(path.positions[1:] - path.mid_positions, axis=1)
    return float(np.max(to_mid + from_mid))


def blended_per_tip(tips: Sequence[str], starts: Sequence[pin.SE3], moves: Sequence[dict], zones: Sequence[float],
                    max_step: float = MAX_STEP, max_angle_step: float = MAX_ANGLE_STEP,
                    max_unstopped_turn: float = 0.0, budget: PlanningBudget = UNLIMITED) -> TipsPath | None:
    """The moves (tip -> TipMove each) with their zones blended (`zones[j]` [m] at move j's end, the last unused),
    when every move names the same tips and moves each of them; None otherwise (the caller stops at every target).

    Each moving tip's path is `build_path` through its own targets (blends clamped to half the shorter segment);
    then every tip's stretch toward target j is resampled to one count for all, the largest any tip needs, on the
    curve the deviation check takes as the path (the quadratic through sample, midpoint, sample; SLERP between the
    samples): so every tip starts each stretch, its blends included, at the same sample. An unblended corner that is
    a stop for one tip is a stop for all.
    """
    named = [set(move) for move in moves]
    if not named or any(n != named[0] for n in named):
        return None
    index = {tip: i for i, tip in enumerate(tips)}
    paths = {}
    for tip in named[0]:
        try:
            dense = build_path(starts[index[tip]], [move[tip].pose for move in moves], list(zones),
                               arc_vias=[move[tip].via for move in moves], max_step=max_step,
                               max_angle_step=max_angle_step, clamp_blend=True,
                               max_unstopped_turn=max_unstopped_turn, budget=budget)
        except EmptyPathError:
            return None
        if dense.dropped_waypoints:
            return None
        paths[tip] = dense
    counts = np.max([np.bincount(p.segment[1:], minlength=len(moves)) for p in paths.values()], axis=0)   # (moves,)
    size = 1 + int(counts.sum())
    segment = np.r_[0, np.repeat(np.arange(len(moves)), counts)]
    ends = np.cumsum(counts)                      # the last sample of every stretch
    stops = sorted({int(ends[p.segment[s]]) for p in paths.values() for s in p.stops})
    sampled = []
    for i, tip in enumerate(tips):
        if tip in paths:
            sampled.append(_resampled(paths[tip], counts))
        else:
            p, R = np.array(starts[i].translation, float), np.array(starts[i].rotation, float)
            sampled.append((np.repeat(p[None], size, 0), np.repeat(R[None], size, 0),
                            np.repeat(p[None], size - 1, 0), np.repeat(R[None], size - 1, 0)))
    progress = _shared_progress([(p, R) for p, R, _, _ in sampled], max_step, max_angle_step)
    out = tuple(_dense(p, R, mp, mR, segment, progress, stops, like=paths.get(tip))
                for tip, (p, R, mp, mR) in zip(tips, sampled))
    return TipsPath(tuple(tips), out, tuple(tip in paths for tip in tips))


def _resampled(path: DensePath, counts: np.ndarray):
    """(positions, rotations, mid positions, mid rotations) of `path` with counts[j] intervals toward target j."""
    own = np.bincount(path.segment[1:], minlength=len(counts))
    first = np.r_[0, np.cumsum(own)[:-1]]               # the sample before each stretch (its start)
    whole = np.concatenate([first[j] + (np.arange(1, counts[j] + 1) / counts[j]) * own[j] for j in range(len(counts))])
    halves = np.concatenate([first[j] + ((np.arange(counts[j]) + 0.5) / counts[j]) * own[j]
                             for j in range(len(counts))])
    p, R = _on_path(path, whole)
    mp, mR = _on_path(path, halves)
    return np.r_[path.positions[:1], p], np.concatenate([path.rotations[:1], R]), mp, mR


def _on_path(path: DensePath, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions and rotations at fractional sample indices u: the quadratic through sample, midpoint and next
    sample, and SLERP between the samples (the path as `deviation.py` reads it)."""
    i = np.minimum(np.floor(u).astype(int), path.size - 2)
    f = (u - i)[:, None]
    a, m, b = path.positions[i], path.mid_positions[i], path.positions[i + 1]
    positions = a + f * (4 * m - 3 * a - b) + f * f * (2 * a + 2 * b - 4 * m)
    return positions, slerp_batch(path.rotations[i], path.rotations[i + 1], f[:, 0])
