"""Capability of several tips and of the object they hold, checked against the single-arm analysis, sampling of the
closure constraint, the statics they must agree with, and the mirror symmetry of the two-Panda table.

Independent references: each arm as its own single-tip RobotModel from the same URDF; closure-consistent joint
velocities built from the pseudo-inverse of the stacked Jacobian (not from the module's null-space basis); the
minimum joint-torque norm that holds an object wrench, by least squares over the internal wrenches of
scipy.linalg.null_space(G); the closed form (G (J Jᵀ)⁻¹ Gᵀ)⁻¹ that holds when J has full row rank (minimum-norm
joint velocity J⁺ Gᵀ t for the object twist t).
"""
import numpy as np
import pytest
import scipy.linalg
from capability_arms import shape_matrix

from robokin_ros.core.capability import analysis as cap
from robokin_ros.core.capability.directional import max_tool_speed
from robokin_ros.core.capability.held_capability import analyze_held_object
from robokin_ros.core.capability.held_directional import max_object_force, max_object_speed
from robokin_ros.core.capability.per_tip import analyze_tip, analyze_tips
from robokin_ros.core.capability.polytope import force_polytope, max_force, tool_force_polytope
from robokin_ros.core.capability.report import held_object_rows
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.tips.held_object import point_jacobian

ELLIPSOIDS = ("velocity", "angular_velocity", "force_unweighted", "force_rms", "force_weighted")
LEFT_Q = np.array([0.1, -0.4, 0.2, -2.0, 0.1, 1.8, 0.6])
MIRROR = np.array([-1.0, 1, -1, 1, -1, 1, -1])     # a Panda mirrored in its base's x-z plane
S = np.diag([1.0, -1.0, 1.0])                      # the table's mirror y -> -y


@pytest.fixture(scope="module")
def dual():
    return RobotModel.from_name("dual_panda")


@pytest.fixture(scope="module")
def torso():
    return RobotModel.from_name("dual_panda_torso")


def _same(a: cap.Ellipsoid, b: cap.Ellipsoid, tol: float = 1e-12) -> None:
    """Equal point sets, relative to the largest axis (principal directions are sign-free)."""
    scale = max(a.semi_axes[0], b.semi_axes[0]) ** 2
    np.testing.assert_allclose(shape_matrix(a), shape_matrix(b), rtol=0, atol=tol * scale)


def _arm_alone(robot: RobotModel, tip: str) -> tuple[RobotModel, np.ndarray]:
    """The single-tip model world -> tip from the same URDF, and where its joints sit in the two-arm vector."""
    arm = RobotModel.from_urdf_string(robot.urdf_xml, robot.base_frame, tip)
    return arm, np.array([robot.joint_names.index(j) for j in arm.joint_names])


def _symmetric_q(robot: RobotModel) -> np.ndarray:
    q = np.concatenate([LEFT_Q, LEFT_Q * MIRROR])
    return q if robot.n == 14 else np.concatenate([[0.0], q])


# --- per tip -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["dual_panda", "dual_panda_torso"])
def test_each_tip_equals_the_analysis_of_its_arm_alone(name, dual, torso):
    robot = dual if name == "dual_panda" else torso
    rng = np.random.default_rng(11)
    tau = cap.torque_limits_of(robot).limits
    for _ in range(5):
        q = robot.random_positions(rng, 0.1)
        results = analyze_tips(robot, q, tau)
        assert list(results) == list(robot.tip_frames)
        for tip, joints in zip(robot.tip_frames, robot.tip_joint_indices):
            arm, where = _arm_alone(robot, tip)
            np.testing.assert_array_equal(results[tip].joint_indices, where)     # its own joints, chain order
            alone = cap.analyze(arm, q[where], cap.torque_limits_of(arm).limits)
            mine = results[tip]
            assert mine.tip == tip
            for field in ELLIPSOIDS:
                _same(getattr(mine, field), getattr(alone, field))
            np.testing.assert_allclose(mine.jacobian, alone.jacobian, atol=1e-12)
            np.testing.assert_array_equal(mine.torque_limits, alone.torque_limits)
            np.testing.assert_allclose(mine.tool_position, alone.tool_position, atol=1e-12)
            assert mine.manipulability.yoshikawa == pytest.approx(alone.manipulability.yoshikawa, rel=1e-12)
            if name == "dual_panda":       # M is block diagonal: the other arm does not load this one
                _same(mine.acceleration, alone.acceleration)
                poly_mine = tool_force_polytope(mine, "pinv", 1e-3)
                poly_alone = tool_force_polytope(alone, "pinv", 1e-3)
                assert poly_mine.volume == pytest.approx(poly_alone.volume, rel=1e-9)
            else:   # the torso carries the other arm: J_v M⁻¹ of the whole tree, own torque columns
                J = robot.jacobian(q, tip)[:3]
                K = np.linalg.solve(robot.inertia(q), J.T).T[:, joints]
                _same(mine.acceleration, cap.acceleration_ellipsoid(K, np.eye(len(joints))))


