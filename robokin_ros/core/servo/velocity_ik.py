"""One velocity-IK step: tool twist -> joint velocity, with damping, null-space tasks and joint limits.

Order of operations in `VelocityIk.solve` (each stage is documented where it lives):
1. task: the frame Jacobian at the frame origin in base axes (LOCAL_WORLD_ALIGNED), optionally rotated to
   tool axes and reduced to the masked rows (`axis_mask`, for arms with fewer than six joints);
2. position limits become velocity bounds (`limits.position_velocity_bounds`); limit avoidance and posture
   form the secondary velocity (`limits.nullspace_velocity`);
3. bounded damped least squares with the null-space term (`dls.bounded_dls`): joints that would leave
   their bound are fixed there and the others absorb the task; fixed at zero = locked;
4. optional MoveIt-Servo-style slowing by condition number, only for motion toward the singularity;
5. uniform scaling into the velocity limits, then the acceleration window (`limits.limit_velocity`).
A `VelocityIk` keeps work buffers: use one instance per thread.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robokin_ros.core import dls
from robokin_ros.core.errors import ConfigError, InvalidInputError
from robokin_ros.core.limits import (
    LIMIT_ACCELERATION,
    LIMIT_ACCELERATION_CLIP,
    LIMIT_VELOCITY,
    avoidance_zone_widths,
    limit_velocity,
    motion_limits,
)
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.singularity import damping_status, direction_guard, singularity_scale
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.validation import check_vector

AXIS_FRAMES = ("base", "tool")
DEBOUNCE_STEPS = 25      # steps a new approaching/leaving verdict must hold before it is reported
_frame_jacobian, _LWA, _empty, _step = (pin.computeFrameJacobian, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED, np.empty,
                                        dls.velocity_ik_step)
_OK = ServoStatus.OK
_OK_SENTENCE = ServoStatus.OK.sentence
_OK_ACCELERATION_SENTENCE = f"{_OK_SENTENCE}, acceleration-limited"


@dataclass(frozen=True, eq=False)
class IkSettings:
    """Pure algorithm settings; per-joint arrays are (n,) in chain order, None = the robot's default."""

    sigma_threshold: float = 0.04        # [m/rad-mixed] damping grows below this sigma_min
    max_damping: float = 0.05            # damping lambda reached at sigma_min = 0
    use_condition_number_thresholds: bool = False
    lower_singularity_threshold: float = 30.0
    hard_stop_singularity_threshold: float = 90.0
    leaving_singularity_threshold_multiplier: float = 2.0
    joint_limit_margin: float = 0.02     # [rad | m]
    joint_limit_avoidance_gain: float = 1.0   # [1/s]
    joint_limit_avoidance_zone: float = 0.25  # share of the range on each side
    posture_gain: float = 0.0            # [1/s]
    # With joints held at a limit, the others may be unable to produce the commanded twist; rather than
    # drifting the tool sideways (least squares), the motion slows from half this relative direction error
    # and halts at it. inf = off (pure least squares).
    locked_direction_tolerance: float = 0.2
    home_positions: np.ndarray | None = None        # None = robot.home()
    velocity_limits: np.ndarray | None = None       # [rad/s] None = robot.limits.velocity
    acceleration_limits: np.ndarray | None = None   # [rad/s^2] None = no acceleration limit

    @classmethod
    def from_servo_config(cls, config: ServoConfig, robot: RobotModel) -> IkSettings:
        """Settings of the servo's IK: config lists override the URDF; accelerations default per config."""
        config.check_joint_lists(robot.joint_names)
        limits = motion_limits(robot, config.max_joint_velocity, config.max_joint_acceleration,
                               config.default_joint_acceleration)
        return cls(sigma_threshold=config.singularity_sigma_threshold, max_damping=config.max_damping,
                   use_condition_number_thresholds=config.use_condition_number_thresholds,
                   lower_singularity_threshold=config.lower_singularity_threshold,
                   hard_stop_singularity_threshold=config.hard_stop_singularity_threshold,
                   leaving_singularity_threshold_multiplier=config.leaving_singularity_threshold_multiplier,
                   joint_limit_margin=config.joint_limit_margin,
                   joint_limit_avoidance_gain=config.joint_limit_avoidance_gain,
                   joint_limit_avoidance_zone=config.joint_limit_avoidance_zone,
                   posture_gain=config.posture_gain,
                   locked_direction_tolerance=config.locked_direction_tolerance,
                   home_positions=np.array(config.home_positions or robot.home(), dtype=float),
                   velocity_limits=limits.velocity * config.velocity_scaling,
                   acceleration_limits=limits.acceleration)


