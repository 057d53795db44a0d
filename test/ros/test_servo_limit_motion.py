"""servo_node driven as an outside client drove it (issue 24 items 2 and 3), judged the way a controller sees the
motion: from the published JointTrajectory windows (the cubic spline JTC plays through each window's points, the
velocities of consecutive points, and the velocity step from one window to the next), and the tool from the FK of
the simulated arm's /joint_states.

One servo_node and one sim_robot process (the shipped configuration with scale.joint 2 rad/s, and without
self-collision checking, which would halt the arm short of the base before any joint limit) serve the three cases in
order: pose targets chattering +-10 mm along x (from home; servo_node stopped 80 ms six times meanwhile),
panda_joint7 jogged at 2 rad/s into its upper limit, a pose target inside the robot base pursued until joint limits
stop it.
"""
import os
import signal
import threading
import time

import numpy as np
import pinocchio as pin
import pytest
from control_msgs.msg import JointJog
from geometry_msgs.msg import PoseStamped
from ros_helpers import se3_pose_stamped, spin_for, spin_until
from servo_rig import ServoRig
from window_judge import BETWEEN, WITHIN, between_windows, within_windows

from robokin_ros.core.servo.status import ServoStatus

AMAX = np.array([15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0])     # config/panda_servo.yaml
MARGIN = 0.02                                                  # joint_limit_margins' default [rad]
# servo_node stopped (SIGSTOP) for STALL [s], longer than its windows' 50 ms look-ahead, before these chatter targets
STALLED_AT = (30, 60, 90, 120, 180, 240)
STALL = 0.08


class Rig(ServoRig):
    """The processes and a client node that publishes pose targets and joint jogs."""

    def __init__(self, tmp_path) -> None:
        super().__init__(tmp_path, "limit_motion_client", ["-p", "scale.joint:=2.0", "-p", "check_collisions:=false"])
        self.poses = self.node.create_publisher(PoseStamped, "/servo_node/pose_target_cmds", 10)
        self.jogs = self.node.create_publisher(JointJog, "/servo_node/delta_joint_cmds", 10)
        assert spin_until(self.executor, lambda: self.poses.get_subscription_count() > 0
                          and self.jogs.get_subscription_count() > 0 and len(self.states) > 5
                          and self.statuses and self.statuses[-1].code != ServoStatus.JOINT_STATE_MISSING, 60.0), \
            self.output()

    def ros_now(self) -> float:
        return self.node.get_clock().now().nanoseconds * 1e-9

    def pose(self, T: pin.SE3, stamp: float = 0.0) -> None:
        self.poses.publish(se3_pose_stamped(T, "panda_link0", stamp))


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    rig = Rig(tmp_path_factory.mktemp("limit_motion"))
    yield rig
    rig.close()


def test_pose_targets_chattering_10_mm_keep_the_tool_between_them(rig):
    """150 targets alternating +-10 mm along x, stamped 10 ms apart (the stamped feed-forward differentiates them
    into +-2 m/s), while servo_node is stopped (SIGSTOP) for 80 ms four times, as a busy CPU stops it (the client
    streams on meanwhile); then 150 more with two of every four missing, as a starved client (or a servo taking the
    newest of bunched targets) delivers them: the tool stays between the targets and every window within the
    acceleration limits. Before: the tool ran 162-446 mm away, with no refusal; then, under load, up to 3.8 mm past
    a target (the window's 50 ms look-ahead at the approach speed, played out by the controller while the servo was
    stopped, and a feed-forward the skipped targets pulled one way: 127-129 mm past them in the second part)."""
    panda = rig.panda
    start = panda.fk(rig.states[-1][1])
    first_window, first_state = len(rig.windows), len(rig.states)
    servo = rig.processes[1].popen.pid
    t0 = rig.ros_now()
    for k in range(300):
        if k in STALLED_AT:
            os.kill(servo, signal.SIGSTOP)
            threading.Timer(STALL, os.kill, (servo, signal.SIGCONT)).start()
        offset = 0.01 if k % 2 == 0 else -0.01
        # from target 150 on, the stream as a starved client delivers it: two targets out of four missing
        if k < 150 or k % 4 < 2:
            rig.pose(pin.SE3(start.rotation, start.translation + [offset, 0.0, 0.0]), stamp=t0 + 0.01 * k)
        spin_for(rig.executor, 0.01)
    streamed_until = rig.ros_now()
    spin_for(rig.executor, 1.0)
    moved = np.array([panda.fk(q).translation - start.translation for _, q in rig.states[first_state:]])
    along, across = moved[:, 0], np.linalg.norm(moved[:, 1:], axis=1)
    spline, points, where = within_windows(rig.windows[first_window:], AMAX)
    switch, _ = between_windows(rig.windows[first_window:], AMAX)
    stamps = np.array([w.stamp for w in rig.windows[first_window:]])
    print(f"chatter: x {along.min() * 1e3:.2f} .. {along.max() * 1e3:.2f} mm, across {across.max() * 1e3:.2f} mm, "
          f"window spline {spline:.3f} x, consecutive points {points:.3f} x, between windows {switch:.3f} x; "
          f"longest time between windows {np.diff(stamps).max() * 1e3:.0f} ms")
    gaps = np.diff(stamps[stamps <= streamed_until])
    assert np.sum(gaps >= 0.9 * STALL) >= len(STALLED_AT), \
        f"{np.sum(gaps >= 0.9 * STALL)} servo stalls seen, {len(STALLED_AT)} made: the case is not exercised"
    # the bound, 5 % of the span: a window cut short of its target still runs two periods and its stopping tail
    # (~5 ms, at most 0.1 of the error at the feedback's speed gain * error: never past the target by itself), and a
    # joint-space extrapolation bends 0.7 % of its length; measured under a CPU hog: -10.00 .. 9.66 mm
    assert -0.0105 <= along.min() and along.max() <= 0.0105, \
        f"the tool went {along.min() * 1e3:.1f} .. {along.max() * 1e3:.1f} mm along x, targets at +-10 mm"
    assert across.max() <= 0.001, f"the tool left the line between the targets by {across.max() * 1e3:.2f} mm"
    assert spline <= WITHIN and points <= WITHIN, f"{spline:.2f} x the acceleration limit in {where}"
    assert switch <= BETWEEN, f"a velocity step of {switch:.3f} x the limits between windows"


