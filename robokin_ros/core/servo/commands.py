"""The commands the servo tracks: each resolves its frame once, on arrival, and answers "what motion now".

One interface for every kind (`TrackedCommand`): the servo holds one active command and asks it, each tick, for
the tool twist to follow (base axes, about the tool origin) or, for a joint jog, for no twist and its joint
velocities; after the IK, for the status it reports. A command that is not refused on arrival is stored whole:
a bad one raises before anything changes, and the previous one keeps ageing.

The pose target lives in pose_command.py (it also shortens the window near its goal).

Twists become the tool origin's twist in base axes here (`command_to_si` for units, `TwistConverter` for frame
rotation and reference point): a twist command and hand guiding both do. Convention (stated once here: frames and
reference points are where twist commands most often go wrong):
- the command's vectors are expressed in the axes of its `frame` ("" = the base frame);
- `apply_twist_about_tool=True`: the command is the tool origin's velocity: linear = how fast the tool
  origin moves, angular = rotation about the tool origin. Only the axes change;
- `apply_twist_about_tool=False`: the command is a spatial twist about the origin of `frame`: linear is
  the velocity of the rigidly attached point at that origin, so the tool origin moves with
  v_tool = v + w x (p_tool - p_frame) (all in base axes). With frame = base this is the classic spatial
  twist; with frame = tool it equals the first convention.
"""
from __future__ import annotations

import math

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import InvalidInputError, RobokinError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.commanded_state import CommandedState
from robokin_ros.core.servo.config import SCALING_OVERRIDE_THRESHOLD, ServoConfig
from robokin_ros.core.servo.guiding_input import GuidingInput
from robokin_ros.core.servo.joint_jog import JointJogCommand, chain_velocities
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.tip_task import StackedTask
from robokin_ros.core.servo.types import TwistCommand, VelocityIkResult
from robokin_ros.core.servo.velocity_ik import VelocityIk
from robokin_ros.core.validation import check_time, check_vector


# No arm's tool moves faster than this; a speed_units command beyond it is a unit or sign-up error, and
# accepting it would only overflow the arithmetic downstream.
MAX_LINEAR_SPEED = 10.0      # [m/s]
MAX_ANGULAR_SPEED = 20.0     # [rad/s]


def command_to_si(linear: np.ndarray, angular: np.ndarray, config: ServoConfig) -> np.ndarray:
    """(6,) [v; w] in SI units [m/s, rad/s], still in the command frame's axes.

    `unitless` commands are clipped to [-1, 1] per component, then scaled by `scale.linear` and
    `scale.rotational`; `speed_units` commands are taken as SI.
    """
    twist = np.empty(6)
    if config.command_in_type == "unitless":
        twist[:3] = np.clip(linear, -1.0, 1.0) * config.scale.linear
        twist[3:] = np.clip(angular, -1.0, 1.0) * config.scale.rotational
    else:
        twist[:3] = linear
        twist[3:] = angular
        # components first: squaring a 1e308 entry inside a norm would overflow
        v = float(np.linalg.norm(twist[:3])) if np.abs(twist[:3]).max() <= MAX_LINEAR_SPEED else np.inf
        w = float(np.linalg.norm(twist[3:])) if np.abs(twist[3:]).max() <= MAX_ANGULAR_SPEED else np.inf
        if v > MAX_LINEAR_SPEED or w > MAX_ANGULAR_SPEED:
            raise InvalidInputError(f"speed_units twist of {v:.3g} m/s, {w:.3g} rad/s exceeds what any arm can "
                                    f"do ({MAX_LINEAR_SPEED} m/s, {MAX_ANGULAR_SPEED} rad/s): is command_in_type "
                                    "right?")
    override = config.override_velocity_scaling_factor
    if override >= SCALING_OVERRIDE_THRESHOLD:
        # MoveIt Servo multiplies its joint velocities by the override; scaling the twist before the IK does the
        # same (velocity limits then scale the rest uniformly, as MoveIt takes the smaller of the two factors)
        twist *= override
    return twist


