"""Hand guiding admittance: M dv/dt + D v = saturate(deadband(F - bias)). Evidence: the closed-form solution of the
first-order ODE under a constant push, v(t) = v_ss (1 - exp(-D t / M)) with v_ss = (|F| - deadband) / D along
F / |F|, written out here independently of the module; and the dead band, saturation, bias, staleness and input
checks against hand-computed values."""
import itertools
import math

import numpy as np
import pytest

from robokin_ros.core.errors import ConfigError, InvalidInputError
from robokin_ros.core.servo.admittance import GuidingStatus, HandGuiding, deadband, effective_wrench, relax, saturate
from robokin_ros.core.servo.config import HandGuidingConfig

P = HandGuidingConfig()
PUSH = np.array([6.0, -8.0, 0.0, 0.0, 0.0, 1.2])      # 10 N in the xy plane, 1.2 N m about z


def steady_twist(push, params=P):
    """(|F| - deadband) / D along F / |F|, for force and torque, by hand (no saturation or cap involved)."""
    f, t = push[:3], push[3:]
    linear = (np.linalg.norm(f) - params.force_deadband) / params.damping * f / np.linalg.norm(f)
    angular = (np.linalg.norm(t) - params.torque_deadband) / params.angular_damping * t / np.linalg.norm(t)
    return np.concatenate((linear, angular))


def closed_form(push, t, params=P):
    """The ODE's solution from rest under a constant push: v_ss (1 - exp(-D t / M)) per group."""
    v_ss = steady_twist(push, params)
    lin = 1.0 - math.exp(-params.damping * t / params.mass)
    ang = 1.0 - math.exp(-params.angular_damping * t / params.inertia)
    return np.concatenate((v_ss[:3] * lin, v_ss[3:] * ang))


def push_for(guiding, wrench, dt, seconds, start=0):
    """Fresh readings of `wrench` every tick of `dt` [s] for `seconds`; {tick index: output}."""
    outputs = {}
    for k in range(start, start + round(seconds / dt) + 1):
        guiding.set_wrench(wrench, k * dt)
        outputs[k] = guiding.step(k * dt)
    return outputs


def test_the_defaults_give_the_cobot_feel_the_readme_promises():
    assert steady_twist(np.array([10.0, 0, 0, 0, 0, 1.0]))[[0, 5]] == pytest.approx([0.16, 0.16])
    assert P.mass / P.damping == pytest.approx(0.1)            # time constant [s]
    assert P.inertia / P.angular_damping == pytest.approx(0.1)


@pytest.mark.parametrize("dt", [0.001, 0.002, 0.01])
def test_a_constant_push_follows_the_closed_form_and_settles_at_the_push_beyond_the_dead_band_over_damping(dt):
    guiding = HandGuiding()
    outputs = push_for(guiding, PUSH, dt, 2.0)
    for t in (0.01, 0.05, 0.1, 0.3, 1.0):
        k = round(t / dt)
        np.testing.assert_allclose(outputs[k].twist, closed_form(PUSH, k * dt), atol=1e-12, err_msg=f"t={t}")
    final = outputs[max(outputs)]
    np.testing.assert_allclose(final.twist, steady_twist(PUSH), atol=1e-6)
    # the numbers the issue asks for, by hand: (10 N - 2 N) / 50 N s/m along (0.6, -0.8, 0); (1.2 - 0.2) / 5 about z
    np.testing.assert_allclose(final.twist, [0.096, -0.128, 0.0, 0.0, 0.0, 0.2], atol=1e-6)
    assert final.status is GuidingStatus.GUIDING and not final.stale
    assert "following a push of 10.0 N, 1.20 N m: moving at 160 mm/s, 0.20 rad/s" == final.message


def test_a_tick_much_longer_than_the_time_constant_stays_stable_and_never_overshoots():
    guiding = HandGuiding()
    dt = 0.5                                  # forward Euler diverges above 2 M / D = 0.2 s
    speeds = [np.linalg.norm(out.twist[:3]) for out in push_for(guiding, PUSH, dt, 5.0).values()]
    v_ss = np.linalg.norm(steady_twist(PUSH)[:3])
    assert all(b >= a for a, b in itertools.pairwise(speeds)) and max(speeds) <= v_ss + 1e-15
    assert speeds[-1] == pytest.approx(v_ss, abs=1e-6)


