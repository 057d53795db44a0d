"""Fixtures for the studio's tests: one headless Chromium per module (helpers in studio_helpers.py).

The browser tests need Debian's chromium and chromium-driver, which `bash scripts/test.sh` installs, and selenium.
Without them a test fails under CI (the README's test command must bring them) and is skipped elsewhere, saying
why. Screenshots for the README are written to out/studio/; with ROBOKIN_UPDATE_SCREENSHOTS=1 they are also
copied to docs/, where the README shows them.
"""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from studio_helpers import need_browser  # noqa: E402


@pytest.fixture(scope="module")
def browser():
    need_browser()
    from browser import Browser
    window = Browser()
    yield window
    window.close()
