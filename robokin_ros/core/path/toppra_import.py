"""toppra without matplotlib at import time.

toppra imports matplotlib.pyplot when it is imported (`toppra.algorithm` unconditionally), for plotting helpers
robokin never calls. That cost every path-planning process ~28 MB of resident memory and 0.3-0.8 s of start-up
(bench/node_footprint.py). `import_toppra` imports toppra while `matplotlib` and `matplotlib.pyplot` are
stand-ins that import the real pyplot on their first attribute access, so toppra's plotting still works if
someone calls it, and takes the stand-ins out of `sys.modules` again right after: whoever imports matplotlib later
gets the real package.
"""
from __future__ import annotations

import importlib
import sys
import types

_STAND_INS = ("matplotlib", "matplotlib.pyplot")


class _DeferredModule(types.ModuleType):
    """Holds the place of a module; the first attribute read imports the real one and reads from it."""

    def __getattr__(self, attribute: str):
        # introspection (copy, pickle, inspect) must not load it; nor can anything while it stands in
        if attribute.startswith("__") or sys.modules.get(self.__name__) is self:
            raise AttributeError(f"module {self.__name__!r} has no attribute {attribute!r} (not loaded yet)")
        return getattr(importlib.import_module(self.__name__), attribute)


def import_toppra() -> types.ModuleType:
    """toppra, with `toppra.algorithm` and `toppra.constraint`; matplotlib only if it was imported before."""
    stand_ins: dict[str, _DeferredModule] = {}
    if "toppra" not in sys.modules and "matplotlib.pyplot" not in sys.modules:
        stand_ins = {name: _DeferredModule(name) for name in _STAND_INS if name not in sys.modules}
        if "matplotlib" in stand_ins:
            # a package holding its submodule, as `import matplotlib.pyplot as plt` reads it
            stand_ins["matplotlib"].__path__ = []
            stand_ins["matplotlib"].pyplot = stand_ins["matplotlib.pyplot"]
        sys.modules.update(stand_ins)
    try:
        import toppra
        import toppra.algorithm
        import toppra.constraint  # noqa: F401 - an attribute of toppra from here on
    finally:
        for name, stand_in in stand_ins.items():
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]
    _answer_solvers_once(toppra)
    return toppra


def _answer_solvers_once(toppra: types.ModuleType) -> None:
    """Every toppra instance asks `toppra.solverwrapper.available_solvers` which optional solver packages are
    installed, and that searches the import path each time (~0.1 ms, a tenth of a small section's toppra run, paid
    by every section of a path); the answer cannot change in a process, so the first one is kept."""
    wrapper = toppra.solverwrapper
    if getattr(wrapper.available_solvers, "answered_once", False):
        return
    answer = wrapper.available_solvers(output_msg=False)

    def available_solvers(output_msg: bool = True):
        if output_msg:
            print(answer)
        return answer
    available_solvers.answered_once = True
    wrapper.available_solvers = available_solvers
