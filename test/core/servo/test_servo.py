"""Servo state machine: tracking, timeouts, halt messages, pause/resume, re-anchoring, frames, limits."""
import dataclasses
import subprocess
import sys

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from robokin_ros.core.errors import ConfigError, InvalidInputError, UnknownFrameError
from robokin_ros.core.servo.command_type import CommandType, CommandTypeSwitch
from robokin_ros.core.servo.commanded_state import DIVERGENCE_PERSISTENCE, max_abs_difference
from robokin_ros.core.servo.config import ScaleConfig, ServoConfig
from robokin_ros.core.servo.servo import Servo, warm_up
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.status_report import StatusReporter
from robokin_ros.core.servo.tick_clock import RESYNC_AFTER_S, TickStamps
from robokin_ros.core.servo.types import JointMeasurement, ServoOutput, TrajectoryWindow, TwistCommand
from robokin_ros.core.limits import braking_speed
from robokin_ros.core.trajectory.outgoing_check import interval_peaks, window_rejection, window_violation
from robokin_ros.core.servo.window import (
    MIN_POINT_SPACING,
    sample_window,
    sparse_window_times,
    window_arrays,
    window_capacity,
    window_limits,
    window_times,
)
from robokin_ros.core.sim.joints import SimulatedJoints
from robokin_ros.core.sim.trajectory_follower import TrajectoryPoints

DT = 0.002
FAST = dict(command_in_type="speed_units", default_joint_acceleration=1000.0)   # no ramp to wait for


def cmd(linear, angular=(0, 0, 0), frame="", at=0.0):
    return TwistCommand(np.asarray(linear, float), np.asarray(angular, float), frame, at)


class Loop:
    """Synthetic time now = k*dt; the measurement follows the command (a perfect controller)."""

    def __init__(self, robot, q0=None, **config):
        self.robot = robot
        self.servo = Servo(robot, ServoConfig(publish_period=DT, **config))
        self.k = 0
        self.servo.set_measurement(JointMeasurement(robot.home() if q0 is None else q0, 0.0))
        self.outputs = []

    @property
    def now(self):
        return self.k * DT

    def tick(self, command=None, follow=True):
        self.k += 1
        if command is not None:
            self.servo.set_command(dataclasses.replace(command, received_at=self.now))
        out = self.servo.step(self.now)
        if follow:
            self.servo.set_measurement(JointMeasurement(out.positions, self.now))
        self.outputs.append(out)
        return out

    def run(self, ticks, command=None):
        return [self.tick(command) for _ in range(ticks)]


def tool_velocity(robot, q0, q1, dt=DT):
    T0, T1 = robot.fk(q0), robot.fk(q1)
    return np.concatenate((T1.translation - T0.translation, pin.log3(T1.rotation @ T0.rotation.T))) / dt


# ---- tracking and units --------------------------------------------------------------------------------
def test_tracks_a_speed_units_twist(panda):
    loop = Loop(panda, command_in_type="speed_units")
    twist = np.array([0.05, -0.02, 0.03, 0.1, 0.0, -0.1])
    outs = loop.run(200, cmd(twist[:3], twist[3:]))
    assert all(o.status == ServoStatus.OK and o.publish for o in outs)
    np.testing.assert_allclose(tool_velocity(panda, outs[-2].positions, outs[-1].positions), twist, atol=2e-4)


def test_unitless_commands_are_clipped_and_scaled(panda):
    loop = Loop(panda, command_in_type="unitless", scale=ScaleConfig(linear=0.05), default_joint_acceleration=1000.0)
    outs = loop.run(20, cmd([3.0, 0.0, -0.5]))                # 3.0 is clipped to 1.0
    v = tool_velocity(panda, outs[-2].positions, outs[-1].positions)
    np.testing.assert_allclose(v, [0.05, 0.0, -0.025, 0, 0, 0], atol=2e-5)


@pytest.mark.parametrize("override, factor", [(0.5, 0.5), (0.005, 1.0), (0.0, 1.0)])
def test_override_velocity_scaling_factor_multiplies_the_command_from_0_01_on(panda, override, factor):
    """MoveIt Servo's override_velocity_scaling_factor: below 0.01 it means no override."""
    loop = Loop(panda, command_in_type="unitless", scale=ScaleConfig(linear=0.05), default_joint_acceleration=1000.0,
                override_velocity_scaling_factor=override)
    outs = loop.run(20, cmd([1.0, 0.0, -0.5]))
    v = tool_velocity(panda, outs[-2].positions, outs[-1].positions)
    np.testing.assert_allclose(v, factor * np.array([0.05, 0.0, -0.025, 0, 0, 0]), atol=2e-5)


def test_command_in_tool_frame_moves_along_the_tool_axis(panda):
    loop = Loop(panda, **FAST)
    outs = loop.run(10, cmd([0, 0, 0.05], frame=panda.tip_frame))
    R = panda.fk(outs[-2].positions).rotation
    v = tool_velocity(panda, outs[-2].positions, outs[-1].positions)
    np.testing.assert_allclose(v[:3], R @ [0, 0, 0.05], atol=5e-5)
    np.testing.assert_allclose(v[3:], 0.0, atol=5e-5)


def test_spatial_twist_about_base_origin_moves_the_tool_by_w_cross_p(panda):
    w = np.array([0.0, 0.0, 0.2])                             # rotate about the base z axis
    about_base = Loop(panda, apply_twist_about_tool=False, **FAST)
    outs = about_base.run(10, cmd([0, 0, 0], w))
    p = panda.fk(outs[-2].positions).translation
    v = tool_velocity(panda, outs[-2].positions, outs[-1].positions)
    np.testing.assert_allclose(v[:3], np.cross(w, p), atol=2e-4)      # the tool swings around the base
    np.testing.assert_allclose(v[3:], w, atol=2e-4)
    about_tool = Loop(panda, apply_twist_about_tool=True, **FAST)
    outs = about_tool.run(10, cmd([0, 0, 0], w))
    v = tool_velocity(panda, outs[-2].positions, outs[-1].positions)
    np.testing.assert_allclose(v[:3], 0.0, atol=2e-4)                # the tool turns in place
    np.testing.assert_allclose(v[3:], w, atol=2e-4)


