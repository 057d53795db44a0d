"""Ellipsoids and manipulability against closed forms, support functions and Pinocchio's ABA."""
import numpy as np
import pinocchio as pin
import pytest
from capability_arms import L1, L2, PANDA_SINGULAR, chain_urdf, shape_matrix, support, three_r, two_link
from hypothesis import given, settings
from hypothesis import strategies as st

from robokin_ros.core.capability import analysis as cap
from robokin_ros.core.capability.config import CapabilityConfig, check_show_items
from robokin_ros.core.errors import ConfigError, InvalidInputError
from robokin_ros.core.robot import RobotModel

ANGLE = st.floats(-3.0, 3.0)


@pytest.fixture(scope="module")
def planar():
    return two_link()


def _check_frame(e: cap.Ellipsoid) -> None:
    np.testing.assert_allclose(e.axes.T @ e.axes, np.eye(3), atol=1e-12)
    assert np.linalg.det(e.axes) == pytest.approx(1.0)
    assert np.all(np.diff(e.semi_axes) <= 1e-12), "semi-axes must be descending"
    assert np.isfinite(e.semi_axes).all()


@settings(max_examples=60, deadline=None)
@given(q1=ANGLE, q2=ANGLE)
def test_two_link_velocity_ellipse_matches_closed_form(planar, q1, q2):
    s1, c1, s12, c12 = np.sin(q1), np.cos(q1), np.sin(q1 + q2), np.cos(q1 + q2)
    J_textbook = np.array([[-L1 * s1 - L2 * s12, -L2 * s12], [L1 * c1 + L2 * c12, L2 * c12]])
    J = planar.jacobian([q1, q2])
    np.testing.assert_allclose(J[:2], J_textbook, atol=1e-12)
    # Closed form: trace(J Jᵀ) = L1² + 2 L2² + 2 L1 L2 cos q2, det J = L1 L2 sin q2.
    trace = L1**2 + 2 * L2**2 + 2 * L1 * L2 * np.cos(q2)
    det = L1 * L2 * np.sin(q2)
    root = np.sqrt(max(trace**2 - 4 * det**2, 0.0))
    expected = np.sqrt([(trace + root) / 2, max((trace - root) / 2, 0.0)])
    e = cap.velocity_ellipsoid(J[:3])
    _check_frame(e)
    np.testing.assert_allclose(e.semi_axes[:2], expected, atol=1e-7)
    assert e.semi_axes[2] == pytest.approx(0.0, abs=1e-9) and e.degenerate[2]
    a, b, c = (J_textbook @ J_textbook.T)[[0, 0, 1], [0, 1, 1]]
    if root > 1e-6:      # the major axis direction is defined: 0.5 atan2(2b, a - c)
        theta = 0.5 * np.arctan2(2 * b, a - c)
        assert abs(e.axes[:, 0] @ [np.cos(theta), np.sin(theta), 0.0]) == pytest.approx(1.0, abs=1e-9)


def test_support_functions_match_definitions(panda):
    rng = np.random.default_rng(4)
    tau = panda.limits.effort
    for _ in range(20):
        J = panda.jacobian(panda.random_positions(rng, 0.1))[:3]
        d = rng.standard_normal(3)
        d /= np.linalg.norm(d)
        # max over ||dq|| <= 1 of dᵀ J dq = ||Jᵀ d||
        assert support(cap.velocity_ellipsoid(J), d) == pytest.approx(np.linalg.norm(J.T @ d), rel=1e-9)
        # {F : ||W⁻¹ Jᵀ F|| <= 1}: support sqrt(dᵀ (J W⁻² Jᵀ)⁻¹ d)
        weighted = cap.force_ellipsoid(J, tau)
        expected = np.sqrt(d @ np.linalg.solve((J / tau) @ (J / tau).T, d))
        assert support(weighted, d) == pytest.approx(expected, rel=1e-9)
        for e in (weighted, cap.force_ellipsoid(J), cap.velocity_ellipsoid(J)):
            _check_frame(e)


