"""The studio with two arms in a real browser (headless Chromium): the picker loads dual_panda through the page,
the page shows both hands' poses, and scripted gizmo moves (the calls a drag ends in, see test_studio_browser.py)
move the hands the page shows as Pinocchio's FK says. Also takes docs/studio_two_arms.png (coordinated mode)."""
import re
import time

import pytest
from studio_helpers import free_port, keep_screenshot, need_browser

need_browser()   # before selenium and imageio are imported: skips here without them (fails under CI)

import numpy as np  # noqa: E402
from browser import canvas_region, distinct_colours  # noqa: E402

TOOL_LINE = re.compile(r"tool x = (-?[\d.]+) m, y = (-?[\d.]+) m, z = (-?[\d.]+) m")
LEFT, RIGHT = "left_panda_hand_tcp", "right_panda_hand_tcp"
SHOWN = 1.5e-4       # [m] the page prints 4 decimals of a metre


@pytest.fixture(scope="module")
def studio(browser):
    from robokin_ros.studio.app import StudioApp
    app = StudioApp("panda", port=free_port(), render="light").start()
    browser.open(app.url, "tool x =", timeout=60)
    yield app
    app.stop()


def shown_hands(browser) -> np.ndarray:
    """(2, 3) the positions [m] the page shows for the first and the second tip."""
    lines = TOOL_LINE.findall(browser.page_text())
    assert len(lines) >= 2, "the page shows fewer than two tool lines"
    return np.array(lines[:2], float)


def test_two_arms_from_the_picker_gizmos_per_tip_and_the_object_gizmo(studio, browser):
    studio.picker.choice.value = "dual_panda"
    browser.click_button("Load robot")
    browser.wait_for_text("right_panda_joint7 [deg]", timeout=60)
    browser.wait_for_text(RIGHT)
    robot = studio.robot
    assert robot.tip_frames == (LEFT, RIGHT)
    hands = np.array([robot.fk(studio.session.positions, tip).translation for tip in robot.tip_frames])
    browser.wait_until(lambda: np.allclose(shown_hands(browser), hands, atol=SHOWN), what="both hands shown at FK")
    time.sleep(2.0)
    assert distinct_colours(canvas_region(browser.screenshot())) > 50         # the arms are drawn

    # the right hand's gizmo: the right hand goes there, the left stays
    goal = hands[1] + np.array([0.04, 0.03, -0.03])
    studio.move_tip_gizmo(RIGHT, goal)
    browser.wait_until(lambda: np.allclose(shown_hands(browser)[1], goal, atol=1e-3), timeout=30,
                       what="the right hand at its gizmo")
    assert np.allclose(shown_hands(browser)[0], hands[0], atol=SHOWN)

    # coordinated, from hands facing each other as if holding a box: the object gizmo moves both hands 5 cm
    studio.set_positions(hands_facing(robot))
    choose(browser, "Hands", "coordinated")                   # the panel's mode control, as a person picks it
    browser.wait_until(lambda: studio.session.tips_mode == "coordinated", what="coordinated mode from the page")
    browser.wait_for_text("the object gizmo")
    assert studio.arm.scene.object_gizmo.visible
    before = shown_hands(browser)
    step = np.array([0.0, 0.0, 0.05])
    studio.move_object_gizmo(studio.session.object_pose().translation + step)
    browser.wait_until(lambda: np.allclose(shown_hands(browser) - before, step, atol=SHOWN), timeout=30,
                       what="both hands 5 cm up")
    # a turn of the object for the picture: the hands go round it, still holding it
    object_pose = studio.session.object_pose()
    c, s = np.cos(0.15), np.sin(0.15)
    studio.move_object_gizmo(object_pose.translation, (c, 0.0, 0.0, s))
    time.sleep(2.0)
    two_arms_screenshot(studio, browser)


def choose(browser, label: str, option: str) -> None:
    """Pick `option` in the GUI dropdown labelled `label` (viser's is a Mantine select: open it, click the option)."""
    from selenium.webdriver.common.by import By
    browser.click(browser.control(label))
    browser.wait_until(lambda: browser.driver.find_elements(By.XPATH, f"//*[@role='option'][normalize-space(.)="
                                                                      f"'{option}']"), what=f"option '{option}'")
    found = browser.driver.find_element(By.XPATH, f"//*[@role='option'][normalize-space(.)='{option}']")
    browser.click(found)


def hands_facing(robot, gap: float = 0.3) -> np.ndarray:
    """Positions with the hands facing each other `gap` [m] apart, 0.5 m in front of the robot (pose IK)."""
    import pinocchio as pin
    from robokin_ros.core.ik.pose_ik import solve_pose
    q = robot.home()
    for tip, side in ((LEFT, 1.0), (RIGHT, -1.0)):
        z, x = np.array([0.0, -side, 0.0]), np.array([0.0, 0.0, -1.0])
        target = pin.SE3(np.column_stack((x, np.cross(z, x), z)), np.array([0.5, side * gap / 2, 0.45]))
        result = solve_pose(robot, target, q, robot.frame_id(tip), margin=0.2)
        assert result.success, result
        q = result.positions
    return q


def two_arms_screenshot(app, browser) -> None:
    """docs/studio_two_arms.png (with ROBOKIN_UPDATE_SCREENSHOTS=1): the standard look, the Hands control in view."""
    from test_studio_browser import _close_notifications, switch_render
    switch_render(app, browser, "standard", RIGHT)
    try:
        _close_notifications(browser)
        browser.focus(browser.control("Hands"))
        time.sleep(1.5)
        keep_screenshot(browser, "two_arms")
    finally:
        switch_render(app, browser, "light", RIGHT)
