"""What a trajectory must pass before robokin sends it (core/trajectory/outgoing_check.py): the peaks of the spline a
joint_trajectory_controller plays through the points, checked against the joint limits, and every kind of trajectory
robokin plans passing that check (path with stops, approach moves, a motion program, stops)."""
import re

import numpy as np
import pytest
from panda_paths import PANDA_ACC, offsets

from robokin_ros.core.trajectory.controller_rules import PointFacts, TrajectoryFacts
from robokin_ros.core.trajectory.outgoing_check import (
    LIMIT_TOLERANCE,
    _derivative,
    _peak,
    _value,
    interval_peaks,
    interval_polynomials,
    limit_rejection,
    outgoing_rejection,
    spline_peaks,
)
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.trajectory.profiles import joint_move, lspb_eval, lspb_profile
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays
from robokin_ros.core.trajectory.stopping import plan_stop
from robokin_ros.core.program.moves import Approach, MotionProgram, Move, MoveKind, waypoint_program
from robokin_ros.core.program.planner import MotionPlanner


def facts(trajectory, names=None):
    points = [PointFacts(p, v, a, [], float(t)) for t, p, v, a in
              zip(trajectory.times, trajectory.positions, trajectory.velocities, trajectory.accelerations)]
    return TrajectoryFacts(list(names or trajectory.joint_names), points, 0)


def test_quintic_peaks_are_the_polynomial_extrema():
    """Points sampled from one quintic polynomial: the controller's quintic is that polynomial, and the peaks are
    its extrema (found between the points, not at them)."""
    c = np.array([0.0, 0.3, -1.0, 2.0, -1.5, 0.4])                        # q(t), t in [0, 2]
    q = np.polynomial.Polynomial(c)
    t = np.array([0.0, 0.7, 2.0])
    peaks = spline_peaks(t, q(t)[:, None], q.deriv(1)(t)[:, None], q.deriv(2)(t)[:, None])
    dense = np.linspace(0.0, 2.0, 200001)
    assert peaks.interpolation == "quintic"
    assert peaks.velocity[0] == pytest.approx(np.abs(q.deriv(1)(dense)).max(), rel=1e-9)
    assert peaks.acceleration[0] == pytest.approx(np.abs(q.deriv(2)(dense)).max(), rel=1e-9)
    at = dense[np.abs(q.deriv(2)(dense)).argmax()]
    assert peaks.acceleration_time[0] == pytest.approx(at, abs=1e-4)


def _sampled_peaks(times, positions, velocities, accelerations):
    """The numpy form the compiled one replaced for quintics: 9 samples per interval, the largest refined by Newton
    steps on the derivative (core/trajectory/outgoing_check._peak, still used for cubics)."""
    c, _ = interval_polynomials(times, positions, velocities, accelerations)
    h = np.diff(times)[:, None]
    velocity = _derivative(c) / h
    return _peak(velocity)[0], _peak(_derivative(velocity) / h)[0]


def test_quintic_peaks_are_exact_on_random_splines():
    """The compiled peaks (core/trajectory/quintic_peaks.py) on random quintic splines: never below a dense sampling,
    equal to the numpy form they replaced (to 1e-9) wherever that form found the extremum; where it did not, it was
    below a dense sample (up to 5 % on ~0.5 % of such intervals): the played check could pass an overshoot it missed."""
    rng = np.random.default_rng(0)
    missed = 0
    for _ in range(60):
        k, m = rng.integers(2, 30), rng.integers(1, 8)
        t = np.cumsum(rng.uniform(1e-3, 0.05, k))
        p, v, a = (rng.normal(size=(k, m)) * rng.uniform(*scale) for scale in ((1e-4, 1), (1e-3, 3), (1e-2, 30)))
        exact = interval_peaks(t, p, v, a)
        c, _ = interval_polynomials(t, p, v, a)
        h = np.diff(t)[:, None]
        s = np.linspace(0.0, 1.0, 4001)[:, None, None]
        velocity = _derivative(c) / h
        for peak, polynomial, sampled in zip((exact.velocity, exact.acceleration),
                                             (velocity, _derivative(velocity) / h), _sampled_peaks(t, p, v, a)):
            dense = np.abs(_value(polynomial[:, None], s)).max(axis=0)                 # (k - 1, m)
            assert np.all(peak >= dense * (1.0 - 1e-12))
            assert np.all(peak >= sampled * (1.0 - 1e-12))
            found = sampled >= dense * (1.0 - 1e-12)
            assert peak[found] == pytest.approx(sampled[found], rel=1e-9)
            missed += int((~found).sum())
    assert missed > 0          # the sampled form's misses are real: the exact one is what keeps the check sound


