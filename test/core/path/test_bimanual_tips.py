"""The path library's pieces for several tips (issue 26): per-tip chains on a tree, the stacked DLS step, and
synchronised dense paths (per tip, and a carried object's).

Evidence: Pinocchio's FK and Jacobians of the whole tree (`RobotModel.fk` / `jacobian`), the pseudo-inverse from
numpy, and the geometry measured sample by sample.
"""
import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.path.tips_chain import TipFk, TipsSpeeds, tip_chain
from robokin_ros.core.path.deviation import pose_deviations
from robokin_ros.core.path.geometry import build_path
from robokin_ros.core.path.tips_geometry import TipMove, blended_per_tip, carried_paths, per_tip_moves
from robokin_ros.core.path.tips_solver import ALL_AXES, TipsIkSolver, stacked_dls
from robokin_ros.core.path.toppra_constraints import tool_speeds
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.tips.held_object import take_grasp

LEFT, RIGHT = "left_panda_hand_tcp", "right_panda_hand_tcp"


@pytest.fixture(scope="module")
def torso():
    """Two Pandas on a shared torso joint: the joint both tips' chains contain."""
    return RobotModel.load("dual_panda_torso")


def random_positions(robot, rng):
    return rng.uniform(robot.limits.lower, robot.limits.upper)


def test_tip_chains_agree_with_the_tree_model(torso):
    """Each tip's chain (its columns of the positions vector) gives Pinocchio's pose and Jacobian of the tree, the
    other columns zero, to 1e-12."""
    rng = np.random.default_rng(3)
    for tip in torso.tip_frames:
        chain = tip_chain(torso, tip)
        assert 0 in chain.columns.tolist()                   # the torso joint moves both tips
        fk = TipFk(chain)
        for _ in range(20):
            q = random_positions(torso, rng)
            R, p, J = fk.pose_jacobian(q, torso.n)
            expected = torso.fk(q, tip)
            assert np.abs(R - expected.rotation).max() < 1e-12 and np.abs(p - expected.translation).max() < 1e-12
            assert np.abs(J - torso.jacobian(q, tip)).max() < 1e-12
            Rb, pb = fk(q[None])
            assert np.abs(Rb[0] - R).max() < 1e-12 and np.abs(pb[0] - p).max() < 1e-12


def test_the_tool_speed_of_several_tips_is_the_fastest_tip(torso):
    """`tool_speeds` of `TipsSpeeds`: per sample the largest |J_lin qd| and |J_ang qd| of any tip."""
    rng = np.random.default_rng(4)
    speeds = TipsSpeeds(tuple(tip_chain(torso, tip) for tip in torso.tip_frames))
    Q = np.array([random_positions(torso, rng) for _ in range(10)])
    Qd = rng.normal(size=Q.shape)
    got = tool_speeds(speeds, Q, Qd)
    for k in range(len(Q)):
        twists = [torso.jacobian(Q[k], tip) @ Qd[k] for tip in torso.tip_frames]
        expected = [max(np.linalg.norm(t[:3]) for t in twists), max(np.linalg.norm(t[3:]) for t in twists)]
        assert np.abs(got[k] - expected).max() < 1e-12


def test_the_stacked_step_is_the_minimum_norm_least_squares_step():
    """Undamped and unbounded, with redundant rows (rank 10 of 18 rows, 14 columns): numpy's pseudo-inverse; with a
    secondary velocity z, the task part is unchanged and z enters only through the null space."""
    rng = np.random.default_rng(5)
    base = rng.normal(size=(10, 14))
    A = np.vstack([base, rng.normal(size=(8, 10)) @ base])              # (18, 14) rank 10
    b = A @ rng.normal(size=14)                                          # consistent
    free = np.full(14, np.inf)
    dq = stacked_dls(A, b, np.zeros(14), -free, free, 0.0, 0.02)
    assert np.abs(dq - np.linalg.pinv(A) @ b).max() < 1e-10
    z = rng.normal(size=14)
    with_z = stacked_dls(A, b, z, -free, free, 0.0, 0.02)
    projector = np.eye(14) - np.linalg.pinv(A) @ A
    assert np.abs(with_z - (dq + projector @ z)).max() < 1e-10


