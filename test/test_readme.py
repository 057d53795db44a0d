"""The README stays true: its parameter tables are the config schemas, its commands are what CI runs."""
import importlib
import re
from pathlib import Path

import pytest

from robokin_ros.tools.param_table import CONFIGS, markdown_table

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_parameter_tables_match_the_config_schema(name):
    module, cls = CONFIGS[name].split(":")
    table = markdown_table(getattr(importlib.import_module(module), cls))
    assert table in README, (f"README's {name} parameter table is stale: regenerate it with "
                             f"`.venv/bin/python -m robokin_ros.tools.param_table {name}`")


def test_the_two_commands_are_in_the_readme_and_ci_runs_the_test_one():
    blocks = re.findall(r"```bash\n(.*?)```", README, re.S)
    first = blocks[0]
    assert "bash scripts/demo.sh" in first and "bash scripts/test.sh" in first
    assert "bash scripts/test.sh" in (REPO / ".ci" / "run").read_text()
    for script in ("demo.sh", "test.sh"):
        assert 'scripts/setup.sh"' in (REPO / "scripts" / script).read_text(), f"{script} must do all set-up"


def test_the_python_api_example_runs(capsys):
    """The README's Python API block is real code: it runs as printed and produces its outputs."""
    section = README.split("## Python API", 1)[1].split("\n## ", 1)[0]
    code = re.findall(r"```python\n(.*?)```", section, re.S)[0]
    exec(compile(code, "README.md (Python API)", "exec"), {"__name__": "readme_example"})
    printed = capsys.readouterr().out
    assert "OK" in printed and "path solved" in printed and "force polytope" in printed, printed


def test_the_classroom_example_prints_its_textbook_numbers(capsys):
    """The classroom block runs as printed, and prints the numbers the README explains."""
    section = README.split("## The classroom toolbox", 1)[1].split("\n## ", 1)[0]
    code = re.findall(r"```python\n(.*?)```", section, re.S)[0]
    exec(compile(code, "README.md (classroom)", "exec"), {"__name__": "readme_classroom"})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "[0.1 0.2 0.3] 4.0"
    assert lines[2] == "True" and lines[3] == "8 True"
    assert lines[4].endswith("[1.618 0.618]") and lines[5] == "1.0 [2. 0.]"
    assert lines[6] == "0.8 0.2" and lines[7] == "True" and lines[8] == "1.7 1.7"
    assert lines[9].startswith("6.29 mm -> 0.08") and "13 unidentifiable" in lines[9]
