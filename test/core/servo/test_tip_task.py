"""The stacked task's rows (core/servo/tip_task.py) against core/tips/held_object's reference functions: the compiled
row kernels write the same numbers (to rounding), and the stacked Jacobian is each block's rows in order."""
import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.tip_task import (
    HeldObjectAssembly,
    PointBlock,
    RelativeBlock,
    TipBlock,
    TipKinematics,
    stack_jacobian,
)
from robokin_ros.core.tips.held_object import (
    point_jacobian,
    point_rows_into,
    relative_error_into,
    relative_jacobian,
    relative_pose_error,
    relative_rows_into,
)


@pytest.fixture(scope="module")
def dual():
    return RobotModel.load("dual_panda")


def configurations(robot, count=20):
    rng = np.random.default_rng(26)
    return [robot.random_positions(rng, 0.1) for _ in range(count)]


def test_tip_kinematics_match_the_robot_model_per_tip(dual):
    kinematics = TipKinematics(dual)
    for q in configurations(dual, 5):
        jacobians, poses = kinematics(q)
        for tip, J, pose in zip(dual.tip_frames, jacobians, poses):
            np.testing.assert_allclose(J, dual.jacobian(q, tip), rtol=0, atol=1e-14)   # (another Pinocchio route)
            assert pose.isApprox(dual.fk(q, tip), 1e-14)


def test_compiled_rows_equal_the_held_object_reference(dual):
    kinematics, rng = TipKinematics(dual), np.random.default_rng(7)
    for q in configurations(dual):
        (Ja, Jb), (Ta, Tb) = kinematics(q)
        point = rng.normal(size=3)
        out = np.empty_like(Ja)
        point_rows_into(Ja, Ta.translation, point, out)
        np.testing.assert_allclose(out, point_jacobian(Ja, Ta.translation, point), rtol=0, atol=1e-15)
        relative_rows_into(Ja, Jb, Ta.translation, Tb.translation, out)
        np.testing.assert_allclose(out, relative_jacobian(Ja, Jb, Ta, Tb), rtol=0, atol=1e-15)
        held = pin.SE3(pin.exp3(rng.normal(size=3) * 0.5), rng.normal(size=3))
        error = np.empty(6)
        relative_error_into(Ta.rotation, Ta.translation, Tb.rotation, Tb.translation, held.rotation,
                            held.translation, error)
        np.testing.assert_allclose(error, relative_pose_error(Ta, Tb, held), rtol=0, atol=1e-13)


def test_the_stacked_jacobian_is_each_block_in_order(dual):
    kinematics = TipKinematics(dual)
    q = configurations(dual, 1)[0]
    jacobians, poses = kinematics(q)
    point = np.array([0.0, 0.1, 0.05])
    A = stack_jacobian((TipBlock(1), PointBlock(0, point), RelativeBlock(0, 1)), jacobians, poses)
    assert A.shape == (18, dual.n) and A.flags.c_contiguous
    np.testing.assert_array_equal(A[:6], jacobians[1])
    np.testing.assert_allclose(A[6:12], point_jacobian(jacobians[0], poses[0].translation, poses[0].act(point)),
                               rtol=0, atol=1e-15)
    np.testing.assert_allclose(A[12:], relative_jacobian(jacobians[0], jacobians[1], poses[0], poses[1]), rtol=0,
                               atol=1e-15)


def test_the_held_object_s_one_call_assembly_equals_the_reference_rows_and_hold_velocities(dual):
    """HeldObjectAssembly reads Pinocchio's world Jacobian and joint placements in place and assembles in one compiled
    call: at every configuration (the views must follow Pinocchio's updates) its rows equal stack_jacobian's of the
    same blocks, its grasp velocities -gain times relative_pose_error, its object origin the first tip's point."""
    kinematics, rng = TipKinematics(dual), np.random.default_rng(11)
    tip0_p_object = np.array([0.02, -0.15, 0.04])
    q0 = configurations(dual, 1)[0]
    poses0 = kinematics(q0)[1]
    held = (poses0[0].actInv(poses0[1]),)           # the hands drift from where they were at q0
    assembly = HeldObjectAssembly(kinematics, tip0_p_object, held, 2.5)
    assert assembly.blocks[0] == RelativeBlock(0, 1) and isinstance(assembly.blocks[1], PointBlock)
    for q in [q0 + 0.2 * rng.normal(size=dual.n) for _ in range(20)]:
        A, b = assembly(q)
        jacobians, poses = kinematics(q)
        np.testing.assert_allclose(A, stack_jacobian(assembly.blocks, jacobians, poses), rtol=0, atol=1e-14)
        np.testing.assert_allclose(b[:6], -2.5 * relative_pose_error(poses[0], poses[1], held[0]), rtol=0,
                                   atol=1e-13)
        np.testing.assert_allclose(assembly.origin, poses[0].act(tip0_p_object), rtol=0, atol=1e-14)
        np.testing.assert_allclose(assembly.jacobian_at(q), A, rtol=0, atol=1e-14)
    assert assembly._views_follow           # this Pinocchio's arrays are read in place (else taken every tick)
    assembly._views_follow = False          # the fallback gives the same rows
    q = q0 - 0.1
    A, _ = assembly(q)
    np.testing.assert_allclose(A, stack_jacobian(assembly.blocks, *kinematics(q)), rtol=0, atol=1e-14)
    assembly.set_gain(1.0)
    q = q0 + 0.1
    jacobians, poses = kinematics(q)
    np.testing.assert_allclose(assembly(q)[1][:6], -relative_pose_error(poses[0], poses[1], held[0]), rtol=0,
                               atol=1e-13)


def test_the_held_object_s_assembly_follows_a_base_that_is_not_the_world(dual):
    """The rows and velocities in base axes when the base is a turned and shifted frame of the world."""
    full = dual.model.copy()
    world_T_base = pin.SE3(pin.exp3(np.array([0.3, -0.2, 0.9])), np.array([0.1, -0.2, 0.3]))
    full.addFrame(pin.Frame("turned_base", 0, 0, world_T_base, pin.FrameType.OP_FRAME))
    robot = RobotModel(full, "turned_base", dual.tip_frames)
    assert robot.world_T_base.isApprox(world_T_base, 1e-15)
    kinematics = TipKinematics(robot)
    q0 = configurations(robot, 1)[0]
    poses0 = kinematics(q0)[1]
    held = poses0[0].actInv(poses0[1])
    assembly = HeldObjectAssembly(kinematics, np.array([0.0, -0.15, 0.0]), (held,), 1.0)
    for q in [q0 + 0.2 * np.random.default_rng(12).normal(size=robot.n) for _ in range(5)]:
        A, b = assembly(q)
        jacobians, poses = kinematics(q)
        np.testing.assert_allclose(A, stack_jacobian(assembly.blocks, jacobians, poses), rtol=0, atol=1e-14)
        np.testing.assert_allclose(b[:6], -relative_pose_error(poses[0], poses[1], held), rtol=0, atol=1e-13)
        np.testing.assert_allclose(assembly.origin, poses[0].act(np.array([0.0, -0.15, 0.0])), rtol=0, atol=1e-14)
