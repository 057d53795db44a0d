"""Where the servo's commanded state is: the positions and velocities it integrates, kept on the windows the
controller follows, anchored on the measured state when it must be, and the servo's own stalls.

The commanded state starts from the measured one on the first measurement, after a resume, after a joint-state
outage and after going silent (once the arm is at rest: while it still moves it follows this servo's windows), and
whenever it diverged from the measurement by more than `max_state_divergence` on any joint for
DIVERGENCE_PERSISTENCE of running time; re-anchoring keeps the commanded velocity (zeroing it would be a velocity
step far beyond the acceleration limits). Otherwise it integrates from the last command, not from the measurement:
a lagging controller then causes no sag or drift.

Running time: the time an input has been missing, less the servo's own stalls since it was first looked at (an
input cannot go missing while the loop that would have received the next one was not running).
"""
from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
from numba import njit

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.limits import position_velocity_bounds
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.jerk_window import sample_window_state
from robokin_ros.core.servo.types import JointMeasurement, TrajectoryWindow
from robokin_ros.core.servo.window import bound_hold, clamped, sample_window

# [s] of running time a divergence from the measured state must last before the command is re-anchored there:
# longer than a late window's lag (a few ticks), short enough that an arm really held elsewhere is caught at once.
DIVERGENCE_PERSISTENCE = 0.1
# [rad] two consecutive joint states received after an anchor request must agree this well to serve as the anchor
ANCHOR_AGREEMENT = 1e-3


@njit(cache=True)
def max_abs_difference(a, b):
    """Largest |a - b|; inf if any entry is NaN (so a corrupted state always counts as diverged)."""
    worst = 0.0
    for j in range(a.shape[0]):
        d = abs(a[j] - b[j])
        if not d <= worst:
            worst = d if d == d else np.inf
    return worst


