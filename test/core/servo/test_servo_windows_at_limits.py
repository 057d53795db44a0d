"""Servo windows at joint limits through the servo core (issue 24 item 2): every published window passes the
outgoing check (core/trajectory/outgoing_check.py), measured independently on the spline a JTC plays; a window that
would not pass is never published, a stop is, with the reason in the status. The node test
(test/ros/test_servo_limit_motion.py) drives the same through servo_node."""
import numpy as np
import pytest

from robokin_ros.core.trajectory.outgoing_check import interval_peaks, window_rejection, window_violation
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.joint_jog import JointJogCommand
from robokin_ros.core.servo.servo import Servo
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.types import JointMeasurement, TwistCommand
from robokin_ros.core.servo.window import W_VMAX, sample_window

DT = 0.002
AMAX = (15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0)


def jog_servo(panda, **config):
    servo = Servo(panda, ServoConfig(publish_period=DT, command_in_type="speed_units", max_joint_acceleration=AMAX,
                                     **config))
    servo.set_measurement(JointMeasurement(panda.home(), 0.0))
    return servo


def jog(servo, ticks, velocity=2.0, start=0):
    outs = []
    for k in range(start + 1, start + ticks + 1):
        now = k * DT
        servo.set_joint_command(JointJogCommand(("panda_joint7",), (velocity,), (), 0.0, now))
        out = servo.step(now)
        servo.set_measurement(JointMeasurement(out.positions, now))
        outs.append(out)
    return outs


@pytest.mark.parametrize("margin", [0.02, 0.0])
def test_jogging_joint_7_into_its_limit_publishes_windows_within_the_acceleration_limits(panda, margin):
    """2 rad/s into the upper limit, with the default margin and with none: the spline JTC plays through every
    window stays within the acceleration limits (66x before: the extrapolation was clamped at the limit)."""
    servo = jog_servo(panda, joint_limit_margins=(margin,))
    outs = jog(servo, 800)
    amax = np.array(AMAX)
    worst = max(float((interval_peaks(o.window.times, o.window.positions, o.window.velocities).acceleration
                       / amax).max()) for o in outs)
    assert worst <= 1.0 + 1e-6, worst
    assert all(window_rejection(o.window.times, o.window.positions, o.window.velocities, panda.joint_names,
                                panda.limits.lower, panda.limits.upper, panda.limits.velocity, amax) is None
               for o in outs)
    assert outs[-1].positions[6] == pytest.approx(panda.limits.upper[6] - margin, abs=1e-6)
    assert outs[-1].status == ServoStatus.JOINT_BOUND


def test_a_window_the_outgoing_check_refuses_is_replaced_by_a_stop_and_the_reason_is_the_status(panda):
    """The safety net: a window breaking a limit is never published. Here the check is given velocity limits the
    command exceeds (the servo's own limits cannot produce such a window): it publishes a stop instead (the arm
    held, since a stop from that speed passes the check's limits too), drops the command and says why until a new
    command arrives."""
    servo = jog_servo(panda)
    jog(servo, 50, velocity=0.5)
    servo.windows.limits[W_VMAX] = 0.1                 # below the jog's 0.5 rad/s
    out = jog(servo, 1, velocity=0.5, start=50)[0]
    assert out.status == ServoStatus.INVALID and out.publish
    assert "not published" in out.message and "velocity" in out.message and "panda_joint7" in out.message
    assert "holding the arm" in out.message
    w = out.window
    assert window_violation(w.times, w.positions, w.velocities, panda.limits.lower, panda.limits.upper,
                            servo.windows.limits[W_VMAX], np.array(AMAX), 2e-3)[0] == 0
    assert not out.velocities.any()                    # held where it was
    after = servo.step(51 * DT + DT)
    assert after.status == ServoStatus.INVALID and after.message == out.message     # until a new command
    servo.windows.limits[W_VMAX] = panda.limits.velocity
    servo.set_command(TwistCommand(np.array([0.01, 0.0, 0.0]), np.zeros(3), "", 52 * DT))
    assert servo.step(53 * DT).status == ServoStatus.OK


# tick intervals [periods] of a loaded timer: on time, late by up to 5 periods, early after a late one
IRREGULAR_TICKS = (1.0, 1.0, 3.0, 1.0, 0.4, 1.6, 1.0, 5.0, 1.0, 2.0, 1.0, 1.3, 0.7, 4.0)


@pytest.mark.parametrize("velocity", [2.0, 0.7])
def test_irregular_ticks_while_braking_at_a_limit_change_the_velocity_within_the_acceleration_limit(panda, velocity):
    """Joint 7 jogged into its limit under irregular ticks, the arm where a controller following the windows has
    it: between consecutive windows the velocity changes by no more than the acceleration limit allows in the time
    between them, from where the controller leaves the old window and from the old window's start alike; no window
    passes the limit margin, and the joint stops at it. Before (the servo's bound for braking period by period,
    the window braking continuously): 1.04x (2 rad/s) and 1.09x (0.7 rad/s) the limit between first points."""
    servo = jog_servo(panda)
    amax, inner = np.array(AMAX), panda.limits.upper[6] - 0.02
    q0 = panda.home()
    q0[6] = inner - 0.45
    servo.set_measurement(JointMeasurement(q0, 0.0))
    now, windows = 0.0, []
    q, v = np.empty(panda.n), np.empty(panda.n)
    for k in range(400):
        now += IRREGULAR_TICKS[k % len(IRREGULAR_TICKS)] * DT
        servo.set_joint_command(JointJogCommand(("panda_joint7",), (velocity,), (), 0.0, now))
        w = servo.step(now).window
        windows.append((now, w))
        servo.set_measurement(JointMeasurement(w.positions[0].copy(), now))
    switch = first = 0.0
    for (t1, w1), (t2, w2) in zip(windows, windows[1:]):
        sample_window(w1.times, w1.positions, w1.velocities, t2 - t1, q, v)
        switch = max(switch, float((np.abs(w2.velocities[0] - v) / (amax * (t2 - t1))).max()))
        first = max(first, float((np.abs(w2.velocities[0] - w1.velocities[0]) / (amax * (t2 - t1))).max()))
    assert switch <= 1.0 + 1e-9 and first <= 1.0 + 1e-9, (switch, first)
    assert max(w.positions[:, 6].max() for _, w in windows) <= inner + 1e-12
    assert windows[-1][1].positions[0, 6] == pytest.approx(inner, abs=1e-9)
