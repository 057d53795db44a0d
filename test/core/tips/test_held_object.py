"""The held-object kinematics against finite differences of the dual-Panda model's forward kinematics."""
import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.robot import RobotModel
from robokin_ros.core.tips.held_object import (grasp_matrix, move_twist, point_jacobian, relative_jacobian,
                                               relative_pose_error, take_grasp)

H = 1e-6       # [rad] central-difference step: truncation ~h^2, rounding ~1e-16/h, so agreement to ~1e-9


@pytest.fixture(scope="module")
def arms():
    return RobotModel.load("dual_panda")


def _state(arms, seed):
    rng = np.random.default_rng(seed)
    q = arms.home() + rng.uniform(-0.3, 0.3, arms.n)
    dq = rng.uniform(-1.0, 1.0, arms.n)
    return q, dq


@pytest.mark.parametrize("seed", range(4))
def test_relative_jacobian_is_the_rate_of_the_relative_pose(arms, seed):
    q, dq = _state(arms, seed)
    left, right = arms.tip_frames
    a, b = arms.fk(q, left), arms.fk(q, right)
    J_rel = relative_jacobian(arms.jacobian(q, left), arms.jacobian(q, right), a, b)
    # the relative pose's rate in a's frame, rotated into base axes: minus its drift from the pose at q
    held = a.actInv(b)
    plus = relative_pose_error(arms.fk(q + H * dq, left), arms.fk(q + H * dq, right), held)
    minus = relative_pose_error(arms.fk(q - H * dq, left), arms.fk(q - H * dq, right), held)
    rate = (plus - minus) / (2 * H)
    assert np.abs(J_rel @ dq - rate).max() < 1e-8
    assert np.abs(J_rel @ dq).max() > 0.1        # a real motion, not two zeros agreeing


def test_the_relative_jacobian_is_blind_to_a_common_rigid_motion(arms):
    q, _ = _state(arms, 9)
    left, right = arms.tip_frames
    a, b = arms.fk(q, left), arms.fk(q, right)
    J_a, J_b = arms.jacobian(q, left), arms.jacobian(q, right)
    body_twist = np.array([0.05, -0.02, 0.01, 0.2, -0.1, 0.3])        # at a's origin
    # joint velocities that move both tips with that one rigid twist (each arm solves its own six rows)
    dq = np.zeros(arms.n)
    for tip, J, T in ((0, J_a, a), (1, J_b, b)):
        cols = arms.tip_joint_indices[tip]
        wanted = move_twist(body_twist, a.translation, T.translation)
        dq[cols] = np.linalg.lstsq(J[:, cols], wanted, rcond=None)[0]
    assert np.abs(J_a @ dq - body_twist).max() < 1e-12
    assert np.abs(relative_jacobian(J_a, J_b, a, b) @ dq).max() < 1e-12


@pytest.mark.parametrize("seed", range(3))
def test_point_jacobian_matches_finite_differences(arms, seed):
    q, dq = _state(arms, seed + 10)
    tip = arms.tip_frames[1]
    T = arms.fk(q, tip)
    point_in_tip = np.array([0.1, -0.2, 0.05])
    point = T.act(point_in_tip)
    J_point = point_jacobian(arms.jacobian(q, tip), T.translation, point)
    rate = (arms.fk(q + H * dq, tip).act(point_in_tip) - arms.fk(q - H * dq, tip).act(point_in_tip)) / (2 * H)
    assert np.abs(J_point[:3] @ dq - rate).max() < 1e-8
    assert np.array_equal(J_point[3:], arms.jacobian(q, tip)[3:])


def test_grasp_matrix_is_dual_to_moving_the_twist():
    rng = np.random.default_rng(3)
    object_origin, tips = rng.normal(size=3), [rng.normal(size=3) for _ in range(2)]
    G = grasp_matrix(object_origin, tips)
    twist, wrenches = rng.normal(size=6), rng.normal(size=12)
    tip_twists = G.T @ twist
    for k, origin in enumerate(tips):
        assert np.allclose(tip_twists[6 * k:6 * k + 6], move_twist(twist, object_origin, origin), atol=1e-14)
    # power is the same counted at the object or at the tips
    assert np.isclose((G @ wrenches) @ twist, wrenches @ tip_twists, rtol=1e-13)
    # a pure force at a tip makes a moment r x f about the object origin
    f = np.array([0.0, 0.0, 10.0])
    w = G @ np.concatenate((f, np.zeros(3), np.zeros(6)))
    assert np.allclose(w[3:], np.cross(tips[0] - object_origin, f), atol=1e-13)


def test_take_grasp_puts_the_object_at_the_centroid_and_gives_the_tips_back(arms):
    q = arms.home()
    tips = [arms.fk(q, tip) for tip in arms.tip_frames]
    base_T_object, grasp = take_grasp(tips)
    assert np.allclose(base_T_object.translation, (tips[0].translation + tips[1].translation) / 2, atol=1e-15)
    assert np.allclose(base_T_object.rotation, np.eye(3))
    assert grasp.base_T_object(tips[0]).isApprox(base_T_object, 1e-12)
    for given, back in zip(tips, grasp.base_T_tips(base_T_object)):
        assert given.isApprox(back, 1e-12)
    assert np.abs(relative_pose_error(tips[0], tips[1], tips[0].actInv(tips[1]))).max() < 1e-15
    moved = tips[1] * pin.SE3(pin.exp3(np.array([0.0, 0.0, 0.01])), np.array([0.002, 0.0, 0.0]))
    error = relative_pose_error(tips[0], moved, tips[0].actInv(tips[1]))
    assert np.isclose(np.linalg.norm(error[:3]), 0.002, rtol=1e-9)
    assert np.isclose(np.linalg.norm(error[3:]), 0.01, rtol=1e-9)
