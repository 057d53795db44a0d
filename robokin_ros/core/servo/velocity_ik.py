"""One velocity-IK step: tool twist -> joint velocity, with damping, null-space tasks and joint limits.

Order of operations in `VelocityIk.solve` (each stage is documented where it lives):
1. task: the frame Jacobian at the frame origin in base axes, optionally in tool axes and reduced to the
   masked rows (`task.TaskBuilder`);
2. position limits become velocity bounds (`limits.position_velocity_bounds`); limit avoidance and posture
   form the secondary velocity (`limits.nullspace_velocity`);
3. bounded damped least squares with the null-space term (`dls.bounded_dls`): joints that would leave
   their bound are fixed there and the others absorb the task; fixed at zero = locked;
4. leaving a damped singularity toward the commanded side: a joint motion along the direction in which the
   singular task direction becomes reachable (`singularity.escape_velocity`), the rest solved again by stage 3;
5. optional MoveIt-Servo-style slowing by condition number, only for motion toward the singularity;
6. uniform scaling into the velocity limits, then the acceleration window (`limits.limit_velocity`).
With `halt_all` (MoveIt Servo's halt_all_joints_in_cartesian_mode, the default) stage 3 ignores the position
bounds and a joint that would pass its margin slows the whole motion instead (`limits.halt_all_scale`): every
joint decelerates in proportion, so the tool stops along the commanded direction; without it, that joint is
locked and the others carry on (stage 3's locking).
Stages 2, 3 and 6 run as one compiled call, `_step`. It lives here because it returns its nine numbers as
a plain tuple, which must not cross modules: a NamedTuple boxed by numba costs ~0.8 us a tick (measured).
A `VelocityIk` keeps work buffers: use one instance per thread.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pinocchio as pin
from numba import njit

from robokin_ros.core.dls import (
    bounded_dls_fast_into,
    bounded_dls_into,
    prioritized_dls_into,
    prioritized_scratch_size,
    scratch_size,
)
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.limits import (
    LIMIT_ACCELERATION,
    LIMIT_ACCELERATION_CLIP,
    LIMIT_POSITION_CLIP,
    LIMIT_VELOCITY,
    avoidance_zone_widths,
    halt_all_scale,
    limit_velocity,
    motion_limits,
    nullspace_velocity,
    position_velocity_bounds,
)
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.schema import per_joint_values
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.singularity import (
    damping_status,
    direction_guard,
    escape_velocity,
    singularity_scale,
    warm_up_escape,
)
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.task import AXIS_FRAMES, TaskBuilder
from robokin_ros.core.servo.tip_task import StackedTask
from robokin_ros.core.servo.types import VelocityIkResult, frozen
from robokin_ros.core.servo.window import bound_hold
from robokin_ros.core.validation import check_vector

DEBOUNCE_STEPS = 25      # steps a new approaching/leaving verdict must hold before it is reported
_frame_jacobian, _LWA, _empty = pin.computeFrameJacobian, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED, np.empty
_OK = ServoStatus.OK
_OK_SENTENCE = ServoStatus.OK.sentence
_LEAVING = ServoStatus.DECELERATE_FOR_LEAVING_SINGULARITY
_OK_ACCELERATION_SENTENCE = f"{_OK_SENTENCE}, acceleration-limited"

# Rows of the `joints` table and entries of the `scalars` vector of `_step`.
# J_INNER_*: the limits moved inward by each joint's joint_limit_margins entry (where a joint pushed outward locks);
# J_FREE_*: -inf / +inf, the bounds of a halt-all solve (no joint is fixed; `limits.halt_all_scale` slows them all)
J_LOWER, J_UPPER, J_VMAX, J_AMAX, J_HOME, J_ZONE, J_INNER_LOWER, J_INNER_UPPER, J_FREE_LOWER, J_FREE_UPPER = range(10)
S_LIMIT_GAIN, S_POSTURE_GAIN, S_SIGMA, S_DAMPING, S_COND_CHECK = range(5)


@njit(cache=True)
def _step(A, b, q, prev, use_prev, dt, accel_dt, joints, scalars, work, fixed, out, halt_all):
    """The whole numeric velocity-IK step in one compiled call (one dispatch per tick).

    Position bounds -> secondary velocity -> bounded DLS (unbounded with `halt_all`, then the halt-all factor)
    -> velocity/acceleration/position limiting. When
    the condition number exceeds scalars[S_COND_CHECK] (inf = never) the limiting is skipped and the
    caller decides a singularity scale first, then calls `limits.limit_velocity` itself.

    Args:
        A: (m, n) task Jacobian. b: (m,) task velocity. q: (n,) positions. prev: (n,) previous velocity.
        use_prev: apply the acceleration window. dt: step [s] (position bounds). accel_dt: time since the
            previous velocity was decided [s] (the acceleration window).
        joints: (10, n) rows J_LOWER, J_UPPER, J_VMAX, J_AMAX, J_HOME, J_ZONE (avoidance band widths),
            J_INNER_LOWER, J_INNER_UPPER (the limits less the margins), J_FREE_LOWER, J_FREE_UPPER (-inf, inf).
        scalars: (5,) entries S_LIMIT_GAIN ... S_COND_CHECK.
        work: (4 n + scratch_size(n),) scratch: lower bound, upper bound, secondary velocity, unlimited
            DLS velocity (n each), then the `dls.bounded_dls_into` scratch (so a tick allocates nothing).
        fixed: (n,) int8 output of the DLS. out: (n,) final velocity. halt_all: see the module docstring.

    Returns:
        (sigma_min, condition_number, damping, uniform_scale, limit_outcome, limited, n_fixed, halt_scale,
        blocking): `limited` False means `out` was not written (singularity check pending); n_fixed = joints
        held at a bound; halt_scale, blocking = `limits.halt_all_scale` (1, -1 without `halt_all`).
    """
    n = q.shape[0]
    lo, hi, z, dq = work[:n], work[n:2 * n], work[2 * n:3 * n], work[3 * n:4 * n]
    position_velocity_bounds(q, joints[J_INNER_LOWER], joints[J_INNER_UPPER], 0.0, dt, joints[J_AMAX], lo, hi)
    nullspace_velocity(q, joints[J_LOWER], joints[J_UPPER], joints[J_ZONE], scalars[S_LIMIT_GAIN],
                       joints[J_HOME], scalars[S_POSTURE_GAIN], z)
    dls_lo, dls_hi = (joints[J_FREE_LOWER], joints[J_FREE_UPPER]) if halt_all else (lo, hi)
    s_min, cond, lam = bounded_dls_into(A, b, z, dls_lo, dls_hi, scalars[S_SIGMA], scalars[S_DAMPING], dq, fixed,
                                        work[4 * n:])
    n_fixed = 0
    for j in range(fixed.shape[0]):
        n_fixed += fixed[j]
    halt, blocking = 1.0, -1
    if halt_all:
        halt, blocking = halt_all_scale(dq, q, joints[J_INNER_LOWER], joints[J_INNER_UPPER], joints[J_AMAX], dt)
    if cond > scalars[S_COND_CHECK]:
        return s_min, cond, lam, 1.0, 0, False, n_fixed, halt, blocking
    scale, outcome = limit_velocity(dq, halt, prev, use_prev, joints[J_VMAX], joints[J_AMAX], accel_dt, lo, hi,
                                    out)
    return s_min, cond, lam, scale, outcome, True, n_fixed, halt, blocking


@njit(cache=True)
def _primary_in_window(A, primary, dq, scale, prev, vmax, amax, accel_dt, lo, hi, sigma, damping, out, scratch):
    """Where the acceleration window clipped a prioritized velocity (`limits.limit_velocity` moves from `prev`
    toward `scale * dq`, which keeps only what `prev` keeps), solve the change from `prev` again with both priority
    levels inside the window: out = prev + d, rows [0, primary) of A d toward A (scale dq - prev) first, the rest in
    their null space, each joint's d within its acceleration window, its velocity limit and its position bounds (a
    bound that excludes d = 0 is met by the final clip, as in `limit_velocity`). The grasp rows then keep their
    velocity while the other joints' windows allow it. scratch: >= prioritized_scratch_size(n, m)."""
    m, n = A.shape
    target = np.empty(n)
    d_lo, d_hi, zero = np.empty(n), np.empty(n), np.zeros(n)
    for j in range(n):
        target[j] = scale * dq[j] - prev[j]
        window = amax[j] * accel_dt
        d_lo[j] = min(max(-window, -vmax[j] - prev[j], lo[j] - prev[j]), 0.0)
        d_hi[j] = max(min(window, vmax[j] - prev[j], hi[j] - prev[j]), 0.0)
    r = A @ target
    held = np.zeros(n, dtype=np.int8)
    prioritized_dls_into(A, r, primary, zero, d_lo, d_hi, sigma, damping, out, held, scratch)
    for j in range(n):
        out[j] = min(max(prev[j] + out[j], lo[j]), hi[j])


