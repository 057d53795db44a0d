"""Velocity IK: task tracking, null space, limits, damping, singularities, locking, input errors."""
import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robokin_ros.core.dls import damping_factor, symmetric_eigen
from robokin_ros.core.errors import ConfigError, InvalidInputError
from robokin_ros.core.limits import braking_speed
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.singularity import direction_guard
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.velocity_ik import DEBOUNCE_STEPS, VelocityIk
from robokin_ros.core.servo.window import bound_hold

# Limits so large they never bind (a config takes finite limits only). With an acceleration a >> d / dt^2 the
# braking speed of `limits.braking_speed` is d / dt to a relative d / (a dt^2), as with no acceleration limit.
NEVER_BINDS = 1e9
PANDA_ACCELERATION = np.array([15, 7.5, 10, 12.5, 15, 20, 20.0])
MAX_DIRECTION_TOLERANCE = ServoConfig.__dataclass_fields__["locked_direction_tolerance"].metadata["le"]


@pytest.fixture(scope="module")
def so101():
    return RobotModel.from_name("so101")


def config(robot, **kw) -> ServoConfig:
    """The IK settings of these tests: ServoConfig defaults, but no acceleration limit unless one is given."""
    kw = {"max_joint_acceleration": (NEVER_BINDS,) * robot.n} | kw
    return ServoConfig(**{k: tuple(map(float, v)) if isinstance(v, np.ndarray) else v for k, v in kw.items()})


def unlimited(robot, **kw):
    """Velocity IK without velocity or acceleration limits (position limits stay)."""
    return VelocityIk(robot, config(robot, max_joint_velocity=(NEVER_BINDS,) * robot.n, **kw))


def assert_tracks(J, dq, twist, rtol=1e-9):
    """The tracking assertion every test uses: J dq equals the twist to `rtol` relative."""
    err = np.linalg.norm(J @ dq - twist)
    assert err <= rtol * np.linalg.norm(twist), f"tracking error {err:.3e} for |twist| {np.linalg.norm(twist):.3e}"


def stopping_distance(v, a, dt):
    """Distance covered holding v for one period dt, then braking at a to rest (the servo window's motion)."""
    return v * dt + v * v / (2.0 * a)


def braking_bound(d, a, dt):
    """Largest v with stopping_distance(v) <= d, by bisection (independent of limits.braking_speed)."""
    lo, hi = 0.0, min(d / dt, np.sqrt(2 * a * d) + a * dt)     # stopping takes at least v^2 / 2a
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if stopping_distance(mid, a, dt) <= d else (lo, mid)
    return lo


def random_twist(rng, linear=0.2, angular=0.5):
    return np.concatenate((rng.uniform(-linear, linear, 3), rng.uniform(-angular, angular, 3)))


def well_conditioned(robot, rng, margin=0.3, sigma=0.08):
    """A random configuration away from limits whose Jacobian's sigma_min exceeds `sigma`."""
    while True:
        q = robot.random_positions(rng, margin)
        if np.linalg.svd(robot.jacobian(q), compute_uv=False)[-1] > sigma:
            return q


# ---- tracking ------------------------------------------------------------------------------------------
@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), name=st.sampled_from(["panda", "ur5"]))
def test_task_is_met_exactly_far_from_singularities(panda, ur5, seed, name):
    robot = {"panda": panda, "ur5": ur5}[name]
    rng = np.random.default_rng(seed)
    q, twist = well_conditioned(robot, rng), random_twist(rng)
    result = unlimited(robot).solve(q, twist, dt=0.002)
    assert result.status == ServoStatus.OK and result.damping == 0.0
    assert_tracks(robot.jacobian(q), result.velocities, twist)


def test_wrong_jacobian_fails_the_tracking_assertion(panda):
    """Control test: the same assertion with the LOCAL Jacobian (tool axes) must fail."""
    rng = np.random.default_rng(3)
    q, twist = well_conditioned(panda, rng), random_twist(rng)
    dq = unlimited(panda).solve(q, twist, dt=0.002).velocities
    assert_tracks(panda.jacobian(q, reference="local_world_aligned"), dq, twist)
    with pytest.raises(AssertionError, match="tracking error"):
        assert_tracks(panda.jacobian(q, reference="local"), dq, twist)


def test_tracking_agrees_with_finite_difference_of_fk(panda):
    """Independent evidence: integrating dq for a tiny time moves the tool as the twist says."""
    rng = np.random.default_rng(11)
    q, twist = well_conditioned(panda, rng), random_twist(rng)
    dq = unlimited(panda).solve(q, twist, dt=0.002).velocities
    h = 1e-6
    T0, T1 = panda.fk(q), panda.fk(q + h * dq)
    moved = np.concatenate((T1.translation - T0.translation, pin.log3(T1.rotation @ T0.rotation.T))) / h
    np.testing.assert_allclose(moved, twist, atol=1e-5)


