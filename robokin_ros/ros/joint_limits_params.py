"""Joint jerk limits from MoveIt's joint limit parameters (`robot_description_planning`), for robots whose MoveIt
configuration gives them.

URDF's <limit> and the SRDF carry no jerk; MoveIt (move_group, MoveIt Servo) reads it from parameters a MoveIt
config's joint_limits.yaml sets, which moveit_configs_utils passes to every node as
`robot_description_planning.joint_limits.<joint>.{has_jerk_limits, max_jerk}`. MoveIt's RobotModelLoader declares
each of those parameters when the node has not (a node made without `automatically_declare_parameters_from_overrides`
has declared nothing), and reads `max_jerk` only where `has_jerk_limits` is true; robokin does the same, so one
parameter file means the same limits to both.

Which jerk limit a node uses (`with_planning_jerk`): its own `max_joint_jerk` when set; else MoveIt's, per joint,
with `default_joint_jerk` for the chain joints MoveIt leaves without one; else `default_joint_jerk` (0 = none), as
before. Without MoveIt jerk parameters the config is returned as it is, unchanged.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node

from robokin_ros.core.errors import ConfigError
from robokin_ros.core.schema import with_parameters

PLANNING_NAMESPACE = "robot_description_planning"      # MoveIt's `<robot_description>_planning`
# [rad/s^3] a larger jerk limit is taken for a mistake (a unit slip): the bound of the servo and path schemas'
# default_joint_jerk; the largest published arm figure robokin knows is Franka's 10000 rad/s^3
MAX_PLAUSIBLE_JERK = 1e6


def jerk_parameter_names(joint: str, namespace: str = PLANNING_NAMESPACE) -> tuple[str, str]:
    """(has_jerk_limits, max_jerk) parameter names of one joint, as MoveIt reads them."""
    prefix = f"{namespace}.joint_limits.{joint}."
    return f"{prefix}has_jerk_limits", f"{prefix}max_jerk"


def _parameter(node: Node, name: str) -> Any:
    """A parameter's value, None when not set; declared first (read once at start-up, any type, so that a wrong
    one gets robokin's sentence rather than rclpy's) unless the node already has it."""
    if not node.has_parameter(name):
        descriptor = ParameterDescriptor(description="MoveIt joint limit (joint_limits.yaml), read at start-up",
                                         read_only=True, dynamic_typing=True)
        return node.declare_parameter(name, None, descriptor).value
    return node.get_parameter(name).value


def _jerk(joint: str, namespace: str, node: Node, problems: list[str]) -> float:
    """One joint's jerk limit [rad/s^3] from its parameters, inf when it has none; a problem recorded when the
    parameters are wrong."""
    has_name, max_name = jerk_parameter_names(joint, namespace)
    has_limit, value = _parameter(node, has_name), _parameter(node, max_name)
    if has_limit is None or has_limit is False:
        return math.inf                                # MoveIt reads max_jerk only when has_jerk_limits is true
    if has_limit is not True:
        problems.append(f"{has_name}={has_limit!r} must be true or false")
        return math.inf
    if value is None:
        problems.append(f"{has_name} is true but {max_name} is not set; give the joint's jerk limit [rad/s^3]")
        return math.inf
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        problems.append(f"{max_name}={value!r} must be a number [rad/s^3]")
        return math.inf
    if not math.isfinite(value) or value <= 0.0:
        problems.append(f"{max_name}={value!r} must be a finite jerk limit above 0 [rad/s^3]")
        return math.inf
    if value > MAX_PLAUSIBLE_JERK:
        problems.append(f"{max_name}={value!r} is above {MAX_PLAUSIBLE_JERK:g} rad/s^3: not a joint's jerk limit "
                        "(a unit mistake?)")
        return math.inf
    return float(value)


def planning_jerk_limits(node: Node, joint_names: Sequence[str],
                         namespace: str = PLANNING_NAMESPACE) -> tuple[float, ...] | None:
    """Per-joint jerk limits [rad/s^3] of `joint_names` (chain order) from MoveIt's joint limit parameters on
    `node`: inf for a joint without one; None when no joint has one (no MoveIt jerk limits: nothing changes).

    Raises:
        ConfigError: naming every wrong parameter at once (has_jerk_limits not a boolean; max_jerk missing,
            not a number, NaN, infinite, 0, negative or implausibly large).
    """
    problems: list[str] = []
    limits = tuple(_jerk(joint, namespace, node, problems) for joint in joint_names)
    if problems:
        raise ConfigError(problems, f"MoveIt joint limit parameters ({namespace}) of node "
                                    f"'{node.get_fully_qualified_name()}'")
    return limits if any(math.isfinite(j) for j in limits) else None


def merged_max_joint_jerk(max_joint_jerk: Sequence[float], planning: Sequence[float] | None,
                          default_joint_jerk: float, joint_names: Sequence[str]) -> tuple[float, ...]:
    """The `max_joint_jerk` a node uses: its own when set; else MoveIt's `planning` (from `planning_jerk_limits`),
    with `default_joint_jerk` for the joints MoveIt leaves without a limit; else its own (empty: the default
    applies to every joint).

    Raises:
        ConfigError: MoveIt limits some joints, not the others, and default_joint_jerk is 0 (no limit): a jerk
            limit on part of the chain only is not a configuration robokin runs.
    """
    if max_joint_jerk or planning is None:
        return tuple(max_joint_jerk)
    missing = [name for name, j in zip(joint_names, planning) if not math.isfinite(j)]
    if missing and default_joint_jerk <= 0.0:
        raise ConfigError([f"{PLANNING_NAMESPACE} gives jerk limits for some joints but not for "
                           f"{', '.join(missing)}; give has_jerk_limits and max_jerk for every chain joint, or set "
                           "default_joint_jerk (for the others) or max_joint_jerk (for all)"])
    return tuple(j if math.isfinite(j) else float(default_joint_jerk) for j in planning)


def with_planning_jerk(config: Any, node: Node, joint_names: Sequence[str],
                       namespace: str = PLANNING_NAMESPACE) -> Any:
    """`config` (a servo or path config) with the jerk limits MoveIt's parameters give, when the node's own
    `max_joint_jerk` is empty; the same object when there are none or the node sets its own (see the module
    docstring). Reads (and declares) the parameters of every chain joint in `joint_names`, unless the node's own
    max_joint_jerk makes them irrelevant.

    Raises:
        ConfigError: a wrong MoveIt parameter (`planning_jerk_limits`), or a chain limited only in part
            (`merged_max_joint_jerk`).
    """
    if config.max_joint_jerk:
        return config
    planning = planning_jerk_limits(node, joint_names, namespace)
    if planning is None:
        return config
    merged = merged_max_joint_jerk(config.max_joint_jerk, planning, config.default_joint_jerk, joint_names)
    node.get_logger().info(f"joint jerk limits from {namespace} (MoveIt's joint_limits): "
                           f"{', '.join(f'{n}={j:g}' for n, j in zip(joint_names, merged))} rad/s^3")
    return with_parameters(config, {"max_joint_jerk": merged})