@njit(cache=True)
def _step_prioritized(A, b, q, prev, use_prev, dt, accel_dt, joints, scalars, work, fixed, out, halt_all, primary):
    """`_step` for a stacked task whose first `primary` rows come first (a held object's grasp rows): the DLS is
    `dls.prioritized_dls_into`, everything else as `_step` (a separate function, so `_step` is compiled as before).
    work: (4 n + prioritized_scratch_size(n, m),)."""
    n = q.shape[0]
    lo, hi, z, dq = work[:n], work[n:2 * n], work[2 * n:3 * n], work[3 * n:4 * n]
    position_velocity_bounds(q, joints[J_INNER_LOWER], joints[J_INNER_UPPER], 0.0, dt, joints[J_AMAX], lo, hi)
    nullspace_velocity(q, joints[J_LOWER], joints[J_UPPER], joints[J_ZONE], scalars[S_LIMIT_GAIN],
                       joints[J_HOME], scalars[S_POSTURE_GAIN], z)
    dls_lo, dls_hi = (joints[J_FREE_LOWER], joints[J_FREE_UPPER]) if halt_all else (lo, hi)
    s_min, cond, lam = prioritized_dls_into(A, b, primary, z, dls_lo, dls_hi, scalars[S_SIGMA], scalars[S_DAMPING],
                                            dq, fixed, work[4 * n:])
    n_fixed = 0
    for j in range(fixed.shape[0]):
        n_fixed += fixed[j]
    halt, blocking = 1.0, -1
    if halt_all:
        halt, blocking = halt_all_scale(dq, q, joints[J_INNER_LOWER], joints[J_INNER_UPPER], joints[J_AMAX], dt)
    if cond > scalars[S_COND_CHECK]:
        return s_min, cond, lam, 1.0, 0, False, n_fixed, halt, blocking
    scale, outcome = limit_velocity(dq, halt, prev, use_prev, joints[J_VMAX], joints[J_AMAX], accel_dt, lo, hi,
                                    out)
    if outcome == LIMIT_ACCELERATION_CLIP or outcome == LIMIT_POSITION_CLIP:
        _primary_in_window(A, primary, dq, scale, prev, joints[J_VMAX], joints[J_AMAX], accel_dt, lo, hi,
                           scalars[S_SIGMA], scalars[S_DAMPING], out, work[4 * n:])
    return s_min, cond, lam, scale, outcome, True, n_fixed, halt, blocking


