"""Two arms within joint jerk limits (issue 27, item 3): a carried square and a MoveJ on dual_panda, the played jerk
of the controller's quintic (exact, and finite differences at 1 kHz) within the limits, both tips still on their
paths."""
import dataclasses

import numpy as np
import pinocchio as pin

from robokin_ros.core.program.moves import MotionProgram, Move, MoveKind
from robokin_ros.core.program.planner import MotionPlanner
from robokin_ros.core.trajectory.jerk_check import played_jerk_peaks, sampled_jerk
from test_bimanual_programs import two_arms

PANDA_JERK = np.array([7500.0, 3750.0, 5000.0, 6250.0, 7500.0, 10000.0, 10000.0])    # Franka, per arm [rad/s^3]


def test_a_carried_square_and_a_movej_within_jerk():
    robot, plain, start = two_arms("dual_panda")
    jerk = np.tile(PANDA_JERK, robot.n // 7)[:robot.n] * 0.1
    planner = MotionPlanner(robot, dataclasses.replace(plain.config, max_joint_jerk=tuple(jerk)))
    centre = np.mean([robot.fk(start, tip).translation for tip in robot.tip_frames], axis=0)
    offsets = np.array([[0, 0.1, 0], [0, 0.1, 0.2], [0, -0.1, 0.2], [0, -0.1, 0], [0, 0, 0]])
    moves = [Move(MoveKind.LINEAR, pose=pin.SE3(np.eye(3), centre + d), carried=True, speed=0.1, zone=0.02)
             for d in offsets]
    moves.append(Move(MoveKind.JOINT, joints=tuple(start + 0.05)))
    plan = planner.plan(MotionProgram(tuple(moves)), start)
    assert plan.success, plan.message
    t = plan.trajectory
    args = (t.times, t.positions, t.velocities, t.accelerations)
    exact = played_jerk_peaks(*args).jerk
    assert np.all(exact <= jerk * (1 + 2e-3)), (exact / jerk).max()
    assert np.all(np.abs(sampled_jerk(*args).jerk).max(axis=0) <= jerk * (1 + 2e-3))
    assert max(d for _, d, _ in plan.tip_deviations) <= 1e-4
    off = plain.plan(MotionProgram(tuple(moves)), start).trajectory
    assert (played_jerk_peaks(off.times, off.positions, off.velocities, off.accelerations).jerk / jerk).max() > 1.0
