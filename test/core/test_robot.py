"""RobotModel against independent evidence: finite differences, J*dq identities, DH tables, textbook values."""
import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robokin_ros.core.errors import InvalidInputError, ModelError, UnknownFrameError, UnknownJointError
from robokin_ros.core.robot import RobotModel

TWO_LINK_URDF = """<?xml version="1.0"?>
<robot name="two_link">
  <link name="base"/>
  <link name="link1"><inertial><mass value="1"/><origin xyz="0.15 0 0"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="link2"><inertial><mass value="1"/><origin xyz="0.1 0 0"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tip"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="link1"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" velocity="2" effort="10"/></joint>
  <joint name="elbow" type="revolute"><parent link="link1"/><child link="link2"/>
    <origin xyz="0.3 0 0"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" velocity="2" effort="5"/></joint>
  <joint name="tip_joint" type="fixed"><parent link="link2"/><child link="tip"/><origin xyz="0.2 0 0"/></joint>
</robot>"""


def _local_fd_jacobian(robot, q, frame, h=1e-6):
    columns = []
    for i in range(robot.n):
        e = np.zeros(robot.n)
        e[i] = h
        T_plus, T_minus = robot.fk(q + e, frame), robot.fk(q - e, frame)
        columns.append(pin.log6(T_minus.actInv(T_plus)).vector / (2 * h))
    return np.column_stack(columns)


def test_two_link_textbook_tip_position():
    robot = RobotModel.from_urdf_string(TWO_LINK_URDF, "base", "tip")
    tip = robot.fk(np.radians([30.0, 45.0])).translation
    # x = L1 cos(t1) + L2 cos(t1 + t2), y = L1 sin(t1) + L2 sin(t1 + t2)
    assert tip[0] == pytest.approx(0.3115714, abs=1e-6)
    assert tip[1] == pytest.approx(0.3431852, abs=1e-6)


def test_two_link_jacobian_matches_closed_form():
    robot = RobotModel.from_urdf_string(TWO_LINK_URDF, "base", "tip")
    t1, t2 = 0.4, -1.1
    J = robot.jacobian([t1, t2])
    closed = np.array([[-0.3 * np.sin(t1) - 0.2 * np.sin(t1 + t2), -0.2 * np.sin(t1 + t2)],
                       [0.3 * np.cos(t1) + 0.2 * np.cos(t1 + t2), 0.2 * np.cos(t1 + t2)]])
    np.testing.assert_allclose(J[:2], closed, atol=1e-12)
    np.testing.assert_allclose(J[5], [1.0, 1.0], atol=1e-12)


def _franka_dh_flange(q):
    """Franka's published modified-DH table (Craig convention), flange = panda_link8."""
    a = [0, 0, 0, 0.0825, -0.0825, 0, 0.088, 0]
    d = [0.333, 0, 0.316, 0, 0.384, 0, 0, 0.107]
    alpha = [0, -np.pi / 2, np.pi / 2, np.pi / 2, -np.pi / 2, np.pi / 2, np.pi / 2, 0]
    theta = list(q) + [0.0]
    T = np.eye(4)
    for ai, di, al, th in zip(a, d, alpha, theta):
        ca, sa, ct, st_ = np.cos(al), np.sin(al), np.cos(th), np.sin(th)
        T = T @ np.array([[ct, -st_, 0, ai], [st_ * ca, ct * ca, -sa, -di * sa],
                          [st_ * sa, ct * sa, ca, di * ca], [0, 0, 0, 1]])
    return T


def test_panda_fk_matches_franka_dh_table(panda):
    rng = np.random.default_rng(7)
    for _ in range(20):
        q = panda.random_positions(rng)
        T = panda.fk(q, "panda_link8")
        np.testing.assert_allclose(T.homogeneous, _franka_dh_flange(q), atol=1e-9)


@pytest.mark.parametrize("name", ["panda", "ur5", "kinova"])
def test_local_jacobian_matches_central_differences(name):
    robot = RobotModel.from_name(name)
    q = robot.random_positions(np.random.default_rng(3), margin=0.1)
    np.testing.assert_allclose(robot.jacobian(q, reference="local"), _local_fd_jacobian(robot, q, None),
                               atol=1e-6)