@dataclass(frozen=True)
class VelocityIkResult:
    """Outcome of one velocity-IK step."""

    velocities: np.ndarray          # (n,) [rad/s | m/s]
    status: ServoStatus             # OK / DECELERATE_* / HALT_FOR_SINGULARITY / JOINT_BOUND / VELOCITY_LIMITED
    message: str                    # full sentence: locked joints, sigma_min / condition number
    locked_joints: tuple[str, ...]
    sigma_min: float                # smallest singular value of the task Jacobian (before locking)
    condition_number: float         # sigma_max / sigma_min of the task Jacobian (inf when singular)
    velocity_scale: float           # uniform scale applied (1 = none)
    damping: float                  # lambda used in the final solve

    def __getattr__(self, name: str) -> str:
        # `message` is formatted on first read (float formatting costs ~0.5 us a tick, and a servo loop
        # rarely reads it): `_fast` stores the sentence's start, the numbers are the fields themselves.
        values = self.__dict__
        if name != "message" or "_prefix" not in values:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        message = _sentence(values["_prefix"], values["sigma_min"], values["condition_number"], values["damping"])
        values["message"] = message
        return message

    @classmethod
    def _fast(cls, velocities, status, prefix, locked_joints, sigma_min, condition_number, velocity_scale,
              damping) -> VelocityIkResult:
        # The generated frozen __init__ costs ~1 us (one object.__setattr__ per field) at 1 kHz; filling
        # __dict__ directly builds the same object, its message "<prefix> (<numbers>)" built when read.
        result = _new(cls)
        result.__dict__.update(velocities=velocities, status=status, _prefix=prefix, locked_joints=locked_joints,
                               sigma_min=sigma_min, condition_number=condition_number,
                               velocity_scale=velocity_scale, damping=damping)
        return result


_new = object.__new__
_fast = VelocityIkResult._fast


def _sentence(prefix: str, sigma_min: float, cond: float, damping: float) -> str:
    return f"{prefix} (sigma_min {sigma_min:.3g}, condition number {cond:.3g}, damping {damping:.3g})"


def _settings_problems(s: IkSettings) -> list[str]:
    checks = [
        (s.sigma_threshold > 0, f"sigma_threshold={s.sigma_threshold} must be > 0"),
        (s.max_damping >= 0, f"max_damping={s.max_damping} must be >= 0"),
        (s.lower_singularity_threshold > 1, f"lower_singularity_threshold={s.lower_singularity_threshold} "
                                            "must be > 1"),
        (s.hard_stop_singularity_threshold > s.lower_singularity_threshold,
         f"hard_stop_singularity_threshold={s.hard_stop_singularity_threshold} must exceed "
         f"lower_singularity_threshold={s.lower_singularity_threshold}"),
        (s.leaving_singularity_threshold_multiplier >= 1,
         f"leaving_singularity_threshold_multiplier={s.leaving_singularity_threshold_multiplier} must be >= 1"),
        (s.joint_limit_margin >= 0, f"joint_limit_margin={s.joint_limit_margin} must be >= 0"),
        (s.joint_limit_avoidance_gain >= 0, f"joint_limit_avoidance_gain={s.joint_limit_avoidance_gain} "
                                            "must be >= 0"),
        (0 < s.joint_limit_avoidance_zone <= 0.5, f"joint_limit_avoidance_zone={s.joint_limit_avoidance_zone} "
                                                  "must be in (0, 0.5]"),
        (s.posture_gain >= 0, f"posture_gain={s.posture_gain} must be >= 0"),
        (s.locked_direction_tolerance > 0, f"locked_direction_tolerance={s.locked_direction_tolerance} must "
                                           "be > 0 (inf = off)"),
    ]
    return [text for ok, text in checks if not ok]