def test_a_shared_torso_joint_counts_for_both_tips_with_its_limit_once(torso):
    results = analyze_tips(torso, _symmetric_q(torso), cap.torque_limits_of(torso).limits)
    torso_index = torso.joint_names.index("torso_joint")
    for tip in torso.tip_frames:
        result = results[tip]
        assert torso_index in result.joint_indices and len(result.joint_indices) == 8
        column = list(result.joint_indices).index(torso_index)
        assert np.linalg.norm(result.jacobian[:, column]) > 0.1              # the torso moves both hands
        assert result.torque_limits[column] == torso.limits.effort[torso_index]


def test_single_tip_robots_keep_analyze_exactly(panda):
    q = np.array([0.2, -0.6, 0.1, -2.1, 0.3, 1.7, 0.5])
    tau = panda.limits.effort
    (tip, result), = analyze_tips(panda, q, tau).items()
    reference = cap.analyze(panda, q, tau)
    assert tip == panda.tip_frame and result.tip == "" and result.joint_indices is None
    for field in ELLIPSOIDS + ("acceleration",):
        np.testing.assert_array_equal(getattr(result, field).semi_axes, getattr(reference, field).semi_axes)
        np.testing.assert_array_equal(getattr(result, field).axes, getattr(reference, field).axes)


def test_per_tip_refuses_an_unknown_tip(dual):
    with pytest.raises(InvalidInputError, match="unknown tip 'panda_hand_tcp'.*left_panda_hand_tcp"):
        analyze_tip(dual, np.zeros(dual.n), "panda_hand_tcp")


def test_mirrored_arms_have_mirrored_tip_ellipsoids(dual):
    results = analyze_tips(dual, _symmetric_q(dual), cap.torque_limits_of(dual).limits)
    left, right = (results[t] for t in dual.tip_frames)
    # kinematics only: the Panda's link inertias (products of inertia) are not mirror-symmetric
    for field in ("velocity", "angular_velocity", "force_weighted"):
        np.testing.assert_allclose(S @ shape_matrix(getattr(left, field)) @ S, shape_matrix(getattr(right, field)),
                                   atol=1e-9 * getattr(left, field).semi_axes[0] ** 2)


# --- held object -------------------------------------------------------------------------------------------------


def _stack(robot, q, tips):
    return np.vstack([robot.jacobian(q, t) for t in tips])


def _inside(ellipsoid: cap.Ellipsoid, x: np.ndarray) -> float:
    """xᵀ Q⁻¹ x: <= 1 inside, 1 on the surface."""
    return float(x @ np.linalg.solve(shape_matrix(ellipsoid), x))