@njit(cache=True)
def _step_certified(A, b, q, prev, use_prev, dt, accel_dt, joints, scalars, work, fixed, out, halt_all, primary):
    """`_step` for a stacked task of several tips, with the DLS by the path IK's certified Cholesky route
    (`dls.bounded_dls_fast_into`): the Jacobi eigen-decomposition of a 12-row task costs 18-20 us, this 2.4 us. Its
    velocity stands while the first pass is certified undamped and no joint is fixed: sigma_min is then its certified
    lower bound (>= the damping threshold) and the condition number NaN (not computed). Otherwise (damped, a joint
    held) the result is `_step`'s, exact. Only for configurations without condition-number slowing (the caller's
    choice): no condition number here. A separate function, so the one-tip `_step` is compiled as before.
    With `primary` > 0 rows first (`_step_prioritized`) the certified velocity stands too: sigma_min(A) bounds each
    priority level's sigma_min from below, so both are undamped and the two-level solution is this minimum-norm one;
    the fallback is then `_step_prioritized`.
    """
    n = q.shape[0]
    lo, hi, z, dq = work[:n], work[n:2 * n], work[2 * n:3 * n], work[3 * n:4 * n]
    position_velocity_bounds(q, joints[J_INNER_LOWER], joints[J_INNER_UPPER], 0.0, dt, joints[J_AMAX], lo, hi)
    nullspace_velocity(q, joints[J_LOWER], joints[J_UPPER], joints[J_ZONE], scalars[S_LIMIT_GAIN],
                       joints[J_HOME], scalars[S_POSTURE_GAIN], z)
    dls_lo, dls_hi = (joints[J_FREE_LOWER], joints[J_FREE_UPPER]) if halt_all else (lo, hi)
    s_min = bounded_dls_fast_into(A, b, z, dls_lo, dls_hi, scalars[S_SIGMA], scalars[S_DAMPING], dq, fixed,
                                  work[4 * n:])
    for j in range(n):
        if fixed[j]:
            s_min = 0.0
    if s_min < scalars[S_SIGMA]:            # damped or locked: the exact step and figures
        if primary > 0:
            return _step_prioritized(A, b, q, prev, use_prev, dt, accel_dt, joints, scalars, work, fixed, out,
                                     halt_all, primary)
        return _step(A, b, q, prev, use_prev, dt, accel_dt, joints, scalars, work, fixed, out, halt_all)
    halt, blocking = 1.0, -1
    if halt_all:
        halt, blocking = halt_all_scale(dq, q, joints[J_INNER_LOWER], joints[J_INNER_UPPER], joints[J_AMAX], dt)
    scale, outcome = limit_velocity(dq, halt, prev, use_prev, joints[J_VMAX], joints[J_AMAX], accel_dt, lo, hi,
                                    out)
    return s_min, np.nan, 0.0, scale, outcome, True, 0, halt, blocking