def test_the_dead_band_has_no_jump_at_its_threshold():
    direction = np.array([0.36, 0.48, 0.8])                       # unit vector
    for eps in (1e-3, 1e-6, 1e-9):
        below = deadband((P.force_deadband - eps) * direction, P.force_deadband)
        above = deadband((P.force_deadband + eps) * direction, P.force_deadband)
        assert not below.any()
        np.testing.assert_allclose(above, eps * direction, rtol=1e-6, atol=1e-15)
    assert not deadband(P.force_deadband * direction, P.force_deadband).any()
    # the steady speed is continuous too: 1 mN either side of the threshold moves the arm by at most 1 mN / D
    speeds = []
    for force in (P.force_deadband - 1e-3, P.force_deadband + 1e-3):
        out = push_for(HandGuiding(), np.array([force, 0, 0, 0, 0, 0]), 0.01, 2.0)[200]
        speeds.append(out.twist[0])
    assert speeds[0] == 0.0 and 0.0 < speeds[1] <= 1e-3 / P.damping + 1e-12


def test_force_and_torque_have_their_own_dead_band():
    wrench = effective_wrench(np.array([1.9, 0.0, 0.0, 0.0, 0.0, 0.5]), P)   # force inside, torque outside
    np.testing.assert_allclose(wrench, [0, 0, 0, 0, 0, 0.5 - P.torque_deadband])
    out = push_for(HandGuiding(), np.array([1.9, 0, 0, 0, 0.1, 0]), 0.01, 0.5)[50]
    assert out.status is GuidingStatus.IN_DEADBAND and not out.twist.any()
    assert "within the dead band (2.0 N, 0.20 N m)" in out.message


def test_saturation_clips_each_norm_and_keeps_the_direction():
    hard = np.array([0.0, 120.0, -160.0, 30.0, 0.0, -40.0])          # 200 N, 50 N m
    wrench = effective_wrench(hard, P)
    np.testing.assert_allclose(wrench[:3], P.force_saturation * hard[:3] / 200.0)
    np.testing.assert_allclose(wrench[3:], P.torque_saturation * hard[3:] / 50.0)
    fast = HandGuidingConfig(max_linear_speed=5.0, max_angular_speed=5.0)   # the cap out of the way
    out = push_for(HandGuiding(fast), hard, 0.01, 2.0)[200]
    np.testing.assert_allclose(out.twist[:3], 60.0 / 50.0 * hard[:3] / 200.0, atol=1e-6)
    np.testing.assert_allclose(out.twist[3:], 6.0 / 5.0 * hard[3:] / 50.0, atol=1e-6)
    assert out.status is GuidingStatus.FORCE_SATURATED
    assert "clipped to 60.0 N, 6.00 N m" in out.message
    small = np.array([0.3, -0.4, 0.0])
    assert saturate(small, 1.0) is small


def test_the_speed_cap_holds_the_state_so_a_released_push_stops_without_delay():
    guiding, dt = HandGuiding(), 0.002
    capped = push_for(guiding, np.array([30.0, 0, 0, 0, 0, 0]), dt, 1.0)      # asks for (30 - 2) / 50 = 0.56 m/s
    last = capped[max(capped)]
    np.testing.assert_allclose(last.twist, [P.max_linear_speed, 0, 0, 0, 0, 0], atol=1e-12)
    assert last.status is GuidingStatus.SPEED_CAPPED and "cap of 250 mm/s" in last.message
    released = push_for(guiding, np.zeros(6), dt, 0.3, start=max(capped) + 1)
    for k, out in released.items():
        # decays from the cap at once: a wound-up state would hold 0.25 m/s until it fell below 0.56 -> 0.25
        t = (k - max(capped)) * dt
        assert out.twist[0] == pytest.approx(P.max_linear_speed * math.exp(-P.damping * t / P.mass), abs=1e-12)


