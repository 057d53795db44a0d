"""MoveIt Servo's halt_all_joints_in_cartesian_mode / halt_all_joints_in_joint_mode (true by default, as in MoveIt).

True: a joint reaching its limit margin stops every joint with it, all slowing in proportion, so a twist's tool
stops along the commanded direction and the velocity never changes faster than the acceleration limits allow.
False: that joint alone is held (robokin's joint-limit locking) and the others carry on.
"""
import numpy as np
import pytest

from robokin_ros.core.limits import HALT_SPEED_EPS, braking_speed, halt_all_scale
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.joint_jog import JointJogCommand
from robokin_ros.core.servo.servo import Servo
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.types import JointMeasurement
from robokin_ros.core.servo.velocity_ik import VelocityIk
from robokin_ros.core.servo.window import MIN_POINT_SPACING

DT = 0.002
PANDA_ACCELERATION = (15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0)     # config/panda_servo.yaml [rad/s^2]
MARGIN = 0.02


@pytest.fixture(scope="module")
def panda():
    return RobotModel.from_name("panda")


def _run_twist(robot, config, twist_of, ticks):
    """Integrate the IK's velocities (a perfect follower) under `twist_of(q)`; (velocities, positions, results)."""
    ik = VelocityIk(robot, config)
    q, v = robot.home(), np.zeros(robot.n)
    vs, qs, results = [], [], []
    for _ in range(ticks):
        result = ik.solve(q, twist_of(q), dt=DT, previous_velocities=v)
        v = result.velocities
        q = q + v * DT
        vs.append(v)
        qs.append(q)
        results.append(result)
    return np.array(vs), np.array(qs), results


def _assert_within_acceleration(velocities, amax):
    steps = np.abs(np.diff(np.vstack((np.zeros(velocities.shape[1]), velocities)), axis=0))     # (k, n)
    worst = float((steps / (np.asarray(amax) * DT)).max())
    assert worst <= 1.0 + 1e-9, f"a joint changed its velocity {worst:.3f} times faster than its limit allows"


# ---- the kernel --------------------------------------------------------------------------------------------
def test_the_factor_is_the_braking_speed_of_the_whole_motion():
    inf = np.full(3, np.inf)
    lower, upper, amax = np.full(3, -1.0), np.full(3, 1.0), np.array([10.0, 1.0, 10.0])
    dq = np.array([2.0, 0.5, -0.1])
    q = np.array([0.9, 0.0, 0.0])                       # joint 0: 0.1 rad to go at 2 rad/s = 0.05 s of motion
    s, blocking = halt_all_scale(dq, q, lower, upper, amax, DT)
    # the factor may fall by min(10 / 2, 1 / 0.5, 10 / 0.1) = 2 per second: joint 1's limit, not joint 0's
    assert blocking == 0 and s == pytest.approx(braking_speed(0.05, 2.0, DT))
    # held for one period, then braked at 2 /s^2 (in factor units), the factor covers just the 0.05 s left
    assert s * DT + s * s / (2 * 2.0) == pytest.approx(0.05, rel=1e-12)
    assert halt_all_scale(dq, np.zeros(3), lower, upper, amax, DT) == (1.0, -1)       # room enough: no effect
    assert halt_all_scale(dq, q, -inf, inf, amax, DT) == (1.0, -1)                    # no limits
    assert halt_all_scale(dq, np.array([1.0, 0, 0]), lower, upper, amax, DT) == (0.0, 0)   # at the margin
    assert halt_all_scale(-dq, np.array([1.0, 0, 0]), lower, upper, amax, DT) == (1.0, -1)  # leaving it
    noise = np.array([HALT_SPEED_EPS / 2, 0.0, 0.0])
    assert halt_all_scale(noise, np.array([1.0, 0, 0]), lower, upper, amax, DT) == (1.0, -1)


# ---- Cartesian mode ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("amax", [PANDA_ACCELERATION, (2.0, 60.0, 2.0, 2.0, 2.0, 2.0, 2.0)],
                         ids=["panda", "blocking joint fast, the others slow"])
def test_true_stops_the_tool_along_the_command_within_the_acceleration_limits(panda, amax):
    """The tool moves toward the base until joint 2 reaches its lower margin: every joint decelerates together
    (joint 2's own acceleration limit would allow a later, harder stop that the others could not follow)."""
    config = ServoConfig(max_joint_acceleration=amax, joint_limit_margins=(MARGIN,))
    twist = np.array([-0.2, 0.0, 0.0, 0.0, 0.0, 0.0])
    velocities, positions, results = _run_twist(panda, config, lambda q: twist, 1500)
    _assert_within_acceleration(velocities, amax)
    # the tool never leaves the commanded direction, slowing included
    tool = np.array([panda.jacobian(q) @ v for q, v in zip(positions[:-1], velocities[1:])])          # (k, 6)
    moving = np.linalg.norm(tool, axis=1) > 1e-6
    cosine = tool[moving] @ twist / (np.linalg.norm(tool[moving], axis=1) * np.linalg.norm(twist))
    assert cosine.min() > 1.0 - 1e-6
    # joint 2 stops at its margin, never beyond it, and everything is at rest
    assert positions[:, 1].min() >= panda.limits.lower[1] + MARGIN - 1e-9
    assert positions[-1, 1] == pytest.approx(panda.limits.lower[1] + MARGIN, abs=1e-3)
    assert np.abs(velocities[-1]).max() == 0.0
    slowing = [r for r in results if "slowing" in r.message]
    assert slowing and "all joints slowing to stop panda_joint2 at its lower limit margin" in slowing[0].message
    final = results[-1]
    assert final.status == ServoStatus.JOINT_BOUND and final.locked_joints == ("panda_joint2",)
    assert "panda_joint2 is at its lower limit margin: all joints halted (halt_all_joints_in_cartesian_mode)" \
        in final.message