@pytest.mark.parametrize("name", ["dual_panda", "dual_panda_torso"])
def test_held_object_velocity_ellipsoid_contains_every_closure_motion_and_touches_at_its_axes(name, dual, torso):
    robot = dual if name == "dual_panda" else torso
    rng = np.random.default_rng(5)
    q = robot.random_positions(rng, 0.2)
    held = analyze_held_object(robot, q)
    J, G = _stack(robot, q, robot.tip_frames), held.grasp
    assert np.linalg.matrix_rank(J) == 12                       # each hand can move freely: closure allows any t
    J_pinv = np.linalg.pinv(J)
    null_J = scipy.linalg.null_space(J)
    worst = 0.0
    for _ in range(2000):
        # a closure-consistent joint velocity built without the module: some object twist, plus self-motion
        q_dot = J_pinv @ G.T @ rng.standard_normal(6) + null_J @ rng.standard_normal(null_J.shape[1])
        q_dot *= rng.uniform(0.0, 1.0) ** 0.2 / np.linalg.norm(q_dot)            # ||q̇|| <= 1
        t, residual, *_ = np.linalg.lstsq(G.T, J @ q_dot, rcond=None)
        assert np.sqrt(residual[0]) < 1e-12                                     # both hands move with the object
        worst = max(worst, _inside(held.velocity, t[:3]))
    assert worst <= 1.0 + 1e-9
    assert worst > 0.5                                                          # the samples reach out
    for i in range(3):
        # the least joint-velocity norm that gives the object the linear velocity s_i a_i (any angular) is 1
        v = held.velocity.semi_axes[i] * held.velocity.axes[:, i]
        A = J_pinv @ G.T                                                        # (n, 6)
        w, *_ = np.linalg.lstsq(A[:, 3:], -A[:, :3] @ v, rcond=None)
        assert np.linalg.norm(A @ np.concatenate([v, w])) == pytest.approx(1.0, rel=1e-9)


def test_held_object_velocity_limited_ellipsoid_stays_in_the_joint_velocity_box(dual):
    q = _symmetric_q(dual)
    held = analyze_held_object(dual, q)
    J, G = _stack(dual, q, dual.tip_frames), held.grasp
    limits = dual.limits.velocity
    A = np.linalg.pinv(J * limits) @ G.T                                        # (n, 6): u with q̇ = limits * u
    for i in range(3):
        v = held.velocity_limited.semi_axes[i] * held.velocity_limited.axes[:, i]
        w, *_ = np.linalg.lstsq(A[:, 3:], -A[:, :3] @ v, rcond=None)
        u = A @ np.concatenate([v, w])
        assert np.linalg.norm(u) == pytest.approx(1.0, rel=1e-9)                 # on the ellipsoid's surface
        assert np.all(np.abs(limits * u) <= limits * (1 + 1e-12))                # inside the box
    assert held.velocity_limited.semi_axes[0] > held.velocity.semi_axes[0]      # Panda limits exceed 1 rad/s


def test_held_object_matches_the_closed_form_for_a_full_rank_jacobian(dual):
    rng = np.random.default_rng(2)
    q = dual.random_positions(rng, 0.2)
    held = analyze_held_object(dual, q)
    J, G = _stack(dual, q, dual.tip_frames), held.grasp
    textbook_velocity = np.linalg.inv(G @ np.linalg.inv(J @ J.T) @ G.T)         # ||J⁺ Gᵀ t||² = tᵀ (.)⁻¹ t
    np.testing.assert_allclose(held.wrench_gram, textbook_velocity, rtol=0, atol=1e-9 * np.abs(textbook_velocity).max())


@pytest.mark.parametrize("weighted", [False, True])
def test_held_object_force_ellipsoid_is_the_least_torque_statics(dual, weighted):
    """Identity tested: for every object wrench w, min over internal wrenches y of ||W Jᵀ (G⁺ w + U y)||
    = sqrt(wᵀ B Bᵀ w) (W = diag(1/τ_max) when weighted, else I); for a pure force w = (f, 0) it is 1 / the force
    ellipsoid's radius along f. And the drawn force and velocity ellipsoids are dual: force semi-axis i =
    1 / velocity semi-axis (2 - i), same directions (unweighted)."""
    rng = np.random.default_rng(8)
    q = dual.random_positions(rng, 0.2)
    tau = dual.limits.effort
    held = analyze_held_object(dual, q, tau)
    J, G = _stack(dual, q, dual.tip_frames), held.grasp
    weights = 1.0 / tau if weighted else np.ones(dual.n)
    U = scipy.linalg.null_space(G)                                               # (12, 6) internal wrenches
    G_pinv = np.linalg.pinv(G)
    ellipsoid = held.force_weighted if weighted else held.force_unweighted

    def least_torque(w):
        base, internal = weights * (J.T @ G_pinv @ w), weights[:, None] * (J.T @ U)
        y, *_ = np.linalg.lstsq(internal, -base, rcond=None)
        return np.linalg.norm(base + internal @ y)

    for _ in range(30):
        f = rng.standard_normal(3)
        f /= np.linalg.norm(f)
        radius = 1.0 / np.sqrt(_inside(ellipsoid, f))
        assert least_torque(np.concatenate([f, np.zeros(3)])) == pytest.approx(1.0 / radius, rel=1e-9)
        if not weighted:
            w = rng.standard_normal(6)
            assert least_torque(w) == pytest.approx(np.sqrt(w @ held.wrench_gram @ w), rel=1e-9)
    if not weighted:
        v, fu = held.velocity, held.force_unweighted
        np.testing.assert_allclose(fu.semi_axes * v.semi_axes[::-1], 1.0, rtol=1e-12)
        np.testing.assert_allclose(np.abs(np.sum(fu.axes * v.axes[:, ::-1], axis=0)), 1.0, rtol=1e-12)
        np.testing.assert_allclose(held.force_rms.semi_axes, fu.semi_axes * np.sqrt(np.mean(tau**2)), rtol=1e-12)


