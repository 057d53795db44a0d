"""Statics (tau = J^T F and its least-squares inverse) against virtual work by finite differences and Pinocchio's
rnea; the joint-space profiles against the textbook peaks; the Cartesian LIN against finite differences."""
import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.classroom.lin_profile import lin_move
from robokin_ros.core.classroom.workspace import planar_2r
from robokin_ros.core.classroom.wrench import joint_torques, tool_wrench, wrench_from_torques
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.trajectory.profiles import joint_move, lspb_eval, lspb_profile, quintic_eval


def _robot(name, panda, ur5):
    return {"panda": panda, "ur5": ur5}[name]


def _tool_twist_fd(robot, q, dq, eps=1e-6):
    """[v; w] of the tool origin in base axes for joint velocity dq, by central differences of FK."""
    a, b = robot.fk(q - eps * dq), robot.fk(q + eps * dq)
    v = (b.translation - a.translation) / (2 * eps)
    w = a.rotation @ pin.log3(a.rotation.T @ b.rotation) / (2 * eps)
    return np.concatenate([v, w])


# ---- statics ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["panda", "ur5"])
def test_virtual_work_against_finite_differences(name, panda, ur5):
    robot, rng = _robot(name, panda, ur5), np.random.default_rng(11)
    for _ in range(5):
        q, F, dq = robot.random_positions(rng, 0.1), rng.normal(size=6), rng.normal(size=robot.n)
        tau = joint_torques(robot, q, F)
        assert tau @ dq == pytest.approx(F @ _tool_twist_fd(robot, q, dq), rel=1e-6, abs=1e-8)


def _rnea_static(robot, q, F):
    """Joint torques that hold the arm against the environment's wrench -F at the tool, gravity off."""
    model = pin.Model(robot.model)
    model.gravity = pin.Motion.Zero()
    data = model.createData()
    qp = robot.to_pinocchio_q(q)
    pin.framesForwardKinematics(model, data, qp)
    frame = model.frames[robot.tip_frame_id]
    world_R_tool = data.oMf[robot.tip_frame_id].rotation
    world_R_base = robot.world_T_base.rotation
    on_robot = pin.Force(world_R_tool.T @ world_R_base @ -F[:3], world_R_tool.T @ world_R_base @ -F[3:])
    fext = [pin.Force.Zero() for _ in range(model.njoints)]
    fext[frame.parentJoint] = frame.placement.act(on_robot)          # tool frame -> its joint's frame
    zero = np.zeros(model.nv)
    return pin.rnea(model, data, qp, zero, zero, pin.StdVec_Force(fext))


@pytest.mark.parametrize("name", ["panda", "ur5"])
def test_torques_match_pinocchio_rnea_with_an_external_force(name, panda, ur5):
    robot, rng = _robot(name, panda, ur5), np.random.default_rng(12)
    for _ in range(5):
        q, F = robot.random_positions(rng, 0.1), rng.normal(size=6) * [50, 50, 50, 5, 5, 5]
        np.testing.assert_allclose(joint_torques(robot, q, F), _rnea_static(robot, q, F), atol=1e-10)


def test_tool_axes_wrench_matches_the_local_jacobian(panda):
    rng = np.random.default_rng(13)
    q, F_tool = panda.random_positions(rng, 0.1), rng.normal(size=6)
    J_local = panda.jacobian(q, reference="local")                   # Pinocchio: tool origin, tool axes
    np.testing.assert_allclose(joint_torques(panda, q, F_tool, axes="tool"), J_local.T @ F_tool, atol=1e-12)


def test_ur5_round_trip_is_exact(ur5):
    rng = np.random.default_rng(14)
    for _ in range(5):
        q, F = ur5.random_positions(rng, 0.2), rng.normal(size=6)
        solution = tool_wrench(ur5, q, joint_torques(ur5, q, F))
        assert solution.rank == 6 and solution.exact and solution.null_wrenches.shape == (6, 0)
        np.testing.assert_allclose(solution.wrench, F, atol=1e-9)


def test_panda_least_squares_leaves_only_internal_torque(panda):
    rng = np.random.default_rng(15)
    q, tau = panda.random_positions(rng, 0.1), rng.normal(size=7)
    J = panda.jacobian(q)
    solution = tool_wrench(panda, q, tau)
    assert solution.rank == 6 and not solution.exact
    np.testing.assert_allclose(J @ solution.residual, 0, atol=1e-10)     # residual in null(J): no tool wrench
    np.testing.assert_allclose(solution.wrench, np.linalg.lstsq(J.T, tau, rcond=None)[0], atol=1e-10)
    for _ in range(20):                                                  # any other F fits worse
        other = solution.wrench + 1e-3 * rng.normal(size=6)
        assert np.linalg.norm(J.T @ other - tau) > np.linalg.norm(solution.residual)
    F = rng.normal(size=6)                                               # and F -> tau -> F is exact
    np.testing.assert_allclose(tool_wrench(panda, q, J.T @ F).wrench, F, atol=1e-9)