class CommandedState:
    """The commanded positions and velocities (n,), the measurements they are anchored on, and the stall clock."""

    def __init__(self, robot: RobotModel, dt: float) -> None:
        self.robot = robot
        self._lower, self._upper = robot.limits.lower, robot.limits.upper
        self.dt = dt                        # [s] the control period
        self.accel_dt = dt                  # [s] time since the last velocity decision, up to one period
        self.positions: np.ndarray | None = None      # None until anchored
        self.velocities = np.zeros(robot.n)
        # (n,) [rad/s^2] the commanded accelerations, followed only with jerk limits (jerk_window.py; else 0)
        self.accelerations = np.zeros(robot.n)
        self.jerk_limited = False
        self.measurement: JointMeasurement | None = None
        self._previous_measurement: JointMeasurement | None = None
        self.last_window: TrajectoryWindow | None = None     # what the controller follows until the next tick
        self.last_tick: float | None = None
        self._anchor_needed = True
        self._anchor_after = -math.inf      # [s] only a measurement received since may serve as the anchor
        self.stalled_total = 0.0            # [s] the servo's own stalls so far (see `running_age`)
        self.stalled_before_tick = 0.0
        self._stall_marks: dict[str, tuple[object, float]] = {}
        self._diverged_since: tuple[float, float] | None = None      # (time, stalls then) of a divergence

    def set_measurement(self, measurement: JointMeasurement) -> None:
        self._previous_measurement, self.measurement = self.measurement, measurement

    def begin_tick(self, now: float) -> None:
        """Catch up with the time since the last tick (`catch_up`) and add the servo's stall to the stall clock."""
        stalled = self.catch_up(now)
        self.stalled_before_tick = self.stalled_total
        self.stalled_total += stalled

    def catch_up(self, now: float) -> float:
        """Put the commanded state where the last published window has taken the arm at `now`; returns how long
        the servo itself stalled [s] (the time since the last tick beyond one period).

        The last tick advanced the state by one nominal period, but a Python timer ticks late (or early) by a
        fraction of it, and under CPU load by several periods, while the controller follows the window for the
        real time. Sampling that window (as the controller interpolates it) keeps the next window continuous in
        position and velocity: the tool keeps the commanded speed, and the stamps, which are the ticks' times,
        never drift into the past. A stall longer than the window finds the arm on, or at the end of, the
        window's stopping tail, and the servo continues from there.
        """
        last, self.last_tick = self.last_tick, now
        if last is None:
            return 0.0
        elapsed = now - last
        # An early tick (a timer catching up after a late one) may change the velocity only by what the
        # acceleration limits allow in the time since the last change; a late one keeps the one-period change.
        self.accel_dt = min(max(elapsed, 1e-6 * self.dt), self.dt)
        window = self.last_window
        if window is not None and self.positions is not None and abs(elapsed - self.dt) > 1e-6 * self.dt:
            q, v = np.empty(self.robot.n), np.empty(self.robot.n)
            if self.jerk_limited:       # the acceleration too: the next window starts from it
                a = np.empty(self.robot.n)
                sample_window_state(window.times, window.positions, window.velocities, elapsed, q, v, a)
                self.accelerations = a
            else:
                sample_window(window.times, window.positions, window.velocities, elapsed, q, v)
            self.positions, self.velocities = q, v
        return max(0.0, elapsed - self.dt)

    def running_age(self, key: str, item: object, received_at: float, now: float) -> float:
        """How long ago `item` (the measurement, the command) was received, less the servo's own stalls since it
        was first looked at: an input cannot go missing while the loop that would have received the next one was
        not running."""
        marked = self._stall_marks.get(key)
        if marked is None or marked[0] is not item:
            marked = self._stall_marks[key] = (item, self.stalled_before_tick)
        return now - received_at - (self.stalled_total - marked[1])

    def anchor_if_needed(self, measurement: JointMeasurement, now: float, max_divergence: float) -> None:
        """Re-anchor the commanded positions at the measured ones when asked (resume, outage, silence) or when
        they diverged for DIVERGENCE_PERSISTENCE; the commanded velocity carries on.

        A request is served by a measurement received after it was made; until one arrives a new command starts
        from the commanded state, where the controller holds the arm. A request made while the commanded velocity
        is not zero is dropped: the controller has been following
        this servo's windows all along (a pause or an outage ramps down through published windows), so the
        commanded state is where the arm is meant to be, and the measurement only lags it. Anchoring there
        would step the command back by the lag, which the controller turns into a velocity spike.

        Divergence is judged against where the command was when the measurement was taken (a state 65 ms old
        at 0.8 rad/s is 52 mrad behind the command without the arm lagging at all), and only a lasting one
        counts: on a busy CPU a controller that got a window late lags for a few ticks and catches up, and
        re-anchoring then stepped the stream back by up to 88 mrad (bench/busy_cpu.py --stalls).
        """
        q, measured = self.positions, np.asarray(measurement.positions, dtype=float)
        moving = q is not None and (self.velocities.any() or (self.jerk_limited and self.accelerations.any()))
        # The measurement is as old as its transport: the arm has moved on at the commanded velocity since.
        age = max(0.0, now - measurement.received_at)
        if q is None or (self._anchor_needed and not moving and self._settled_since_request(measurement)) or \
                self._diverged_for_long(q, measured, age, now, max_divergence):
            v = self.velocities if q is not None else np.zeros(self.robot.n)
            self.positions = clamped(measured + v * age, self._lower, self._upper)
            self.velocities = v
            self._diverged_since = None
            self._anchor_needed = False
        elif moving:
            self._anchor_needed = False

    def _settled_since_request(self, measurement: JointMeasurement) -> bool:
        """Whether `measurement` was received since the anchor request and agrees with the one before it within
        ANCHOR_AGREEMENT (an arm at rest, or moved by hand, reports nearly the same twice in a row): a driver that
        was itself stalled first reports where it got to on the old window, then jumps to the new one, and
        anchoring on that first report stepped the restart by 19 mrad."""
        previous = self._previous_measurement
        return (previous is not None and measurement.received_at >= self._anchor_after
                and max_abs_difference(np.asarray(measurement.positions, dtype=float),
                                       np.asarray(previous.positions, dtype=float)) <= ANCHOR_AGREEMENT)

    def request_anchor(self) -> None:
        """Re-anchor at the next measurement received from now on: one taken before the request may show the arm
        where it was before the servo brought it to rest (on a busy CPU joint states come late), and anchoring
        there stepped the next command back by up to 20 mrad."""
        self._anchor_needed = True
        self._anchor_after = self.last_tick if self.last_tick is not None else -math.inf

    def _diverged_for_long(self, q: np.ndarray, measured: np.ndarray, age: float, now: float,
                           max_divergence: float) -> bool:
        """Whether the command has been more than `max_divergence` from the measured state for at least
        DIVERGENCE_PERSISTENCE of running time (the servo's own stalls excluded)."""
        if max_abs_difference(q - self.velocities * age, measured) <= max_divergence:
            self._diverged_since = None
            return False
        if self._diverged_since is None:
            self._diverged_since = (now, self.stalled_before_tick)
        started, stalled_then = self._diverged_since
        return now - started - (self.stalled_total - stalled_then) >= DIVERGENCE_PERSISTENCE

    def advance(self, velocities: np.ndarray) -> None:
        self.velocities = velocities
        self.positions = self.positions + velocities * self.dt

    def ramp_down(self, amax: np.ndarray) -> None:
        """Advance one uniform deceleration step: every joint changes by at most amax*dt, direction kept."""
        v = self.velocities
        with np.errstate(divide="ignore"):
            shrink = np.min(amax * self.accel_dt / np.abs(v))     # share of v removable this tick
        v_next = max(0.0, 1.0 - shrink) * v
        lo, hi = np.empty_like(v), np.empty_like(v)
        position_velocity_bounds(self.positions, self._lower, self._upper, 0.0, bound_hold(self.dt), amax, lo, hi)
        self.advance(np.clip(v_next, lo, hi))

    def frame_pose(self, frame_id: int, name: str) -> pin.SE3:
        """`base_T_frame` of a model frame at the commanded (else measured) positions."""
        q = self.positions if self.positions is not None else \
            (self.measurement.positions if self.measurement is not None else None)
        if q is None:
            raise InvalidInputError(f"frame '{name}' cannot be placed before the first joint state arrives")
        return self.robot.frame_pose(q, frame_id)
