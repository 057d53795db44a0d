"""Jerk-limited paths and programs (issue 27, item 3): the played spline of every plan within the joint jerk limits,
measured two ways (the exact peaks of the controller's quintic, and finite differences of its acceleration sampled at
1 kHz), with the deviation and the limits kept; jerk off is `time_optimal` itself, bit for bit."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.limits import MotionLimits
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.jerk_timing import time_section_profile
from robokin_ros.core.path.timing import time_optimal
from robokin_ros.core.program.moves import waypoint_program
from robokin_ros.core.program.planner import MotionPlanner
from robokin_ros.core.program.program_file import load_program_file, program_from_mapping
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.trajectory.jerk_check import played_jerk_peaks, sampled_jerk
from robokin_ros.core.trajectory.jerk_smoothing import SmoothedProfile, quintic_jerk_peaks
from robokin_ros.core.trajectory.outgoing_check import spline_peaks

ROOT = Path(__file__).resolve().parents[3]
ACC = (15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0)
# Franka's published joint jerk limits (frankaemika.github.io/docs/control_parameters.html) [rad/s^3]
PANDA_JERK = (7500.0, 3750.0, 5000.0, 6250.0, 7500.0, 10000.0, 10000.0)
TOLERANCE = 2e-3      # the outgoing check's relative tolerance on limits


@pytest.fixture(scope="module")
def panda():
    return RobotModel.from_name("panda")


def planner(robot, jerk=None, **extra) -> MotionPlanner:
    config = PathConfig(robot="panda", max_joint_acceleration=ACC, clamp_blend_radius=True,
                        max_joint_jerk=() if jerk is None else tuple(jerk), **extra)
    return MotionPlanner(robot, config)


def rectangle(robot):
    T0 = robot.fk(robot.home())
    out, lateral = np.array([1.0, 0, 0]), np.array([0, 1.0, 0])

    def at(d):
        return pin.SE3(T0.rotation, T0.translation + d)
    return [at(0.1 * out), at(0.1 * out + 0.15 * lateral), at(-0.1 * out + 0.15 * lateral),
            at(-0.1 * out - 0.15 * lateral), at(0.1 * out - 0.15 * lateral), at(0.1 * out), at(0 * out)]


def pick_place(robot, kind: str):
    return program_from_mapping(load_program_file(ROOT / "examples" / "programs" / f"pick_place_{kind}.yaml"),
                                robot.fk(robot.home()), robot.n, robot.fk)


def assert_played_within(trajectory, jerk, v_max, a_max):
    """The controller's quintic through the points: jerk, velocity and acceleration within the limits."""
    jerk = np.asarray(jerk, float)
    args = (trajectory.times, trajectory.positions, trajectory.velocities, trajectory.accelerations)
    exact = quintic_jerk_peaks(*args)
    assert np.all(exact <= jerk * (1 + TOLERANCE)), exact / jerk
    assert np.all(played_jerk_peaks(*args).jerk <= jerk * (1 + TOLERANCE))
    # independently: finite differences of the played acceleration sampled at 1 kHz never exceed the exact peak
    sampled = np.abs(sampled_jerk(*args).jerk).max(axis=0)
    assert np.all(sampled <= exact * (1 + 1e-6) + 1e-6), (sampled, exact)
    assert np.all(sampled <= jerk * (1 + TOLERANCE))
    peaks = spline_peaks(*args)
    assert np.all(peaks.velocity <= v_max * (1 + TOLERANCE))
    assert np.all(peaks.acceleration <= a_max * (1 + TOLERANCE))
    return exact


def test_limits_carry_the_configured_jerk(panda):
    assert not planner(panda).limits().jerk_limited
    limits = planner(panda, PANDA_JERK).limits()
    assert limits.jerk_limited and np.array_equal(limits.jerk, PANDA_JERK)
    one = MotionPlanner(panda, PathConfig(robot="panda", default_joint_jerk=500.0)).limits()
    assert np.array_equal(one.jerk, np.full(7, 500.0))


