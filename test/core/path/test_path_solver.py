"""Incremental path IK: accuracy checked with Pinocchio FK (not the solver's own batched FK), fail-fast
reasons, axis masks, the batched FK itself, and a control test that the checks catch a bad solution."""
import re

import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.errors import PathInputError
from robokin_ros.core.path.chain import ChainFk
from robokin_ros.core.path.deviation import AxisSelection
from robokin_ros.core.path.solver import check_block
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.geometry import build_path
from robokin_ros.core.path.reach import ABSURD_REACH_FACTOR, arm_reach
from robokin_ros.core.path.result import Deviations, PathStatus
from robokin_ros.core.path.solver import PathIkSolver
from robokin_ros.core.program.moves import waypoint_program
from robokin_ros.core.program.planner import MotionPlanner
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.so3 import relative_angles


def offset(T, d, R=None):
    return pin.SE3(T.rotation if R is None else R, T.translation + np.asarray(d, float))


def pin_deviation(robot, Q, path, frame=None):
    """Max position [m] / orientation [rad] error of FK(Q) against the dense targets, with plain pinocchio."""
    pos, rot = [], []
    for q, p, R in zip(Q, path.positions, path.rotations):
        T = robot.fk(q, frame)
        pos.append(np.linalg.norm(T.translation - p))
        rot.append(np.linalg.norm(pin.log3(R.T @ T.rotation)))
    return max(pos), max(rot)


@pytest.mark.parametrize("name", ["panda", "ur5", "kinova"])
def test_chain_fk_matches_pinocchio(name):
    robot = RobotModel.from_name(name)
    rng = np.random.default_rng(3)
    Q = np.array([robot.random_positions(rng) for _ in range(20)])
    R, p = ChainFk(robot)(Q)
    for k, q in enumerate(Q):
        T = robot.fk(q)
        np.testing.assert_allclose(p[k], T.translation, atol=1e-12)
        np.testing.assert_allclose(R[k], T.rotation, atol=1e-12)


@pytest.mark.parametrize("name,delta", [("panda", [0.15, 0.1, -0.1]), ("ur5", [0.0, 0.15, 0.1])])
def test_blended_path_is_tracked_within_a_micrometre(name, delta):
    robot = RobotModel.from_name(name)
    q0 = robot.home()
    T0 = robot.fk(q0)
    Rz = T0.rotation @ pin.rpy.rpyToMatrix(0, 0, 0.3)
    path = build_path(T0, [offset(T0, delta), offset(T0, [delta[0], 0, 0], Rz), offset(T0, [0, 0, 0])], 0.02)
    res = PathIkSolver(robot).solve(path, q0)
    assert res.success, res.message
    assert len(res.positions) == path.size and res.fraction == 1.0
    pos, rot = pin_deviation(robot, res.positions, path)
    assert pos < 1e-5 and rot < 1e-4
    assert res.deviations.position == pytest.approx(pos, rel=1e-6, abs=1e-12)
    # midpoints between samples, again with pinocchio
    mids = 0.5 * (res.positions[1:] + res.positions[:-1])
    mid_err = max(np.linalg.norm(robot.fk(q).translation - p) for q, p in zip(mids, path.mid_positions))
    assert mid_err < 1e-5
    assert np.abs(np.diff(res.positions, axis=0)).max() < 0.02       # no jumps: < 20 mrad per mm


def test_beyond_reach_fails_with_the_solved_prefix(panda):
    q0 = panda.home()
    T0 = panda.fk(q0)
    path = build_path(T0, [offset(T0, [0.8, 0, 0])])
    res = PathIkSolver(panda).solve(path, q0)
    assert not res.success and res.status in (PathStatus.PATH_DEVIATION, PathStatus.SINGULARITY)
    k = res.failed_sample
    assert len(res.positions) == k and 0 < res.fraction < 1
    assert res.arc_length == pytest.approx(path.arc_length[k - 1])
    np.testing.assert_allclose(res.failure_pose.translation, path.positions[k])
    # the prefix is within tolerance (checked with pinocchio), the failure is a real one
    pos, _ = pin_deviation(panda, res.positions, path)
    assert pos <= 1e-4
    assert np.linalg.norm(panda.fk(res.positions[-1]).translation - path.positions[k]) > 5e-4
    assert f"dense sample {k}" in res.message


