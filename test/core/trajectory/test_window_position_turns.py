"""`window_violation`'s position rule between the points: the cubic Hermite's turns past a limit, and only those,
are reported, including the intervals its Bezier-hull test passes without solving for the turns (issue 27's cheaper
tick). Evidence: each interval's turn positions from numpy's polynomial roots, kept only where they are clear of
the limit plus POSITION_TOLERANCE by far more than any rounding."""
import numpy as np

from robokin_ros.core.trajectory.outgoing_check import (
    POSITION_TOLERANCE,
    WINDOW_OK,
    WINDOW_POSITION,
    window_violation,
)


def _turn_extremes(h, p0, p1, v0, v1):
    """(lowest, highest) position of the cubic Hermite over the interval, at its ends and its turns."""
    m0, m1, dp = v0 * h, v1 * h, p1 - p0
    cubic = np.array([m0 + m1 - 2.0 * dp, 3.0 * dp - 2.0 * m0 - m1, m0, p0])     # in s, highest power first
    turns = [s.real for s in np.roots(np.polyder(cubic)) if abs(s.imag) < 1e-12 and 0.0 < s.real < 1.0]
    values = [p0, p1] + [float(np.polyval(cubic, s)) for s in turns]
    return min(values), max(values)


def test_turns_past_a_limit_are_found_with_or_without_the_hull():
    rng = np.random.default_rng(27)
    lower, upper = np.array([-1.0]), np.array([1.0])
    vmax, amax = np.array([1e9]), np.array([1e12])
    checked = {WINDOW_OK: 0, WINDOW_POSITION: 0}
    for _ in range(20000):
        h = rng.choice([1e-4, 2e-3, 0.05])
        p0, p1 = rng.uniform(0.9, 1.0, 2) if rng.random() < 0.5 else rng.uniform(-1.0, -0.9, 2)
        v0, v1 = rng.normal(0.0, 0.2 / h, 2) * rng.choice([1e-6, 1e-3, 1.0])
        # a last point at rest (the window rule) at p1, 2 h later: its interval turns too, and counts alike
        (low, high), (low2, high2) = _turn_extremes(h, p0, p1, v0, v1), _turn_extremes(2.0 * h, p1, p1, v1, 0.0)
        low, high = min(low, low2), max(high, high2)
        past = high > upper[0] + POSITION_TOLERANCE or low < lower[0] - POSITION_TOLERANCE
        clear = min(abs(high - upper[0] - POSITION_TOLERANCE), abs(low - lower[0] + POSITION_TOLERANCE))
        if clear < 1e-12:
            continue                    # too close to the line to say which side without the rounding
        code = window_violation(np.array([0.0, h, 3.0 * h]), np.array([[p0], [p1], [p1]]),
                                np.array([[v0], [v1], [0.0]]), lower, upper, vmax, amax, 2e-3)[0]
        assert code == (WINDOW_POSITION if past else WINDOW_OK), (h, p0, p1, v0, v1, low, high)
        checked[code] += 1
    assert min(checked.values()) > 1000     # both sides met often (hull passes and turns past a limit)