@pytest.mark.parametrize("bad", [(float("nan"),) * 7, (0.0,) * 7, (-1.0,) * 7, (1000.0,) * 6])
def test_bad_jerk_limits_are_refused_naming_the_field(panda, bad):
    with pytest.raises(Exception, match="max_joint_jerk"):
        planner(panda, bad)


def test_smoothed_profile_identities():
    """The average of a trapezoid: distance kept, cruise kept, s' and s'' the derivatives of s (finite
    differences), jerk a step of the acceleration over the window."""
    times, s, sd = np.array([0.0, 0.5, 1.5, 2.0]), np.array([0.0, 0.25, 1.25, 1.5]), np.array([0.0, 1.0, 1.0, 0.0])
    line = SmoothedProfile(_Unit(), times, s, sd, 0.1)
    assert line.duration == pytest.approx(2.1)
    t = np.linspace(0.0, line.duration, 2101)
    f, fd, fdd, fddd = line.path_states(t)
    assert f[0] == pytest.approx(0.0, abs=1e-12) and f[-1] == pytest.approx(1.5, abs=1e-12)
    assert fd[(t > 0.65) & (t < 1.5)] == pytest.approx(1.0, abs=1e-12)        # the cruise, unchanged
    h = t[1] - t[0]
    assert np.gradient(f, h)[1:-1] == pytest.approx(fd[1:-1], abs=h * h * 20.0)        # h^2 / 6 |s'''|, doubled
    assert np.gradient(fd, h)[5:-5] == pytest.approx(fdd[5:-5], abs=2.0 * h / 0.1 * 2 + 1e-6)
    assert np.abs(fddd).max() == pytest.approx(2.0 / 0.1)                       # s'' from 0 to 2 over 0.1 s
    assert np.abs(fdd).max() <= 2.0 + 1e-12


class _Unit:
    def __call__(self, s, order=0):
        s = np.asarray(s, float)
        return (s if order == 0 else np.ones_like(s) if order == 1 else np.zeros_like(s))[:, None]


def test_jerk_off_is_time_optimal_bit_for_bit(panda):
    p = planner(panda)
    plan = p.plan(waypoint_program(rectangle(panda), 0.03), panda.home())
    ss = np.linspace(0.0, 1.0, 30)
    q = panda.home() + np.outer(np.sin(3 * ss), np.linspace(0.1, 0.4, 7))
    names = panda.joint_names
    v, a = p.limits().velocity, p.limits().acceleration
    for jerk in (None, np.full(7, np.inf)):
        ours = time_section_profile(ss, q, names, v, a, 0.8, 0.9, jerk=jerk)
        theirs = time_optimal(ss, q, names, v, a, 0.8, 0.9, played=True)
        for field in ("times", "positions", "velocities", "accelerations"):
            assert np.array_equal(getattr(ours.arrays, field), getattr(theirs.arrays, field))
    assert np.isnan(plan.timing.played_jerk_ratio) and plan.timing.jerk_window == 0.0


@pytest.mark.parametrize("share", [1.0, 0.1])
def test_blended_rectangle_within_jerk(panda, share):
    jerk = np.array(PANDA_JERK) * share
    plain = planner(panda).plan(waypoint_program(rectangle(panda), 0.03), panda.home())
    plan = planner(panda, jerk).plan(waypoint_program(rectangle(panda), 0.03), panda.home())
    assert plan.success, plan.message
    limits = planner(panda).limits()
    exact = assert_played_within(plan.trajectory, jerk, limits.velocity, limits.acceleration)
    assert plan.timing.played_jerk_ratio == pytest.approx((exact / jerk).max(), rel=1e-9)
    assert plan.timing.max_position_deviation <= 1e-4
    # acceleration-limited, the same path plays far above the limit: the test can fail
    off = plain.trajectory
    assert (quintic_jerk_peaks(off.times, off.positions, off.velocities, off.accelerations) / jerk).max() > 1.2
    print(f"rectangle, jerk x{share}: {plain.timing.duration:.3f} s -> {plan.timing.duration:.3f} s")


def p_chain(robot):
    return MotionPlanner(robot, PathConfig(robot="panda")).solver().fk.arrays()