def test_quintic_peaks_of_non_finite_points_fail_the_check():
    t = np.array([0.0, 0.1, 0.2])
    p = np.array([[0.0], [np.nan], [0.1]])
    peaks = interval_peaks(t, p, np.zeros((3, 1)), np.zeros((3, 1)))
    assert np.isnan(peaks.velocity).all() and np.isnan(peaks.acceleration).all()
    move = facts(JointTrajectoryArrays(("j",), t, p, np.zeros((3, 1)), np.zeros((3, 1))))
    assert limit_rejection(move, ["j"], [1.0], [1.0]) is not None


def test_cubic_and_linear_interpolation():
    """Positions and velocities: the cubic Hermite (its acceleration is linear per interval); positions only:
    straight lines, whose velocity steps are infinite accelerations."""
    t = np.array([0.0, 1.0])
    cubic = spline_peaks(t, np.array([[0.0], [1.0]]), np.array([[0.0], [0.0]]))
    assert cubic.interpolation == "cubic"
    assert cubic.velocity[0] == pytest.approx(1.5) and cubic.acceleration[0] == pytest.approx(6.0)
    linear = spline_peaks(t, np.array([[0.0], [1.0]]))
    assert linear.interpolation == "linear" and linear.velocity[0] == pytest.approx(1.0)
    assert linear.acceleration[0] == np.inf
    still = spline_peaks(t, np.array([[0.5], [0.5]]))
    assert still.velocity[0] == 0.0 and still.acceleration[0] == 0.0


def test_exact_samples_of_an_acceleration_step_overshoot_on_the_controllers_spline():
    """Why the planners measure the played spline: exact 100 Hz samples of a trapezoid (steps at 0.5 s and 1 s,
    on points) are played with 37 % more acceleration than the profile has."""
    tb, total = lspb_profile(1.0, 2.0)
    t = np.linspace(0.0, total, 151)
    s, sd, sdd = lspb_eval(t, tb, total)
    played = spline_peaks(t, s[:, None], sd[:, None], sdd[:, None])
    assert np.abs(sdd).max() == pytest.approx(2.0)
    assert played.acceleration[0] == pytest.approx(1.374 * 2.0, rel=1e-3)
    # joint_move's points put the steps mid-interval and plan for the limits divided by what remains
    move = joint_move([0.0], [1.0], [1.0], [2.0], for_controller=True)
    fair = spline_peaks(move.times, move.positions, move.velocities, move.accelerations)
    assert fair.acceleration[0] == pytest.approx(2.0, rel=1e-3) and move.duration <= 1.08 * total


def test_limit_rejection_names_the_joint_the_value_and_the_rule():
    trajectory = joint_move(np.zeros(2), np.array([1.0, 0.2]), np.array([1.0, 1.0]), np.array([2.0, 2.0]),
                            rate_hz=100.0, joint_names=("a", "b"), for_controller=True)
    assert limit_rejection(facts(trajectory), ["a", "b"], [1.0, 1.0], [2.0, 2.0]) is None
    rejection = limit_rejection(facts(trajectory), ["b", "a"], [1.0, 0.5], [2.0, 2.0])   # controller order
    assert rejection is not None and not rejection.by_jtc
    assert re.search(r"joint 'a' reaches velocity 0\.99\d+ rad/s at t = [\d.]+ s on the quintic spline a "
                     r"joint_trajectory_controller plays through the points, 2 x its limit 0\.5 rad/s",
                     rejection.message)
    slow = limit_rejection(facts(trajectory), ["a", "b"], [1.0, 1.0], [1.5, 2.0])
    assert "acceleration" in slow.message and f"tolerance {LIMIT_TOLERANCE:g}" in slow.message
    # the controller's rules come first
    late = facts(trajectory)._replace(stamp=10**9)                                      # [ns]: 1 s
    assert outgoing_rejection(late, ["a", "b"], 100 * 10**9, [1.0, 1.0], [2.0, 2.0]).by_jtc


def _rest_to_rest(distances, durations, k=21):
    """Each joint's minimum-jerk move (textbook: peak jerk 60 d / T^3 at its ends, peak acceleration
    10 d / (sqrt(3) T^2)), points at a common rate, holding after its own end."""
    end = max(durations)
    t = np.linspace(0.0, end, k)
    q, v, a = (np.zeros((k, len(distances))) for _ in range(3))
    for j, (d, duration) in enumerate(zip(distances, durations)):
        s = np.minimum(t / duration, 1.0)
        q[:, j] = d * (10 * s**3 - 15 * s**4 + 6 * s**5)
        v[:, j] = d * (30 * s**2 - 60 * s**3 + 30 * s**4) / duration
        a[:, j] = d * (60 * s - 180 * s**2 + 120 * s**3) / duration**2
    return JointTrajectoryArrays(("a", "b"), t, q, v, a)


