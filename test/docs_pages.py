"""The code blocks of README.md and docs/*.md, and how a runnable line is run (docs/testing.md).

A block that cannot run here carries `<!-- not run: <why> -->` on the line before its fence; test_readme.py checks
those statically, test/docs/test_docs_blocks.py runs the others.
"""
import contextlib
import importlib
import io
import re
import runpy
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
NOT_RUN = re.compile(r"<!-- not run: (.+?) -->")
RUNNABLE = ("bash", "python", "yaml")
KNOWN_LANGUAGES = (*RUNNABLE, "text")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: str               # relative to the repository root
    line: int               # of the opening fence, 1-based
    language: str
    code: str
    not_run: str            # the reason given in the marker, "" for a block that runs

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def code_blocks(path: Path) -> list[Block]:
    """Every fenced block of a page, with the `not run` marker of the line before it."""
    lines = path.read_text().splitlines()
    blocks, index = [], 0
    while index < len(lines):
        opening = re.fullmatch(r"```(\w*).*", lines[index])
        if not opening:
            index += 1
            continue
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        marker = NOT_RUN.fullmatch(lines[index - 1].strip()) if index else None
        blocks.append(Block(str(path.relative_to(REPO)), index + 1, opening.group(1),
                            "\n".join(lines[index + 1:end]) + "\n", marker.group(1) if marker else ""))
        index = end + 1
    return blocks


BLOCKS = [block for path in DOC_FILES for block in code_blocks(path)]


def blocks(language: str, run: bool) -> list:
    return [pytest.param(b, id=b.id) for b in BLOCKS if b.language == language and (not b.not_run) == run]


def console_scripts() -> dict[str, str]:
    return dict(re.findall(r'"(\w+) = ([\w.]+:\w+)"', (REPO / "setup.py").read_text()))


def command_lines(code: str) -> list[str]:
    """The block's commands: continuation lines joined, blank lines dropped."""
    return [line for line in code.replace("\\\n", " ").splitlines() if line.strip()]


def expected_exit(line: str) -> int:
    comment = line.split("#", 1)[1] if "#" in line else ""
    found = re.search(r"\bexit (\d+)", comment)
    return int(found.group(1)) if found else 0


def run_line(line: str, out_dir: Path) -> tuple[int, str]:
    """One `.venv/bin/...` line in this process: a console script's main, or python running a script/module."""
    words = [re.sub(r"(^|=)out/", rf"\g<1>{out_dir}/", w) for w in shlex.split(line, comments=True)]
    program, *args = words
    assert program.startswith(".venv/bin/"), f"`{line}`: a runnable line starts with .venv/bin/ (docs/testing.md)"
    program = program.removeprefix(".venv/bin/")
    scripts = console_scripts()
    stdout, stderr, saved_argv = io.StringIO(), io.StringIO(), sys.argv
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            if program == "python" and args[0] == "-m":
                sys.argv = [args[1], *args[2:]]
                module = importlib.import_module(args[1])            # its main() parses sys.argv
                module.main() if hasattr(module, "main") else runpy.run_module(args[1], run_name="__main__")
            elif program == "python":
                sys.argv = list(args)
                runpy.run_path(str(REPO / args[0]), run_name="__main__")
            else:
                assert program in scripts, f"`{line}`: {program} is not one of the console scripts {sorted(scripts)}"
                module, function = scripts[program].split(":")
                code = getattr(importlib.import_module(module), function)(args)
                return code or 0, stdout.getvalue() + stderr.getvalue()
    except SystemExit as stop:
        return (stop.code if isinstance(stop.code, int) else 1 if stop.code else 0), stdout.getvalue() + \
            stderr.getvalue()
    finally:
        sys.argv = saved_argv
    return 0, stdout.getvalue() + stderr.getvalue()
