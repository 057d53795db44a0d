"""A motion program: MoveL / MoveJ / MoveC moves, each with its own speed, acceleration and zone.

The vocabulary follows industrial robot languages ("MoveL pick v100 fine; MoveJ approach v1000 z50"):
- MoveL: a straight line of the tool to a pose; MoveC: a circular arc through a via position to a pose;
- MoveJ: a straight line in joint space to joint values, or to a pose solved by IK from the current branch;
- zone: the corner blend radius [m] at the move's end; 0 = "fine", an exact stop at the target.
Every move starts where the previous one ended (the first where the arm is).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import PathInputError
from robokin_ros.core.scaling import scaling_problem, speed_problem
from robokin_ros.core.tips.held_object import Grasp

FINE = 0.0            # zone of an exact stop


class MoveKind(enum.Enum):
    """The three move types, named as in robot programs."""

    LINEAR = "MoveL"
    JOINT = "MoveJ"
    CIRCULAR = "MoveC"

    @property
    def cartesian(self) -> bool:
        """True for the moves whose tool path is prescribed (MoveL, MoveC)."""
        return self is not MoveKind.JOINT


@dataclass(frozen=True)
class TipTarget:
    """One tip's target in a bimanual move: `pose` (base frame) and, for a MoveC, the `via` position [m]."""

    tip: str
    pose: pin.SE3
    via: np.ndarray | None = None


@dataclass(frozen=True)
class Move:
    """One move of a program. Speeds of 0 mean "not set": the joint limits (times the fractions) alone decide.

    pose: the target tool pose, base frame (MoveL, MoveC, and MoveJ without `joints`).
    joints: MoveJ target joint positions in the robot's joint order [rad | m].
    via: MoveC via position, base frame [m] (the arc passes through it; its orientation is not used).
    speed, angular_speed: peak tool speed [m/s] and angular speed [rad/s] on this move; 0 = no tool limit.
    joint_speed, acceleration: fractions in (0, 1] of the joint velocity / acceleration limits; 0 = the program's
        (the rule of core/scaling.py).
    zone: blend radius [m] at the target, FINE (0) = exact stop.

    Robots with several tips (`core/program/bimanual.py`; one-tip robots refuse these fields when set):
    tip: the tip `pose` and `via` are for ("" = the plan's tip); the other tips hold their pose.
    targets: a bimanual MoveL / MoveC: one `TipTarget` per tip that moves (then `pose`, `via` and `tip` stay unset);
        the tips not named hold their pose; all reach their targets at the same time.
    carried: `pose` and `via` are the held object's (its frame, base frame): every tip follows the object rigidly,
        as grasped (`MotionProgram.grasp`).
    """

    kind: MoveKind
    pose: pin.SE3 | None = None
    joints: np.ndarray | None = None
    via: np.ndarray | None = None
    speed: float = 0.0
    angular_speed: float = 0.0
    joint_speed: float = 0.0
    acceleration: float = 0.0
    zone: float = FINE
    name: str = ""
    tip: str = ""
    targets: tuple[TipTarget, ...] = ()
    carried: bool = False

    @property
    def fine(self) -> bool:
        """True when the arm stops exactly at this move's target."""
        return self.zone <= 0.0

    def label(self, index: int) -> str:
        """How reports name the move: "3 MoveL pick"."""
        return f"{index} {self.kind.value}" + (f" {self.name}" if self.name else "")


class Approach(enum.IntEnum):
    """How a waypoint path begins; numbered as ExecuteCartesianPath's APPROACH_* constants.

    - PATH: the path starts at the current tool pose; the line to waypoints[0] is its first segment (blended there).
    - JOINT: the path starts at waypoints[0]; a synchronised joint-space move (the configured `joint_move_profile`)
      takes the arm there first, to the planner's `pose_solver` solution (the current branch).
    - LINEAR: the same with a straight tool line that ends at rest at waypoints[0].
    - REFUSE: the path starts at waypoints[0]; refused when the tool is not there.
    "Not there" means farther than the path tolerance (max_position_deviation, max_orientation_deviation); a tool
    that is there starts the path where it is, as PATH does.
    """

    PATH = 0
    JOINT = 1
    LINEAR = 2
    REFUSE = 3


