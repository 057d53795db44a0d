"""Jerk on the spline a joint_trajectory_controller plays (core/trajectory/jerk_check.py), measured two ways: the
exact peaks from the interval polynomials, and finite differences of the sampled acceleration at a controller's
rate; both against textbook profiles whose jerk is known in closed form."""
import time

import numpy as np
import pytest

from robokin_ros.core.trajectory import jerk_check
from robokin_ros.core.trajectory.jerk_check import (
    CONTROLLER_PERIOD,
    played_acceleration,
    played_jerk_peaks,
    sampled_jerk,
    window_jerk_violation,
)
from robokin_ros.core.trajectory.outgoing_check import LIMIT_TOLERANCE, WINDOW_JERK, WINDOW_OK, window_rejection


def quintic_rest_to_rest(d, duration, k=11):
    """The minimum-jerk rest-to-rest move over d in `duration`: jerk 60 d / T^3 at both ends (textbook)."""
    t = np.linspace(0.0, duration, k)
    s = t / duration
    q = d * (10 * s**3 - 15 * s**4 + 6 * s**5)
    v = d * (30 * s**2 - 60 * s**3 + 30 * s**4) / duration
    a = d * (60 * s - 180 * s**2 + 120 * s**3) / duration**2
    return t, q[:, None], v[:, None], a[:, None]


def s_curve(jerk, phases, per_phase=3):
    """A rest-to-rest move of piecewise-constant jerk: `phases` [(duration [s], jerk sign)], integrated in closed
    form; points at every switching time and `per_phase` - 1 between. Returns times, q, v, a (k, 1)."""
    state = np.zeros(3)                                                    # p, v, a at the phase start
    times, rows, start = [], [], 0.0
    for duration, sign in phases:
        j = sign * jerk
        for u in np.linspace(0.0, duration, per_phase + 1)[:-1]:
            p, v, a = state
            times.append(start + u)
            rows.append((p + v * u + a * u**2 / 2 + j * u**3 / 6, v + a * u + j * u**2 / 2, a + j * u))
        p, v, a = state
        state = np.array([p + v * duration + a * duration**2 / 2 + j * duration**3 / 6,
                          v + a * duration + j * duration**2 / 2, a + j * duration])
        start += duration
    times.append(start)
    rows.append(tuple(state))
    rows = np.array(rows)
    return np.array(times), rows[:, :1], rows[:, 1:2], rows[:, 2:3]


# 7 phases: jerk up, hold acceleration, jerk down, cruise, and the mirror: ends at rest with a = 0
S_CURVE_PHASES = [(0.1, 1), (0.2, 0), (0.1, -1), (0.3, 0), (0.1, -1), (0.2, 0), (0.1, 1)]


def test_quintic_rest_to_rest_has_the_textbook_peak_jerk():
    d, duration = 0.8, 1.6
    t, q, v, a = quintic_rest_to_rest(d, duration)
    peaks = played_jerk_peaks(t, q, v, a)
    assert peaks.interpolation == "quintic"
    assert peaks.jerk[0] == pytest.approx(60 * d / duration**3, rel=1e-10)
    assert peaks.time[0] in (pytest.approx(0.0, abs=1e-12), pytest.approx(duration, abs=1e-12))
    measured = np.abs(sampled_jerk(t, q, v, a).jerk).max()
    # a finite difference is the mean jerk over 1 ms: below the peak by at most the snap (360 d / T^4) times 1 ms
    assert 60 * d / duration**3 - 360 * d / duration**4 * 1e-3 <= measured <= 60 * d / duration**3 * (1 + 1e-9)


def test_s_curve_jerk_is_played_exactly_by_both_splines():
    """Points at every switching time of a piecewise-cubic move: quintic and cubic Hermite both reproduce it, with
    continuous acceleration, so both measurements give the profile's jerk."""
    jerk = 40.0
    t, q, v, a = s_curve(jerk, S_CURVE_PHASES)
    assert abs(a[-1, 0]) < 1e-12 and abs(v[-1, 0]) < 1e-12
    for accelerations in (a, None):
        peaks = played_jerk_peaks(t, q, v, accelerations)
        assert peaks.jerk[0] == pytest.approx(jerk, rel=1e-8)
        sampled = np.abs(sampled_jerk(t, q, v, accelerations, phase=3.7e-4).jerk).max()
        assert sampled == pytest.approx(jerk, rel=1e-6)
        # the played acceleration is the profile's: the spline adds nothing between the points
        dense = np.linspace(0.0, t[-1], 997)
        exact = np.interp(dense, t, a[:, 0])                               # a is piecewise linear in time
        assert np.abs(played_acceleration(t, q, v, accelerations, dense)[:, 0] - exact).max() < 1e-8 * jerk


