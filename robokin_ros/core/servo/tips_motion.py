"""The command of a robot with several tips: each tip's latest twist or pose target, or the held object's twist,
turned each tick into one stacked task (tip_task.py) for the mode `tips.mode`.

Modes (the rows of the stacked task, all from the commanded state, like the rest of the servo):
- independent: six rows per tip. A tip with a fresh twist (younger than `incoming_command_timeout`) or a pending pose
  target follows it; the others get zero velocity, so they hold still instead of drifting through the null space
  of the moving tip. A joint shared by several tips (a torso) serves all their rows in the one solve: the status
  names it, and names a tip whose twist the solve could not give it (`tips.conflict_tolerance`).
- coordinated: one twist of an object held by every tip. The object frame is fixed in the hands on the first tick
  of a new object motion (`held_object.take_grasp`: the tips' centroid, base axes) and rides on the first tip. Rows:
  each other tip relative to the first with -`tips.hold_gain` times its drift from the grasp, so their relative
  poses stay fixed (the grasp rows), then the object origin's point on the first tip with the object twist (about
  the object origin, in the axes of the command's frame). The grasp rows have priority (`StackedTask.primary_rows`,
  `dls.prioritized_dls_into`): the object's rows are solved in their null space, so near a singularity the damping
  slows or deflects the object, not the grasp; where the acceleration window or a position bound clips the
  velocity, the change is solved again with both levels inside the window (`velocity_ik._primary_in_window`). Inside
  the damped zone the object's command itself slows, by (sigma_min / singularity_sigma_threshold) ** 2 (`_keep_grasp`):
  the fast, quickly turning joint motion the prioritized solve needs there is what the acceleration windows clipped.
  A box turned at 0.5 rad/s about z into a singularity: grasp drift 0.04 mm / 0.09 mrad (0.46 mm / 1.4 mrad without
  the slowing, which then ran on to a joint's limit margin), where one damped solve of every row broke it by 3.5 mm
  (test_grasp_priority); the status gives the object's share of its commanded twist. Far from singularities (no
  damping) the result is the same as one solve of every row.
- relative: a tip's twist is its motion relative to the reference tip (`tips.reference_tip`), in that tip's axes;
  rows `held_object.relative_jacobian`. The reference tip holds its pose in the world (feedback on the pose it had
  when it last stopped) unless it has its own fresh twist (base axes, as in independent mode), which it then
  follows and carries the other tips along. A tip without a fresh relative twist keeps its pose relative to the
  reference (feedback too).

Staleness: the servo's own rule (no tip fresh for `incoming_command_timeout`: ramp to rest, hold) applies to the
command as a whole; a tip's own freshness is its receive time against the tick's time.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import ConfigError, InvalidInputError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.commands import TrackedCommand, TwistConverter, TwistMotion
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.pose_command import PoseMotion
from robokin_ros.core.servo.pose_tracking import PoseTarget, PoseTracker
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.tip_task import (
    HeldObjectAssembly,
    PointBlock,
    RelativeBlock,
    StackedTask,
    TipBlock,
    TipKinematics,
    angular_rows,
    stacked_task,
)
from robokin_ros.core.servo.types import TwistCommand
from robokin_ros.core.tips.held_object import relative_error_into, take_grasp

_SINGULAR = (ServoStatus.DECELERATE_FOR_APPROACHING_SINGULARITY, ServoStatus.HALT_FOR_SINGULARITY,
             ServoStatus.DECELERATE_FOR_LEAVING_SINGULARITY)
_ZERO = np.zeros(6)
_MOVED = 1e-9           # [rad/s | m/s] a shared joint moving slower than this is taken as still
GRASP_RECOVERY_TICKS = 50   # ticks for a held object slowed to keep the grasp to come back to full speed
APPROACH_EXPONENT = 2       # inside the damped zone the held object's twist scales by (sigma_min / threshold) ** this
# coordinated mode solves the grasp rows first (see the module docstring); False gives one damped solve of every row,
# the control against which test_grasp_priority measures what the priority keeps
GRASP_PRIORITY = True


def check_tips_config(robot: RobotModel, config: ServoConfig) -> None:
    """Raises ConfigError when `tips.*` does not fit the robot: a mode other than independent, or a reference tip,
    on a robot with one tip; a reference tip that is not one of its tips."""
    tips = config.tips
    problems = []
    if len(robot.tip_frames) == 1:
        if tips.mode != "independent":
            problems.append(f"tips.mode='{tips.mode}' needs a robot with several tips; {robot.name or 'this robot'} "
                            f"has one ({robot.tip_frame}): use 'independent'")
    if tips.reference_tip and tips.reference_tip not in robot.tip_frames:
        problems.append(f"tips.reference_tip='{tips.reference_tip}' is not a tip of the robot: "
                        f"{list(robot.tip_frames)}")
    if problems:
        raise ConfigError(problems, "tips parameters")


def tip_index(robot: RobotModel, tip: str, what: str) -> int:
    """The index of tip `tip` in `robot.tip_frames` ("" = the first); InvalidInputError naming the tips if unknown."""
    if not tip:
        return 0
    try:
        return robot.tip_frames.index(tip)
    except ValueError:
        raise InvalidInputError(f"{what} names tip '{tip}', which is not a tip of the robot: "
                                f"{list(robot.tip_frames)}") from None


def linear_speed(twist: np.ndarray) -> float:
    """[m/s] the size of a twist's linear part."""
    return math.sqrt(twist[0] * twist[0] + twist[1] * twist[1] + twist[2] * twist[2])


