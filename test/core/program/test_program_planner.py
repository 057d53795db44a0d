"""Motion programs end to end (core): zones vs exact stops, per-move speeds checked by FK finite differences, arcs,
joint moves, the cycle-time report, and failures that return the solved part."""
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.trajectory.profiles import joint_move, lspb_profile
from robokin_ros.core.path.result import PathStatus
from robokin_ros.core.path.timing import time_optimal
from robokin_ros.core.trajectory.arrays import sample_times
from robokin_ros.core.program.moves import MotionProgram, Move, MoveKind
from robokin_ros.core.program.planner import MotionPlanner
from robokin_ros.core.program.program_file import load_program_file, program_from_mapping

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "programs"
FD_RATE = 2000.0          # [Hz] finite differences of FK on the continuous trajectory


@pytest.fixture(scope="module")
def planner(panda):
    return MotionPlanner(panda, PathConfig(robot="panda"))


def _example(planner, panda, name):
    start = panda.fk(panda.home())
    program = program_from_mapping(load_program_file(EXAMPLES / name), start, panda.n, panda.fk)
    return program, planner.plan(program, panda.home())


@pytest.fixture(scope="module")
def pick_place(planner, panda):
    return {kind: _example(planner, panda, f"pick_place_{kind}.yaml") for kind in ("fine", "zoned")}


def _played(panda, trajectory, rate=FD_RATE):
    """Tool positions and FD speeds of the trajectory played by cubic Hermite between its points (as a
    controller does with positions and velocities)."""
    from robokin_ros.core.path.deviation import controller_positions
    times = sample_times(trajectory.duration, rate)
    q = controller_positions(trajectory, times, "quintic")
    p = np.array([panda.fk(x).translation for x in q])
    speed = np.linalg.norm(np.diff(p, axis=0), axis=1) * rate
    return times, q, p, speed


def test_zones_shorten_the_cycle_and_both_versions_reach_every_target(pick_place, panda):
    (_, fine), (program, zoned) = pick_place["fine"], pick_place["zoned"]
    assert fine.success and zoned.success, (fine.message, zoned.message)
    assert zoned.cycle_time < 0.95 * fine.cycle_time          # 13.2 s vs 14.4 s when written
    for plan in (fine, zoned):
        # the report covers the trajectory: contiguous moves whose durations add up to the cycle time
        starts = np.array([m.start_time for m in plan.moves])
        ends = np.array([m.end_time for m in plan.moves])
        np.testing.assert_allclose(starts[1:], ends[:-1], atol=1e-9)
        assert ends[-1] == pytest.approx(plan.cycle_time, abs=1e-9)
        assert all(m.duration > 0 for m in plan.moves)
    # every fine target is reached exactly and at rest
    times = zoned.trajectory.times
    for m, move in zip(zoned.moves, program.moves):
        if not move.fine or move.pose is None:
            continue
        k = int(np.argmin(np.abs(times - m.end_time)))
        assert np.linalg.norm(panda.fk(zoned.trajectory.positions[k]).translation - move.pose.translation) < 2e-5
        assert np.abs(zoned.trajectory.velocities[k]).max() < 1e-6


def test_movel_cruises_at_its_programmed_speed_or_names_the_joint_limit(pick_place, panda):
    program, plan = pick_place["zoned"]
    t = plan.trajectory
    # the timed points: tool speed |J(q) qd| with Pinocchio's Jacobian
    point_speed = np.array([np.linalg.norm(panda.jacobian(q)[:3] @ qd) for q, qd in zip(t.positions, t.velocities)])
    # as a controller plays them (quintic between the points): FK finite differences at 2 kHz
    times, _, _, speed = _played(panda, t)
    for m, move in zip(plan.moves, program.moves):
        if move.kind is not MoveKind.LINEAR or move.speed <= 0:
            continue
        at_points = point_speed[(t.times >= m.start_time) & (t.times <= m.end_time)].max()
        assert at_points <= move.speed * (1 + 1e-3), (m.label, at_points)
        inside = (times[1:] > m.start_time) & (times[:-1] < m.end_time)
        played = speed[inside].max()
        # interpolating between 100 Hz points rounds the ends of the constant-acceleration phases: <= 1.2 % measured
        assert played <= move.speed * 1.015, (m.label, played)
        assert m.peak_tool_speed == pytest.approx(played, rel=0.015)          # the report: 500 Hz, not played
        if m.limited_by == "tool speed":
            assert at_points >= 0.99 * move.speed, (m.label, at_points)
        else:
            assert m.limited_by.startswith(("velocity of", "acceleration of")), (m.label, m.limited_by)