def random_points(rng, k, m, interval=(0.05, 0.3)):
    t = np.concatenate([[0.0], np.cumsum(rng.uniform(*interval, k - 1))])
    return t, rng.normal(size=(k, m)), rng.normal(size=(k, m)), rng.normal(size=(k, m)) * 5


def test_quintic_peaks_match_fine_finite_differences_on_random_splines():
    """Random quintic splines ending at rest acceleration (no hold step): the peak of the sampled jerk at 20 kHz
    approaches the exact peak; the difference is the jerk's variation over one sample."""
    rng = np.random.default_rng(7)
    for _ in range(20):
        t, q, v, a = random_points(rng, 6, 3)
        a[-1] = 0.0
        peaks = played_jerk_peaks(t, q, v, a, period=1 / 20000)
        sampled = np.abs(sampled_jerk(t, q, v, a, rate_hz=20000).jerk).max(axis=0)
        assert np.all(sampled <= peaks.jerk * (1 + 1e-3))
        assert np.all(sampled >= peaks.jerk * (1 - 1e-2))


def test_cubic_steps_are_seen_at_the_worst_sampling_phase():
    """A cubic Hermite's acceleration steps at the points: over sampling phases, the 1 kHz finite differences reach
    the step / period figure (plus the neighbouring jerk) and never exceed it."""
    rng = np.random.default_rng(11)
    for _ in range(10):
        t, q, v, _ = random_points(rng, 5, 2)
        peaks = played_jerk_peaks(t, q, v)
        assert peaks.interpolation == "cubic"
        over_phases = np.max([np.abs(sampled_jerk(t, q, v, phase=phase).jerk).max(axis=0)
                              for phase in np.linspace(0.0, CONTROLLER_PERIOD, 41)[:-1]], axis=0)
        assert np.all(over_phases <= peaks.jerk * (1 + 1e-9))
        assert np.all(over_phases >= peaks.jerk * (1 - 0.03))


def test_the_hold_after_the_last_point_counts():
    """A quintic ending with acceleration a steps to the hold's 0: a / period, and the sampled jerk sees it."""
    t = np.array([0.0, 0.5])
    q, v, a = np.array([[0.0], [0.1]]), np.array([[0.0], [0.0]]), np.array([[0.0], [2.0]])
    peaks = played_jerk_peaks(t, q, v, a)
    assert peaks.jerk[0] >= 2.0 / CONTROLLER_PERIOD
    assert peaks.time[0] == 0.5
    assert np.abs(sampled_jerk(t, q, v, a).jerk).max() == pytest.approx(peaks.jerk[0], rel=0.05)


def test_a_trajectory_from_rest_counts_the_step_into_its_first_point():
    """At rest before the first point (every velocity 0): the arm held still, so a first acceleration a is a step
    a / period, seen by the sampled jerk too; a trajectory that starts in motion is not judged there."""
    t = np.array([0.0, 0.2, 0.4])
    q = np.array([[0.0], [0.03], [0.06]])
    v = np.array([[0.0], [0.3], [0.0]])
    a = np.array([[3.0], [0.0], [-3.0]])
    from_rest = played_jerk_peaks(t, q, v, a)
    assert from_rest.jerk[0] >= 3.0 / CONTROLLER_PERIOD and from_rest.time[0] in (0.0, 0.4)
    assert np.abs(sampled_jerk(t, q, v, a).jerk).max() == pytest.approx(from_rest.jerk[0], rel=0.02)
    a_end_zero = a.copy()
    a_end_zero[-1] = 0.0
    judged = played_jerk_peaks(t, q, v, a_end_zero)
    assert judged.jerk[0] >= 3.0 / CONTROLLER_PERIOD and judged.time[0] == 0.0
    not_judged = played_jerk_peaks(t, q, v, a_end_zero, from_rest=False)
    assert not_judged.jerk[0] < 3.0 / CONTROLLER_PERIOD / 10
    assert np.abs(sampled_jerk(t, q, v, a_end_zero, from_rest=False).jerk).max() <= not_judged.jerk[0] * (1 + 1e-9)
    moving = v.copy()
    moving[0] = 0.1                                                        # in motion: not at rest, not judged
    assert played_jerk_peaks(t, q, moving, a_end_zero).jerk[0] < 3.0 / CONTROLLER_PERIOD / 10