class VelocityIk:
    """Velocity IK for one robot chain: `solve` maps a tool twist to joint velocities, limits included."""

    def __init__(self, robot: RobotModel, config: ServoConfig) -> None:
        """Velocity IK with the IK fields of `config` (per-joint lists override the URDF).

        Raises:
            ConfigError: a per-joint list of `config` does not have one entry per chain joint.
        """
        config.check_joint_lists(robot.joint_names)
        limits = motion_limits(robot, config.max_joint_velocity, config.max_joint_acceleration,
                               config.default_joint_acceleration)
        n = robot.n
        self.robot, self.config = robot, config
        self._lower, self._upper = robot.limits.lower.copy(), robot.limits.upper.copy()
        self._home = np.array(config.home_positions or robot.home(), dtype=float)
        self._vmax = limits.velocity * config.velocity_scaling
        self._amax = limits.acceleration
        self._has_amax = bool(np.isfinite(self._amax).any())
        self._task = TaskBuilder(robot)
        self._n_frames = len(robot.model.frames)
        self._zeros = np.zeros(n)
        # tables for the compiled `_step`, packed once so a tick passes few arguments
        zone = avoidance_zone_widths(self._lower, self._upper, config.joint_limit_avoidance_zone)
        margins = np.array(per_joint_values(config.joint_limit_margins, n))                             # (n,)
        self._joints = np.vstack((self._lower, self._upper, self._vmax, self._amax, self._home, zone,
                                  self._lower + margins, self._upper - margins,
                                  np.full(n, -np.inf), np.full(n, np.inf)))                               # (10, n)
        self._halt_all_twist = config.halt_all_joints_in_cartesian_mode
        self._halt_all_jog = config.halt_all_joints_in_joint_mode
        cond_check = config.lower_singularity_threshold if config.use_condition_number_thresholds else np.inf
        self._scalars = np.array([config.joint_limit_avoidance_gain, config.posture_gain,
                                  config.singularity_sigma_threshold, config.max_damping, cond_check])
        # work buffers reused every step (results get fresh arrays): bounds, secondary, unlimited velocity
        # (a robot with several tips may stack six rows per tip, `solve_task`, with two priority levels)
        rows = 6 * len(robot.tip_frames)
        self._work = np.empty(4 * n + (scratch_size(n, rows) if rows == 6 else prioritized_scratch_size(n, rows)))
        self._lo, self._hi, self._dq = self._work[:n], self._work[n:2 * n], self._work[3 * n:4 * n]
        self._fixed = np.zeros(n, dtype=np.int8)
        # hot-path shortcut: `robot.frame_jacobian_fast` returns Pinocchio's Jacobian untouched when the
        # positions are Pinocchio's q, the base is the world and the chain has more than one joint
        self._n, self._tip, self._model, self._data = n, robot.tip_frame_id, robot.model, robot.data
        self._damping_status: ServoStatus | None = None
        self._damping_votes = 0
        self._escape = config.singularity_escape
        self._escape_direction: np.ndarray | None = None      # the escape's direction last step, None = none
        if self._escape:
            self._warm_up_escape()
        # stacked tasks take the certified Cholesky route unless condition numbers are needed for slowing
        self._certified_stacked = not config.use_condition_number_thresholds
        self._raw_jacobian = robot.model.nq == robot.model.nv == n > 1 and robot.world_T_base.isIdentity(1e-12)

    @property
    def velocity_limits(self) -> np.ndarray:
        """(n,) velocity limits in force [rad/s | m/s] (inf = none)."""
        return self._vmax

    @property
    def acceleration_limits(self) -> np.ndarray:
        """(n,) acceleration limits in force [rad/s^2 | m/s^2] (inf = none)."""
        return self._amax

    @property
    def unlimited_velocities(self) -> np.ndarray:
        """(n,) the last solve's damped least-squares velocities before the velocity, acceleration and halt-all
        factors (a view of a work buffer: the next solve overwrites it)."""
        return self._dq

    # ---- step -------------------------------------------------------------------------------------
    def solve(self, positions: npt.ArrayLike, twist: npt.ArrayLike, *, dt: float, frame_id: int | None = None,
              axis_mask: Sequence[bool] | None = None, axis_frame: str = "base",
              previous_velocities: np.ndarray | None = None, check: bool = True,
              accel_dt: float | None = None, halt_all: bool | None = None,
              stacked: StackedTask | None = None) -> VelocityIkResult:
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
            accel_dt: time since `previous_velocities` was decided [s], for the acceleration window (default `dt`):
                a tick that comes early may change the velocity only by what the limits allow in that time.
            halt_all: a joint about to pass its limit margin slows the whole motion to a stop along the commanded
                direction (True) or is locked while the others carry on (False); default the config's
                halt_all_joints_in_cartesian_mode. MoveIt Servo's POSE commands halt only the offending joints.
            stacked: a stacked task of several tips (see `solve_task`), which replaces the frame task: `twist`,
                `frame_id`, `axis_mask` and `axis_frame` are then unused.

        Returns:
            VelocityIkResult with the velocities, a status and a message.

        Raises:
            InvalidInputError: NaN/inf or wrong sizes, bad dt, frame_id, axis mask or axis frame.
        """
        if check:
            positions, twist, previous_velocities, axis_mask = self._check(
                positions, twist, dt, frame_id, axis_mask, axis_frame, previous_velocities)
        fid = self._tip if frame_id is None else frame_id
        if stacked is not None:
            A, b, axis_mask, axis_frame = stacked.jacobian, stacked.velocity, None, "base"
        elif axis_mask is not None or axis_frame != "base":
            A, b = self._task(positions, twist, fid, axis_mask, axis_frame)
        elif self._raw_jacobian:                           # the common case: Pinocchio's array as is
            A, b = _frame_jacobian(self._model, self._data, positions, fid, _LWA), twist
        else:
            A, b = self.robot.frame_jacobian_fast(self.robot.to_pinocchio_q(positions), fid), twist
        use_prev = previous_velocities is not None and self._has_amax
        accel_dt = dt if accel_dt is None else accel_dt
        hold = bound_hold(dt)
        prev = previous_velocities if use_prev else self._zeros
        halt_all = self._halt_all_twist if halt_all is None else halt_all
        out = _empty(self._n)
        if stacked is None:
            primary = 0
            sigma_min, cond, damping, scale, outcome, limited, n_fixed, halt, blocking = _step(
                A, b, positions, prev, use_prev, hold, accel_dt, self._joints, self._scalars, self._work, self._fixed,
                out, halt_all)
        else:
            primary = stacked.primary_rows
            step = _step_certified if self._certified_stacked else _step_prioritized if primary > 0 else None
            if step is None:
                sigma_min, cond, damping, scale, outcome, limited, n_fixed, halt, blocking = _step(
                    A, b, positions, prev, use_prev, hold, accel_dt, self._joints, self._scalars, self._work,
                    self._fixed, out, halt_all)
            else:
                sigma_min, cond, damping, scale, outcome, limited, n_fixed, halt, blocking = step(
                    A, b, positions, prev, use_prev, hold, accel_dt, self._joints, self._scalars, self._work,
                    self._fixed, out, halt_all, primary)
        sing_status, pre_scale, verdict = ServoStatus.OK, 1.0, None
        if damping > 0.0 and self._escape:
            jacobian_at = self._probe(stacked, fid, axis_mask, axis_frame)
            verdict = damping_status(jacobian_at, positions, A, b)        # also the status, below
            if verdict == _LEAVING and self._escape_step(jacobian_at, positions, A, b, prev, sigma_min, accel_dt,
                                                         halt_all, primary):
                n_fixed, limited = int(self._fixed.sum()), False
            else:
                self._escape_direction = None
        if not limited:                     # escaping, or the condition number above the lower threshold
            if cond > self._scalars[S_COND_CHECK]:
                jacobian_at = self._probe(stacked, fid, axis_mask, axis_frame)
                pre_scale, sing_status = singularity_scale(self.config, jacobian_at, positions, A, self._dq)
            if halt_all:                    # the escape changed the velocity: judged again
                halt, blocking = self._halt_all_scale(positions, self._dq, hold)
            scale, outcome = limit_velocity(self._dq, pre_scale * halt, prev, use_prev, self._vmax, self._amax,
                                            accel_dt, self._lo, self._hi, out)
            if primary > 0 and (outcome == LIMIT_ACCELERATION_CLIP or outcome == LIMIT_POSITION_CLIP):
                _primary_in_window(A, primary, self._dq, scale, prev, self._vmax, self._amax, accel_dt, self._lo,
                                   self._hi, self._scalars[S_SIGMA], self._scalars[S_DAMPING], out,
                                   self._work[4 * self._n:])
        if outcome == 0 and sing_status == _OK and n_fixed == 0 and damping == 0.0 and blocking < 0:  # the hot path
            return frozen(VelocityIkResult, {"velocities": out, "status": _OK, "_prefix": _OK_SENTENCE,
                                             "locked_joints": (), "sigma_min": sigma_min, "condition_number": cond,
                                             "velocity_scale": scale, "damping": damping})
        blocked = ""
        if n_fixed:
            rows = (None if stacked is None else stacked.angular_rows) if axis_mask is None \
                else np.flatnonzero(axis_mask) >= 3
            guard, off = direction_guard(A, b, self._dq, self.config.locked_direction_tolerance, rows)
            if guard < 1.0:
                scale, outcome = limit_velocity(self._dq, pre_scale * guard, prev, use_prev, self._vmax,
                                                self._amax, accel_dt, self._lo, self._hi, out)
                blocked = (f"; the other joints cannot follow this twist: the tool would move "
                           f"{np.degrees(np.arcsin(min(off, 1.0))):.0f} deg off its direction: "
                           f"{'halted' if guard == 0.0 else 'slowing'}")
        if sing_status == _OK and damping > 0.0:
            if verdict is None:
                verdict = damping_status(self._probe(stacked, fid, axis_mask, axis_frame), positions, A, b)
            sing_status = self._debounced(verdict)
        locked, braking = self._bound_joints() if n_fixed else ((), ())
        status, prefix = self._describe(sing_status, locked, braking, outcome)
        if blocking >= 0 and sing_status != ServoStatus.HALT_FOR_SINGULARITY:
            locked, status, prefix = self._halting(blocking, halt, self._dq, "all joints",
                                                   "halt_all_joints_in_cartesian_mode")
        return frozen(VelocityIkResult, {"velocities": out, "status": status, "_prefix": prefix + blocked,
                                         "locked_joints": locked, "sigma_min": sigma_min, "condition_number": cond,
                                         "velocity_scale": scale, "damping": damping})

    def _probe(self, stacked, fid, axis_mask, axis_frame):
        """The task Jacobian as a function of the positions, for the singularity probes."""
        return self._task.jacobian_at(fid, axis_mask, axis_frame) if stacked is None else stacked.jacobian_at

    def solve_task(self, positions: np.ndarray, task: StackedTask, *, dt: float,
                   previous_velocities: np.ndarray | None = None, accel_dt: float | None = None,
                   halt_all: bool | None = None) -> VelocityIkResult:
        """Joint velocities for a stacked task (several tips' rows, relative rows; `tip_task.StackedTask`), with
        everything `solve` applies: bounded DLS with locking, null-space posture and limit avoidance, singularity
        damping and escape (probing `task.jacobian_at`), velocity and acceleration limits, halt-all and the
        direction guard (`task.angular_rows`). Inputs are not checked: the task builder made them.

        The solve takes the path IK's certified Cholesky route (`_step_certified`) while the task is certified
        undamped and no joint is held at a bound: the result's sigma_min is then a certified lower bound (>=
        singularity_sigma_threshold) and its condition number NaN (not computed). With
        use_condition_number_thresholds, or damped, or with a joint held, every figure is exact."""
        return self.solve(positions, task.velocity, dt=dt, previous_velocities=previous_velocities, check=False,
                          accel_dt=accel_dt, halt_all=halt_all, stacked=task)

    def limit_joint_velocities(self, positions: np.ndarray, velocities: np.ndarray, *, dt: float,
                               previous_velocities: np.ndarray, accel_dt: float,
                               halt_all: bool | None = None) -> VelocityIkResult:
        """Wanted joint velocities (a joint jog) within the limits a twist's solution meets: velocity limits as one
        uniform factor (direction kept), the acceleration window, and the position bounds that stop a joint at its
        margin within its acceleration limit.

        Args:
            positions: (n,) joint positions. velocities: (n,) wanted velocities [rad/s | m/s], chain order.
            dt: step [s]. previous_velocities: (n,) last commanded velocity. accel_dt: time since it was decided [s].
            halt_all: a joint about to pass its margin stops every jogged joint with it, all decelerating in
                proportion (True), or only that joint is locked there (False); default the config's
                halt_all_joints_in_joint_mode.

        Returns:
            VelocityIkResult: JOINT_BOUND naming the joints held at a limit (or the joint that halts them all),
            VELOCITY_LIMITED, or OK; no singularity figures (NaN), the joint space has none.
        """
        lo, hi, amax = self._lo, self._hi, self._amax
        hold = bound_hold(dt)
        position_velocity_bounds(positions, self._joints[J_INNER_LOWER], self._joints[J_INNER_UPPER], 0.0, hold, amax,
                                 lo, hi)
        if self._halt_all_jog if halt_all is None else halt_all:
            halt, blocking = self._halt_all_scale(positions, velocities, hold)
            wanted = velocities
        else:                               # the held joints leave the uniform factors to the others
            halt, blocking = 1.0, -1
            wanted = np.minimum(np.maximum(velocities, lo), hi)                                     # (n,)
        out = _empty(self._n)
        use_prev = self._has_amax
        scale, outcome = limit_velocity(wanted, halt, previous_velocities if use_prev else self._zeros, use_prev,
                                        self._vmax, amax, accel_dt, lo, hi, out)
        if blocking >= 0:
            locked, status, prefix = self._halting(blocking, halt, velocities, "all jogged joints",
                                                   "halt_all_joints_in_joint_mode")
        else:
            names = self.robot.joint_names
            held = [j for j in range(self._n) if velocities[j] > hi[j] or velocities[j] < lo[j]]
            locked = tuple(names[j] for j in held if out[j] == 0.0)
            braking = tuple(names[j] for j in held if out[j] != 0.0)
            status, prefix = self._describe(_OK, locked, braking, outcome)
        return frozen(VelocityIkResult, {"velocities": out, "status": status, "message": prefix,
                                         "locked_joints": locked, "sigma_min": np.nan, "condition_number": np.nan,
                                         "velocity_scale": scale, "damping": 0.0})

    # ---- helpers ----------------------------------------------------------------------------------
    def _warm_up_escape(self) -> None:
        """Load the compiled code an escape runs (only near singularities) now rather than mid-loop, where it
        stalled the first escaping tick by ~40 ms (measured): its kernels, and the DLS called from Python."""
        n = self._n
        warm_up_escape(n)
        bounded_dls_into(np.ones((1, n)), np.ones(1), np.zeros(n), -np.ones(n), np.ones(n), 1.0, 1.0, np.empty(n),
                         np.empty(n, dtype=np.int8), np.empty(scratch_size(n)))
        if len(self.robot.tip_frames) > 1:  # a held object's escape re-solves with two priority levels
            prioritized_dls_into(np.ones((2, n)), np.ones(2), 1, np.zeros(n), -np.ones(n), np.ones(n), 1.0, 1.0,
                                 np.empty(n), np.empty(n, dtype=np.int8), np.empty(prioritized_scratch_size(n, 2)))

    def _escape_step(self, jacobian_at, positions, A, b, prev, sigma_min, accel_dt, halt_all, primary=0) -> bool:
        """Re-solve with the escape velocity added (`singularity.escape_velocity`); False when there is none.

        Called only while the command leaves the singularity (the probe that also sets the status), so pushing
        into it is damped exactly as without the escape. With `halt_all` the rest is solved without position
        bounds: the caller slows the sum as a whole.
        """
        escape = escape_velocity(jacobian_at, positions, A, b, prev, self._escape_direction, sigma_min=sigma_min,
                                 sigma_threshold=self._scalars[S_SIGMA], max_damping=self._scalars[S_DAMPING],
                                 lower=self._joints[J_INNER_LOWER], upper=self._joints[J_INNER_UPPER],
                                 acceleration=self._amax, dt=accel_dt)
        self._escape_direction = None if escape is None else escape.direction
        if escape is None:
            return False
        # The escape within this step's position bounds; the damped solve gets the rest of the task and the
        # rest of each bound (both bounds keep their signs: lo <= kick <= hi), so the sum meets every bound.
        n, lo, hi = self._n, self._lo, self._hi
        kick = np.minimum(np.maximum(escape.velocity, lo), hi)                                     # (n,)
        if halt_all:
            lo, hi = self._joints[J_FREE_LOWER], self._joints[J_FREE_UPPER]
        if primary > 0:                     # a stacked task's first rows keep their priority in the rest
            prioritized_dls_into(A, b - A @ kick, primary, self._work[2 * n:3 * n], lo - kick, hi - kick,
                                 self._scalars[S_SIGMA], self._scalars[S_DAMPING], self._dq, self._fixed,
                                 self._work[4 * n:])
        else:
            bounded_dls_into(A, b - A @ kick, self._work[2 * n:3 * n], lo - kick, hi - kick, self._scalars[S_SIGMA],
                             self._scalars[S_DAMPING], self._dq, self._fixed, self._work[4 * n:])
        self._dq += kick
        return True

    def _halt_all_scale(self, positions: np.ndarray, velocities: np.ndarray, dt: float) -> tuple[float, int]:
        """`limits.halt_all_scale` of `velocities` at `positions` with this chain's margins and limits."""
        joints = self._joints
        return halt_all_scale(velocities, positions, joints[J_INNER_LOWER], joints[J_INNER_UPPER], self._amax, dt)

    def _halting(self, blocking: int, halt: float, velocities: np.ndarray, which: str, parameter: str
                 ) -> tuple[tuple[str, ...], ServoStatus, str]:
        """(locked joints, status, sentence start) while joint `blocking` halts `which` joints: halted (`halt` 0,
        the joint at its margin and reported locked) or slowing them all so that it stops there."""
        name = self.robot.joint_names[blocking]
        side = "upper" if velocities[blocking] > 0.0 else "lower"
        if halt == 0.0:
            text = f"{name} is at its {side} limit margin: {which} halted ({parameter})"
        else:
            text = f"{which} slowing to stop {name} at its {side} limit margin ({parameter})"
        return ((name,) if halt == 0.0 else ()), ServoStatus.JOINT_BOUND, f"{ServoStatus.JOINT_BOUND.sentence}: {text}"

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