# ---- timeouts ------------------------------------------------------------------------------------------
def test_stale_command_ramps_to_zero_within_acceleration_limits_then_holds(panda):
    loop = Loop(panda, command_in_type="speed_units", num_outgoing_halt_msgs_to_publish=4)
    amax = loop.servo.acceleration_limits
    twist = cmd([0.1, 0.0, 0.0])
    loop.run(150, twist)
    timeout_ticks = int(round(loop.servo.config.incoming_command_timeout / DT))
    outs = loop.run(timeout_ticks + 400)
    first = next(i for i, o in enumerate(outs) if o.status == ServoStatus.STALE_COMMAND)
    assert first >= timeout_ticks - 1 and all(o.status == ServoStatus.OK for o in outs[:first])
    v0 = outs[first - 1].velocities
    stop = next(i for i, o in enumerate(outs) if not o.velocities.any())
    time_to_stop = (stop - first + 1) * DT
    assert time_to_stop <= np.max(np.abs(v0) / amax) + DT + 1e-12
    velocities = [v0] + [o.velocities for o in outs[first:stop + 1]]
    for a, b in zip(velocities, velocities[1:]):
        assert np.all(np.abs(b - a) <= amax * DT * (1 + 1e-9))
        if b.any():                                         # the direction is kept while slowing
            np.testing.assert_allclose(b / np.linalg.norm(b), v0 / np.linalg.norm(v0), atol=1e-9)
    holds = outs[stop + 1:]
    assert all(o.status == ServoStatus.STOPPED for o in holds)
    assert sum(o.publish for o in holds) == 4 and all(not o.publish for o in holds[4:])
    assert all(np.array_equal(o.positions, holds[0].positions) for o in holds)


def test_zero_halt_messages_means_publish_forever(panda):
    loop = Loop(panda, num_outgoing_halt_msgs_to_publish=0)
    outs = loop.run(300)
    assert all(o.status == ServoStatus.STOPPED and o.publish for o in outs)
    assert "no command received yet" in outs[0].message


def test_stale_joint_state_halts_and_no_state_publishes_nothing(panda):
    servo = Servo(panda, ServoConfig(publish_period=DT))
    out = servo.step(0.0)
    assert out.status == ServoStatus.JOINT_STATE_MISSING and not out.publish
    assert np.all(np.isfinite(out.positions))
    loop = Loop(panda, command_in_type="speed_units", joint_state_timeout=0.1)
    loop.run(50, cmd([0.05, 0, 0]))
    held = loop.outputs[-1].positions
    outs = [loop.tick(cmd([0.05, 0, 0]), follow=False) for _ in range(100)]   # joint states stop
    missing = [o for o in outs if o.status == ServoStatus.JOINT_STATE_MISSING]
    assert len(missing) >= 40 and all(o.publish for o in missing)
    assert "of running time (timeout 0.1 s)" in missing[0].message
    # a controlled stop: velocity falls within the acceleration limits (no step to zero), then holds
    amax = loop.servo.acceleration_limits
    velocities = [loop.outputs[len(loop.outputs) - len(outs) - 1].velocities] + [o.velocities for o in outs]
    for a, b in zip(velocities, velocities[1:]):
        assert np.all(np.abs(b - a) <= amax * DT * (1 + 1e-9))
    stopped = [o for o in missing if not o.velocities.any()]
    assert len(stopped) >= 30 and all(np.array_equal(o.positions, stopped[0].positions) for o in stopped)
    assert np.max(np.abs(stopped[0].positions - held)) < 0.05


# ---- pause, resume, anchoring --------------------------------------------------------------------------
def test_pause_and_resume_never_jump(panda):
    loop = Loop(panda, command_in_type="speed_units")
    loop.run(100, cmd([0.05, 0, 0]))
    v_before = loop.outputs[-1].velocities
    loop.servo.pause()
    ramp = [loop.tick(cmd([0.05, 0, 0])) for _ in range(60)]     # commands are ignored while paused
    amax = loop.servo.acceleration_limits
    for a, b in zip([v_before] + [o.velocities for o in ramp], [o.velocities for o in ramp]):
        assert np.all(np.abs(b - a) <= amax * DT * (1 + 1e-9)), "pausing must decelerate, not stop dead"
    assert all(o.status == ServoStatus.PAUSED for o in ramp)
    moving = [o for o in ramp if o.velocities.any()]
    assert moving and all(o.publish for o in moving) and not ramp[-1].publish and not ramp[-1].velocities.any()
    moved = loop.outputs[-1].positions + 0.01                  # the arm was moved while paused
    for _ in range(2):                                         # a driver reports it at its rate
        loop.servo.set_measurement(JointMeasurement(moved, loop.now))
    loop.servo.resume()
    out = loop.tick()                                          # the old command is not reused
    np.testing.assert_array_equal(out.positions, np.clip(moved, panda.limits.lower, panda.limits.upper))
    assert out.status == ServoStatus.STOPPED and not out.velocities.any()
    out = loop.tick(cmd([0.05, 0, 0]))                         # a new command starts from there, ramping
    assert np.max(np.abs(out.positions - moved)) <= np.max(out.velocities) * DT + 1e-15


def _velocity_steps_over_limit(loop, outputs, before):
    """Largest per-tick velocity change of `outputs` (after `before`), as a multiple of the acceleration limit."""
    amax = loop.servo.acceleration_limits
    velocities = [before] + [o.velocities for o in outputs]
    return max(float(np.max(np.abs(b - a) / (amax * DT))) for a, b in zip(velocities, velocities[1:]))


def test_back_to_back_pause_and_resume_during_a_twist_keep_the_velocity_within_the_acceleration_limits(panda):
    """Attack from issue 9: pause then resume in consecutive ticks while the arm moves fast. Re-anchoring at the
    measured state used to zero the commanded velocity in one tick (8.8-14.2 x the acceleration limit)."""
    loop = Loop(panda, command_in_type="speed_units")
    loop.run(150, cmd([0.0, 0.3, 0.0]))
    before = loop.outputs[-1].velocities
    assert np.abs(before).max() > 0.3
    outputs = []
    for _ in range(5):
        loop.servo.pause()
        outputs.append(loop.tick(cmd([0.0, 0.3, 0.0])))
        loop.servo.resume()
        outputs.append(loop.tick(None))
        outputs += [loop.tick(cmd([0.0, 0.3, 0.0])) for _ in range(3)]
    assert _velocity_steps_over_limit(loop, outputs, before) <= 1 + 1e-9


def test_joint_states_back_after_an_outage_keep_the_velocity_within_the_acceleration_limits(panda):
    """Joint states missing for ~100 ms, then back: the re-anchoring must continue the decelerating ramp, not
    zero it (8.7 x the acceleration limit before)."""
    loop = Loop(panda, command_in_type="speed_units", joint_state_timeout=0.1)
    loop.run(150, cmd([0.0, 0.3, 0.0]))
    before = loop.outputs[-1].velocities
    gap = [loop.tick(cmd([0.0, 0.3, 0.0]), follow=False) for _ in range(60)]     # 120 ms without states
    assert gap[-1].status == ServoStatus.JOINT_STATE_MISSING and gap[-1].velocities.any()
    back = loop.run(40, cmd([0.0, 0.3, 0.0]))
    assert back[-1].status == ServoStatus.OK
    assert _velocity_steps_over_limit(loop, gap + back, before) <= 1 + 1e-9


