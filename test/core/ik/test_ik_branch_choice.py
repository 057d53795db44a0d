"""MoveJ to a pose on a UR arm takes the closed-form solution nearest the current state."""
import numpy as np
import pinocchio as pin

from robokin_ros.core.ik.branch_choice import nearest_branch_solver
from robokin_ros.core.ik.ur import all_solutions
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.ik.pose_ik import solve_pose
from robokin_ros.core.program.moves import MotionProgram, Move, MoveKind
from robokin_ros.core.program.planner import MotionPlanner


def test_nearest_of_all_branches_never_farther_than_the_iteration(ur5):
    solve = nearest_branch_solver(ur5)
    rng = np.random.default_rng(7)
    for _ in range(100):
        seed = ur5.random_positions(rng, 0.2)
        target = ur5.fk(ur5.random_positions(rng, 0.2))
        found = solve(ur5, target, seed, None, 0.01)
        assert found.success
        reached = ur5.fk(found.positions)
        assert np.linalg.norm(reached.translation - target.translation) < 1e-9
        assert np.linalg.norm(pin.log3(reached.rotation.T @ target.rotation)) < 1e-9
        branches = all_solutions(ur5, target, seed)
        closest = min(np.linalg.norm(b.positions - seed) for b in branches)
        assert np.linalg.norm(found.positions - seed) <= closest + 1e-9
        iterative = solve_pose(ur5, target, seed, None, 0.01)
        if iterative.success:
            assert np.linalg.norm(found.positions - seed) <= np.linalg.norm(iterative.positions - seed) + 1e-7


def test_only_arms_with_a_closed_form_get_one(panda):
    assert nearest_branch_solver(panda) is None


def test_a_program_movej_ends_on_the_nearest_branch(ur5):
    planner = MotionPlanner(ur5, PathConfig(robot="ur5", max_joint_acceleration=(4.0,) * 6), nearest_branch_solver(ur5))
    q0 = ur5.home()
    target = ur5.fk(q0 + np.array([0.5, -0.3, 0.4, 0.2, -0.3, 0.6]))
    plan = planner.plan(MotionProgram((Move(MoveKind.JOINT, pose=target),)), q0)
    assert plan.success
    nearest = all_solutions(ur5, target, q0)[0]
    np.testing.assert_allclose(plan.trajectory.positions[-1], nearest.positions, atol=1e-12)


def test_motion_planner_takes_the_nearest_branch_by_default_on_a_ur_arm(ur5, panda):
    """Intended change of issue 25's rooms step: without a pose solver, MotionPlanner's MoveJ to a pose on a UR arm
    ends on the nearest of all closed-form branches. From home to this target the iterative pose IK lands 5.0 rad
    (joint-space norm) away, on another branch; the nearest branch is 2.9 rad away. Other arms keep the iteration."""
    config = PathConfig(robot="ur5", max_joint_acceleration=(4.0,) * 6)
    q0 = ur5.home()
    target = ur5.fk(q0 + np.array([-1.27, 1.1, 1.13, 1.39, -1.09, -1.15]))
    program = MotionProgram((Move(MoveKind.JOINT, pose=target),))
    by_default = MotionPlanner(ur5, config).plan(program, q0)
    iterative = MotionPlanner(ur5, config, solve_pose).plan(program, q0)
    assert by_default.success and iterative.success
    nearest = all_solutions(ur5, target, q0)[0].positions
    np.testing.assert_allclose(by_default.trajectory.positions[-1], nearest, atol=1e-12)
    assert np.linalg.norm(nearest - q0) < 3.0 < 5.0 < np.linalg.norm(iterative.trajectory.positions[-1] - q0)
    assert MotionPlanner(panda).pose_solver is solve_pose