@pytest.mark.parametrize("case", ["panda_stretched", "planar_2r"])
def test_rank_deficient_gives_the_minimum_norm_wrench(case, panda):
    # Panda at q = 0 (stretched up; joint 4 just past its limit, a kinematic test only): rank 5
    robot, q = (panda, np.zeros(7)) if case == "panda_stretched" else (planar_2r(0.5, 0.3), np.array([0.3, 1.1]))
    rng = np.random.default_rng(16)
    J = robot.jacobian(q)
    tau = J.T @ rng.normal(size=6)                                       # a torque some wrench produces
    solution = wrench_from_torques(J, tau)
    expected_rank = 5 if case == "panda_stretched" else 2
    assert solution.rank == expected_rank and solution.null_wrenches.shape == (6, 6 - expected_rank)
    np.testing.assert_allclose(J.T @ solution.null_wrenches, 0, atol=1e-10)   # held at zero torque
    np.testing.assert_allclose(solution.null_wrenches.T @ solution.wrench, 0, atol=1e-10)
    np.testing.assert_allclose(solution.wrench, np.linalg.lstsq(J.T, tau, rcond=1e-10)[0], atol=1e-9)
    other = solution.wrench + solution.null_wrenches @ rng.normal(size=6 - expected_rank)
    np.testing.assert_allclose(J.T @ other, tau, atol=1e-9)
    assert np.linalg.norm(other) > np.linalg.norm(solution.wrench)


def test_statics_bad_inputs(panda):
    with pytest.raises(InvalidInputError, match="wrench"):
        joint_torques(panda, panda.home(), np.zeros(5))
    with pytest.raises(InvalidInputError, match="axes"):
        joint_torques(panda, panda.home(), np.zeros(6), axes="world")
    with pytest.raises(InvalidInputError, match="Jacobian"):
        wrench_from_torques(np.zeros((3, 7)), np.zeros(7))


# ---- joint-space point-to-point profiles (core/trajectory/profiles.py) ---------------------------------------------
Q0, Q1 = np.array([0.0, 0.2, -0.5]), np.array([1.2, -0.4, 0.3])     # joint 0 binds (largest move)
V, A = np.array([1.0, 1.0, 1.0]), np.array([4.0, 4.0, 4.0])


def _fd_peaks(traj):
    dt = np.diff(traj.times)
    vel = np.diff(traj.positions, axis=0) / dt[:, None]
    acc = np.diff(vel, axis=0) / (0.5 * (dt[1:] + dt[:-1]))[:, None]
    return np.abs(vel).max(axis=0), np.abs(acc).max(axis=0)


def test_trapezoid_peaks_are_the_textbook_ones():
    D, v, a = 1.2, V[0], A[0]
    traj = joint_move(Q0, Q1, V, A, "trapezoid", rate_hz=1000.0)
    assert traj.times[-1] == pytest.approx(D / v + v / a)                # T = D/v + v/a
    assert lspb_profile(v / D, a / D)[0] == pytest.approx(v / a)         # t_b = v/a
    assert np.abs(traj.velocities[:, 0]).max() == pytest.approx(v)
    assert np.abs(traj.accelerations[:, 0]).max() == pytest.approx(a)
    fd_v, fd_a = _fd_peaks(traj)
    assert fd_v[0] == pytest.approx(v, rel=1e-3) and fd_a[0] == pytest.approx(a, rel=1e-2)


def test_trapezoid_becomes_a_triangle_when_v_is_out_of_reach():
    D, a = 1.2, 0.5                                                      # sqrt(a D) < v_max = 1
    traj = joint_move(Q0, Q1, V, np.full(3, a), "trapezoid", rate_hz=1000.0)
    assert traj.times[-1] == pytest.approx(2 * np.sqrt(D / a))
    # the apex at T/2 falls between samples: the sampled peak is within a dt / 2 below it
    assert np.abs(traj.velocities[:, 0]).max() == pytest.approx(np.sqrt(a * D), abs=a * 0.5e-3 + 1e-12)
    assert lspb_eval(np.array([np.sqrt(D / a)]), *lspb_profile(1 / D, a / D))[1][0] * D == pytest.approx(np.sqrt(a * D))


