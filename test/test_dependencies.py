"""package.xml names only dependencies rosdep can install on Jazzy and Kilted, and every one the code needs.

Evidence: test/data/rosdep_keys.yaml, written by scripts/rosdep_keys.py from a ros/rosdistro commit (recorded in
the file). What this proves: each key was defined in that rosdistro commit for both distros (a released package
or an Ubuntu noble rule). What it cannot prove here: that `rosdep install` succeeds on a live machine today
(no rosdep database or apt here); that check belongs to a CI job on a real Jazzy/Kilted image.
"""
import ast
import importlib.util
import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

PACKAGE_DIR = Path(__file__).resolve().parents[1]
KEYS_FILE = PACKAGE_DIR / "test" / "data" / "rosdep_keys.yaml"
MANIFESTS = (PACKAGE_DIR / "package.xml", PACKAGE_DIR / "robokin_interfaces" / "package.xml")
DISTROS = ("jazzy", "kilted")

# Python module -> the rosdep key that installs it, where the two names differ. A ROS package's Python module
# has the package's name (rclpy, sensor_msgs, ament_index_python, launch_ros, ...).
MODULE_KEYS = {
    "numpy": "python3-numpy",
    "scipy": "python3-scipy",
    "yaml": "python3-yaml",
    "matplotlib": "python3-matplotlib",
    "mpl_toolkits": "python3-matplotlib",
    "numba": "python3-numba",
    "toppra": "python3-toppra-pip",
    "pinocchio": "pinocchio",
    "coal": "coal",
    "pytest": "python3-pytest",
    "hypothesis": "python3-hypothesis",
    "catkin_pkg": "python3-catkin-pkg",
    "flake8": "python3-flake8",
    "tf2_ros": "tf2_ros_py",
}
ROS_MODULE = ("rclpy", "rcl_interfaces", "builtin_interfaces", "action_msgs", "ament_index_python", "launch",
              "launch_ros", "robokin_interfaces", "xacro")
FIRST_PARTY = {"robokin_ros"}
# The studio (robokin_ros/studio, test/studio) is a pip extra: viser has no rosdep key, so its modules are pinned in
# requirements/ instead of package.xml, and only the studio's files may import them.
STUDIO_FOLDERS = ("robokin_ros/studio", "test/studio", "bench/bench_studio.py")
STUDIO_PIP = {"viser": "studio.txt", "trimesh": "studio.txt", "imageio": "studio.txt", "selenium": "test.txt",
              "fast_simplification": "studio.txt"}

# Declared but never imported: why each is needed all the same.
NOT_IMPORTED = {
    "moveit_resources_panda_description": "the Panda URDF, found through the ament index (core/embedded.py)",
    "robot_state_publisher": "started by launch/*.launch.py",
    "rviz2": "started by launch/*.launch.py",
    "python3-pytest-timeout": "setup.cfg sets a per-test timeout",
    "python3-flake8": "test_flake8.py runs `python -m flake8`",
    "python3-colcon-common-extensions": "test_package.py lists the README workspace with colcon",
    "git": "test_package.py clones the repository the README way",
}


def _depends(manifest: Path, kinds: tuple[str, ...]) -> set[str]:
    root = ET.parse(manifest).getroot()
    return {element.text.strip() for element in root if element.tag in kinds}


RUNTIME_KINDS = ("depend", "exec_depend", "build_export_depend")
ALL_KINDS = RUNTIME_KINDS + ("build_depend", "buildtool_depend", "test_depend")


def _imports(folders: list[str], studio: bool = True) -> dict[str, str]:
    """top-level module -> first file importing it, over every .py file in `folders` (absolute imports only);
    the studio's pip-only modules count only with `studio` False (they are checked against requirements/)."""
    found: dict[str, str] = {}
    for folder in folders:
        files = sorted((PACKAGE_DIR / folder).rglob("*.py"))
        # test helpers (conftest, ros_helpers, ...) and the benchmarks (tests reuse their path suite)
        local = {path.stem for path in files} | {path.stem for path in (PACKAGE_DIR / "bench").glob("*.py")}
        for path in files:
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top in sys.stdlib_module_names or top in FIRST_PARTY or top in local or top == "__future__":
                        continue
                    if top in STUDIO_PIP and studio:
                        continue
                    found.setdefault(top, str(path.relative_to(PACKAGE_DIR)))
    return found


def _key_of(module: str) -> str:
    if module in MODULE_KEYS:
        return MODULE_KEYS[module]
    if module in ROS_MODULE or module.endswith(("_msgs", "_srvs")):
        return module
    raise AssertionError(f"third-party module '{module}' has no rosdep key in MODULE_KEYS: add its key here and "
                         "to package.xml (then regenerate test/data/rosdep_keys.yaml)")


def _launched_packages() -> set[str]:
    packages = set()
    for path in (PACKAGE_DIR / "launch").glob("*.launch.py"):
        for call in ast.walk(ast.parse(path.read_text())):
            if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "Node":
                packages |= {ast.literal_eval(k.value) for k in call.keywords if k.arg == "package"}
    return packages


@pytest.fixture(scope="module")
def recorded():
    return yaml.safe_load(KEYS_FILE.read_text())


@pytest.mark.parametrize("manifest", MANIFESTS, ids=lambda p: p.relative_to(PACKAGE_DIR).as_posix())
def test_every_dependency_resolves_on_jazzy_and_kilted(manifest, recorded):
    own = {ET.parse(m).getroot().findtext("name") for m in MANIFESTS}
    problems = []
    for key in sorted(_depends(manifest, ALL_KINDS) - own):
        entry = recorded["keys"].get(key)
        if entry is None:
            problems.append(f"{key}: not in {KEYS_FILE.name} (run scripts/rosdep_keys.py)")
            continue
        problems += [f"{key}: no rosdep rule or released package for {distro}" for distro in DISTROS
                     if not entry.get(distro)]
    assert not problems, "\n".join(problems)
    assert len(recorded["rosdistro_commit"]) == 40