def test_acceleration_ellipsoid_matches_aba_at_rest(panda):
    model = pin.Model(panda.model)
    model.gravity = pin.Motion.Zero()        # ABA with v = 0 and no gravity gives M⁻¹ τ exactly
    data = model.createData()
    q = panda.random_positions(np.random.default_rng(1), 0.1)
    Minv = np.column_stack([pin.aba(model, data, q, np.zeros(panda.n), e) for e in np.eye(panda.n)])
    J = panda.jacobian(q)[:3]
    result = cap.analyze(panda, q, panda.limits.effort)
    for d in np.random.default_rng(2).standard_normal((10, 3)):
        expected = np.linalg.norm((J @ Minv).T @ d / np.linalg.norm(d))
        assert support(result.acceleration, d) == pytest.approx(expected, rel=1e-8)
    # Normalization: the largest normalized semi-axis equals the velocity ellipsoid's largest.
    assert result.acceleration_normalized.semi_axes[0] == pytest.approx(result.velocity.semi_axes[0])
    np.testing.assert_allclose(result.acceleration_normalized.semi_axes,
                               result.acceleration.semi_axes * result.acceleration_normalization)


def _assert_same_ellipsoid(a: cap.Ellipsoid, b: cap.Ellipsoid) -> None:
    assert a.unit == b.unit
    for field in ("semi_axes", "axes", "degenerate", "capped"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)


@pytest.mark.parametrize("which", ["panda", "ur5", "panda_from_link1", "panda_no_limits"])
def test_analyze_equals_the_separate_functions_bit_for_bit(panda, ur5, which):
    # analyze decomposes all Gram matrices in one stacked call and reads J, the tool pose and M(q) from one
    # pass; the single-ellipsoid functions and the RobotModel methods are the reference it must reproduce.
    robot = {"panda": panda, "ur5": ur5, "panda_no_limits": panda,
             "panda_from_link1": RobotModel.from_name("panda", base_frame="panda_link1")}[which]
    tau = None if which == "panda_no_limits" else robot.limits.effort
    rng = np.random.default_rng(11)
    for q in [robot.random_positions(rng) for _ in range(5)] + [np.zeros(robot.n)]:
        result = cap.analyze(robot, q, tau, "no limits", singular_sigma=2e-3)
        J = robot.jacobian(q)
        np.testing.assert_array_equal(result.jacobian, J)
        np.testing.assert_array_equal(result.tool_position, robot.fk(q).translation)
        _assert_same_ellipsoid(result.velocity, cap.velocity_ellipsoid(J[:3], 2e-3))
        _assert_same_ellipsoid(result.angular_velocity, cap.velocity_ellipsoid(J[3:], 2e-3, "rad/s"))
        _assert_same_ellipsoid(result.acceleration, cap.acceleration_ellipsoid(J[:3], robot.inertia(q)))
        _assert_same_ellipsoid(result.force_unweighted, cap.force_ellipsoid(J[:3], singular_sigma=2e-3))
        assert result.manipulability == cap.manipulability(J[:3], 2e-3)
        assert result.angular_manipulability == cap.manipulability(J[3:], 2e-3)
        if tau is None:
            assert result.force_rms is None and result.force_weighted is None
            assert result.unavailable_reason == "no limits"
            continue
        _assert_same_ellipsoid(result.force_rms, cap.force_ellipsoid(J[:3], tau, rms=True, singular_sigma=2e-3))
        _assert_same_ellipsoid(result.force_weighted, cap.force_ellipsoid(J[:3], tau, singular_sigma=2e-3))
        for e in (result.velocity, result.angular_velocity, result.acceleration, result.force_unweighted,
                  result.force_rms, result.force_weighted):
            _check_frame(e)