def test_quintic_peaks_are_the_textbook_ones():
    D = 1.2
    traj = joint_move(Q0, Q1, V, A, "quintic", rate_hz=2000.0)
    T = traj.times[-1]
    assert T == pytest.approx(max(15 / 8 * D / V[0], np.sqrt(10 / np.sqrt(3) * D / A[0])))
    s, sd, sdd = quintic_eval(np.array([0.5 * T, (0.5 - np.sqrt(3) / 6) * T]), T)
    assert D * sd[0] == pytest.approx(15 / 8 * D / T)                   # peak speed at mid-move
    assert D * abs(sdd[1]) == pytest.approx(10 / np.sqrt(3) * D / T ** 2)
    fd_v, fd_a = _fd_peaks(traj)
    assert fd_v[0] == pytest.approx(15 / 8 * D / T, rel=1e-5)
    assert fd_a[0] == pytest.approx(10 / np.sqrt(3) * D / T ** 2, rel=1e-3)
    assert fd_v[0] <= V[0] * (1 + 1e-9) and fd_a[0] <= A[0] * (1 + 1e-3)


# ---- Cartesian LIN --------------------------------------------------------------------------------------
START = pin.SE3(pin.rpy.rpyToMatrix(0.1, -0.2, 0.3), np.array([0.4, -0.1, 0.5]))
END = pin.SE3(pin.rpy.rpyToMatrix(0.5, 0.3, -0.6), np.array([0.1, 0.3, 0.2]))


def _fd_lin(profile):
    dt = np.diff(profile.times)
    speed = np.linalg.norm(np.diff(profile.translations, axis=0), axis=1) / dt
    turn = np.einsum("kji,kjl->kil", profile.rotations[:-1], profile.rotations[1:])
    angular = np.array([np.linalg.norm(pin.log3(R)) for R in turn]) / dt
    mid = 0.5 * (dt[1:] + dt[:-1])                   # the speeds sit at interval midpoints
    return speed, angular, np.abs(np.diff(speed)) / mid, np.abs(np.diff(angular)) / mid


def _trapezoid_time(D, v, a):
    return D / v + v / a if v * v / a < D else 2 * np.sqrt(D / a)


@pytest.mark.parametrize("limits", [(0.25, 1.0, 2.0, 4.0),           # translation binds
                                    (1.0, 2.0, 0.3, 1.0),            # rotation binds
                                    (0.2, 50.0, 50.0, 0.5)])         # speed binds translation, accel rotation
def test_lin_peaks_and_time(limits):
    v, a, w, alpha = limits
    profile = lin_move(START, END, v, a, w, alpha, rate_hz=2000.0)
    D = np.linalg.norm(END.translation - START.translation)
    theta = np.linalg.norm(pin.log3(START.rotation.T @ END.rotation))
    assert profile.duration == pytest.approx(max(_trapezoid_time(D, v, a), _trapezoid_time(theta, w, alpha)))
    speed, angular, acc, ang_acc = _fd_lin(profile)
    assert speed.max() == pytest.approx(profile.peak_speed, rel=1e-3)
    assert angular.max() == pytest.approx(profile.peak_angular_speed, rel=1e-3)
    assert profile.peak_speed <= v * (1 + 1e-9) and profile.peak_angular_speed <= w * (1 + 1e-9)
    assert acc.max() <= a * 1.01 and ang_acc.max() <= alpha * 1.01
    assert max(profile.peak_speed / v, profile.peak_angular_speed / w) > 0.5   # the binding part is not idle
    np.testing.assert_allclose(profile.speed[1:-1], speed[1:], atol=a * 1e-3 + 1e-9)


def test_lin_is_a_straight_line_with_slerp_ending_together():
    profile = lin_move(START, END, 0.25, 1.0, 2.0, 4.0, rate_hz=500.0)
    delta = END.translation - START.translation
    offsets = profile.translations - START.translation
    np.testing.assert_allclose(np.cross(offsets, delta), 0, atol=1e-12)              # on the line
    assert np.all(np.diff(offsets @ delta) >= 0)
    axis = pin.log3(START.rotation.T @ END.rotation)
    for R in profile.rotations:                                                      # on the geodesic
        np.testing.assert_allclose(np.cross(pin.log3(START.rotation.T @ R), axis), 0, atol=1e-10)
    np.testing.assert_allclose(profile.translations[-1], END.translation, atol=1e-12)
    np.testing.assert_allclose(profile.rotations[-1], END.rotation, atol=1e-12)
    assert profile.speed[-1] == 0 and profile.angular_speed[-1] == 0
    assert profile.angular_speed[-2] > 0 and profile.speed[-2] > 0                  # neither part stops early


def test_lin_pure_rotation_and_bad_limits():
    turn_only = lin_move(START, pin.SE3(END.rotation, START.translation), 0.2, 1.0, 1.0, 2.0)
    assert turn_only.peak_speed == 0 and np.allclose(turn_only.translations, START.translation)
    assert turn_only.duration == pytest.approx(turn_only.rotation_time)
    with pytest.raises(InvalidInputError, match="a_max"):
        lin_move(START, END, 0.2, 0.0, 1.0, 1.0)
    with pytest.raises(InvalidInputError, match="start"):
        lin_move(np.eye(3), END, 0.2, 1.0, 1.0, 1.0)
