"""Collision speed scaling: the rules (never block a receding motion, halt below the minimum, decelerate
monotonically), MoveIt's stop-distance test as the limit case, and a closed loop that stops short of a table."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robokin_ros.core.collision.clearance import Clearance, ClearanceChecker
from robokin_ros.core.collision.scaling import CollisionVerdict, collision_scaling
from robokin_ros.core.collision.scene import SceneObject
from robokin_ros.core.errors import InvalidInputError

ACCEL = np.full(2, 5.0)          # [rad/s^2]


def clearance(distance: float, gradient=(0.1, 0.0)) -> Clearance:
    """A synthetic two-joint clearance: the rules must hold whatever the geometry."""
    return Clearance(distance, True, distance, ("hand", "table"), np.zeros(3), np.array([0.0, 0.0, distance]),
                     np.array([0.0, 0.0, 1.0]), np.array(gradient, dtype=float), 3)


def scale(distance, dq, **overrides):
    params = dict(safety_factor=2.0, min_allowable_distance=0.01, acceleration_limits=ACCEL, period=0.01)
    params.update(overrides)
    return collision_scaling(clearance(distance), dq, **params)


@pytest.mark.parametrize("distance", [-0.02, 0.0, 0.005, 0.05, 1.0])
@pytest.mark.parametrize("dq", [[1.0, 0.0], [0.0, 3.0], [0.5, -2.0]])
def test_motion_that_does_not_decrease_the_distance_is_never_blocked(distance, dq):
    result = scale(distance, dq)                  # d_dot = 0.1 * dq[0] >= 0
    assert result.scale == 1.0 and result.verdict is CollisionVerdict.OK and result.distance_rate >= 0.0


@pytest.mark.parametrize("distance", [-0.01, 0.0, 0.005, 0.0099])
def test_approaching_below_the_minimum_halts_and_names_the_pair(distance):
    result = scale(distance, [-0.5, 0.0])
    assert result.scale == 0.0 and result.verdict is CollisionVerdict.HALT
    assert "hand and table" in result.message and f"{distance * 1e3:.1f} mm" in result.message
    assert "min_allowable_collision_distance 10.0 mm" in result.message


def test_deceleration_is_monotonic_in_distance_from_zero_at_the_minimum_to_one_far_away():
    distances = np.linspace(0.0, 0.5, 501)
    scales = np.array([scale(d, [-2.0, 0.5]).scale for d in distances])
    assert np.all(np.diff(scales) >= 0.0)
    assert scales[distances < 0.01].max() == 0.0 and scales[-1] == 1.0
    middle = (scales > 0.0) & (scales < 1.0)
    assert middle.sum() > 50                      # a real ramp, not a step
    assert scale(0.0101, [-2.0, 0.5]).scale < 0.05     # continuous at the minimum
    verdicts = {scale(d, [-2.0, 0.5]).verdict for d in (0.005, 0.02, 0.5)}
    assert verdicts == {CollisionVerdict.HALT, CollisionVerdict.DECELERATE, CollisionVerdict.OK}


@settings(max_examples=200)
@given(distance=st.floats(0.0101, 0.5), speed=st.floats(0.01, 3.0), k=st.floats(1.0, 50.0),
       period=st.floats(0.0, 0.05))
def test_a_partial_scale_uses_the_margin_exactly(distance, speed, k, period):
    """s * |d_dot| * period + k * s^2 * |d_dot| * T = d - d_min when 0 < s < 1 (the defining equation)."""
    dq = np.array([-speed, 0.3 * speed])
    result = scale(distance, dq, safety_factor=k, period=period)
    approach, stop_time = -result.distance_rate, np.max(np.abs(dq) / ACCEL)
    used = result.scale * approach * period + k * result.scale ** 2 * approach * stop_time
    if 0.0 < result.scale < 1.0:
        assert used == pytest.approx(distance - 0.01, rel=1e-9)
    else:
        assert result.scale == 1.0 and used <= distance - 0.01 + 1e-12


@settings(max_examples=200)
@given(distance=st.floats(0.0101, 0.5), speed=st.floats(0.01, 3.0), k=st.floats(1.0, 1000.0))
def test_with_no_period_full_speed_passes_exactly_when_moveit_stop_distance_passes(distance, speed, k):
    """MoveIt halts when (time to collision) < k * (worst-case stop time); here measured to d_min, not contact."""
    dq = np.array([-speed, 0.0])
    result = scale(distance, dq, safety_factor=k, period=0.0)
    time_to_minimum = (distance - 0.01) / (0.1 * speed)
    moveit_passes = not time_to_minimum < k * speed / ACCEL[0]
    assert (result.scale == 1.0) == moveit_passes


def test_a_larger_safety_factor_scales_down_more():
    scales = [scale(0.05, [-2.0, 0.0], safety_factor=k).scale for k in (1.0, 2.0, 5.0, 20.0)]
    assert all(a > b for a, b in zip(scales, scales[1:]))


def test_without_acceleration_limits_or_period_only_the_minimum_halts():
    """MoveIt's stop time is 0 without acceleration limits: nothing but the minimum distance stops the arm."""
    unlimited = dict(acceleration_limits=np.full(2, np.inf), period=0.0)
    assert scale(0.0101, [-3.0, 0.0], **unlimited).scale == 1.0
    assert scale(0.0099, [-3.0, 0.0], **unlimited).scale == 0.0