def test_a_stalled_servo_does_not_count_its_own_stall_against_the_joint_states(panda):
    """Under CPU load the servo's own tick can come tens of ms late while states keep arriving: the state it
    holds is then old only because the servo could not take the newer ones. That is not a missing state."""
    loop = Loop(panda, command_in_type="speed_units", joint_state_timeout=0.1)
    loop.run(50, cmd([0.0, 0.05, 0.0]))
    last_state = loop.now - 0.045                     # the newest state the servo could take: 45 ms before
    loop.servo.set_measurement(JointMeasurement(loop.outputs[-1].positions, last_state))
    late = loop.now + 0.07                            # this tick comes 70 ms late: the state is 115 ms old
    loop.servo.set_command(cmd([0.0, 0.05, 0.0], at=late))
    assert loop.servo.step(late).status == ServoStatus.OK
    # a state that stays old while the servo ticks on time is missing
    out = None
    for k in range(1, 60):
        out = loop.servo.step(late + k * DT)
    assert out.status == ServoStatus.JOINT_STATE_MISSING


def test_repeated_stalls_of_the_servo_all_count_as_its_own(panda):
    """Two stalls of 80 ms with 20 ms of on-time ticks between, and no new state: 180 ms since the state, of which
    20 ms of running time. Only the last stall used to be excluded, which halted at a 0.1 s timeout."""
    loop = Loop(panda, command_in_type="speed_units", joint_state_timeout=0.1)
    loop.run(50, cmd([0.0, 0.05, 0.0]))
    now = loop.now
    loop.servo.set_measurement(JointMeasurement(loop.outputs[-1].positions, now))
    for stall in (0.08, 0.08):
        now += DT + stall
        loop.servo.set_command(cmd([0.0, 0.05, 0.0], at=now))
        assert loop.servo.step(now).status == ServoStatus.OK
        for _ in range(5):
            now += DT
            assert loop.servo.step(now).status == ServoStatus.OK
    # the states really stop: the halt comes after 0.1 s of running time, not later
    ticks = 0
    while loop.servo.step(now + DT).status != ServoStatus.JOINT_STATE_MISSING:
        now += DT
        ticks += 1
        loop.servo.set_command(cmd([0.0, 0.05, 0.0], at=now))
    running = (12 + ticks + 1) * DT              # the on-time ticks since the state
    assert 0.1 <= running <= 0.1 + 2 * DT


def test_every_window_ends_held_at_rest_until_max_delivery_delay(panda):
    """A default JTC refuses a window that ends in the past: each window ends with the arm at rest at the tail's
    positions, held until max_delivery_delay after its stamp, so a window that arrives 0.9 s late is accepted."""
    from robokin_ros.core.trajectory.controller_rules import JtcSwitches, PointFacts, TrajectoryFacts, jtc_rejection
    loop = Loop(panda, command_in_type="speed_units", max_delivery_delay=1.0)
    outs = loop.run(40, cmd([0.05, 0.0, 0.0]))
    for out in outs[1:]:
        w = out.window
        assert w.times[-1] == pytest.approx(1.0) and np.all(w.velocities[-1] == 0.0)
        np.testing.assert_array_equal(w.positions[-1], w.positions[-2])      # no motion added
        assert np.all(w.velocities[-2] == 0.0) and w.times[-2] < 0.2
    names = list(panda.joint_names)
    w = outs[-1].window
    facts = TrajectoryFacts(names, [PointFacts(p, v, [], [], t) for t, p, v in zip(w.times, w.positions,
                                                                                   w.velocities)], 100 * 10**9)
    assert jtc_rejection(facts, names, 100_900_000_000, JtcSwitches()) is None        # [ns]
    rejection = jtc_rejection(facts, names, 101_100_000_000, JtcSwitches())
    assert rejection is not None and "ends in the past" in rejection.message


def test_integrates_from_command_and_reanchors_on_a_lasting_divergence(panda):
    loop = Loop(panda, command_in_type="speed_units", max_state_divergence=0.05)
    loop.run(20, cmd([0.05, 0, 0]))
    last = loop.outputs[-1]
    lagging = last.positions - 0.01                            # controller lag below the threshold
    loop.servo.set_measurement(JointMeasurement(lagging, loop.now))
    out = loop.tick(cmd([0.05, 0, 0]), follow=False)
    np.testing.assert_allclose(out.positions, last.positions + out.velocities * DT, atol=1e-15)
    # the arm held 0.2 rad away: the stream carries on for DIVERGENCE_PERSISTENCE, then re-anchors there
    offset = -0.2
    outs = []
    for _ in range(int(round(DIVERGENCE_PERSISTENCE / DT)) + 3):
        before = out.velocities
        loop.servo.set_measurement(JointMeasurement(out.positions + offset, loop.now))
        out = loop.tick(cmd([0.05, 0, 0]), follow=False)
        outs.append((before, out))
        if np.abs(out.window.positions[0] - outs[-2][1].positions).max() > 0.1 if len(outs) > 1 else False:
            break
    *streamed, (before, anchored) = outs
    assert DIVERGENCE_PERSISTENCE <= len(outs) * DT <= DIVERGENCE_PERSISTENCE + 2 * DT
    for (v0, o), (_, o_next) in zip(streamed, streamed[1:]):
        np.testing.assert_allclose(o_next.window.positions[0], o.positions, atol=1e-12)      # no step meanwhile
    far = streamed[-1][1].positions + offset
    # re-anchored at the measurement, carried on by the commanded velocity for the measurement's age (one tick)
    np.testing.assert_allclose(anchored.positions, far + before * DT + anchored.velocities * DT, atol=1e-12)
    # the commanded velocity carries on through the re-anchoring: no step beyond the acceleration limits
    assert np.all(np.abs(anchored.velocities - before) <= loop.servo.acceleration_limits * DT * (1 + 1e-9))
    assert np.max(np.abs(before)) > 10 * np.max(loop.servo.acceleration_limits) * DT    # it was moving


def test_a_measurement_that_only_lags_by_its_age_or_briefly_is_no_divergence(panda):
    """A state 80 ms old at full speed trails the command by v * 80 ms without the arm lagging at all; and a
    controller that got a window late lags for a few ticks, then catches up. Neither may step the stream (a
    re-anchor stepped it back by up to 88 mrad on a busy CPU)."""
    loop = Loop(panda, command_in_type="speed_units", max_state_divergence=0.05)
    loop.run(300, cmd([0.0, 0.5, 0.0]))
    v = loop.outputs[-1].velocities
    assert np.abs(v).max() * 0.08 > 0.05                     # 80 ms of motion exceed the divergence threshold
    old = loop.outputs[-41].positions                         # where the command was 80 ms ago
    loop.servo.set_measurement(JointMeasurement(old, loop.now - 0.08))
    outs = [loop.tick(cmd([0.0, 0.5, 0.0]), follow=False)]
    for k in range(20):                                       # 40 ms of a lagging arm, then it catches up
        lag = outs[-1].positions - v * 0.06
        loop.servo.set_measurement(JointMeasurement(lag, loop.now))
        outs.append(loop.tick(cmd([0.0, 0.5, 0.0]), follow=k >= 19))
    for a, b in zip(outs, outs[1:]):
        np.testing.assert_allclose(b.window.positions[0], a.positions, atol=1e-12)


