"""DH tables: textbook FK values, standard vs modified, the UR5 table vs its URDF, and the DH -> URDF model
driving the path planner and the capability analysis."""
import dataclasses
import math

import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.capability import analysis as cap
from robokin_ros.core.classroom import dh_examples as ex
from robokin_ros.core.classroom.dh import DhRobot, DhRow
from robokin_ros.core.classroom.dh_urdf import dh_robot_model, dh_to_urdf
from robokin_ros.core.classroom.transforms import rot_z, trans
from robokin_ros.core.errors import ConfigError, InvalidInputError
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.program.moves import waypoint_program
from robokin_ros.core.program.planner import MotionPlanner


def rotation_error(R1, R2):
    return float(np.linalg.norm(pin.log3(R1.T @ R2)))


def test_planar_2r_every_frame_matches_the_textbook():
    l1, l2, q1, q2 = 0.7, 0.4, 0.5, -1.2
    frames = ex.planar_2r(l1, l2).fk([q1, q2])
    assert frames.shape == (4, 4, 4)                      # frame0, frame1, frame2, tool
    np.testing.assert_allclose(frames[0], np.eye(4))
    np.testing.assert_allclose(frames[1][:3, 3], [l1 * math.cos(q1), l1 * math.sin(q1), 0], atol=1e-15)
    elbow_to_tip = [l1 * math.cos(q1) + l2 * math.cos(q1 + q2), l1 * math.sin(q1) + l2 * math.sin(q1 + q2), 0]
    np.testing.assert_allclose(frames[2][:3, 3], elbow_to_tip, atol=1e-15)
    np.testing.assert_allclose(frames[2][:3, :3], rot_z(q1 + q2)[:3, :3], atol=1e-15)
    np.testing.assert_allclose(frames[3], frames[2])      # no tool transform


def test_scara_tool_matches_the_textbook_and_points_down():
    robot = ex.scara()
    a1, a2, d1, d4 = 0.325, 0.275, 0.4, 0.05
    q = np.array([0.4, -0.9, 0.12, 0.3])
    T = robot.tool_pose(q)
    expected = [a1 * math.cos(q[0]) + a2 * math.cos(q[0] + q[1]), a1 * math.sin(q[0]) + a2 * math.sin(q[0] + q[1]),
                d1 - q[2] - d4]
    np.testing.assert_allclose(T[:3, 3], expected, atol=1e-15)
    np.testing.assert_allclose(T[:3, 2], [0, 0, -1], atol=1e-15)
    # the tool's heading: alpha2 = pi flips z, so q4 turns it the other way: yaw = q1 + q2 - q4
    assert math.atan2(T[1, 0], T[0, 0]) == pytest.approx(q[0] + q[1] - q[3], abs=1e-12)


def test_modified_table_of_the_2r_arm_gives_the_same_tool():
    """Craig's table of the planar arm: (alpha0, a0, d1, theta1) = (0, 0, 0, q1), (0, l1, 0, q2), tool Tx(l2)."""
    l1, l2 = 0.7, 0.4
    craig = DhRobot((DhRow(a=0.0, alpha=0.0, d=0.0), DhRow(a=l1, alpha=0.0, d=0.0)), "modified",
                    tool=trans(l2, 0, 0))
    rng = np.random.default_rng(3)
    for _ in range(100):
        q = rng.uniform(-np.pi, np.pi, 2)
        np.testing.assert_allclose(craig.tool_pose(q), ex.planar_2r(l1, l2).tool_pose(q), atol=1e-14)


def test_ur5_table_equals_the_urdf_over_1000_configurations(ur5):
    robot = ex.ur5()
    rng = np.random.default_rng(0)
    worst_p = worst_r = 0.0
    for _ in range(1000):
        q = ur5.random_positions(rng)
        T, U = robot.tool_pose(q), ur5.fk(q)
        worst_p = max(worst_p, float(np.abs(T[:3, 3] - U.translation).max()))
        worst_r = max(worst_r, rotation_error(T[:3, :3], U.rotation))
    assert worst_p < 1e-9 and worst_r < 1e-9, (worst_p, worst_r)


def test_ur5_base_transform_is_the_urdfs_base_frame(ur5):
    """The zero-configuration evidence for base = Rz(pi): the URDF's `base` link (the controller's base)."""
    np.testing.assert_allclose(ex.ur5().fk(np.zeros(6))[0], ur5.fk(np.zeros(6), "base").homogeneous, atol=1e-12)
    # without the base transform the tool lands on the other side of the base
    bare = dataclasses.replace(ex.ur5(), base=np.eye(4))
    np.testing.assert_allclose(bare.tool_pose(np.zeros(6))[:2, 3], -ur5.fk(np.zeros(6)).translation[:2], atol=1e-9)


