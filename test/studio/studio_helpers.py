"""Helpers for the studio's tests (importable from test files: `from studio_helpers import free_port`).

The studio's pip extras (viser, fast-simplification, imageio) and the browser tests' selenium, Chromium and
ChromeDriver are optional for a user: rosdep installs none of them, so `colcon test` in a ROS workspace may lack
them. A test that needs one is skipped there, saying what is missing and how to install it. Under CI=true the
README's test command must have brought everything, so the same test fails instead.
"""
import importlib.util
import os
import shutil
import socket
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "out" / "studio"
STUDIO_EXTRAS = ("viser", "fast_simplification", "imageio")
INSTALL_HINT = {"selenium": "pip install -r requirements/test.txt"}


def skip_or_fail(reason: str) -> None:
    """Skip the calling test (or module, at import) with `reason`; under CI=true, fail with it."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI=true: the README's test command installs it)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def need_modules(*modules: str) -> None:
    """Skip (or under CI fail) unless every Python module named is importable."""
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        hints = sorted({INSTALL_HINT.get(name, "pip install -r requirements/studio.txt") for name in missing})
        skip_or_fail(f"needs {', '.join(missing)}, not installed here ({'; '.join(hints)})")


def need_browser() -> None:
    """Skip (or under CI fail) unless selenium, Chromium and ChromeDriver are there (besides the studio extras)."""
    need_modules(*STUDIO_EXTRAS, "selenium")
    from browser import browser_missing
    missing = browser_missing()
    if missing:
        skip_or_fail(missing)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def keep_screenshot(window, name: str) -> Path:
    """Save a screenshot as out/studio/<name>.png (and docs/studio_<name>.png when asked to update them)."""
    path = window.save_screenshot(SHOTS / f"{name}.png")
    if os.environ.get("ROBOKIN_UPDATE_SCREENSHOTS"):
        shutil.copyfile(path, REPO / "docs" / f"studio_{name}.png")
    return path
