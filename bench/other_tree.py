"""Benchmarks and identity checks that compare this tree with another git revision: the package as it was at that
revision, and Python run with that package first on the import path."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@contextmanager
def archived_tree(rev: str, parts: Sequence[str] = ("robokin_ros",)) -> Iterator[Path]:
    """`parts` of the repository as they were at git revision `rev`, in a temporary directory."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, *parts], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        yield Path(tmp)


def tree_env(source_dir: Path, **extra: str) -> dict[str, str]:
    """The environment that imports `robokin_ros` from `source_dir` (before any installed copy)."""
    path = os.pathsep.join(filter(None, [str(source_dir), os.environ.get("PYTHONPATH", "")]))
    return {**os.environ, "PYTHONPATH": path, **extra}


def run_python(source_dir: Path, code: str, args: Sequence[str] = (), what: str = "running",
               timeout: float | None = None, **extra_env: str) -> str:
    """stdout of `python -c code args` with `robokin_ros` from `source_dir` (its working directory); SystemExit with
    the end of stderr when it fails."""
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=source_dir,
                          env=tree_env(source_dir, **extra_env), capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise SystemExit(f"{what} with {source_dir} failed:\n{done.stderr[-3000:]}")
    return done.stdout