class TwistConverter:
    """Converts SI twists given in any model frame into the tool origin's twist in base axes."""

    def __init__(self, robot: RobotModel) -> None:
        self.robot = robot
        self._data = robot.model.createData()        # own data: never disturbs the IK's Jacobian cache
        self._base_T_world = robot.world_T_base.inverse()

    def to_tool_twist_base(self, positions: np.ndarray, twist: np.ndarray, frame_id: int | pin.SE3 | None,
                           about_tool: bool, tip_id: int | None = None, base_p_point: np.ndarray | None = None
                           ) -> np.ndarray:
        """The tool origin's twist (6,) in base axes [m/s, rad/s].

        Args:
            positions: (n,) joint positions where the frames are evaluated.
            twist: (6,) [v; w] in the axes of `frame_id` (None = the base frame) [m/s, rad/s].
            frame_id: the command frame (None or the base frame id = base), or `base_T_frame` of a frame
                outside the model (looked up in TF): it is then treated exactly as a model frame at that pose.
            about_tool: True = `twist` is the tool origin's velocity; False = spatial twist about the frame's
                origin (see the module docstring).
            tip_id: the tip frame moved (default the robot's tip: another tip of a robot with several).
            base_p_point: (3,) the point moved instead of a tip (the held object's origin), in base coordinates.
        """
        robot = self.robot
        external = isinstance(frame_id, pin.SE3)
        is_base = not external and (frame_id is None or frame_id == robot.base_frame_id)
        if is_base and about_tool:
            return twist
        model, data = robot.model, self._data
        pin.forwardKinematics(model, data, robot.to_pinocchio_q(positions))
        if is_base:
            base_R_frame, base_p_frame = np.eye(3), np.zeros(3)
        elif external:
            base_R_frame, base_p_frame = frame_id.rotation, frame_id.translation
        else:
            base_T_frame = self._base_T_world * pin.updateFramePlacement(model, data, frame_id)
            base_R_frame, base_p_frame = base_T_frame.rotation, base_T_frame.translation
        v = base_R_frame @ twist[:3]                     # (3,) base axes
        w = base_R_frame @ twist[3:]                     # (3,) base axes
        if not about_tool:
            if base_p_point is None:
                tip = robot.tip_frame_id if tip_id is None else tip_id
                base_p_tool = self._base_T_world.act(pin.updateFramePlacement(model, data, tip).translation)
            else:
                base_p_tool = base_p_point
            v = v + np.cross(w, base_p_tool - base_p_frame)
        return np.concatenate((v, w))


class TrackedCommand:
    """What every command answers; the defaults are a plain command's (a twist's)."""

    source: object = None               # the input it came from: its identity keeps its running age (servo)
    received_at: float = 0.0            # [s] on the servo's clock
    times_out = True                    # stale after `incoming_command_timeout` (unless `pending`)
    halt_all: bool | None = None        # the IK's halt_all (None: the configured halt_all_joints_in_cartesian_mode)
    joint_velocities: np.ndarray | None = None      # (n,) a joint jog's velocities, chain order, SI
    halted = ""                         # why it cannot move this tick (set by `twist`; "" = it can)
    stopped = ""                        # why it has ended ("" = it has not)

    def twist(self, positions: np.ndarray, now: float) -> np.ndarray | None:
        """(6,) the tool origin's twist [m/s, rad/s] in base axes at positions (n,) and `now` [s]; None: follow
        `joint_velocities` instead."""
        raise NotImplementedError

    def pending(self, now: float) -> bool:
        """True while it still has somewhere to go after `incoming_command_timeout` (a pose target, guiding)."""
        return False

    def outcome(self, result) -> tuple[ServoStatus | None, str | None]:
        """Its own status and message after the IK's `result`; (None, None): the IK's."""
        return None, None

    def window_grid(self, positions: np.ndarray, velocities: np.ndarray, grid: np.ndarray, amax: np.ndarray,
                    dt: float) -> np.ndarray:
        """The grid of this tick's window (see `window.window_arrays`)."""
        return grid

    def idle(self) -> tuple[ServoStatus, str] | None:
        """The status of the ramp to rest once it no longer moves the arm, when it is not a timed-out command."""
        return None

    def update_config(self, config: ServoConfig) -> bool:
        """A new configuration; False when the command is no longer valid in it and stops being tracked."""
        return True


class TwistMotion(TrackedCommand):
    """A twist in any model frame, or in a TF frame placed by the caller, in SI units."""

    def __init__(self, command: TwistCommand, frame: int | pin.SE3 | None, converter: TwistConverter,
                 config: ServoConfig) -> None:
        self.source, self.received_at = command, command.received_at
        self._frame, self._converter = frame, converter     # model frame id (None = base), or base_T_frame (TF)
        self._about_tool = config.apply_twist_about_tool
        self._si = command_to_si(command.linear, command.angular, config)

    @classmethod
    def resolve(cls, command: TwistCommand, base_T_frame: pin.SE3 | None, robot: RobotModel,
                converter: TwistConverter, config: ServoConfig) -> TwistMotion:
        """The command checked, its frame resolved (see `Servo.set_command`)."""
        check_vector("twist command linear", command.linear, 3)
        check_vector("twist command angular", command.angular, 3)
        check_time("twist command received_at", command.received_at)
        if base_T_frame is None:
            frame = robot.resolve_frame(command.frame)
            frame = None if frame == robot.base_frame_id else frame
        else:
            frame = base_T_frame.copy()
        return cls(command, frame, converter, config)

    def twist(self, positions: np.ndarray, now: float) -> np.ndarray:
        return self._converter.to_tool_twist_base(positions, self._si, self._frame, self._about_tool)

    def update_config(self, config: ServoConfig) -> bool:
        """Raises InvalidInputError when the twist is beyond any arm in the new units (the configuration is in
        place by then)."""
        self._about_tool = config.apply_twist_about_tool      # units and scales may have changed too
        self._si = command_to_si(self.source.linear, self.source.angular, config)
        return True


