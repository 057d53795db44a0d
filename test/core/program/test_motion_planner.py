"""The one planner: waypoint paths and programs through `MotionPlanner.plan`, into one `MotionPlan`."""
import dataclasses

import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.errors import InvalidInputError, PathInputError
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.result import PathStatus
from robokin_ros.core.trajectory.arrays import hold_trajectory
from robokin_ros.core.program.moves import Approach, MotionProgram, Move, MoveKind, waypoint_program
from robokin_ros.core.program.planner import MotionPlanner


@pytest.fixture(scope="module")
def planner(panda):
    return MotionPlanner(panda, PathConfig(robot="panda"))


def _at(panda, *offsets):
    T = panda.fk(panda.home())
    return [pin.SE3(T.rotation, T.translation + np.asarray(d, float)) for d in offsets]


def _same(a, b):
    fields = ("times", "positions", "velocities", "accelerations")
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in fields)


def test_a_waypoint_path_is_a_program_of_movel_moves_led_by_its_approach(panda):
    waypoints = _at(panda, [0.05, 0, 0], [0.05, 0.05, 0])
    path = waypoint_program(waypoints, 0.01)
    assert [m.kind for m in path.moves] == [MoveKind.LINEAR] * 2 and [m.zone for m in path.moves] == [0.01] * 2
    joint = waypoint_program(waypoints, 0.01, Approach.JOINT)
    assert [m.kind for m in joint.moves] == [MoveKind.JOINT, MoveKind.LINEAR]
    assert joint.moves[0].pose is waypoints[0] and joint.waypoint_path.approach is Approach.JOINT
    assert waypoint_program(waypoints, 0.0, Approach.LINEAR).moves[0].kind is MoveKind.LINEAR


def test_a_waypoint_path_plan_completes_every_move_and_reads_as_a_path_plan(panda, planner):
    """(That the one planner plans a waypoint path bit for bit as the former CartesianPathPlanner did is what
    bench/identical_plans.py proves against the revision that had it.)"""
    waypoints = _at(panda, [0.05, 0, 0], [0.05, 0.05, 0])
    plan = planner.plan(waypoint_program(waypoints, 0.01), panda.home())
    former = plan.path_plan()
    assert plan.success and former.success and _same(plan.trajectory, former.trajectory)
    assert former.ik is plan.path_ik and former.timing is plan.timing and former.downsample is plan.downsample
    assert plan.fraction == 1.0 and plan.path_ik.success and plan.completed_moves == 2


def test_a_failed_waypoint_path_carries_its_solved_part_and_names_the_move(panda, planner):
    """The approach to waypoints[0] is move 0, waypoint i > 0 is move i: the unreachable third waypoint is move 2,
    and the plan's trajectory is the approach followed by the timed solved prefix, ending at rest."""
    waypoints = _at(panda, [0.05, -0.1, -0.1], [0.15, -0.1, -0.1], [0.95, -0.1, -0.1])
    plan = planner.plan(waypoint_program(waypoints, 0.0, Approach.JOINT), panda.home())
    assert not plan.success and plan.status != PathStatus.SUCCESS
    assert plan.failed_move == 2 and plan.failed_sample > 0 and plan.failure_pose is not None
    assert 0.0 < plan.fraction < 1.0
    n = len(plan.approach.times)
    assert np.array_equal(plan.trajectory.positions[:n], plan.approach.positions)
    assert plan.trajectory.duration > plan.approach.duration
    assert np.abs(plan.trajectory.velocities[-1]).max() < 1e-9
    without = planner.plan(waypoint_program(waypoints, 0.0, Approach.JOINT), panda.home(), solved_part=False)
    assert without.trajectory is None and without.failed_move == 2


def test_the_request_scalings_are_resolved_once_by_the_scaling_rule(panda, planner):
    waypoints = _at(panda, [0.05, 0, 0])
    with pytest.raises(InvalidInputError, match=r"velocity_scaling=1\.5 is refused"):
        planner.plan(waypoint_program(waypoints, 0.0), panda.home(), velocity_scaling=1.5)
    # a refusal comes before the approach is looked at, as the goal's fields come first
    with pytest.raises(InvalidInputError, match="acceleration_scaling"):
        planner.plan(waypoint_program(_at(panda, [0.0, 0.3, 0.0]), 0.0, Approach.REFUSE), panda.home(),
                     acceleration_scaling=-1.0)
    with pytest.raises(PathInputError, match="approach REFUSE"):
        planner.plan(waypoint_program(_at(panda, [0.0, 0.3, 0.0]), 0.0, Approach.REFUSE), panda.home())
    # for a program the request's fraction stands where the program sets none
    program = MotionProgram((Move(MoveKind.LINEAR, waypoints[0]),))
    requested = planner.plan(program, panda.home(), acceleration_scaling=0.5)
    own = planner.plan(dataclasses.replace(program, acceleration_scaling=0.5), panda.home())
    assert _same(requested.trajectory, own.trajectory)
    assert requested.cycle_time > planner.plan(program, panda.home()).cycle_time


def test_a_program_that_does_not_move_holds_the_start(panda, planner):
    start = _at(panda, [0, 0, 0])[0]
    plan = planner.plan(MotionProgram((Move(MoveKind.LINEAR, start),)), panda.home())
    assert plan.success and plan.message.startswith("already there")
    assert _same(plan.trajectory, hold_trajectory(panda.joint_names, panda.home()))
    there = planner.plan(waypoint_program([start], 0.0), panda.home())
    assert there.success and _same(there.trajectory, plan.trajectory)
