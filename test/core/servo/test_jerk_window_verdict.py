"""The outgoing check of a jerk-limited window, made in the window's own compiled call (`JerkWindows.verdict`, which
Servo.step uses for the window it publishes), is the check the servo makes of any other window: `WindowBuilder.check`
(position, velocity, acceleration rules), then `window_jerk_violation` (the jerk rule), each called on its own.

Windows from seeded random states (near and past the limit margins, velocities and accelerations up to and past the
limits) with the Panda's published joint jerk limits (Franka, control parameters), checked against those limits
and against limits the windows break (a tenth of them, half the velocity limits): every code
agrees, the failing ones included."""
import numpy as np
import pytest

from panda_figures import AMAX, JERK, LOWER, UPPER, VMAX
from robokin_ros.core.servo.jerk_window import JerkWindows
from robokin_ros.core.servo.window import WindowBuilder
from robokin_ros.core.trajectory.jerk_check import CONTROLLER_PERIOD, window_jerk_violation
from robokin_ros.core.trajectory.outgoing_check import JERK_TOLERANCE, WINDOW_JERK, WINDOW_OK

DT = 0.002


def separate_checks(checker: WindowBuilder, window, jerk: np.ndarray) -> int:
    """What Servo.step makes of a window it did not build (`WindowBuilder.check`, then the jerk rule)."""
    code = checker.check(window)
    if code == WINDOW_OK:
        code = window_jerk_violation(window.times, window.positions, window.velocities, jerk, JERK_TOLERANCE,
                                     CONTROLLER_PERIOD)
    return code


@pytest.mark.parametrize("checked", ["own limits", "a tenth of the jerk limits", "tighter velocity limits"])
def test_the_window_s_own_verdict_is_the_separate_checks(checked):
    limits = np.vstack((LOWER, UPPER, LOWER + 0.02, UPPER - 0.02, AMAX, VMAX))
    builder = JerkWindows(DT, 0.05, 1.0, limits, JERK)
    check_limits, check_jerk = limits.copy(), JERK
    if checked == "a tenth of the jerk limits":
        builder.jerk = check_jerk = JERK / 10.0
    elif checked == "tighter velocity limits":
        check_limits[5] *= 0.5
        builder.limits[5] = check_limits[5]         # the row the check reads (the plans read the velocity cap's)
    checker = WindowBuilder(DT, 0.05, 1.0, check_limits)
    rng = np.random.default_rng(28)
    codes = []
    for _ in range(400):
        q = rng.uniform(LOWER - 0.02, UPPER + 0.02)
        v = rng.uniform(-1.1, 1.1, 7) * VMAX * rng.choice([0.0, 0.01, 0.3, 1.0], 7)
        a = rng.uniform(-1.0, 1.0, 7) * AMAX * rng.choice([0.0, 0.1, 1.0], 7)
        wanted = rng.uniform(-1.2, 1.2, 7) * VMAX * rng.choice([0.0, 0.05, 0.5, 1.0], 7)
        if rng.random() < 0.2:
            window, _ = builder.stopping(q, v, a)
        else:
            window, _ = builder.build(q, v, a, wanted, bool(rng.random() < 0.8))
        assert builder.window is window
        expected = separate_checks(checker, window, check_jerk)
        assert builder.verdict == expected
        codes.append(expected)
    if checked == "own limits":
        assert WINDOW_OK in codes
    else:                           # the windows break what they are checked against: failing codes compared too
        assert sum(c != WINDOW_OK for c in codes) > 50
        if checked == "a tenth of the jerk limits":
            assert WINDOW_JERK in codes