def test_linear_is_unbounded_where_the_velocity_steps():
    t = np.array([0.0, 1.0, 2.0])
    straight = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    peaks = played_jerk_peaks(t, straight)
    assert peaks.interpolation == "linear"
    assert peaks.jerk[0] == np.inf and peaks.time[0] == 2.0              # constant speed, then the hold
    assert peaks.jerk[1] == 0.0                                          # never moves
    bent = np.array([[0.0], [1.0], [1.5]])
    assert played_jerk_peaks(t, bent).time[0] == 1.0
    one = played_jerk_peaks([0.0], [[1.0, 2.0]])
    assert one.interpolation == "none" and np.all(one.jerk == 0.0)
    with pytest.raises(ValueError, match="needs velocities"):
        sampled_jerk(t, straight)


def servo_like_window(rng, k=20, n=7, tick=0.002):
    """Positions and velocities of a smooth random motion sampled at a servo tick, ending at rest."""
    t = np.arange(k) * tick
    freq = rng.uniform(0.5, 2.0, n)
    phase = rng.uniform(0, 2 * np.pi, n)
    fade = np.cos(0.5 * np.pi * t / t[-1])[:, None] ** 2                  # velocity fades to 0 at the end
    velocities = np.ascontiguousarray(0.3 * np.sin(2 * np.pi * freq * t[:, None] + phase) * fade)
    positions = np.ascontiguousarray(np.cumsum(velocities, axis=0) * tick)
    velocities[-1] = 0.0
    return t, positions, velocities


def test_compiled_window_check_agrees_with_the_exact_peaks():
    rng = np.random.default_rng(3)
    for _ in range(30):
        t, p, v = servo_like_window(rng)
        peaks = played_jerk_peaks(t, p, v, from_rest=False).jerk
        tol = LIMIT_TOLERANCE
        assert window_jerk_violation(t, p, v, peaks * 1.0001, tol, CONTROLLER_PERIOD) == WINDOW_OK
        assert window_jerk_violation(t, p, v, peaks / (1 + tol) * 1.0001, tol, CONTROLLER_PERIOD) == WINDOW_OK
        for j in range(p.shape[1]):
            below = peaks.copy()
            below[j] = peaks[j] / (1 + tol) * 0.999
            assert window_jerk_violation(t, p, v, below, tol, CONTROLLER_PERIOD) == WINDOW_JERK
    assert window_jerk_violation(t, p, v, np.full(p.shape[1], np.inf), tol, CONTROLLER_PERIOD) == WINDOW_OK


def test_the_window_codes_are_the_outgoing_checks():
    assert (jerk_check.WINDOW_OK, jerk_check.WINDOW_JERK) == (WINDOW_OK, WINDOW_JERK) == (0, 7)


def test_compiled_window_check_takes_microseconds():
    t, p, v = servo_like_window(np.random.default_rng(5))
    limits = np.full(p.shape[1], 1e12)
    window_jerk_violation(t, p, v, limits, LIMIT_TOLERANCE, CONTROLLER_PERIOD)
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(1000):
            window_jerk_violation(t, p, v, limits, LIMIT_TOLERANCE, CONTROLLER_PERIOD)
        runs.append((time.perf_counter() - start) / 1000)
    print(f"window_jerk_violation, 20 points x 7 joints: {min(runs) * 1e6:.2f} us")
    assert min(runs) < 50e-6                                              # shared machine: a loose bound


def test_window_rejection_says_the_jerk_sentence_only_when_given_limits():
    t, p, v = servo_like_window(np.random.default_rng(9))
    n = p.shape[1]
    names = [f"j{i}" for i in range(n)]
    wide = (np.full(n, -10.0), np.full(n, 10.0), np.full(n, 100.0), np.full(n, 1e4))
    peaks = played_jerk_peaks(t, p, v, from_rest=False).jerk
    assert window_rejection(t, p, v, names, *wide) is None                               # default: no jerk rule
    assert window_rejection(t, p, v, names, *wide, j_max=peaks * 1.01) is None
    tight = peaks * 1.01
    tight[4] = peaks[4] * 0.5
    rejection = window_rejection(t, p, v, names, *wide, j_max=tight)
    assert rejection is not None and not rejection.by_jtc
    assert rejection.rule == "joint jerk limits"
    assert "joint 'j4' reaches jerk" in rejection.message and "2 x its limit" in rejection.message