def test_blended_rectangle_cruises_at_the_tool_speed(panda):
    """A tool-speed-limited path keeps its programmed speed within +-1 % while cruising, jerk-limited."""
    jerk = np.array(PANDA_JERK)
    p = planner(panda, jerk, max_cartesian_speed=0.1)
    plan = p.plan(waypoint_program(rectangle(panda), 0.03), panda.home())
    assert plan.success
    assert plan.timing.peak_tool_speed == pytest.approx(0.1, rel=1e-2)
    assert plan.timing.peak_tool_speed <= 0.1 * (1 + 1e-3)
    assert plan.timing.played_stretch == 1.0            # no uniform slow-down: the cruise is the programmed speed
    # the tool's speed on the played trajectory over the long straight edge (0.3 m at 0.1 m/s): within 1 %
    from robokin_ros.core.path.deviation import controller_positions
    chain = p_chain(panda)
    t = np.arange(0.0, plan.trajectory.duration, 1e-3)
    from robokin_ros.core.path.chain import chain_poses
    tool = chain_poses(chain, controller_positions(plan.trajectory, t))[1]
    speed = np.linalg.norm(np.diff(tool, axis=0), axis=1) / 1e-3
    assert speed.max() <= 0.1 * 1.01
    cruise = speed >= 0.1 * 0.99                        # within 1 % of the programmed speed
    length = plan.path_ik.path.length
    assert cruise.sum() * 1e-3 >= 0.8 * length / 0.1, (cruise.sum() * 1e-3, length)


@pytest.mark.parametrize("kind", ["fine", "zoned"])
@pytest.mark.parametrize("share", [1.0, 0.1])
def test_pick_and_place_within_jerk(panda, kind, share):
    """The 20-move pick-and-place, exact stops (MoveJ moves timed along their line) and zones."""
    jerk = np.array(PANDA_JERK) * share
    program = pick_place(panda, kind)
    plain = planner(panda).plan(program, panda.home())
    plan = planner(panda, jerk).plan(program, panda.home())
    assert plan.success, plan.message
    limits = planner(panda).limits()
    assert_played_within(plan.trajectory, jerk, limits.velocity, limits.acceleration)
    assert plan.max_position_deviation <= 1e-4
    assert plan.timing.played_jerk_ratio <= 1 + TOLERANCE
    ratio = plan.cycle_time / plain.cycle_time
    print(f"pick-and-place {kind}, jerk x{share}: {plain.cycle_time:.3f} s -> {plan.cycle_time:.3f} s ({ratio:.3f}x)")
    if share == 1.0:
        assert ratio <= 1.15


def test_motion_limits_default_jerk_is_off(panda):
    limits = planner(panda).limits()
    assert isinstance(limits, MotionLimits) and np.all(np.isinf(limits.jerk))


@pytest.mark.parametrize("profile", ["trapezoid", "quintic"])
@pytest.mark.parametrize("delta", [(1.0, 0.5, -0.3), (0.01, 0.002, 0.0), (2.0, 1.0, 1.0)])
def test_joint_move_s_curve_is_played_exactly(profile, delta):
    """A MoveJ between exact stops within v, a and jerk: the averaged trapezoid has points at its breakpoints, so the
    controller's quintic plays it exactly: the binding joint reaches its jerk limit and no more (a textbook S-curve
    property), finite differences at 1 kHz agree."""
    from robokin_ros.core.trajectory.profiles import joint_move
    v, a, j = np.array([2.0, 2.0, 2.0]), np.array([15.0, 7.5, 10.0]), np.array([750.0, 375.0, 500.0])
    move = joint_move(np.zeros(3), np.array(delta), v, a, profile, 100.0, None, True, jerk=j)
    args = (move.times, move.positions, move.velocities, move.accelerations)
    exact = played_jerk_peaks(*args).jerk
    assert np.all(exact <= j * (1 + 1e-9))
    if profile == "trapezoid":
        assert (exact / j).max() == pytest.approx(1.0, rel=1e-6)
    sampled = np.abs(sampled_jerk(*args).jerk).max(axis=0)
    assert np.all(sampled <= j * (1 + 1e-6))
    peaks = spline_peaks(*args)
    assert np.all(peaks.velocity <= v * (1 + 1e-9)) and np.all(peaks.acceleration <= a * (1 + 1e-9))
    assert move.positions[-1] == pytest.approx(np.array(delta), abs=1e-12)
    assert np.all(move.velocities[[0, -1]] == 0.0) and np.all(move.accelerations[[0, -1]] == 0.0)