def test_joint_limits_hold_everywhere(pick_place, planner):
    v_max, a_max = planner.limits()[:2]
    for _, plan in pick_place.values():
        t = plan.trajectory
        assert (np.abs(t.velocities) / v_max).max() <= 1 + 1e-3
        assert (np.abs(t.accelerations) / a_max).max() <= 1 + 1e-3


def test_zones_round_the_corners_without_stopping(pick_place, panda):
    program, plan = pick_place["zoned"]
    times, _, p, speed = _played(panda, plan.trajectory, 500.0)
    for m, move in zip(plan.moves, program.moves):
        if move.fine or move.pose is None:
            continue
        k = int(np.argmin(np.abs(times - m.end_time)))
        near = slice(max(k - 25, 0), k + 25)
        # the tool passes the corner inside the zone, not through it, and keeps moving
        distance = np.linalg.norm(p[near] - move.pose.translation, axis=1).min()
        assert 1e-4 < distance < move.zone, (m.label, distance)
        assert speed[near].min() > 0.01, m.label


def test_movec_follows_its_circle(pick_place, panda):
    program, plan = pick_place["zoned"]
    times, _, p, _ = _played(panda, plan.trajectory, 500.0)
    for m, move in zip(plan.moves, program.moves):
        if move.kind is not MoveKind.CIRCULAR:
            continue
        start = program.moves[m.index - 1].pose.translation
        centre, radius, normal = _circle(start, move.via, move.pose.translation)
        zone = max(program.moves[m.index - 1].zone, move.zone)
        inside = (times > m.start_time) & (times < m.end_time)
        from_start = np.linalg.norm(p - start, axis=1)
        from_end = np.linalg.norm(p - move.pose.translation, axis=1)
        far = inside & (from_start > zone) & (from_end > zone)
        assert far.sum() > 20
        assert np.abs(np.linalg.norm(p[far] - centre, axis=1) - radius).max() < 1e-4
        assert np.abs((p[far] - centre) @ normal).max() < 1e-4


def _circle(a, b, c):
    """Centre, radius and unit normal of the circle through three points (textbook circumcentre)."""
    ab, ac = b - a, c - a
    normal = np.cross(ab, ac)
    centre = a + (np.cross(normal, ab) * (ac @ ac) + np.cross(ac, normal) * (ab @ ab)) / (2 * normal @ normal)
    return centre, float(np.linalg.norm(a - centre)), normal / np.linalg.norm(normal)


def test_fine_movej_is_the_synchronised_trapezoid_which_toppra_agrees_with(planner, panda):
    target = panda.home() + np.array([0.4, -0.3, 0.2, 0.3, -0.2, 0.25, 0.5])
    plan = planner.plan(MotionProgram((Move(MoveKind.JOINT, joints=target),)), panda.home())
    assert plan.success
    v_max, a_max = planner.limits()[:2]
    reference = joint_move(panda.home(), target, v_max, a_max, "trapezoid", 1000.0, for_controller=True)
    assert plan.cycle_time == pytest.approx(reference.duration, rel=1e-9)
    q = plan.trajectory.positions
    delta = target - panda.home()
    fraction = (q - q[0]) @ delta / (delta @ delta)
    np.testing.assert_allclose(q, q[0] + np.outer(fraction, delta), atol=1e-12)    # a straight joint line
    # toppra, time-optimal on the same line, finds the ideal trapezoid's duration; the trapezoid a controller's
    # spline can play within the limits takes at most 8 % longer (its steps overshoot by 0.081 of a step, centred)
    line = np.linspace(panda.home(), target, 50)
    ss = np.linspace(0.0, 1.0, 50)
    optimal = time_optimal(ss, line, panda.joint_names, v_max, a_max)
    delta_max = np.abs(target - panda.home())
    ideal = lspb_profile(float(np.min(v_max / delta_max)), float(np.min(a_max / delta_max)))[1]
    assert optimal.report.duration == pytest.approx(ideal, rel=0.01)
    assert ideal <= reference.duration <= 1.08 * ideal
    assert plan.moves[0].limited_by.startswith(("velocity of", "acceleration of"))


