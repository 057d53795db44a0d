"""Print the parameter table of a config dataclass as Markdown (the tables of docs/parameters.md come from here)."""
from __future__ import annotations

import argparse
import importlib

from robokin_ros.core.schema import default_of, param_name, parameter_fields

CONFIGS = {
    "servo": "robokin_ros.core.servo.config:ServoConfig",
    "sim": "robokin_ros.core.sim.config:SimRobotConfig",
    "path": "robokin_ros.core.path.config:PathConfig",
    "capability": "robokin_ros.core.capability.config:CapabilityConfig",
}


def markdown_table(cls: type) -> str:
    """One row per parameter: name, default, unit, bounds, description."""
    rows = ["| parameter | default | unit | allowed | description |", "|---|---|---|---|---|"]
    for f in parameter_fields(cls):
        meta = f.metadata
        bounds = [f"{word} {meta[key]}" for key, word in (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<="))
                  if meta.get(key) is not None]
        if meta.get("choices"):
            bounds.append(" / ".join(meta["choices"]))
        default = default_of(f)
        shown = _shown(default)
        read_only = " (read-only at run time)" if meta.get("read_only") else ""
        rows.append(f"| `{param_name(f)}` | `{shown}` | {meta.get('unit', '')} | {', '.join(bounds)} | "
                    f"{meta.get('doc', '')}{read_only} |")
    return "\n".join(rows)


def _shown(default) -> str:
    """A default as YAML writes it: booleans lower case, lists in brackets."""
    if isinstance(default, bool):
        return str(default).lower()
    if isinstance(default, tuple):
        return "[" + ", ".join(_shown(v) for v in default) + "]"
    return repr(default)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("config", choices=sorted(CONFIGS))
    module, name = CONFIGS[parser.parse_args().config].split(":")
    print(markdown_table(getattr(importlib.import_module(module), name)))


if __name__ == "__main__":
    main()
