"""The numbered ROS-free examples run and print what they show (they are documentation that must not rot)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("0*.py"))


def test_there_are_examples():
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(example, tmp_path):
    result = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=120,
                            cwd=tmp_path, env=dict(os.environ, MPLBACKEND="Agg"))
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) >= 3, result.stdout
