"""The planar 2R teaching model: kinematics against independent trig and the core, velocities, animation."""
import math

import numpy as np
import pytest

from robokin_ros.core.ik.planar_2r import Planar2R
from robokin_ros.core.errors import ConfigError
from robokin_ros.studio.planar_2r import AnimationConfig, Planar2rTeacher, format_numbers


def trig_fk(l1, l2, q1, q2):
    """The textbook tool point, written out here so the test does not lean on the code under test."""
    return np.array([l1 * math.cos(q1) + l2 * math.cos(q1 + q2), l1 * math.sin(q1) + l2 * math.sin(q1 + q2)])


def fd_jacobian(l1, l2, q, h=1e-6):
    """Central differences of `trig_fk`: columns d(x, y)/dq_i."""
    return np.column_stack([(trig_fk(l1, l2, *(q + h * e)) - trig_fk(l1, l2, *(q - h * e))) / (2 * h)
                            for e in np.eye(2)])


@pytest.mark.parametrize("seed", range(8))
def test_fk_mode_matches_trig_and_core(seed):
    rng = np.random.default_rng(seed)
    arm = Planar2R(*rng.uniform(0.2, 0.8, 2))
    q = rng.uniform(-math.pi, math.pi, 2)
    teacher = Planar2rTeacher(arm)
    teacher.set_q(q)
    n = teacher.numbers()
    np.testing.assert_allclose(n.tool, trig_fk(arm.l1, arm.l2, *q), atol=1e-12)
    np.testing.assert_allclose(n.jacobian, fd_jacobian(arm.l1, arm.l2, q), atol=1e-8)
    np.testing.assert_allclose(n.jacobian, arm.jacobian(q), atol=1e-12)
    np.testing.assert_allclose(n.elbow_point, [arm.l1 * math.cos(q[0]), arm.l1 * math.sin(q[0])], atol=1e-12)
    assert n.elbow == ("up" if q[1] < 0 else "down")
    # the ghost is the other branch: same tool point, mirrored elbow angle (q2 -> -q2)
    np.testing.assert_allclose(trig_fk(arm.l1, arm.l2, *n.ghost_q), n.tool, atol=1e-9)
    assert n.ghost_q[1] == pytest.approx(-q[1], abs=1e-9)
    assert not n.clamped and n.outside == 0.0


@pytest.mark.parametrize("target", [(0.6, 0.3), (-0.2, 0.7), (0.1, -0.5), (-0.4, -0.4)])
def test_ik_mode_both_branches_reach_the_target(target):
    arm = Planar2R(0.5, 0.5)
    teacher = Planar2rTeacher(arm)
    teacher.set_mode("ik")
    teacher.set_target(target)
    core = arm.ik(target)
    for elbow, sign in (("up", -1.0), ("down", 1.0)):
        teacher.set_elbow(elbow)
        n = teacher.numbers()
        assert n.elbow == elbow and math.copysign(1.0, n.q[1]) == sign
        np.testing.assert_allclose(trig_fk(arm.l1, arm.l2, *n.q), target, atol=1e-9)
        np.testing.assert_allclose(n.q, core.elbow_up if elbow == "up" else core.elbow_down, atol=1e-12)
        np.testing.assert_allclose(n.ghost_q, core.elbow_down if elbow == "up" else core.elbow_up, atol=1e-12)
        np.testing.assert_allclose(n.target, target)


def test_elbow_switch_in_fk_mode_swaps_arm_and_ghost():
    teacher = Planar2rTeacher(q=np.radians([20.0, 70.0]))
    before = teacher.numbers()
    teacher.set_elbow("up")
    after = teacher.numbers()
    np.testing.assert_allclose(after.tool, before.tool, atol=1e-12)
    np.testing.assert_allclose(after.q, before.ghost_q, atol=1e-12)
    np.testing.assert_allclose(after.ghost_q, before.q, atol=1e-12)


@pytest.mark.parametrize("lengths, target, outside, reached_r", [
    ((0.5, 0.5), (1.2, 0.5), 0.3, 1.0),              # r = 1.3 beyond the outer circle
    ((0.6, 0.3), (0.06, -0.08), 0.2, 0.3),            # r = 0.1 inside the inner circle (|l1 - l2| = 0.3)
])
def test_clamped_target_reports_its_distance(lengths, target, outside, reached_r):
    teacher = Planar2rTeacher(Planar2R(*lengths))
    teacher.set_mode("ik")
    teacher.set_target(target)
    n = teacher.numbers()
    assert n.clamped and n.outside == pytest.approx(outside, abs=1e-12)
    # the arm reaches the nearest reachable point on the same ray
    np.testing.assert_allclose(n.tool, reached_r * np.asarray(target) / np.hypot(*target), atol=1e-9)
    teacher.set_target((0.5 * reached_r, 0.0) if lengths[0] == lengths[1] else (0.5, 0.0))
    assert not teacher.numbers().clamped


