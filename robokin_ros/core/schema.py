"""The configuration schema: fields declared once with docs, units and bounds, validated whole on construction.

Every node config derives from `NodeConfig`, which declares the robot-source fields once and validates the
whole object (every bound, every cross-field rule) in one `ConfigError`. `ros/params.py` turns the field
metadata into ROS parameter declarations (name = `param` metadata or the field name), so the ROS parameter
schema and the core validation can never drift apart.

Parameters with dotted names may be held in nested groups (`group`): a `ParameterGroup` field whose parameters
are named `<prefix><field name>` (`pose_tracking.linear_gain` is `config.pose_tracking.linear_gain`). The
parameters of a config are its leaves in declaration order (`parameter_fields`); a config built from parameter
values (`build_config`, `with_parameters`) is validated once, whole, under the parameters' names.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any, ClassVar

from robokin_ros.core.errors import ConfigError


def spec(default: Any, doc: str, *, unit: str = "", param: str | None = None, gt: float | None = None,
         ge: float | None = None, le: float | None = None, lt: float | None = None,
         choices: tuple[str, ...] | None = None, read_only: bool = False, per_joint: bool = False,
         one_for_all: bool = False, item_type: type | None = None) -> Any:
    """A dataclass field with its parameter metadata (lists are stored as tuples: frozen).

    `per_joint`: a list that is empty or has one entry per chain joint (checked by `check_joint_lists`);
    with `one_for_all`, a single entry is allowed too and applies to every joint (see `per_joint_values`).
    `item_type`: the type of a list's entries when the default cannot show it (`str` for a list of names; an
    empty list is otherwise a list of numbers).
    """
    meta = {"doc": doc, "unit": unit, "param": param, "gt": gt, "ge": ge, "le": le, "lt": lt,
            "choices": choices, "read_only": read_only, "per_joint": per_joint, "one_for_all": one_for_all,
            "item_type": item_type}
    return field(default=default, metadata=meta)


# MoveIt Servo (Jazzy and later) reads its parameters under this namespace: `moveit_servo.publish_period`.
MOVEIT_SERVO_NAMESPACE = "moveit_servo"


_BOUNDS = (("gt", float.__gt__, ">"), ("ge", float.__ge__, ">="), ("lt", float.__lt__, "<"),
           ("le", float.__le__, "<="))


def _bound_problems(name: str, value: Any, meta: dict) -> list[str]:
    """The first bound a field's value (or any entry of a tuple value) breaks, and a bad choice."""
    choices = meta.get("choices")
    if choices is not None and value not in choices:
        return [f"{name}={value!r} must be one of {list(choices)}"]
    if meta.get("item_type") is str:
        if not isinstance(value, tuple) or not all(isinstance(v, str) for v in value):
            return [f"{name}={value!r} must be a list of strings"]
        return []
    for v in (value if isinstance(value, tuple) else (value,)):
        if isinstance(v, (bool, str)):
            continue
        if not isinstance(v, (int, float)):
            return [f"{name}={value!r} must be a number"]
        if not math.isfinite(v):
            return [f"{name}={value!r} must be finite"]
        for key, holds, word in _BOUNDS:
            bound = meta.get(key)
            if bound is not None and not holds(float(v), float(bound)):
                return [f"{name}={value!r} must be {word} {bound}"]
    return []


def param_name(f) -> str:
    """The ROS parameter name of a config field."""
    return f.metadata.get("param") or f.name


def group(cls: type, prefix: str) -> Any:
    """A dataclass field holding the parameter group `cls` (a `ParameterGroup`), whose parameters are named
    `prefix` + the field name (unless a field gives its own `param`)."""
    return field(default_factory=cls, metadata={"group": cls, "prefix": prefix})


@functools.cache
def parameter_fields(cls: type) -> tuple[Field, ...]:
    """The parameters of config class `cls`: its fields, each group replaced by its own parameters, in declaration
    order. Each is a copy of the declaring field whose `param` metadata is the full parameter name and whose
    `path` metadata is the attribute names that reach it (`param_name` and `default_of` work on them)."""
    return tuple(_leaves(cls, "", ()))


def _leaves(cls: type, prefix: str, path: tuple[str, ...]):
    for f in fields(cls):
        meta = f.metadata
        if meta.get("group") is not None:
            yield from _leaves(meta["group"], prefix + meta["prefix"], path + (f.name,))
            continue
        leaf = field(default=f.default, default_factory=f.default_factory,
                     metadata={**meta, "param": meta.get("param") or prefix + f.name, "path": path + (f.name,)})
        leaf.name, leaf.type = f.name, f.type
        yield leaf


def _value(config: Any, path: tuple[str, ...]) -> Any:
    for name in path:
        config = getattr(config, name)
    return config


def parameter_values(config: Any) -> dict[str, Any]:
    """{parameter name: value} of every parameter of a config, in declaration order."""
    return {param_name(f): _value(config, f.metadata["path"]) for f in parameter_fields(type(config))}


def field_problems(config: Any) -> list[str]:
    """Bound and choice violations of every parameter, each naming the parameter and its value."""
    problems = []
    for f in parameter_fields(type(config)):
        problems += _bound_problems(param_name(f), _value(config, f.metadata["path"]), f.metadata)
    return problems


def coerce_sequences(config: Any) -> None:
    """Store list values as tuples so the frozen config is hashable and cannot be mutated in place."""
    for f in parameter_fields(type(config)):
        path = f.metadata["path"]
        value = _value(config, path)
        if isinstance(value, list):
            object.__setattr__(_value(config, path[:-1]), path[-1], tuple(value))