def test_joint_limit_names_the_joint(panda, ur5):
    q0 = panda.home()
    T0 = panda.fk(q0)
    # pulling the tool back toward the base drives panda_joint2 into its lower limit (-1.7628 rad)
    res = PathIkSolver(panda).solve(build_path(T0, [offset(T0, [-0.5, 0, 0])]), q0)
    assert res.status == PathStatus.JOINT_LIMIT, res.message
    assert res.failed_joint == "panda_joint2" and "panda_joint2" in res.message
    assert res.joint_limit == pytest.approx(panda.limits.lower[1] + 0.01)
    assert np.all(res.positions[:, 1] >= panda.limits.lower[1] + 0.01 - 1e-12)
    # UR5 has no redundancy: spinning the tool 8 rad about its axis ends at wrist_3_joint's 2 pi limit
    q0 = ur5.home()
    T0 = ur5.fk(q0)
    spins = [offset(T0, [0, 0, 0], T0.rotation @ pin.rpy.rpyToMatrix(0, 0, a)) for a in (2.0, 4.0, 6.0, 8.0)]
    res = PathIkSolver(ur5).solve(build_path(T0, spins), q0)
    assert res.status == PathStatus.JOINT_LIMIT and res.failed_joint == "wrist_3_joint", res.message
    assert res.joint_limit == pytest.approx(2 * np.pi - 0.01)


def test_position_only_and_free_tool_z_masks(panda):
    q0 = panda.home()
    T0 = panda.fk(q0)
    target_R = T0.rotation @ pin.rpy.rpyToMatrix(0, 0, 1.0)
    path = build_path(T0, [offset(T0, [0.1, 0.05, 0], target_R)])
    solver = PathIkSolver(panda)
    res = solver.solve(path, q0, axis_mask=np.array([True, True, True, False, False, False]))
    assert res.success, res.message
    end = panda.fk(res.positions[-1])
    assert np.linalg.norm(end.translation - path.positions[-1]) < 1e-5
    # free rotation about tool z: the tool z axis still follows the target exactly
    res = solver.solve(path, q0, axis_mask=np.array([True] * 5 + [False]), axis_frame="tool")
    assert res.success, res.message
    end = panda.fk(res.positions[-1])
    np.testing.assert_allclose(end.rotation[:, 2], target_R[:, 2], atol=1e-4)
    assert np.linalg.norm(end.translation - path.positions[-1]) < 1e-5


def test_checks_catch_a_jump_and_a_midpoint_detour(panda):
    """Control test: a solution with a joint jump or a joint-space detour between samples must be caught."""
    q0 = panda.home()
    T0 = panda.fk(q0)
    path = build_path(T0, [offset(T0, [0.02, 0, 0])])
    cfg = PathConfig()
    res = PathIkSolver(panda, cfg).solve(path, q0)
    Q = res.positions.copy()
    fk = ChainFk(panda)
    ok, _ = check_block(fk, path, Q, 1, len(Q), AxisSelection(np.arange(6), True), cfg, Deviations())
    assert ok.index == -1
    jumped = Q.copy()
    jumped[10:, 0] += 0.2
    bad, _ = check_block(fk, path, jumped, 1, len(Q), AxisSelection(np.arange(6), True), cfg, Deviations())
    assert bad.index == 10 and bad.status == PathStatus.JOINT_JUMP
    # elbow-flip style detour: samples fine, but the joint-space midpoint leaves the path
    detour = Q.copy()
    detour[5] = Q[5] + np.array([0, 0, 0, 0, 0, 0, 0])
    detour[5, 4] += 0.04           # wrist moves away and back within one sample
    detour[5, 6] -= 0.04
    bad, _ = check_block(fk, path, detour, 1, len(Q), AxisSelection(np.arange(6), True), cfg, Deviations())
    assert bad.index == 5 and bad.status == PathStatus.PATH_DEVIATION


def test_start_outside_limits_is_reported(panda):
    q0 = panda.home()
    q0[3] = panda.limits.upper[3] + 0.1
    T0 = panda.fk(q0)
    res = PathIkSolver(panda).solve(build_path(T0, [offset(T0, [0.01, 0, 0])]), q0)
    assert res.status == PathStatus.JOINT_LIMIT and res.failed_joint == "panda_joint4"
    assert relative_angles(res.failure_pose.rotation[None], T0.rotation[None])[0] < 1e-12


@pytest.mark.parametrize("name, tip, datasheet", [("panda", "panda_link8", 0.855), ("ur5", "wrist_3_link", 0.850)])
def test_reach_is_the_datasheet_reach(name, tip, datasheet):
    """Issue 24 item 6: the reach is the largest distance of the flange from the shoulder, as datasheets give it
    (Panda 855 mm; UR quotes 850 mm without its wrist offsets, so within 10 %), not a sum of link offsets (1.42 m),
    and Pinocchio FK of random configurations never exceeds it by more than the sampling's 1 %."""
    robot = RobotModel.from_name(name, tip_frame=tip)
    reach = arm_reach(robot, robot.tip_frame_id)
    assert datasheet <= reach.reach <= 1.1 * datasheet, reach
    rng = np.random.default_rng(7)
    farthest = max(float(reach.distance(robot.fk(robot.random_positions(rng)).translation)[0]) for _ in range(500))
    assert 0.8 * reach.reach < farthest <= 1.01 * reach.reach
    assert arm_reach(robot, robot.tip_frame_id) is reach                                     # sampled once


