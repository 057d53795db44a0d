"""The vendored interface files are upstream's text for each distro, unchanged (vendor/README.md lists the blobs).

An edited definition, or another distro's text, would still build and pass every other test here, yet its type hash
would no longer match a real ROS 2 install of that distro: only a byte comparison with upstream catches that.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VENDOR = REPO / "vendor"
DISTROS = ("jazzy", "kilted")
# in build order: moveit_msgs uses object_recognition_msgs and octomap_msgs
PACKAGES = ("tf2_msgs", "control_msgs", "object_recognition_msgs", "octomap_msgs", "moveit_msgs")
ROW = re.compile(r"^\| (?P<distro>\w+) \| (?P<file>[\w/.]+) \| (?P<repo>[\w./-]+) \| (?P<path>[\w/.]+) "
                 r"\| (?P<commit>[0-9a-f]{40}) \| (?P<blob>[0-9a-f]{40}) \|$")
INTERFACE_SUFFIXES = {".msg", ".srv", ".action"}


def git_blob_hash(data: bytes) -> str:
    """The id git gives a file's content (`git hash-object`), computed without git."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def manifest(distro: str) -> dict[str, str]:
    """{file under vendor/: git blob} for the rows of one distro."""
    rows = [ROW.match(line) for line in (VENDOR / "README.md").read_text().splitlines()]
    return {m["file"]: m["blob"] for m in rows if m and m["distro"] == distro}


def built_files(distro: str) -> dict[str, str]:
    """{path inside the built package ("control_msgs/msg/JointJog.msg"): file under vendor/} for one distro: the
    common folder with the distro's folder laid over it, as scripts/setup.sh assembles it."""
    built: dict[str, str] = {}
    for layer in ("common", distro):
        for path in sorted((VENDOR / layer).rglob("*")):
            if path.suffix in INTERFACE_SUFFIXES:
                inside = str(path.relative_to(VENDOR / layer))
                assert inside not in built, f"{layer}/{inside} would replace common/{inside}: keep one copy"
                built[inside] = str(path.relative_to(VENDOR))
    return built


def test_the_blob_hash_matches_git():
    # git's documented example: `echo 'test content' | git hash-object --stdin`
    assert git_blob_hash(b"test content\n") == "d670460b4b4aece5915caf5c68d12f560a9fe3e4"


def test_vendor_holds_the_common_layer_and_one_folder_per_distro_with_a_requirements_file():
    folders = {p.name for p in VENDOR.iterdir() if p.is_dir()}
    assert folders == {"common", *DISTROS}
    pinned = {p.stem.removeprefix("ros-") for p in (REPO / "requirements").glob("ros-*.txt")}
    assert pinned == set(DISTROS), "each distro needs its pinned wheels and its vendored text, and nothing else"


@pytest.mark.parametrize("distro", DISTROS)
def test_every_file_a_distro_builds_is_listed_and_byte_identical_to_upstream(distro):
    listed = manifest(distro)
    assert len(listed) == 20, listed
    assert set(built_files(distro).values()) == set(listed), \
        f"{distro} builds definitions the manifest does not list, or the manifest lists files it does not build"
    for file, blob in listed.items():
        assert git_blob_hash((VENDOR / file).read_bytes()) == blob, f"{file} differs from upstream for {distro}"


def test_follow_joint_trajectory_is_each_distros_own_text():
    """Kilted's feedback has `index` fields that Jazzy's lacks: the two copies must differ exactly there."""
    jazzy, kilted = ((VENDOR / d / "control_msgs/action/FollowJointTrajectory.action").read_text() for d in DISTROS)
    assert "int32 index" not in jazzy and "int32 multi_dof_index" not in jazzy
    assert "int32 index" in kilted and "int32 multi_dof_index" in kilted


@pytest.mark.parametrize("distro", DISTROS)
@pytest.mark.parametrize("package", PACKAGES)
def test_each_cmake_list_generates_exactly_the_files_the_distro_builds(package, distro):
    cmake = (VENDOR / "common" / package / "CMakeLists.txt").read_text()
    generated = set(re.findall(r'"((?:msg|srv|action)/\w+\.\w+)"', cmake))
    on_disk = {inside.split("/", 1)[1] for inside in built_files(distro) if inside.startswith(package + "/")}
    assert generated == on_disk


def test_distro_folders_only_overlay_packages_the_common_layer_has():
    for distro in DISTROS:
        for package in (VENDOR / distro).iterdir():
            assert (VENDOR / "common" / package.name / "CMakeLists.txt").is_file(), package


def test_colcon_never_builds_the_vendored_copies():
    assert (VENDOR / "COLCON_IGNORE").exists()


def test_setup_builds_every_vendored_package_after_the_vendored_packages_it_uses():
    """scripts/setup.sh names the packages it builds; a vendored package it leaves out, or builds before one it
    finds with find_package, would fail only on a fresh venv."""
    setup = (REPO / "scripts" / "setup.sh").read_text()
    order = re.search(r"^for vendored in ([\w ]+); do$", setup, re.MULTILINE)[1].split()
    assert order == list(PACKAGES)
    assert set(order) == {p.name for p in (VENDOR / "common").iterdir()}
    for i, package in enumerate(order):
        cmake = (VENDOR / "common" / package / "CMakeLists.txt").read_text()
        vendored_uses = set(re.findall(r"find_package\((\w+) REQUIRED\)", cmake)) & set(order)
        assert vendored_uses <= set(order[:i]), f"{package} uses {sorted(vendored_uses)}, built after it"


def test_moveit_collision_object_text_has_the_jazzy_pose_field():
    """CollisionObject gained `pose` (the object's origin, shapes relative to it) in 2020; ros/moveit_scene.py
    composes with it."""
    text = (VENDOR / "common/moveit_msgs/msg/CollisionObject.msg").read_text()
    assert "\ngeometry_msgs/Pose pose\n" in text and "byte MOVE=3" in text
