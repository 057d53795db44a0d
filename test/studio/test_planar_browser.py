"""The planar 2R view in a real browser (headless Chromium): the numbers it shows match the closed form."""
import math
import re
import threading
import time
from pathlib import Path

import pytest

from browser import Browser, canvas_region, distinct_colours
from studio_helpers import free_port, need_browser

from robokin_ros.core.ik.planar_2r import Planar2R

SCREENSHOT = Path(__file__).resolve().parents[2] / "out" / "studio" / "planar_2r.png"
L1 = L2 = 0.5                                            # [m] the view's default arm
VALUE = r"(-?\d+\.\d+)"
LINE = re.compile(rf"(?m)^(q1|q2|x|y) = {VALUE}")
ENTRY = re.compile(rf"\b(J\d\d) = {VALUE}")
VELOCITY = re.compile(rf"\b([xy]dot) \((J qdot|measured)\) = {VALUE} m/s")


def shown(text: str) -> dict:
    """The numbers block parsed from the page text ({} until it is there); angles stay in degrees."""
    numbers = {k: float(v) for k, v in LINE.findall(text) + ENTRY.findall(text)}
    numbers.update({f"{axis} {kind}": float(v) for axis, kind, v in VELOCITY.findall(text)})
    return numbers if len(numbers) == 12 else {}


def wait_numbers(browser: Browser, condition=lambda n: True, what="the numbers", timeout=15.0) -> dict:
    """Poll the page until its numbers satisfy `condition`; return them."""
    found = {}

    def ready() -> bool:
        found.clear()
        found.update(shown(browser.page_text()))
        return bool(found) and condition(found)
    browser.wait_until(ready, timeout, what)
    return dict(found)


def closed_form(q1_deg: float, q2_deg: float) -> dict:
    """Tool point and Jacobian of the textbook 2R arm, written out here rather than taken from the code under test."""
    q1, q12 = math.radians(q1_deg), math.radians(q1_deg + q2_deg)
    return {"x": L1 * math.cos(q1) + L2 * math.cos(q12), "y": L1 * math.sin(q1) + L2 * math.sin(q12),
            "J11": -L1 * math.sin(q1) - L2 * math.sin(q12), "J12": -L2 * math.sin(q12),
            "J21": L1 * math.cos(q1) + L2 * math.cos(q12), "J22": L2 * math.cos(q12)}


def tick_loop(view, stop: threading.Event) -> None:
    """What the app's loop does for the visible view: tick it with the real time at ~30 Hz."""
    while not stop.wait(1 / 30):
        view.tick(time.monotonic())


@pytest.fixture(scope="module")
def studio():
    """A viser server with only the planar view, the app's ~30 Hz tick loop, and one browser on it."""
    need_browser()
    import viser

    from robokin_ros.studio.planar_view import PlanarView
    port = free_port()
    server = viser.ViserServer(host="127.0.0.1", port=port, verbose=False)
    stop = threading.Event()
    browser = None
    try:
        view = PlanarView(server, server.gui.add_folder("Planar 2R"))
        server.initial_camera.position, server.initial_camera.look_at = view.camera_view()
        threading.Thread(target=tick_loop, args=(view, stop), daemon=True).start()
        browser = Browser()
        browser.open(f"http://127.0.0.1:{port}", ready_text="q1 = ")
        yield server, view, browser
    finally:
        stop.set()
        if browser is not None:
            browser.close()
        server.stop()


def click(browser: Browser, label: str) -> None:
    """Click the button labelled exactly `label` (Browser.click_button's contains() also matches "Reset View")."""
    from selenium.webdriver.common.by import By
    button = browser.driver.find_element(By.XPATH, f"//button[normalize-space(.)='{label}']")
    browser.driver.execute_script("arguments[0].click();", button)


def assert_closed_form(numbers: dict, tol: float) -> None:
    expected = closed_form(numbers["q1"], numbers["q2"])
    for key, value in expected.items():
        assert numbers[key] == pytest.approx(value, abs=tol), (key, numbers, expected)


def test_q1_slider_by_keyboard_shows_the_closed_form(studio):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    _, view, browser = studio
    view.gui.mode.value = "FK"
    before = wait_numbers(browser)
    thumb = browser.slider("q1 [deg]")
    thumb.click()                   # focuses the thumb; the click itself may move it a step toward the pointer
    ActionChains(browser.driver).send_keys(Keys.ARROW_RIGHT * 3).perform()
    after = wait_numbers(browser, lambda n: n["q1"] != before["q1"] and
                         n["q1"] == float(thumb.get_attribute("aria-valuenow")), "q1 to follow the slider")
    assert after["q1"] == round(after["q1"]) and after["q2"] == before["q2"]       # 1 deg steps; q2 untouched
    # q is whole degrees, so the only error left is the display's rounding to 4 decimals
    assert_closed_form(after, tol=0.5e-4 + 1e-9)