@dataclass(frozen=True)
class WaypointPath:
    """What makes a program a waypoint path (an ExecuteCartesianPath goal's `waypoints`): its MoveL moves are one
    blended path with `blend_radius` at every corner, where an unblended corner stops only when it is sharp
    (`geometry.unstopped_turn_limit`), timed per rest-to-rest section under the request's scalings; with an
    `approach` other than PATH, moves[0] is the approach to waypoints[0] (MoveJ for JOINT, else MoveL)."""

    blend_radius: float
    approach: Approach = Approach.PATH


@dataclass(frozen=True)
class MotionProgram:
    """Moves in order; `velocity_scaling` / `acceleration_scaling` apply where a move sets no fraction; 0 = the
    planner's (path_ik_node's parameters of the same names), as core/scaling.py rules. `waypoint_path` is set for
    a waypoint path (`waypoint_program`), None for a motion program."""

    moves: tuple[Move, ...]
    velocity_scaling: float = 0.0
    acceleration_scaling: float = 0.0
    name: str = ""
    notes: tuple[str, ...] = field(default=())
    waypoint_path: WaypointPath | None = None
    grasp: Grasp | None = None      # the carried moves' object_T_tips; None = taken where a carried stretch starts

    def __len__(self) -> int:
        return len(self.moves)


def check_move(move: Move, index: int, joint_count: int) -> None:
    """PathInputError naming the move and the field when a move cannot be planned as given."""
    where = f"move {index} ({move.kind.value})"
    problems = [speed_problem(f"{where}: speed", move.speed, "m/s"),
                speed_problem(f"{where}: angular_speed", move.angular_speed, "rad/s")]
    problems += [scaling_problem(f"{where}: joint_speed", move.joint_speed, "the program's velocity_scaling"),
                 scaling_problem(f"{where}: acceleration", move.acceleration, "the program's acceleration_scaling")]
    problem = next((p for p in problems if p is not None), None)
    if problem is not None:
        raise PathInputError(problem, index)
    if not (np.isfinite(move.zone) and move.zone >= 0.0):
        raise PathInputError(f"{where}: zone={move.zone} must be a finite number >= 0 (0 = fine)", index)
    if move.kind is MoveKind.JOINT:
        if move.joints is None and move.pose is None:
            raise PathInputError(f"move {index} (MoveJ) needs joint positions or a pose", index)
        if move.joints is not None:
            q = np.asarray(move.joints, float)
            if q.shape != (joint_count,) or not np.isfinite(q).all():
                raise PathInputError(f"move {index} (MoveJ): joint positions {np.asarray(move.joints).tolist()} "
                                     f"must be {joint_count} finite numbers, one per joint", index)
        return
    if move.targets:
        return
    if move.pose is None:
        raise PathInputError(f"move {index} ({move.kind.value}) needs a target pose", index)
    if move.kind is MoveKind.CIRCULAR:
        via = None if move.via is None else np.asarray(move.via, float)
        if via is None or via.shape != (3,) or not np.isfinite(via).all():
            raise PathInputError(f"move {index} (MoveC) needs a via position of 3 finite numbers [m]", index)
    elif move.via is not None:
        raise PathInputError(f"move {index} (MoveL) has a via position; only MoveC passes through one", index)


def check_program(program: MotionProgram, joint_count: int) -> None:
    """PathInputError for an empty program, a bad move or bad default fractions."""
    if len(program.moves) == 0:
        raise PathInputError("the motion program has no moves")
    for what, value in (("velocity_scaling", program.velocity_scaling),
                        ("acceleration_scaling", program.acceleration_scaling)):
        problem = scaling_problem(f"program {what}", value, f"path_ik_node's {what} parameter")
        if problem is not None:
            raise PathInputError(problem)
    for i, move in enumerate(program.moves):
        check_move(move, i, joint_count)