def hold_velocity(base_T_tip: pin.SE3, base_T_held: pin.SE3, gain: float) -> np.ndarray:
    """(6,) the tip twist (base axes) that takes it back to `base_T_held` at rate `gain` [1/s]."""
    error = np.concatenate((base_T_tip.translation - base_T_held.translation,
                            pin.log3(base_T_tip.rotation @ base_T_held.rotation.T)))
    return -gain * error


def hold_relative_velocity(base_T_a: pin.SE3, base_T_b: pin.SE3, a_T_b_held: pin.SE3, gain: float) -> np.ndarray:
    """(6,) the relative-row velocity that takes b back to its held pose in a's frame at rate `gain` [1/s]
    (-gain times `held_object.relative_pose_error`, by its compiled twin)."""
    error = np.empty(6)
    relative_error_into(base_T_a.rotation, base_T_a.translation, base_T_b.rotation, base_T_b.translation,
                        a_T_b_held.rotation, a_T_b_held.translation, error)
    error *= -gain
    return error


class TipsReport(NamedTuple):
    """Which tip limited the last tick's motion (the servo's `tips_report`)."""

    mode: str
    moving: tuple[str, ...]             # tips (or "object") with a fresh command
    singular_tip: str                   # the tip whose rows are nearest a singularity when the solve was damped
    conflicting_tips: tuple[str, ...]   # tips the solve could not give their twist (beyond conflict_tolerance)
    shared_joints: tuple[str, ...]      # joints serving several tips that moved this tick
    residuals: tuple[float, ...]        # [m/s] per tip (independent mode): |its rows' velocity - its twist|


class TipTwistMotion(TwistMotion):
    """A twist of one tip (`tip_id`), or of a point (`base_p_point`, the held object's origin: set each tick)."""

    tip_id: int | None = None

    def twist_at(self, positions: np.ndarray, base_p_point: np.ndarray | None = None) -> np.ndarray:
        """(6,) the twist of the tip origin, or of `base_p_point` (3,), in base axes."""
        converter: TwistConverter = self._converter
        return converter.to_tool_twist_base(positions, self._si, self._frame, self._about_tool, self.tip_id,
                                            base_p_point)

    def si_twist(self) -> np.ndarray:
        """(6,) the command in SI units, in the axes it was given in."""
        return self._si