def test_jerk_rejection_names_the_joint_with_the_too_fast_acceleration_ramp():
    """Joint 'b' ramps its acceleration 4 x faster than it may: refused with its jerk (60 d / T^3 = 240 rad/s^3 at
    t = 0) against its limit; within the limits, or with no jerk rule (the default), the trajectory passes."""
    trajectory = facts(_rest_to_rest([0.1, 0.5], [1.0, 0.5]))                       # jerk 6 and 240 rad/s^3
    v_max, a_max = [5.0, 5.0], [20.0, 20.0]
    assert limit_rejection(trajectory, ["a", "b"], v_max, a_max) is None
    assert outgoing_rejection(trajectory, ["a", "b"], 0, v_max, a_max) is None
    assert limit_rejection(trajectory, ["a", "b"], v_max, a_max, j_max=[6.0, 240.0]) is None
    assert limit_rejection(trajectory, ["a", "b"], v_max, a_max, j_max=[np.inf, 240.0]) is None
    rejection = outgoing_rejection(trajectory, ["b", "a"], 0, v_max, a_max, j_max=[60.0, 100.0])  # controller order
    assert rejection is not None and not rejection.by_jtc and rejection.rule == "joint jerk limits"
    assert re.search(r"joint 'b' reaches jerk 240 rad/s\^3 at t = 0\.000 s on the quintic spline a "
                     r"joint_trajectory_controller plays through the points .*, 4 x its limit 60 rad/s\^3",
                     rejection.message)
    # just above the limit, beyond the tolerance: refused; the slow joint 'a' too when its own limit is below 6
    assert limit_rejection(trajectory, ["a", "b"], v_max, a_max, j_max=[10.0, 239.0]) is not None
    slow = limit_rejection(trajectory, ["a", "b"], v_max, a_max, j_max=[5.0, 300.0])
    assert "joint 'a' reaches jerk 6 rad/s^3" in slow.message
    # velocity and acceleration come first
    assert "acceleration" in limit_rejection(trajectory, ["a", "b"], v_max, [20.0, 5.0], j_max=[1.0, 1.0]).message


@pytest.fixture(scope="module")
def planner(panda):
    return MotionPlanner(panda, PathConfig(max_joint_acceleration=PANDA_ACC))


def test_everything_the_planners_make_is_played_within_the_limits(panda, planner):
    """Sharp corners (rest-to-rest sections joined), a blended rectangle, MoveJ / MoveL approaches, a motion
    program and both stops: the controller's spline through the points stays within the joint limits."""
    limits = planner.limits()
    v_max, a_max = limits.velocity, limits.acceleration
    q0 = panda.home()
    made = {
        "sharp": planner.plan(waypoint_program(offsets(panda, [[0.1, 0, 0], [0.1, 0.15, 0], [0, 0.15, -0.1]]), 0.0),
                              q0).trajectory,
        "blended": planner.plan(waypoint_program(offsets(panda, [[0.1, 0, 0], [0.1, 0.15, 0], [0, 0.15, 0], [0, 0, 0]]),
                                                 0.03), q0).trajectory,
        "movej": planner.plan(waypoint_program(offsets(panda, [[0.2, 0.1, -0.1], [0.2, 0, -0.1]]), 0.0,
                                               Approach.JOINT), q0).trajectory,
        "movel": planner.plan(waypoint_program(offsets(panda, [[0.2, 0.1, -0.1], [0.2, 0, -0.1]]), 0.0,
                                               Approach.LINEAR), q0, velocity_scaling=0.5).trajectory,
    }
    T = panda.fk(q0)
    program = MotionProgram((Move(MoveKind.JOINT, joints=q0 + 0.3), Move(MoveKind.LINEAR, pose=offsets(panda, [[
        0.1, 0, 0]])[0], speed=0.2, zone=0.02), Move(MoveKind.LINEAR, pose=T, zone=0.0)))
    made["program"] = planner.plan(program, q0).trajectory
    long = made["blended"]
    middle = 0.5 * long.duration
    made["path stop"] = plan_stop(long.joint_names, long, middle, None, None, a_max, 0.25).trajectory
    k = int(np.searchsorted(long.times, middle))
    made["velocity stop"] = plan_stop(long.joint_names, None, 0.0, long.positions[k], long.velocities[k], a_max,
                                      0.25).trajectory
    for name, trajectory in made.items():
        rejection = limit_rejection(facts(trajectory), panda.joint_names, v_max, a_max)
        assert rejection is None, f"{name}: {rejection}"
        played = spline_peaks(trajectory.times, trajectory.positions, trajectory.velocities, trajectory.accelerations)
        assert (played.acceleration / a_max).max() > 0.5, name                # they do use the limits