# ---- validation and config -----------------------------------------------------------------------------
def test_bad_command_is_rejected_and_the_previous_one_keeps_ageing(panda):
    loop = Loop(panda, command_in_type="speed_units")
    loop.run(10, cmd([0.05, 0, 0]))
    with pytest.raises(InvalidInputError, match="twist command linear has non-finite entries at indices"):
        loop.servo.set_command(cmd([np.nan, 0, 0], at=loop.now))
    with pytest.raises(UnknownFrameError, match="frame 'nowhere' is not in the model; available frames"):
        loop.servo.set_command(cmd([0.05, 0, 0], frame="nowhere", at=loop.now))
    outs = loop.run(100)
    assert outs[0].status == ServoStatus.OK and outs[-1].status in (ServoStatus.STOPPED,
                                                                    ServoStatus.STALE_COMMAND)
    with pytest.raises(InvalidInputError, match="measured joint positions must have 7 entries"):
        loop.servo.set_measurement(JointMeasurement(np.zeros(6), loop.now))
    with pytest.raises(InvalidInputError, match="now must be a finite time"):
        loop.servo.step(float("nan"))


def test_update_config_validates_against_the_robot_first(panda):
    servo = Servo(panda, ServoConfig())
    with pytest.raises(ConfigError, match="max_joint_velocity has 2 entries but the chain has 7 joints"):
        servo.update_config(ServoConfig(max_joint_velocity=(1.0, 1.0)))
    assert servo.config == ServoConfig()
    servo.update_config(ServoConfig(scale=ScaleConfig(linear=0.1)))
    assert servo.config.scale.linear == 0.1


# JointTrajectoryController's default end-velocity rule (allow_nonzero_velocity_at_trajectory_end: false): the
# last point's |velocity| must not exceed float epsilon, std::numeric_limits<float>::epsilon().
JTC_END_VELOCITY_EPSILON = float(np.finfo(np.float32).eps)


def assert_jtc_default_rules_accept(window, n):
    """The window passes the default JTC checks that concern its contents (sizes, times, end velocity)."""
    times, positions, velocities = window.times, window.positions, window.velocities
    assert positions.shape == velocities.shape == (len(times), n)
    assert np.all(np.diff(times) > 0.0), times
    assert np.all(np.abs(velocities[-1]) <= JTC_END_VELOCITY_EPSILON), velocities[-1]
    assert np.isfinite(positions).all() and np.isfinite(velocities).all()


def hermite(p0, v0, p1, v1, h, s):
    """Cubic Hermite between (p0, v0) and (p1, v1) over h [s], at shares s of the segment (as JTC samples)."""
    return ((2 * s**3 - 3 * s**2 + 1) * p0 + (s**3 - 2 * s**2 + s) * h * v0
            + (-2 * s**3 + 3 * s**2) * p1 + (s**3 - s**2) * h * v1)


def test_window_covers_the_latency_and_stops_a_joint_at_its_margin(panda):
    q0 = panda.home()
    q0[0] = panda.limits.upper[0] - 0.025                      # joint 1 about to reach its margin (0.02 rad)
    loop = Loop(panda, q0=q0, command_in_type="speed_units", max_expected_latency=0.05)
    outs = loop.run(30, cmd([0, 0, 0], [0, 0, 0.3]))          # turning about z drives joint 1 up
    out = outs[-1]
    w = out.window
    # time 0 = this tick's state, dt = the commanded positions, then the grid's last time (>= the latency), the
    # joint's braking times, the tail and the hold
    assert w.times[0] == 0.0 and DT in w.times and DT + 0.05 in w.times
    assert np.all(np.diff(w.times) > 0)
    np.testing.assert_allclose(w.positions[w.times == DT][0], out.positions, atol=1e-15)
    assert np.all(w.positions <= panda.limits.upper) and np.all(w.positions >= panda.limits.lower)
    margin = panda.limits.upper[0] - 0.02
    for o in outs:
        assert o.window.positions[:, 0].max() <= margin + 1e-12
        assert window_check(o.window, loop.servo) is None
    assert_jtc_default_rules_accept(w, panda.n)
    short = Loop(panda, max_expected_latency=0.002).run(1)[-1]
    # at rest: a one-period tail, then the hold until max_delivery_delay
    np.testing.assert_allclose(short.window.times, [0.0, DT, 2 * DT, 3 * DT, 1.0])


def window_check(window, servo):
    """The outgoing check's verdict on a servo window (None: it may be sent)."""
    robot = servo.robot
    return window_rejection(window.times, window.positions, window.velocities, robot.joint_names,
                            robot.limits.lower, robot.limits.upper, robot.limits.velocity, servo.acceleration_limits)


def fill_window(q, v, lower, upper, amax, grid, margins=None, dt=DT, hold=1.0):
    """`window_arrays` into fresh arrays: (times, positions, velocities) of the points it fills."""
    n = len(q)
    rows = window_capacity(len(grid), n)
    t, positions, velocities = np.empty(rows), np.empty((rows, n)), np.empty((rows, n))
    margins = np.zeros(n) if margins is None else margins
    limits = window_limits(lower, upper, margins, amax, np.full(n, np.inf))
    k, first_period = window_arrays(q, v, limits, dt, grid, hold, t, positions, velocities)
    assert t[first_period] == dt
    return t[:k], positions[:k], velocities[:k]


@settings(deadline=None, max_examples=60)
@given(seed=st.integers(0, 2**32 - 1))
def test_window_tail_decelerates_uniformly_within_the_acceleration_limits(seed):
    """The tail's end is at rest; between the last grid point and it, a cubic Hermite (what JTC interpolates) is
    the constant-deceleration parabola, every joint decelerating at no more than its limit."""
    rng = np.random.default_rng(seed)
    n, dt = 4, 0.002
    grid = window_times(dt, 0.05)
    q, v = rng.uniform(-0.5, 0.5, n), rng.uniform(-2.0, 2.0, n)
    amax = rng.uniform(1.0, 20.0, n)
    lower, upper = np.full(n, -10.0), np.full(n, 10.0)                  # far away: no braking for them
    t, positions, velocities = fill_window(q, v, lower, upper, amax, grid)
    assert len(t) == len(grid) + 2 and t[-1] == max(1.0, t[-2] + 1e-3)   # the grid, the tail's end, the hold
    np.testing.assert_array_equal(t[:-2], grid)
    assert np.all(velocities[-2:] == 0.0)
    tail = t[-2] - t[-3]
    assert np.max(np.abs(v) / amax) <= tail + 1e-12 < np.max(np.abs(v) / amax) + dt + 1e-12
    p_end = q + v * grid[-1]
    np.testing.assert_allclose(positions[-3], p_end, atol=1e-12)
    np.testing.assert_allclose(positions[-2], p_end + v * tail / 2, atol=1e-12)
    tau = np.linspace(0.0, tail, 41)[:, None]                           # (41, 1) time into the tail [s]
    sampled = hermite(positions[-3], velocities[-3], positions[-2], velocities[-2], tail, tau / tail)
    np.testing.assert_allclose(sampled, p_end + v * tau - v / (2 * tail) * tau**2, atol=1e-12)
    assert np.all(np.abs(v) / tail <= amax * (1 + 1e-12))              # the uniform deceleration, per joint


