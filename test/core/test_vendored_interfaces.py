"""The vendored interface files are upstream's text, unchanged (vendor/README.md lists the git blobs).

An edited definition would still build and pass every other test here, yet its type hash would no longer match a
real ROS 2 install: only a byte comparison with upstream catches that.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

VENDOR = Path(__file__).resolve().parents[2] / "vendor"
ROW = re.compile(r"^\| (?P<file>[\w/.]+) \| (?P<repo>[\w./-]+) \| (?P<path>[\w/.]+) \| (?P<commit>[0-9a-f]{40}) "
                 r"\| (?P<blob>[0-9a-f]{40}) \|$")
INTERFACE_SUFFIXES = {".msg", ".srv", ".action"}


def git_blob_hash(data: bytes) -> str:
    """The id git gives a file's content (`git hash-object`), computed without git."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def manifest() -> dict[str, str]:
    rows = [ROW.match(line) for line in (VENDOR / "README.md").read_text().splitlines()]
    return {m["file"]: m["blob"] for m in rows if m}


def test_the_blob_hash_matches_git():
    # git's documented example: `echo 'test content' | git hash-object --stdin`
    assert git_blob_hash(b"test content\n") == "d670460b4b4aece5915caf5c68d12f560a9fe3e4"


def test_every_vendored_definition_is_listed_and_byte_identical_to_upstream():
    listed = manifest()
    assert len(listed) == 7, listed
    present = {str(p.relative_to(VENDOR)) for p in VENDOR.rglob("*") if p.suffix in INTERFACE_SUFFIXES}
    assert present == set(listed), "vendor/ holds definitions the manifest does not list, or misses some"
    for file, blob in listed.items():
        assert git_blob_hash((VENDOR / file).read_bytes()) == blob, f"{file} differs from upstream"


@pytest.mark.parametrize("package", ["tf2_msgs", "control_msgs", "moveit_msgs"])
def test_each_cmake_list_generates_exactly_the_vendored_files(package):
    cmake = (VENDOR / package / "CMakeLists.txt").read_text()
    generated = set(re.findall(r'"((?:msg|srv|action)/\w+\.\w+)"', cmake))
    on_disk = {str(p.relative_to(VENDOR / package)) for p in (VENDOR / package).rglob("*")
               if p.suffix in INTERFACE_SUFFIXES}
    assert generated == on_disk


def test_colcon_never_builds_the_vendored_copies():
    assert (VENDOR / "COLCON_IGNORE").exists()
