"""The one rule for every scaling and speed input, wherever it comes from (goals, programs, the CLI, the studio).

Scalings are fractions of the joint velocity or acceleration limits: an action goal's `velocity_scaling` and
`acceleration_scaling`, a move's `joint_speed_scaling` / `acceleration_scaling` (`joint_speed` / `acceleration` in
program files), a program's fractions, plan_path's `--velocity-scaling` / `--acceleration-scaling`.
- a finite number in (0, 1] is used as given;
- exactly 0 (or absent) means the default: the next level's value (a move's -> the program's or goal's -> the node's
  `velocity_scaling` / `acceleration_scaling` parameter, default 1.0);
- anything else (above 1, negative, NaN, inf, not a number) is refused: InvalidInputError (a goal ends with
  INVALID_GOAL, a program file or the CLI with an error) whose message names the field, its value and this rule.

Speeds are absolute: a move's `speed` [m/s] and `angular_speed` [rad/s] are finite numbers >= 0, 0 = no tool limit.

The node parameters themselves (`velocity_scaling`, `acceleration_scaling` of path_ik_node, the servo's
`velocity_scaling` and `override_velocity_scaling_factor`) are validated by their config schema with the same range;
they are the defaults, so 0 has no default to mean there, except for MoveIt Servo's override (0 = no override).
"""
from __future__ import annotations

import math

from robokin_ros.core.errors import InvalidInputError

SCALING_RULE = "a scaling must be a finite number in (0, 1] (a fraction of the limits), or 0 for the default"
SPEED_RULE = "a speed must be a finite number >= 0, 0 for no limit"


def _number(value) -> float | None:
    """`value` as a float, None when it is not a number (bools are not numbers here)."""
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def scaling_problem(name: str, value, default: str = "the default") -> str | None:
    """Why `value` breaks the scaling rule, None when it is 0 or in (0, 1]: a sentence naming the field `name`, the
    value and the rule, `default` saying what 0 stands for."""
    number = _number(value)
    if number is not None and math.isfinite(number) and 0.0 <= number <= 1.0:
        return None
    return f"{name}={value!r} is refused: {SCALING_RULE.replace('the default', default)}"


def resolve_scaling(name: str, value, default: float, default_name: str = "the default") -> float:
    """The scaling to use for `value`: `default` when it is None or 0, else the value itself, in (0, 1].

    Raises:
        InvalidInputError: the value breaks the rule (`scaling_problem`'s sentence, with the default's value).
    """
    if value is None:
        return float(default)
    problem = scaling_problem(name, value, f"{default_name}, {default:g}")
    if problem is not None:
        raise InvalidInputError(problem)
    number = float(value)
    return float(default) if number == 0.0 else number


def speed_problem(name: str, value, unit: str) -> str | None:
    """Why `value` [unit] breaks the speed rule, None when it is a finite number >= 0."""
    number = _number(value)
    if number is not None and math.isfinite(number) and number >= 0.0:
        return None
    return f"{name}={value!r} {unit} is refused: {SPEED_RULE}"
