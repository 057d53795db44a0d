"""servo_node with joint jerk limits set by parameter (issue 27 item 2), judged from what the controller receives: the
JointTrajectory windows on the servo's output topic, each taken over at its header stamp as JTC takes it over and
played as JTC's cubic Hermite through positions and velocities (test/jerk_play.py, numpy), the jerk the finite
difference of the played acceleration at 1 kHz. One servo_node and one sim_robot process (config/panda_servo.yaml,
collision checking off): a twist from rest, its reversal, then silence (the stale-command stop and the hold)."""
import time

import numpy as np
import pytest
from geometry_msgs.msg import TwistStamped
from ros_helpers import spin_for, spin_until
from servo_rig import ServoRig

from jerk_play import jerk_shares, play, takeover_steps
from robokin_ros.core.servo.status import ServoStatus

JERK = np.array([7500.0, 3750.0, 5000.0, 6250.0, 7500.0, 10000.0, 10000.0])   # Franka Panda [rad/s^3]
AMAX = np.array([15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0])                    # config/panda_servo.yaml


class Rig(ServoRig):
    def __init__(self, tmp_path) -> None:
        jerk = "[" + ", ".join(f"{j:.1f}" for j in JERK) + "]"
        super().__init__(tmp_path, "servo_jerk_client",
                         ["-p", "check_collisions:=false", "-p", f"max_joint_jerk:={jerk}"])
        self.twists = self.node.create_publisher(TwistStamped, "/servo_node/delta_twist_cmds", 10)
        assert spin_until(self.executor, lambda: self.twists.get_subscription_count() > 0 and len(self.states) > 5
                          and self.statuses and self.statuses[-1].code != ServoStatus.JOINT_STATE_MISSING, 60.0), \
            self.output()

    def stream(self, seconds: float, linear) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            msg = TwistStamped()
            msg.twist.linear.x, msg.twist.linear.y, msg.twist.linear.z = (float(v) for v in linear)
            self.twists.publish(msg)
            spin_for(self.executor, 0.01)


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    rig = Rig(tmp_path_factory.mktemp("servo_jerk"))
    yield rig
    rig.close()


def test_twist_start_reversal_and_stale_stop_reach_the_controller_within_the_jerk_limits(rig):
    first = len(rig.windows)
    rig.stream(0.6, (0.0, 0.5, 0.0))          # unitless: from rest
    rig.stream(0.6, (0.0, -0.5, 0.0))         # reversal
    spin_for(rig.executor, 1.0)               # silence: the stale-command stop, then the hold
    stamped = [(w.stamp, w) for w in rig.windows[first:]]
    assert len(stamped) > 200, rig.output()
    stamps = np.array([s for s, _ in stamped])
    assert (np.diff(stamps) > 0).all()
    played = play(stamped, rate_hz=1000.0)
    shares = jerk_shares(played, JERK)
    steps = np.abs(takeover_steps(stamped)).max(axis=0)
    speed = np.abs(played.velocities).max()
    print(f"servo_node with jerk limits: {len(stamped)} windows, peak jerk {shares.max():.6f} x the limit (1 kHz), "
          f"largest acceleration step at a takeover {steps.max():.2e} rad/s^2 "
          f"({(steps / 1e-3 / JERK).max() * 100:.3f} % of J over 1 ms), peak acceleration "
          f"{(np.abs(played.accelerations).max(axis=0) / AMAX).max():.4f} x, fastest joint {speed:.3f} rad/s")
    assert speed > 0.05, "the arm must have moved"
    # The slack: the stamps are each tick's time plus the node's offset to the ROS clock, the smallest seen so far
    # (core/servo/tick_clock.py), which shrinks by microseconds while the run starts; a stamp 1 us from where the
    # servo took the previous window over is a J * 1 us step of the acceleration (1e-2 rad/s^2 at 10^4 rad/s^3, 0.1 %
    # of J over 1 ms). Measured: 1.00003-1.0002 x, steps up to 1.6e-2 rad/s^2 (0.4 % of the smallest J over 1 ms).
    assert shares.max() <= 1.0 + 1e-2, shares
    assert (steps / 1e-3 <= 1e-2 * JERK).all(), steps
    assert (np.abs(played.accelerations).max(axis=0) <= AMAX * (1.0 + 1e-6)).all()
    assert not stamped[-1][1].velocities.any()                     # the hold: at rest
    codes = [ServoStatus(s.code) for s in rig.statuses]
    assert ServoStatus.STALE_COMMAND in codes and codes[-1] == ServoStatus.STOPPED
    shares_reported = [s.peak_jerk_share for s in rig.statuses]
    assert all(0.0 <= s <= 1.0 + 1e-3 for s in shares_reported), shares_reported
    assert any("jerk limits shape the ramp" in s.message for s in rig.statuses)
