"""Keyframes: recorded arm states, played back through the motion-program planner.

Playback is a motion program from the arm's current state through every keyframe: a MoveL to each keyframe's tool
pose (zones between keyframes, an exact stop at the last), so the tool runs on straight lines at the planner's
1 mm / 1 mrad accuracy with time-optimal timing. A MoveL the arm cannot follow (out of reach, a singularity, a
joint limit on the way) becomes a MoveJ to the keyframe's recorded joints, and the program is planned again; the
playback says which moves fell back and why. The played trajectory is sampled the way a JointTrajectoryController
does (cubic Hermite through positions and velocities).

On a robot with several tips a keyframe records every tip's pose, and its move is a bimanual MoveL: every tip on its
own straight line, all reaching the keyframe at the same time (core/program/bimanual.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.program.moves import FINE, MotionProgram, Move, MoveKind, TipTarget
from robokin_ros.core.program.planner import MotionPlanner
from robokin_ros.core.program.result import ProgramPlan
from robokin_ros.core.sim.trajectory_follower import TrajectoryFollower, TrajectoryPoints

DEFAULT_SPEED = 0.25      # [m/s] tool speed of the MoveL moves
DEFAULT_ZONE = 0.02       # [m] corner blend at every keyframe but the last


@dataclass(frozen=True)
class Keyframe:
    """A recorded state: the joints and the tool pose they give (base frame)."""

    positions: np.ndarray      # (n,) [rad | m]
    tool_pose: pin.SE3
    tips: tuple[tuple[str, pin.SE3], ...] = ()      # several tips: (tip, pose) each, the first tip's included

    @property
    def shown_poses(self) -> tuple[pin.SE3, ...]:
        """The frames the scene draws for it: the tool, or every tip."""
        return tuple(pose for _, pose in self.tips) if self.tips else (self.tool_pose,)


@dataclass(frozen=True)
class Playback:
    """A planned playback: the trajectory, the move types used and what fell back to MoveJ."""

    plan: ProgramPlan
    kinds: tuple[str, ...]          # "MoveL" / "MoveJ" per keyframe
    fallbacks: tuple[str, ...]      # one sentence per MoveL replaced by a MoveJ
    follower: TrajectoryFollower

    @property
    def duration(self) -> float:
        """[s]"""
        return self.plan.cycle_time

    def positions_at(self, t: float) -> np.ndarray:
        """(n,) joint positions `t` [s] into the playback (held at the end)."""
        return self.follower.sample(t)

    def summary(self) -> str:
        text = f"{len(self.kinds)} moves ({', '.join(self.kinds)}), {self.duration:.2f} s"
        return text + "".join(f"; {f}" for f in self.fallbacks)


class KeyframeList:
    """Keyframes in recording order."""

    def __init__(self) -> None:
        self.frames: list[Keyframe] = []

    def __len__(self) -> int:
        return len(self.frames)

    def record(self, positions: npt.ArrayLike, tool_pose: pin.SE3,
               tips: tuple[tuple[str, pin.SE3], ...] = ()) -> Keyframe:
        frame = Keyframe(np.array(positions, float), tool_pose.copy(), tuple((tip, pose.copy()) for tip, pose in tips))
        self.frames.append(frame)
        return frame

    def clear(self) -> None:
        self.frames.clear()


def _program(frames: list[Keyframe], joint_moves: set[int], speed: float, zone: float) -> MotionProgram:
    last = len(frames) - 1
    moves = []
    for i, frame in enumerate(frames):
        blend = FINE if i == last else zone
        if i in joint_moves:
            moves.append(Move(MoveKind.JOINT, joints=frame.positions, zone=blend, name=f"keyframe {i + 1}"))
        elif frame.tips:
            moves.append(Move(MoveKind.LINEAR, targets=tuple(TipTarget(tip, pose) for tip, pose in frame.tips),
                              speed=speed, zone=blend, name=f"keyframe {i + 1}"))
        else:
            moves.append(Move(MoveKind.LINEAR, pose=frame.tool_pose, speed=speed, zone=blend,
                              name=f"keyframe {i + 1}"))
    return MotionProgram(tuple(moves), name="keyframes")


def plan_playback(planner: MotionPlanner, start_positions: npt.ArrayLike, frames: list[Keyframe],
                  speed: float = DEFAULT_SPEED, zone: float = DEFAULT_ZONE) -> Playback:
    """Plan a playback from `start_positions` through `frames` (MoveL, MoveJ where a line fails).

    Raises:
        InvalidInputError: no keyframes, or a plan that fails even with MoveJ moves (the message says why).
    """
    if not frames:
        raise InvalidInputError("no keyframes to play: record some first (K)")
    start = np.asarray(start_positions, float)
    joint_moves: set[int] = set()
    fallbacks: list[str] = []
    while True:
        plan = planner.plan(_program(frames, joint_moves, speed, zone), start)
        if plan.success:
            break
        failed = plan.failed_move
        if failed < 0 or failed in joint_moves:
            raise InvalidInputError(f"the keyframes cannot be played: {plan.message}")
        joint_moves.add(failed)
        fallbacks.append(f"keyframe {failed + 1} as MoveJ ({plan.message})")
    trajectory = plan.trajectory
    follower = TrajectoryFollower(TrajectoryPoints(trajectory.times, trajectory.positions, trajectory.velocities),
                                  trajectory.positions[0], trajectory.velocities[0])
    kinds = tuple("MoveJ" if i in joint_moves else "MoveL" for i in range(len(frames)))
    return Playback(plan, kinds, tuple(fallbacks), follower)