def test_rms_and_torque_weighted_coincide_only_for_equal_limits(panda):
    J = panda.jacobian(panda.home())[:3]
    equal = np.full(panda.n, 50.0)
    rms, weighted = cap.force_ellipsoid(J, equal, rms=True), cap.force_ellipsoid(J, equal)
    np.testing.assert_allclose(rms.semi_axes, weighted.semi_axes, rtol=1e-10)
    np.testing.assert_allclose(shape_matrix(rms), shape_matrix(weighted), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(rms.semi_axes, 50.0 * cap.force_ellipsoid(J).semi_axes, rtol=1e-10)
    # Control: the Panda's real limits differ (87 vs 12 N m), so the shapes must differ too.
    real = panda.limits.effort
    assert not np.allclose(shape_matrix(cap.force_ellipsoid(J, real, rms=True)),
                           shape_matrix(cap.force_ellipsoid(J, real)), rtol=1e-3)


def test_manipulability_measures(panda):
    J = panda.jacobian(panda.random_positions(np.random.default_rng(3), 0.1))[:3]
    m = cap.manipulability(J)
    sigma = np.linalg.svd(J, compute_uv=False)
    assert m.yoshikawa == pytest.approx(np.sqrt(np.linalg.det(J @ J.T)), rel=1e-9)
    assert m.condition == pytest.approx(np.linalg.cond(J), rel=1e-9)
    assert (m.sigma_min, m.sigma_max) == pytest.approx((sigma[-1], sigma[0]), rel=1e-9)
    assert m.isotropy == pytest.approx(sigma[-1] / sigma[0]) and not m.singular


def test_planar_product_of_axes_is_l1_l2_sin_q2(planar):
    e = cap.velocity_ellipsoid(planar.jacobian([0.4, 1.1])[:3])
    assert e.semi_axes[0] * e.semi_axes[1] == pytest.approx(L1 * L2 * np.sin(1.1), rel=1e-9)


@pytest.mark.parametrize("which", ["planar_stretched", "panda_stretched"])
def test_singular_configuration_is_finite_and_flagged(planar, panda, which):
    robot, q = (planar, [0.3, 0.0]) if which == "planar_stretched" else (panda, PANDA_SINGULAR)
    tau, _ = cap.torque_limits_of(robot)
    result = cap.analyze(robot, q, tau, singular_sigma=1e-3)
    assert result.singular and result.manipulability.isotropy < 1e-3
    for e in (result.velocity, result.acceleration_normalized, result.force_unweighted, result.force_rms,
              result.force_weighted):
        assert np.isfinite(e.semi_axes).all() and np.isfinite(e.axes).all()
    assert result.force_unweighted.capped[0] and result.force_unweighted.semi_axes[0] == pytest.approx(1e3)
    assert result.force_rms.semi_axes[0] == pytest.approx(1e3 * np.sqrt(np.mean(tau**2)))
    assert result.velocity.degenerate[-1]


def test_three_r_is_not_flagged_singular():
    arm = three_r()
    result = cap.analyze(arm, [0.3, 0.4, -0.9], cap.torque_limits_of(arm)[0])
    assert not result.singular and not result.force_weighted.capped.any()


def test_missing_torque_limits_make_force_variants_unavailable():
    arm = RobotModel.from_urdf_string(chain_urdf([("0 0 1", (0, 0, 0)), ("0 1 0", (0, 0, 0.2))],
                                                 (0.3, 0, 0), [5.0, 0.0]), "base", "tip")
    tau, reason = cap.torque_limits_of(arm)
    assert tau is None and "['j2']" in reason and "torque_limits" in reason
    result = cap.analyze(arm, [0.1, 0.2], tau, reason)
    assert result.force_rms is None and result.force_weighted is None and result.unavailable_reason == reason
    assert np.isfinite(result.force_unweighted.semi_axes).all()
    given_tau, why = cap.torque_limits_of(arm, [5.0, 3.0])
    assert why == "" and given_tau.tolist() == [5.0, 3.0]


@pytest.mark.parametrize(("override", "text"), [([1.0], "2 entries"), ([1.0, np.nan], "non-finite"),
                                                ([1.0, 0.0], "must be > 0")])
def test_bad_torque_limit_override_is_named(planar, override, text):
    with pytest.raises(InvalidInputError, match="torque_limits") as err:
        cap.torque_limits_of(planar, override)
    assert text in str(err.value)


def test_bad_positions_are_rejected(planar):
    with pytest.raises(InvalidInputError, match="non-finite"):
        cap.analyze(planar, [0.1, np.nan])
    with pytest.raises(InvalidInputError, match="2 entries"):
        cap.analyze(planar, [0.1, 0.2, 0.3])


def test_config_reports_every_problem():
    with pytest.raises(ConfigError) as err:
        CapabilityConfig(rate=0.0, color_force=(1.0, 0.0, 0.0), polytope_method="hull")
    text = str(err.value)
    assert "rate=0.0" in text and "color.force" in text and "polytope_method='hull'" in text
    with pytest.raises(ConfigError, match="3 entries but the chain has 2 joints"):
        CapabilityConfig(torque_limits=(1.0, 2.0, 3.0)).check_joint_lists(["a", "b"])
    with pytest.raises(ConfigError, match="'forces'.*valid items"):
        check_show_items(["velocity", "forces"])
    assert check_show_items(["polytope"]) == ("polytope",)
