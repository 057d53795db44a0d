"""The package's import graph: no cycles, and no layer imports one above it.

Layers, lowest first: the shared core (the modules directly in core/: errors, validation, schema, embedded, robot,
so3, spatial, limits, dls, ...; and `share_files`), the rooms the features share (`core/ik`, pose IK; `core/trajectory`,
joint trajectories and what a trajectory controller does with them: each on the shared core only, neither imports
the other), the core features (servo, path, capability, sim: each on its own, none imports another; they may use
ik and trajectory), motion programs (`program`, the one planner, built on path's declared surface
`core/path/surface.py` and nothing else of it) and the classroom toolbox (`classroom`, on path, capability and
ik), then `ros`, the ROS-free `tools` and `launch_support` (what the launch files share), then `nodes`, the ROS
`demo` and the `studio`. Imports are read from the source (also those inside functions and under TYPE_CHECKING), so
a cycle cannot hide behind a late import.

Each room of core/ (a folder) declares in its `__init__.py` the modules other rooms may import (SURFACE_MODULES);
the rest are its own, and no other room reaches into them.
"""
import ast
from pathlib import Path

import robokin_ros

PACKAGE_DIR = Path(robokin_ros.__file__).parent
SHARED_ROOMS = ("ik", "tips", "trajectory")              # below the features, above the shared core
FEATURES = ("servo", "path", "capability", "sim")
COMPOSED_FEATURES = ("program", "classroom")       # built on the features above
PATH_SURFACE = "robokin_ros.core.path.surface"      # all of core/path/ that core/program/ may import


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The package modules a file imports (`from a.b import c` counts a.b.c when that is a module)."""
    found = set()
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        found |= {name for name in names if name in modules}
    return found


def import_graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in PACKAGE_DIR.rglob("*.py")}
    modules = set(files)
    return {name: imports_of(path, modules) - {name} for name, path in files.items()}


def layer(module: str) -> tuple[int, str]:
    """(rank, group) of a module; a module may import only lower ranks, or its own group."""
    parts = module.split(".")
    if parts[1:2] == ["core"]:
        if len(parts) > 2 and parts[2] in SHARED_ROOMS:
            return 0.5, parts[2]
        if len(parts) > 2 and parts[2] in FEATURES:
            return 1, parts[2]
        if len(parts) > 2 and parts[2] in COMPOSED_FEATURES:
            return 1.5, parts[2]
        return 0, "core"
    if len(parts) == 1 or parts[1] == "share_files":
        return (0, "core") if len(parts) > 1 else (4, "api")     # robokin_ros/__init__ re-exports the core
    group = parts[1]
    return {"ros": 2, "tools": 2, "launch_support": 2, "nodes": 3, "demo": 3, "studio": 3}[group], group


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_there_is_no_import_cycle():
    graph = import_graph()
    assert len(graph) > 30 and "robokin_ros.core.servo.velocity_ik" in graph
    assert cycles(graph) == []


def declared_surface(room: str) -> set[str] | None:
    """The modules `core/<room>/__init__.py` names in SURFACE_MODULES (read from the source), or None."""
    init = PACKAGE_DIR / "core" / room / "__init__.py"
    for node in ast.walk(ast.parse(init.read_text())):
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["SURFACE_MODULES"]:
            return {f"robokin_ros.core.{room}.{name}" for name in ast.literal_eval(node.value)}
    return None


def core_rooms() -> list[str]:
    return sorted(p.parent.name for p in (PACKAGE_DIR / "core").glob("*/__init__.py"))


def room_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if parts[1:2] == ["core"] and len(parts) > 3 else None


def private_reaches(graph: dict[str, set[str]], surfaces: dict[str, set[str]]) -> list[str]:
    """Imports from one room of core/ into another room's modules that the other does not declare as its surface.

    The ROS layer, the tools, the nodes and the studio sit above the rooms and may use any of their modules."""
    return sorted(f"{module} imports {target}" for module, imported in graph.items() if room_of(module)
                  for target in imported
                  if room_of(target) not in (None, room_of(module)) and target not in surfaces[room_of(target)])


def test_every_room_declares_its_surface_and_it_exists():
    graph = import_graph()
    for room in core_rooms():
        surface = declared_surface(room)
        assert surface is not None, f"core/{room}/__init__.py declares no SURFACE_MODULES"
        assert surface <= set(graph), f"core/{room} declares modules that do not exist: {surface - set(graph)}"


def test_rooms_reach_each_other_only_through_declared_surfaces():
    graph = import_graph()
    surfaces = {room: declared_surface(room) for room in core_rooms()}
    assert declared_surface("path") == {PATH_SURFACE}           # programs plan through path's one surface module
    assert PATH_SURFACE in graph["robokin_ros.core.program.planner"]
    assert private_reaches(graph, surfaces) == []


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Imports of a module of the same rank in another group (a sibling) or of a higher rank."""
    problems = []
    for module, imported in graph.items():
        rank, group = layer(module)
        for target in imported:
            target_rank, target_group = layer(target)
            if target_group != group and target_rank >= rank:
                problems.append(f"{module} imports {target}")
    return sorted(problems)


