"""The configuration schema: fields declared once with docs, units and bounds, validated whole on construction.

`ros/params.py` turns the field metadata into ROS parameter declarations (name = `param` metadata or the
field name), so the ROS parameter schema and the core validation can never drift apart.
"""
from __future__ import annotations

import math
from dataclasses import MISSING, field, fields
from typing import Any

from robokin_ros.core.errors import ConfigError


def spec(default: Any, doc: str, *, unit: str = "", param: str | None = None, gt: float | None = None,
         ge: float | None = None, le: float | None = None, lt: float | None = None,
         choices: tuple[str, ...] | None = None, read_only: bool = False) -> Any:
    """A dataclass field with its parameter metadata (lists are stored as tuples: frozen)."""
    meta = {"doc": doc, "unit": unit, "param": param, "gt": gt, "ge": ge, "le": le, "lt": lt,
            "choices": choices, "read_only": read_only}
    return field(default=default, metadata=meta)


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


def default_of(f) -> Any:
    """A field's default value."""
    return f.default if f.default is not MISSING else f.default_factory()