def test_so101_axis_mask_tracks_the_masked_axes(so101):
    rng = np.random.default_rng(5)
    q, twist = so101.home(), random_twist(rng, 0.05, 0.2)
    mask = [True, True, True, False, True, True]             # a 5-DOF arm cannot roll about base x here
    result = unlimited(so101).solve(q, twist, dt=0.002, axis_mask=mask)
    rows = np.flatnonzero(mask)
    assert result.damping == 0.0
    assert_tracks(so101.jacobian(q)[rows], result.velocities, twist[rows])
    unmasked = unlimited(so101).solve(q, twist, dt=0.002)
    assert unmasked.sigma_min < 1e-6 and unmasked.damping > 0.0    # 6 rows, 5 joints: always singular
    assert np.all(np.isfinite(unmasked.velocities))


def test_tool_axis_mask_constrains_tool_axes(so101):
    q = so101.home()
    twist = np.array([0.03, -0.02, 0.01, 0.1, 0.2, -0.1])
    mask = [True, False, True, True, True, True]               # tool y left free
    dq = unlimited(so101).solve(q, twist, dt=0.002, axis_mask=mask, axis_frame="tool").velocities
    R = so101.fk(q).rotation
    J = so101.jacobian(q)
    J_tool = np.vstack((R.T @ J[:3], R.T @ J[3:]))
    twist_tool = np.concatenate((R.T @ twist[:3], R.T @ twist[3:]))
    rows = np.flatnonzero(mask)
    assert_tracks(J_tool[rows], dq, twist_tool[rows])


# ---- null space -----------------------------------------------------------------------------------------
@settings(deadline=None, max_examples=30)
@given(seed=st.integers(0, 2**32 - 1), near=st.booleans())
def test_nullspace_never_changes_the_tool_twist(panda, seed, near):
    rng = np.random.default_rng(seed)
    q = panda.random_positions(rng, 0.05)
    if near:                                   # also near the wrist singularity, where damping is active
        q[5] = rng.uniform(0.01, 0.05)
    twist = random_twist(rng)
    plain = unlimited(panda, joint_limit_avoidance_gain=0.0).solve(q, twist, dt=1e-3)
    pushed = unlimited(panda, joint_limit_avoidance_gain=5.0, posture_gain=3.0).solve(q, twist, dt=1e-3)
    assert plain.locked_joints == pushed.locked_joints == ()
    delta = pushed.velocities - plain.velocities
    J = panda.jacobian(q)
    assert np.linalg.norm(J @ delta) <= 1e-9 * max(1.0, np.linalg.norm(delta))


def test_limit_avoidance_zero_in_the_middle_and_pushes_in_the_outer_band(panda):
    ik = unlimited(panda, joint_limit_avoidance_gain=1.0)
    zero = np.zeros(6)
    mid = ik.solve(panda.mid_range(), zero, dt=0.002)
    np.testing.assert_array_equal(mid.velocities, 0.0)
    q = panda.mid_range()
    lo, hi = panda.limits.lower[0], panda.limits.upper[0]
    q[0] = hi - 0.1 * (hi - lo)                  # inside the outer 25 %: pushed back toward the middle
    dq = ik.solve(q, zero, dt=0.002).velocities
    assert dq[0] < 0.0


# ---- limits --------------------------------------------------------------------------------------------
@settings(deadline=None, max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), dt=st.floats(1e-3, 0.05), speed=st.floats(0.01, 3.0),
       edge=st.booleans())
def test_limits_are_never_exceeded(panda, seed, dt, speed, edge):
    rng = np.random.default_rng(seed)
    amax = np.array([15, 7.5, 10, 12.5, 15, 20, 20.0])
    ik = VelocityIk(panda, config(panda, max_joint_acceleration=amax, posture_gain=0.5))
    q = panda.random_positions(rng, 0.0)
    if edge:                                    # put some joints right at or inside the margin
        j = rng.integers(0, panda.n, 3)
        q[j] = np.where(rng.random(3) < 0.5, panda.limits.lower[j], panda.limits.upper[j]) \
            + rng.uniform(-0.02, 0.02, 3) * np.where(q[j] > 0, -1, 1)
        q = np.clip(q, panda.limits.lower, panda.limits.upper)
    prev = rng.uniform(-0.3, 0.3, panda.n) * ik.velocity_limits
    twist = random_twist(rng, speed, 2 * speed)
    result = ik.solve(q, twist, dt=dt, previous_velocities=prev)
    dq = result.velocities
    assert np.all(np.isfinite(dq))
    assert np.all(np.abs(dq) <= ik.velocity_limits * (1 + 1e-12))
    after = q + dq * dt
    assert np.all(after <= np.maximum(q, panda.limits.upper) + 1e-12)
    assert np.all(after >= np.minimum(q, panda.limits.lower) - 1e-12)
    # the acceleration window holds except where the position bound had to win
    accel_ok = np.abs(dq - prev) <= amax * dt * (1 + 1e-9) + 1e-12
    room_lo = np.maximum(q - panda.limits.lower - 0.02, 0.0)
    room_hi = np.maximum(panda.limits.upper - 0.02 - q, 0.0)
    # a room of 1 rad allows >= 3.8 rad/s, above every velocity limit: only nearer joints can bind
    # held for a period plus the window's point slack (window.bound_hold) before braking
    lo_bound = -np.array([braking_bound(d, a, bound_hold(dt)) if d < 1 else np.inf for d, a in zip(room_lo, amax)])
    hi_bound = np.array([braking_bound(d, a, bound_hold(dt)) if d < 1 else np.inf for d, a in zip(room_hi, amax)])
    position_bound = np.isclose(dq, lo_bound, atol=1e-9) | np.isclose(dq, hi_bound, atol=1e-9) \
        | np.isin(panda.joint_names, result.locked_joints)
    assert np.all(accel_ok | position_bound), (dq - prev) / (amax * dt)


