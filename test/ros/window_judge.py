"""The servo's motion judged the way a controller sees it: from the published JointTrajectory windows (the cubic
spline JTC plays through each window's points, the velocities of consecutive points, and the velocity step from one
window to the next), never from a simulated arm's reported velocities, which are finite differences over
intervals that timer jitter makes unequal.

A window is anything with `stamp` [s], `times` (k,) [s], `positions` (k, n) and `velocities` (k, n), in the order
of `amax` (n,).
"""
import numpy as np

from robokin_ros.core.trajectory.outgoing_check import interval_peaks
from robokin_ros.core.servo.window import sample_window

# the outgoing check's tolerance (core/trajectory/outgoing_check.py LIMIT_TOLERANCE); messages carry times in whole
# nanoseconds
WITHIN = 1.002
# between windows the time is the stamps' difference, which carries the jitter of reading the ROS clock (a few us
# against 2 ms periods; see core/servo/tick_clock.py)
BETWEEN = 1.01


def within_windows(windows, amax) -> tuple[float, float, str]:
    """(peak |acceleration| / limit on the cubic spline JTC plays through each window, the same from the velocities
    of consecutive points, where the first peak is), over the windows."""
    worst_spline, worst_points, where = 0.0, 0.0, ""
    for i, w in enumerate(windows):
        peaks = interval_peaks(w.times, w.positions, w.velocities).acceleration / amax         # (k - 1, n)
        points = np.abs(np.diff(w.velocities, axis=0)) / np.diff(w.times)[:, None] / amax
        worst_points = max(worst_points, float(points.max()))
        if peaks.max() > worst_spline:
            worst_spline = float(peaks.max())
            k, j = np.unravel_index(np.argmax(peaks), peaks.shape)
            span = f"{w.times[k] * 1e3:.2f}-{w.times[k + 1] * 1e3:.2f} ms"
            where = f"window {i}, joint {j + 1}, points {k}-{k + 1} ({span})"
    return worst_spline, worst_points, where


def between_windows(windows, amax) -> tuple[float, float]:
    """(largest velocity step from the previous window, sampled where the controller leaves it, to the next one's
    start, over the acceleration limit times the time between their stamps; the same from first point to first
    point)."""
    worst_switch = worst_first = 0.0
    q, v = np.empty(amax.size), np.empty(amax.size)
    for w1, w2 in zip(windows, windows[1:]):
        gap = w2.stamp - w1.stamp
        if gap <= 0.0:
            continue
        sample_window(w1.times, w1.positions, w1.velocities, gap, q, v)
        worst_switch = max(worst_switch, float((np.abs(w2.velocities[0] - v) / (amax * gap)).max()))
        worst_first = max(worst_first, float((np.abs(w2.velocities[0] - w1.velocities[0]) / (amax * gap)).max()))
    return worst_switch, worst_first