def test_approach_movej_within_jerk(panda):
    """A waypoint path from away from its start: the approach MoveJ and the path, one trajectory within the jerk."""
    jerk = np.array(PANDA_JERK) * 0.1
    from robokin_ros.core.program.moves import Approach
    p = planner(panda, jerk)
    q0 = panda.home() + np.array([0.2, -0.1, 0.1, 0.1, 0.0, 0.1, 0.0])
    plan = p.plan(waypoint_program(rectangle(panda)[:3], 0.03, approach=Approach.JOINT), q0)
    assert plan.success, plan.message
    limits = p.limits()
    assert_played_within(plan.trajectory, jerk, limits.velocity, limits.acceleration)


def test_plan_path_prints_the_peak_jerk_share(tmp_path, capsys):
    """plan_path with a jerk config: the program report says the peak jerk as a share of the limit; without one the
    report has no such line."""
    from robokin_ros.tools.plan_path import main
    config = tmp_path / "jerk.yaml"
    config.write_text("path_ik_node:\n  ros__parameters:\n    max_joint_acceleration: [" + ", ".join(map(str, ACC))
                      + "]\n    max_joint_jerk: [" + ", ".join(str(j / 10) for j in PANDA_JERK) + "]\n")
    program = str(ROOT / "examples" / "programs" / "pick_place_zoned.yaml")
    assert main(["--config", str(config), program, "--out", str(tmp_path / "out")]) == 0
    line = [s for s in capsys.readouterr().out.splitlines() if s.startswith("peak jerk")]
    assert len(line) == 1 and "% of the limit" in line[0]
    share = float(line[0].split()[2])
    assert 50.0 <= share <= 100.0 * (1 + TOLERANCE)
    plain = tmp_path / "plain.yaml"
    plain.write_text("path_ik_node:\n  ros__parameters:\n    max_joint_acceleration: [" + ", ".join(map(str, ACC))
                     + "]\n")
    assert main(["--config", str(plain), program, "--out", str(tmp_path / "plain")]) == 0
    assert "peak jerk" not in capsys.readouterr().out


def test_tool_jerk_is_bounded_on_tool_speed_limited_paths(panda):
    """max_cartesian_jerk / max_cartesian_angular_jerk with joint jerk limits on a tool-speed-limited rectangle: the
    tool's jerk on the played trajectory (FK of the controller's quintic at 1 kHz, third differences) within them;
    a bound below what the joint limits alone give makes the plan slower, not wrong."""
    from robokin_ros.core.path.tool_jerk import played_tool_jerk
    jerk = np.array(PANDA_JERK)
    waypoints = waypoint_program(rectangle(panda), 0.03)
    free = planner(panda, jerk, max_cartesian_speed=0.25).plan(waypoints, panda.home())
    chain = MotionPlanner(panda, PathConfig(robot="panda")).solver().fk.arrays()
    measured = played_tool_jerk(free.trajectory, chain)
    assert np.isnan(free.timing.played_tool_jerk_ratio)
    bound = 0.5 * measured.linear
    plan = planner(panda, jerk, max_cartesian_speed=0.25, max_cartesian_jerk=bound).plan(waypoints, panda.home())
    assert plan.success, plan.message
    bounded = played_tool_jerk(plan.trajectory, chain)
    assert bounded.linear <= bound * (1 + 2e-3)
    assert plan.timing.played_tool_jerk_ratio == pytest.approx(bounded.linear / bound, rel=1e-6)
    assert plan.timing.max_position_deviation <= 1e-4 and plan.timing.peak_tool_speed <= 0.25 * (1 + 1e-3)
    limits = planner(panda).limits()
    assert_played_within(plan.trajectory, jerk, limits.velocity, limits.acceleration)
    print(f"tool jerk {measured.linear:.1f} m/s^3 -> {bounded.linear:.1f} (bound {bound:.1f}); "
          f"{free.timing.duration:.3f} s -> {plan.timing.duration:.3f} s")


