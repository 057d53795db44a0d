"""Every runnable block of README.md and docs/*.md runs as printed (docs/testing.md).

```python blocks are executed in this process; ```bash blocks line by line, each `.venv/bin/<tool>` line calling
the console script's main in this process (the venv is whichever runs the tests; files written under out/ go to a
temporary folder), a line whose comment says `exit N` ending with that code; ```yaml program and waypoint files
are planned with plan_path. The blocks need no ROS, so this runs in the first leg only.
"""
from pathlib import Path

import pytest
from docs_pages import REPO, blocks, command_lines, expected_exit, run_line

RESULTS: dict[str, tuple[int, str]] = {}          # a command line on several pages runs once per session


@pytest.fixture(scope="session")
def out_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("docs_out")


# Printed numbers that the pages explain, per block (found by a line of its code).
EXPECTED_OUTPUT = {
    "robot = rk.RobotModel.from_name(\"panda\")": lambda out: (
        "OK" in out and "path solved" in out and "force polytope" in out),
    "from robokin_ros.core.classroom.calibration import calibrate, synthetic_tracker_data": lambda out: (
        _classroom_lines(out.splitlines())),
    "arm = Planar2R(1.0, 1.0)                      # a planar 2R arm, links of 1 m": lambda out: (
        out.strip().endswith("[1.618 0.618]")),
}


def _classroom_lines(lines: list[str]) -> bool:
    """The classroom block's numbers, as docs/classroom.md explains them line by line."""
    assert lines[0] == "[0.1 0.2 0.3] 4.0"
    assert lines[2] == "True" and lines[3] == "8 True"
    assert lines[4].endswith("[1.618 0.618]") and lines[5] == "1.0 [2. 0.]"
    assert lines[6] == "0.8 0.2" and lines[7] == "True" and lines[8] == "1.7 1.7"
    assert lines[9].startswith("6.29 mm -> 0.08") and "13 unidentifiable" in lines[9]
    return True


@pytest.mark.parametrize("block", blocks("python", run=True))
def test_python_blocks_run_as_printed(block, capsys):
    exec(compile(block.code, block.id, "exec"), {"__name__": "docs_example"})
    printed = capsys.readouterr().out
    checks = [check for line, check in EXPECTED_OUTPUT.items() if line in block.code.splitlines()]
    for check in checks:
        assert check(printed), f"{block.id} printed:\n{printed}"
    assert printed or checks, f"{block.id} printed nothing"


@pytest.mark.parametrize("block", blocks("bash", run=True))
def test_bash_blocks_run_as_printed(block, out_dir, monkeypatch):
    monkeypatch.chdir(REPO)                                 # the lines name examples/ and config/ relative to it
    monkeypatch.setenv("MPLBACKEND", "Agg")
    for line in command_lines(block.code):
        if line not in RESULTS:
            RESULTS[line] = run_line(line, out_dir)
        code, said = RESULTS[line]
        assert code == expected_exit(line), f"{block.id}: `{line}` ended with {code}:\n{said[-2000:]}"


@pytest.mark.parametrize("block", blocks("yaml", run=True))
def test_yaml_blocks_are_files_the_tools_read(block, out_dir, monkeypatch):
    """A program or waypoint file shown on a page plans as shown (plan_path); any other YAML at least parses."""
    import yaml
    data = yaml.safe_load(block.code)
    if isinstance(data, dict) and ("moves" in data or "waypoints" in data):
        monkeypatch.chdir(REPO)
        shown = out_dir / f"{block.page.replace('/', '_')}_{block.line}.yaml"
        shown.write_text(block.code)
        code, said = run_line(f".venv/bin/plan_path {shown}", out_dir)
        assert code == 0, f"{block.id}: plan_path refused it:\n{said[-2000:]}"