class JointJogMotion(TrackedCommand):
    """Joint velocities by name, in chain order and SI; they go through the same joint limits as a twist's."""

    def __init__(self, command: JointJogCommand, joint_names: tuple[str, ...], config: ServoConfig) -> None:
        check_time("joint jog received_at", command.received_at)
        self.source, self.received_at, self._joint_names = command, command.received_at, joint_names
        self.joint_velocities = chain_velocities(command, joint_names, config)

    def twist(self, positions: np.ndarray, now: float) -> None:
        return None

    def update_config(self, config: ServoConfig) -> bool:
        try:
            self.joint_velocities = chain_velocities(self.source, self._joint_names, config)
        except RobokinError:
            return False
        return True


class GuidingMotion(TrackedCommand):
    """Hand guiding is on: the admittance's twist about the sensor's origin is the command; it never times out,
    a wrench gap pauses it and a long one ends it (guiding_input.py)."""

    times_out = False

    def __init__(self, guiding: GuidingInput, converter: TwistConverter, robot: RobotModel, now: float) -> None:
        self.received_at = now
        self._guiding, self._converter, self._robot = guiding, converter, robot
        self._message = ""

    @property
    def stopped(self) -> str:
        return self._guiding.stopped

    def stop(self, why: str) -> None:
        self._guiding.stopped = why

    def pending(self, now: float) -> bool:
        return not self._guiding.stopped

    def twist(self, positions: np.ndarray, now: float) -> np.ndarray | None:
        guiding = self._guiding
        guided = guiding.step(now)
        if guided.stale:        # paused (resumes by itself) or stopped: a ramp to rest either way
            self.halted = guiding.stopped or guiding.paused
            return None
        self.halted = ""
        self._message = f"{ServoStatus.HAND_GUIDING.sentence}: {guided.message}"
        return self._converter.to_tool_twist_base(positions, guided.twist, guiding.sensor_origin(self._robot,
                                                                                                 positions), False)

    def outcome(self, result) -> tuple[ServoStatus, str]:
        if result.status != ServoStatus.OK:
            return result.status, f"{result.message}; {self._message}"
        return ServoStatus.HAND_GUIDING, self._message


def acceleration_window_time(state: CommandedState) -> float:
    """[s] the time the IK's per-tick acceleration window allows a change of velocity over: the time since the last
    decision, or with jerk limits none at all (inf: the window spans every velocity).

    With jerk limits the jerk-limited window (jerk_window.py) is the limiter: it plans each joint's way from the
    commanded state (acceleration included) to the IK's velocity, all joints synchronized so that the tool keeps its
    direction. The IK's window, applied on top from a jerk state that lags it, made the IK's output creep a dt per
    tick: a wanted velocity that moved every tick, which each window planned toward anew, so that a window taken
    over late disagreed with the one before (bench/jerk_takeover.py). Everything else the IK does stays: velocity
    limits, position bounds, singularity scaling and escape (which still grows from the commanded velocity),
    halt-all, the two-tip solve's priorities where a position bound clips."""
    return math.inf if state.jerk_limited else state.accel_dt


def solve(ik: VelocityIk, command: TrackedCommand, positions: np.ndarray, twist: np.ndarray | StackedTask | None,
          scale: float, state: CommandedState) -> VelocityIkResult:
    """The IK from the commanded state for the tool twist (6,) or a stacked task of several tips, or when `twist` is
    None for the command's joint velocities (a joint jog; none: a stop), times `scale` (with jerk limits without the
    acceleration window: `acceleration_window_time`)."""
    accel_dt = acceleration_window_time(state)
    if twist is None:
        jog = command.joint_velocities
        velocities = np.zeros(len(positions)) if jog is None else jog if scale == 1.0 else jog * scale
        return ik.limit_joint_velocities(positions, velocities, dt=state.dt, previous_velocities=state.velocities,
                                         accel_dt=accel_dt)
    if twist.__class__ is StackedTask:
        task = twist if scale == 1.0 else twist._replace(velocity=twist.velocity * scale)
        return ik.solve_task(positions, task, dt=state.dt, previous_velocities=state.velocities,
                             accel_dt=accel_dt, halt_all=command.halt_all)
    return ik.solve(positions, twist if scale == 1.0 else twist * scale, dt=state.dt,
                    previous_velocities=state.velocities, check=False, accel_dt=accel_dt,
                    halt_all=command.halt_all)


def unlimited_share(ik: VelocityIk, command: TrackedCommand, positions: np.ndarray, twist: np.ndarray | None,
                    velocities: np.ndarray, state: CommandedState) -> float:
    """|velocities| / |the same command without the acceleration window| (see `SpeedGuards.judge`); 1 with jerk
    limits, where the IK has no acceleration window (`acceleration_window_time`)."""
    if state.jerk_limited:
        return 1.0
    dt = state.dt
    if twist is None:
        free = command.joint_velocities
    elif twist.__class__ is StackedTask:
        free = ik.solve_task(positions, twist, dt=dt).velocities
    else:
        free = ik.solve(positions, twist, dt=dt, check=False).velocities
    size = float(np.linalg.norm(free))
    return min(1.0, float(np.linalg.norm(velocities)) / size) if size > 0.0 else 1.0