def test_wrong_reference_is_caught_by_the_fd_check(panda):
    """Control: the finite-difference check must fail for a Jacobian in the wrong frame."""
    q = panda.home()
    wrong = panda.jacobian(q, reference="local_world_aligned")
    assert np.abs(wrong - _local_fd_jacobian(panda, q, None)).max() > 1e-2


@settings(max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), step=st.floats(1e-7, 1e-5))
def test_jacobians_predict_fk_change(panda, seed, step):
    rng = np.random.default_rng(seed)
    q = panda.random_positions(rng)
    dq = step * rng.standard_normal(panda.n)
    T0, T1 = panda.fk(q), panda.fk(q + dq)
    # local-world-aligned: frame-origin velocity and angular velocity, both in base axes
    dp, dw = T1.translation - T0.translation, pin.log3(T1.rotation @ T0.rotation.T)
    np.testing.assert_allclose(np.hstack([dp, dw]), panda.jacobian(q) @ dq, atol=60 * step**2 + 1e-12)
    # world (spatial): v = velocity of the point at the base origin = p_dot - w x p
    v_spatial = panda.jacobian(q, reference="world") @ dq
    np.testing.assert_allclose(v_spatial[:3], dp - np.cross(dw, T0.translation), atol=60 * step**2 + 1e-12)
    np.testing.assert_allclose(v_spatial[3:], dw, atol=60 * step**2 + 1e-12)


def test_jacobian_in_a_base_that_is_not_the_world():
    robot = RobotModel.from_name("kinova")        # its base link sits on a mounting block
    assert not robot.world_T_base.isIdentity(1e-9)
    q = robot.random_positions(np.random.default_rng(5))
    dq = 1e-6 * np.random.default_rng(6).standard_normal(robot.n)
    T0, T1 = robot.fk(q), robot.fk(q + dq)
    twist = np.hstack([T1.translation - T0.translation, pin.log3(T1.rotation @ T0.rotation.T)])
    np.testing.assert_allclose(robot.jacobian(q) @ dq, twist, atol=1e-10)


def test_continuous_joints_use_plain_angles():
    robot = RobotModel.from_name("kinova")
    assert robot.model.nq > robot.n                    # Pinocchio stores (cos, sin)
    assert np.isinf(robot.limits.lower[0]) and np.isinf(robot.limits.upper[0])
    q = robot.home()
    np.testing.assert_allclose(robot.fk(q).homogeneous, robot.fk(q + [2 * np.pi, 0, 0, 0, 0, 0]).homogeneous,
                               atol=1e-12)


def test_inertia_is_symmetric_positive_definite_and_matches_rnea(panda):
    q = panda.home()
    M = panda.inertia(q)
    np.testing.assert_allclose(M, M.T, atol=0)
    assert np.linalg.eigvalsh(M).min() > 0
    # tau = M a + b: differencing two RNEA calls isolates M a (independent of the CRBA algorithm)
    a = np.random.default_rng(1).standard_normal(panda.n)
    zero = np.zeros(panda.n)
    tau_a = pin.rnea(panda.model, panda.data, q, zero, a) - pin.rnea(panda.model, panda.data, q, zero, zero)
    np.testing.assert_allclose(M @ a, tau_a, atol=1e-10)


def test_limits_come_from_the_urdf(panda, ur5):
    assert panda.limits.upper[3] == pytest.approx(-0.0698)
    assert panda.limits.velocity[0] == pytest.approx(2.175)
    assert panda.limits.effort[0] == pytest.approx(87.0)
    assert ur5.limits.velocity[0] == pytest.approx(3.15)
    assert panda.locked_joint_names == ("panda_finger_joint1", "panda_finger_joint2")


def test_missing_effort_limits_are_nan_and_named():
    urdf = TWO_LINK_URDF.replace('effort="5"', 'effort="0"')
    robot = RobotModel.from_urdf_string(urdf, "base", "tip")
    assert robot.limits.missing_effort == ("elbow",)
    assert np.isnan(robot.limits.effort[1]) and robot.limits.effort[0] == 10


def test_tool_offset_moves_the_tip():
    offset = pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.1]))
    plain = RobotModel.from_name("ur5")
    tooled = RobotModel.from_name("ur5", tool_offset=offset, tool_frame="gripper_tcp")
    q = plain.home()
    np.testing.assert_allclose(tooled.fk(q).homogeneous, (plain.fk(q) * offset).homogeneous, atol=1e-12)
    assert tooled.tip_frame == "gripper_tcp"


