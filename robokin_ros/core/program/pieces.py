"""Solving a program's moves into dense joint pieces: one per group of consecutive Cartesian moves (one blended
path through the path IK), one per MoveJ (a joint-space line to joint values or to a pose by IK).

A MoveJ is a straight line in joint space, sampled every JOINT_SAMPLE_STEP so the zone search and the timing spline
see its shape. A piece that cannot be solved to its end comes back with its solved prefix and a `PieceFailure`
naming the move.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import EmptyPathError, PathInputError
from robokin_ros.core.path.surface import (
    DUPLICATE_TOLERANCE,
    AxisSelection,
    DensePath,
    PathIkSolver,
    PathStatus,
    PlanningBudget,
    build_path,
)
from robokin_ros.core.program.moves import MotionProgram, MoveKind


JOINT_SAMPLE_STEP = 0.01       # [rad | m] largest joint change between MoveJ samples


def joint_line(q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
    """Samples (K, n) of the straight joint-space line q0 -> q1, ends included, at most JOINT_SAMPLE_STEP apart."""
    count = max(1, int(np.ceil(float(np.abs(q1 - q0).max()) / JOINT_SAMPLE_STEP - 1e-9)))
    t = np.linspace(0.0, 1.0, count + 1)[:, None]
    return q0 + t * (q1 - q0)


@dataclass(frozen=True)
class Piece:
    """Dense joint samples of consecutive moves; sample 0 is the piece's start state."""

    positions: np.ndarray          # (K, n) [rad | m]
    labels: np.ndarray             # (K,) program index of the move each sample belongs to (its limits apply)
    tools: np.ndarray              # (K, 3) [m] tool positions, base frame
    path: DensePath | None = None  # the geometry, for Cartesian pieces
    blend_radii: dict | None = None  # program move index -> zone used at its end [m] (clamped zones are smaller)

    @property
    def cartesian(self) -> bool:
        """True when the tool path is prescribed (the samples follow `path`)."""
        return self.path is not None


@dataclass(frozen=True)
class PieceFailure:
    """Why a move could not be planned."""

    move: int
    status: PathStatus
    message: str


def groups(program: MotionProgram, run: list[int]) -> list[list[int]]:
    """The moves of a run grouped into pieces: consecutive Cartesian moves together, each MoveJ alone."""
    out: list[list[int]] = []
    for i in run:
        cartesian = program.moves[i].kind.cartesian
        if cartesian and out and program.moves[out[-1][-1]].kind.cartesian:
            out[-1].append(i)
        else:
            out.append([i])
    return out


def solve_cartesian(program: MotionProgram, moves: list[int], q0: np.ndarray, solver: PathIkSolver, c,
                    max_unstopped_turn: float, axes: AxisSelection,
                    budget: PlanningBudget) -> tuple[Piece | None, PieceFailure | None]:
    """One blended path through the targets of `moves` (MoveL lines, MoveC arcs) from the tool pose at q0."""
    R0, p0 = solver.fk(q0[None])
    targets = [program.moves[i] for i in moves]
    radii = [m.zone for m in targets[:-1]] + [0.0]           # the group's end is a zone with a MoveJ or a stop
    vias = [np.asarray(m.via, float) if m.kind is MoveKind.CIRCULAR else None for m in targets]
    try:
        path = build_path(pin.SE3(R0[0], p0[0]), [m.pose for m in targets], radii, arc_vias=vias,
                          max_step=c.sample_step, max_angle_step=c.sample_angle_step, clamp_blend=True,
                          max_unstopped_turn=max_unstopped_turn, budget=budget)
    except EmptyPathError:
        return None, None                                    # every target equals the start pose: no motion
    except PathInputError as err:
        index = moves[err.waypoint] if 0 <= err.waypoint < len(moves) else moves[0]
        raise PathInputError(f"{program.moves[index].label(index)}: {_without_waypoint(err)}", index) from None
    ik = solver.solve(path, q0, axes, None, budget)
    index = np.asarray(moves)
    labels = index[path.segment[:len(ik.positions)]]
    corners = np.array([m.pose.translation for m in targets])
    radii_used = _split_blends(path, index, labels, corners)
    positions = ik.positions
    piece = Piece(positions, labels, path.positions[:len(positions)],
                  path.section(0, len(positions) - 1), radii_used)
    if ik.success:
        return piece, None
    failed = int(index[path.segment[min(max(ik.failed_sample, 0), path.size - 1)]])
    failure = PieceFailure(failed, ik.status, f"{program.moves[failed].label(failed)}: {ik.message}")
    return (piece if len(positions) > 1 else None), failure