def test_a_bounded_joint_is_fixed_and_the_rest_solved_again():
    rng = np.random.default_rng(6)
    A, b = rng.normal(size=(12, 14)), rng.normal(size=12)
    free = np.full(14, np.inf)
    unbounded = stacked_dls(A, b, np.zeros(14), -free, free, 0.0, 0.02)
    j = int(np.argmax(np.abs(unbounded)))
    hi = free.copy()
    lo = -free.copy()
    limit = 0.5 * abs(unbounded[j])
    lo[j], hi[j] = -limit, limit
    dq = stacked_dls(A, b, np.zeros(14), lo, hi, 0.0, 0.02)
    assert abs(dq[j]) == pytest.approx(limit)
    others = np.delete(np.arange(14), j)
    rest = np.linalg.pinv(A[:, others]) @ (b - A[:, j] * dq[j])
    assert np.abs(dq[others] - rest).max() < 1e-10


def test_per_tip_moves_share_one_grid_set_by_the_longer_path():
    """The right tip travels 15 cm while the left turns 0.1 rad and moves 3 cm: 150 intervals (the right's 1 mm),
    both tips within 1 mm / 1 mrad per sample and midpoint, both at their targets at the same (last) sample; a second
    move for the left alone: the right holds, and the first move's end is a stop."""
    start_l = pin.SE3(np.eye(3), np.array([0.5, 0.15, 0.4]))
    start_r = pin.SE3(np.eye(3), np.array([0.5, -0.15, 0.4]))
    left1 = pin.SE3(pin.exp3(np.array([0.0, 0.0, 0.1])), start_l.translation + [0.03, 0.0, 0.0])
    right1 = pin.SE3(np.eye(3), start_r.translation + [0.0, -0.15, 0.0])
    left2 = pin.SE3(left1.rotation, left1.translation + [0.0, 0.0, 0.02])
    path = per_tip_moves((LEFT, RIGHT), (start_l, start_r),
                         [{LEFT: TipMove(left1), RIGHT: TipMove(right1)}, {LEFT: TipMove(left2)}])
    assert path.moving == (True, True)
    assert path.lead.stops == (150,)
    assert path.size == 1 + 150 + 20          # the left's 0.1 rad needed only 100 of 1 mrad; then its 2 cm alone
    for dense, target in zip(path.paths, (left1, right1)):
        assert np.linalg.norm(dense.positions[150] - target.translation) < 1e-12
        assert np.abs(dense.rotations[150] - target.rotation).max() < 1e-12
        half = np.r_[np.linalg.norm(dense.mid_positions - dense.positions[:-1], axis=1),
                     np.linalg.norm(dense.positions[1:] - dense.mid_positions, axis=1)]
        assert half.max() <= 0.5e-3 + 1e-12
        turns = [np.linalg.norm(pin.log3(a.T @ b)) for a, b in zip(dense.rotations[:-1], dense.rotations[1:])]
        assert max(turns) <= 1e-3 + 1e-12
    held = path.paths[1].positions[150:]
    assert np.abs(held - right1.translation).max() == 0.0
    assert np.linalg.norm(path.paths[0].positions[-1] - left2.translation) < 1e-12


