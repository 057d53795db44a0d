"""The studio in a real browser (headless Chromium): what the page shows is checked against Pinocchio's numbers.

The gizmo cannot be dragged by a script (where viser draws its handles is known only to the page's WebGL scene),
so those tests move it with the app's own `move_gizmo`, the call a drag ends in; everything else goes through the
page: sliders by keyboard, checkboxes and buttons by click, shortcuts by key presses.
"""
import re
import struct
import time

import pytest
from studio_helpers import free_port, keep_screenshot, need_browser

need_browser()   # before selenium and imageio are imported: skips here without them (fails under CI)

import imageio.v3 as iio  # noqa: E402
import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402
from browser import canvas_region, distinct_colours  # noqa: E402
from scipy.spatial import ConvexHull  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

from robokin_ros.core.capability.analysis import analyze, torque_limits_of  # noqa: E402
from robokin_ros.core.capability.polytope import tool_force_polytope  # noqa: E402

TOOL_LINE = re.compile(r"tool x = (-?[\d.]+) m, y = (-?[\d.]+) m, z = (-?[\d.]+) m\s+"
                       r"roll = (-?[\d.]+) deg, pitch = (-?[\d.]+) deg, yaw = (-?[\d.]+) deg")


@pytest.fixture(scope="module")
def studio(browser):
    from robokin_ros.studio.app import StudioApp
    # light rendering: software WebGL draws it about 3x faster (bench_studio.py), so the page answers sooner;
    # screenshots for the README switch to the standard look first (`readme_screenshot`)
    app = StudioApp("panda", port=free_port(), render="light").start()
    browser.open(app.url, "tool x =", timeout=60)
    _close_notifications(browser)
    yield app
    app.stop()


@pytest.fixture
def home(studio, browser):
    """Each test starts with the arm at home, no keyframes, the default overlays."""
    studio.clear_keyframes()
    studio.set_positions(studio.robot.home())
    browser.wait_until(lambda: np.allclose(shown_tool(browser)[0], studio.robot.fk(studio.robot.home()).translation,
                                           atol=1e-4), what="the tool at home")
    return studio


def _close_notifications(browser):
    browser.driver.execute_script(
        "document.querySelectorAll('.mantine-Notification-closeButton, button[aria-label=\"Close\"]')"
        ".forEach((b) => b.click());")
    time.sleep(0.3)


def switch_render(app, browser, name: str, ready: str = "tool x =") -> None:
    """Switch the render preset and wait for the page to reload with the preset's pixel density."""
    from robokin_ros.studio.render_style import RENDER_STYLES
    ratio = RENDER_STYLES[name].pixel_ratio
    app.set_render(name)
    wanted = f"fixedDpr={ratio:g}" if ratio else ""

    def reloaded() -> bool:
        query = browser.driver.execute_script("return window.location.search")
        return (wanted in query if wanted else "fixedDpr" not in query) and ready in browser.page_text()
    browser.wait_until(reloaded, timeout=60, what=f"the page in the {name} preset")
    time.sleep(1.0)


def canvas_pixel_ratio(browser) -> float:
    """Drawn pixels per CSS pixel of the 3D view (the canvas drawing the most pixels: viser lays an empty one for
    box selection over it)."""
    return browser.driver.execute_script(
        "const c = [...document.querySelectorAll('canvas')].sort((a, b) => b.width - a.width)[0];"
        "return c.width / c.clientWidth;")


def readme_screenshot(app, browser, name: str, ready: str = "tool x =") -> None:
    switch_render(app, browser, "standard", ready)
    try:
        time.sleep(1.0)
        keep_screenshot(browser, name)
    finally:
        switch_render(app, browser, "light", ready)
        _close_notifications(browser)


def shown_tool(browser) -> tuple[np.ndarray, np.ndarray]:
    """The tool position [m] and roll, pitch, yaw [deg] the page shows."""
    match = TOOL_LINE.search(browser.page_text())
    assert match, "no tool pose line on the page"
    values = np.array([float(v) for v in match.groups()])
    return values[:3], values[3:]


def canvas(browser) -> np.ndarray:
    return canvas_region(browser.screenshot()).astype(int)


def test_the_page_loads_and_draws_the_robot(home, browser):
    image = canvas(browser)
    assert distinct_colours(image.astype(np.uint8)) > 200, "the 3D view looks blank"
    coloured = (np.abs(image - image[5, 5]).sum(axis=2) > 60).mean()       # pixels unlike the background
    assert coloured > 0.01, f"only {coloured:.2%} of the view differs from the background"
    readme_screenshot(home, browser, "arm")