def test_the_tool_rotation_halts_where_joint_7_reaches_its_margin(panda):
    """The demo's wrist twist: with true the tool stops turning; it neither swings nor drifts."""
    config = ServoConfig(max_joint_acceleration=PANDA_ACCELERATION, joint_limit_margins=(MARGIN,))
    spin = lambda q: np.r_[0.0, 0.0, 0.0, panda.fk(q).rotation @ np.array([0.0, 0.0, 0.9])]  # noqa: E731
    velocities, positions, results = _run_twist(panda, config, spin, 2500)
    _assert_within_acceleration(velocities, PANDA_ACCELERATION)
    assert positions[-1, 6] == pytest.approx(panda.limits.upper[6] - MARGIN, abs=1e-3)
    drift = max(np.linalg.norm(panda.fk(q).translation - panda.fk(panda.home()).translation) for q in positions)
    assert drift < 1e-3                                 # Euler steps of a rotation; without the guard: cm
    assert results[-1].locked_joints == ("panda_joint7",) and np.abs(velocities[-1]).max() == 0.0


def test_false_locks_the_joint_and_the_others_track(panda):
    """The same command at a joint inside its margin: true halts every joint, false only that one."""
    q = panda.home()
    q[0] = panda.limits.upper[0] - 0.01
    J = panda.jacobian(q)
    twist = J @ np.array([0.3, 0, 0, 0, 0, 0, 0])                     # pushes joint 1 further up
    common = dict(joint_limit_avoidance_gain=0.0, max_joint_acceleration=(1e9,) * 7)
    halted = VelocityIk(panda, ServoConfig(**common)).solve(q, twist, dt=DT)
    assert np.all(halted.velocities == 0.0) and halted.locked_joints == ("panda_joint1",)
    locked = VelocityIk(panda, ServoConfig(halt_all_joints_in_cartesian_mode=False, **common)).solve(q, twist, dt=DT)
    assert locked.velocities[0] == 0.0 and np.abs(locked.velocities).max() > 0.1
    np.testing.assert_allclose(J @ locked.velocities, twist, atol=1e-9)
    assert "panda_joint1 locked at its upper limit" in locked.message
    # a caller may choose per call (MoveIt Servo halts only the offending joints for POSE commands)
    per_call = VelocityIk(panda, ServoConfig(**common)).solve(q, twist, dt=DT, halt_all=False)
    np.testing.assert_array_equal(per_call.velocities, locked.velocities)
    # moving away from the limit is never blocked
    away = VelocityIk(panda, ServoConfig(**common)).solve(q, -twist, dt=DT)
    assert away.status != ServoStatus.JOINT_BOUND and away.velocities[0] < 0.0


def test_moveit_defaults():
    assert ServoConfig().halt_all_joints_in_cartesian_mode and ServoConfig().halt_all_joints_in_joint_mode


# ---- joint-jog mode ----------------------------------------------------------------------------------------
def _jog(servo, q0, names, velocities, ticks):
    """Jog through the core Servo with an ideal arm (the commanded positions are the next measurement)."""
    outs = []
    servo.set_measurement(JointMeasurement(np.array(q0, float), 0.0))
    for k in range(1, ticks + 1):
        servo.set_joint_command(JointJogCommand(tuple(names), tuple(velocities), (), 0.0, k * DT))
        out = servo.step(k * DT)
        servo.set_measurement(JointMeasurement(out.positions, k * DT))
        outs.append(out)
    return outs


@pytest.mark.parametrize("halt_all", [True, False])
def test_jogged_joints_stop_together_or_alone(panda, halt_all):
    """Joint 7 (2 rad/s) reaches its margin long before joint 5 (0.5 rad/s) reaches its own."""
    config = ServoConfig(publish_period=DT, command_in_type="speed_units", joint_limit_margins=(MARGIN,),
                         max_joint_acceleration=PANDA_ACCELERATION, halt_all_joints_in_joint_mode=halt_all)
    outs = _jog(Servo(panda, config), panda.home(), ["panda_joint5", "panda_joint7"], [0.5, 2.0], 1000)
    velocities = np.array([o.velocities for o in outs])
    positions = np.array([o.positions for o in outs])
    _assert_within_acceleration(velocities, PANDA_ACCELERATION)
    assert positions[:, 6].max() <= panda.limits.upper[6] - MARGIN + 1e-9
    assert positions[-1, 6] == pytest.approx(panda.limits.upper[6] - MARGIN, abs=1e-3)
    final = outs[-1]
    assert final.status == ServoStatus.JOINT_BOUND
    if halt_all:
        # both stop; while slowing they keep the commanded ratio 0.5 : 2
        assert np.abs(final.velocities).max() == 0.0 and final.locked_joints == ("panda_joint7",)
        # (joint 7's window may start braking up to MIN_POINT_SPACING into the first period, where its stop time
        # would fall next to another point: its velocity at the next tick is then lower by up to amax times that)
        moving = velocities[:, 6] > 1e-3
        slack = 0.25 * PANDA_ACCELERATION[6] * MIN_POINT_SPACING
        np.testing.assert_allclose(velocities[moving, 4], 0.25 * velocities[moving, 6], rtol=1e-9, atol=slack)
        assert "panda_joint7 is at its upper limit margin: all jogged joints halted" in final.message
        assert positions[-1, 4] < 0.6                       # joint 5 stopped with it, far from its own limit
    else:
        # joint 5 carries on at its commanded speed, undisturbed by joint 7's stop
        assert final.velocities[6] == 0.0 and np.all(velocities[50:, 4] == pytest.approx(0.5))
        assert positions[-1, 4] > 0.9
        assert "panda_joint7 locked at its upper limit" in final.message