def _without_waypoint(err: PathInputError) -> str:
    """The geometry's message without its "waypoint i: " lead: i counts the group's targets, not the program's
    moves, and the move's own label replaces it."""
    text, lead = str(err), f"waypoint {err.waypoint}: "
    return text[len(lead):] if text.startswith(lead) else text


def zero_length_moves(program: MotionProgram, start: pin.SE3, fk) -> list[int]:
    """The MoveL / MoveJ whose target equals the previous move's target (the first move: the pose at the start),
    within the geometry's DUPLICATE_TOLERANCE: planned as no motion (or as the IK's residue of a few micrometres),
    and named in the plan's message. `fk(q (1, n)) -> (R, p)` gives a MoveJ's joint target as a pose."""
    found, before = [], start
    for i, move in enumerate(program.moves):
        if move.pose is not None:
            target = move.pose
        else:
            R, p = fk(np.asarray(move.joints, float)[None])
            target = pin.SE3(R[0], p[0])
        if move.kind is not MoveKind.CIRCULAR and \
                np.linalg.norm(target.translation - before.translation) < DUPLICATE_TOLERANCE and \
                np.linalg.norm(pin.log3(before.rotation.T @ target.rotation)) < DUPLICATE_TOLERANCE:
            found.append(i)
        before = target
    return found


def _split_blends(path: DensePath, moves: np.ndarray, labels: np.ndarray, corners: np.ndarray) -> dict:
    """Give the first half of each Cartesian corner blend to the incoming move (`labels` in place): a move ends in
    the middle of its zone, and each half runs under its own move's limits, so the speed changes across the zone
    as in robot controllers. `corners`: (len(moves), 3) target positions. Returns the zone used per move."""
    dropped = set(path.dropped_waypoints)
    kept = [i for i in range(len(moves)) if i not in dropped]
    used = {}
    for corner, radius in enumerate(path.blend_radii):
        waypoint = kept[corner]
        used[int(moves[waypoint])] = radius
        if radius <= 0.0:
            continue
        # the blend heads to the next waypoint and stays within the zone around the corner
        near = np.linalg.norm(path.positions[:len(labels)] - corners[waypoint], axis=1) <= radius * (1.0 + 1e-6)
        blend = np.flatnonzero(near & (path.segment[:len(labels)] == kept[corner + 1]))
        labels[blend[:len(blend) // 2]] = moves[waypoint]
    return used


def solve_joint_move(program: MotionProgram, index: int, q0: np.ndarray, robot, solver: PathIkSolver,
                     joint_target) -> tuple[Piece | None, PieceFailure | None]:
    """The joint-space line of a MoveJ from q0 to its joint target, or to its pose solved by
    `joint_target(pose, seed) -> PoseIkResult` (`MotionPlanner.joint_target`: q0's branch, or the nearest
    closed-form solution)."""
    move = program.moves[index]
    label = move.label(index)
    if move.joints is not None:
        target = np.asarray(move.joints, float)
        lower, upper = robot.limits.lower, robot.limits.upper
        outside = np.flatnonzero((target < lower) | (target > upper))
        if len(outside):
            j = int(outside[0])
            return None, PieceFailure(index, PathStatus.JOINT_LIMIT,
                                      f"{label}: {robot.joint_names[j]}={target[j]:.4f} is outside its limits "
                                      f"[{lower[j]:.4f}, {upper[j]:.4f}]")
    else:
        found = joint_target(move.pose, q0)
        if not found.success:
            return None, PieceFailure(index, PathStatus.SINGULARITY,
                                      f"{label}: no joint configuration on the current branch reaches the pose "
                                      f"({found.position_error * 1e3:.2f} mm / {found.orientation_error * 1e3:.2f} "
                                      "mrad remain): out of reach or blocked by a joint limit")
        target = found.positions
    if np.abs(target - q0).max() < 1e-12:
        return None, None
    positions = joint_line(q0, target)
    _, tools = solver.fk(positions)
    labels = np.full(len(positions), index)
    return Piece(positions, labels, tools), None
