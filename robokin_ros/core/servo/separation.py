"""Speed and separation monitoring (ISO/TS 15066 style): a person's distance -> the tool speed allowed now.

The allowed tool speed grows linearly with the separation distance d [m]:
    v_max = v_safe * min(d, d_safety) / d_safety          for d >= d_protective
    v_max = 0                                             for d <  d_protective (protective stop)
This module only says the limit; the servo brings the arm down to it within its acceleration limits.

A distance sensor that drops out must never speed the arm up. With no reading yet, or with a reading older than
`timeout`, the limit is the *slowest* speed: the one at the protective distance, v_safe * d_protective / d_safety
(the least a fresh reading can allow without stopping). A stale reading can lower this further but never raise
it: when the last reading was a protective stop, the stop holds (a person who was that close may be closer now).
Readings come with their receive time on the caller's clock; the monitor never reads a clock.
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from robokin_ros.core.errors import ConfigError, InvalidInputError
from robokin_ros.core.validation import check_time, is_real_number

DEFAULT_V_SAFE = 0.25          # [m/s] ISO 10218-1's reduced speed: the tool speed allowed with nobody near
DEFAULT_D_SAFETY = 1.0         # [m] at and beyond this distance the full v_safe is allowed
DEFAULT_D_PROTECTIVE = 0.3     # [m] closer than this: protective stop
DEFAULT_TIMEOUT = 0.2          # [s] safety scanners publish at 25-50 Hz, depth cameras at 30 Hz: a few missed scans


class SeparationVerdict(enum.Enum):
    """Why the tool speed is what it is; the value is the sentence without numbers."""

    OK = "nobody within the safety distance: full speed allowed"
    SLOWED = "a person within the safety distance: tool speed scaled down with the distance"
    PROTECTIVE_STOP = "a person within the protective distance: protective stop"
    STALE = "the separation distance is stale: slowest speed, or stopped if the last reading was a stop"
    NO_READING = "no separation distance received yet: slowest speed"


@dataclass(frozen=True)
class SeparationLimit:
    """The tool speed allowed at one instant, why, and the reading it rests on."""

    speed: float                 # [m/s] allowed tool linear speed, >= 0
    verdict: SeparationVerdict
    distance: float              # [m] last accepted reading (nan when there is none)
    age: float                   # [s] now - its receive time (nan when there is none)
    message: str                 # one sentence for a person, with the numbers


def speed_scale(allowed_speed: float, commanded_speed: float) -> float:
    """Uniform factor in [0, 1] that brings a commanded tool linear speed down to the allowed one.

    Multiply the whole command (linear and angular, or the joint velocities) by it, so the motion keeps its
    direction. A command already within the limit, or no motion at all, gets 1.

    Args:
        allowed_speed: [m/s] from `SeparationMonitor.speed_limit`, >= 0.
        commanded_speed: [m/s] norm of the commanded tool linear velocity, >= 0.

    Raises:
        InvalidInputError: a negative or non-finite speed (named).
    """
    for name, value in (("allowed_speed", allowed_speed), ("commanded_speed", commanded_speed)):
        if not (is_real_number(value) and math.isfinite(value) and value >= 0.0):
            raise InvalidInputError(f"{name} must be a finite speed >= 0 [m/s], got {value!r}")
    if commanded_speed <= allowed_speed:
        return 1.0
    return min(1.0, max(0.0, allowed_speed / commanded_speed))


class SeparationMonitor:
    """Keeps the last good separation distance and answers the allowed tool speed at any time."""

    def __init__(self, v_safe: float = DEFAULT_V_SAFE, d_safety: float = DEFAULT_D_SAFETY,
                 d_protective: float = DEFAULT_D_PROTECTIVE, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Validate and store the parameters.

        Args:
            v_safe: [m/s] tool speed allowed at and beyond `d_safety`, > 0.
            d_safety: [m] distance from which the full `v_safe` is allowed, > d_protective.
            d_protective: [m] closer than this: protective stop (speed 0), >= 0.
            timeout: [s] a reading older than this is stale, > 0.

        Raises:
            ConfigError: listing every bad value with its name.
        """
        problems = _parameter_problems(v_safe=v_safe, d_safety=d_safety, d_protective=d_protective,
                                       timeout=timeout)
        if problems:
            raise ConfigError(problems, "separation monitoring parameters")
        self.v_safe, self.d_safety = float(v_safe), float(d_safety)
        self.d_protective, self.timeout = float(d_protective), float(timeout)
        self._distance = math.nan            # [m] last accepted reading
        self._received_at = math.nan         # [s] its receive time

    @property
    def slowest_speed(self) -> float:
        """[m/s] the speed at the protective distance: the limit while the distance is unknown or stale."""
        return self.v_safe * self.d_protective / self.d_safety

    def speed_at(self, distance: float) -> float:
        """[m/s] the allowed tool speed at a separation `distance` [m] (the formula alone, no timing)."""
        distance = _check_distance(distance)
        if distance < self.d_protective:
            return 0.0
        return self.v_safe * min(distance, self.d_safety) / self.d_safety

    def set_distance(self, distance: float, received_at: float) -> None:
        """Store a reading [m] received at `received_at` [s]; a rejected reading leaves the last good one in place.

        Raises:
            InvalidInputError: a NaN, infinite or negative distance, or a non-finite receive time.
        """
        distance = _check_distance(distance)
        check_time("received_at", received_at)
        self._distance, self._received_at = distance, float(received_at)

    def speed_limit(self, now: float) -> SeparationLimit:
        """The tool speed allowed at `now` [s] (same clock as the receive times), with verdict and message.

        A reading whose receive time is more than `timeout` after `now` (the clock jumped back) is not trusted
        either: it counts as stale.
        """
        check_time("now", now)
        distance, age = self._distance, float(now) - self._received_at
        if math.isnan(distance):
            return self._limit(self.slowest_speed, SeparationVerdict.NO_READING, distance, age)
        if abs(age) > self.timeout:
            # min(): a dropout may not release a protective stop, nor allow more than the last reading did
            speed = min(self.slowest_speed, self.speed_at(distance))
            return self._limit(speed, SeparationVerdict.STALE, distance, age)
        speed = self.speed_at(distance)
        if distance < self.d_protective:
            verdict = SeparationVerdict.PROTECTIVE_STOP
        elif distance < self.d_safety:
            verdict = SeparationVerdict.SLOWED
        else:
            verdict = SeparationVerdict.OK
        return self._limit(speed, verdict, distance, age)

    def _limit(self, speed: float, verdict: SeparationVerdict, distance: float, age: float) -> SeparationLimit:
        return SeparationLimit(speed, verdict, distance, age, self._message(speed, verdict, distance, age))

    def _message(self, speed: float, verdict: SeparationVerdict, distance: float, age: float) -> str:
        """One sentence with the numbers in mm, mm/s and ms."""
        v, d, ms = speed * 1e3, distance * 1e3, age * 1e3
        if verdict is SeparationVerdict.NO_READING:
            return f"no separation distance received yet: tool speed limited to the slowest, {v:.0f} mm/s"
        if verdict is SeparationVerdict.STALE:
            held = " (the last reading was a protective stop, which holds)" if speed == 0.0 else ", the slowest"
            return (f"separation distance is stale (last reading {d:.0f} mm, {ms:.0f} ms old, timeout "
                    f"{self.timeout * 1e3:.0f} ms): tool speed limited to {v:.0f} mm/s{held}")
        if verdict is SeparationVerdict.PROTECTIVE_STOP:
            return (f"person {d:.0f} mm away, within the protective distance {self.d_protective * 1e3:.0f} mm: "
                    f"protective stop, tool speed limited to {v:.0f} mm/s (reading {ms:.0f} ms old)")
        if verdict is SeparationVerdict.SLOWED:
            return (f"person {d:.0f} mm away, within the safety distance {self.d_safety * 1e3:.0f} mm: tool speed "
                    f"limited to {v:.0f} mm/s (reading {ms:.0f} ms old)")
        return (f"nearest person {d:.0f} mm away, beyond the safety distance {self.d_safety * 1e3:.0f} mm: full "
                f"tool speed {v:.0f} mm/s allowed (reading {ms:.0f} ms old)")


def _check_distance(distance: float) -> float:
    if not (is_real_number(distance) and math.isfinite(distance) and distance >= 0.0):
        raise InvalidInputError(f"separation distance must be a finite distance >= 0 [m], got {distance!r}")
    return float(distance)


def _parameter_problems(**values: float) -> list[str]:
    """Every bound the parameters break, each naming the parameter and its value; then the cross-field rule."""
    bounds = {"v_safe": ("m/s", 0.0, True), "d_safety": ("m", 0.0, True), "d_protective": ("m", 0.0, False),
              "timeout": ("s", 0.0, True)}
    problems = []
    for name, (unit, lower, strict) in bounds.items():
        value = values[name]
        if not (is_real_number(value) and math.isfinite(value)):
            problems.append(f"{name}={value!r} [{unit}] must be a finite number")
        elif value < lower or (strict and value == lower):
            problems.append(f"{name}={value!r} [{unit}] must be {'>' if strict else '>='} {lower}")
    if not problems and values["d_protective"] >= values["d_safety"]:
        # equal distances would make the "slowest" speed the full v_safe: a dropout must never allow that
        problems.append(f"d_protective={values['d_protective']!r} [m] must be < d_safety={values['d_safety']!r} [m]")
    return problems
