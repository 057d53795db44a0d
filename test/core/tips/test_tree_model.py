"""The robot model with several tips, checked against the single-chain model of each arm and finite differences.

Evidence: each tip of a tree model (`dual_panda`, `dual_panda_torso`, `baxter`) must give the pose and Jacobian
columns that a separately built single-chain model of that arm gives (to 1e-12), zero columns for the other arm's
joints, and Jacobians that match central differences of its own forward kinematics.
"""
import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.embedded import embedded_robot
from robokin_ros.core.errors import ModelError, UnknownFrameError
from robokin_ros.core.robot import RobotModel

TIPS = ("left_panda_hand_tcp", "right_panda_hand_tcp")
MOUNT_Y = {"left_panda_hand_tcp": 0.3, "right_panda_hand_tcp": -0.3}
PREFIX = {"left_panda_hand_tcp": "left_", "right_panda_hand_tcp": "right_"}
SEEDS = range(5)
H = 1e-6    # [rad] central-difference step: truncation ~h^2 * |d3 fk| ~1e-12, rounding ~1e-16 / h ~1e-10


@pytest.fixture(scope="module")
def panda():
    return RobotModel.load("panda")


@pytest.fixture(scope="module")
def dual():
    return RobotModel.load("dual_panda")


@pytest.fixture(scope="module")
def torso():
    return RobotModel.load("dual_panda_torso")


@pytest.fixture(scope="module")
def baxter():
    return RobotModel.load("baxter")


def _mount(y: float, torso_angle: float = 0.0) -> pin.SE3:
    """world_T_panda_link0 of the arm standing at lateral offset `y`, on a torso turned by `torso_angle`."""
    turn = pin.SE3(pin.utils.rotate("z", torso_angle), np.zeros(3))
    return turn * pin.SE3(np.eye(3), np.array([0.0, y, 0.0]))


def _assert_pose_equal(a: pin.SE3, b: pin.SE3, tol: float = 1e-12) -> None:
    assert np.abs(a.translation - b.translation).max() <= tol
    assert np.abs(a.rotation - b.rotation).max() <= tol


def _other_columns(robot: RobotModel, tip_index: int) -> np.ndarray:
    return np.setdiff1d(np.arange(robot.n), robot.tip_joint_indices[tip_index])


# ---- joints and tips ---------------------------------------------------------------------------------------
def test_dual_panda_joints_are_pinocchio_order_and_each_tip_owns_its_arm(dual):
    assert dual.n == 14
    assert dual.joint_names == tuple(f"{side}panda_joint{i}" for side in ("left_", "right_") for i in range(1, 8))
    assert dual.joint_names == tuple(dual.model.names[1:])          # the positions vector is Pinocchio's order
    assert dual.tip_frames == TIPS and dual.tip_frame == TIPS[0]
    assert dual.tip_frame_ids == tuple(dual.model.getFrameId(t) for t in TIPS)
    assert dual.tip_frame_id == dual.tip_frame_ids[0]
    assert dual.base_frame == "world"
    np.testing.assert_array_equal(dual.tip_joint_indices[0], np.arange(7))
    np.testing.assert_array_equal(dual.tip_joint_indices[1], np.arange(7, 14))


def test_the_torso_joint_is_first_and_shared_by_both_tips(torso):
    assert torso.n == 15
    assert torso.joint_names[0] == "torso_joint"
    assert torso.joint_names == tuple(torso.model.names[1:])
    left, right = (set(indices.tolist()) for indices in torso.tip_joint_indices)
    assert left & right == {0}                                        # only the torso is shared
    assert [torso.joint_names[i] for i in torso.tip_joint_indices[0]] == [
        "torso_joint", *(f"left_panda_joint{i}" for i in range(1, 8))]
    assert [torso.joint_names[i] for i in torso.tip_joint_indices[1]] == [
        "torso_joint", *(f"right_panda_joint{i}" for i in range(1, 8))]


def test_baxter_tips_and_chains(baxter):
    assert baxter.tip_frames == ("left_gripper", "right_gripper")
    assert baxter.n == 14
    arms = ["s0", "s1", "e0", "e1", "w0", "w1", "w2"]
    for tip, side in zip(range(2), ("left_", "right_")):
        assert [baxter.joint_names[i] for i in baxter.tip_joint_indices[tip]] == [side + j for j in arms]
    assert "head_pan" in baxter.locked_joint_names


def test_single_tip_models_are_unchanged(panda):
    # A regression check: one tip is still a chain with the tip's attributes as before issue 26
    assert panda.joint_names == tuple(f"panda_joint{i}" for i in range(1, 8))
    assert panda.tip_frame == "panda_hand_tcp" and panda.base_frame == "panda_link0"
    assert panda.tip_frames == ("panda_hand_tcp",)
    assert panda.tip_frame_ids == (panda.tip_frame_id,)
    np.testing.assert_array_equal(panda.tip_joint_indices[0], np.arange(7))
    np.testing.assert_array_equal(panda.home(), [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
    ur = RobotModel.load("ur5e")
    assert ur.tip_frames == ("tool0",) and ur.n == 6


def test_a_tool_offset_on_one_tip_is_the_tip(panda):
    tooled = RobotModel.load("panda", tool_offset=pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.05])))
    assert tooled.tip_frame == "tool" and tooled.tip_frames == ("tool",)
    assert tooled.tip_frame_ids == (tooled.tip_frame_id,)


