"""Speed and separation monitoring: v_max = v_safe * min(d, d_safety) / d_safety, 0 below the protective distance,
and the slowest speed (v_safe * d_protective / d_safety) when the distance is missing or stale. Evidence: speeds
worked out by hand for a monitor with round numbers, and invariants of the scale helper."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from robokin_ros.core.errors import ConfigError, InvalidInputError
from robokin_ros.core.servo.separation import SeparationMonitor, SeparationVerdict, speed_scale


@pytest.fixture
def monitor():
    # round numbers: v_max = 0.5 m/s * d / 2 m = d / 4 [m/s]; slowest = 0.5 * 0.5 / 2 = 0.125 m/s
    return SeparationMonitor(v_safe=0.5, d_safety=2.0, d_protective=0.5, timeout=0.1)


@pytest.mark.parametrize("distance, speed, verdict", [
    (0.0, 0.0, SeparationVerdict.PROTECTIVE_STOP),
    (0.49, 0.0, SeparationVerdict.PROTECTIVE_STOP),
    (0.5, 0.125, SeparationVerdict.SLOWED),              # at the protective distance: slowest, not stopped
    (1.0, 0.25, SeparationVerdict.SLOWED),
    (1.5, 0.375, SeparationVerdict.SLOWED),
    (2.0, 0.5, SeparationVerdict.OK),
    (7.5, 0.5, SeparationVerdict.OK),                    # capped at v_safe
])
def test_the_allowed_speed_follows_the_formula(monitor, distance, speed, verdict):
    monitor.set_distance(distance, 10.0)
    limit = monitor.speed_limit(10.02)
    assert limit.speed == pytest.approx(speed, abs=1e-15) and limit.verdict is verdict
    assert monitor.speed_at(distance) == limit.speed
    assert limit.distance == distance and limit.age == pytest.approx(0.02)


def test_the_speed_grows_continuously_with_the_distance_above_the_protective_distance(monitor):
    distances = np.linspace(0.5, 3.0, 2501)
    speeds = np.array([monitor.speed_at(d) for d in distances])
    assert np.all(np.diff(speeds) >= 0.0)
    assert np.abs(np.diff(speeds)).max() <= 0.25 * (distances[1] - distances[0]) + 1e-15    # slope v_safe / d_safety


def test_the_messages_give_distance_speed_and_age(monitor):
    monitor.set_distance(1.2, 3.0)
    assert monitor.speed_limit(3.04).message == ("person 1200 mm away, within the safety distance 2000 mm: tool speed "
                                                 "limited to 300 mm/s (reading 40 ms old)")
    monitor.set_distance(0.2, 3.05)
    assert "person 200 mm away, within the protective distance 500 mm: protective stop, tool speed limited to 0 mm/s" \
        in monitor.speed_limit(3.06).message
    monitor.set_distance(2.5, 3.1)
    assert "beyond the safety distance 2000 mm: full tool speed 500 mm/s allowed" in monitor.speed_limit(3.1).message


def test_no_reading_yet_means_the_slowest_speed(monitor):
    limit = monitor.speed_limit(0.0)
    assert limit.verdict is SeparationVerdict.NO_READING
    assert limit.speed == monitor.slowest_speed == pytest.approx(0.5 * 0.5 / 2.0)
    assert math.isnan(limit.distance) and math.isnan(limit.age)
    assert limit.message == "no separation distance received yet: tool speed limited to the slowest, 125 mm/s"


def test_a_stale_reading_means_the_slowest_speed_never_the_fastest(monitor):
    monitor.set_distance(5.0, 1.0)                            # nobody near: full speed while fresh
    assert monitor.speed_limit(1.09).speed == 0.5
    stale = monitor.speed_limit(1.2)
    assert stale.verdict is SeparationVerdict.STALE and stale.speed == pytest.approx(0.125)
    assert stale.message == ("separation distance is stale (last reading 5000 mm, 200 ms old, timeout 100 ms): tool "
                             "speed limited to 125 mm/s, the slowest")


def test_a_stale_reading_does_not_release_a_protective_stop(monitor):
    monitor.set_distance(0.3, 1.0)
    assert monitor.speed_limit(1.05).verdict is SeparationVerdict.PROTECTIVE_STOP
    stale = monitor.speed_limit(2.0)
    assert stale.verdict is SeparationVerdict.STALE and stale.speed == 0.0
    assert "the last reading was a protective stop, which holds" in stale.message


def test_a_reading_from_far_in_the_future_counts_as_stale(monitor):
    monitor.set_distance(5.0, 100.0)                          # the clock jumped back by 99 s
    assert monitor.speed_limit(1.0).verdict is SeparationVerdict.STALE


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, -0.01, True, "1.0", None])
def test_bad_distances_are_refused_and_the_last_good_one_kept(monitor, bad):
    monitor.set_distance(1.0, 5.0)
    with pytest.raises(InvalidInputError) as err:
        monitor.set_distance(bad, 5.05)
    assert "separation distance must be a finite distance >= 0 [m], got" in str(err.value)
    limit = monitor.speed_limit(5.06)
    assert limit.distance == 1.0 and limit.speed == 0.25 and limit.age == pytest.approx(0.06)


def test_bad_times_are_refused(monitor):
    with pytest.raises(InvalidInputError, match="received_at must be a finite time"):
        monitor.set_distance(1.0, math.nan)
    with pytest.raises(InvalidInputError, match="now must be a finite time"):
        monitor.speed_limit(math.inf)
    assert monitor.speed_limit(0.0).verdict is SeparationVerdict.NO_READING


def test_numpy_scalars_are_accepted(monitor):
    monitor.set_distance(np.float32(1.0), np.float64(2.0))
    assert monitor.speed_limit(np.float64(2.0)).speed == pytest.approx(0.25)


def test_bad_parameters_are_all_named_at_once():
    with pytest.raises(ConfigError) as err:
        SeparationMonitor(v_safe=0.0, d_safety=math.nan, d_protective=-0.1, timeout=True)
    assert err.value.problems == ("v_safe=0.0 [m/s] must be > 0.0", "d_safety=nan [m] must be a finite number",
                                  "d_protective=-0.1 [m] must be >= 0.0", "timeout=True [s] must be a finite number")
    with pytest.raises(ConfigError, match=r"d_protective=1.0 \[m\] must be < d_safety=1.0 \[m\]"):
        SeparationMonitor(d_safety=1.0, d_protective=1.0)


def test_a_zero_protective_distance_makes_missing_readings_stop_the_arm():
    strict = SeparationMonitor(d_protective=0.0)
    assert strict.speed_limit(0.0).speed == 0.0
    strict.set_distance(0.0, 0.0)
    assert strict.speed_limit(0.0).verdict is SeparationVerdict.SLOWED     # 0 m is not below 0 m


@pytest.mark.parametrize("allowed, commanded, scale", [
    (0.1, 0.2, 0.5), (0.3, 0.2, 1.0), (0.2, 0.2, 1.0), (0.0, 0.2, 0.0), (0.0, 0.0, 1.0), (0.1, 0.0, 1.0),
])
def test_the_scale_brings_the_command_down_to_the_allowed_speed(allowed, commanded, scale):
    assert speed_scale(allowed, commanded) == pytest.approx(scale)


@given(allowed=st.floats(0.0, 10.0, allow_subnormal=False), commanded=st.floats(0.0, 10.0, allow_subnormal=False))
def test_the_scaled_command_never_exceeds_the_allowed_speed_nor_slows_a_permitted_one(allowed, commanded):
    scale = speed_scale(allowed, commanded)
    assert 0.0 <= scale <= 1.0
    assert scale * commanded <= allowed * (1.0 + 1e-15)
    if commanded <= allowed:
        assert scale == 1.0
    else:
        assert scale * commanded == pytest.approx(allowed, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("allowed, commanded, name", [
    (-0.1, 0.2, "allowed_speed"), (math.nan, 0.2, "allowed_speed"), (0.1, math.inf, "commanded_speed"),
    (0.1, -1e-9, "commanded_speed"),
])
def test_the_scale_refuses_bad_speeds(allowed, commanded, name):
    with pytest.raises(InvalidInputError, match=f"{name} must be a finite speed >= 0"):
        speed_scale(allowed, commanded)