def test_zeroing_the_bias_removes_a_sensor_offset_and_keeps_pushes_as_they_were():
    offset = np.array([3.0, -1.0, 12.0, 0.1, 0.2, -0.05])         # 12.4 N: far outside the dead band
    drifting = push_for(HandGuiding(), offset, 0.01, 0.5)[50]
    assert np.linalg.norm(drifting.twist[:3]) > 0.1                 # without zeroing the arm walks away
    guiding = HandGuiding()
    guiding.zero_bias(offset)
    np.testing.assert_array_equal(guiding.bias, offset)
    resting = push_for(guiding, offset, 0.01, 0.5)[50]
    assert resting.status is GuidingStatus.IN_DEADBAND and not resting.twist.any()
    guiding.reset()
    pushed = push_for(guiding, offset + PUSH, 0.01, 2.0)[200]
    np.testing.assert_allclose(pushed.twist, steady_twist(PUSH), atol=1e-6)


def test_the_bias_is_subtracted_in_sensor_axes_and_the_twist_comes_out_in_the_rotated_axes():
    offset = np.array([1.0, 2.0, -9.0, 0.05, 0.0, 0.1])
    angle = 0.7
    base_R_sensor = np.array([[math.cos(angle), -math.sin(angle), 0.0], [math.sin(angle), math.cos(angle), 0.0],
                              [0.0, 0.0, 1.0]])
    push_base = PUSH
    reading = offset + np.concatenate((base_R_sensor.T @ push_base[:3], base_R_sensor.T @ push_base[3:]))
    guiding = HandGuiding()
    guiding.zero_bias(offset)
    for k in range(201):
        guiding.set_wrench(reading, k * 0.01, frame_R_sensor=base_R_sensor)
        out = guiding.step(k * 0.01)
    np.testing.assert_allclose(out.twist, steady_twist(push_base), atol=1e-6)


def test_a_stale_wrench_counts_as_zero_force_and_reports_stale():
    guiding, dt = HandGuiding(), 0.01
    before = push_for(guiding, PUSH, dt, 1.0)
    last_fresh = max(before)
    speed = np.linalg.norm(before[last_fresh].twist[:3])
    previous = before[last_fresh].twist
    for k in range(last_fresh + 1, last_fresh + 40):              # no new readings from here on
        out, age = guiding.step(k * dt), (k - last_fresh) * dt
        if age < P.wrench_timeout - 1e-9:
            assert not out.stale and out.wrench.any()
        elif age > P.wrench_timeout + 1e-9:                        # (the tick at exactly 100 ms is rounding's call)
            assert out.status is GuidingStatus.STALE_WRENCH and out.stale
            assert not out.wrench.any()
            # zero force: the twist only decays, exactly by exp(-D dt / M) per tick
            np.testing.assert_allclose(out.twist[:3], previous[:3] * math.exp(-P.damping * dt / P.mass),
                                       atol=1e-15)
        previous = out.twist
    assert np.linalg.norm(out.twist[:3]) < 0.1 * speed
    assert f"wrench is {(k - last_fresh) * 10} ms old (timeout 100 ms)" in out.message


def test_no_wrench_yet_is_stale_and_still():
    out = HandGuiding().step(3.0)
    assert out.status is GuidingStatus.NO_WRENCH and out.stale and not out.twist.any() and math.isnan(out.age)


def test_a_reading_from_far_in_the_future_is_not_trusted():
    guiding = HandGuiding()
    guiding.set_wrench(PUSH, 10.0)                  # the clock jumped back by 10 s
    assert guiding.step(0.0).status is GuidingStatus.STALE_WRENCH