def test_absurdly_far_waypoints_are_refused_before_densifying(panda):
    """Issue 24 item 6: a waypoint 10 m away (10.6 reaches of the Panda's tcp) is refused naming units; one at
    2.9 reaches is planned as far as the arm can follow."""
    import tracemalloc

    planner = MotionPlanner(panda)
    q0 = panda.home()
    T0 = panda.fk(q0)
    reach = planner.reach()
    near = offset(T0, [0.05, 0, 0])
    for far, shown in ((10.0, "10"), (1e5, "1e+05"), (1e300, "1e+300")):
        tracemalloc.start()
        try:
            with pytest.raises(PathInputError) as err:
                far_away = pin.SE3(T0.rotation, reach.shoulder + np.array([far, 0.0, 0.0]))
                planner.plan(waypoint_program([near, far_away], 0.0), q0)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert err.value.waypoint == 1
        assert str(err.value).startswith(f"waypoint 1 is {shown} m from the arm's shoulder, ")
        assert str(err.value).endswith(f"times its reach of {reach.reach:.3f} m (refused beyond 3): millimetres "
                                       "given as metres? (or the wrong frame_id)")
        assert peak < 20e6                                    # refused before any dense allocation
    inside = pin.SE3(T0.rotation, reach.shoulder + np.array([0.99 * ABSURD_REACH_FACTOR * reach.reach, 0.0, 0.0]))
    assert not planner.plan(waypoint_program([inside], 0.0), q0, time_parameterize=False).path_ik.success


def test_a_line_out_of_reach_is_planned_as_far_as_the_arm_can_follow(panda):
    """The issue's case: 1.5 m outward from the Panda's tool. The solved part ends where the tool leaves the path
    tolerance; FK of its last sample is on the line, and the arm is close to a singularity there (keeping the
    tool's orientation, the 6-D Jacobian's smallest singular value is 10 times below its value at home)."""
    planner = MotionPlanner(panda)
    q0 = panda.home()
    T0 = panda.fk(q0)
    outward = T0.translation * np.array([1.0, 1.0, 0.0])
    outward /= np.linalg.norm(outward)
    plan = planner.plan(waypoint_program([pin.SE3(T0.rotation, T0.translation + 1.5 * outward)], 0.0), q0)
    ik = plan.path_ik
    assert not ik.success and 0.1 < ik.fraction < 0.6, (ik.fraction, ik.message)
    # issue 24 item 7: the reason names the singularity and how far the path got, not only the tolerance
    assert ik.status == PathStatus.SINGULARITY, ik.message
    assert re.search(r"at dense sample \d+ of 1501 \(\d+\.\d mm of 1500\.0 mm, [\d.]+ % of the path\): the arm "
                     r"cannot follow further: it is near a singularity .* fell to 0\.0\d+ from 0\.221 at the start; "
                     r"the tool is 0\.\d+ m from the arm's shoulder, its reach 0\.947 m", ik.message), ik.message
    reached = panda.fk(ik.positions[-1]).translation - T0.translation
    np.testing.assert_allclose(reached, ik.arc_length * outward, atol=2e-4)          # on the line, as far as solved
    sigma = [np.linalg.svd(panda.jacobian(q), compute_uv=False)[-1] for q in (q0, ik.positions[-1])]
    assert sigma[1] < 0.1 * sigma[0], sigma
    prefix = plan.trajectory                             # the solved part: the timed prefix (no approach)
    assert prefix is not None and prefix.duration > 0.0
    np.testing.assert_allclose(prefix.positions[-1], ik.positions[-1], atol=1e-9)
    assert np.abs(prefix.velocities[-1]).max() < 1e-12                                 # ends at rest: executable


def test_dense_sample_budget_is_enforced_by_the_planner(panda):
    planner = MotionPlanner(panda, PathConfig(sample_step=1e-7))
    q0 = panda.home()
    with pytest.raises(PathInputError, match=r"needs 3e\+06 dense samples .* budget of 2000000; waypoint 0"):
        planner.plan(waypoint_program([offset(panda.fk(q0), [0.3, 0, 0])], 0.0), q0)