def test_velocity_limit_scales_uniformly_and_keeps_direction(panda):
    rng = np.random.default_rng(2)
    q = well_conditioned(panda, rng)
    twist = random_twist(rng, 2.0, 4.0)
    free = unlimited(panda).solve(q, twist, dt=0.002)
    limited = VelocityIk(panda, config(panda)).solve(q, twist, dt=0.002)
    vmax = panda.limits.velocity
    assert limited.status == ServoStatus.VELOCITY_LIMITED
    assert np.max(np.abs(limited.velocities) / vmax) == pytest.approx(1.0)
    np.testing.assert_allclose(limited.velocities, limited.velocity_scale * free.velocities, rtol=1e-12)
    assert_tracks(panda.jacobian(q), limited.velocities, limited.velocity_scale * twist)


def test_acceleration_limit_keeps_direction_when_possible(panda):
    q = panda.home()
    twist = np.array([0.2, 0.0, 0.0, 0.0, 0.0, 0.0])
    amax = np.full(panda.n, 5.0)
    ik = VelocityIk(panda, config(panda, max_joint_acceleration=amax))
    result = ik.solve(q, twist, dt=0.002, previous_velocities=np.zeros(panda.n))
    assert np.max(np.abs(result.velocities)) == pytest.approx(5.0 * 0.002)
    assert_tracks(panda.jacobian(q), result.velocities, result.velocity_scale * twist)


# ---- damping and singularities -------------------------------------------------------------------------
@settings(deadline=None, max_examples=200)
@given(d=st.floats(0.0, 2.0), a=st.floats(0.5, 50.0), dt=st.floats(1e-3, 0.05))
def test_braking_speed_is_the_largest_speed_that_stops_in_time(d, a, dt):
    v = braking_speed(d, a, dt)
    assert stopping_distance(v, a, dt) <= d * (1 + 1e-9) + 1e-15
    assert v == pytest.approx(braking_bound(d, a, dt), rel=1e-9, abs=1e-12)


def test_braking_speed_without_limits_is_one_period_to_the_edge():
    assert braking_speed(0.01, np.inf, 0.002) == pytest.approx(5.0, rel=1e-15)
    assert braking_speed(np.inf, 20.0, 0.002) == np.inf and braking_speed(0.0, 20.0, 0.002) == 0.0
    assert braking_speed(1e-18, 20.0, 0.002) == pytest.approx(5e-16, rel=1e-9)     # no cancellation


@settings(deadline=None, max_examples=300)
@given(v=st.floats(0.0, 5.0), a=st.floats(0.5, 50.0), dt=st.floats(1e-3, 0.05), late=st.integers(0, 5))
def test_braking_speed_on_the_braking_curve_changes_by_at_most_the_limit(v, a, dt, late):
    """The servo's bound agrees with its window (hold v for dt, brake at a to the margin): commanded at its bound,
    and found `late` periods later on that window's braking curve (a late tick), the joint's next bound is
    between the speed it has there less a dt and that speed. So the commanded velocity never changes faster than
    a, however late the tick, and the joint still reaches the margin."""
    d = stopping_distance(v, a, dt)
    assert braking_speed(d, a, dt) == pytest.approx(v, rel=1e-9, abs=1e-12)
    speed = max(v - a * dt * late, 0.0)                   # on the braking curve: speed^2 / 2a left to the margin
    bound = braking_speed(speed * speed / (2.0 * a), a, dt)
    assert speed - a * dt * (1 + 1e-9) - 1e-12 <= bound <= speed * (1 + 1e-12)


