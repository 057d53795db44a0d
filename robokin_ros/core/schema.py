"""The configuration schema: fields declared once with docs, units and bounds, validated whole on construction.

Every node config derives from `NodeConfig`, which declares the robot-source fields once and validates the
whole object (every bound, every cross-field rule) in one `ConfigError`. `ros/params.py` turns the field
metadata into ROS parameter declarations (name = `param` metadata or the field name), so the ROS parameter
schema and the core validation can never drift apart.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar

from robokin_ros.core.errors import ConfigError


def spec(default: Any, doc: str, *, unit: str = "", param: str | None = None, gt: float | None = None,
         ge: float | None = None, le: float | None = None, lt: float | None = None,
         choices: tuple[str, ...] | None = None, read_only: bool = False, per_joint: bool = False,
         one_for_all: bool = False) -> Any:
    """A dataclass field with its parameter metadata (lists are stored as tuples: frozen).

    `per_joint`: a list that is empty or has one entry per chain joint (checked by `check_joint_lists`);
    with `one_for_all`, a single entry is allowed too and applies to every joint (see `per_joint_values`).
    """
    meta = {"doc": doc, "unit": unit, "param": param, "gt": gt, "ge": ge, "le": le, "lt": lt,
            "choices": choices, "read_only": read_only, "per_joint": per_joint, "one_for_all": one_for_all}
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


def field_problems(config: Any) -> list[str]:
    """Bound and choice violations of every field, each naming the parameter and its value."""
    problems = []
    for f in fields(config):
        problems += _bound_problems(param_name(f), getattr(config, f.name), f.metadata)
    return problems


def coerce_sequences(config: Any) -> None:
    """Store list values as tuples so the frozen config is hashable and cannot be mutated in place."""
    for f in fields(config):
        value = getattr(config, f.name)
        if isinstance(value, list):
            object.__setattr__(config, f.name, tuple(value))


def config_from_mapping(cls: type, values: dict[str, Any]) -> Any:
    """Build `cls` from {parameter name: value}; unknown names are reported with the valid ones."""
    by_param = {param_name(f): f.name for f in fields(cls)}
    unknown = sorted(set(values) - set(by_param))
    if unknown:
        raise ConfigError([f"unknown parameter '{u}'; valid: {sorted(by_param)}" for u in unknown])
    return cls(**{by_param[k]: v for k, v in values.items()})


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


@dataclass(frozen=True)
class NodeConfig:
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
    xacro_args: str = spec("", "arguments of a xacro `robot` file: 'name:=value name:=value'", read_only=True)
    robot_description_timeout: float = spec(10.0, "longest wait for the robot_description topic (transient local) "
                                            "when neither robot nor robot_description is set; 0 = do not wait",
                                            unit="s", ge=0.0, read_only=True)

    def __post_init__(self) -> None:
        coerce_sequences(self)
        problems = field_problems(self) + self.cross_field_problems()
        if problems:
            raise ConfigError(problems, self.what)

    def cross_field_problems(self) -> list[str]:
        """Rules that involve more than one field; each entry names the parameters and their values."""
        return []

    def check_joint_lists(self, joint_names: Iterable[str]) -> None:
        """Per-joint lists must be empty or have one entry per chain joint; ConfigError lists every mismatch."""
        names = list(joint_names)
        problems = []
        for f in fields(self):
            if not f.metadata.get("per_joint"):
                continue
            size, one_for_all = len(getattr(self, f.name)), f.metadata.get("one_for_all")
            if size and size != len(names) and not (one_for_all and size == 1):
                problems.append(f"{param_name(f)} has {size} entries but the chain has {len(names)} joints {names}"
                                + (" (or give one entry for all)" if one_for_all else ""))
        if problems:
            raise ConfigError(problems, self.what)
