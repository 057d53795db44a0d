"""What C++ libraries print on file descriptor 2, captured so that it can become part of one error message.

Pinocchio's URDF parser (urdfdom, through console_bridge) prints its reasons straight to fd 2, two lines each
("Error:   Joint [j] is of type REVOLUTE but it does not specify limits" / "at line 607 in .../joint.cpp"),
before Pinocchio raises a generic "does not contain a valid URDF model". Python's sys.stderr cannot catch that, so
`captured_native_stderr` points fd 2 at a temporary file for the duration of the call.
"""
from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def captured_native_stderr() -> Iterator[list[str]]:
    """Redirect fd 2 into a temporary file inside the block; the yielded list holds the printed lines after it.

    Process-wide while it lasts (fd 2 is shared by every thread), so keep the block to the native call itself.
    """
    printed: list[str] = []
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):        # no fd 2 (a detached process): nothing to capture
        yield printed
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield printed
        finally:
            try:
                sys.stderr.flush()
            except (OSError, ValueError):
                pass
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            printed.extend(sink.read().decode(errors="replace").splitlines())


def split_parser_messages(printed: list[str]) -> tuple[list[str], list[str]]:
    """(urdfdom's "Error:" reasons without their source-line trailers, every other line as printed)."""
    reasons, other = [], []
    for line in printed:
        text = line.strip()
        if text.startswith("Error:"):
            reasons.append(text[len("Error:"):].strip())
        elif not (text.startswith("at line ") and "urdf" in text):
            other.append(line)
    return reasons, other


def pass_on(lines: list[str]) -> None:
    """Write captured lines back to stderr (warnings of a parse that succeeded are not lost)."""
    if lines:
        sys.stderr.write("\n".join(lines) + "\n")
        sys.stderr.flush()