def build_config(cls: type, values: dict[str, Any]) -> Any:
    """`cls` from {parameter name: value} (the others at their defaults), validated once, whole, under the
    parameters' names (its groups are filled unchecked: the config checks every parameter). Unknown names are
    reported with the valid ones."""
    by_param = {param_name(f): f.metadata["path"] for f in parameter_fields(cls)}
    unknown = sorted(set(values) - set(by_param))
    if unknown:
        raise ConfigError([f"unknown parameter '{u}'; valid: {sorted(by_param)}" for u in unknown])
    nested: dict[str, Any] = {}
    for name, value in values.items():
        *groups, attribute = by_param[name]
        level = nested
        for g in groups:
            level = level.setdefault(g, {})
        level[attribute] = value
    return cls(**_arguments(cls, nested))


def _arguments(cls: type, nested: dict[str, Any]) -> dict[str, Any]:
    """The constructor arguments of `cls` from nested {attribute: value}: a group given any value is built from
    its defaults and those values without its own check."""
    arguments = {}
    for f in fields(cls):
        if f.name not in nested:
            continue
        value, group_cls = nested[f.name], f.metadata.get("group")
        if group_cls is not None:
            value = _unchecked(group_cls, _arguments(group_cls, value))
        arguments[f.name] = value
    return arguments


def _unchecked(cls: type, values: dict[str, Any]) -> Any:
    """A frozen group filled with its defaults and `values`, without running its checks."""
    group_object = object.__new__(cls)
    for f in fields(cls):
        object.__setattr__(group_object, f.name, values[f.name] if f.name in values else default_of(f))
    return group_object


def config_from_mapping(cls: type, values: dict[str, Any]) -> Any:
    """Build `cls` from {parameter name: value}; unknown names are reported with the valid ones."""
    return build_config(cls, values)


def with_parameters(config: Any, changes: dict[str, Any]) -> Any:
    """A new config: `config` with the parameters in {parameter name: value} changed, validated whole."""
    return build_config(type(config), {**parameter_values(config), **changes})


def parameter_aliases(cls: type) -> dict[str, tuple[str, ...]]:
    """{parameter name: the other names it is accepted under} from the config's `moveit_names`: MoveIt Servo's
    name bare (as Humble/Iron parameter files write it) and under `moveit_servo.` (as Jazzy's do); a name equal
    to robokin's is not repeated."""
    aliases = {}
    for name, moveit in cls.moveit_names.items():
        candidates = (moveit, f"{MOVEIT_SERVO_NAMESPACE}.{moveit}")
        aliases[name] = tuple(alias for alias in candidates if alias != name)
    return aliases


def per_joint_values(values: tuple, n: int) -> tuple:
    """A `one_for_all` list as n values: a single entry repeated, or the list itself."""
    return tuple(values) * n if len(values) == 1 else tuple(values)


def default_of(f) -> Any:
    """A field's default value."""
    return f.default if f.default is not MISSING else f.default_factory()


class CheckedOnCreation:
    """Checks every field against its spec, and the rules across fields, when the dataclass is built; ConfigError
    lists every problem, naming the whole as `what` says."""

    what: ClassVar[str] = "parameters"

    def __post_init__(self) -> None:
        coerce_sequences(self)
        problems = field_problems(self) + self.cross_field_problems()
        if problems:
            raise ConfigError(problems, self.what)

    def cross_field_problems(self) -> list[str]:
        """Rules that involve more than one field; each entry names the parameters and their values."""
        return []


@dataclass(frozen=True)
class ParameterGroup(CheckedOnCreation):
    """Base of a nested parameter group (see `group`). Built alone it checks its own fields under their own
    names; inside a config, the config checks them under their full parameter names."""


@dataclass(frozen=True)
class NodeConfig(CheckedOnCreation):
    """Base of every node configuration: where the robot comes from, and whole-object validation.

    Subclasses add their fields (declared with `spec`) and may override `cross_field_problems`; `what` names
    the configuration in error messages.
    """

    what: ClassVar[str] = "configuration"
    # {parameter name: MoveIt Servo's name for the same setting}; see `parameter_aliases`
    moveit_names: ClassVar[dict[str, str]] = {}

    robot: str = spec("", "embedded robot name, URDF or xacro file path; ignored when robot_description is set; "
                          "with neither, the model comes from the robot_description topic", read_only=True)
    robot_description: str = spec("", "URDF XML; overrides `robot` when not empty", read_only=True)
    base_frame: str = spec("", "base frame of the chain (empty = robot default)", read_only=True)
    tip_frame: str = spec("", "tool frame at the end of the chain (empty = robot default)", read_only=True)
    tip_frames: tuple[str, ...] = spec((), "every tip of a robot with several arms, the first being tip_frame "
                                           "(empty = the robot's default tips: all of an embedded multi-arm robot, "
                                           "else tip_frame)", read_only=True, item_type=str)
    xacro_args: str = spec("", "arguments of a xacro `robot` file: 'name:=value name:=value'", read_only=True)
    robot_description_timeout: float = spec(10.0, "longest wait for the robot_description topic (transient local) "
                                            "when neither robot nor robot_description is set; 0 = do not wait",
                                            unit="s", ge=0.0, read_only=True)

    def check_joint_lists(self, joint_names: Iterable[str]) -> None:
        """Per-joint lists must be empty or have one entry per chain joint; ConfigError lists every mismatch."""
        names = list(joint_names)
        problems = []
        for f in parameter_fields(type(self)):
            if not f.metadata.get("per_joint"):
                continue
            size, one_for_all = len(_value(self, f.metadata["path"])), f.metadata.get("one_for_all")
            if size and size != len(names) and not (one_for_all and size == 1):
                problems.append(f"{param_name(f)} has {size} entries but the chain has {len(names)} joints {names}"
                                + (" (or give one entry for all)" if one_for_all else ""))
        if problems:
            raise ConfigError(problems, self.what)
