"""ROS parameters declared from a config dataclass's field metadata, read back whole, updated whole.

The dataclass (see `core/config.py`) is the single schema: each field becomes one parameter with its
description, unit, bounds and read-only flag, so `ros2 param describe` shows what the core validates.
Every invalid value is collected before failing, like MoveIt Servo's `validateParams`, so a user fixes
a parameter file in one pass instead of one error per start-up.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, ParameterType, SetParametersResult
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.node import Node
from rclpy.parameter import Parameter

from robokin_ros.core.errors import ConfigError, RobokinError
from robokin_ros.core.schema import (
    build_config,
    default_of,
    param_name,
    parameter_aliases,
    parameter_fields,
    with_parameters,
)
from robokin_ros.ros.moveit_servo_params import warn_unsupported

_SCALAR_TYPES = ((bool, ParameterType.PARAMETER_BOOL, "true or false"),
                 (int, ParameterType.PARAMETER_INTEGER, "an integer"),
                 (float, ParameterType.PARAMETER_DOUBLE, "a number with a decimal point, e.g. 1.0"),
                 (str, ParameterType.PARAMETER_STRING, "a string"))


def _kind(default: Any, item_type: type | None = None) -> tuple[type, int, str]:
    """(python type, ParameterType, wording) of a field, from its default (bool before int: bool is an int) or,
    for a list, from its `item_type` metadata when it names one (an empty default cannot show its entries' type)."""
    if isinstance(default, tuple):
        if item_type is str:
            return tuple, ParameterType.PARAMETER_STRING_ARRAY, "a list of strings"
        if default and all(isinstance(v, bool) for v in default):
            return tuple, ParameterType.PARAMETER_BOOL_ARRAY, "a list of booleans"
        return tuple, ParameterType.PARAMETER_DOUBLE_ARRAY, "a list of numbers"
    for py_type, ros_type, words in _SCALAR_TYPES:
        if isinstance(default, py_type):
            return py_type, ros_type, words
    raise TypeError(f"config default {default!r} has no ROS parameter type")


def _descriptor(f: dataclasses.Field, default: Any) -> ParameterDescriptor:
    meta = f.metadata
    py_type, ros_type, _ = _kind(default, meta.get("item_type"))
    text = meta.get("doc", "")
    if meta.get("unit"):
        text += f" [{meta['unit']}]"
    if meta.get("choices"):
        text += f"; one of {list(meta['choices'])}"
    descriptor = ParameterDescriptor(description=text, read_only=bool(meta.get("read_only")))
    if py_type is tuple:
        # Dynamic typing: YAML `[]` arrives as NOT_SET and `[15, 20]` as an integer array; both are fine.
        descriptor.type = ros_type
        descriptor.dynamic_typing = True
        return descriptor
    low = meta.get("ge") if meta.get("ge") is not None else meta.get("gt")
    high = meta.get("le") if meta.get("le") is not None else meta.get("lt")
    if low is not None and high is not None:
        # Inclusive ranges are informational; the dataclass still enforces strict gt/lt bounds.
        if py_type is float:
            descriptor.floating_point_range = [FloatingPointRange(from_value=float(low), to_value=float(high))]
        elif py_type is int:
            descriptor.integer_range = [IntegerRange(from_value=int(low), to_value=int(high), step=1)]
    return descriptor


def to_field_value(f: dataclasses.Field, value: Any, name: str | None = None) -> Any:
    """A parameter value converted to the field's Python type; ConfigError naming the parameter (`name`, default
    the field's parameter name) if it cannot."""
    name = name or param_name(f)
    py_type, ros_type, words = _kind(default_of(f), f.metadata.get("item_type"))
    if py_type is tuple:
        if value is None:                       # YAML `[]` reaches rclpy as "not set"
            return ()
        if ros_type == ParameterType.PARAMETER_STRING_ARRAY:
            if isinstance(value, (str, bytes)) or not all(isinstance(v, str) for v in value):
                raise ConfigError([f"{name}={value!r} must be {words}"])
            return tuple(value)
        booleans = ros_type == ParameterType.PARAMETER_BOOL_ARRAY
        if isinstance(value, (str, bytes, bool, int, float)) or not all(
                isinstance(v, bool) if booleans else isinstance(v, (int, float)) and not isinstance(v, bool)
                for v in value):
            raise ConfigError([f"{name}={value!r} must be {words}"])
        return tuple(bool(v) for v in value) if booleans else tuple(float(v) for v in value)
    if value is None:
        raise ConfigError([f"{name} has no value; it must be {words}"])
    if py_type is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, py_type) or (py_type is int and isinstance(value, bool)):
        raise ConfigError([f"{name}={value!r} must be {words}"])
    return value


