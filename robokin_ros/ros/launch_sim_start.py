"""A launch's simulated robot starting where the arm node's parameter files say: their `sim_robot:` section (the
two-arm servo file starts the hands around a box). Free of launch, as launch_support is, so that it is testable."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import yaml


def sim_section(files: list[str]) -> dict:
    """The `sim_robot:` section of parameter files (later files winning), {} when none has one."""
    section: dict = {}
    for path in files:
        document = yaml.safe_load(Path(path).read_text()) or {}
        section.update((document.get("sim_robot") or {}).get("ros__parameters") or {})
    return section


def with_sim_section(node_class: Callable[..., object], files: list[str]) -> Callable[..., object]:
    """`node_class` (launch_ros's Node), but sim_robot also gets `sim_section(files)` before its own parameters,
    which win; every other node, and every node when no file has the section, exactly as `node_class` makes it."""
    section = sim_section(files)

    def make(**kw):
        if section and kw.get("executable") == "sim_robot":
            kw["parameters"] = [section, *kw["parameters"]]
        return node_class(**kw)
    return make
