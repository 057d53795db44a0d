"""Collision-aware speed scaling with MoveIt Servo's stop-distance parameters.

MoveIt Servo's "stop_distance" collision check (moveit2 `moveit_ros/moveit_servo/src/collision_check.cpp`, the
`K_STOP_DISTANCE` branch; ROS 1 moveit_servo has the same code), in our words:

- d is the smallest distance over self and scene pairs, d_dot its rate, estimated as the change of d since the
  previous check divided by the check period;
- the worst-case stop time T is the longest time any joint needs to brake at its acceleration limit,
  max_i |dq_i| / a_i (`ServoCalcs::calculateWorstCaseStopTime`);
- the velocity scale is 0 when d < `min_allowable_collision_distance` and d is not growing; else, when d shrinks,
  the time to collision d / |d_dot| is compared with `collision_distance_safety_factor` * T and the scale is 0
  when it is shorter; otherwise (and always when d grows or holds) it is 1. A detected collision also gives 0.
  The factor must be >= 1 and the minimum distance >= 0 (its readParams rejects other values).

Here, with d and its gradient from `ClearanceChecker.check`:

- d_dot = gradient @ dq is the rate of the commanded joint velocity, not a finite difference of past checks, so
  the check reacts in the tick the command changes;
- motion with d_dot >= 0 (not decreasing d) is never blocked, even in contact, so the arm can always back out
  (MoveIt stops every motion once in collision);
- instead of MoveIt's all-or-nothing scale, the scale s is the largest fraction of dq that passes MoveIt's test
  measured to the minimum distance rather than to contact. Scaling dq by s scales d_dot and T by s, and the test
  becomes: the distance covered during one check period at the scaled rate plus the safety factor times the
  braking distance estimate must fit in the margin,

      s |d_dot| period + k s^2 |d_dot| T <= d - d_min,

  so s falls continuously to 0 as d reaches d_min (decelerate, then halt) and is 1 far away. Below d_min any
  approaching motion halts (MoveIt's first rule). With period = 0 the factor k applies to T alone, as in MoveIt.
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robokin_ros.core.collision.clearance import Clearance
from robokin_ros.core.errors import InvalidInputError

# Rates below this [m/s] count as "not approaching": a gradient from GJK witness points is noisy at ~1e-9.
APPROACH_EPSILON = 1e-9


class CollisionVerdict(enum.Enum):
    """What the collision check lets through; the servo maps DECELERATE / HALT to its status codes."""

    OK = "clear"
    DECELERATE = "decelerating for collision"
    HALT = "halted for collision"


@dataclass(frozen=True)
class CollisionScaling:
    """Speed scale for one commanded joint velocity."""

    scale: float                 # [0, 1] multiply the commanded joint velocity by this
    verdict: CollisionVerdict
    message: str                 # one sentence naming the pair and the distance [mm]
    distance_rate: float         # [m/s] d_dot of the unscaled command (negative: approaching)
    stop_time: float             # [s] worst-case braking time of the unscaled command


def collision_scaling(clearance: Clearance, velocities: npt.ArrayLike, *, safety_factor: float,
                      min_allowable_distance: float, acceleration_limits: npt.ArrayLike,
                      period: float = 0.0) -> CollisionScaling:
    """Scale for the joint velocity `velocities` (n,) [rad/s | m/s] about to be commanded (module docstring).

    Args:
        clearance: the nearest pair at the current positions, with its gradient.
        velocities: the joint velocity the servo is about to command.
        safety_factor: MoveIt's `collision_distance_safety_factor` (>= 1) on the braking distance.
        min_allowable_distance: MoveIt's `min_allowable_collision_distance` [m] (>= 0): approaching halts below.
        acceleration_limits: (n,) [rad/s^2 | m/s^2] > 0, inf for none; gives the worst-case stop time.
        period: [s] (>= 0) time until the next check, during which the scaled command runs unchecked.

    Raises:
        InvalidInputError: parameters out of range, or vectors of the wrong size or with NaN.
    """
    dq = np.asarray(velocities, dtype=float)
    accel = np.asarray(acceleration_limits, dtype=float)
    _check(clearance, dq, accel, safety_factor, min_allowable_distance, period)
    rate = float(clearance.gradient @ dq) if np.isfinite(clearance.distance) else 0.0
    stop_time = float(np.max(np.abs(dq) / accel, initial=0.0))
    pair, distance = " and ".join(clearance.names), clearance.distance
    if not math.isfinite(distance):
        return CollisionScaling(1.0, CollisionVerdict.OK, "clear of collision: there is no pair to check", rate,
                                stop_time)
    if rate >= -APPROACH_EPSILON:
        word = "nearest pair" if clearance.exact else "nearest computed pair"
        return CollisionScaling(1.0, CollisionVerdict.OK, f"clear of collision: {word} {pair} is "
                                f"{_mm(distance)} apart and not closing in", rate, stop_time)
    margin = distance - min_allowable_distance
    if margin <= 0.0:
        return CollisionScaling(0.0, CollisionVerdict.HALT, f"halted for collision: {pair} are {_mm(distance)} "
                                f"apart, below min_allowable_collision_distance {_mm(min_allowable_distance)}",
                                rate, stop_time)
    scale = min(1.0, _largest_scale(margin, -rate, stop_time, safety_factor, period))
    if scale >= 1.0:
        return CollisionScaling(1.0, CollisionVerdict.OK, f"clear of collision: {pair} are {_mm(distance)} apart, "
                                f"closing at {-rate * 1e3:.1f} mm/s, far enough to stop", rate, stop_time)
    return CollisionScaling(scale, CollisionVerdict.DECELERATE, f"decelerating to {100 * scale:.0f} % for collision: "
                            f"{pair} are {_mm(distance)} apart, closing at {-rate * 1e3:.1f} mm/s", rate, stop_time)


def _largest_scale(margin: float, approach: float, stop_time: float, safety_factor: float, period: float) -> float:
    """Largest s >= 0 with s * approach * period + k * s^2 * approach * stop_time <= margin (approach > 0)."""
    quadratic = safety_factor * approach * stop_time
    linear = approach * period
    if quadratic > 0.0:
        # positive root of quadratic s^2 + linear s - margin = 0, written to avoid cancellation
        return 2.0 * margin / (linear + math.sqrt(linear * linear + 4.0 * quadratic * margin))
    if linear > 0.0:
        return margin / linear
    return math.inf


def _mm(distance: float) -> str:
    return f"{distance * 1e3:.1f} mm" if math.isfinite(distance) else "far"


def _check(clearance: Clearance, dq: np.ndarray, accel: np.ndarray, safety_factor: float,
           min_allowable_distance: float, period: float) -> None:
    n = clearance.gradient.shape[0]
    problems = []
    if dq.shape != (n,) or not np.isfinite(dq).all():
        problems.append(f"velocities must be {n} finite values, got {dq.tolist()}")
    if accel.shape != (n,) or not (accel > 0.0).all():
        problems.append(f"acceleration_limits must be {n} values > 0 (inf for none), got {accel.tolist()}")
    if not safety_factor >= 1.0 or not math.isfinite(safety_factor):
        problems.append(f"collision_distance_safety_factor={safety_factor!r} must be >= 1 and finite")
    if not min_allowable_distance >= 0.0 or not math.isfinite(min_allowable_distance):
        problems.append(f"min_allowable_collision_distance={min_allowable_distance!r} must be >= 0 [m]")
    if not period >= 0.0 or not math.isfinite(period):
        problems.append(f"period={period!r} must be >= 0 [s]")
    if problems:
        raise InvalidInputError("collision scaling: " + "; ".join(problems))
