"""max_tool_speed: the largest tool speed along a direction inside the joint velocity box.

Evidence that does not reuse the function's linear program: a closed form for square Jacobians, a bounded least
squares solver (scipy's lsq_linear) that shows t·d is reachable and a little more is not, the zonotope's support
function (an upper bound for every probe direction), and the scaling laws of the problem.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.optimize import lsq_linear

from robokin_ros.core.capability.directional import max_tool_speed
from robokin_ros.core.errors import InvalidInputError


def random_problem(seed: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    J = rng.normal(size=(3, n))                                       # (3, n)
    limits = rng.uniform(0.3, 3.0, n)                                 # (n,)
    direction = rng.normal(size=3)
    return J, limits, direction


def solved_problem(seed: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """A random problem, its unit direction and the speed max_tool_speed finds."""
    J, limits, d = random_problem(seed, n)
    return J, limits, d / np.linalg.norm(d), max_tool_speed(J, limits, d)


def box_residual(J: np.ndarray, limits: np.ndarray, target: np.ndarray) -> tuple[float, np.ndarray]:
    """Smallest ||J dq - target|| with |dq_i| <= limits_i (bounded least squares, not an LP)."""
    fit = lsq_linear(J, target, bounds=(-limits, limits), method="bvls", tol=1e-12)
    return float(np.linalg.norm(J @ fit.x - target)), fit.x


def closed_form_square(J: np.ndarray, limits: np.ndarray, d: np.ndarray) -> float:
    # J invertible: dq = t J^-1 d is the only solution, so t stops where the first joint hits its limit
    return 1.0 / np.max(np.abs(np.linalg.solve(J, d)) / limits)


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1))
def test_square_jacobian_matches_closed_form(seed):
    J, limits, d = random_problem(seed, 3)
    if np.linalg.cond(J) > 1e4:
        return                                                        # closed form is ill-conditioned there
    unit = d / np.linalg.norm(d)
    expected = closed_form_square(J, limits, unit)
    assert max_tool_speed(J, limits, d) == pytest.approx(expected, rel=1e-6)


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 7))
def test_speed_is_reachable_and_nothing_beyond_is(seed, n):
    J, limits, unit, t = solved_problem(seed, n)
    scale = np.linalg.norm(J, 2) * np.linalg.norm(limits)
    residual, dq = box_residual(J, limits, t * unit)
    assert residual < 1e-7 * scale, f"t·d = {t} d is not reachable inside the box (residual {residual})"
    assert np.all(np.abs(dq) <= limits * (1 + 1e-9))
    beyond, _ = box_residual(J, limits, 1.01 * t * unit)
    assert beyond > 1e-6 * scale, "1 % more speed is still reachable: the returned speed is not the largest"


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 7))
def test_support_function_bounds_the_speed(seed, n):
    # t d in Z implies t (y·d) <= h_Z(y) = sum_i lim_i |J_i·y| for every y with y·d > 0
    J, limits, unit, t = solved_problem(seed, n)
    probes = np.random.default_rng(seed + 1).normal(size=(2000, 3))
    probes = np.vstack([probes, unit])                                # y = d itself gives the loosest bound
    ahead = probes @ unit > 1e-3
    bounds = (np.abs(probes[ahead] @ J) @ limits) / (probes[ahead] @ unit)    # (k,)
    assert t <= bounds.min() * (1 + 1e-9)


@settings(max_examples=25)
@given(seed=st.integers(0, 2**32 - 1), k=st.floats(0.05, 20.0))
def test_scaling_limits_scales_speed_and_direction_length_does_not_matter(seed, k):
    J, limits, d = random_problem(seed, 5)
    t = max_tool_speed(J, limits, d)
    assert max_tool_speed(J, k * limits, d) == pytest.approx(k * t, rel=1e-6)
    assert max_tool_speed(J, limits, k * d) == pytest.approx(t, rel=1e-6)
    assert max_tool_speed(J, limits, -d) == pytest.approx(t, rel=1e-6)     # the box is symmetric


@settings(max_examples=25)
@given(seed=st.integers(0, 2**32 - 1))
def test_redundant_arm_is_at_least_as_fast_as_any_three_of_its_joints(seed):
    J, limits, d = random_problem(seed, 6)
    unit = d / np.linalg.norm(d)
    t = max_tool_speed(J, limits, d)
    for cols in ([0, 1, 2], [1, 3, 5], [2, 4, 5]):
        sub = J[:, cols]
        if np.linalg.cond(sub) < 1e4:                                 # other joints held at 0
            assert t >= closed_form_square(sub, limits[cols], unit) * (1 - 1e-7)


def test_direction_outside_the_span_gives_zero_and_inside_does_not():
    J = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.5], [0.0, 0.0, 0.0]])   # planar arm: no z motion
    limits = np.array([1.0, 2.0, 1.0])
    assert max_tool_speed(J, limits, [0.0, 0.0, 1.0]) == pytest.approx(0.0, abs=1e-9)
    # along x: joint 1 gives 1, joint 3 adds 0.5 while joint 2 cancels its y part (|dq2| = 0.5 <= 2)
    assert max_tool_speed(J, limits, [1.0, 0.0, 0.0]) == pytest.approx(1.5, rel=1e-6)


def test_panda_speed_is_reachable(panda):
    q = panda.home()
    J_v = panda.jacobian(q)[:3]                                       # (3, 7) base axes
    for d in np.eye(3):
        t = max_tool_speed(J_v, panda.limits.velocity, d)
        assert t > 0.1                                                # a Panda at home moves > 0.1 m/s each way
        residual, _ = box_residual(J_v, panda.limits.velocity, t * d)
        assert residual < 1e-7


@pytest.mark.parametrize("J, limits, direction, words", [
    (np.ones((3, 3)), np.ones(3), np.zeros(3), "zero vector"),
    (np.ones((3, 3)), np.ones(3), [1.0, np.nan, 0.0], "direction has non-finite"),
    (np.ones((3, 3)), np.ones(3), [1.0, 0.0], "direction must have 3 entries"),
    (np.ones((6, 3)), np.ones(3), [1.0, 0.0, 0.0], "(3, n) matrix, got shape (6, 3)"),
    (np.ones(3), np.ones(3), [1.0, 0.0, 0.0], "(3, n) matrix, got shape (3,)"),
    (np.full((3, 3), np.inf), np.ones(3), [1.0, 0.0, 0.0], "finite (3, n)"),
    (np.ones((3, 3)), np.ones(4), [1.0, 0.0, 0.0], "velocity_limits must have 3 entries"),
    (np.ones((3, 3)), [1.0, 0.0, 1.0], [1.0, 0.0, 0.0], "velocity_limits must be > 0"),
    (np.ones((3, 3)), [1.0, -1.0, 1.0], [1.0, 0.0, 0.0], "velocity_limits must be > 0"),
    (np.ones((3, 3)), [1.0, np.inf, 1.0], [1.0, 0.0, 0.0], "velocity_limits has non-finite"),
])
def test_bad_input_raises_invalid_input_error(J, limits, direction, words):
    with pytest.raises(InvalidInputError) as err:
        max_tool_speed(J, limits, direction)
    assert words in str(err.value)
