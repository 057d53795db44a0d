"""The ticks that track no command: a ramp to rest within the acceleration limits, then the held position,
published `num_outgoing_halt_msgs_to_publish` times (0 = forever), then silence.

With joint jerk limits every ramp is each joint's jerk-limited stop from the commanded state, acceleration included
(jerk_window.py), and the arm is at rest once velocity and acceleration are both 0.

Hold messages follow motion the servo commanded; a servo that never moved the arm, or has gone silent, stays
silent (another controller, e.g. a path execution, may be driving the arm) unless it is told to hold forever
(limit 0: the servo owns the arm).
"""
from __future__ import annotations

import numpy as np

from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.commanded_state import CommandedState
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.jerk_window import JerkWindows
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.types import ServoOutput, frozen
from robokin_ros.core.servo.window import WindowBuilder, clamped

_NAN = float("nan")


class Stopping:
    """Ramps, holds and silence of one servo, and whether its hold messages are still owed."""

    def __init__(self, robot: RobotModel, state: CommandedState) -> None:
        self.robot, self._state = robot, state
        self.hold_ticks = 0         # hold messages sent since the arm came to rest
        self.engaged = False        # True from a tracked command until the hold messages are sent (set by the servo)

    def update_config(self, config: ServoConfig, windows: WindowBuilder, amax: np.ndarray,
                      jerk: JerkWindows | None = None) -> None:
        self.config, self._windows, self._amax, self._jerk = config, windows, amax, jerk

    def _moving(self) -> bool:
        state = self._state
        return state.velocities.any() or (self._jerk is not None and state.accelerations.any())

    def _ramp(self, status: ServoStatus, message: str) -> ServoOutput:
        """One tick of the ramp to rest: within the acceleration limits, or with jerk limits each joint's jerk-limited
        stop (the window from the state now, which the state at dt continues)."""
        if self._jerk is None:
            self._state.ramp_down(self._amax)
            return self.output(status, message, True)
        return self._jerk_output(status, message, True)

    def paused(self) -> ServoOutput:
        """Paused: a moving arm decelerates (published), then nothing is published."""
        if self._state.positions is not None and self._moving():
            return self._ramp(ServoStatus.PAUSED, f"{ServoStatus.PAUSED.sentence} (decelerating)")
        return self.hold(ServoStatus.PAUSED, ServoStatus.PAUSED.sentence, publish=False)

    def stale(self, never_commanded: bool, status: ServoStatus | None = None, text: str = "") -> ServoOutput:
        """Ramp to rest, then hold; `status` and `text` say why when it is not a timed-out command."""
        if self._moving():
            return self._ramp(status or ServoStatus.STALE_COMMAND, text or ServoStatus.STALE_COMMAND.sentence)
        output = self._stale_hold(never_commanded)
        if status is None:
            return output
        return frozen(ServoOutput, {**output.__dict__, "status": status, "message": text})

    def _stale_hold(self, never_commanded: bool) -> ServoOutput:
        self.hold_ticks += 1
        limit = self.config.num_outgoing_halt_msgs_to_publish
        publish = limit == 0 or (self.engaged and self.hold_ticks <= limit)
        if not publish:
            # Silent: another controller may move the arm now, so the next command starts from where the
            # arm is, not from where the servo last left it (no jump after e.g. a path execution).
            self.engaged = False
            self._state.request_anchor()
        why = "no command received yet" if never_commanded else "the last command timed out"
        return self.hold(ServoStatus.STOPPED, f"{ServoStatus.STOPPED.sentence} ({why})", publish)

    def joint_state_missing(self, now: float) -> ServoOutput:
        state = self._state
        m = state.measurement
        state.request_anchor()          # resync on the next fresh state: the arm may have moved
        if m is None:
            why = "no joint state received yet"
        else:
            why = f"no joint state for {state.running_age('state', m, m.received_at, now):.3f} s of running " \
                  f"time (timeout {self.config.joint_state_timeout} s)"
        text = f"{ServoStatus.JOINT_STATE_MISSING.sentence} ({why})"
        if state.positions is not None and self._moving():
            # A controlled stop along the commanded path, within the acceleration limits, rather than a
            # velocity step to zero (which the arm would have to follow as a jerk).
            return self._ramp(ServoStatus.JOINT_STATE_MISSING, text)
        holding = self.engaged or (self.config.num_outgoing_halt_msgs_to_publish == 0
                                   and state.positions is not None)
        return self.hold(ServoStatus.JOINT_STATE_MISSING, text, publish=holding)

    def hold(self, status: ServoStatus, message: str, publish: bool) -> ServoOutput:
        self._state.velocities = np.zeros(self.robot.n)
        if self._jerk is not None:
            self._state.accelerations = np.zeros(self.robot.n)
            return self._jerk_output(status, message, publish)
        return self.output(status, message, publish)

    def _jerk_output(self, status: ServoStatus, message: str, publish: bool) -> ServoOutput:
        """The jerk-limited stop's window from the commanded state (at rest: the hold), and the state at dt."""
        state, robot = self._state, self.robot
        q = state.positions if state.positions is not None else robot.home()
        q = clamped(q, robot.limits.lower, robot.limits.upper)
        window, at_dt = self._jerk.stopping(q, state.velocities, state.accelerations)
        if state.positions is not None:
            state.positions, state.velocities, state.accelerations = at_dt[0], at_dt[1], at_dt[2]
        return frozen(ServoOutput, {"positions": at_dt[0], "velocities": at_dt[1].copy(), "window": window,
                                    "status": status, "message": message, "locked_joints": (), "sigma_min": _NAN,
                                    "condition_number": _NAN, "velocity_scale": 1.0, "publish": publish,
                                    "peak_jerk_share": self._jerk.peak_share})

    def output(self, status: ServoStatus, message: str, publish: bool) -> ServoOutput:
        """The output from the commanded state: its window starts one period before it, where this tick started
        (see `window.window_arrays`)."""
        state, robot = self._state, self.robot
        q = state.positions if state.positions is not None else robot.home()
        q = clamped(q, robot.limits.lower, robot.limits.upper)      # a measured state may sit a hair outside
        v = state.velocities
        window = self._windows.build(q - v * state.dt, v, self._windows.grid)[0]
        return frozen(ServoOutput, {"positions": q, "velocities": v.copy(), "window": window, "status": status,
                                    "message": message, "locked_joints": (), "sigma_min": _NAN,
                                    "condition_number": _NAN, "velocity_scale": 1.0, "publish": publish})