def test_a_deceleration_message_names_the_pair_distance_and_rate():
    result = scale(0.03, [-2.0, 0.0])
    assert result.verdict is CollisionVerdict.DECELERATE
    assert result.message.startswith(f"decelerating to {100 * result.scale:.0f} % for collision: hand and table "
                                     "are 30.0 mm apart, closing at 200.0 mm/s")


def test_no_pairs_is_clear():
    empty = Clearance(np.inf, True, np.inf, ("", ""), np.full(3, np.nan), np.full(3, np.nan), np.full(3, np.nan),
                      np.zeros(2), 0)
    result = collision_scaling(empty, [-1.0, 1.0], safety_factor=1.0, min_allowable_distance=0.0,
                               acceleration_limits=ACCEL)
    assert result.scale == 1.0 and "no pair" in result.message


@pytest.mark.parametrize("overrides, words", [
    (dict(safety_factor=0.5), "collision_distance_safety_factor=0.5 must be >= 1"),
    (dict(min_allowable_distance=-0.01), "min_allowable_collision_distance=-0.01 must be >= 0"),
    (dict(acceleration_limits=np.array([5.0, 0.0])), "acceleration_limits must be 2 values > 0"),
    (dict(period=np.nan), "period=nan"),
])
def test_bad_parameters_are_refused(overrides, words):
    with pytest.raises(InvalidInputError, match=words):
        scale(0.1, [-1.0, 0.0], **overrides)


def test_bad_velocities_are_refused():
    with pytest.raises(InvalidInputError, match="velocities must be 2 finite values"):
        scale(0.1, [-1.0, 0.0, 0.0])


def test_a_servo_loop_pushing_down_onto_a_block_stops_short_of_the_minimum(panda):
    """Closed loop at 100 Hz: a constant joint velocity that lowers the hand, scaled every tick."""
    block = SceneObject("block", "box", (0.3, 0.3, 0.1), (0.31, 0.0, 0.15))       # top 0.2 m, under the hand
    checker = ClearanceChecker(panda, objects=(block,))
    q, dt, d_min = panda.home(), 0.01, 0.02
    down = np.linalg.pinv(panda.jacobian(q)[:3]) @ np.array([0.0, 0.0, -0.25])     # ~0.25 m/s down
    accel = np.array([15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0])
    distances, verdicts = [], []
    for _ in range(300):
        result = checker.check(q)
        scaled = collision_scaling(result, down, safety_factor=2.0, min_allowable_distance=d_min,
                                   acceleration_limits=accel, period=dt)
        distances.append(result.distance)
        verdicts.append(scaled.verdict)
        q = q + scaled.scale * down * dt
    assert verdicts[0] is CollisionVerdict.OK and CollisionVerdict.DECELERATE in verdicts
    assert min(distances) >= d_min - 1e-3              # one period of overshoot at most
    assert distances[-1] < d_min + 5e-3                # and it did get there
    assert checker.check(q).names[1] == "block"
    away = collision_scaling(checker.check(q), -down, safety_factor=2.0, min_allowable_distance=d_min,
                             acceleration_limits=accel, period=dt)
    assert away.scale == 1.0                           # backing off is never blocked
