"""Joint jog in the servo core: MoveIt's JointJog semantics, and the same limits, acceleration ramp, timeout and
output as a twist. Evidence: the positions the servo commands, differenced, against the velocities asked for."""
import math

import numpy as np
import pytest

from robokin_ros.core.errors import InvalidInputError, UnknownJointError
from robokin_ros.core.servo.config import ScaleConfig, ServoConfig
from robokin_ros.core.servo.joint_jog import MAX_JOINT_SPEED, JointJogCommand, chain_velocities
from robokin_ros.core.servo.servo import Servo
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.types import JointMeasurement

DT = 0.002
NAMES = tuple(f"panda_joint{i}" for i in range(1, 8))
JTC_END_VELOCITY_EPSILON = float(np.finfo(np.float32).eps)


def jog(names, velocities=(), displacements=(), duration=0.0, at=0.0):
    return JointJogCommand(tuple(names), tuple(velocities), tuple(displacements), duration, at)


def test_named_joints_get_their_velocities_and_the_others_stay_still():
    cfg = ServoConfig(command_in_type="speed_units")
    v = chain_velocities(jog(["panda_joint4", "panda_joint2"], [0.3, -0.1]), NAMES, cfg)
    np.testing.assert_array_equal(v, [0.0, -0.1, 0.0, 0.3, 0.0, 0.0, 0.0])


def test_unitless_is_clipped_and_scaled_by_scale_joint_and_the_override_applies():
    cfg = ServoConfig(command_in_type="unitless", scale=ScaleConfig(joint=0.4))
    v = chain_velocities(jog(["panda_joint1", "panda_joint7"], [0.5, -3.0]), NAMES, cfg)
    np.testing.assert_allclose(v[[0, 6]], [0.2, -0.4])
    slow = ServoConfig(command_in_type="unitless", scale=ScaleConfig(joint=0.4),
                       override_velocity_scaling_factor=0.5)
    np.testing.assert_allclose(chain_velocities(jog(["panda_joint1"], [1.0]), NAMES, slow)[0], 0.2)


def test_displacements_over_a_duration_become_velocities():
    cfg = ServoConfig(command_in_type="speed_units")
    v = chain_velocities(jog(["panda_joint3"], displacements=[0.05], duration=0.25), NAMES, cfg)
    assert v[2] == pytest.approx(0.2)


@pytest.mark.parametrize("command, error, words", [
    (jog(["panda_joint1", "elbow"], [0.1, 0.1]), UnknownJointError, "joint 'elbow' is not in the model"),
    (jog(["panda_joint1", "panda_joint1"], [0.1, 0.2]), InvalidInputError, "names a joint twice"),
    (jog(["panda_joint1", "panda_joint2"], [0.1]), InvalidInputError, "2 names but 1 velocities"),
    (jog(["panda_joint1"], displacements=[0.1, 0.2], duration=1.0), InvalidInputError, "1 names but 2 displacements"),
    (jog(["panda_joint1"], [math.nan]), InvalidInputError, "non-finite values for ['panda_joint1']"),
    (jog(["panda_joint1"], displacements=[0.1]), InvalidInputError, "need a duration > 0"),
    (jog(["panda_joint1"]), InvalidInputError, "neither velocities nor displacements"),
    (jog(["panda_joint1"], [MAX_JOINT_SPEED * 2]), InvalidInputError, "is command_in_type right?"),
])
def test_bad_joint_jogs_are_refused_with_the_reason(command, error, words):
    with pytest.raises(error) as err:
        chain_velocities(command, NAMES, ServoConfig(command_in_type="speed_units"))
    assert words in str(err.value)


def _run(servo, q0, command, ticks, start=0):
    """Tick the servo with the arm following its commands exactly; the outputs."""
    outputs = []
    servo.set_measurement(JointMeasurement(q0, start * DT))
    for k in range(start + 1, start + ticks + 1):
        if command is not None:
            servo.set_joint_command(jog(command.joint_names, command.velocities, at=k * DT))
        out = servo.step(k * DT)
        servo.set_measurement(JointMeasurement(out.positions, k * DT))
        outputs.append(out)
    return outputs


