"""so3: log, exp, angle and SLERP against Pinocchio (`pin.log3`, `pin.exp3`) and against identities, in the
compiled scalar forms and the batched numpy forms."""
import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robokin_ros.core import so3

ANGLES = [0.0, 1e-12, 1e-7, 1e-3, 0.5, 2.0, 3.0, np.pi - 1e-3, np.pi - 1e-5, np.pi - 1e-8, np.pi]


def rotation_vectors(seed, count=5):
    """Rotation vectors of every angle in ANGLES about random unit axes."""
    rng = np.random.default_rng(seed)
    axes = rng.normal(size=(len(ANGLES) * count, 3))
    axes /= np.linalg.norm(axes, axis=1)[:, None]
    return np.repeat(ANGLES, count)[:, None] * axes


def tolerance(angle):
    # within 1e-4 of pi the axis comes from the symmetric part: ~sqrt(eps) accurate; the sign of a
    # half turn is arbitrary, so compare up to w -> -w there
    return 1e-7 if angle > 3.14 else 1e-12


def assert_same_rotation_vector(w, expected):
    angle = np.linalg.norm(expected)
    if angle > np.pi - 1e-6 and np.linalg.norm(w + expected) < np.linalg.norm(w - expected):
        w = -w
    np.testing.assert_allclose(w, expected, atol=tolerance(angle))


def test_scalar_log_matches_pinocchio_from_tiny_angles_to_pi():
    out = np.empty(3)
    for w in rotation_vectors(2):
        so3.log3_into(pin.exp3(w), out)
        assert_same_rotation_vector(out, w)
        assert_same_rotation_vector(out, pin.log3(pin.exp3(w)))


def test_batched_log_equals_scalar_log_and_pinocchio():
    ws = rotation_vectors(3)
    R = np.array([pin.exp3(w) for w in ws])
    log = so3.log3_batch(R)
    out = np.empty(3)
    for k, w in enumerate(ws):
        so3.log3_into(R[k], out)
        np.testing.assert_array_equal(log.vector[k], out)               # one formula, row for row
        assert_same_rotation_vector(log.vector[k], w)
        assert log.angle[k] == pytest.approx(np.linalg.norm(w), abs=1e-12)


def test_angle_near_zero_and_near_pi():
    ws = rotation_vectors(4)
    R = np.array([pin.exp3(w) for w in ws])
    np.testing.assert_allclose(so3.angles(R), np.linalg.norm(ws, axis=1), atol=1e-12, rtol=0)
    # atan2 form: a 1e-9 rad rotation is still resolved (acos of the trace would give 0 or 2e-8)
    assert so3.angles(pin.exp3(np.array([1e-9, 0.0, 0.0]))[None])[0] == pytest.approx(1e-9, rel=1e-6)
    Ra, Rb = R[:-1], R[1:]
    expected = [np.linalg.norm(pin.log3(a.T @ b)) for a, b in zip(Ra, Rb)]
    np.testing.assert_allclose(so3.relative_angles(Ra, Rb), expected, atol=1e-7)


def test_scalar_exp_matches_pinocchio():
    for w in rotation_vectors(5):
        angle = np.linalg.norm(w)
        axis = w / angle if angle > 0 else np.array([0.0, 0.0, 1.0])
        E = np.array(so3.exp3_unit_axis(axis[0], axis[1], axis[2], angle)).reshape(3, 3)
        np.testing.assert_allclose(E, pin.exp3(w), atol=1e-14)


def test_batched_exp_matches_pinocchio_and_inverts_log():
    rng = np.random.default_rng(6)
    w = rng.normal(size=3)
    t = np.linspace(-1.0, 1.0, 9)
    R = so3.exp3_scaled(w, t)
    for k, tk in enumerate(t):
        np.testing.assert_allclose(R[k], pin.exp3(tk * w), atol=1e-14)
    np.testing.assert_array_equal(so3.exp3_scaled(np.zeros(3), t), np.broadcast_to(np.eye(3), (9, 3, 3)))
    ws = rotation_vectors(7)
    R = np.array([pin.exp3(w) for w in ws])
    log = so3.log3_batch(R)
    axes = log.vector / np.maximum(log.angle, 1e-300)[:, None]
    np.testing.assert_allclose(so3.exp3_axis_batch(axes, log.angle), R, atol=1e-12)   # exp(log R) = R


@pytest.mark.parametrize("aligned", [-1, 0, 1, 2])
def test_times_exp_right_multiplies(aligned):
    rng = np.random.default_rng(8)
    R = np.array([pin.exp3(rng.normal(size=3)) for _ in range(6)])
    axis = np.eye(3)[aligned] if aligned >= 0 else rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    angle = rng.uniform(-3, 3, 6)
    expected = np.array([Rk @ pin.exp3(a * axis) for Rk, a in zip(R, angle)])
    np.testing.assert_allclose(so3.times_exp(R, axis, angle, aligned), expected, atol=1e-14)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), f=st.floats(0.0, 1.0))
def test_slerp_endpoints_midpoint_and_constant_speed(seed, f):
    rng = np.random.default_rng(seed)
    Ra, Rb = pin.exp3(rng.normal(size=3)), pin.exp3(rng.uniform(0.0, 3.0) * rng.normal(size=3) / np.sqrt(3))
    A, B = Ra[None], Rb[None]
    np.testing.assert_allclose(so3.slerp_batch(A, B, np.array([0.0]))[0], Ra, atol=1e-12)
    np.testing.assert_allclose(so3.slerp_batch(A, B, np.array([1.0]))[0], Rb, atol=1e-12)
    mid = so3.slerp_batch(A, B, np.array([0.5]))[0]
    np.testing.assert_allclose(mid, Ra @ pin.exp3(0.5 * pin.log3(Ra.T @ Rb)), atol=1e-12)
    # the geodesic: angle(Ra, R(f)) = f * angle(Ra, Rb) and angle(R(f), Rb) = (1 - f) * angle(Ra, Rb)
    Rf = so3.slerp_batch(A, B, np.array([f]))
    total = so3.relative_angles(A, B)[0]
    assert so3.relative_angles(A, Rf)[0] == pytest.approx(f * total, abs=1e-12)
    assert so3.relative_angles(Rf, B)[0] == pytest.approx((1 - f) * total, abs=1e-12)