@settings(deadline=None, max_examples=300)
@given(seed=st.integers(0, 2**32 - 1), sparse=st.booleans())
def test_a_joint_braking_for_its_margin_stops_there_within_its_acceleration_limit(seed, sparse):
    """A joint whose extrapolation would pass its limit margin brakes at its acceleration limit after the first
    period and stops at the margin: the servo's braking speed (`limits.braking_speed`) leaves it just that room.
    Measured on the spline a JTC plays (core/trajectory/outgoing_check.py's numpy evaluation): no joint exceeds its
    acceleration limit or passes its margin, and the compiled check agrees."""
    rng = np.random.default_rng(seed)
    n = 3
    grid = window_times(DT, 0.05)
    grid = sparse_window_times(grid) if sparse else grid
    amax = rng.uniform(1.0, 25.0, n)
    margin = rng.uniform(0.0, 0.03, n)
    lower, upper = np.full(n, -2.0), np.full(n, 2.0)
    inner_lower, inner_upper = lower + margin, upper - margin
    # rooms from nothing to beyond the window's reach; the servo's braking speed bounds |v| there
    room = rng.uniform(0.0, 0.3, n) * (rng.random(n) < 0.9)
    v = rng.uniform(-2.6, 2.6, n)
    v = np.sign(v) * np.minimum(np.abs(v), [braking_speed(r, a, DT) for r, a in zip(room, amax)])
    q = np.where(v >= 0, inner_upper - room, inner_lower + room)
    t, positions, velocities = fill_window(q, v, lower, upper, amax, grid, margin)
    assert np.all(np.diff(t) >= MIN_POINT_SPACING - 1e-15)
    # the first period as commanded, but for braking begun up to a few MIN_POINT_SPACING early (a stop time moved
    # off another point)
    i = int(np.flatnonzero(t == DT)[0])
    early = 3 * MIN_POINT_SPACING * amax
    assert np.all(np.abs(velocities[i]) <= np.abs(v)) and np.all(np.abs(velocities[i] - v) <= early), velocities[i] - v
    np.testing.assert_allclose(positions[i], q + v * DT, atol=float((early * 3 * MIN_POINT_SPACING).max()) + 1e-12)
    peaks = interval_peaks(t, positions, velocities)
    assert np.all(peaks.acceleration <= amax * (1 + 1e-5) + 1e-9), (peaks.acceleration / amax).max()
    q_end = positions[-1]
    assert np.all(q_end <= upper) and np.all(q_end >= lower)
    # each joint stopped at its margin, never past it, short of it only by a moved time's travel
    beyond = np.where(v >= 0, q_end - inner_upper, inner_lower - q_end)
    assert np.all(beyond <= 1e-12), beyond
    braked = np.abs(v) * (grid[-1] + 0.5 * (t[-2] - grid[-1])) > room
    assert np.all(beyond[braked] >= -np.abs(v[braked]) * 2 * MIN_POINT_SPACING - 1e-9), beyond
    assert window_violation(t, positions, velocities, lower, upper, np.full(n, 2.61), amax, 2e-3)[0] == 0
    q_s, v_s = np.empty(n), np.empty(n)
    for time in np.linspace(0.0, t[-2], 500):                            # the spline never passes a limit either
        sample_window(t, positions, velocities, time, q_s, v_s)
        assert np.all(q_s <= upper + 1e-12) and np.all(q_s >= lower - 1e-12)


def _drive_then_stall(robot, keep_tail=True, ticks=150, stall_s=0.4):
    """A servo streaming windows to a simulated JTC-like arm every tick, then the messages stop.

    Returns (the last commanded joint velocity, (ticks, 2, n) the arm's velocity over each tick's last ms beside
    that tick's commanded velocity, (m, n) arm velocities after the stall every 1 ms, the acceleration limits).
    `keep_tail=False` sends the windows without their deceleration tail: the previous behaviour, kept as the
    control that shows the stall check can fail."""
    loop = Loop(robot, command_in_type="speed_units", max_expected_latency=0.05)
    sim = SimulatedJoints(robot, robot.home(), 0.0)
    command, streaming, now = cmd([0.0, 0.15, 0.0]), [], 0.0
    for k in range(1, ticks + 1):
        loop.k = k
        now = k * DT
        loop.servo.set_command(dataclasses.replace(command, received_at=now))
        loop.servo.set_measurement(JointMeasurement(sim.positions.copy(), now))
        out = loop.servo.step(now)
        w = out.window
        last = len(w.times) if keep_tail else len(w.times) - 2
        sim.follow(TrajectoryPoints(w.times[:last], w.positions[:last], w.velocities[:last]), start=now)
        for sub in (0.5, 1.0):                                     # the arm's own cycle: 1 kHz
            sim.step(now + sub * DT)
        streaming.append((sim.velocities.copy(), out.velocities))
    stalled = [sim.positions.copy()]
    for i in range(1, int(stall_s / 0.001) + 1):
        sim.step(now + DT + i * 0.001)
        stalled.append(sim.positions.copy())
    # velocities from the positions (the sim's own reported velocity is differenced over uneven intervals)
    return out.velocities, np.array(streaming), np.diff(stalled, axis=0) / 0.001, loop.servo.acceleration_limits


def test_the_arm_moves_at_the_commanded_velocity_and_stops_within_the_acceleration_limits_after_a_stall(panda):
    """Steady motion: the arm's velocity is the command (the tail is never reached while windows keep coming).
    Stall: the arm follows the last window to rest, decelerating within the acceleration limits."""
    commanded, streaming, stalled, amax = _drive_then_stall(panda)
    np.testing.assert_allclose(streaming[-100:, 0], streaming[-100:, 1], atol=1e-9)
    assert np.abs(commanded).max() > 0.05
    acceleration = np.diff(stalled, axis=0) / 0.001                                      # (m, n)
    assert np.all(np.abs(acceleration) <= amax * 1.02 + 1e-6), np.abs(acceleration).max(axis=0) / amax
    np.testing.assert_array_equal(stalled[-1], 0.0)
    speed = np.abs(stalled).max(axis=1)
    assert np.all(np.diff(speed) <= 1e-9), "the stop must not speed up again"
    # the previous behaviour, windows ending at the commanded velocity: the same stall stops the arm abruptly
    _, old_streaming, old_stalled, _ = _drive_then_stall(panda, keep_tail=False)
    np.testing.assert_allclose(old_streaming[-100:], streaming[-100:], atol=1e-9)        # same motion meanwhile
    old_acceleration = np.diff(old_stalled, axis=0) / 0.001
    assert np.any(np.abs(old_acceleration) > 5 * amax), "control: without the tail the stop is a velocity step"