def waypoint_program(waypoints, blend_radius: float, approach: Approach = Approach.PATH) -> MotionProgram:
    """A waypoint path as a program: one MoveL per waypoint (base frame poses) with `blend_radius` [m] as its zone,
    led by the approach to waypoints[0] (a MoveJ for Approach.JOINT, a MoveL for LINEAR and REFUSE)."""
    approach = Approach(approach)
    lead = [] if approach is Approach.PATH or len(waypoints) == 0 else \
        [Move(MoveKind.JOINT if approach is Approach.JOINT else MoveKind.LINEAR, pose=waypoints[0], name="approach")]
    moves = lead + [Move(MoveKind.LINEAR, pose=pose, zone=blend_radius) for pose in waypoints[len(lead):]]
    return MotionProgram(tuple(moves), waypoint_path=WaypointPath(blend_radius, approach))


def uses_tips(program: MotionProgram) -> bool:
    """True when a move names a tip, targets several tips or carries an object (the fields of several tips)."""
    return program.grasp is not None or any(m.tip or m.targets or m.carried for m in program.moves)


def check_tips(program: MotionProgram, tips: tuple[str, ...]) -> None:
    """PathInputError naming the move when a move's tip fields do not fit a robot with `tips`."""
    one = len(tips) == 1
    if program.grasp is not None and (one or len(program.grasp.object_T_tips) != len(tips)):
        raise PathInputError(f"the program's grasp holds {len(program.grasp.object_T_tips)} tip(s); the robot's tips "
                             f"are {list(tips)}" + (" (carrying an object needs several tips)" if one else ""))
    for i, move in enumerate(program.moves):
        where = f"move {move.label(i)}"
        named = [move.tip] if move.tip else []
        named += [t.tip for t in move.targets]
        unknown = [tip for tip in named if tip not in tips]
        if unknown:
            raise PathInputError(f"{where}: tip '{unknown[0]}' is not one of the robot's tips {list(tips)}", i)
        if one and (move.targets or move.carried):
            what = "a bimanual move (targets per tip)" if move.targets else "a carried-object move"
            raise PathInputError(f"{where}: {what} needs a robot with several tips; this robot has one: '{tips[0]}'",
                                 i)
        if not move.targets and not move.carried:
            continue
        if move.kind is MoveKind.JOINT:
            raise PathInputError(f"{where}: a MoveJ has no tip targets and carries nothing (give it joint values, "
                                 "or a pose and a tip)", i)
        if move.targets and (move.pose is not None or move.via is not None or move.tip or move.carried):
            raise PathInputError(f"{where}: a bimanual move gives every moving tip's target in `targets`; leave pose, "
                                 "via, tip and carried unset", i)
        if move.carried and move.tip:
            raise PathInputError(f"{where}: a carried-object move's pose is the object's, not tip '{move.tip}''s", i)
        repeated = sorted({t.tip for t in move.targets if [u.tip for u in move.targets].count(t.tip) > 1})
        if repeated:
            raise PathInputError(f"{where}: tips named more than once: {repeated}", i)
        for target in move.targets:
            _check_target(target, move.kind, where, i)


def _check_target(target: TipTarget, kind: MoveKind, where: str, index: int) -> None:
    if not isinstance(target.pose, pin.SE3):
        raise PathInputError(f"{where}: tip '{target.tip}' needs a target pose", index)
    via = None if target.via is None else np.asarray(target.via, float)
    if kind is MoveKind.CIRCULAR and (via is None or via.shape != (3,) or not np.isfinite(via).all()):
        raise PathInputError(f"{where}: tip '{target.tip}' of a MoveC needs a via position of 3 finite numbers [m]",
                             index)
    if kind is MoveKind.LINEAR and via is not None:
        raise PathInputError(f"{where}: tip '{target.tip}' has a via position; only MoveC passes through one", index)