def test_jogging_joint_7_into_its_upper_limit_stays_within_the_acceleration_limits(rig):
    """panda_joint7 jogged at 2 rad/s until its limit stops it 20 mrad inside: every window, and every change from
    one window to the next, within the acceleration limits, and no window past the limit margin. Before: 66x the
    limit inside a window (the extrapolation clamped at the limit from full speed), 2.97x between windows; then
    windows 2 mrad past the margin and up to 1.13x between first points after a late tick."""
    jog = JointJog(joint_names=["panda_joint7"], velocities=[1.0])          # unitless x scale.joint 2 rad/s
    # a pose target still pursued keeps the servo in pose mode (it takes a joint jog only once idle)
    assert spin_until(rig.executor, lambda: rig.statuses[-1].code in (ServoStatus.TARGET_REACHED, ServoStatus.STOPPED),
                      10.0), rig.statuses[-1].message
    first = len(rig.windows)
    end = time.monotonic() + 1.6
    while time.monotonic() < end:
        rig.jogs.publish(jog)
        spin_for(rig.executor, 0.01)
    spin_for(rig.executor, 0.3)
    windows = rig.windows[first:]
    upper = rig.panda.limits.upper[6]
    stopped = rig.states[-1][1][6]
    spline, points, where = within_windows(windows, AMAX)
    switch, first_points = between_windows(windows, AMAX)
    print(f"jog: joint 7 stopped {(upper - stopped) * 1e3:.2f} mrad inside its limit; window spline {spline:.3f} x, "
          f"consecutive points {points:.3f} x, between windows {switch:.3f} x (first points {first_points:.3f} x)")
    furthest = max(w.positions[:, 6].max() for w in windows)
    print(f"jog: the windows reach {(upper - MARGIN - furthest) * 1e3:.4f} mrad inside the margin")
    assert abs(upper - MARGIN - stopped) <= 1e-3, (stopped, upper)
    # the servo's bound leaves a joint just the room to brake at its limit after one period: no window passes the
    # margin (before: 2 mrad past it, the bound being for braking period by period)
    assert furthest <= upper - MARGIN + 1e-9, \
        f"a window went {(furthest - upper + MARGIN) * 1e3:.3f} mrad past the margin"
    assert spline <= WITHIN and points <= WITHIN, f"{spline:.2f} x the acceleration limit in {where}"
    assert switch <= BETWEEN, f"a velocity step of {switch:.3f} x the limits between windows"
    assert first_points <= BETWEEN, f"a velocity step of {first_points:.3f} x the limits between first points"


def test_a_pose_target_inside_the_base_stops_at_the_joint_limits_within_the_acceleration_limits(rig):
    """A target the tool cannot reach (inside the robot's base), pursued until joint limits stop the arm: every
    window within the acceleration limits. Before: 31x the limit inside a window."""
    panda = rig.panda
    tool = panda.fk(rig.states[-1][1])
    first, first_status = len(rig.windows), len(rig.statuses)
    rig.pose(pin.SE3(tool.rotation, np.array([0.0, 0.0, 0.05])))
    spin_for(rig.executor, 2.5)
    windows = rig.windows[first:]
    spline, points, where = within_windows(windows, AMAX)
    switch, _ = between_windows(windows, AMAX)
    bound = [s for s in rig.statuses[first_status:] if s.code == ServoStatus.JOINT_BOUND]
    print(f"inside the base: window spline {spline:.3f} x, consecutive points {points:.3f} x, between windows "
          f"{switch:.3f} x; {len(bound)} JOINT_BOUND statuses")
    assert bound, ("no joint limit stopped the arm: the case is not exercised",
                   sorted({(ServoStatus(s.code).name, s.message[:90]) for s in rig.statuses[first_status:]}))
    assert spline <= WITHIN and points <= WITHIN, f"{spline:.2f} x the acceleration limit in {where}"
    assert switch <= BETWEEN, f"a velocity step of {switch:.3f} x the limits between windows"
    assert not any(s.code == ServoStatus.INVALID for s in rig.statuses[first_status:]), \
        [s.message for s in rig.statuses[first_status:] if s.code == ServoStatus.INVALID][:1]