def test_a_joint_slider_moves_the_shown_tool_to_the_fk_pose(home, browser):
    before, _ = shown_tool(browser)
    thumb = browser.slider("panda_joint1 [deg]")
    browser.focus(thumb)
    thumb.send_keys(Keys.ARROW_RIGHT * 20)
    browser.wait_until(lambda: np.linalg.norm(shown_tool(browser)[0] - before) > 1e-3, what="the tool to move")
    shown_value = float(thumb.get_attribute("aria-valuenow"))
    browser.wait_until(lambda: abs(np.degrees(home.session.positions[0]) - shown_value) < 1e-6,
                       what="the arm to take the slider's value")
    expected = home.robot.fk(home.session.positions)
    browser.wait_until(lambda: np.allclose(shown_tool(browser)[0], expected.translation, atol=6e-5),
                       what="the shown tool position to be the FK position")
    rpy = np.degrees(pin.rpy.matrixToRpy(expected.rotation))
    assert np.allclose(shown_tool(browser)[1], rpy, atol=0.006)
    assert abs(shown_value - np.degrees(home.robot.home()[0])) > 1.0, "the slider did not move"


def _type_slowly(element, text: str, pause: float = 0.15) -> None:
    """Type `text` one key at a time with a person's pause between keys (the server answers in between)."""
    for key in text:
        element.send_keys(key)
        time.sleep(pause)


def test_typing_a_joint_value_key_by_key_applies_what_was_typed(home, browser):
    """Issue 24 item 11: panda_joint4 spans -176 ... -4 deg, so "-3" and "-1" are out-of-range prefixes of "-39"
    and "-120"; a prefix pushed back clamped (-4) used to turn "-39" into -49 and "-120" into -176."""
    from selenium.webdriver.common.by import By
    label = "panda_joint4 [deg]"
    box = browser.control(label).find_element(By.XPATH, "./following-sibling::*//input | ./following-sibling::input")
    lower, upper = np.degrees(home.robot.limits.lower[3]), np.degrees(home.robot.limits.upper[3])
    assert lower < -120 and -39 < upper < -3           # the prefixes below are out of range, the values within
    # committed by Enter or by leaving the box (Tab); "-3" is out of range, so the box clamps it when committed
    for typed, wanted, commit in (("-39", -39.0, Keys.ENTER), ("-120", -120.0, Keys.TAB), ("-60", -60.0, Keys.ENTER),
                                  ("-3", round(upper, 1), Keys.ENTER), ("-1", round(upper, 1), Keys.TAB)):
        browser.focus(box)
        box.send_keys(Keys.CONTROL, "a")
        box.send_keys(Keys.BACKSPACE)
        time.sleep(0.3)
        _type_slowly(box, typed)
        box.send_keys(commit)
        try:
            browser.wait_until(lambda: abs(np.degrees(home.session.positions[3]) - wanted) < 0.06
                               and float(box.get_attribute("value")) == pytest.approx(wanted, abs=0.06),
                               timeout=5, what=f"typed {typed!r}")
        except AssertionError:
            pytest.fail(f"typed {typed!r} key by key: the box shows {box.get_attribute('value')!r} and the joint is "
                        f"{np.degrees(home.session.positions[3]):.1f} deg, wanted {wanted:g}")
        time.sleep(0.5)                                  # nothing rewrites the entry afterwards
        assert float(box.get_attribute("value")) == pytest.approx(wanted, abs=0.06)
        assert np.degrees(home.session.positions[3]) == pytest.approx(wanted, abs=0.06)
        expected = home.robot.fk(home.session.positions).translation
        browser.wait_until(lambda: np.allclose(shown_tool(browser)[0], expected, atol=6e-5),
                           what=f"the shown tool at the FK pose of {typed}")


def test_the_light_preset_draws_the_3d_view_at_its_pixel_density(home, browser):
    """Issue 24 item 15: software WebGL pays per pixel; the light preset draws 0.6 of them per screen pixel."""
    browser.wait_until(lambda: abs(canvas_pixel_ratio(browser) - 0.6) < 0.02, timeout=10,
                       what=f"the light 3D view at 0.6 pixels per pixel (it has {canvas_pixel_ratio(browser):.2f})")
    try:
        switch_render(home, browser, "standard")     # viser's own adaptive density again, 0.75 ... 1
        assert canvas_pixel_ratio(browser) >= 0.74
    finally:
        switch_render(home, browser, "light")
    browser.wait_until(lambda: abs(canvas_pixel_ratio(browser) - 0.6) < 0.02, timeout=10, what="light again")
    _close_notifications(browser)