def test_damping_is_continuous_and_zero_above_the_threshold():
    sigma0, lam = 0.04, 0.05
    sigmas = np.linspace(0.0, 0.1, 100001)
    values = np.array([damping_factor(s, sigma0, lam) for s in sigmas])
    assert values[0] == lam and np.all(values[sigmas >= sigma0] == 0.0)
    assert np.max(np.abs(np.diff(values))) < 2e-3       # no jump anywhere (steepest right at sigma0)
    assert np.all(np.diff(values) <= 0.0)
    assert damping_factor(sigma0 * (1 - 1e-12), sigma0, lam) < 1e-6


def test_solve_reports_the_damping_for_its_sigma_min(panda):
    ik = VelocityIk(panda, config(panda))
    q = panda.home()
    for q6 in np.linspace(0.0, 0.4, 41):                 # approach the wrist singularity (joint 6 = 0)
        q[5] = q6
        result = ik.solve(q, np.array([0, 0, 0, 0.1, 0, 0]), dt=0.002)
        assert result.damping == pytest.approx(damping_factor(result.sigma_min, 0.04, 0.05), abs=1e-15)
        assert result.sigma_min == pytest.approx(np.linalg.svd(panda.jacobian(q), compute_uv=False)[-1],
                                                 abs=1e-7)


UR5_SINGULAR = np.array([0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.3, 0.0])   # elbow straight


def test_exact_singularity_is_finite_and_a_command_leaving_it_moves_the_arm(ur5):
    J = ur5.jacobian(UR5_SINGULAR)
    assert np.linalg.svd(J, compute_uv=False)[-1] < 1e-9
    twist = J @ np.array([0, 0, 0.2, 0, 0, 0])          # what bending the elbow does
    for thresholds in (False, True):
        ik = VelocityIk(ur5, config(ur5, use_condition_number_thresholds=thresholds))
        result = ik.solve(UR5_SINGULAR, twist, dt=0.002)
        dq = result.velocities
        assert np.all(np.isfinite(dq)) and np.linalg.norm(dq) > (0.005 if thresholds else 0.05)
        assert result.status != ServoStatus.HALT_FOR_SINGULARITY
        assert np.dot(J @ dq, twist) > 0.5 * result.velocity_scale * np.dot(twist, twist)
        q, sigmas = UR5_SINGULAR.copy(), []
        for _ in range(50):                              # keep commanding it: the arm leaves the singularity
            q = q + ik.solve(q, twist, dt=0.01).velocities * 0.01
            sigmas.append(np.linalg.svd(ur5.jacobian(q), compute_uv=False)[-1])
        assert np.all(np.diff(sigmas) > 0) and sigmas[-1] > (5e-4 if thresholds else 5e-3)   # slowed when on


def test_condition_thresholds_slow_toward_and_halt_only_toward(ur5):
    ik = unlimited(ur5, use_condition_number_thresholds=True)
    q = UR5_SINGULAR.copy()
    q[2] = 0.05                                          # near the elbow singularity
    J = ur5.jacobian(q)
    straighten = J @ np.array([0, 0, -0.2, 0, 0, 0])
    bend = -straighten
    cond = np.linalg.cond(J)
    toward, away = ik.solve(q, straighten, dt=0.002), ik.solve(q, bend, dt=0.002)
    assert toward.status in (ServoStatus.DECELERATE_FOR_APPROACHING_SINGULARITY,
                             ServoStatus.HALT_FOR_SINGULARITY), (cond, toward.message)
    assert toward.velocity_scale < away.velocity_scale
    assert away.status in (ServoStatus.OK, ServoStatus.DECELERATE_FOR_LEAVING_SINGULARITY)
    assert np.linalg.norm(away.velocities) > 0.0
    q[2] = 0.005                                         # beyond the hard stop
    J = ur5.jacobian(q)
    halted = ik.solve(q, J @ np.array([0, 0, -0.2, 0, 0, 0]), dt=0.002)
    assert halted.status == ServoStatus.HALT_FOR_SINGULARITY and np.all(halted.velocities == 0.0)
    assert "condition number" in halted.message
    leaving = ik.solve(q, J @ np.array([0, 0, 0.2, 0, 0, 0]), dt=0.002)
    assert leaving.status == ServoStatus.DECELERATE_FOR_LEAVING_SINGULARITY and leaving.velocity_scale > 0


# ---- joint-limit locking (halt_all_joints_in_cartesian_mode false; true: test_halt_all_joints.py) -------------
LOCKING = {"halt_all_joints_in_cartesian_mode": False}


