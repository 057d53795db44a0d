"""How the command-line tools report bad input: one line on stderr, `<prog>: error: <problem>`, exit code 2.

A ConfigError lists its problems on indented lines (node logs read well that way); on a command line they are
joined with "; " so that every error stays one line that a student can read and a script can grep.
"""
from __future__ import annotations

import argparse
import sys


def one_line(err: BaseException | str) -> str:
    """The message of `err` on one line: continuation lines joined with "; " after a leading "...:" line."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    if len(lines) <= 1:
        return lines[0] if lines else type(err).__name__
    head, rest = lines[0], lines[1:]
    return f"{head} {'; '.join(rest)}" if head.endswith(":") else "; ".join(lines)


def report(prog: str, err: BaseException | str) -> int:
    """Print `<prog>: error: <err on one line>` to stderr; returns the bad-input exit code 2."""
    print(f"{prog}: error: {one_line(err)}", file=sys.stderr)
    return 2


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line pointing at --help (not the usage block, then the error)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")