def test_late_and_early_ticks_keep_every_window_continuous_with_the_last(panda):
    """Each window is stamped with its tick's time and a controller follows the previous one until it arrives: the
    new window must start where the previous one has taken the arm by then, whatever the real gap between ticks
    (a Python timer ticks late by a fraction of its period). Integrating one nominal period per tick instead
    would leave the arm behind by the lateness each tick: slower than the command, and stamps that fall ever
    further into the past."""
    servo = Servo(panda, ServoConfig(publish_period=DT, command_in_type="speed_units"))
    rng = np.random.default_rng(7)
    now, previous, gaps = 0.0, None, []
    for _ in range(300):
        now += DT * rng.uniform(0.6, 1.6)                      # mean 1.1 periods: late more often than early
        servo.set_measurement(JointMeasurement(panda.home() if previous is None else previous[1].positions[0],
                                               now))
        servo.set_command(cmd([0.0, 0.1, 0.05], at=now))
        out = servo.step(now)
        if previous is not None:
            then, window = previous
            straight = window.times < window.times[-2]          # before the stopping tail: q + v t, piecewise linear
            expected = [np.interp(now - then, window.times[straight], window.positions[straight, j])
                        for j in range(panda.n)]
            gaps.append(np.abs(out.window.positions[0] - expected).max())
        previous = (now, out.window)
    assert max(gaps) < 1e-9, max(gaps)


def test_after_a_stall_longer_than_the_window_the_servo_continues_from_where_the_tail_left_the_arm(panda):
    """A stall longer than the window: the controller has followed the last window into its stopping tail and
    holds its end. The next window starts there, at rest, and accelerates within the limits (no position jump
    back to an extrapolated state, no velocity step)."""
    loop = Loop(panda, command_in_type="speed_units", max_expected_latency=0.05)
    loop.run(100, cmd([0.0, 0.1, 0.0]))
    tail_end = loop.outputs[-1].window.positions[-1]
    assert np.abs(loop.outputs[-1].velocities).max() > 0.05
    later = loop.now + 0.5
    loop.servo.set_measurement(JointMeasurement(tail_end + 1e-4, later))
    loop.servo.set_command(cmd([0.0, 0.1, 0.0], at=later))
    out = loop.servo.step(later)
    np.testing.assert_allclose(out.window.positions[0], tail_end, atol=1e-12)
    assert np.all(np.abs(out.velocities) <= loop.servo.acceleration_limits * DT * (1 + 1e-9))


def test_a_window_without_limits_in_reach_is_sparse_and_describes_the_same_motion(panda):
    """Far from the limits the published window has 5 points (now, dt, the last grid time, the tail, the hold); a
    controller interpolating it (cubic Hermite, as JTC) follows exactly the motion of the full grid's window. Near
    a limit the braking joint's start and stop are added: every window passes the outgoing check there too."""
    loop = Loop(panda, command_in_type="speed_units", max_expected_latency=0.05)
    out = loop.run(30, cmd([0.0, 0.1, 0.05], [0.1, 0.0, 0.0]))[-1]
    sparse = out.window
    grid = window_times(DT, 0.05)
    assert len(sparse.times) == 5 and len(grid) > 3
    np.testing.assert_array_equal(sparse.times[:3], grid[[0, 1, -1]])
    full = fill_window(sparse.positions[0], sparse.velocities[0], panda.limits.lower, panda.limits.upper,
                       loop.servo.acceleration_limits, grid)
    assert len(full[0]) == len(grid) + 2
    n = panda.n
    q_sparse, v_sparse, q_full, v_full = (np.empty(n) for _ in range(4))
    for t in np.linspace(0.0, full[0][-1] + 0.01, 400):
        sample_window(sparse.times, sparse.positions, sparse.velocities, t, q_sparse, v_sparse)
        sample_window(*full, t, q_full, v_full)
        np.testing.assert_allclose(q_sparse, q_full, atol=1e-12)
        np.testing.assert_allclose(v_sparse, v_full, atol=1e-9)
    # the joint this twist moves fastest, 0.1 rad from the limit it moves toward, with no margin
    turn = cmd([0, 0, 0], [0, 0, 0.5])
    v = Loop(panda, command_in_type="speed_units").run(50, turn)[-1].velocities
    j = int(np.argmax(np.abs(v)))
    q0 = panda.home()
    q0[j] = panda.limits.upper[j] - 0.1 if v[j] > 0 else panda.limits.lower[j] + 0.1
    braking = Loop(panda, q0=q0, command_in_type="speed_units", max_expected_latency=0.05,
                   joint_limit_margins=[0.0] * panda.n)
    outs = braking.run(400, turn)
    longer = [o.window for o in outs if len(o.window.times) > 5]
    assert longer, "a window braking for a limit adds the braking's start and stop"
    assert all(len(o.window.times) in braking.servo.window_point_counts for o in outs)
    for o in outs:
        assert window_check(o.window, braking.servo) is None
    assert np.any(np.isclose(outs[-1].positions[j], (panda.limits.lower[j], panda.limits.upper[j]), atol=1e-6))


def test_window_times_grid():
    for dt, latency in ((0.002, 0.05), (0.001, 0.05), (0.01, 0.05), (0.001, 0.2)):
        t = window_times(dt, latency)
        assert t[0] == 0.0 and t[1] == dt and t[-1] >= latency - 1e-12 and len(t) <= 10
        assert np.all(np.diff(t) >= dt - 1e-15)


# ---- limits over long random sequences -----------------------------------------------------------------
@settings(deadline=None, max_examples=12)
@given(seed=st.integers(0, 2**32 - 1))
@example(seed=27489907)     # halt-all at joint 6's margin: 1.0009 a dt before window.bound_hold
def test_limits_hold_over_long_random_command_sequences(panda, seed):
    rng = np.random.default_rng(seed)
    q0 = panda.random_positions(rng, 0.0)
    loop = Loop(panda, q0=q0, command_in_type="unitless", scale=ScaleConfig(linear=0.5, rotational=1.5),
                posture_gain=float(rng.uniform(0, 2)))
    vmax, amax = loop.servo.velocity_limits, loop.servo.acceleration_limits
    command, prev = None, np.zeros(panda.n)
    for _ in range(400):
        if rng.random() < 0.05:
            command = cmd(rng.uniform(-1.5, 1.5, 3), rng.uniform(-1.5, 1.5, 3))
        out = loop.tick(command if rng.random() < 0.9 else None)
        q, v = out.positions, out.velocities
        assert np.all(np.isfinite(q)) and np.all(np.isfinite(out.window.positions))
        assert np.all(q >= panda.limits.lower) and np.all(q <= panda.limits.upper)
        assert_jtc_default_rules_accept(out.window, panda.n)
        assert np.all(out.window.positions >= panda.limits.lower) and np.all(out.window.positions <= panda.limits.upper)
        assert np.all(np.abs(v) <= vmax * (1 + 1e-12))
        assert np.all(np.abs(v - prev) <= amax * DT * (1 + 1e-9) + 1e-12), out.message
        prev = v