def test_locking_zeroes_exactly_the_locked_joint_and_the_rest_track(panda):
    q = panda.home()
    q[0] = panda.limits.upper[0] - 0.01                  # joint 1 inside its 0.02 rad margin
    J = panda.jacobian(q)
    # Joints 2, 4, 6 cannot be locked here and still track: the Panda's self-motion (elbow swivel) moves
    # neither of them at this pose, so the other six columns are rank 5.
    assert np.linalg.svd(np.delete(J, 0, axis=1), compute_uv=False)[-1] > 0.1
    twist = J @ np.array([0.3, 0, 0, 0, 0, 0, 0])        # motion that pushes joint 1 further up
    free = unlimited(panda, joint_limit_margins=(0.0,), joint_limit_avoidance_gain=0.0).solve(q, twist, dt=0.002)
    assert free.velocities[0] > 0
    result = unlimited(panda, joint_limit_avoidance_gain=0.0, **LOCKING).solve(q, twist, dt=0.002)
    assert result.locked_joints == ("panda_joint1",)
    assert result.velocities[0] == 0.0 and np.count_nonzero(result.velocities == 0.0) == 1
    assert result.status == ServoStatus.JOINT_BOUND and "panda_joint1 locked at its upper limit" in result.message
    assert_tracks(J, result.velocities, twist, rtol=1e-9)
    away = unlimited(panda, joint_limit_avoidance_gain=0.0, **LOCKING).solve(q, -twist, dt=0.002)
    assert away.locked_joints == () and away.velocities[0] < 0


def test_joint_limit_margins_apply_per_joint_or_one_for_all(panda):
    """MoveIt Servo's joint_limit_margins: one entry for every joint, or one per joint."""
    q = panda.home()
    q[0] = panda.limits.upper[0] - 0.03                  # joint 1 is 3 cm from its limit
    q[3] = panda.limits.upper[3] - 0.03                  # and so is joint 4
    J = panda.jacobian(q)
    push_1, push_4 = J[:, 0] * 0.3, J[:, 3] * 0.3         # twists that push joint 1 (joint 4) further up

    def locked(margins, twist):
        ik = unlimited(panda, joint_limit_margins=margins, joint_limit_avoidance_gain=0.0)
        return ik.solve(q, twist, dt=0.002).locked_joints

    assert locked((0.02,), push_1) == () and locked((0.02,), push_4) == ()
    assert locked((0.05,), push_1) == ("panda_joint1",) and locked((0.05,), push_4) == ("panda_joint4",)
    first_only = (0.05, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    assert locked(first_only, push_1) == ("panda_joint1",) and locked(first_only, push_4) == ()
    with pytest.raises(ConfigError, match=r"joint_limit_margins has 2 entries but the chain has 7 joints .* "
                                          r"\(or give one entry for all\)"):
        unlimited(panda, joint_limit_margins=(0.05, 0.0))
    with pytest.raises(ConfigError, match="joint_limit_margins=.* needs one value"):
        config(panda, joint_limit_margins=())


def test_locked_joint_stays_locked_with_nullspace_push(panda):
    q = panda.home()
    q[0] = panda.limits.upper[0] - 0.01
    J = panda.jacobian(q)
    ik = unlimited(panda, joint_limit_avoidance_gain=0.0, posture_gain=50.0,
                   home_positions=np.where(np.arange(7) == 0, 10.0, panda.home()))   # pulls joint 1 up
    unlocked = unlimited(panda, joint_limit_avoidance_gain=0.0, posture_gain=50.0, joint_limit_margins=(0.0,),
                         home_positions=np.where(np.arange(7) == 0, 10.0, panda.home()))
    assert unlocked.solve(q, np.zeros(6), dt=0.002).velocities[0] > 1e-3     # the push does reach joint 1
    result = ik.solve(q, np.zeros(6), dt=0.002)
    assert result.velocities[0] == 0.0 and result.locked_joints == ("panda_joint1",)
    assert np.linalg.norm(J @ result.velocities) < 1e-9


def test_joint_braking_before_its_limit_lets_the_others_absorb_the_task(panda):
    q = panda.home()
    q[0] = panda.limits.upper[0] - 0.03                  # 1 cm beyond the margin
    J = panda.jacobian(q)
    twist = J @ np.array([0.9, 0, 0, 0, 0, 0, 0])    # min-norm solution: joint 1 at 0.43 rad/s
    amax = np.full(7, 5.0)
    ik = unlimited(panda, max_joint_acceleration=amax, joint_limit_avoidance_gain=0.0, **LOCKING)
    result = ik.solve(q, twist, dt=0.01)
    assert result.velocities[0] == pytest.approx(braking_bound(0.01, 5.0, bound_hold(0.01)), abs=1e-12)
    assert result.status == ServoStatus.JOINT_BOUND and "panda_joint1 slowed" in result.message
    assert_tracks(J, result.velocities, twist)


# ---- errors --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, text", [
    (dict(positions=[0.0] * 6), "joint positions must have 7 entries"),
    (dict(positions=[0, 0, np.nan, 0, 0, 0, 0]), "joint positions has non-finite entries at indices [2]"),
    (dict(twist=[0, 0, 0, np.inf, 0, 0]), "twist has non-finite entries at indices [3]"),
    (dict(twist=[0, 0, 0]), "twist must have 6 entries"),
    (dict(dt=0.0), "dt must be a finite time step"),
    (dict(dt=np.nan), "dt must be a finite time step"),
    (dict(frame_id=10**6), "frame_id 1000000 is not a frame"),
    (dict(axis_mask=[True] * 5), "axis_mask must be six booleans"),
    (dict(axis_mask=[False] * 6), "at least one True"),
    (dict(axis_frame="world"), "axis_frame 'world' is not one of ['base', 'tool']"),
    (dict(previous_velocities=[0.0, np.nan] + [0.0] * 5), "previous_velocities has non-finite"),
])
def test_bad_input_raises_a_named_error(panda, kwargs, text):
    args = dict(positions=panda.home(), twist=np.zeros(6), dt=0.002) | kwargs
    positions, twist = args.pop("positions"), args.pop("twist")
    with pytest.raises(InvalidInputError) as info:
        VelocityIk(panda, config(panda)).solve(positions, twist, **args)
    assert text in str(info.value)