def declare_config(node: Node, cls: type, overrides: dict[str, Any] | None = None) -> Any:
    """Declare one parameter per field of config dataclass `cls`, read them and build the config.

    Args:
        node: the node that owns the parameters.
        cls: a frozen config dataclass built with `core.config.spec`.
        overrides: {parameter name: default} replacing the dataclass defaults for this node
            (parameter files and `-p` arguments still win).

    Every name in `parameter_aliases(cls)` (MoveIt Servo's names) is declared too, read-only: a value given
    under an alias becomes the parameter's value, and the same setting given under two names with different
    values is an error (which one was meant cannot be known). For a config with MoveIt names, every MoveIt
    Servo parameter the node was given but has no counterpart for is named in one warning
    (`moveit_servo_params.warn_unsupported`).

    Returns:
        An instance of `cls`.

    Raises:
        ConfigError: listing every invalid value at once (wrong type, out of range, cross-field rules).
    """
    overrides = dict(overrides or {})
    names = {param_name(f) for f in parameter_fields(cls)}
    unknown = sorted(set(overrides) - names)
    if unknown:
        raise ConfigError([f"unknown parameter '{u}'; valid: {sorted(names)}" for u in unknown])
    aliases = parameter_aliases(cls)
    problems: list[str] = []
    values: dict[str, Any] = {}
    for f in parameter_fields(cls):
        name = param_name(f)
        default = overrides.get(name, default_of(f))
        if isinstance(default, list):
            default = tuple(default)
        fallback, known = default, len(problems)
        given = _declare_aliases(node, f, name, aliases.get(name, ()), problems)
        if given:
            default = next(iter(given.values()))
        value = _declare_one(node, f, name, default, problems, fallback, ", ".join(given))
        try:
            values[name] = to_field_value(f, value)
        except ConfigError as err:
            problems += err.problems
            values[name] = default
            continue
        if given and len(problems) == known and values[name] != default:
            problems.append(_conflict(name, values[name], given))
    if aliases:
        warn_unsupported(node)
    try:
        config = build_config(cls, values)
    except ConfigError as err:
        problems += err.problems
    if problems:
        raise ConfigError(problems, f"{cls.__name__} parameters of node '{node.get_fully_qualified_name()}'")
    return config


def _declare_aliases(node: Node, f: dataclasses.Field, name: str, aliases: tuple[str, ...],
                     problems: list[str]) -> dict[str, Any]:
    """Declare the other names of parameter `name` (read-only, unset unless a parameter file or `-p` sets them);
    {alias: value} of those set, in the field's type. Aliases that disagree are a problem; then none is used."""
    given: dict[str, Any] = {}
    for alias in aliases:
        descriptor = ParameterDescriptor(
            description=f"MoveIt Servo's name for {name}, read once at start-up (change {name} at run time)",
            read_only=True, dynamic_typing=True)
        value = node.declare_parameter(alias, None, descriptor).value
        if value is None:
            continue
        try:
            given[alias] = to_field_value(f, value, alias)
        except ConfigError as err:
            problems += err.problems
    if len(set(given.values())) > 1:
        problems.append(_conflict(None, None, given))
        return {}
    for alias in given:
        node.get_logger().info(f"parameter {alias} (MoveIt Servo's name) sets {name}")
    return given


def _conflict(name: str | None, value: Any, given: dict[str, Any]) -> str:
    """The problem of one setting given different values under its names."""
    settings = ([f"{name}={value!r}"] if name else []) + [f"{alias}={v!r}" for alias, v in given.items()]
    return f"{' and '.join(settings)} set the same parameter to different values; set it under one name only"


def _declare_one(node: Node, f: dataclasses.Field, name: str, default: Any, problems: list[str],
                 fallback: Any = None, given_as: str = "") -> Any:
    """Declare a parameter; a rejected value is recorded and `fallback` (default: `default`) declared instead.

    `given_as` names the alias a default came from, so that a problem with it names what the user wrote."""
    ros_default = _ros_value(default)
    where = f" (given as {given_as})" if given_as else ""
    try:
        return node.declare_parameter(name, ros_default, _descriptor(f, default)).value
    except InvalidParameterTypeException as err:
        problems.append(f"{err.args[0]} ({name} must be {_kind(default, f.metadata.get('item_type'))[2]}){where}")
    except InvalidParameterValueException as err:
        problems.append(str(err.args[0]).split("Reason: ", 1)[-1] + where)
    fallback = default if fallback is None else fallback
    return node.declare_parameter(name, _ros_value(fallback), _descriptor(f, fallback), ignore_override=True).value


def _ros_value(value: Any) -> Any:
    """A field value as a ROS parameter value: tuples become lists, an empty one "not set"."""
    return None if value == () else (list(value) if isinstance(value, tuple) else value)


def watch_config(node: Node, get: Callable[[], Any], apply: Callable[[Any], None]) -> None:
    """Validate runtime parameter changes as a whole new config, then hand it to `apply`.

    A change is rejected (with the reason shown to the caller of set_parameters) when the new config
    breaks a rule or `apply` raises RobokinError; otherwise `apply` receives the whole new object, so
    nothing is half applied. Parameters that are not fields of the config are left to other callbacks.

    Args:
        node: the node whose parameters were declared with `declare_config`.
        get: returns the current config.
        apply: installs a new config; raises RobokinError to refuse it.
    """
    by_param = {param_name(f): f for f in parameter_fields(type(get()))}

    def on_set(parameters: list[Parameter]) -> SetParametersResult:
        changes: dict[str, Any] = {}
        problems: list[str] = []
        for parameter in parameters:
            f = by_param.get(parameter.name)
            if f is None:
                continue
            try:
                changes[parameter.name] = to_field_value(f, parameter.value)
            except ConfigError as err:
                problems += err.problems
        if problems:
            return SetParametersResult(successful=False, reason=str(ConfigError(problems, "parameter update")))
        if not changes:
            return SetParametersResult(successful=True)
        try:
            apply(with_parameters(get(), changes))
        except RobokinError as err:
            return SetParametersResult(successful=False, reason=str(err))
        return SetParametersResult(successful=True)

    node.add_on_set_parameters_callback(on_set)