@pytest.mark.parametrize("make", [ex.planar_2r, ex.scara, ex.ur5,
                                  lambda: dataclasses.replace(ex.ur5(), convention="modified")])
def test_urdf_of_a_table_has_every_dh_frame_as_a_link(make):
    robot = make()
    model = dh_robot_model(robot)
    assert model.joint_names == tuple(f"joint{i}" for i in range(1, robot.n + 1))
    rng = np.random.default_rng(5)
    for _ in range(50):
        q = robot.random_q(rng)
        frames = robot.fk(q)
        for name, frame in zip(robot.frame_names(), frames):
            np.testing.assert_allclose(model.fk(q, name).homogeneous, frame, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(model.limits.lower, robot.lower)
    np.testing.assert_allclose(model.limits.upper, robot.upper)


def test_jacobian_of_the_dh_model_matches_finite_differences_of_the_table():
    robot = ex.scara()                                     # a prismatic joint too
    model = dh_robot_model(robot)
    q, h = np.array([0.3, 0.8, 0.1, -0.5]), 1e-6
    J = model.jacobian(q)                                  # (6, 4) base axes, tool origin
    for i in range(robot.n):
        Tp, Tm = robot.tool_pose(q + h * np.eye(4)[i]), robot.tool_pose(q - h * np.eye(4)[i])
        dp = (Tp[:3, 3] - Tm[:3, 3]) / (2 * h)
        dw = pin.log3(Tp[:3, :3] @ Tm[:3, :3].T) / (2 * h)
        np.testing.assert_allclose(np.hstack([dp, dw]), J[:, i], atol=1e-8, err_msg=f"column {i}")


def test_dh_ur5_plans_a_10_cm_line_and_runs_the_capability_analysis(ur5):
    model = dh_robot_model(ex.ur5())
    q0 = np.array(ur5.home())
    T0 = model.fk(q0)
    target = pin.SE3(T0.rotation, T0.translation + np.array([0.0, 0.1, 0.0]))
    plan = MotionPlanner(model, PathConfig(max_joint_acceleration=(4.0,) * 6)).plan(waypoint_program([target], 0.0), q0)
    assert plan.success, plan.path_ik.message
    end = ex.ur5().tool_pose(plan.trajectory.positions[-1])      # judged by the DH table itself
    assert np.linalg.norm(end[:3, 3] - target.translation) < 1e-4
    assert rotation_error(end[:3, :3], target.rotation) < 1e-3
    tau = cap.torque_limits_of(model)
    result = cap.analyze(model, q0, *tau)
    reference = cap.analyze(ur5, q0, cap.torque_limits_of(ur5).limits)
    # same kinematics -> the same velocity ellipsoid and force ellipsoids as the URDF's UR5
    np.testing.assert_allclose(result.velocity.semi_axes, reference.velocity.semi_axes, rtol=1e-9)
    np.testing.assert_allclose(result.force_rms.semi_axes, reference.force_rms.semi_axes, rtol=1e-9)


def test_validation_names_every_bad_row_and_field():
    rows = (DhRow(a=float("nan"), alpha=0.0, d=0.0), DhRow(a=0.1, alpha=0.0, d=0.0, joint="spherical"),
            DhRow(a=0.1, alpha=0.0, d=0.0, joint="prismatic", lower=0.0, upper=math.inf),
            DhRow(a=0.1, alpha=0.0, d=0.0, lower=1.0, upper=-1.0))
    with pytest.raises(ConfigError) as err:
        DhRobot(rows, "craig", base=np.zeros((4, 4)))
    text = str(err.value)
    for fragment in ("row 0: a must be a finite number, got nan", "row 1: type must be one of",
                     "row 2: a prismatic joint needs finite lower and upper", "row 3: lower 1.0 is above upper -1.0",
                     "convention must be one of ['standard', 'modified'], got 'craig'", "base is not a rigid"):
        assert fragment in text, text
    assert len(err.value.problems) == 6
    with pytest.raises(ConfigError, match="the table has no rows"):
        DhRobot(())
    with pytest.raises(InvalidInputError, match="q must have 2 entries"):
        ex.planar_2r().fk([0.1, 0.2, 0.3])


def test_urdf_text_keeps_full_precision():
    xml = dh_to_urdf(ex.ur5())
    assert 'xyz="0.0 0.0 0.089159"' in xml and "1.5707963267948966" in xml