def test_bad_settings_raise_config_error(panda):
    with pytest.raises(ConfigError, match="max_joint_velocity has 3 entries but the chain has 7 joints"):
        VelocityIk(panda, ServoConfig(max_joint_velocity=(1.0, 1.0, 1.0)))
    with pytest.raises(ConfigError, match=r"max_joint_acceleration=\(1, 0.0, .*\) must be > 0"):
        VelocityIk(panda, ServoConfig(max_joint_acceleration=(1, 0.0, 1, 1, 1, 1, 1.0)))
    with pytest.raises(ConfigError, match="hard_stop_singularity_threshold=20.0 must exceed"):
        VelocityIk(panda, ServoConfig(hard_stop_singularity_threshold=20.0))


def test_path_ik_style_call_with_infinite_limits(panda):
    """dt = 1 with a pose error as twist and no velocity/acceleration limits (the path-IK use)."""
    q = panda.home()
    error = np.array([0.01, -0.005, 0.002, 0.01, 0.0, -0.02])
    result = unlimited(panda).solve(q, error, dt=1.0)
    assert result.status == ServoStatus.OK and result.velocity_scale == 1.0
    assert_tracks(panda.jacobian(q), result.velocities, error)


@settings(deadline=None, max_examples=100)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(1, 6), deficient=st.booleans())
def test_jacobi_eigen_matches_lapack(seed, m, deficient):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, 7)) * rng.uniform(0.01, 3.0, (m, 1))
    if deficient and m > 1:
        A[-1] = 2.0 * A[0]
    G = A @ A.T
    evals, V = np.empty(m), np.empty((m, m))
    symmetric_eigen(G.copy(), evals, V)
    scale = np.abs(G).max()
    np.testing.assert_allclose(np.sort(evals), np.linalg.eigvalsh(G), atol=1e-13 * scale)
    np.testing.assert_allclose(V @ np.diag(evals) @ V.T, G, atol=1e-13 * scale)
    np.testing.assert_allclose(V.T @ V, np.eye(m), atol=1e-13)


# ---- locked joints keep the command's direction; damping says where the arm is heading ---------------
def _rotate_about_tool_z(panda, tolerance, seconds=6.0, dt=0.002):
    ik = VelocityIk(panda, config(panda, max_joint_acceleration=PANDA_ACCELERATION,
                                  locked_direction_tolerance=tolerance, **LOCKING))
    q, v = panda.home(), np.zeros(panda.n)
    origin = panda.fk(q).translation.copy()
    drift, result = 0.0, None
    for _ in range(int(seconds / dt)):
        twist = np.zeros(6)
        twist[3:] = panda.fk(q).rotation @ np.array([0.0, 0.0, 0.9])   # tool z, in base axes
        result = ik.solve(q, twist, dt=dt, previous_velocities=v)
        v = result.velocities
        q = q + v * dt
        drift = max(drift, float(np.linalg.norm(panda.fk(q).translation - origin)))
    return drift, result


def test_locked_joint_halts_instead_of_dragging_the_tool_off_a_rotation(panda):
    """Joint 7 reaches its limit during a tool-z rotation; the other joints cannot rotate the tool about its
    own origin, so the servo must stop rather than swing the tool around (least squares would)."""
    drift, result = _rotate_about_tool_z(panda, tolerance=0.2)
    assert drift < 0.01, f"tool origin drifted {drift * 1000:.1f} mm under a pure rotation command"
    assert result.status == ServoStatus.JOINT_BOUND and "panda_joint7" in result.locked_joints
    assert "cannot follow this twist" in result.message and "halted" in result.message
    assert np.abs(result.velocities).max() < 1e-6