@pytest.mark.parametrize("bad, words", [
    ([1.0, math.nan, 0, 0, 0, 0], "wrench has non-finite entries at indices [1]"),
    ([0, 0, 0, math.inf, 0, 0], "wrench has non-finite entries at indices [3]"),
    ([1.0, 2.0, 3.0], "wrench must have 6 entries"),
])
def test_a_bad_wrench_is_refused_and_the_previous_one_kept(bad, words):
    reference, guiding = HandGuiding(), HandGuiding()
    for k in range(100):
        reference.set_wrench(PUSH, k * 0.01)
        guiding.set_wrench(PUSH, k * 0.01)
        if k == 50:
            with pytest.raises(InvalidInputError) as err:
                guiding.set_wrench(bad, k * 0.01 + 0.005)
            assert words in str(err.value)
        np.testing.assert_array_equal(guiding.step(k * 0.01).twist, reference.step(k * 0.01).twist)
    assert np.isfinite(guiding.velocity).all() and guiding.velocity.any()


def test_bad_bias_times_and_rotations_are_refused():
    guiding = HandGuiding()
    guiding.zero_bias(PUSH)
    with pytest.raises(InvalidInputError, match="bias wrench has non-finite"):
        guiding.zero_bias([math.nan, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(guiding.bias, PUSH)
    with pytest.raises(InvalidInputError, match="received_at must be a finite time"):
        guiding.set_wrench(PUSH, math.nan)
    with pytest.raises(InvalidInputError, match="now must be a finite time"):
        guiding.step(math.inf)
    with pytest.raises(InvalidInputError, match=r"frame_R_sensor is not a rotation \(\|R\^T R - I\| = 3"):
        guiding.set_wrench(PUSH, 0.0, frame_R_sensor=2.0 * np.eye(3))
    with pytest.raises(InvalidInputError, match="det = -1"):
        guiding.set_wrench(PUSH, 0.0, frame_R_sensor=np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(InvalidInputError, match=r"got shape \(2, 2\)"):
        guiding.set_wrench(PUSH, 0.0, frame_R_sensor=np.eye(2))


def test_bad_parameters_are_all_named_at_once():
    with pytest.raises(ConfigError) as err:
        HandGuidingConfig(mass=0.0, damping=-5.0, force_deadband=-1.0, wrench_timeout=math.nan, max_linear_speed=50.0)
    text = str(err.value)
    for words in ("mass=0.0 must be > 0.0", "damping=-5.0 must be > 0.0", "force_deadband=-1.0 must be >= 0.0",
                  "wrench_timeout=nan must be finite", "max_linear_speed=50.0 must be <= 10.0"):
        assert words in text
    assert len(err.value.problems) == 5


def test_a_reading_beyond_the_physical_bound_is_refused_so_bias_and_push_stay_finite():
    """A bias of -1e308 N and then a push of +1e308 N made inf - inf = NaN inside the admittance (and NaN joint
    velocities in the servo): finite readings beyond max_force / max_torque are refused as NaN ones are."""
    guiding = HandGuiding()
    guiding.set_wrench(PUSH, 0.0)
    for bad, words in (([-1e308, 0, 0, 0, 0, 0], "exceeds hand_guiding.max_force 10000 N"),
                       ([0, 0, 0, 0, 0, 2e3], "2000 N m exceeds")):
        with pytest.raises(InvalidInputError, match=words):
            guiding.set_wrench(bad, 0.001)
    guiding.set_wrench([1e4, 0, 0, 0, 0, 1e3], 0.002)            # the bounds themselves are readings
    guiding.zero_bias([-1e4, 0, 0, 0, 0, -1e3])
    assert np.isfinite(guiding.step(0.002).twist).all() and np.isfinite(guiding.step(0.004).twist).all()


@pytest.mark.parametrize("mass, damping", [(1e-320, 50.0), (5.0, 1e-320), (1e-300, 1e-320), (1e300, 1e-300)])
def test_the_exact_step_stays_finite_for_any_accepted_mass_and_damping(mass, damping):
    params = HandGuidingConfig(mass=mass, damping=damping, inertia=mass, angular_damping=damping)
    for dt in (0.0, 0.002, 1.0):
        twist = relax(np.full(6, 0.1), np.array([60.0, 0, 0, 6.0, 0, 0]), dt, params)
        assert np.isfinite(twist).all(), (mass, damping, dt, twist)