def test_a_gizmo_move_brings_the_tool_to_the_target(home, browser):
    tool = home.robot.fk(home.robot.home())
    target = tool.translation + np.array([0.06, -0.04, 0.05])
    home.move_gizmo(target)
    browser.wait_until(lambda: np.linalg.norm(shown_tool(browser)[0] - target) < 1e-3, timeout=10,
                       what="the tool to reach the gizmo")
    reached = home.robot.fk(home.session.positions)
    assert np.linalg.norm(reached.translation - target) < 1e-3
    assert np.degrees(np.linalg.norm(pin.log3(reached.rotation @ tool.rotation.T))) < 0.6    # orientation kept


def test_a_gizmo_rotation_turns_the_tool(home, browser):
    browser.press_keys("r")
    browser.wait_until(lambda: not home.arm.scene.gizmo.disable_rotations, what="rotate mode (R)")
    tool = home.robot.fk(home.robot.home())
    turn = pin.exp3(np.array([0.0, 0.0, np.radians(20.0)]))
    wanted = tool.rotation @ turn                      # local axes: about the tool's own z
    x, y, z, w = pin.Quaternion(wanted).coeffs()
    home.move_gizmo(tool.translation, (w, x, y, z))
    expected = np.degrees(pin.rpy.matrixToRpy(wanted))
    browser.wait_until(lambda: np.abs(shown_tool(browser)[1] - expected).max() < 0.5, timeout=10,
                       what="the tool to turn with the gizmo")
    browser.press_keys("t")
    browser.wait_until(lambda: home.arm.scene.gizmo.disable_rotations, what="translate mode (T)")


def test_q_toggles_the_gizmo_axes(home, browser):
    browser.press_keys("q")
    browser.wait_for_text("Gizmo axes: base (Q)")
    assert np.allclose(home.arm.scene.gizmo.wxyz, [1.0, 0.0, 0.0, 0.0])
    browser.press_keys("q")
    browser.wait_for_text("Gizmo axes: tool (Q)")


def test_switching_an_overlay_changes_the_scene(home, browser):
    time.sleep(0.5)
    first = canvas(browser)
    box = browser.checkbox("Force polytope")
    browser.click(box)
    browser.wait_until(lambda: "polytope" in home.settings.shown, what="the polytope to be switched on")
    time.sleep(1.0)
    changed = (np.abs(canvas(browser) - first).sum(axis=2) > 30).mean()
    assert changed > 0.002, f"switching the polytope on changed {changed:.3%} of the view"
    browser.click(box)
    browser.wait_until(lambda: "polytope" not in home.settings.shown, what="the polytope to be switched off")
    time.sleep(1.0)
    back = (np.abs(canvas(browser) - first).sum(axis=2) > 30).mean()
    assert back < changed / 5, f"switching it off left {back:.3%} of the view changed"
    browser.click(box)
    try:
        browser.wait_until(lambda: "polytope" in home.settings.shown, what="the polytope on for the README")
        readme_screenshot(home, browser, "overlays")
    finally:
        browser.click(browser.checkbox("Force polytope"))       # the page reloaded (pixel density): found anew
    browser.wait_until(lambda: "polytope" not in home.settings.shown, what="the polytope off again")