def test_without_the_direction_guard_the_tool_drifts(panda):
    """Control for the test above: with the guard off the same command drags the tool centimetres away.

    The largest tolerance a config allows is "off": the relative error `off` never exceeds 1, so the factor
    (tolerance - off) / (tolerance / 2) stays >= 1.8 whenever the motion goes along the command."""
    drift, _ = _rotate_about_tool_z(panda, tolerance=MAX_DIRECTION_TOLERANCE)
    assert drift > 0.03


def test_damping_status_tells_approaching_from_leaving(ur5):
    q = ur5.home()
    q[2] = 0.03                                         # elbow almost straight: sigma_min well below 0.04
    ik = VelocityIk(ur5, config(ur5))
    radial = ur5.fk(q).translation - ur5.fk(q, "shoulder_link").translation
    radial /= np.linalg.norm(radial)
    out = ik.solve(q, np.r_[0.05 * radial, 0, 0, 0], dt=0.002)
    back = VelocityIk(ur5, config(ur5)).solve(q, np.r_[-0.05 * radial, 0, 0, 0], dt=0.002)
    assert out.damping > 0 and out.status == ServoStatus.DECELERATE_FOR_APPROACHING_SINGULARITY
    assert back.status == ServoStatus.DECELERATE_FOR_LEAVING_SINGULARITY
    # one instance: the verdict changes only once it has held for DEBOUNCE_STEPS steps (no flicker)
    verdicts = [ik.solve(q, np.r_[-0.05 * radial, 0, 0, 0], dt=0.002).status for _ in range(DEBOUNCE_STEPS)]
    assert verdicts[:-1] == [ServoStatus.DECELERATE_FOR_APPROACHING_SINGULARITY] * (DEBOUNCE_STEPS - 1)
    assert verdicts[-1] == ServoStatus.DECELERATE_FOR_LEAVING_SINGULARITY
    assert np.isfinite(back.velocities).all() and np.abs(back.velocities).max() > 0   # it moves out
    far = ik.solve(ur5.home(), np.r_[0.05 * radial, 0, 0, 0], dt=0.002)
    assert far.damping == 0.0 and far.status == ServoStatus.OK


def _hold_twist(panda, twist, steps, dt=0.002):
    """Integrate one constant base-frame twist from home; every step's result (a perfect follower)."""
    ik = VelocityIk(panda, config(panda, max_joint_acceleration=PANDA_ACCELERATION, joint_limit_avoidance_gain=1.0))
    q, v, results = panda.home(), np.zeros(panda.n), []
    for _ in range(steps):
        result = ik.solve(q, np.asarray(twist, float), dt=dt, previous_velocities=v)
        v = result.velocities
        q = q + v * dt
        results.append(result)
    return results


def test_no_dither_when_pushed_into_the_workspace_boundary(panda):
    """Pushing outward at full stretch: the arm settles at the boundary; the joint-limit push in the null
    space (whose projector turns quickly there) must not make it dither against the task."""
    results = _hold_twist(panda, [0.1, 0.0, 0.025, 0, 0, 0], 3500)
    last = np.array([r.velocities for r in results[-500:]])         # the last second, at the boundary
    assert results[-1].sigma_min < 1e-3, "the set-up must reach the singular boundary"
    assert np.abs(np.diff(last, axis=0)).max() < 0.01, "joint velocities chatter at the boundary"


def test_direction_guard_judges_the_angle_not_the_command_size():
    """The same achieved motion is equally far off a command of 0.4 m/s and one of 5 m/s."""
    A = np.eye(6)
    achieved = np.array([0.5, 0.0, 0.0, 0.0, 1.0, 0.0])       # along x, plus 1 rad/s about y
    guards = [direction_guard(A, np.array([speed, 0, 0, 0, 0, 0]), achieved, 0.2) for speed in (0.4, 5.0)]
    assert guards[0] == pytest.approx(guards[1])
    assert guards[0].off == pytest.approx(np.sin(np.arctan2(0.1, 0.5)))  # 1 rad/s counts as 0.1 m/s
    off = guards[0].off                                                 # 11 deg: between tolerance/2 and tolerance
    assert guards[0].factor == pytest.approx((0.2 - off) / 0.1)         # slowing, not yet halted


def test_pushing_into_the_boundary_reads_as_approaching(panda):
    """While the command keeps pushing into the workspace boundary the verdict stays 'approaching', even
    though the damped motion there drifts sideways."""
    results = _hold_twist(panda, [0.0, 0.0, 0.1, 0, 0, 0], 3000)
    assert results[-1].sigma_min < 1e-3
    assert {r.status for r in results[-1000:]} == {ServoStatus.DECELERATE_FOR_APPROACHING_SINGULARITY}