def test_internal_wrenches_are_the_null_space_of_the_grasp_matrix(dual):
    held = analyze_held_object(dual, _symmetric_q(dual))
    U = held.internal_wrenches
    assert U.shape == (12, 6)
    np.testing.assert_allclose(held.grasp @ U, 0.0, atol=1e-12)
    np.testing.assert_allclose(U.T @ U, np.eye(6), atol=1e-12)
    # a pure squeeze along the line between the hands is internal
    left, right = (dual.fk(_symmetric_q(dual), t).translation for t in dual.tip_frames)
    d = (right - left) / np.linalg.norm(right - left)
    squeeze = np.concatenate([d, np.zeros(3), -d, np.zeros(3)])
    np.testing.assert_allclose(U @ (U.T @ squeeze), squeeze, atol=1e-12)


@pytest.mark.parametrize("name", ["dual_panda", "dual_panda_torso"])
def test_symmetric_configuration_gives_a_symmetric_held_object(name, dual, torso):
    robot = dual if name == "dual_panda" else torso
    held = analyze_held_object(robot, _symmetric_q(robot), cap.torque_limits_of(robot).limits)
    assert held.object_position[1] == pytest.approx(0.0, abs=1e-12)
    for field in ("velocity", "force_unweighted", "force_weighted", "velocity_limited"):
        Q = shape_matrix(getattr(held, field))
        np.testing.assert_allclose(S @ Q @ S, Q, atol=1e-9 * np.abs(Q).max())
    # angular velocity is a pseudo-vector: the mirror maps w to -S w, the same quadratic form
    Q = shape_matrix(held.angular_velocity)
    np.testing.assert_allclose(S @ Q @ S, Q, atol=1e-9 * np.abs(Q).max())


def test_one_hand_holding_is_the_tip_ellipsoid_moved_to_the_object_point(dual):
    rng = np.random.default_rng(3)
    q = dual.random_positions(rng, 0.2)
    tip = dual.tip_frames[1]
    tau = dual.limits.effort
    point = dual.fk(q, tip).translation + [0.05, -0.02, 0.1]
    held = analyze_held_object(dual, q, tau, tips=[tip], object_position=point)
    J_point = point_jacobian(dual.jacobian(q, tip), dual.fk(q, tip).translation, point)
    joints = dual.tip_joint_indices[1]
    _same(held.velocity, cap.velocity_ellipsoid(J_point[:3]))
    _same(held.angular_velocity, cap.velocity_ellipsoid(J_point[3:]))
    _same(held.force_unweighted, cap.force_ellipsoid(J_point[:3, joints]), 1e-10)
    _same(held.force_weighted, cap.force_ellipsoid(J_point[:3, joints], tau[joints]), 1e-10)
    # at the tip itself (the default object point for one tip) it is the tip's own analysis
    at_tip = analyze_held_object(dual, q, tau, tips=[tip])
    mine = analyze_tip(dual, q, tip, tau)
    for field in ELLIPSOIDS:
        _same(getattr(at_tip, field), getattr(mine, field), 1e-10)


