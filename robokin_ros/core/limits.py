"""Joint limits turned into velocity bounds, null-space limit avoidance, velocity/acceleration scaling.

numba kernels on plain float64 arrays (`cache=True`), used by `velocity_ik.VelocityIk` each tick. Infinite
limits (continuous joints, no velocity or acceleration limit) are allowed everywhere and simply never bind.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numba import njit

from robokin_ros.core.errors import ConfigError

# Outcome codes of `limit_velocity` (how the final velocity was obtained).
LIMIT_NONE = 0              # nothing bound: the input velocity unchanged
LIMIT_VELOCITY = 1          # uniform scale for the joint velocity limits
LIMIT_ACCELERATION = 2      # uniform scale for the acceleration limits (direction kept)
LIMIT_ACCELERATION_CLIP = 3  # no uniform scale fits: a step toward the wanted velocity, as far as the window allows
LIMIT_POSITION_CLIP = 4     # a final clip to the position bounds changed the result


@njit(cache=True)
def braking_speed(distance: float, acceleration: float, dt: float) -> float:
    """Largest speed [rad/s] that can be held for one period `dt` [s] and then braked continuously at
    `acceleration` [rad/s^2] to rest within `distance` [rad]: the root of v dt + v^2 / (2 a) = d.

    This is the motion of the servo's window (`servo.window`): the next command holds for dt, then the joint
    brakes at its limit to stop at the margin. Bounding each tick by it keeps the commands consistent with the
    windows: from a state on the braking curve (v^2 / (2 a) = d, where a late tick finds it) the next bound is
    sqrt(v^2 + a^2 dt^2) - a dt, in [v - a dt, v], so the velocity never changes faster than `acceleration` and
    the window never passes the margin. (Bounding by the period-by-period stop, which covers about v dt / 2
    less, let the window pass the margin by that much and then called for up to 1.25x the limit after a late
    tick.) Written as 2 d / (dt + sqrt(dt^2 + 2 d / a)), which has no cancellation for small d, and gives d / dt
    (one period to the edge) without an acceleration limit; inf without a limit (infinite distance).
    """
    if distance == np.inf:
        return np.inf
    return 2.0 * distance / (dt + np.sqrt(dt * dt + 2.0 * distance / acceleration))


@njit(cache=True)
def position_velocity_bounds(q, lower, upper, margin, dt, acceleration, lo_out, hi_out):
    """Velocity bounds that keep every joint inside [lower + margin, upper - margin] after `dt`.

    A joint already inside the margin (or beyond its limit) gets a zero bound on that side: it may only
    move back inward. Elsewhere the bound is `braking_speed`: the speed the joint can hold for dt and still
    brake to rest at the margin with its acceleration limit (at most the distance over dt).

    Args:
        q: (n,) positions [rad | m]. lower, upper: (n,) limits, +/-inf allowed.
        margin: [rad | m] >= 0. dt: step [s] > 0. acceleration: (n,) limits [rad/s^2], inf allowed.
        lo_out, hi_out: (n,) outputs [rad/s]; lo_out <= 0 <= hi_out.
    """
    for j in range(q.shape[0]):
        room_up = upper[j] - margin - q[j]
        room_down = q[j] - (lower[j] + margin)
        hi_out[j] = 0.0 if room_up <= 0.0 else braking_speed(room_up, acceleration[j], dt)
        lo_out[j] = 0.0 if room_down <= 0.0 else -braking_speed(room_down, acceleration[j], dt)


# A joint moving slower than this [rad/s | m/s] cannot block a halt-all motion: rounding noise of a solve must not
# halt the arm (in 1 s it moves 1e-9 rad).
HALT_SPEED_EPS = 1e-9


@njit(cache=True)
def halt_all_scale(dq, q, inner_lower, inner_upper, acceleration, dt):
    """Largest uniform factor s in [0, 1] for `dq` with which every joint can still stop at its margin, all
    joints decelerating together (MoveIt Servo's "halt all joints").

    The motion s * dq is treated as one: along it, joint j has room_j / |dq_j| [s] of factor-time left before
    its margin, and the factor may fall by at most min_k(acceleration_k / |dq_k|) per second, or some joint
    would decelerate faster than its limit. The factor is then the braking speed (`braking_speed`) of that
    one-dimensional motion, so the joint with the least room stops exactly at its margin while every joint
    slows in proportion: the tool keeps the commanded direction. Within each joint's own braking bound
    (`position_velocity_bounds`): braking_speed scales linearly with distance and acceleration together.

    Args:
        dq: (n,) wanted velocity. q: (n,) positions. inner_lower, inner_upper: (n,) the limits less the
            margins (+/-inf allowed). acceleration: (n,) limits [rad/s^2 | m/s^2], inf allowed. dt: step [s].

    Returns:
        (s, blocking): the factor, and the index of the joint that sets it (-1 when none does: s = 1).
    """
    room = np.inf            # factor-time [s] to the nearest margin along dq
    blocking = -1
    rate = np.inf            # how fast the factor may fall [1/s]
    for j in range(dq.shape[0]):
        speed = abs(dq[j])
        if speed <= HALT_SPEED_EPS:
            continue
        rate = min(rate, acceleration[j] / speed)
        r = ((inner_upper[j] - q[j]) if dq[j] > 0.0 else (q[j] - inner_lower[j])) / speed
        if r < room:
            room, blocking = r, j
    if blocking < 0:
        return 1.0, -1
    if room <= 0.0:
        return 0.0, blocking
    s = braking_speed(room, rate, dt)
    return (1.0, -1) if s >= 1.0 else (s, blocking)


@njit(cache=True)
def nullspace_velocity(q, lower, upper, zone_width, limit_gain, home, posture_gain, out):
    """Secondary joint velocity: limit avoidance plus posture, before null-space projection.

    The one null-space push of the servo and the path IK. Limit avoidance is zero in the middle of each range
    and grows linearly, `limit_gain * depth`, across a band of `zone_width` [rad] inside either limit (depth
    [rad] = how far into that band the joint is; see `avoidance_zone_widths`). Posture pulls toward `home`
    with `posture_gain`. Per second in the servo ([1/s], the result is a velocity); per dense sample in the
    path IK (the result is a step).
    """
    for j in range(q.shape[0]):
        v = posture_gain * (home[j] - q[j])
        into_low = lower[j] + zone_width[j] - q[j]
        into_high = q[j] - (upper[j] - zone_width[j])
        if into_low > 0.0:
            v += limit_gain * into_low
        elif into_high > 0.0:
            v -= limit_gain * into_high
        out[j] = v


def avoidance_zone_widths(lower: np.ndarray, upper: np.ndarray, zone: float) -> np.ndarray:
    """Width [rad | m] of the limit-avoidance band of each joint: `zone` (a share) of its range; -inf (no
    band, no push) for a joint without two finite limits."""
    width = upper - lower
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(width), zone * width, -np.inf)


class MotionLimits(NamedTuple):
    """Joint velocity, acceleration and jerk limits in force, chain order."""

    velocity: np.ndarray        # (n,) [rad/s | m/s], inf = none
    acceleration: np.ndarray    # (n,) [rad/s^2 | m/s^2]
    jerk: np.ndarray | None = None   # (n,) [rad/s^3 | m/s^3], inf = none; None from callers that predate jerk

    @property
    def jerk_limited(self) -> bool:
        """Whether any joint has a jerk limit (the default configuration has none: jerk limiting is off)."""
        return self.jerk is not None and bool(np.isfinite(self.jerk).any())


MAX_RAMP = 10.0              # [s] the longest acceleration ramp (2 a_max / j_max) a jerk limit may ask for


def check_jerk_ramps(limits: MotionLimits, joint_names, what: str = "path configuration") -> None:
    """ConfigError naming every joint whose jerk limit is absurdly low for its acceleration limit: a ramp from
    -a_max to a_max longer than MAX_RAMP (a 15 rad/s^2 joint below 3 rad/s^3), which would make every move minutes
    long (a servo stop as long), and a path's trajectory millions of points."""
    if not limits.jerk_limited:
        return
    ramps = 2.0 * np.asarray(limits.acceleration, float) / np.asarray(limits.jerk, float)
    problems = [f"max_joint_jerk / default_joint_jerk: {limits.jerk[j]:g} rad/s^3 for {joint_names[j]} (acceleration "
                f"limit {limits.acceleration[j]:g} rad/s^2) asks for a {ramps[j]:.3g} s ramp; a jerk limit must allow "
                f"one within {MAX_RAMP:g} s (>= {2.0 * limits.acceleration[j] / MAX_RAMP:g} rad/s^3)"
                for j in np.flatnonzero(ramps > MAX_RAMP)]
    if problems:
        raise ConfigError(problems, what)


def motion_limits(robot, max_joint_velocity: Sequence[float], max_joint_acceleration: Sequence[float],
                  default_joint_acceleration: float, max_joint_jerk: Sequence[float] = (),
                  default_joint_jerk: float = 0.0) -> MotionLimits:
    """The limits a servo or path uses: per-joint config lists override the URDF; joints without an
    acceleration limit (URDF has none) get `default_joint_acceleration`. Lists are empty or sized n (the
    config's `check_joint_lists`). Jerk: `max_joint_jerk` per joint, else `default_joint_jerk` for every joint,
    where 0 means no jerk limit (URDF and SRDF have no jerk field; the default is off)."""
    velocity = np.array(max_joint_velocity or robot.limits.velocity, dtype=float)
    if max_joint_acceleration:
        acceleration = np.array(max_joint_acceleration, dtype=float)
    else:
        acceleration = np.where(np.isfinite(robot.acceleration_limits), robot.acceleration_limits,
                                default_joint_acceleration)
    if max_joint_jerk:
        jerk = np.array(max_joint_jerk, dtype=float)
    else:
        jerk = np.full(len(velocity), default_joint_jerk if default_joint_jerk > 0 else np.inf)
    return MotionLimits(velocity, acceleration, jerk)


@njit(cache=True)
def _uniform_acceleration_scale(dq, prev, amax, dt, s_max):
    """Largest s in [0, s_max] with |s dq - prev| <= amax dt on every joint, or -1 when none exists."""
    s_lo, s_hi = 0.0, s_max
    for j in range(dq.shape[0]):
        if not np.isfinite(amax[j]):
            continue
        a = amax[j] * dt
        low, high = prev[j] - a, prev[j] + a
        if dq[j] == 0.0:
            if low > 0.0 or high < 0.0:
                return -1.0
            continue
        t0, t1 = low / dq[j], high / dq[j]
        if t0 > t1:
            t0, t1 = t1, t0
        s_lo = max(s_lo, t0)
        s_hi = min(s_hi, t1)
    # a little slack: the window edges come from the same rounding as the test
    return s_hi if s_lo <= s_hi * (1.0 + 1e-12) + 1e-15 else -1.0


class LimitOutcome(NamedTuple):
    """How `limit_velocity` obtained its result."""

    scale: float        # overall uniform factor applied
    outcome: int        # a LIMIT_* code


@njit(cache=True)
def limit_velocity(dq, scale, prev, use_prev, vmax, amax, dt, lo, hi, out):
    """Scale `scale * dq` into the velocity limits, then the acceleration window, then the position bounds.

    Velocity limits apply as one uniform factor (direction kept). The acceleration window
    |out - prev| <= amax dt is also met by one uniform factor when one exists; otherwise (the previous
    velocity points elsewhere and cannot be cancelled within one tick) the velocity moves from prev straight
    toward the wanted one, as far as the tightest joint's window allows: every joint covers the same share of its
    change, so the tool's velocity changes along a straight line too. Clipping each joint into its own window
    instead bent the tool's path: a command reversing every 10 ms (a pose target chattering +-10 mm along x)
    drove the tool 12 mm sideways. Position bounds [lo, hi] (from `position_velocity_bounds`) come last and win
    over the acceleration window.

    Args:
        dq: (n,) candidate velocity. scale: uniform factor already decided (singularity slowing), in [0, 1].
        prev: (n,) previous velocity; ignored unless `use_prev`. vmax, amax: (n,) limits, inf allowed.
        dt: tick [s]. lo, hi: (n,) position-derived bounds. out: (n,) result [rad/s].

    Returns:
        LimitOutcome: the overall uniform factor applied (including `scale`) and a LIMIT_* code.
    """
    n = dq.shape[0]
    s = scale
    outcome = LIMIT_NONE
    for j in range(n):
        speed = abs(s * dq[j])
        if speed > vmax[j]:
            s = vmax[j] / abs(dq[j])
            outcome = LIMIT_VELOCITY
    if use_prev:
        s_acc = _uniform_acceleration_scale(dq, prev, amax, dt, s)
        if s_acc < 0.0:
            outcome = LIMIT_ACCELERATION_CLIP
            share = 1.0             # of the change from prev to s dq that every joint's window allows
            for j in range(n):
                change = abs(s * dq[j] - prev[j])
                if change > amax[j] * dt:
                    share = min(share, amax[j] * dt / change)
            for j in range(n):
                v = prev[j] + share * (s * dq[j] - prev[j])
                out[j] = min(max(v, -vmax[j]), vmax[j])
        else:
            if s_acc < s:
                s = s_acc
                outcome = LIMIT_ACCELERATION
            for j in range(n):
                out[j] = s * dq[j]
    else:
        for j in range(n):
            out[j] = s * dq[j]
    for j in range(n):
        v = min(max(out[j], lo[j]), hi[j])
        if v != out[j]:
            out[j] = v
            outcome = LIMIT_POSITION_CLIP
    return LimitOutcome(s, outcome)