# ---- leaving the stretch: the escape along the curvature of the singular direction (issue 11) ---------------
PUSH_OUT = np.array([0.1, 0.0, 0.025, 0, 0, 0])      # the demo's push into the stretched Panda [m/s]


EscapeConfig = ServoConfig


def escape_ik(robot, escape: bool, **kw) -> VelocityIk:
    """`unlimited` velocity IK (acceleration limits too: exact algebra) with the escape on or off."""
    kw = {"max_joint_acceleration": (NEVER_BINDS,) * robot.n, "max_joint_velocity": (NEVER_BINDS,) * robot.n} | kw
    return VelocityIk(robot, EscapeConfig(singularity_escape=escape, **kw))


def _push_then_back(robot, escape, push, push_s, back_s=2.0, dt=0.002, **kw):
    """A perfect follower pushed by `push` from home, then commanded back with -push; (the configuration at the
    end of the push, the tool's speeds along -push during the way back [m/s])."""
    ik = VelocityIk(robot, EscapeConfig(singularity_escape=escape, **kw))
    q, v = robot.home(), np.zeros(robot.n)
    for _ in range(round(push_s / dt)):
        v = ik.solve(q, push, dt=dt, previous_velocities=v).velocities
        q = q + v * dt
    deep, axis, along = q.copy(), -push[:3] / np.linalg.norm(push[:3]), [0.0]
    for _ in range(round(back_s / dt)):
        v = ik.solve(q, -push, dt=dt, previous_velocities=v).velocities
        q = q + v * dt
        along.append((robot.fk(q).translation - robot.fk(deep).translation) @ axis)
    return deep, np.diff(along) / dt


@pytest.fixture(scope="module")
def stretched(panda):
    """The Panda after 7 s of the demo's push from home: sigma_min ~ 1e-4, deep in the boundary singularity."""
    return _push_then_back(panda, True, PUSH_OUT, 7.0, back_s=0.0,
                           max_joint_acceleration=tuple(PANDA_ACCELERATION))[0]


@settings(deadline=None, max_examples=60)
@given(seed=st.integers(0, 2**32 - 1))
def test_escape_changes_only_the_singular_direction_and_only_on_the_way_out(panda, stretched, seed):
    """Whatever the command: the other task directions get exactly what the damped solve gives them; the
    singular one never moves against the command nor beyond it; a command further into the boundary is
    solved exactly as without the escape."""
    b = random_twist(np.random.default_rng(seed))
    J = panda.jacobian(stretched)
    U, s, _ = np.linalg.svd(J)
    assert s[-1] < 1e-3
    on, off = (escape_ik(panda, e).solve(stretched, b, dt=0.002).velocities for e in (True, False))
    task_on, task_off = U.T @ J @ on, U.T @ J @ off                         # (6,) in singular directions
    np.testing.assert_allclose(task_on[:-1], task_off[:-1], rtol=0, atol=1e-9 * np.linalg.norm(b))
    u_b, outward = U[:, -1] @ b, np.sign(U[:, -1] @ PUSH_OUT)
    # rounding of the projection U.T @ J @ on scales with the whole command, not with its (maybe tiny) singular part
    assert -1e-12 * np.linalg.norm(b) <= np.sign(u_b) * task_on[-1] <= abs(u_b) * (1 + 1e-9)
    if np.sign(u_b) == outward:
        np.testing.assert_array_equal(on, off)


def test_escape_gets_the_ur5_out_of_its_stretch_too(ur5):
    """A 6-joint arm has no self-motion: the escape runs along v_min itself, past the damping. Pushed radially
    out of home into the boundary, the way back reaches half the commanded speed within 0.5 s."""
    radial = ur5.fk(ur5.home()).translation - ur5.fk(ur5.home(), "shoulder_link").translation
    push = np.r_[0.1 * radial / np.linalg.norm(radial), 0, 0, 0]
    (deep, speed), (_, crawl) = (_push_then_back(ur5, e, push, 8.0) for e in (True, False))
    assert np.linalg.svd(ur5.jacobian(deep), compute_uv=False)[-1] < 1e-3
    half_s = round(0.5 / 0.002)
    assert speed[:half_s].max() >= 0.05 and np.median(speed[half_s:]) >= 0.095
    assert crawl[:half_s].max() < 0.05, "control: without the escape the way back crawls"


def test_escape_is_off_when_the_task_has_more_rows_than_joints(so101):
    """Six rows for five joints is a permanent rank loss, not a singularity to leave."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        q, b = so101.random_positions(rng, 0.2), random_twist(rng)
        on, off = (escape_ik(so101, e).solve(q, b, dt=0.002) for e in (True, False))
        assert on.damping > 0.0
        np.testing.assert_array_equal(on.velocities, off.velocities)
