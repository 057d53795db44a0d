"""Fixtures for the studio's tests: one studio server and one headless Chromium per module.

The browser tests need Debian's chromium and chromium-driver, which `bash scripts/test.sh` installs. Without them
a test fails under CI (the README's test command must bring them) and is skipped elsewhere, saying why.
Screenshots for the README are written to out/studio/; with ROBOKIN_UPDATE_SCREENSHOTS=1 they are also copied
to docs/, where the README shows them.
"""
import os
import shutil
import socket
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from browser import Browser, browser_missing  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "out" / "studio"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def need_browser() -> None:
    missing = browser_missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)


@pytest.fixture(scope="module")
def browser():
    need_browser()
    window = Browser()
    yield window
    window.close()


def keep_screenshot(window: Browser, name: str) -> Path:
    """Save a screenshot as out/studio/<name>.png (and docs/studio_<name>.png when asked to update them)."""
    path = window.save_screenshot(SHOTS / f"{name}.png")
    if os.environ.get("ROBOKIN_UPDATE_SCREENSHOTS"):
        shutil.copyfile(path, REPO / "docs" / f"studio_{name}.png")
    return path