def test_a_silent_servo_restarts_from_where_another_controller_left_the_arm(panda):
    """After the halt messages the servo is silent; if a path controller then moves the arm by less than
    max_state_divergence, the next command must start from the measured state, not jump back."""
    loop = Loop(panda, num_outgoing_halt_msgs_to_publish=2, **FAST)
    loop.run(20, cmd([0.02, 0, 0]))
    outs = [loop.tick() for _ in range(120)]                  # stale -> ramp -> 2 hold messages -> silent
    assert not outs[-1].publish
    moved = outs[-1].positions + 0.02                         # 0.02 rad < max_state_divergence (0.05)
    for _ in range(2):                                        # reported twice, at the driver's rate
        loop.servo.set_measurement(JointMeasurement(moved, loop.now))
    first = loop.tick(cmd([0.0, 0.0, 0.01]), follow=False)
    assert np.abs(first.window.positions[0] - moved).max() < 1e-9
    assert np.abs(first.positions - moved).max() < 1e-3          # one small step, not a 0.02 rad jump


def test_a_restart_after_silence_ignores_a_state_measured_before_the_arm_came_to_rest(panda):
    """On a busy CPU the newest joint state at a restart may date from the ramp-down, before the arm came to rest
    where the servo left it: anchoring there stepped the next window back by ~20 mrad. Only a state received after
    the servo went silent serves as the anchor."""
    loop = Loop(panda, num_outgoing_halt_msgs_to_publish=2, **FAST)
    loop.run(60, cmd([0.0, 0.05, 0.0]))
    mid_motion = loop.outputs[-1].positions.copy()
    silent = [loop.tick(follow=False) for _ in range(120)]           # stale -> ramp -> 2 holds -> silent
    assert not silent[-1].publish
    rest = silent[-1].positions
    assert np.abs(rest - mid_motion).max() > 1e-3
    loop.servo.set_measurement(JointMeasurement(mid_motion, loop.now - 0.2))      # a state from before the rest
    first = loop.tick(cmd([0.0, 0.05, 0.0]), follow=False)
    np.testing.assert_allclose(first.window.positions[0], rest, atol=1e-12)
    # a driver that was stalled itself jumps between two reports: reports that disagree do not anchor
    quiet = [loop.tick(follow=False) for _ in range(120)]
    held = quiet[-1].positions
    loop.servo.set_measurement(JointMeasurement(held, loop.now))
    loop.servo.set_measurement(JointMeasurement(held + 0.019, loop.now))
    resumed = loop.tick(cmd([0.0, 0.05, 0.0]), follow=False)
    np.testing.assert_allclose(resumed.window.positions[0], held, atol=1e-12)
    # states received after the silence that agree do anchor (another controller may have moved the arm meanwhile)
    quiet = [loop.tick(follow=False) for _ in range(120)]
    moved = quiet[-1].positions + 0.02
    for _ in range(2):                                        # reported twice, at the driver's rate
        loop.servo.set_measurement(JointMeasurement(moved, loop.now))
    again = loop.tick(cmd([0.0, 0.05, 0.0]), follow=False)
    np.testing.assert_allclose(again.window.positions[0], moved, atol=1e-12)


def test_an_idle_servo_stays_silent_through_a_joint_state_glitch(panda):
    """A servo that has gone silent must not start publishing hold messages when joint states pause and come
    back: another controller (a path execution) may be moving the arm, and holds would stop it."""
    loop = Loop(panda, num_outgoing_halt_msgs_to_publish=4, joint_state_timeout=0.1, **FAST)
    loop.run(20, cmd([0.02, 0, 0]))
    outs = [loop.tick() for _ in range(150)]
    assert not outs[-1].publish
    glitch = [loop.tick(follow=False) for _ in range(80)]          # joint states stop for 160 ms
    assert any(o.status == ServoStatus.JOINT_STATE_MISSING for o in glitch)
    after = loop.run(50)                                           # and come back
    assert not any(o.publish for o in glitch + after)
    fresh = Loop(panda, num_outgoing_halt_msgs_to_publish=4)
    assert not any(o.publish for o in fresh.run(100)), "never commanded: nothing to hold"


def test_impossible_speed_units_twists_are_rejected_and_state_stays_finite(panda):
    loop = Loop(panda, command_in_type="speed_units")
    loop.run(20, cmd([0.02, 0, 0]))
    for linear, angular in (([1e308, 0, 0], [0, 0, 0]), ([11.0, 0, 0], [0, 0, 0]), ([0, 0, 0], [0, 25.0, 0])):
        with pytest.raises(InvalidInputError, match="exceeds what any arm can do"):
            loop.servo.set_command(cmd(linear, angular, at=loop.now))
    outs = loop.run(20)                                    # the last good command keeps ageing, all finite
    assert all(np.isfinite(o.positions).all() and np.isfinite(o.window.positions).all() for o in outs)


def test_a_corrupted_state_always_counts_as_diverged():
    assert max_abs_difference(np.array([0.0, np.nan]), np.zeros(2)) == np.inf
    assert max_abs_difference(np.array([0.1, -0.3]), np.zeros(2)) == pytest.approx(0.3)


def test_tf_style_and_world_frame_names(panda):
    loop = Loop(panda, **FAST)
    outs = loop.run(10, cmd([0, 0, 0.05], frame="/" + panda.tip_frame))      # a leading slash is fine
    R = panda.fk(outs[-2].positions).rotation
    v = tool_velocity(panda, outs[-2].positions, outs[-1].positions)
    np.testing.assert_allclose(v[:3], R @ [0, 0, 0.05], atol=5e-5)
    outs = loop.run(10, cmd([0.05, 0, 0], frame="world"))                    # the URDF world = base here
    v = tool_velocity(panda, outs[-2].positions, outs[-1].positions)
    np.testing.assert_allclose(v[:3], [0.05, 0, 0], atol=5e-5)