def test_ik_target_solved_on_both_branches(studio):
    _, view, browser = studio
    # Mantine's dropdowns open in a portal that selenium cannot pick from reliably, so dropdowns and the target
    # sliders are set through the GUI handles' .value from Python; the server runs the same callbacks as a click.
    view.gui.mode.value = "IK"
    view.gui.elbow.value = "up"
    view.gui.target_sliders[0].value = 0.40
    view.gui.target_sliders[1].value = 0.55
    up = wait_numbers(browser, lambda n: (n["x"], n["y"], n["q2"] < 0) == (0.4, 0.55, True), "the target solved")
    # shown angles are rounded to 0.005 deg: through |J| <= L1 + L2 that moves the tool by <= 1.8e-4 m
    tol = 0.5e-4 + 2 * math.radians(0.005) * (L1 + L2)
    assert_closed_form(up, tol)
    r2 = 0.40 ** 2 + 0.55 ** 2
    assert up["q2"] == pytest.approx(-math.degrees(math.acos((r2 - L1 ** 2 - L2 ** 2) / (2 * L1 * L2))), abs=0.006)
    view.gui.elbow.value = "down"
    down = wait_numbers(browser, lambda n: n["q2"] > 0, "the elbow to flip")
    assert (down["x"], down["y"]) == (0.4, 0.55) and down["q2"] == pytest.approx(-up["q2"], abs=0.011)
    assert_closed_form(down, tol)


def test_unreachable_target_shows_the_clamped_warning(studio):
    _, view, browser = studio
    view.gui.mode.value = "IK"
    view.gui.target_sliders[0].value = 0.9
    view.gui.target_sliders[1].value = 0.6
    browser.wait_for_text("clamped")
    distance_mm = (math.hypot(0.9, 0.6) - (L1 + L2)) * 1e3
    shown_mm = float(re.search(r"clamped:?\**\s*(\d+\.\d) mm", browser.page_text()).group(1))
    assert shown_mm == pytest.approx(distance_mm, abs=0.051)
    # the arm stretches toward the target along its ray
    numbers = wait_numbers(browser)
    assert (numbers["x"], numbers["y"]) == pytest.approx((0.9 / 1.0817, 0.6 / 1.0817), abs=2e-4)
    view.gui.target_sliders[0].value = 0.5
    browser.wait_until(lambda: "clamped" not in browser.page_text(), what="the warning to go")


def test_run_changes_the_numbers_and_reset_restores_them(studio):
    _, view, browser = studio
    view.gui.mode.value = "FK"
    click(browser, "Reset")
    start = wait_numbers(browser, lambda n: n["xdot measured"] == 0.0)
    click(browser, "Run")
    first = wait_numbers(browser, lambda n: n["q1"] != start["q1"], "the animation to move")
    wait_numbers(browser, lambda n: n["q1"] != first["q1"], "the animation to keep moving")
    time.sleep(2.0)                                      # a longer trace for the screenshot
    click(browser, "Pause")
    paused = wait_numbers(browser, lambda n: n["xdot measured"] == 0.0, "the pause")
    assert_closed_form(paused, tol=0.5e-4 + 2 * math.radians(0.005) * (L1 + L2))
    click(browser, "Step")                               # one tick: the velocities show again, still paused
    stepped = wait_numbers(browser, lambda n: n["q1"] != paused["q1"] and n["xdot measured"] != 0.0, "a step")
    time.sleep(0.3)
    assert wait_numbers(browser) == stepped              # Step does not start the animation
    browser.driver.execute_script(       # the software-WebGL notice would cover part of the README picture
        "document.querySelectorAll('.mantine-Notification-closeButton').forEach(b => b.click())")
    time.sleep(0.5)
    image = browser.screenshot()
    assert distinct_colours(canvas_region(image)) > 20   # arm, ghost, ring and trace drawn, not a blank canvas
    browser.save_screenshot(SCREENSHOT)
    click(browser, "Reset")
    restored = wait_numbers(browser, lambda n: n["q1"] == start["q1"], "the reset")
    assert restored == start


def test_core_and_view_agree_on_the_arm():
    """The browser tests' L1, L2 are the view's default arm (guards the constants above)."""
    from robokin_ros.studio.planar_2r import Planar2rTeacher
    assert Planar2rTeacher().arm == Planar2R(L1, L2)
