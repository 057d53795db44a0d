"""Hand guiding: a mass-damper admittance turns the wrench a person applies to the tool into a tool twist.

Per axis, M dv/dt + D v = F_eff, diagonal and the same for the three linear axes (M = mass [kg], D = damping
[N s/m]) and for the three angular axes (M = inertia [kg m^2], D = angular damping [N m s/rad]). The wrench is
sampled, so F_eff is held over each tick, and the tick uses the exact solution of the first-order system:
    v_next = F/D + (v - F/D) * exp(-D dt / M)
The factor exp(-D dt / M) lies in (0, 1] for every dt >= 0, so the step is stable for any tick length (forward
Euler needs dt < 2 M / D), and a constant push F settles at exactly F / D, in the direction of F.

F_eff = saturate(deadband(F_measured - bias)), separately for the force and the torque:
- dead band on the norm: below the threshold the push is zero; above it, the threshold is subtracted along the
  push's direction, so the effective push grows from 0 with no jump (sensor noise and a resting hand do nothing);
- saturation of the norm: a hard knock or an overloaded sensor cannot ask for more than a firm push.
A constant push F (|F| above the dead band, below the saturation plus dead band) therefore settles at
(|F| - deadband) / D along F / |F|. The output twist is capped in norm (linear, angular); the cap limits the
state itself, so a long hard push does not wind up a velocity that would keep the arm moving after release.

A wrench older than `wrench_timeout` (or none yet) counts as zero force and the result reports it stale: the
servo pauses guiding (ramps to rest) and ends it after a longer gap (guiding_input.py). A reading whose force or
torque exceeds `max_force` / `max_torque` is refused, as a NaN one is: readings and the bias taken from them stay
far from overflow. The twist is in the axes the wrench is given in, or in the axes `frame_R_sensor` rotates
it to; the bias is subtracted in sensor axes first, where a sensor's offset is constant.
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass

import numpy as np

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.servo.config import HandGuidingConfig
from robokin_ros.core.validation import check_time, check_vector

# |R^T R - I| above this is not a rotation but a wiring mistake (a transform with scale, or garbage)
ROTATION_TOLERANCE = 1e-6


class GuidingStatus(enum.Enum):
    """What the admittance did this tick; the value is the sentence without numbers."""

    GUIDING = "following the hand"
    IN_DEADBAND = "no push beyond the dead band: coming to rest"
    FORCE_SATURATED = "push beyond the saturation: following the clipped push"
    SPEED_CAPPED = "guided speed at its cap"
    STALE_WRENCH = "the wrench is stale: force taken as zero, guiding must stop"
    NO_WRENCH = "no wrench received yet: force taken as zero, guiding must stop"

    @property
    def stale(self) -> bool:
        """True when the force input is missing or too old: the servo must stop guiding."""
        return self in (GuidingStatus.STALE_WRENCH, GuidingStatus.NO_WRENCH)


@dataclass(frozen=True)
class AdmittanceOutput:
    """One admittance tick: the tool twist to command, and why."""

    twist: np.ndarray            # (6,) [m/s, rad/s] [v; w] in the wrench's (rotated) axes
    status: GuidingStatus
    wrench: np.ndarray           # (6,) [N, N m] effective wrench that drove this tick (zeros when stale)
    age: float                   # [s] now - receive time of the wrench (nan when none)
    message: str                 # one sentence for a person, with the numbers

    @property
    def stale(self) -> bool:
        """True when guiding must stop (no wrench, or a stale one)."""
        return self.status.stale


def deadband(vector: np.ndarray, threshold: float) -> np.ndarray:
    """Zero when |vector| <= threshold [same unit], else `vector` shortened by `threshold`: continuous at it."""
    norm = math.hypot(*vector)           # hypot scales internally: no overflow for huge finite entries
    if norm <= threshold:
        return np.zeros_like(vector)
    return vector * ((norm - threshold) / norm)


def saturate(vector: np.ndarray, limit: float) -> np.ndarray:
    """`vector` scaled down, direction kept, so its norm is at most `limit` [same unit]."""
    norm = math.hypot(*vector)
    return vector if norm <= limit else vector * (limit / norm)


def effective_wrench(wrench: np.ndarray, params: HandGuidingConfig) -> np.ndarray:
    """(6,) [N, N m] saturate(deadband(wrench)) for force and torque separately; `wrench` is bias-free."""
    force = saturate(deadband(wrench[:3], params.force_deadband), params.force_saturation)
    torque = saturate(deadband(wrench[3:], params.torque_deadband), params.torque_saturation)
    return np.concatenate((force, torque))


def relax(velocity: np.ndarray, wrench: np.ndarray, dt: float, params: HandGuidingConfig) -> np.ndarray:
    """(6,) twist [m/s, rad/s] after `dt` [s] of M dv/dt + D v = wrench, the wrench held constant (exact).

    Written as v e + F (dt / M) phi(x), x = D dt / M, e = exp(-x), phi(x) = (1 - e) / x, so that it stays finite
    for every accepted parameter: F / D overflowed for a damping of 1e-320 (and inf - inf gave NaN)."""
    out = np.empty(6)
    for part, m, d in ((slice(0, 3), params.mass, params.damping),
                       (slice(3, 6), params.inertia, params.angular_damping)):
        x = d * dt / m
        if x > 1.0 or not math.isfinite(dt / m):     # stiff: the push's share is (1 - e) of F / D
            gain = -math.expm1(-x) / d
        else:                                         # the push's share is F dt / M times phi(x) in (0.63, 1]
            gain = (dt / m) * (-math.expm1(-x) / x if x > 1e-12 else 1.0)
        out[part] = velocity[part] * math.exp(-x) + wrench[part] * gain
    return out


class HandGuiding:
    """The admittance with its state: feed wrenches as they arrive, call `step(now)` once per servo tick."""

    def __init__(self, params: HandGuidingConfig | None = None) -> None:
        self.params = HandGuidingConfig() if params is None else params
        self._bias = np.zeros(6)                 # [N, N m] in sensor axes
        self._wrench: np.ndarray | None = None   # (6,) [N, N m] last accepted wrench, sensor axes, bias included
        self._frame_R_sensor = np.eye(3)         # rotation that came with it
        self._received_at = math.nan             # [s]
        self._velocity = np.zeros(6)             # (6,) [m/s, rad/s] the admittance state = the output twist
        self._last_step = math.nan               # [s] time of the previous step

    @property
    def bias(self) -> np.ndarray:
        """(6,) [N, N m] the wrench subtracted from every reading, in sensor axes."""
        return self._bias.copy()

    @property
    def velocity(self) -> np.ndarray:
        """(6,) [m/s, rad/s] the current admittance twist."""
        return self._velocity.copy()

    def zero_bias(self, wrench: np.ndarray) -> None:
        """Take `wrench` (6,) [N, N m], sensor axes, as the no-push reading (call when guiding is enabled).

        Raises:
            InvalidInputError: wrong size or NaN/inf; the previous bias stays.
        """
        self._bias = check_vector("bias wrench", wrench, 6).copy()

    def reset(self) -> None:
        """Back to rest: zero twist, and the next `step` starts the clock (bias and last wrench are kept)."""
        self._velocity = np.zeros(6)
        self._last_step = math.nan

    def set_wrench(self, wrench: np.ndarray, received_at: float, frame_R_sensor: np.ndarray | None = None) -> None:
        """Store a wrench reading; a rejected one leaves the previous reading in place.

        Args:
            wrench: (6,) [N, N m] [force; torque] in sensor axes, torque about the point the twist is about.
            received_at: [s] receive time, on the clock `step` is called with.
            frame_R_sensor: (3, 3) rotation from sensor axes to the axes the twist should come out in (e.g. the
                base, at the time of the reading); None = sensor axes.

        Raises:
            InvalidInputError: wrong size, NaN/inf, a force or torque beyond `max_force` / `max_torque`, a non-finite
                time or a matrix that is not a rotation.
        """
        wrench = check_vector("wrench", wrench, 6).copy()
        # Finite is not enough: the reading minus the bias must stay finite (a bias of -1e308 N and a push of
        # +1e308 N gave inf - inf = NaN inside the admittance, and NaN joint velocities after it).
        force, torque = math.hypot(*wrench[:3]), math.hypot(*wrench[3:])
        if force > self.params.max_force or torque > self.params.max_torque:
            raise InvalidInputError(f"wrench of {force:.6g} N, {torque:.6g} N m exceeds hand_guiding.max_force "
                                    f"{self.params.max_force:g} N / max_torque {self.params.max_torque:g} N m: not a "
                                    "physical reading (a sensor fault, or the wrong units?)")
        check_time("received_at", received_at)
        rotation = np.eye(3) if frame_R_sensor is None else _check_rotation(frame_R_sensor)
        self._wrench, self._received_at, self._frame_R_sensor = wrench, float(received_at), rotation

    def step(self, now: float) -> AdmittanceOutput:
        """Advance the admittance to `now` [s] with the latest wrench; the tool twist to command.

        The first step after construction or `reset` only starts the clock. Time going backwards counts as dt=0.

        Raises:
            InvalidInputError: a non-finite `now`.
        """
        check_time("now", now)
        now = float(now)
        dt = 0.0 if math.isnan(self._last_step) else max(0.0, now - self._last_step)
        self._last_step = now
        age = now - self._received_at
        # abs(): a reading stamped far after `now` means the clock jumped back; it is not trusted either
        fresh = self._wrench is not None and abs(age) <= self.params.wrench_timeout
        pushed = self._pushed() if fresh else np.zeros(6)
        wrench = effective_wrench(pushed, self.params)
        velocity = relax(self._velocity, wrench, dt, self.params)
        self._velocity = np.concatenate((saturate(velocity[:3], self.params.max_linear_speed),
                                         saturate(velocity[3:], self.params.max_angular_speed)))
        if not fresh:
            status = GuidingStatus.NO_WRENCH if self._wrench is None else GuidingStatus.STALE_WRENCH
        elif not np.array_equal(self._velocity, velocity):
            status = GuidingStatus.SPEED_CAPPED
        elif self._saturated(pushed):
            status = GuidingStatus.FORCE_SATURATED
        else:
            status = GuidingStatus.GUIDING if wrench.any() else GuidingStatus.IN_DEADBAND
        return AdmittanceOutput(self._velocity.copy(), status, wrench, age, self._message(status, pushed, age))

    def _pushed(self) -> np.ndarray:
        """(6,) [N, N m] the last reading minus the bias, in the output axes."""
        R, raw = self._frame_R_sensor, self._wrench - self._bias       # (3, 3), (6,) sensor axes
        return np.concatenate((R @ raw[:3], R @ raw[3:]))

    def _saturated(self, pushed: np.ndarray) -> bool:
        """True when the force or the torque beyond its dead band exceeds its saturation (so it was clipped)."""
        p = self.params
        return (math.hypot(*pushed[:3]) - p.force_deadband > p.force_saturation
                or math.hypot(*pushed[3:]) - p.torque_deadband > p.torque_saturation)

    def _message(self, status: GuidingStatus, pushed: np.ndarray, age: float) -> str:
        """One sentence with the numbers: the push, the resulting speed, the wrench's age."""
        p, v = self.params, self._velocity
        speed = f"{math.hypot(*v[:3]) * 1e3:.0f} mm/s, {math.hypot(*v[3:]):.2f} rad/s"
        push = f"{math.hypot(*pushed[:3]):.1f} N, {math.hypot(*pushed[3:]):.2f} N m"
        if status is GuidingStatus.NO_WRENCH:
            return f"no wrench received yet: force taken as zero, guiding must stop (moving at {speed})"
        if status is GuidingStatus.STALE_WRENCH:
            return (f"wrench is {age * 1e3:.0f} ms old (timeout {p.wrench_timeout * 1e3:.0f} ms): force taken as "
                    f"zero, guiding must stop (moving at {speed})")
        if status is GuidingStatus.SPEED_CAPPED:
            return (f"push of {push} asks for more than the cap of {p.max_linear_speed * 1e3:.0f} mm/s, "
                    f"{p.max_angular_speed:.2f} rad/s: moving at {speed}")
        if status is GuidingStatus.FORCE_SATURATED:
            return (f"push of {push} clipped to {p.force_saturation:.1f} N, {p.torque_saturation:.2f} N m beyond "
                    f"the dead band: moving at {speed}")
        if status is GuidingStatus.IN_DEADBAND:
            return (f"push of {push} within the dead band ({p.force_deadband:.1f} N, {p.torque_deadband:.2f} N m): "
                    f"coming to rest, moving at {speed}")
        return f"following a push of {push}: moving at {speed}"


def _check_rotation(matrix: np.ndarray) -> np.ndarray:
    R = np.asarray(matrix, dtype=np.float64)
    if R.shape != (3, 3) or not np.isfinite(R).all():
        raise InvalidInputError(f"frame_R_sensor must be a finite (3, 3) rotation, got shape {R.shape}: {R.tolist()}")
    error = float(np.abs(R.T @ R - np.eye(3)).max())
    if error > ROTATION_TOLERANCE or np.linalg.det(R) < 0.0:
        raise InvalidInputError(f"frame_R_sensor is not a rotation (|R^T R - I| = {error:.3g}, det = "
                                f"{np.linalg.det(R):.3g})")
    return R.copy()