def test_link_frames_per_tip(torso, panda):
    assert torso.chain_link_frames()[-2:] == TIPS                        # every tip, after the moved links
    for tip_index, tip in enumerate(TIPS):
        prefix = PREFIX[tip]
        assert torso.tip_link_frames(tip_index) == ("torso", *(f"{prefix}panda_link{i}" for i in range(1, 8)), tip)
    assert panda.tip_link_frames() == panda.chain_link_frames() == (
        *(f"panda_link{i}" for i in range(1, 8)), "panda_hand_tcp")


def test_some_arms_of_a_tree_keep_their_home(panda, torso):
    right = RobotModel.load("dual_panda", tip_frame=TIPS[1])
    np.testing.assert_array_equal(right.home(), panda.home())
    left_on_torso = RobotModel.load("dual_panda_torso", tip_frame=TIPS[0])
    np.testing.assert_array_equal(left_on_torso.home(), torso.home()[torso.tip_joint_indices[0]])
    gripper = RobotModel.load("baxter", tip_frame="right_gripper")
    np.testing.assert_array_equal(gripper.home(), [0.0, -0.55, 0.0, 0.75, 0.0, 1.26, 0.0])
    # a single arm's chain cut short keeps mid-range, as before
    short = RobotModel.load("panda", tip_frame="panda_link4")
    np.testing.assert_array_equal(short.home(), short.mid_range())


# ---- against the single-chain model of each arm --------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_dual_panda_tips_agree_with_the_single_panda(dual, panda, seed):
    q = dual.random_positions(np.random.default_rng(seed))
    for tip_index, tip in enumerate(TIPS):
        cols = dual.tip_joint_indices[tip_index]
        q_arm = q[cols]
        _assert_pose_equal(dual.fk(q, tip), _mount(MOUNT_Y[tip]) * panda.fk(q_arm))
        J = dual.jacobian(q, tip)
        # the mount does not rotate: the world-aligned Jacobian at the tip is the Panda's own
        assert np.abs(J[:, cols] - panda.jacobian(q_arm)).max() < 1e-12
        assert np.all(J[:, _other_columns(dual, tip_index)] == 0.0)
        J_local = dual.jacobian(q, tip, reference="local")
        assert np.abs(J_local[:, cols] - panda.jacobian(q_arm, reference="local")).max() < 1e-12


@pytest.mark.parametrize("seed", SEEDS)
def test_dual_panda_torso_tips_agree_with_the_panda_and_with_a_torso_chain(torso, panda, seed):
    xml = embedded_robot("dual_panda_torso").xml
    q = torso.random_positions(np.random.default_rng(100 + seed))
    for tip_index, tip in enumerate(TIPS):
        cols = torso.tip_joint_indices[tip_index]
        chain = RobotModel.from_urdf_string(xml, "world", tip)       # world -> torso -> this arm only
        assert chain.joint_names == tuple(torso.joint_names[i] for i in cols)
        pose, J = torso.fk(q, tip), torso.jacobian(q, tip)
        _assert_pose_equal(pose, chain.fk(q[cols]))
        assert np.abs(J[:, cols] - chain.jacobian(q[cols])).max() < 1e-12
        assert np.all(J[:, _other_columns(torso, tip_index)] == 0.0)
        # and against the plain Panda standing on the turned torso
        arm_q = q[cols[1:]]
        _assert_pose_equal(pose, _mount(MOUNT_Y[tip], q[0]) * panda.fk(arm_q))
        R = pin.utils.rotate("z", q[0])
        J_arm = panda.jacobian(arm_q)
        rotated = np.vstack([R @ J_arm[:3], R @ J_arm[3:]])
        assert np.abs(J[:, cols[1:]] - rotated).max() < 1e-12
        # the torso column: a rotation about world z through the origin, seen at the tip
        torso_column = np.concatenate([np.cross([0.0, 0.0, 1.0], pose.translation), [0.0, 0.0, 1.0]])
        assert np.abs(J[:, 0] - torso_column).max() < 1e-12


@pytest.mark.parametrize("seed", SEEDS)
def test_baxter_tips_agree_with_single_tip_models(baxter, seed):
    q = baxter.random_positions(np.random.default_rng(200 + seed))
    for tip_index, tip in enumerate(baxter.tip_frames):
        single = RobotModel.load("baxter", tip_frame=tip)
        cols = baxter.tip_joint_indices[tip_index]
        assert single.joint_names == tuple(baxter.joint_names[i] for i in cols)
        assert single.base_frame == baxter.base_frame
        _assert_pose_equal(baxter.fk(q, tip), single.fk(q[cols]))
        J = baxter.jacobian(q, tip)
        assert np.abs(J[:, cols] - single.jacobian(q[cols])).max() < 1e-12
        assert np.all(J[:, _other_columns(baxter, tip_index)] == 0.0)