def test_a_carried_path_keeps_the_grasp_and_the_spacing_of_every_tip():
    """The object turns 0.5 rad about z while moving 5 cm; the hands are 0.15 m from its origin, so they travel
    farther than it: every hand's samples stay within 1 mm, and the hands' relative pose is the grasp's exactly."""
    facing = pin.exp3(np.array([0.0, 0.0, np.pi]))
    tips = [pin.SE3(np.eye(3), np.array([0.5, 0.15, 0.4])), pin.SE3(facing, np.array([0.5, -0.15, 0.4]))]
    base_T_object, grasp = take_grasp(tips)
    goal = pin.SE3(pin.exp3(np.array([0.0, 0.0, 0.5])), base_T_object.translation + [0.05, 0.0, 0.0])
    path = carried_paths((LEFT, RIGHT), grasp, base_T_object, [goal], 0.0)
    held = tips[0].actInv(tips[1])
    for dense in path.paths:
        half = np.r_[np.linalg.norm(dense.mid_positions - dense.positions[:-1], axis=1),
                     np.linalg.norm(dense.positions[1:] - dense.mid_positions, axis=1)]
        assert half.max() <= 1e-3
    a, b = path.paths
    for k in range(0, path.size, 37):
        relative = pin.SE3(a.rotations[k], a.positions[k]).actInv(pin.SE3(b.rotations[k], b.positions[k]))
        assert np.abs(relative.homogeneous - held.homogeneous).max() < 1e-12
    end = grasp.base_T_tips(goal)
    assert np.linalg.norm(a.positions[-1] - end[0].translation) < 1e-12
    assert path.relative is not None and np.abs(path.relative.homogeneous - held.homogeneous).max() < 1e-12


def test_the_solver_refuses_a_path_of_other_tips(torso):
    solver = TipsIkSolver(RobotModel.load("dual_panda"))
    start = pin.SE3(np.eye(3), np.zeros(3))
    path = per_tip_moves(("a", "b"), (start, start), [{"a": TipMove(pin.SE3(np.eye(3), np.array([0.01, 0, 0])))}])
    with pytest.raises(Exception, match="are not the robot's"):
        solver.solve(path, solver.robot.home())


def test_blended_moves_of_two_tips_share_their_stretches():
    """Two tips through two corners with 20 mm zones: every resampled sample and midpoint lies on the tip's own
    blended path (to 1e-9 m), both start each stretch toward a target at the same sample, and samples stay within
    1 mm."""
    starts = (pin.SE3(np.eye(3), np.array([0.5, 0.15, 0.4])), pin.SE3(np.eye(3), np.array([0.5, -0.15, 0.4])))
    offsets = ([[0, 0, 0.1], [0.1, 0, 0.1], [0.1, 0, 0]], [[0, -0.05, 0.05], [0.05, -0.05, 0.05], [0.05, 0, 0]])
    targets = [[pin.SE3(np.eye(3), s.translation + d) for d in o] for s, o in zip(starts, offsets)]
    moves = [{LEFT: TipMove(targets[0][j]), RIGHT: TipMove(targets[1][j])} for j in range(3)]
    path = blended_per_tip((LEFT, RIGHT), starts, moves, [0.02, 0.02, 0.0])
    assert path is not None and path.moving == (True, True)
    for i, dense in enumerate(path.paths):
        own = build_path(starts[i], targets[i], [0.02, 0.02, 0.0], clamp_blend=True)
        for R, p in ((dense.rotations, dense.positions), (dense.mid_rotations, dense.mid_positions)):
            assert pose_deviations(own, R, p, ALL_AXES, 1.0)[0].max() < 1e-9
        half = np.r_[np.linalg.norm(dense.mid_positions - dense.positions[:-1], axis=1),
                     np.linalg.norm(dense.positions[1:] - dense.mid_positions, axis=1)]
        assert half.max() <= 0.5e-3 + 1e-9
        assert np.linalg.norm(dense.positions[-1] - targets[i][-1].translation) < 1e-12
    assert np.array_equal(path.paths[0].segment, path.paths[1].segment)
    # a tip that moves in one move only: no common stretches, the caller stops at every target
    assert blended_per_tip((LEFT, RIGHT), starts, [moves[0], {LEFT: TipMove(targets[0][1])}], [0.02, 0.0]) is None