def test_quintic_profile_on_request(panda):
    quintic = MotionPlanner(panda, PathConfig(robot="panda", joint_move_profile="quintic"))
    target = panda.home() + np.array([0.4, -0.3, 0.2, 0.3, -0.2, 0.25, 0.5])
    plan = quintic.plan(MotionProgram((Move(MoveKind.JOINT, joints=target),)), panda.home())
    t = plan.trajectory
    assert np.abs(t.accelerations[[0, -1]]).max() < 1e-12           # no acceleration step at either end
    v_max, a_max = quintic.limits()[:2]
    reference = joint_move(panda.home(), target, v_max, a_max, "trapezoid", 1000.0, for_controller=True)
    assert 1.1 < t.duration / reference.duration < 1.9                 # the config's stated cost


def test_per_move_speed_and_fraction(planner, panda):
    T = panda.fk(panda.home())
    line = [pin.SE3(T.rotation, T.translation + np.array(d)) for d in ([0.0, 0.25, 0.0], [0.0, -0.15, 0.0])]
    program = MotionProgram((Move(MoveKind.LINEAR, pose=line[0], speed=0.3, zone=0.02),
                             Move(MoveKind.LINEAR, pose=line[1], speed=0.08)))
    plan = planner.plan(program, panda.home())
    assert plan.success
    first, second = plan.moves
    assert first.peak_tool_speed == pytest.approx(0.3, rel=0.01)
    assert second.peak_tool_speed == pytest.approx(0.08, rel=0.01)
    assert first.limited_by == second.limited_by == "tool speed"


def test_unreachable_move_returns_the_solved_part(planner, panda):
    T = panda.fk(panda.home())
    near = pin.SE3(T.rotation, T.translation + np.array([0.0, 0.1, 0.0]))
    far = pin.SE3(T.rotation, T.translation + np.array([0.0, 0.1, 0.0]) + np.array([1.2, 0.0, 0.0]))
    program = MotionProgram((Move(MoveKind.LINEAR, pose=near, zone=0.0, name="ok"),
                             Move(MoveKind.LINEAR, pose=far, name="outward")))
    plan = planner.plan(program, panda.home())
    assert not plan.success and plan.failed_move == 1 and plan.completed_moves == 1
    assert plan.status in (PathStatus.SINGULARITY, PathStatus.JOINT_LIMIT, PathStatus.PATH_DEVIATION)
    assert plan.message.startswith("1 MoveL outward")
    t = plan.trajectory
    np.testing.assert_allclose(t.positions[0], panda.home())
    assert np.abs(t.velocities[-1]).max() < 1e-9                            # the solved part ends at rest
    reached = panda.fk(t.positions[-1]).translation
    assert reached[0] > near.translation[0] + 0.05                            # past the first move, outward


def test_unreachable_movej_pose_is_named(planner, panda):
    T = panda.fk(panda.home())
    program = MotionProgram((Move(MoveKind.JOINT, pose=pin.SE3(T.rotation, np.array([1.6, 0.0, 0.4])),
                                  name="too_far"),))
    plan = planner.plan(program, panda.home())
    assert not plan.success and plan.failed_move == 0 and plan.trajectory is None
    assert "0 MoveJ too_far: no joint configuration" in plan.message