def test_the_default_tip_is_the_first_tip(dual):
    q = dual.random_positions(np.random.default_rng(7))
    _assert_pose_equal(dual.fk(q), dual.fk(q, TIPS[0]), 0.0)
    np.testing.assert_array_equal(dual.jacobian(q), dual.jacobian(q, TIPS[0]))


# ---- against finite differences -----------------------------------------------------------------------------
def _finite_difference_jacobian(robot: RobotModel, q: np.ndarray, tip: str) -> np.ndarray:
    """(6, n) [linear; angular] of `tip` in base axes at the tip's origin, by central differences."""
    J = np.empty((6, robot.n))
    for i in range(robot.n):
        step = np.zeros(robot.n)
        step[i] = H
        plus, minus = robot.fk(q + step, tip), robot.fk(q - step, tip)
        J[:3, i] = (plus.translation - minus.translation) / (2 * H)
        J[3:, i] = pin.log3(plus.rotation @ minus.rotation.T) / (2 * H)
    return J


@pytest.mark.parametrize("name", ["dual_panda", "dual_panda_torso", "baxter"])
@pytest.mark.parametrize("seed", range(3))
def test_tip_jacobians_match_finite_differences(name, seed, dual, torso, baxter):
    robot = {"dual_panda": dual, "dual_panda_torso": torso, "baxter": baxter}[name]
    # inside the limits by more than the step, so every difference is taken on the model's own kinematics
    q = robot.random_positions(np.random.default_rng(300 + seed), margin=0.01)
    for tip_index, tip in enumerate(robot.tip_frames):
        J = robot.jacobian(q, tip)
        numeric = _finite_difference_jacobian(robot, q, tip)
        assert np.abs(J - numeric).max() < 1e-9      # measured: 2.6e-10 at most
        assert np.abs(J[:, robot.tip_joint_indices[tip_index]]).max() > 0.1     # not two zeros agreeing


# ---- bad input ----------------------------------------------------------------------------------------------
def test_an_unknown_tip_lists_the_frames():
    with pytest.raises(UnknownFrameError) as err:
        RobotModel.load("dual_panda", tip_frame=["left_panda_hand_tcp", "middle_hand"])
    message = str(err.value)
    assert "middle_hand" in message and "right_panda_hand_tcp" in message


def test_the_same_tip_twice_is_refused():
    with pytest.raises(ModelError, match="more than once.*left_panda_hand_tcp"):
        RobotModel.load("dual_panda", tip_frame=["left_panda_hand_tcp", "left_panda_hand_tcp"])


def test_a_tool_offset_with_several_tips_is_refused():
    with pytest.raises(ModelError, match="tool offset needs one tip"):
        RobotModel.load("dual_panda", tool_offset=np.eye(4))


def test_an_empty_tip_list_is_refused():
    xml = embedded_robot("dual_panda").xml
    with pytest.raises(ModelError, match="no tip frame"):
        RobotModel.from_urdf_string(xml, "world", [])


def test_a_joint_of_either_arm_cannot_be_locked():
    with pytest.raises(ModelError, match="right_panda_joint3' is in the world -> left_panda_hand_tcp, "
                                         "right_panda_hand_tcp chain"):
        RobotModel.load("dual_panda", locked_joints={"right_panda_joint3": 0.0})


def test_from_source_refuses_a_tip_frame_that_is_not_the_first_tip():
    with pytest.raises(ModelError, match="not the first of tip_frames"):
        RobotModel.from_source("dual_panda", tip_frame="right_panda_hand_tcp", tip_frames=list(TIPS))


def test_from_source_with_tip_frames():
    robot = RobotModel.from_source("dual_panda", tip_frame=TIPS[0], tip_frames=list(TIPS))
    assert robot.tip_frames == TIPS
    reversed_tips = RobotModel.from_source("dual_panda", tip_frames=TIPS[::-1])
    assert reversed_tips.tip_frames == TIPS[::-1] and reversed_tips.tip_frame == TIPS[1]
    np.testing.assert_array_equal(reversed_tips.tip_joint_indices[0], np.arange(7, 14))
    one = RobotModel.from_source("dual_panda", tip_frames=[TIPS[1]])
    assert one.n == 7 and one.joint_names[0] == "right_panda_joint1"


def test_the_tip_frames_parameter_holds_names():
    from robokin_ros.core.errors import ConfigError
    from robokin_ros.core.sim.config import SimRobotConfig
    assert SimRobotConfig(tip_frames=list(TIPS)).tip_frames == TIPS            # stored as a tuple (frozen)
    for bad in ("left_panda_hand_tcp", (1.0, 2.0)):
        with pytest.raises(ConfigError, match="tip_frames=.* must be a list of strings"):
            SimRobotConfig(tip_frames=bad)