def test_a_jogged_joint_ramps_within_its_acceleration_limit_to_the_commanded_speed_and_nothing_else_moves(panda):
    servo = Servo(panda, ServoConfig(publish_period=DT, command_in_type="speed_units"))
    amax = servo.acceleration_limits
    outs = _run(servo, panda.home(), jog(["panda_joint2"], [0.4]), 300)
    positions = np.array([o.positions for o in outs])
    velocity = np.diff(positions, axis=0) / DT                      # what the commanded positions amount to
    np.testing.assert_allclose(velocity[-50:, 1], 0.4, rtol=1e-9)
    still = [0, 2, 3, 4, 5, 6]
    np.testing.assert_array_equal(positions[:, still], np.tile(panda.home()[still], (len(outs), 1)))
    assert np.all(np.abs(np.diff(velocity[:, 1])) <= amax[1] * DT * (1 + 1e-9))
    assert outs[-1].status == ServoStatus.OK
    window = outs[-1].window
    assert np.all(np.abs(window.velocities[-1]) <= JTC_END_VELOCITY_EPSILON) and np.all(np.diff(window.times) > 0)


def test_a_joint_jogged_into_its_limit_stops_at_the_margin_and_the_status_names_it(panda):
    servo = Servo(panda, ServoConfig(publish_period=DT, command_in_type="speed_units", joint_limit_margins=[0.02]))
    q0 = panda.home()
    q0[3] = panda.limits.upper[3] - 0.15
    outs = _run(servo, q0, jog(["panda_joint4"], [0.5]), 600)
    final = outs[-1]
    assert final.positions[3] <= panda.limits.upper[3] - 0.02 + 1e-9
    assert final.positions[3] >= panda.limits.upper[3] - 0.02 - 1e-3          # it got there
    assert final.velocities[3] == 0.0
    assert final.status == ServoStatus.JOINT_BOUND and final.locked_joints == ("panda_joint4",)
    # halt_all_joints_in_joint_mode (true by default) words it as a halt; false says "locked at its upper limit"
    assert "panda_joint4 is at its upper limit margin" in final.message
    # and it can be jogged back out at once
    back = _run(servo, final.positions, jog(["panda_joint4"], [-0.5]), 20, start=600)
    assert back[-1].velocities[3] < 0.0 and back[-1].status == ServoStatus.OK


def test_a_silent_joint_jog_times_out_into_a_ramp_down(panda):
    servo = Servo(panda, ServoConfig(publish_period=DT, command_in_type="speed_units", incoming_command_timeout=0.05))
    outs = _run(servo, panda.home(), jog(["panda_joint1"], [0.3]), 200)
    assert outs[-1].velocities[0] == pytest.approx(0.3)
    silent = _run(servo, outs[-1].positions, None, 200, start=200)
    codes = [o.status for o in silent]
    assert ServoStatus.STALE_COMMAND in codes and codes[-1] == ServoStatus.STOPPED
    assert silent[-1].velocities[0] == 0.0


def test_a_twist_after_a_joint_jog_takes_over_and_vice_versa(panda):
    from robokin_ros.core.servo.types import TwistCommand
    servo = Servo(panda, ServoConfig(publish_period=DT, command_in_type="speed_units"))
    outs = _run(servo, panda.home(), jog(["panda_joint1"], [0.2]), 100)
    servo.set_command(TwistCommand(np.array([0.0, 0.0, 0.05]), np.zeros(3), "", 101 * DT))
    out = servo.step(101 * DT)
    assert out.status == ServoStatus.OK and not math.isnan(out.sigma_min)        # the twist's IK ran
    servo.set_joint_command(jog(["panda_joint1"], [0.2], at=102 * DT))
    out = servo.step(102 * DT)
    assert math.isnan(out.sigma_min) and outs[-1].velocities[0] == pytest.approx(0.2)