def test_an_absurdly_low_jerk_limit_is_refused_naming_the_joint(panda):
    """A jerk limit whose acceleration ramp would take minutes (1 rad/s^3 for a 7.5 rad/s^2 joint) is refused when
    the planner is made (path_ik_node at start-up), naming the joint and the smallest value allowed; nothing else
    changes (the other joints' limits are fine)."""
    from robokin_ros.core.errors import ConfigError
    jerk = list(PANDA_JERK)
    jerk[1] = 1.0
    with pytest.raises(ConfigError, match=r"1 rad/s\^3 for panda_joint2 .* 15 s ramp.*>= 1.5 rad/s\^3"):
        planner(panda, jerk)
    with pytest.raises(ConfigError, match="panda_joint1"):
        MotionPlanner(panda, PathConfig(robot="panda", max_joint_acceleration=ACC, default_joint_jerk=2.0))


def test_smooth_joint_blend_has_no_curvature_at_its_ends():
    """The zone blend next to a MoveJ with jerk limits: tangent to both lines, curvature 0 at both ends (second
    differences of its samples in arc length vanish there, as on the lines), inside the corner's triangle."""
    from robokin_ros.core.program.runs import joint_blend
    before, corner, after = np.array([0.0, 0.0, 0.0]), np.array([0.2, 0.0, 0.0]), np.array([0.2, 0.15, 0.05])
    t_in, t_out = np.array([1.0, 0.0, 0.0]), (after - corner) / np.linalg.norm(after - corner)
    for smooth in (False, True):
        q = np.vstack([before, joint_blend(before, corner, after, t_in, t_out, smooth), after])
        chords = np.linalg.norm(np.diff(q, axis=0), axis=1)
        units = np.diff(q, axis=0) / chords[:, None]
        bend = np.linalg.norm(np.diff(units, axis=0), axis=1) / (0.5 * (chords[:-1] + chords[1:]))   # curvature
        # the curvature extrapolated to each end from the two nearest values (they are one chord apart)
        ends = np.array([2 * bend[0] - bend[1], 2 * bend[-1] - bend[-2]])
        if smooth:
            assert np.all(np.abs(ends) < 0.02 * bend.max()), ends / bend.max()
        else:
            assert np.all(ends > 0.2 * bend.max())         # the cubic starts curving at once: the step it removes
        weights = np.linalg.lstsq(np.column_stack([before - corner, after - corner]), (q - corner).T, rcond=None)[0]
        assert np.all(weights >= -1e-12) and np.all(weights.sum(axis=0) <= 1 + 1e-12)      # in the triangle


def test_move_reports_carry_the_peak_jerk_share(panda):
    """Each move of the pick-and-place reports the played peak jerk / limit while it plays; their largest is the
    plan's; the cycle report prints the column; without jerk limits nothing is measured (nan) nor printed."""
    from robokin_ros.core.program.result import cycle_report_text
    jerk = np.array(PANDA_JERK) * 0.1
    plan = planner(panda, jerk).plan(pick_place(panda, "zoned"), panda.home())
    shares = np.array([m.peak_jerk_share for m in plan.moves])
    assert np.all(np.isfinite(shares)) and np.all(shares <= 1 + TOLERANCE)
    assert shares.max() == pytest.approx(plan.timing.played_jerk_ratio, rel=1e-9)
    t = plan.trajectory
    worst = plan.moves[int(shares.argmax())]
    inside = (t.times >= worst.start_time - 1e-9) & (t.times <= worst.end_time + 1e-9)
    assert played_jerk_peaks(t.times[inside], t.positions[inside], t.velocities[inside],
                             t.accelerations[inside]).jerk.max() > 0.0
    assert "jerk [%]" in cycle_report_text(plan)
    plain = planner(panda).plan(pick_place(panda, "zoned"), panda.home())
    assert all(np.isnan(m.peak_jerk_share) for m in plain.moves) and "jerk [%]" not in cycle_report_text(plain)