def test_keys_without_a_rosdep_rule_are_not_declared():
    """The keys found missing from rosdistro (example-robot-data) or renamed (toppra, tf2_ros) stay out."""
    declared = _depends(MANIFESTS[0], ALL_KINDS)
    assert not {"example-robot-data", "example_robot_data", "toppra", "python3-toppra", "tf2_ros"} & declared


def test_every_imported_package_is_declared():
    runtime = _depends(MANIFESTS[0], RUNTIME_KINDS)
    testing = runtime | _depends(MANIFESTS[0], ("test_depend",))
    missing = [f"{module} (imported by {where}) -> {_key_of(module)}"
               for module, where in _imports(["robokin_ros", "launch"]).items() if _key_of(module) not in runtime]
    missing += [f"{module} (imported by {where}) -> {_key_of(module)} as test_depend"
                for module, where in _imports(["test"]).items() if _key_of(module) not in testing]
    assert not missing, "undeclared in package.xml:\n  " + "\n  ".join(missing)


def _top_level_imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_the_studio_alone_imports_its_pip_modules_and_they_are_pinned():
    files = [path for name in ("robokin_ros", "test", "bench", "launch") for path in (PACKAGE_DIR / name).rglob("*.py")]
    outside = {path.relative_to(PACKAGE_DIR).as_posix(): sorted(_top_level_imports(path) & set(STUDIO_PIP))
               for path in files if not path.relative_to(PACKAGE_DIR).as_posix().startswith(STUDIO_FOLDERS)}
    outside = {where: modules for where, modules in outside.items() if modules}
    assert not outside, f"only {STUDIO_FOLDERS} may import the studio's pip-only modules: {outside}"
    unpinned = [f"{module} in requirements/{file}" for module, file in STUDIO_PIP.items()
                if f"{module.replace('_', '-')}==" not in (PACKAGE_DIR / "requirements" / file).read_text().lower()]
    assert not unpinned, f"not pinned: {unpinned}"
    used = set(_imports(list(STUDIO_FOLDERS), studio=False)) & set(STUDIO_PIP)
    assert used == set(STUDIO_PIP), f"STUDIO_PIP names modules the studio no longer imports: {set(STUDIO_PIP) - used}"


def test_every_declared_package_is_used():
    used = {_key_of(m) for m in _imports(["robokin_ros", "launch", "test"])} | _launched_packages()
    declared = _depends(MANIFESTS[0], ALL_KINDS)
    unused = sorted(declared - used - set(NOT_IMPORTED))
    assert not unused, f"declared in package.xml but neither imported nor explained in NOT_IMPORTED: {unused}"
    stale = sorted(set(NOT_IMPORTED) - declared)
    assert not stale, f"NOT_IMPORTED explains keys package.xml no longer declares: {stale}"


def test_module_scan_sees_a_new_import(tmp_path, monkeypatch):
    """Control: the scanner would catch an undeclared import (numba written as `from numba import njit`)."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("import os\nfrom numba import njit\nimport xml.etree\nimport roboplan\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE_DIR", tmp_path)
    assert _imports(["pkg"]) == {"numba": "pkg/mod.py", "roboplan": "pkg/mod.py"}
    with pytest.raises(AssertionError, match="roboplan"):
        _key_of("roboplan")


def _generator():
    spec = importlib.util.spec_from_file_location("rosdep_keys", PACKAGE_DIR / "scripts" / "rosdep_keys.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("rule, expected", [
    ({"ubuntu": ["python3-numba"]}, ["python3-numba"]),
    ({"ubuntu": {"pip": {"packages": ["toppra"]}}}, {"pip": ["toppra"]}),
    ({"ubuntu": {"*": ["python3-x"], "focal": None}}, ["python3-x"]),
    ({"ubuntu": {"jammy": ["python3-x"]}}, None),                         # no rule for noble
    ({"ubuntu": {"*": ["python3-x"], "noble": None}}, None),              # explicitly unavailable on noble
    ({"ubuntu": {"noble": {"pip": {"packages": ["x"]}}}}, {"pip": ["x"]}),
    ({"debian": ["python3-x"]}, None),
    (None, None),
])
def test_generator_reads_rosdep_rules_for_noble(rule, expected):
    assert _generator().ubuntu_rule(rule, "noble") == expected


def test_generator_only_counts_released_packages():
    distribution = {"repositories": {
        "moveit_resources": {"release": {"packages": ["moveit_resources_panda_description"], "version": "3.1.0-1"}},
        "pinocchio": {"release": {"version": "4.1.0-1"}},                 # no list: the repository is the package
        "unreleased": {"release": {"packages": ["ghost"]}, "source": {}},
        "doc_only": {"doc": {}},
    }}
    assert set(_generator().released_packages(distribution)) == {"moveit_resources_panda_description", "pinocchio"}


def test_recorded_file_matches_rosdistro_at_its_commit(recorded, tmp_path):
    """Regenerates the data file from the rosdistro git directory in ROSDISTRO_DIR, at the recorded commit."""
    rosdistro = os.environ.get("ROSDISTRO_DIR")
    if not rosdistro:
        pytest.skip("set ROSDISTRO_DIR to a ros/rosdistro git directory to regenerate test/data/rosdep_keys.yaml")
    out = tmp_path / "keys.yaml"
    _generator().main([rosdistro, "--rev", recorded["rosdistro_commit"], "--out", str(out)])
    assert yaml.safe_load(out.read_text()) == recorded, "test/data/rosdep_keys.yaml is stale: regenerate it"
