"""Jerk-limited servo windows taken over late (issue 27): a JointTrajectoryController takes a window over when it
arrives, after its stamp, and jumps from where the old window had the arm to where the new one has it. While the
wanted velocities hold, the old window's motion after its dt must be what the next windows do, so that any late
takeover is seamless (acceleration included: a step of x is seen as x / 1 ms of jerk by a 1 kHz controller).

Windows are built tick by tick with `JerkWindows.build` from the state at dt of the one before (what the servo
does), toward wanted velocities that hold, and played as JTC plays them (cubic Hermite through positions and
velocities: test/jerk_play.py, numpy, independent of the window code). Limits: the Panda's published joint jerk
limits (Franka, control parameters) and config/panda_servo.yaml's acceleration limits."""
import numpy as np
import pytest

from jerk_play import hermite
from robokin_ros.core.servo.jerk_window import JerkWindows, window_jerk_share

DT = 0.002
JERK = np.array([7500.0, 3750.0, 5000.0, 6250.0, 7500.0, 10000.0, 10000.0])     # Franka Panda [rad/s^3]
AMAX = np.array([15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0])                      # [rad/s^2]
VMAX = np.array([2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61])                 # Panda [rad/s]
LOWER = np.array([-2.8973, -1.7628, -2.8973, -3.0718, -2.8973, -0.0175, -2.8973])
UPPER = np.array([2.8973, 1.7628, 2.8973, -0.0698, 2.8973, 3.7525, 2.8973])
CRUISE = 0.05           # [s] max_expected_latency's default: the carried motion's end
HOLD = 1.0
START = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])


def windows(cruise=CRUISE):
    limits = np.vstack((LOWER, UPPER, LOWER + 0.02, UPPER - 0.02, AMAX, VMAX))
    return JerkWindows(DT, cruise, HOLD, limits, JERK)


def track(builder, wanted, ticks, q=START, v=None, a=None):
    """`ticks` windows toward the wanted velocities, each from the state at dt of the one before: [window]."""
    v = np.zeros(7) if v is None else v
    a = np.zeros(7) if a is None else a
    out = []
    for _ in range(ticks):
        window, state = builder.build(q, v, a, wanted)
        out.append(window)
        q, v, a = state
    return out


def disagreement(old, new, periods, delay):
    """(q, v, a) |differences| (n,) between the old window at `periods` periods + `delay` [s] and the new one (built
    `periods` ticks later) at `delay`: where a controller jumps taking the new one over `delay` late."""
    then, now = hermite(old, periods * DT + delay), hermite(new, delay)
    return [np.abs(x - y) for x, y in zip(then, now)]


DELAYS = (0.1e-3, 0.5e-3, 1.0e-3, 1.7e-3, 3.0e-3, 6.3e-3)      # [s] up to a few periods late


@pytest.mark.parametrize("wanted", [
    np.array([1.0, 0.5, -1.2, 1.5, -2.0, 2.4, 1.0]),           # from rest: ramps at A for some joints
    np.array([0.0, 0.0, 0.0, 0.3, 0.0, 0.0, 0.0]),             # one joint (a jog)
    np.array([-0.01, 0.002, 0.0, 0.05, 0.0, -0.04, 0.03]),     # small changes: no constant-acceleration phase
])
def test_while_the_wanted_velocities_hold_a_late_window_continues_the_old_one_exactly(wanted):
    built = track(windows(), wanted, 60)
    worst_jerk_seen = 0.0
    for i in range(len(built) - 4):
        for periods in (1, 2, 3):
            for delay in DELAYS:
                if periods * DT + delay > CRUISE - DT:      # beyond what the old window carries toward the command
                    continue
                dq, dv, da = disagreement(built[i], built[i + periods], periods, delay)
                assert dq.max() < 1e-9 and dv.max() < 1e-7, (i, periods, delay, dq, dv)
                worst_jerk_seen = max(worst_jerk_seen, float((da / 1e-3 / JERK).max()))
    # an acceleration step seen over the controller's 1 ms: well under a millionth of the limit
    assert worst_jerk_seen < 1e-6, worst_jerk_seen


def test_a_joint_ramping_at_its_acceleration_limit_still_ramps_past_dt_as_the_next_window_does():
    """The case the continuation is for: a joint ramping at its acceleration limit for many ticks (before, each
    window brought its acceleration back to 0 after dt: a takeover `delay` late stepped by up to J delay)."""
    wanted = np.array([0.0, 0.0, 0.0, 1.5, 0.0, 0.0, 0.0])
    built = track(windows(), wanted, 40)
    ramping = [i for i, w in enumerate(built[:-1]) if abs(hermite(w, DT)[2][3]) >= AMAX[3] * (1 - 1e-9)]
    assert len(ramping) >= 20                            # 1.5 rad/s at 12.5 rad/s^2: ~0.12 s at A, 60 ticks
    for i in ramping:
        a_late = hermite(built[i], DT + 1e-3)[2][3]      # one controller period past dt
        assert a_late == pytest.approx(AMAX[3], rel=1e-9)            # still ramping, as the next window does


def test_a_plan_that_has_not_arrived_by_the_cruise_end_levels_off_then_stops_within_the_limits():
    """A change too long for the carried motion (cruise end 4 ms): the acceleration back to 0 after the cruise
    end, then the shared stop; the window within the jerk, acceleration and velocity limits, ending at rest."""
    builder = windows(cruise=0.004)
    wanted = np.array([2.0, -2.0, 2.0, 2.0, -2.5, 2.5, 2.5])
    built = track(builder, wanted, 5)
    previous_a = np.zeros(7)
    for w in built:
        assert window_jerk_share(w.times, w.positions, w.velocities, JERK, previous_a, 1e-3) <= 1.0 + 1e-6
        ts = np.arange(0.0, w.times[-1] + 1e-3, 1e-4)
        played = [hermite(w, t) for t in ts]
        v = np.array([p[1] for p in played])
        a = np.array([p[2] for p in played])
        assert (np.abs(v) <= VMAX * (1 + 1e-9)).all() and (np.abs(a) <= AMAX * (1 + 1e-6)).all()
        assert not w.velocities[-1].any()
        previous_a = hermite(w, DT)[2]


def test_a_joint_carried_toward_its_margin_stops_on_its_own_inside_it():
    """The continuation ramps on toward the wanted velocity, so it covers more ground than the old level-off: a
    joint near its margin must still stop inside it (its own stop from dt when the carried stop would pass)."""
    builder = windows()
    q = START.copy()
    q[3] = UPPER[3] - 0.02 - 0.012                          # 12 mm before joint 4's margin
    wanted = np.zeros(7)
    wanted[3] = 1.0
    for w in track(builder, wanted, 30, q=q):
        final = w.positions[-1][3]
        assert final <= UPPER[3] - 0.02 + 1e-12
        ts = np.arange(0.0, w.times[-1], 1e-4)
        assert max(hermite(w, t)[0][3] for t in ts) <= UPPER[3] - 0.02 + 1e-9