def test_base_frame_subchain_and_locked_joint_value(panda):
    forearm = RobotModel.from_name("panda", base_frame="panda_link4", tip_frame="panda_link7",
                                   locked_joints={"panda_finger_joint1": 0.02})
    assert forearm.joint_names == ("panda_joint5", "panda_joint6", "panda_joint7")
    q_full = panda.home()
    expected = panda.fk(q_full, "panda_link4").actInv(panda.fk(q_full, "panda_link7"))
    np.testing.assert_allclose(forearm.fk(q_full[4:]).homogeneous, expected.homogeneous, atol=1e-12)


def test_unknown_names_list_the_valid_ones(panda):
    with pytest.raises(UnknownFrameError, match="panda_hand_tcp"):
        panda.fk(panda.home(), "gripper")
    with pytest.raises(UnknownFrameError, match="'nope'"):
        RobotModel.from_name("ur5", tip_frame="nope")
    with pytest.raises(UnknownJointError, match="panda_finger_joint1"):
        RobotModel.from_name("panda", locked_joints={"finger": 0.0})
    with pytest.raises(UnknownJointError, match="panda_joint1"):
        panda.joint_index("joint1")


def test_bad_positions_get_distinct_errors(panda):
    with pytest.raises(InvalidInputError, match="7 entries"):
        panda.fk(np.zeros(6))
    with pytest.raises(InvalidInputError, match="non-finite entries at indices \\[2\\]"):
        panda.jacobian([0, 0, np.nan, -1, 0, 1, 0])


@pytest.mark.parametrize("source, match", [
    ("<robot name='x'><link name='a'/><joint name='j' type='revolute'></joint></robot>", "cannot parse URDF"),
    ("<robot", "cannot parse URDF"),
    ("/nonexistent/robot.urdf", "not found"),
    ("not a robot", "not found"),
])
def test_malformed_urdf_is_a_model_error(source, match):
    with pytest.raises(ModelError, match=match):
        RobotModel.load(source, "a", "b")


def test_inverted_joint_limits_are_a_model_error():
    urdf = TWO_LINK_URDF.replace('lower="-3" upper="3" velocity="2" effort="5"',
                                 'lower="1" upper="-1" velocity="2" effort="5"')
    with pytest.raises(ModelError, match="'elbow' \\(lower 1 > upper -1\\)"):
        RobotModel.from_urdf_string(urdf, "base", "tip")


def test_embedded_names_and_errors():
    with pytest.raises(ModelError, match="known: \\[.*'panda'"):
        RobotModel.from_name("pandas")
    for name in ("panda", "ur3", "ur5", "ur10", "xarm7", "z1", "so101", "kinova"):
        robot = RobotModel.load(name)
        assert robot.n == len(robot.home())
        lo, hi = robot.limits.lower, robot.limits.upper
        assert np.all((robot.home() >= lo) & (robot.home() <= hi)), name


def test_one_frame_rule_for_every_input(panda):
    """`resolve_frame` is the rule twists, waypoints and targets share: "" and the base name are the base, a
    tf-style leading slash is dropped, and "world" is the URDF world (Pinocchio's "universe")."""
    base = panda.base_frame_id
    assert panda.resolve_frame("") == base
    assert panda.resolve_frame(panda.base_frame) == base == panda.resolve_frame("/" + panda.base_frame)
    assert panda.resolve_frame("world") == panda.frame_id("universe")
    assert panda.resolve_frame("/panda_link3") == panda.frame_id("panda_link3")
    with pytest.raises(UnknownFrameError, match="panda_link3"):       # the message lists the valid names
        panda.resolve_frame("no_such_frame")


def test_world_frame_pose_is_the_inverse_of_the_base_placement():
    """With a base that is not the world, "world" resolves to a frame whose pose in the base is base_T_world."""
    robot = RobotModel.from_name("ur5", base_frame="shoulder_link")
    q = robot.home()
    world_in_base = robot.frame_pose(q, robot.resolve_frame("world"))
    assert not world_in_base.isIdentity(1e-9)
    assert world_in_base.isApprox(robot.world_T_base.inverse(), 1e-12)