def test_no_module_imports_a_layer_above_it_or_a_sibling_feature():
    problems = upward_imports(import_graph())
    assert problems == [], "\n".join(problems)


def test_the_shared_rooms_are_used_by_the_features():
    """core/ik and core/trajectory sit below the features: the planner, the servo and the sim import them."""
    graph = import_graph()
    assert "robokin_ros.core.ik.branch_choice" in graph["robokin_ros.core.program.planner"]
    assert "robokin_ros.core.trajectory.outgoing_check" in graph["robokin_ros.core.servo.window"]
    assert "robokin_ros.core.trajectory.controller_tolerances" in graph["robokin_ros.core.sim.joints"]


def test_the_checks_catch_what_they_are_meant_to_catch():
    """Control: a two-module cycle, an upward import and a sibling import are found."""
    assert cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
    assert layer("robokin_ros.core.limits") < layer("robokin_ros.core.servo.servo") < layer("robokin_ros.ros.params")
    assert layer("robokin_ros.core.path.solver")[0] == layer("robokin_ros.core.servo.servo")[0]
    assert layer("robokin_ros.core.path.solver")[1] != layer("robokin_ros.core.servo.servo")[1]
    assert layer("robokin_ros.core.so3") < layer("robokin_ros.core.trajectory.arrays") < layer(
        "robokin_ros.core.path.timing")
    assert layer("robokin_ros.core.ik.ur") < layer("robokin_ros.core.classroom.dh")
    assert layer("robokin_ros.share_files") == layer("robokin_ros.core.errors")
    wrong = {"robokin_ros.core.trajectory.arrays": {"robokin_ros.core.path.result", "robokin_ros.core.so3"},
             "robokin_ros.core.ik.ur": {"robokin_ros.core.trajectory.arrays"},
             "robokin_ros.core.path.timing": {"robokin_ros.core.trajectory.arrays", "robokin_ros.core.ik.pose_ik"}}
    assert upward_imports(wrong) == ["robokin_ros.core.ik.ur imports robokin_ros.core.trajectory.arrays",
                                     "robokin_ros.core.trajectory.arrays imports robokin_ros.core.path.result"]
    surfaces = {"path": {PATH_SURFACE}, "servo": set(), "collision": {"robokin_ros.core.collision.scene"}}
    reach_in = {"robokin_ros.core.program.pieces": {"robokin_ros.core.path.solver", PATH_SURFACE},
                "robokin_ros.core.servo.servo": {"robokin_ros.core.collision.scene",
                                                 "robokin_ros.core.collision.bounds", "robokin_ros.core.servo.window"},
                "robokin_ros.ros.params": {"robokin_ros.core.servo.config"}}
    assert private_reaches(reach_in, surfaces) == [
        "robokin_ros.core.program.pieces imports robokin_ros.core.path.solver",
        "robokin_ros.core.servo.servo imports robokin_ros.core.collision.bounds"]
