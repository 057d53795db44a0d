"""Trajectory following (sim_robot's arithmetic): interpolation identities, limits, rejection reasons."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.sim.joints import SimulatedJoints
from robokin_ros.core.sim.trajectory_follower import (
    TrajectoryFollower,
    TrajectoryPoints,
    check_trajectory,
    trajectory_start,
)

LOWER, UPPER = np.array([-2.0, -1.0]), np.array([2.0, 1.0])
NAMES = ("a", "b")


def _velocity(follower: TrajectoryFollower, t: float, h: float = 1e-7) -> np.ndarray:
    """Central difference of the sampled positions at `t` [s]: the velocity the follower commands."""
    return (follower.sample(t + h) - follower.sample(t - h)) / (2 * h)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_hermite_passes_through_points_with_their_velocities(seed):
    rng = np.random.default_rng(seed)
    times = np.cumsum(rng.uniform(0.05, 0.5, 4))
    points = TrajectoryPoints(times, rng.uniform(-1, 1, (4, 2)), rng.uniform(-1, 1, (4, 2)))
    start_p, start_v = rng.uniform(-1, 1, 2), rng.uniform(-1, 1, 2)
    follower = TrajectoryFollower(points, start_p, start_v)
    np.testing.assert_allclose(follower.sample(0.0), start_p)
    for i, t in enumerate(times[:-1]):
        np.testing.assert_allclose(follower.sample(t), points.positions[i], atol=1e-12)
        # the velocity just before and just after each point is the point's velocity (C1 continuity);
        # the difference step stays on one side of the point
        for s in (t - 4e-9, t + 4e-9):
            np.testing.assert_allclose(_velocity(follower, s, 2e-9), points.velocities[i], atol=1e-4)
    # and it is continuous at the start too: the follower leaves with the start velocity
    np.testing.assert_allclose(_velocity(follower, 4e-9, 2e-9), start_v, atol=1e-4)


def _acceleration(follower: TrajectoryFollower, t: float, h: float = 1e-5) -> np.ndarray:
    return (follower.sample(t + h) - 2 * follower.sample(t) + follower.sample(t - h)) / (h * h)


def test_quintic_with_accelerations_from_the_accepted_state_at_zero_acceleration():
    """JTC's splines: points with accelerations are played as quintics (position, velocity and acceleration at each
    point), and the segment from the accepted state starts at zero acceleration (no acceleration state interface):
    a trajectory that breaks into a motion accelerating at a makes the command overshoot a by 37 % there."""
    a = 2.0
    times = np.array([0.25, 0.5])
    positions = np.array([[0.5 * a * t * t, 0.0] for t in times + 0.25])         # x = a t^2 / 2, joined at t = 0.25
    points = TrajectoryPoints(times, positions, np.array([[a * t, 0.0] for t in times + 0.25]),
                              np.full((2, 2), [a, 0.0]))
    follower = TrajectoryFollower(points, np.array([0.5 * a * 0.25 ** 2, 0.0]), np.array([a * 0.25, 0.0]))
    for t in (0.3, 0.4, 0.45):        # between two points of a true parabola: its acceleration exactly
        np.testing.assert_allclose(_acceleration(follower, t)[0], a, rtol=1e-4)
    assert abs(_acceleration(follower, 1e-4)[0]) < 0.01 * a       # the blend starts at zero acceleration
    peak = max(_acceleration(follower, t)[0] for t in np.linspace(0.01, 0.24, 47))
    assert peak == pytest.approx(1.37 * a, rel=0.01)
    cubic = TrajectoryFollower(TrajectoryPoints(times, positions, points.velocities),
                               follower.sample(0.0), np.array([a * 0.25, 0.0]))
    np.testing.assert_allclose(_acceleration(cubic, 0.1)[0], a, rtol=1e-4)   # a cubic matches a parabola


def test_a_trajectory_stamped_in_the_past_is_played_from_the_clock_not_blended(panda):
    """JTC samples a trajectory whose first points lie in the past at the clock's time, between its own points;
    the accepted state is used only before the first point (here: never)."""
    points = TrajectoryPoints(np.array([0.0, 1.0, 2.0]), np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]]),
                              np.array([[1.0, 0.0]] * 3), np.zeros((3, 2)))
    follower = TrajectoryFollower(points, np.array([5.0, 5.0]), np.zeros(2), accepted_at=1.5)
    np.testing.assert_allclose(follower.sample(1.5), [1.5, 0.0])
    # through SimulatedJoints: stamped 1.5 s ago with its first point 0.5 s ahead: the blend from the arm at rest
    # starts now (as JTC's state before the trajectory), not at the stamp (the arm would jump 3/4 of the way)
    q0, e4 = panda.home(), np.eye(7)[3]
    joints = SimulatedJoints(panda, q0, now=0.0)
    joints.follow(TrajectoryPoints(np.array([2.0, 3.0]), q0 + np.outer([0.1, 0.2], e4), np.zeros((2, 7)),
                                   np.zeros((2, 7))), start=-1.5)
    joints.step(0.05)
    s = 0.05 / 0.5
    np.testing.assert_allclose(joints.positions, q0 + 0.1 * (10 * s**3 - 15 * s**4 + 6 * s**5) * e4, atol=1e-12)


def test_linear_without_velocities_and_hold_after_the_end():
    points = TrajectoryPoints(np.array([1.0, 2.0]), np.array([[1.0, 0.0], [1.0, 0.5]]), None)
    follower = TrajectoryFollower(points, np.zeros(2), np.array([5.0, 5.0]))   # start velocity unused
    np.testing.assert_allclose(follower.sample(0.25), [0.25, 0.0])
    np.testing.assert_allclose(_velocity(follower, 0.25), [1.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(follower.sample(1.5), [1.0, 0.25])
    for t in (2.0, 2.5, 10.0):               # held exactly after the end
        np.testing.assert_array_equal(follower.sample(t), [1.0, 0.5])


@pytest.mark.parametrize("times, positions, words", [
    ([], np.zeros((0, 2)), "no points"),
    ([0.1, 0.1], np.zeros((2, 2)), "strictly increasing: point 1 at 0.100000 s follows point 0"),
    ([-0.1], np.zeros((1, 2)), "finite and >= 0"),
    ([0.1], np.array([[0.0, np.nan]]), "point 0 has a non-finite position nan for joint 'b'"),
    ([0.1, 0.2], np.array([[0.0, 0.0], [0.0, 1.5]]), "point 1 puts joint 'b' at 1.500000, outside its limits"),
])
def test_invalid_trajectories_name_the_problem(times, positions, words):
    with pytest.raises(InvalidInputError) as err:
        check_trajectory(TrajectoryPoints(np.array(times, float), positions, None), LOWER, UPPER, NAMES)
    assert words in str(err.value)


def test_sim_joints_respect_velocity_and_position_limits(panda):
    joints = SimulatedJoints(panda, panda.home(), now=0.0)
    vmax = panda.limits.velocity
    joints.command_velocities(10 * vmax)                   # asks ten times the limit
    report = joints.step(0.01)
    np.testing.assert_allclose(joints.velocities, vmax)
    assert report.velocity_limited == panda.joint_names
    for k in range(2, 400):
        joints.step(0.01 * k)
    np.testing.assert_allclose(joints.positions, panda.limits.upper)   # stopped at the upper limits
    assert set(joints.step(4.0).position_limited) == set(panda.joint_names)


def test_sim_joints_follow_a_trajectory_and_hold_it(panda):
    joints = SimulatedJoints(panda, panda.home(), now=0.0)
    goal = panda.home() + 0.2
    joints.follow(TrajectoryPoints(np.array([1.0]), goal[None, :], None), start=0.0)
    for k in range(1, 151):
        joints.step(0.01 * k)
        if k == 50:
            np.testing.assert_allclose(joints.positions, panda.home() + 0.1, atol=1e-9)   # linear, halfway
            np.testing.assert_allclose(joints.velocities, 0.2, atol=1e-9)
    np.testing.assert_allclose(joints.positions, goal, atol=1e-12)
    np.testing.assert_array_equal(joints.velocities, np.zeros(panda.n))
    joints.step(3.0)                                       # done: held, not continued
    np.testing.assert_allclose(joints.positions, goal, atol=1e-12)
    np.testing.assert_array_equal(joints.velocities, np.zeros(panda.n))


def test_invalid_trajectory_keeps_the_active_command(panda):
    joints = SimulatedJoints(panda, panda.home(), now=0.0)
    joints.command_velocities(np.full(panda.n, 0.1))
    bad = TrajectoryPoints(np.array([0.5]), np.full((1, panda.n), 9.0), None)
    with pytest.raises(InvalidInputError, match="panda_joint1"):
        joints.follow(bad, start=0.0)
    joints.step(0.1)
    np.testing.assert_allclose(joints.velocities, 0.1)


def test_stamped_stream_of_windows_is_followed_without_velocity_ripple(panda):
    """The servo stamps each window with the time of its first point; the simulated controller then samples
    the same motion whatever the latency of each message (jittery latency must not become jerk)."""
    from robokin_ros.core.servo.window import window_times
    rng = np.random.default_rng(4)
    q0, v, dt = panda.home(), np.full(panda.n, 0.1), 0.002
    times = window_times(dt, 0.05)
    sim = SimulatedJoints(panda, q0, 0.0)
    events = [(k * dt + 0.002 + rng.uniform(0.0, 0.0015), "msg", k * dt) for k in range(400)]
    events += [(k * dt + 0.0007, "tick", None) for k in range(400)]
    velocities = []
    for t, kind, stamp in sorted(events):
        sim.step(t)
        if kind == "msg":
            start = q0 + v * stamp
            sim.follow(TrajectoryPoints(times, start + np.outer(times, v), np.tile(v, (len(times), 1))), stamp)
        else:
            velocities.append(sim.velocities.copy())
    np.testing.assert_allclose(np.array(velocities[20:]), 0.1, atol=1e-6)


def test_trajectory_starting_in_the_future_is_approached_not_jumped_to(panda):
    q0 = panda.home()
    sim = SimulatedJoints(panda, q0, 0.0)
    target = q0 + 0.01
    sim.step(1.0)
    sim.follow(TrajectoryPoints(np.array([0.0, 0.1]), np.vstack([target, target]), None), start=1.1)
    sim.step(1.05)                              # halfway to the start time: halfway to the first point
    np.testing.assert_allclose(sim.positions, q0 + 0.005, atol=1e-9)
    sim.step(1.2)
    np.testing.assert_allclose(sim.positions, target, atol=1e-12)


def test_sim_joints_start_at_home_when_no_initial_positions_are_given(panda):
    np.testing.assert_array_equal(SimulatedJoints(panda, (), 0.0).positions, panda.home())
    q = panda.home() + 0.1
    np.testing.assert_array_equal(SimulatedJoints(panda, tuple(q), 0.0).positions, q)


def test_trajectory_start_maps_the_stamp_onto_the_receive_clock():
    assert trajectory_start(5.0, 0, 123_000_000_000) == 5.0              # zero stamp: start now
    assert trajectory_start(5.0, 123_250_000_000, 123_000_000_000) == pytest.approx(5.25)   # 0.25 s in the future
    assert trajectory_start(5.0, 122_500_000_000, 123_000_000_000) == pytest.approx(4.5)    # already started


def test_tracking_samples_compare_the_sample_with_the_state_before_the_step(panda):
    """What the controller judges each cycle: desired vs the state read at the start of the cycle, the first
    sample flagged, and the time relative to the last point."""
    joints = SimulatedJoints(panda, panda.home(), now=0.0)
    goal = panda.home() + 0.2
    joints.follow(TrajectoryPoints(np.array([1.0]), goal[None, :], None), start=0.0)
    first = joints.step(0.5).tracking
    np.testing.assert_allclose(first.desired, panda.home() + 0.1, atol=1e-12)
    np.testing.assert_array_equal(first.actual, panda.home())
    assert first.first_sample and first.before_last_point and first.time_past_last_point == pytest.approx(-0.5)
    second = joints.step(1.25).tracking
    np.testing.assert_allclose(second.actual, panda.home() + 0.1, atol=1e-12)
    assert not second.first_sample and not second.before_last_point
    assert second.time_past_last_point == pytest.approx(0.25)
    joints.hold()
    assert joints.step(1.5).tracking is None
    np.testing.assert_allclose(joints.positions, second.desired, atol=1e-12)     # held where it was


def test_velocity_scale_slows_the_arm(panda):
    joints = SimulatedJoints(panda, panda.home(), now=0.0, velocity_scale=0.5)
    joints.command_velocities(panda.limits.velocity)
    joints.step(0.01)
    np.testing.assert_allclose(joints.velocities, 0.5 * panda.limits.velocity)