def stl_volume(data: bytes) -> tuple[float, np.ndarray]:
    """Signed volume of a closed binary STL (divergence theorem) and its vertices."""
    count = struct.unpack_from("<I", data, 80)[0]
    assert len(data) == 84 + 50 * count, "not a binary STL of its declared triangle count"
    records = np.frombuffer(data, np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")]), count, 84)
    v = records["v"].astype(float)                                          # (m, 3, 3)
    return float(np.einsum("ij,ij->i", v[:, 0], np.cross(v[:, 1], v[:, 2])).sum() / 6.0), v.reshape(-1, 3)


def test_x_exports_the_force_polytope_as_stl(home, browser):
    for old in browser.downloads.glob("*.stl"):
        old.unlink()
    browser.press_keys("x")
    data = browser.wait_for_download(".stl").read_bytes()
    volume, vertices = stl_volume(data)
    robot = home.robot
    torque = torque_limits_of(robot)
    core = tool_force_polytope(analyze(robot, home.session.positions, torque.limits), "pinv", 1e-3)
    assert volume == pytest.approx(core.volume, rel=1e-4)                 # float32 coordinates in the file
    assert ConvexHull(vertices).volume == pytest.approx(core.volume, rel=1e-4)


def test_keyframes_record_play_and_clear(home, browser):
    robot = home.robot
    browser.press_keys("k")
    browser.wait_for_text("1 keyframes")
    moved = robot.home() + np.array([0.3, 0.2, 0.0, 0.25, 0.0, -0.2, 0.0])
    home.set_positions(moved)
    browser.press_keys("k")
    browser.wait_for_text("2 keyframes")
    home.set_positions(robot.home() + np.array([-0.2, 0.0, 0.1, 0.0, 0.0, 0.0, 0.0]))
    browser.press_keys("p")
    browser.wait_for_text("playing", timeout=10)
    browser.wait_for_text("playback finished", timeout=30)
    last = robot.fk(moved)
    reached = robot.fk(home.session.positions)
    assert np.linalg.norm(reached.translation - last.translation) < 1e-3
    assert np.linalg.norm(pin.log3(reached.rotation @ last.rotation.T)) < 2e-3
    browser.wait_until(lambda: np.linalg.norm(shown_tool(browser)[0] - last.translation) < 1e-3,
                       what="the page to show the last keyframe's tool")
    browser.press_keys("c")
    browser.wait_for_text("no keyframes")
    assert len(home.session.keyframes) == 0


def test_question_mark_shows_the_shortcuts(home, browser):
    browser.press_keys("?")
    browser.wait_for_text("record a keyframe")
    browser.click_button("Close")
    browser.wait_until(lambda: "record a keyframe" not in browser.page_text(), what="the help to close")


def test_the_screenshot_button_downloads_the_view(home, browser):
    for old in browser.downloads.glob("*.png"):
        old.unlink()
    browser.click_button("Screenshot")
    image = iio.imread(browser.wait_for_download(".png", timeout=20))[..., :3]
    assert image.shape[:2] == (720, 1280)
    assert distinct_colours(image) > 200


def test_the_view_switches_to_the_planar_2r_and_back(home, browser):
    from robokin_ros.studio.app import ARM_VIEW, PLANAR_VIEW
    home.view.value = PLANAR_VIEW                 # the dropdown's value as the page would send it
    try:
        browser.wait_for_text("J11 =")
        browser.wait_until(lambda: "Tool and gizmo" not in browser.page_text(), what="the arm's folders to hide")
        numbers = re.search(r"q1 = (-?[\d.]+) deg\s+q2 = (-?[\d.]+) deg\s+x = (-?[\d.]+) m\s+y = (-?[\d.]+) m",
                            browser.page_text())
        q1, q2, x, y = (float(v) for v in numbers.groups())
        l1, l2 = home.planar.model.arm.l1, home.planar.model.arm.l2
        a, b = np.radians(q1), np.radians(q1 + q2)
        assert x == pytest.approx(l1 * np.cos(a) + l2 * np.cos(b), abs=6e-5)
        assert y == pytest.approx(l1 * np.sin(a) + l2 * np.sin(b), abs=6e-5)
        browser.click_button("Run")                  # a trace and velocity plots for the README picture
        time.sleep(3.0)
        browser.click_button("Pause")
        readme_screenshot(home, browser, "planar_2r", ready="J11 =")
    finally:
        home.view.value = ARM_VIEW
    browser.wait_for_text("Tool and gizmo")


def test_the_robot_picker_loads_another_robot_and_refuses_a_bad_urdf(home, browser):
    from robokin_ros.studio.robot_picker import URDF_FILE
    picker = home.picker
    try:
        picker.choice.value = "ur5"
        browser.click_button("Load robot")
        browser.wait_for_text("ur5: 6 DOF", timeout=30)
        browser.wait_for_text("shoulder_pan_joint [deg]")
        brand = re.search(r"Brand\s+(.+)", browser.page_text())               # the info table's row
        assert brand and brand.group(1).strip() == "Universal Robots", "the info panel names no brand"
        assert home.robot.name == "ur5"
        picker.choice.value = URDF_FILE
        picker.path.value, picker.base_frame.value, picker.tip_frame.value = "/nonexistent/arm.urdf", "base", "tool"
        browser.click_button("Load robot")
        browser.wait_for_text("Not loaded")
        assert "URDF file not found" in browser.page_text() and home.robot.name == "ur5"
    finally:
        picker.choice.value = "panda"
        home.load_robot("panda")
    browser.wait_for_text("panda_joint1 [deg]", timeout=30)