def test_warm_up_runs_the_tracking_path(panda):
    """The warm-up must reach the IK (the compiled kernels), not stop at a missing state or a stale command."""
    out = warm_up(panda, ServoConfig())
    assert out.status == ServoStatus.OK and out.publish
    assert np.abs(out.velocities).max() > 0.0

    # the catch-up after a late tick is compiled (or loaded) too: its first compile inside the loop stalled the
    # demo's arm for a second. A fresh interpreter, so that other tests cannot have called it already.
    probe = ("from robokin_ros.core.robot import RobotModel\n"
             "from robokin_ros.core.servo.config import ServoConfig\n"
             "from robokin_ros.core.servo.servo import warm_up\n"
             "from robokin_ros.core.servo.window import sample_window\n"
             "assert not sample_window.signatures\n"
             "warm_up(RobotModel.from_name('panda'), ServoConfig())\n"
             "print(len(sample_window.signatures))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and int(done.stdout.split()[-1]) >= 1, done.stderr


# ---- status reports ------------------------------------------------------------------------------------
def _output(status, message="m", locked=()):
    window = TrajectoryWindow(np.zeros(1), np.zeros((1, 1)), np.zeros((1, 1)))
    return ServoOutput(np.zeros(1), np.zeros(1), window, status, message, locked, 0.1, 2.0, 1.0, True)


def test_status_is_reported_on_change_and_once_per_period():
    reporter = StatusReporter()
    ok = _output(ServoStatus.OK)
    first = reporter.report(ok, 0.0, 0.5)
    assert first is not None and (first.code, first.message, first.changed) == (ServoStatus.OK, "m", True)
    assert reporter.report(ok, 0.3, 0.5) is None                                # same, within the period
    again = reporter.report(ok, 0.5, 0.5)
    assert again is not None and not again.changed                             # repeated, not a change
    locked = reporter.report(_output(ServoStatus.OK, locked=("j1",)), 0.6, 0.5)
    assert locked is not None and locked.changed                                # locked joints are news


def test_rejections_are_shown_for_a_period_and_merged_by_kind():
    reporter = StatusReporter()
    reporter.reject(ServoStatus.INVALID_COMMAND, "bad twist", 0.0, 0.5)
    shown = reporter.report(_output(ServoStatus.OK), 0.1, 0.5)
    assert (shown.code, shown.message, shown.changed) == (ServoStatus.INVALID_COMMAND, "bad twist", True)
    paused = reporter.report(_output(ServoStatus.PAUSED, "paused"), 0.2, 0.5)
    assert (paused.code, paused.message) == (ServoStatus.PAUSED, "paused")       # the servo's state wins
    expired = reporter.report(_output(ServoStatus.OK), 0.5, 0.5)
    assert (expired.code, expired.message) == (ServoStatus.OK, "m")
    reporter.reject(ServoStatus.JOINT_STATE_MISSING, "bad state", 1.0, 0.5)
    reporter.command_accepted()                                                 # clears twist rejections only
    merged = reporter.report(_output(ServoStatus.STOPPED, "idle"), 1.1, 0.5)
    assert (merged.code, merged.message) == (ServoStatus.STOPPED, "idle; bad state")
    reporter.reject(ServoStatus.INVALID_COMMAND, "bad twist", 1.2, 0.5)
    reporter.command_accepted()
    assert reporter.report(_output(ServoStatus.OK), 1.3, 0.5).code == ServoStatus.OK


def test_routine_statuses():
    assert {s for s in ServoStatus if s.routine} == {ServoStatus.OK, ServoStatus.STOPPED, ServoStatus.PAUSED,
                                                     ServoStatus.STALE_COMMAND, ServoStatus.TARGET_REACHED,
                                                     ServoStatus.HAND_GUIDING}


# ---- command type (MoveIt Servo's ~/switch_command_type) -----------------------------------------------------
def test_command_type_starts_at_twist_and_serves_all_three():
    switch = CommandTypeSwitch()
    assert switch.current == CommandType.TWIST and switch.accepts(CommandType.TWIST)
    assert switch.request(CommandType.TWIST) == (True, "command type is TWIST")
    assert switch.request(int(CommandType.POSE)) == (True, "command type is POSE")
    assert switch.accepts(CommandType.POSE) and not switch.accepts(CommandType.TWIST)
    assert switch.request(int(CommandType.JOINT_JOG)) == (True, "command type is JOINT_JOG")
    assert switch.accepts(CommandType.JOINT_JOG) and not switch.accepts(CommandType.TWIST)
    switch.request(int(CommandType.TWIST))
    unknown = switch.request(7)
    assert not unknown.success and "unknown command type 7; valid: JOINT_JOG=0, TWIST=1, POSE=2" in unknown.reason
    # an input of another kind than the current type is not used (MoveIt Servo drops it)
    switch.current = CommandType.POSE
    assert not switch.accepts(CommandType.TWIST) and switch.accepts(CommandType.POSE)


def test_an_input_of_another_type_switches_only_an_idle_servo():
    switch = CommandTypeSwitch()
    busy = switch.offer(CommandType.JOINT_JOG, idle=False)
    assert not busy.success and "JOINT_JOG input ignored: the command type is TWIST" in busy.reason
    assert switch.current == CommandType.TWIST
    idle = switch.offer(CommandType.JOINT_JOG, idle=True)
    assert idle.success and "switched from TWIST to JOINT_JOG" in idle.reason
    assert switch.current == CommandType.JOINT_JOG
    assert switch.offer(CommandType.JOINT_JOG, idle=False).success                 # its own type: always
    assert not switch.offer(CommandType.POSE, idle=False).success
    assert switch.offer(CommandType.POSE, idle=True).success and switch.current == CommandType.POSE


def test_tick_stamps_keep_the_ticks_spacing_and_follow_a_clock_step():
    stamps = TickStamps()
    assert stamps.stamp(10.0, 5_000_300_000) == 5_000_300_000      # the first read came 300 us late
    assert stamps.stamp(10.002, 5_002_000_000) == 5_002_000_000     # an on-time read: the smaller offset wins
    # reads 5 ms late under load: the stamps keep the receive clock's 2 ms spacing
    assert stamps.stamp(10.004, 5_009_000_000) == 5_004_000_000
    # a clock step (simulated time, NTP): every read for 0.5 s says so, then it is re-measured
    tick, clock = 10.006, 9_000_000_000
    while tick < 10.006 + RESYNC_AFTER_S - 1e-9:
        assert stamps.stamp(tick, clock) == round(tick * 1e9) - 5_000_000_000      # still the old offset
        tick, clock = tick + 0.002, clock + 2_000_000
    assert stamps.stamp(tick, clock) == clock
    assert stamps.stamp(tick + 0.002, clock + 2_000_100) == clock + 2_000_000
    # a step back is taken at once (a smaller offset is always a better read)
    assert stamps.stamp(tick + 0.004, 1_000_000_000) == 1_000_000_000


def test_tick_stamps_ignore_reads_that_came_late_however_late():
    """A process descheduled between reading the two clocks reads the ROS clock tens of ms late: the stamp must not
    move (it used to be re-measured beyond 20 ms, a step of v * 20 ms in the stream)."""
    stamps = TickStamps()
    stamps.stamp(10.0, 5_000_000_000)
    for k, late_ns in enumerate((30_000_000, 0, 120_000_000, 250_000_000, 0, 40_000_000), start=1):
        tick = 10.0 + 0.002 * k
        assert stamps.stamp(tick, round(tick * 1e9) - 5_000_000_000 + late_ns) == round(tick * 1e9) - 5_000_000_000