def test_held_object_refuses_bad_input(dual):
    q = np.zeros(dual.n)
    with pytest.raises(InvalidInputError, match="unknown: \\['nope'\\]"):
        analyze_held_object(dual, q, tips=["nope"])
    with pytest.raises(InvalidInputError, match="distinct"):
        analyze_held_object(dual, q, tips=[dual.tip_frame, dual.tip_frame])
    with pytest.raises(InvalidInputError, match="object_position"):
        analyze_held_object(dual, q, object_position=[0.0, np.nan, 0.0])
    with pytest.raises(InvalidInputError):
        analyze_held_object(dual, q[:7])


# --- held object: the exact directional capability under each joint's own limit ----------------------------------


def _radius(ellipsoid: cap.Ellipsoid, d: np.ndarray) -> float:
    return 1.0 / np.sqrt(_inside(ellipsoid, d))


def test_held_object_ellipsoids_are_inscribed_in_the_exact_directional_capability(dual):
    q = _symmetric_q(dual)
    tau, speed_limits = dual.limits.effort, dual.limits.velocity
    held = analyze_held_object(dual, q, tau)
    rng = np.random.default_rng(4)
    for _ in range(10):
        d = rng.standard_normal(3)
        d /= np.linalg.norm(d)
        speed, force = max_object_speed(held, speed_limits, d), max_object_force(held, tau, d)
        assert _radius(held.velocity_limited, d) <= speed * (1 + 1e-7)
        assert _radius(held.force_weighted, d) <= force * (1 + 1e-7)
        # the box holds more than the inscribed ellipsoid somewhere, but not beyond its circumscribed ball
        assert speed <= _radius(held.velocity_limited, d) * np.sqrt(dual.n) * (1 + 1e-7)
        # mirror symmetry of the table: the same capability along the mirrored direction
        assert max_object_speed(held, speed_limits, S @ d) == pytest.approx(speed, rel=1e-6)
        assert max_object_force(held, tau, S @ d) == pytest.approx(force, rel=1e-6)


def test_one_hand_directional_capability_equals_the_single_arm_one(dual):
    rng = np.random.default_rng(6)
    q = dual.random_positions(rng, 0.2)
    tip = dual.tip_frames[0]
    joints = dual.tip_joint_indices[0]
    tau, speed_limits = dual.limits.effort, dual.limits.velocity
    held = analyze_held_object(dual, q, tau, tips=[tip])                 # the object point is the tip origin
    J_v = dual.jacobian(q, tip)[:3, joints]
    polytope = force_polytope(J_v, tau[joints], "exact")
    assert not polytope.clipped
    for _ in range(5):
        d = rng.standard_normal(3)
        assert max_object_speed(held, speed_limits, d) == pytest.approx(
            max_tool_speed(J_v, speed_limits[joints], d), rel=1e-6)
        assert max_object_force(held, tau, d) == pytest.approx(max_force(polytope, d), rel=1e-6)


def test_directional_capability_refuses_bad_input(dual):
    held = analyze_held_object(dual, _symmetric_q(dual))
    with pytest.raises(InvalidInputError, match="velocity_limits"):
        max_object_speed(held, dual.limits.velocity[:7], [1.0, 0, 0])
    with pytest.raises(InvalidInputError, match="torque_limits must be > 0"):
        max_object_force(held, np.zeros(dual.n), [1.0, 0, 0])
    with pytest.raises(InvalidInputError, match="zero vector"):
        max_object_force(held, dual.limits.effort, [0.0, 0, 0])


def test_held_object_table_names_the_tips_and_the_closure(torso):
    held = analyze_held_object(torso, _symmetric_q(torso))
    rows = dict(held_object_rows(held))
    assert rows["held by"] == ", ".join(torso.tip_frames)
    assert rows["closure-consistent joint motions"] == f"{held.closure_velocities.shape[1]} of 15"
    assert rows["closure-consistent joint motions"].startswith("9 ")       # 15 joints - 6 closure constraints
    assert rows["internal wrenches (null space of G)"] == "6"
    assert rows["force semi-axes, torque-weighted"] == "unavailable"        # no limits passed
    assert f"{held.velocity.semi_axes[0]:.4g}" in rows["velocity semi-axes"]
