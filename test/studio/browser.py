"""Headless Chromium (Debian's package) driven by selenium, for the studio's browser tests.

`scripts/test.sh` installs `chromium` and `chromium-driver` when they are missing. The flags are the ones this
machine needs: no sandbox (root), software WebGL (SwiftShader, no GPU), and no background networking (the
network is closed and Chromium would otherwise retry Google's hosts at every start).
"""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WINDOW = (1280, 800)
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-unsafe-swiftshader", "--use-angle=swiftshader", "--disable-dev-shm-usage")


def browser_missing() -> str:
    """Why no browser test can run here ("" when Chromium and its driver are installed)."""
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if shutil.which(path) is None]
    return ("missing " + ", ".join(missing) + ": `bash scripts/test.sh` installs Debian's chromium and "
            "chromium-driver") if missing else ""


class Browser:
    """One Chromium window with its own profile and download folder."""

    def __init__(self, window: tuple[int, int] = WINDOW) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        self.profile = Path(tempfile.mkdtemp(prefix="robokin-chromium-"))
        self.downloads = self.profile / "downloads"
        self.downloads.mkdir()
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in (*FLAGS, f"--window-size={window[0]},{window[1]}"):
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={self.profile / 'profile'}")
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        self.driver.execute_cdp_cmd("Browser.setDownloadBehavior",
                                    {"behavior": "allow", "downloadPath": str(self.downloads)})

    def open(self, url: str, ready_text: str = "", timeout: float = 30.0) -> None:
        """Load `url` and wait until the page shows `ready_text` (a GUI label, say)."""
        self.driver.get(url)
        if ready_text:
            self.wait_for_text(ready_text, timeout)

    def wait_for_text(self, text: str, timeout: float = 15.0) -> None:
        self.wait_until(lambda: text in self.page_text(), timeout, f"page text '{text}'")

    def wait_until(self, condition, timeout: float = 15.0, what: str = "condition") -> None:
        """Poll `condition()` until it is truthy; the failure names what was awaited."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if condition():
                    return
            except Exception:     # an element re-rendered between lookup and read: poll again
                pass
            time.sleep(0.05)
        raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")

    def page_text(self) -> str:
        return self.driver.execute_script("return document.body ? document.body.innerText : ''")

    def screenshot(self) -> np.ndarray:
        """The window as an (h, w, 3) uint8 array."""
        import imageio.v3 as iio     # a studio extra: imported only when a browser test runs
        return iio.imread(self.driver.get_screenshot_as_png(), extension=".png")[..., :3]

    def save_screenshot(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.driver.save_screenshot(str(path))
        return path

    def button(self, label: str):
        """The GUI button labelled exactly `label` (viser's own "Reset View" must not match "Reset")."""
        from selenium.webdriver.common.by import By
        return self.driver.find_element(By.XPATH, f"//button[normalize-space(.)='{label}']")

    def click_button(self, label: str) -> None:
        self.driver.execute_script("arguments[0].click();", self.button(label))

    def control(self, label: str):
        """The element a GUI label names (viser's labels point at their control with `for`; they may hold <wbr>)."""
        from selenium.webdriver.common.by import By
        found = self.driver.find_element(By.XPATH, f"//label[normalize-space(.)='{label}']")
        return self.driver.find_element(By.ID, found.get_attribute("for"))

    def checkbox(self, label: str):
        """The checkbox input of the GUI row labelled `label`."""
        from selenium.webdriver.common.by import By
        control = self.control(label)
        return control if control.tag_name == "input" else control.find_element(By.XPATH, ".//input[@type='checkbox']")

    def slider(self, label: str):
        """The slider thumb (role=slider) of the GUI row labelled `label`."""
        from selenium.webdriver.common.by import By
        return self.control(label).find_element(By.XPATH, ".//*[@role='slider']")

    def focus(self, element) -> None:
        """Scroll `element` to the middle of the GUI panel and give it the keyboard focus."""
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].focus();", element)

    def click(self, element) -> None:
        """Scroll `element` into view and click it (the panel's resize handles may cover its edge)."""
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].click();", element)

    def press_keys(self, keys: str) -> None:
        """Type `keys` on the page body (keyboard shortcuts)."""
        from selenium.webdriver.common.by import By
        self.driver.find_element(By.TAG_NAME, "body").send_keys(keys)

    def wait_for_download(self, suffix: str, timeout: float = 15.0) -> Path:
        """The first finished download whose name ends in `suffix`."""
        found: list[Path] = []

        def done() -> bool:
            found[:] = [p for p in self.downloads.iterdir() if p.name.endswith(suffix)]
            return bool(found)
        self.wait_until(done, timeout, f"a download ending in '{suffix}' in {self.downloads}")
        return found[0]

    def close(self) -> None:
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)


def canvas_region(image: np.ndarray, panel_width: int = 420) -> np.ndarray:
    """The 3D view of a studio screenshot: the window without the GUI panel on the right (it scrolls)."""
    return image[:, : image.shape[1] - panel_width]


def distinct_colours(image: np.ndarray) -> int:
    """How many different RGB colours an image holds (a blank canvas has one or two)."""
    return len(np.unique(image.reshape(-1, 3), axis=0))