GAP_TOLERANCE = 1e-3       # [m/s] at dt = 1e-4 s


def velocity_gap(mode, dt, predict=lambda n: n.jacobian @ n.qdot):
    """|predicted - measured| tool velocity [m/s] after 0.7 s of the animation ticked at dt [s]."""
    teacher = Planar2rTeacher(q=np.radians([30.0, 60.0]))
    teacher.set_mode(mode)
    teacher.run()
    for _ in range(round(0.7 / dt)):
        teacher.tick(dt)
    n = teacher.numbers()
    assert np.linalg.norm(n.xdot_measured) > 0.05          # it really moves
    np.testing.assert_allclose(n.xdot_jacobian, n.jacobian @ n.qdot)
    return np.linalg.norm(predict(n) - n.xdot_measured)


@pytest.mark.parametrize("mode", ["fk", "ik"])
def test_jacobian_velocity_matches_the_measured_one(mode):
    """J q̇ and the finite difference of tool points agree to O(dt): the gap shrinks ~10x for a 10x smaller dt."""
    coarse, fine = velocity_gap(mode, 1e-3), velocity_gap(mode, 1e-4)
    assert fine < GAP_TOLERANCE and fine < 0.2 * coarse, (coarse, fine)


@pytest.mark.parametrize("mode", ["fk", "ik"])
def test_a_deliberately_wrong_jacobian_would_fail(mode):
    """Control for the test above: J^T instead of J misses the measured velocity by far more than the tolerance."""
    assert velocity_gap(mode, 1e-4, predict=lambda n: n.jacobian.T @ n.qdot) > 10 * GAP_TOLERANCE


def test_animation_is_deterministic_and_reset_restores_the_start():
    a, b = Planar2rTeacher(), Planar2rTeacher()
    start = a.numbers()
    for teacher in (a, b):
        teacher.run()
        for dt in (0.01, 0.033, 0.02, 0.05):
            assert teacher.tick(dt)
    na, nb = a.numbers(), b.numbers()
    np.testing.assert_array_equal(na.q, nb.q)
    assert na.time == pytest.approx(0.113) and not np.allclose(na.q, start.q)
    a.step()
    assert not a.running and a.numbers().time == pytest.approx(0.113 + a.config.step_dt)
    assert not a.tick(0.1) and a.numbers().time == pytest.approx(0.113 + a.config.step_dt)   # paused
    a.reset()
    n = a.numbers()
    np.testing.assert_allclose(n.q, start.q, atol=1e-15)
    assert n.time == 0.0 and len(a.trace()) == 1 and len(a.histories().time) == 0
    assert not n.qdot.any() and not n.xdot_measured.any()


def test_histories_and_trace_are_bounded():
    teacher = Planar2rTeacher(config=AnimationConfig(trace_length=5, history_length=7))
    teacher.run()
    for _ in range(50):
        teacher.tick(0.02)
    h = teacher.histories()
    assert len(teacher.trace()) == 5 and all(len(series) == 7 for series in h)
    assert h.time[-1] == pytest.approx(1.0) and np.all(np.diff(h.time) > 0)
    np.testing.assert_allclose(teacher.trace()[-1], teacher.numbers().tool)
    teacher.clear_trace()
    assert len(teacher.trace()) == 1


def test_format_numbers_shows_trig_values():
    teacher = Planar2rTeacher(q=np.radians([30.0, 45.0]))
    lines = format_numbers(teacher.numbers()).splitlines()
    x, y = trig_fk(0.5, 0.5, math.radians(30.0), math.radians(45.0))
    assert lines[:4] == ["q1 = 30.00 deg", "q2 = 45.00 deg", f"x = {x:.4f} m", f"y = {y:.4f} m"]
    assert lines[4] == f"J11 = {-y:.4f}  J12 = {-0.5 * math.sin(math.radians(75.0)):.4f}"
    assert lines[6].startswith("xdot (J qdot) = 0.0000 m/s") and lines[7].startswith("xdot (measured) =")


def test_bad_inputs_name_the_valid_choices():
    teacher = Planar2rTeacher()
    with pytest.raises(ValueError, match=r"mode='xyz'.*\['fk', 'ik'\]"):
        teacher.set_mode("xyz")
    with pytest.raises(ValueError, match=r"elbow='left'.*\['up', 'down'\]"):
        teacher.set_elbow("left")
    with pytest.raises(ValueError, match="needs IK mode"):
        teacher.set_target((0.3, 0.3))
    with pytest.raises(ValueError, match="dt=0.0"):
        teacher.run()
        teacher.tick(0.0)
    with pytest.raises(ValueError, match="finite"):
        teacher.set_q((math.nan, 0.0))
    with pytest.raises(ConfigError, match="period=0.0"):
        AnimationConfig(period=0.0)