class TipsMotion(TrackedCommand):
    """The servo's command on a robot with several tips (see the module docstring). One per servo: it keeps the
    grasp and the held poses while the mode lasts; `reset` forgets them when another command takes over."""

    def __init__(self, robot: RobotModel, converter: TwistConverter, config: ServoConfig) -> None:
        check_tips_config(robot, config)
        self._robot, self._converter = robot, converter
        self._kinematics = TipKinematics(robot)
        self._k = len(robot.tip_frames)
        self._trackers = tuple(PoseTracker(robot, config, tip_id) for tip_id in robot.tip_frame_ids)
        chains = [set(int(j) for j in indices) for indices in robot.tip_joint_indices]
        self._shared = np.array(sorted(j for j in range(robot.n) if sum(j in chain for chain in chains) > 1), int)
        self._mode, self._reference = config.tips.mode, 0
        self.ik = None          # the servo's VelocityIk (the servo sets it): its unlimited velocities judge conflicts
        self._moving: tuple[str, ...] = ()
        self._tip_blocks = tuple(TipBlock(i) for i in range(self._k))
        self.reset()
        self.update_config(config)

    # ---- inputs ---------------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget every tip's command, the grasp and the held poses."""
        self._inputs: list[TrackedCommand | None] = [None] * self._k
        self._object: TipTwistMotion | None = None
        self._grasp: HeldObjectAssembly | None = None      # the held object's task while this grasp lasts
        self._object_scale = 1.0               # the held object's speed share (see _keep_grasp)
        self._approach_scale = 1.0             # the held object's speed share near a singularity (see _keep_grasp)
        self._applied_scale = 1.0              # the product of the two, applied to the last task's object rows
        self._held: dict[tuple, pin.SE3] = {}
        self.report = TipsReport(self._mode, (), "", (), (), ())
        self._task: StackedTask | None = None
        for tracker in self._trackers:
            tracker.clear()

    def update_config(self, config: ServoConfig) -> bool:
        tips = config.tips
        reference = self._robot.tip_frames.index(tips.reference_tip) if tips.reference_tip else 0
        if tips.mode != self._mode or reference != self._reference:
            self._mode = tips.mode          # a new mode or reference: the held poses and the grasp are retaken
            self.reset()
        self._gain, self._timeout = tips.hold_gain, config.incoming_command_timeout
        if self._grasp is not None:
            self._grasp.set_gain(tips.hold_gain)
        self._tolerance = tips.conflict_tolerance
        self._sigma = config.singularity_sigma_threshold
        self._reference = reference
        for tracker in self._trackers:
            tracker.update_config(config)
        for motion in (*self._inputs, self._object):
            if motion is not None:
                motion.update_config(config)
        return True

    def set_twist(self, command: TwistCommand, base_T_frame: pin.SE3 | None, config: ServoConfig) -> None:
        """Store a tip's twist, or the object's in coordinated mode; raises before anything changes."""
        if self._mode == "coordinated":
            if command.tip:
                raise InvalidInputError(f"tips.mode is coordinated: a twist moves the held object and names no tip "
                                        f"(got tip '{command.tip}')")
            motion = TipTwistMotion.resolve(command, base_T_frame, self._robot, self._converter, config)
            self._object = motion
        else:
            index = tip_index(self._robot, command.tip, "twist command")
            motion = TipTwistMotion.resolve(command, base_T_frame, self._robot, self._converter, config)
            motion.tip_id = self._robot.tip_frame_ids[index]
            if self._mode == "relative" and index != self._reference:
                reference = self._robot.tip_frames[self._reference]
                if command.frame not in ("", reference) or base_T_frame is not None:
                    raise InvalidInputError(f"tips.mode is relative: the twist of {self._robot.tip_frames[index]} is "
                                            f"given in the reference tip's axes; its frame must be '' or "
                                            f"'{reference}' (got '{command.frame}')")
            self._inputs[index] = motion
            self._trackers[index].clear()
        self.source, self.received_at = command, command.received_at

    def set_pose_target(self, target: PoseTarget, base_T_frame: pin.SE3 | None, place) -> None:
        """Store a pose target of one tip (`target.tip`); the other tips hold (independent mode only)."""
        if self._mode != "independent":
            raise InvalidInputError(f"tips.mode is {self._mode}: pose targets per tip need the independent mode")
        index = tip_index(self._robot, target.tip, "pose target")
        self._inputs[index] = PoseMotion.resolve(target, base_T_frame, self._robot, self._trackers[index], place)
        self.source, self.received_at = target, target.received_at

    # ---- per tick -------------------------------------------------------------------------------
    def _fresh(self, motion: TrackedCommand | None, now: float) -> bool:
        return motion is not None and (now - motion.received_at <= self._timeout or motion.pending(now))

    def pending(self, now: float) -> bool:
        return any(motion is not None and motion.pending(now) for motion in self._inputs)

    def twist(self, positions: np.ndarray, now: float) -> StackedTask:
        # a pose target halts only the blocking joint (PoseMotion.halt_all, as MoveIt's POSE mode); twists as configured
        if self._mode == "coordinated":             # (pose targets need the independent mode)
            self.halt_all = None
            task = self._coordinated(positions, now)
        else:
            self.halt_all = False if any(isinstance(motion, PoseMotion) and self._fresh(motion, now)
                                         for motion in self._inputs) else None
            jacobians, poses = self._kinematics(positions)
            if self._mode == "relative":
                task = self._relative(positions, now, jacobians, poses)
            else:
                task = self._independent(positions, now, jacobians, poses)
        self._task = task
        return task

    def _independent(self, positions, now, jacobians, poses) -> StackedTask:
        velocities, speed, moving = [], 0.0, []
        for i, motion in enumerate(self._inputs):
            if self._fresh(motion, now):
                velocity = motion.twist_at(positions) if isinstance(motion, TipTwistMotion) \
                    else motion.twist(positions, now)
                moving.append(self._robot.tip_frames[i])
                speed = max(speed, linear_speed(velocity))
            else:
                velocity = _ZERO
            velocities.append(velocity)
        self._moving = tuple(moving)
        return stacked_task(self._kinematics, self._tip_blocks, velocities, jacobians, poses, speed)

    def _coordinated(self, positions, now) -> StackedTask:
        if self._grasp is None:
            poses = self._kinematics(positions)[1]
            grasp = take_grasp(poses)[1]
            # the blocks and the held relative poses, fixed while this grasp lasts
            self._grasp = HeldObjectAssembly(
                self._kinematics, grasp.object_T_tips[0].inverse().translation,
                tuple(grasp.object_T_tips[0].actInv(grasp.object_T_tips[j]) for j in range(1, self._k)), self._gain)
        assembly = self._grasp
        A, b = assembly(positions)
        motion = self._object
        fresh = self._fresh(motion, now)
        velocity = motion.twist_at(positions, assembly.origin) if fresh else _ZERO
        scale = self._applied_scale = self._object_scale * self._approach_scale
        if scale < 1.0:
            velocity = velocity * scale
        self._moving = ("object",) if fresh else ()
        b[-6:] = velocity
        return StackedTask(A, b, angular_rows(self._k), assembly.jacobian_at, assembly.blocks, linear_speed(velocity),
                           6 * (self._k - 1) if GRASP_PRIORITY else 0)

    def _relative(self, positions, now, jacobians, poses) -> StackedTask:
        r, held, moving = self._reference, self._held, []
        own = self._inputs[r]
        if self._fresh(own, now):
            held.pop(("tip", r), None)
            reference_velocity = own.twist_at(positions)
            moving.append(self._robot.tip_frames[r])
        else:
            reference_velocity = hold_velocity(poses[r], held.setdefault(("tip", r), poses[r]), self._gain)
        velocities, speed = [reference_velocity], linear_speed(reference_velocity)
        R = poses[r].rotation
        for b in range(self._k):
            if b == r:
                continue
            motion = self._inputs[b]
            if self._fresh(motion, now):
                held.pop(("relative", b), None)
                si = motion.si_twist()
                velocity = np.concatenate((R @ si[:3], R @ si[3:]))
                moving.append(self._robot.tip_frames[b])
            else:
                a_T_b = held.setdefault(("relative", b), poses[r].actInv(poses[b]))
                velocity = hold_relative_velocity(poses[r], poses[b], a_T_b, self._gain)
            velocities.append(velocity)
            speed = max(speed, linear_speed(velocity))
        self._moving = tuple(moving)
        blocks = (TipBlock(r), *(RelativeBlock(r, b) for b in range(self._k) if b != r))
        return stacked_task(self._kinematics, blocks, velocities, jacobians, poses, speed)

    # ---- after the IK ---------------------------------------------------------------------------
    def outcome(self, result) -> tuple[ServoStatus | None, str | None]:
        """The IK's status with the tip that limited it named: the tip nearest a singularity (when damped), the tips
        the stacked solve could not give their twist and the shared joints (independent mode); a pose target's
        progress."""
        task, notes = self._task, []
        unlimited = None if self.ik is None else self.ik.unlimited_velocities
        if self._mode == "coordinated" and task is not None and unlimited is not None:
            note = self._keep_grasp(task, unlimited, result.damping, result.sigma_min)
            if note:
                notes.append(note)
        singular = conflicting = ""
        shared: tuple[str, ...] = ()
        residuals: tuple[float, ...] = ()
        if task is not None:
            if result.damping > 0.0 or result.status in _SINGULAR:
                singular, sigma = self._singular_block(task)
                notes.append(f"nearest the singularity: {singular} (sigma_min {sigma:.3g})")
            if self._mode == "independent" and unlimited is not None:
                residuals = tuple(self._residual(task, i, unlimited) for i in range(self._k))
                conflicting = tuple(self._robot.tip_frames[i] for i in range(self._k)
                                    if residuals[i] > self._tolerance)
                moved = [j for j in self._shared if abs(unlimited[j]) > _MOVED]
                shared = tuple(self._robot.joint_names[j] for j in moved)
                if conflicting:
                    text = ", ".join(f"{self._robot.tip_frames[i]}'s twist by {1e3 * residuals[i]:.1f} mm/s"
                                     for i in range(self._k) if residuals[i] > self._tolerance)
                    over = f" (shared joints moving: {', '.join(shared)})" if shared else ""
                    notes.append(f"the stacked solve misses {text}{over}")
                elif shared and len(self._moving) < self._k:
                    notes.append(f"shared joint {', '.join(shared)} moves every tip: the still tips compensate")
        self.report = TipsReport(self._mode, self._moving, singular, tuple(conflicting or ()),
                                 shared, residuals)
        status, message = result.status, result.message
        pose = [(i, motion) for i, motion in enumerate(self._inputs) if isinstance(motion, PoseMotion)]
        if pose:
            i, motion = pose[-1]
            status, message = motion.outcome(result)
            message = f"{self._robot.tip_frames[i]}: {message}"
        if not notes and not pose:
            return None, None
        return status, "; ".join([message, *notes])

    def window_grid(self, positions: np.ndarray, velocities: np.ndarray, grid: np.ndarray, amax: np.ndarray,
                    dt: float) -> np.ndarray:
        """The shortest of the grids the tips' pending pose targets ask for (`PoseMotion.window_grid`: a window a
        stalled servo leaves must not carry a tip past its target), else `grid`."""
        for motion in self._inputs:
            if isinstance(motion, PoseMotion):
                candidate = motion.window_grid(positions, velocities, grid, amax, dt)
                if candidate[-1] < grid[-1]:
                    grid = candidate
        return grid

    def _keep_grasp(self, task: StackedTask, velocities: np.ndarray, damping: float, sigma_min: float) -> str:
        """The held object's speed near a singularity, "" or a note for the status.

        With the grasp rows first (GRASP_PRIORITY) the damping slows the object's rows only. Inside the damped zone
        the object's command is slowed too, on the next tick, by (sigma_min / singularity_sigma_threshold) **
        APPROACH_EXPONENT (1 at the zone's edge, so continuous): near the singularity the prioritized solve turns
        the joints fast and the direction it needs turns quickly, and the acceleration windows that then clip the
        velocity cost the grasp (turned at 0.5 rad/s into the singularity the grasp drifted 0.46 mm / 1.4 mrad
        without this, 0.04 mm / 0.09 mrad with it: test_grasp_priority). The note gives the share of the commanded
        twist the object gets (both slowings). Where the grasp rows themselves miss their velocity (their own
        singularity, joints held at bounds, or without the priority) the object's command slows in proportion for
        the next ticks and recovers over GRASP_RECOVERY_TICKS once they can: that limits the drift but does not
        prevent it (the joints brake within their acceleration limits)."""
        self._approach_scale = min(1.0, sigma_min / self._sigma) ** APPROACH_EXPONENT if damping > 0.0 else 1.0
        grasp = 6 * (self._k - 1)
        miss = float(np.linalg.norm(task.jacobian[:grasp] @ velocities - task.velocity[:grasp])) \
            if damping > 0.0 else 0.0
        if miss > self._tolerance:
            self._object_scale *= self._tolerance / miss
        elif self._object_scale < 1.0:
            self._object_scale = min(1.0, self._object_scale + 1.0 / GRASP_RECOVERY_TICKS)
        if self._object_scale < 1.0:
            return (f"the held object slowed to {100.0 * self._object_scale * self._approach_scale:.0f} %: near the "
                    "singularity the damped solve cannot hold the grasp at speed")
        wanted = task.velocity[grasp:]
        size = float(wanted @ wanted)
        if damping > 0.0 and size > 0.0:
            share = self._applied_scale * float(wanted @ (task.jacobian[grasp:] @ velocities)) / size
            if share < 1.0 - 1e-3:
                return (f"the held object slowed to {100.0 * max(share, 0.0):.0f} % near the singularity; "
                        "the grasp holds")
        return ""

    def idle(self) -> tuple[ServoStatus, str] | None:
        pose = [(i, motion) for i, motion in enumerate(self._inputs) if isinstance(motion, PoseMotion)]
        if pose and all(motion.reached for _, motion in pose):
            i, motion = pose[-1]
            status, text = motion.idle()
            return status, f"{self._robot.tip_frames[i]}: {text}"
        return None

    def _singular_block(self, task: StackedTask) -> tuple[str, float]:
        """(name, sigma_min) of the block of the stacked task with the smallest singular value."""
        sigmas = [np.linalg.svd(task.jacobian[6 * i:6 * i + 6], compute_uv=False)[-1]
                  for i in range(len(task.blocks))]
        i = int(np.argmin(sigmas))
        return self._block_name(task.blocks[i]), float(sigmas[i])

    def _block_name(self, block) -> str:
        tips = self._robot.tip_frames
        if isinstance(block, TipBlock):
            return tips[block.tip]
        if isinstance(block, PointBlock):
            return f"the held object on {tips[block.tip]}"
        return f"{tips[block.moving]} relative to {tips[block.reference]}"

    @staticmethod
    def _residual(task: StackedTask, i: int, velocities: np.ndarray) -> float:
        """How far block i's velocity under `velocities` is from its twist: the norm of the six-row difference
        [m/s and rad/s together]."""
        rows = slice(6 * i, 6 * i + 6)
        return float(np.linalg.norm(task.jacobian[rows] @ velocities - task.velocity[rows]))