def _joint_array(name: str, value, default: np.ndarray, n: int, positive: bool) -> np.ndarray:
    """A per-joint settings array: size n, no NaN, finite unless it is a limit (inf = none), > 0 if a limit."""
    array = np.array(default if value is None else value, dtype=float)
    if array.shape != (n,):
        raise ConfigError([f"{name} must have {n} entries (one per chain joint), got shape {array.shape}"],
                          "IK settings")
    bad = np.isnan(array) | (array <= 0 if positive else ~np.isfinite(array))
    if bad.any():
        rule = "be > 0 (inf = no limit)" if positive else "be finite"
        raise ConfigError([f"{name} entries at indices {np.flatnonzero(bad).tolist()} must {rule}: "
                           f"{array[bad].tolist()}"], "IK settings")
    return array


class VelocityIk:
    """Velocity IK for one robot chain: `solve` maps a tool twist to joint velocities, limits included."""

    def __init__(self, robot: RobotModel, settings: IkSettings = IkSettings()) -> None:
        problems = _settings_problems(settings)
        if problems:
            raise ConfigError(problems, "IK settings")
        n = robot.n
        self.robot, self.settings = robot, settings
        self._lower, self._upper = robot.limits.lower.copy(), robot.limits.upper.copy()
        self._home = _joint_array("home_positions", settings.home_positions, robot.home(), n, False)
        self._vmax = _joint_array("velocity_limits", settings.velocity_limits, robot.limits.velocity, n, True)
        self._amax = _joint_array("acceleration_limits", settings.acceleration_limits, np.full(n, np.inf),
                                  n, True)
        self._has_amax = bool(np.isfinite(self._amax).any())
        self._R_base_T = robot.world_T_base.rotation.T.copy()
        self._n_frames = len(robot.model.frames)
        self._zeros = np.zeros(n)
        # tables for the compiled step (dls.velocity_ik_step), packed once so a tick passes few arguments
        zone = avoidance_zone_widths(self._lower, self._upper, settings.joint_limit_avoidance_zone)
        self._joints = np.vstack((self._lower, self._upper, self._vmax, self._amax, self._home, zone))   # (6, n)
        cond_check = settings.lower_singularity_threshold if settings.use_condition_number_thresholds \
            else np.inf
        self._scalars = np.array([settings.joint_limit_margin, settings.joint_limit_avoidance_gain,
                                  settings.posture_gain, settings.sigma_threshold, settings.max_damping, cond_check])
        # work buffers reused every step (results get fresh arrays): bounds, secondary, unlimited velocity
        self._work = np.empty(4 * n + dls.scratch_size(n))
        self._lo, self._hi, self._dq = self._work[:n], self._work[n:2 * n], self._work[3 * n:4 * n]
        self._fixed = np.zeros(n, dtype=np.int8)
        # hot-path shortcut: `robot.frame_jacobian_fast` returns Pinocchio's Jacobian untouched when the
        # positions are Pinocchio's q, the base is the world and the chain has more than one joint
        self._n, self._tip, self._model, self._data = n, robot.tip_frame_id, robot.model, robot.data
        self._damping_status: ServoStatus | None = None
        self._damping_votes = 0
        self._raw_jacobian = robot.model.nq == robot.model.nv == n > 1 and robot.world_T_base.isIdentity(1e-12)

    @property
    def velocity_limits(self) -> np.ndarray:
        """(n,) velocity limits in force [rad/s | m/s] (inf = none)."""
        return self._vmax

    @property
    def acceleration_limits(self) -> np.ndarray:
        """(n,) acceleration limits in force [rad/s^2 | m/s^2] (inf = none)."""
        return self._amax

    # ---- task -------------------------------------------------------------------------------------
    def task(self, positions: np.ndarray, twist: np.ndarray, frame_id: int,
             axis_mask: Sequence[bool] | None, axis_frame: str) -> tuple[np.ndarray, np.ndarray]:
        """Task Jacobian (m, n) and task velocity (m,) for unchecked inputs (also used by the probe)."""
        J = self.robot.frame_jacobian_fast(self.robot.to_pinocchio_q(positions), frame_id)   # (6, n)
        if axis_frame == "tool":
            tool_R_base = (self._R_base_T @ self.robot.data.oMf[frame_id].rotation).T        # (3, 3)
            J = np.vstack((tool_R_base @ J[:3], tool_R_base @ J[3:]))                        # (6, n) tool axes
            twist = np.concatenate((tool_R_base @ twist[:3], tool_R_base @ twist[3:]))
        if axis_mask is not None:
            rows = np.flatnonzero(axis_mask)
            J, twist = J[rows], twist[rows]                                                  # (m, n), (m,)
        return J, twist

    # ---- step -------------------------------------------------------------------------------------
    def solve(self, positions: npt.ArrayLike, twist: npt.ArrayLike, *, dt: float, frame_id: int | None = None,
              axis_mask: Sequence[bool] | None = None, axis_frame: str = "base",
              previous_velocities: np.ndarray | None = None, check: bool = True) -> VelocityIkResult:
        """Joint velocities that move the frame with `twist`, within every limit over `dt`.

        Args:
            positions: (n,) joint positions [rad | m], chain order.
            twist: (6,) [v; w] of the frame origin in base axes [m/s, rad/s].
            dt: time the velocities will be applied for [s] (position bounds, acceleration window).
            frame_id: model frame moved by the twist (default: the robot's tip frame).
            axis_mask: six booleans, True = that axis is part of the task (others free).
            axis_frame: "base" or "tool": the axes `axis_mask` refers to.
            previous_velocities: (n,) last commanded velocity; None = no acceleration limiting.
            check: validate inputs (False for hot loops whose inputs are already validated).

        Returns:
            VelocityIkResult with the velocities, a status and a message.

        Raises:
            InvalidInputError: NaN/inf or wrong sizes, bad dt, frame_id, axis mask or axis frame.
        """
        if check:
            positions, twist, previous_velocities, axis_mask = self._check(
                positions, twist, dt, frame_id, axis_mask, axis_frame, previous_velocities)
        fid = self._tip if frame_id is None else frame_id
        if axis_mask is not None or axis_frame != "base":
            A, b = self.task(positions, twist, fid, axis_mask, axis_frame)
        elif self._raw_jacobian:                           # the common case: Pinocchio's array as is
            A, b = _frame_jacobian(self._model, self._data, positions, fid, _LWA), twist
        else:
            A, b = self.robot.frame_jacobian_fast(self.robot.to_pinocchio_q(positions), fid), twist
        use_prev = previous_velocities is not None and self._has_amax
        prev = previous_velocities if use_prev else self._zeros
        out = _empty(self._n)
        sigma_min, cond, damping, scale, outcome, limited, n_fixed = _step(
            A, b, positions, prev, use_prev, dt, self._joints, self._scalars, self._work, self._fixed, out)
        sing_status, pre_scale = ServoStatus.OK, 1.0
        if not limited:                                    # condition number above the lower threshold
            pre_scale, sing_status = singularity_scale(self, positions, A, self._dq, fid, axis_mask, axis_frame)
            scale, outcome = limit_velocity(self._dq, pre_scale, prev, use_prev, self._vmax, self._amax, dt,
                                            self._lo, self._hi, out)
        if outcome == 0 and sing_status == _OK and n_fixed == 0 and damping == 0.0:      # the hot path
            return _fast(out, _OK, _OK_SENTENCE, (), sigma_min, cond, scale, damping)
        blocked = ""
        if n_fixed:
            rows = None if axis_mask is None else np.flatnonzero(axis_mask) >= 3
            guard, off = direction_guard(A, b, self._dq, self.settings.locked_direction_tolerance, rows)
            if guard < 1.0:
                scale, outcome = limit_velocity(self._dq, pre_scale * guard, prev, use_prev, self._vmax,
                                                self._amax, dt, self._lo, self._hi, out)
                blocked = (f"; the other joints cannot follow this twist: the tool would move "
                           f"{np.degrees(np.arcsin(min(off, 1.0))):.0f} deg off its direction: "
                           f"{'halted' if guard == 0.0 else 'slowing'}")
        if sing_status == _OK and damping > 0.0:
            sing_status = self._debounced(damping_status(self, positions, A, b, fid, axis_mask, axis_frame))
        locked, braking = self._bound_joints() if n_fixed else ((), ())
        status, prefix = self._describe(sing_status, locked, braking, outcome)
        return _fast(out, status, prefix + blocked, locked, sigma_min, cond, scale, damping)

    # ---- helpers ----------------------------------------------------------------------------------
    def _debounced(self, status: ServoStatus) -> ServoStatus:
        """Approaching vs leaving a singularity, changed only after DEBOUNCE_STEPS steps agree: pushed into
        the workspace boundary, the arm hovers at sigma_min ~ 0 and the one-step probe flips sign each step,
        which would flood a status display."""
        if status == self._damping_status:
            self._damping_votes = 0
        else:
            self._damping_votes += 1
            if self._damping_votes >= DEBOUNCE_STEPS or self._damping_status is None:
                self._damping_status, self._damping_votes = status, 0
        return self._damping_status

    def _check(self, positions, twist, dt, frame_id, axis_mask, axis_frame, previous_velocities):
        positions = self.robot.check_positions(positions)
        twist = check_vector("twist", twist, 6)
        if not (isinstance(dt, (int, float, np.floating)) and np.isfinite(dt) and dt > 0):
            raise InvalidInputError(f"dt must be a finite time step > 0 [s], got {dt!r}")
        if frame_id is not None and not (isinstance(frame_id, (int, np.integer))
                                         and 0 <= frame_id < self._n_frames):
            raise InvalidInputError(f"frame_id {frame_id!r} is not a frame of the model (valid: 0.."
                                    f"{self._n_frames - 1}; use robot.frame_id(name))")
        if axis_frame not in AXIS_FRAMES:
            raise InvalidInputError(f"axis_frame '{axis_frame}' is not one of {list(AXIS_FRAMES)}")
        if axis_mask is not None:
            mask = np.asarray(axis_mask)
            if mask.shape != (6,) or mask.dtype != bool or not mask.any():
                raise InvalidInputError(f"axis_mask must be six booleans [vx vy vz wx wy wz] with at least "
                                        f"one True, got {list(np.ravel(mask))}")
            axis_mask = mask
        if previous_velocities is not None:
            previous_velocities = check_vector("previous_velocities", previous_velocities, self.robot.n)
        return positions, twist, previous_velocities, axis_mask

    def _bound_joints(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(locked, braking): joints fixed at a zero bound, and joints fixed at a non-zero bound."""
        names = self.robot.joint_names
        fixed = np.flatnonzero(self._fixed)
        return (tuple(names[j] for j in fixed if self._dq[j] == 0.0),
                tuple(names[j] for j in fixed if self._dq[j] != 0.0))

    def _describe(self, sing_status, locked, braking, outcome):
        """Status (most severe first: halt, joint bound, singularity slowing, velocity limit) and the start
        of its sentence (the result appends the sigma_min / condition number / damping numbers)."""
        if sing_status == ServoStatus.HALT_FOR_SINGULARITY:
            return sing_status, sing_status.sentence
        if locked or braking:
            index = self.robot.joint_index
            parts = [f"{name} locked at its {'upper' if self._hi[index(name)] == 0.0 else 'lower'} limit"
                     for name in locked]
            parts += [f"{name} slowed to stop at its limit margin" for name in braking]
            return ServoStatus.JOINT_BOUND, f"{ServoStatus.JOINT_BOUND.sentence}: {'; '.join(parts)}"
        if sing_status != ServoStatus.OK:
            return sing_status, sing_status.sentence
        if outcome == LIMIT_VELOCITY:
            return ServoStatus.VELOCITY_LIMITED, ServoStatus.VELOCITY_LIMITED.sentence
        if outcome in (LIMIT_ACCELERATION, LIMIT_ACCELERATION_CLIP):
            return ServoStatus.OK, _OK_ACCELERATION_SENTENCE
        return ServoStatus.OK, _OK_SENTENCE
