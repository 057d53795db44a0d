"""The twist servo state machine (MoveIt-Servo compatible behaviour), with no clock and no logging.

Each `step(now)` produces one command. Decisions, in order:
1. paused -> PAUSED, nothing published;
2. no joint state yet, or none for `joint_state_timeout` -> JOINT_STATE_MISSING, ramp to zero, hold; time the
   servo itself was not running (every tick later than its period since that state arrived) does not count:
   states that could not be received cannot be missing;
3. (re-)anchor: the commanded positions start from the measured ones on the first measurement, after resume,
   after a joint-state outage and after going silent (if the arm is at rest by then: while it still moves it
   follows this servo's windows), and whenever they diverged from the measurement by more than
   `max_state_divergence` on any joint for DIVERGENCE_PERSISTENCE of running time; re-anchoring keeps the
   commanded velocity (zeroing it would be a velocity step far beyond the acceleration limits). Otherwise it
   integrates from the last command, not from the measurement: a lagging controller then causes no sag or drift;
4. a fresh command -> velocity IK (limits, singularities, acceleration window) -> integrate;
   the commanded state follows the real time between ticks, not the nominal period: each published window
   is stamped with the tick's time and a controller follows it until the next arrives, so every tick starts
   from where the last window has taken the arm by then (see `_catch_up`), late, early or after a stall;
5. no command, or older than `incoming_command_timeout` (receive time, less the servo's own stalls as in 2)
   -> STALE_COMMAND: the velocity
   ramps to zero as one uniform factor within the acceleration limits (direction kept), then the position
   is held (STOPPED), published `num_outgoing_halt_msgs_to_publish` times (0 = forever), then silent.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numba import njit

from robokin_ros.core.collision.scene_change import SceneChange, apply_scene_change
from robokin_ros.core.errors import InvalidInputError, RobokinError
from robokin_ros.core.limits import limit_velocity, motion_limits, position_velocity_bounds
from robokin_ros.core.outgoing import LIMIT_TOLERANCE, WINDOW_OK, window_rejection, window_violation
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.guiding_input import GuidingInput
from robokin_ros.core.servo.joint_jog import JointJogCommand, chain_velocities
from robokin_ros.core.servo.pose_tracking import PoseTarget, PoseTracker, target_transform
from robokin_ros.core.servo.speed_guards import CollisionGuard, SeparationGuard
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.twist import TwistConverter, command_to_si
from robokin_ros.core.servo.types import JointMeasurement, ServoOutput, TrajectoryWindow, TwistCommand, frozen
from robokin_ros.core.servo.velocity_ik import VelocityIk
from robokin_ros.core.schema import per_joint_values
from robokin_ros.core.servo.window import (
    W_AMAX,
    W_LOWER,
    W_UPPER,
    W_VMAX,
    checked_window,
    clamped,
    sample_window,
    sparse_window_times,
    stop_time,
    window_capacity,
    window_limits,
    window_times,
)
from robokin_ros.core.validation import check_time, check_vector

_NAN = float("nan")


@dataclass(frozen=True)
class GuidingCommand:
    """Hand guiding is on: the admittance's twist is the command (see `Servo.start_guiding`)."""

    received_at: float           # [s] when guiding was enabled


# [s] of running time a divergence from the measured state must last before the command is re-anchored there:
# longer than a late window's lag (a few ticks), short enough that an arm really held elsewhere is caught at once.
DIVERGENCE_PERSISTENCE = 0.1
# [rad] two consecutive joint states received after an anchor request must agree this well to serve as the anchor
ANCHOR_AGREEMENT = 1e-3
# share of the time to a fixed pose target at the current speed that a window may extrapolate (see
# `_short_of_the_target`)
REACH_MARGIN = 0.8
# share of the pose tolerance below which the remaining error counts as none (`_short_of_the_target`)
REACH_FLOOR = 1e-3

# The warm-up: a few ticks of a small twist along every axis, enough to run every compiled kernel once.
WARM_UP_TICKS = 3
WARM_UP_TWIST = 0.1        # each component, in the units of `command_in_type`


@njit(cache=True)
def _reach_time(tool, error, target_velocity, lasting, linear_floor, angular_floor):
    """The time [s] at which the tool, moving at the twist `tool` (6,), has covered REACH_MARGIN of the `error` (6,)
    along its motion, plus what the target covers meanwhile moving at `target_velocity` (6,) for `lasting` [s] (then
    still); per part (linear, angular) the earlier, inf if never. An error along the motion below the part's floor
    [m or rad] counts as the floor (rounding noise in a speed at rest must not cut every window)."""
    reach = np.inf
    for part in range(2):
        speed = 0.0
        along = 0.0
        progress = 0.0
        for i in range(3 * part, 3 * part + 3):
            speed += tool[i] * tool[i]
        speed = np.sqrt(speed)
        if speed <= 0.0:
            continue
        for i in range(3 * part, 3 * part + 3):
            along += error[i] * tool[i] / speed
            progress += target_velocity[i] * tool[i] / speed
        distance = REACH_MARGIN * max(along, linear_floor if part == 0 else angular_floor)
        progress *= REACH_MARGIN
        gain = speed - progress                 # on the tool's way while the target moves
        if gain > 0.0 and distance / gain <= lasting:
            reach = min(reach, distance / gain)
        else:
            # the target has stopped by the time the tool catches up
            reach = min(reach, max(distance + progress * max(lasting, 0.0), 0.0) / speed)
    return reach


@njit(cache=True)
def _max_abs_difference(a, b):
    """Largest |a - b|; inf if any entry is NaN (so a corrupted state always counts as diverged)."""
    worst = 0.0
    for j in range(a.shape[0]):
        d = abs(a[j] - b[j])
        if not d <= worst:
            worst = d if d == d else np.inf
    return worst


class Servo:
    """Stateful twist servo for one robot chain; feed it commands and measurements, call `step` each tick."""

    def __init__(self, robot: RobotModel, config: ServoConfig) -> None:
        self.robot = robot
        self.joint_names: tuple[str, ...] = robot.joint_names
        self._lower, self._upper = robot.limits.lower, robot.limits.upper
        self._converter = TwistConverter(robot)
        self._pose_tracker = PoseTracker(robot, config)
        self._separation = SeparationGuard(robot, config)
        self._guiding = GuidingInput(config)
        self._collision: CollisionGuard | None = None         # built on the first config that checks collisions
        self.update_config(config)
        self._command: TwistCommand | JointJogCommand | PoseTarget | None = None
        self._joint_velocities = np.zeros(robot.n)           # a joint jog's velocities, chain order, SI
        self._command_frame: int | pin.SE3 | None = None     # model frame id, or base_T_frame (TF)
        self._measurement: JointMeasurement | None = None
        self._previous_measurement: JointMeasurement | None = None
        self._positions: np.ndarray | None = None      # commanded state, None until anchored
        self._velocities = np.zeros(robot.n)
        self._anchor_needed = True
        self._anchor_after = -math.inf      # [s] only a measurement received since may serve as the anchor
        self._paused = False
        self._hold_ticks = 0
        self._engaged = False       # True from a tracked command until the hold messages are sent
        self._last_tick: float | None = None
        self._accel_dt = config.publish_period     # time since the last velocity decision, up to one period
        self._last_window: TrajectoryWindow | None = None     # what the controller follows until the next tick
        self._stalled_total = 0.0           # [s] the servo's own stalls so far (see `_running_age`)
        self._stalled_before_tick = 0.0
        self._stall_marks: dict[str, tuple[object, float]] = {}
        self._diverged_since: tuple[float, float] | None = None      # (time, stalls then) of a divergence
        self._refusal = ""          # why the outgoing check refused a window: the status until a new command
        self._checked = WINDOW_OK - 1       # this tick's outgoing check verdict (WINDOW_*), below WINDOW_OK: none yet

    # ---- inputs -----------------------------------------------------------------------------------
    def update_config(self, config: ServoConfig) -> None:
        """Swap the whole configuration (validated against the robot first; the state is kept)."""
        ik = VelocityIk(self.robot, config)          # raises ConfigError before anything changes
        dt = config.publish_period
        self.config, self._ik, self._dt = config, ik, dt
        self._pose_tracker.update_config(config)
        self._separation.update_config(config)
        if config.check_collisions:
            if self._collision is None:
                self._collision = CollisionGuard(self.robot, config, ik.acceleration_limits)
            else:
                self._collision.update_config(config, ik.acceleration_limits)
        self._guiding.update_config(config)
        command = getattr(self, "_command", None)
        if isinstance(command, TwistCommand):         # units/scales may have changed
            self._command_si = command_to_si(command.linear, command.angular, config)
        elif isinstance(command, JointJogCommand):
            try:
                self._joint_velocities = chain_velocities(command, self.joint_names, config)
            except RobokinError:
                self._command = None        # no longer a valid command in the new units: it stops being tracked
        self._sparse_times = sparse_window_times(window_times(dt, config.max_expected_latency))     # (3,) [s]
        self._amax = ik.acceleration_limits
        margins = np.array(per_joint_values(config.joint_limit_margins, self.robot.n))                  # (n,)
        # what the outgoing check holds every window to: the joints' own velocity limits (velocity_scaling is the
        # servo's choice within them) and the acceleration limits
        velocity_limits = motion_limits(self.robot, config.max_joint_velocity, config.max_joint_acceleration,
                                        config.default_joint_acceleration).velocity
        self._window_rows = window_capacity(len(self._sparse_times), self.robot.n)     # every grid has 3 times
        self._window_limits = window_limits(self._lower, self._upper, margins, self._amax, velocity_limits)

    @property
    def window_point_counts(self) -> tuple[int, ...]:
        """The numbers of points a published window can have with the current configuration (with its tail and
        hold): the grid's, and two more for each joint that brakes for a limit within the window."""
        first = len(self._sparse_times) + 2
        return tuple(range(first, window_capacity(len(self._sparse_times), self.robot.n) + 1))

    def set_command(self, command: TwistCommand, base_T_frame: pin.SE3 | None = None) -> None:
        """Store a twist command; a bad one raises and is not stored (the previous one keeps ageing).

        `base_T_frame`: the pose of `command.frame` when it is not a model frame (looked up in TF by the
        caller); the twist then moves the arm exactly as for a model frame at that pose.

        Raises:
            InvalidInputError: NaN/inf or wrong sizes, or a non-finite receive time.
            UnknownFrameError: `command.frame` is not a frame of the model (and no `base_T_frame` is given).
        """
        check_vector("twist command linear", command.linear, 3)
        check_vector("twist command angular", command.angular, 3)
        check_time("twist command received_at", command.received_at)
        if base_T_frame is None:
            frame = self.robot.resolve_frame(command.frame)
            frame = None if frame == self.robot.base_frame_id else frame
        else:
            frame = base_T_frame.copy()
        command_si = command_to_si(command.linear, command.angular, self.config)
        self._command, self._command_frame, self._command_si = command, frame, command_si
        self._pose_tracker.clear()
        self._refusal = ""

    def set_joint_command(self, command: JointJogCommand) -> None:
        """Store a joint jog (replacing any twist: the newest command of either kind is the one tracked); a bad one
        raises and is not stored.

        Raises:
            UnknownJointError: a name that is not a chain joint.
            InvalidInputError: see `joint_jog.chain_velocities`, or a non-finite receive time.
        """
        check_time("joint jog received_at", command.received_at)
        velocities = chain_velocities(command, self.joint_names, self.config)
        self._command, self._command_frame, self._command_si = command, None, None
        self._joint_velocities = velocities
        self._pose_tracker.clear()
        self._refusal = ""

    def set_pose_target(self, target: PoseTarget, base_T_frame: pin.SE3 | None = None) -> None:
        """Store a pose target for the tip frame (replacing any other command); a bad one raises and is not stored.

        The target is fixed in the base frame on arrival: a target given in a moving model frame (the tool, say)
        is relative to where that frame is now, and does not move with it. It stays the goal until reached
        (`pose_tracking.*_tolerance`) or replaced: a single message is enough, and a client may stream targets
        (a moving target is then followed with feed-forward, see core/servo/pose_tracking.py).

        `base_T_frame`: the pose of `target.frame` when it is not a model frame (looked up in TF by the caller).

        Raises:
            InvalidInputError: NaN/inf, wrong sizes, a quaternion that is not a rotation, a non-finite time, or a
                target stream moving faster than any arm; or a model frame given before any joint state.
            UnknownFrameError: `target.frame` is not a frame of the model (and no `base_T_frame` is given).
        """
        check_time("pose target received_at", target.received_at)
        check_time("pose target stamp", target.stamp)
        frame_T_target = target_transform(target)
        if base_T_frame is None:
            frame = self.robot.resolve_frame(target.frame)
            if frame != self.robot.base_frame_id:
                base_T_frame = self._frame_pose(frame, target.frame)
        base_T_target = frame_T_target if base_T_frame is None else base_T_frame * frame_T_target
        self._pose_tracker.set_target(base_T_target, target.received_at, target.stamp)
        self._command, self._command_frame, self._command_si = target, None, None
        self._refusal = ""

    @property
    def pose_tracker(self) -> PoseTracker:
        """The pose target state: the target in the base frame, the remaining error, whether it is reached."""
        return self._pose_tracker

    def set_separation_distance(self, distance: float, received_at: float) -> None:
        """A person's distance [m] from the separation sensor (used when `separation.enabled`).

        Raises:
            InvalidInputError: NaN/inf or negative; the last good reading stays.
        """
        self._separation.monitor.set_distance(distance, received_at)

    def set_wrench(self, wrench: np.ndarray, frame: str, received_at: float, base_T_frame: pin.SE3 | None = None
                   ) -> None:
        """A tool force/torque reading (6,) [N, N m] in the axes of `frame` (a model frame, or a TF frame whose
        `base_T_frame` the caller looked up), the torque about that frame's origin. Stored whether or not guiding
        is on: enabling guiding takes the latest reading as the no-push bias.

        Raises:
            InvalidInputError: wrong size or NaN/inf; or a model frame given before any joint state.
            UnknownFrameError: `frame` is not a frame of the model (and no `base_T_frame` is given).
        """
        if base_T_frame is None:
            sensor = self.robot.resolve_frame(frame)
            base_R_sensor = self._frame_pose(sensor, frame).rotation
        else:
            sensor, base_R_sensor = base_T_frame.copy(), base_T_frame.rotation
        self._guiding.set_wrench(wrench, sensor, base_R_sensor, received_at)

    def start_guiding(self, now: float) -> str:
        """Hand guiding on: the latest wrench becomes the no-push bias, and the admittance's twist the command
        (replacing any other). Returns the sentence for the caller.

        Raises:
            InvalidInputError: no wrench within `hand_guiding.wrench_timeout` (guiding would stop at once), or the
                servo is paused.
        """
        if self._paused:
            raise InvalidInputError("the servo is paused: resume it before enabling hand guiding")
        self._guiding.start(now)
        self._command, self._command_frame, self._command_si = GuidingCommand(now), None, None
        self._pose_tracker.clear()
        self._refusal = ""
        return "hand guiding on: the sensor's current reading is the zero push"

    def stop_guiding(self) -> None:
        """Hand guiding off: the arm ramps to rest within the acceleration limits."""
        if isinstance(self._command, GuidingCommand):
            self._guiding.stopped = "hand guiding switched off"

    @property
    def guiding(self) -> bool:
        """True while hand guiding drives the arm."""
        return isinstance(self._command, GuidingCommand) and not self._guiding.stopped

    def _frame_pose(self, frame_id: int, name: str) -> pin.SE3:
        """`base_T_frame` of a model frame at the commanded (else measured) positions."""
        q = self._positions if self._positions is not None else \
            (self._measurement.positions if self._measurement is not None else None)
        if q is None:
            raise InvalidInputError(f"frame '{name}' cannot be placed before the first joint state arrives")
        return self.robot.frame_pose(q, frame_id)

    def command_is_fresh(self, now: float) -> bool:
        """True while the stored command is younger than `incoming_command_timeout` at `now`, or is a pose target
        not yet reached."""
        c = self._command
        return c is not None and (now - c.received_at <= self.config.incoming_command_timeout
                                  or self._pose_pending(c, now) or self.guiding)

    def _pose_pending(self, command: TwistCommand | JointJogCommand | PoseTarget, now: float) -> bool:
        return isinstance(command, PoseTarget) and not self._pose_tracker.settled(now)

    def set_measurement(self, measurement: JointMeasurement) -> None:
        """Store the latest measured joint positions (chain order).

        Raises:
            InvalidInputError: wrong size, NaN/inf, or a non-finite receive time.
        """
        self.robot.check_positions(measurement.positions, "measured joint positions")
        check_time("joint measurement received_at", measurement.received_at)
        self._previous_measurement, self._measurement = self._measurement, measurement

    def pause(self) -> None:
        """Stop commanding: `step` reports PAUSED, decelerates a moving arm within the acceleration limits
        (publishing that ramp), then publishes nothing until `resume`."""
        self._paused = True

    @property
    def paused(self) -> bool:
        """True between `pause` and `resume`."""
        return self._paused

    def resume(self) -> None:
        """Resume from the latest measurement; the command received before is dropped (a command that arrived
        while paused must not move the arm now)."""
        self._paused = False
        self._request_anchor()
        self._command = None
        self._pose_tracker.clear()
        self._refusal = ""

    # ---- tick -------------------------------------------------------------------------------------
    def step(self, now: float) -> ServoOutput:
        """One control tick at time `now` [s] (same clock as the receive times)."""
        check_time("now", now)
        stalled = self._catch_up(now)
        self._stalled_before_tick = self._stalled_total
        self._stalled_total += stalled
        self._checked = WINDOW_OK - 1         # no verdict yet: `_build_window` checks the window it builds
        output = self._decide(now)
        if output.publish:
            w = output.window
            if self._checked < WINDOW_OK:
                limits = self._window_limits
                self._checked = window_violation(w.times, w.positions, w.velocities, limits[W_LOWER],
                                                 limits[W_UPPER], limits[W_VMAX], limits[W_AMAX], LIMIT_TOLERANCE)[0]
            if self._checked != WINDOW_OK:
                output = self._refused(output)
            self._last_window = output.window
        return output

    def _refused(self, output: ServoOutput) -> ServoOutput:
        """A window that broke the outgoing check (core/outgoing.py) is never published: in its place a stop from
        its state now, every joint decelerating at its acceleration limit, or, if even that breaks a limit, the
        arm held where it is. The command is dropped, and the status says why until a new one arrives."""
        w = output.window
        limits = self._window_limits
        args = (self.joint_names, limits[W_LOWER], limits[W_UPPER], limits[W_VMAX], limits[W_AMAX])
        reason = window_rejection(w.times, w.positions, w.velocities, *args)
        replacement, what = self._stopping_window(w.positions[0], w.velocities[0]), "stopping"
        if window_rejection(replacement.times, replacement.positions, replacement.velocities, *args) is not None:
            replacement, what = self._stopping_window(w.positions[0], np.zeros(self.robot.n)), "holding the arm"
        self._refusal = f"a servo window was not published, it broke the outgoing check: {reason}; {what} " \
                        "within the limits instead, command dropped"
        self._command = None
        self._pose_tracker.clear()
        q, v = np.empty(self.robot.n), np.empty(self.robot.n)
        sample_window(replacement.times, replacement.positions, replacement.velocities, self._dt, q, v)
        self._positions, self._velocities = q, v
        return frozen(ServoOutput, {**output.__dict__, "positions": q.copy(), "velocities": v.copy(),
                                    "window": replacement, "status": ServoStatus.INVALID, "message": self._refusal,
                                    "locked_joints": ()})

    def _stopping_window(self, q: np.ndarray, v: np.ndarray) -> TrajectoryWindow:
        """From positions q and velocities v (n,) at time 0, every joint decelerating at its acceleration limit to
        rest, then the hold: the points at 0, at each joint's stop and the hold (v = 0: the arm held at q)."""
        stops = np.abs(v) / self._amax                                                                  # (n,) [s]
        deceleration = np.sign(v) * np.where(np.isfinite(self._amax), self._amax, 0.0)   # no limit: stops at once
        t = np.unique(np.concatenate(([0.0], stops[stops > 0.0])))
        times = np.append(t, max(self.config.max_delivery_delay, t[-1] + 1e-3))                       # (k,)
        tau = np.minimum(times[:, None], stops)                                                       # (k, n)
        positions = q + v * tau - 0.5 * deceleration * tau**2
        velocities = np.where(times[:, None] < stops, v - deceleration * tau, 0.0)
        return frozen(TrajectoryWindow, {"times": times, "positions": positions, "velocities": velocities})

    def _running_age(self, key: str, item: object, received_at: float, now: float) -> float:
        """How long ago `item` (the measurement, the command) was received, less the servo's own stalls since it
        was first looked at: an input cannot go missing while the loop that would have received the next one was
        not running."""
        marked = self._stall_marks.get(key)
        if marked is None or marked[0] is not item:
            marked = self._stall_marks[key] = (item, self._stalled_before_tick)
        return now - received_at - (self._stalled_total - marked[1])

    def _decide(self, now: float) -> ServoOutput:
        if self._paused:
            if self._positions is not None and self._velocities.any():
                self._advance(self._ramp_down(self._velocities))
                return self._output(ServoStatus.PAUSED, f"{ServoStatus.PAUSED.sentence} (decelerating)", True)
            return self._hold(ServoStatus.PAUSED, ServoStatus.PAUSED.sentence, publish=False)
        m = self._measurement
        if m is None or self._running_age("state", m, m.received_at, now) > self.config.joint_state_timeout:
            return self._joint_state_missing(now)
        self._anchor_if_needed(m, now)
        c = self._command
        if isinstance(c, GuidingCommand):
            if self._guiding.stopped:
                return self._stale(False, ServoStatus.STALE_COMMAND, self._guiding.stopped)
        elif c is None or (self._running_age("command", c, c.received_at, now) >
                           self.config.incoming_command_timeout and not self._pose_pending(c, now)):
            return self._stale(c is None)
        return self._track(c, now)

    def _track(self, command: TwistCommand | JointJogCommand | PoseTarget | GuidingCommand, now: float
               ) -> ServoOutput:
        q = self._positions
        status = message = None                 # the IK's, unless the command or a guard has its own
        if isinstance(command, GuidingCommand):
            guided = self._guiding.step(now)
            if guided.stale:        # paused (resumes by itself) or stopped: a ramp to rest either way
                return self._stale(False, ServoStatus.STALE_COMMAND, self._guiding.stopped or self._guiding.paused)
            status, message = ServoStatus.HAND_GUIDING, f"{ServoStatus.HAND_GUIDING.sentence}: {guided.message}"
            twist = self._converter.to_tool_twist_base(q, guided.twist, self._guiding.sensor_origin(self.robot, q),
                                                       False)
        elif isinstance(command, PoseTarget):
            twist = self._pose_tracker.twist(q, now)
        elif self._command_si is None:          # a joint jog: its velocities, through the same joint limits
            twist = None
        else:
            twist = self._converter.to_tool_twist_base(q, self._command_si, self._command_frame,
                                                       self.config.apply_twist_about_tool)
        self._hold_ticks = 0
        self._engaged = True
        result = self._solve(q, twist, 1.0)
        if isinstance(command, PoseTarget):
            status, message = self._pose_status(result.status, result)
        elif status is not None and result.status != ServoStatus.OK:
            status, message = result.status, f"{result.message}; {message}"
        # the guards: the smallest factor wins, solved again once through the same limits and acceleration window (a
        # stop is a ramp, never a step; at 0 the null-space motion stops too)
        scale = 1.0
        if self._collision is not None and self.config.check_collisions:
            verdict = self._collision.judge(q, result.velocities, now)
            if verdict is not None:
                scale = verdict.scale * self._unlimited_share(q, twist, result.velocities)
                status, message = verdict.status, verdict.message
        if self.config.separation_enabled:
            # judged on the command, not on the acceleration-limited result: a factor taken from a result still
            # ramping up would let the speed creep past the limit tick by tick
            verdict = self._separation.judge(q, twist, None if twist is not None else self._joint_velocities, now)
            if verdict is not None and verdict.scale < scale:
                scale, status, message = verdict.scale, verdict.status, verdict.message
        if scale < 1.0:
            result = self._solve(q, twist if scale > 0.0 else None, scale)
        v, grid = result.velocities, self._sparse_times
        if isinstance(command, PoseTarget):
            grid = self._short_of_the_target(q, v, grid)
        window, i = self._build_window(q, v, grid)
        # the next tick starts where this window takes the arm in one period (q + v dt, unless a joint brakes for
        # its limit sooner)
        q_out, v_out = window.positions[i], window.velocities[i]
        if not math.isfinite(q_out.sum() + v_out.sum()):
            # Never publish a non-finite command: drop it, re-sync to the measured state and hold.
            self._request_anchor()
            return self._hold(ServoStatus.INVALID, "internal error: a non-finite command was discarded; "
                              "re-synced to the measured state", publish=False)
        self._velocities, self._positions = v_out, q_out
        return frozen(ServoOutput, {"positions": q_out, "velocities": v_out, "window": window,
                                    "status": status or result.status, "message": message or result.message,
                                    "locked_joints": result.locked_joints, "sigma_min": result.sigma_min,
                                    "condition_number": result.condition_number,
                                    "velocity_scale": result.velocity_scale, "publish": True})

    def _short_of_the_target(self, q: np.ndarray, v: np.ndarray, grid: np.ndarray) -> np.ndarray:
        """The sparse grid with its last time brought in so that the window, followed to its end, takes the tool at
        most REACH_MARGIN of the way to where the pose target will be: a controller left with this window by a
        stalled servo must not carry the tool past the target at the speed of the approach. Before: 0.46 mm past a
        fixed target with 60-150 ms stalls; up to 3.8 mm past a stream chattering +-10 mm (issue 24), whose targets
        the window's 50 ms at the approach speed overran (a jumping stream is not extrapolated: its latest target
        is where the tool is to stop).

        What counts is the error along the tool's motion (a tool moving away from the target, toward a stream's
        previous target, has none left to cover: its window brakes after two periods), plus the target's own
        progress along that motion while it is extrapolated (a moving target followed with feed-forward)."""
        J = self.robot.frame_jacobian_fast(self.robot.to_pinocchio_q(q), self.robot.tip_frame_id)     # (6, n)
        tracker = self._pose_tracker
        target_velocity, left = tracker.target_motion
        config = self.config
        reach = _reach_time(J @ v, tracker.error_vector, target_velocity, left,
                            REACH_FLOOR * config.pose_linear_tolerance, REACH_FLOOR * config.pose_angular_tolerance)
        last = reach - 0.5 * stop_time(v, self._amax, self._dt)     # the tail covers v T / 2
        if last >= grid[-1]:
            return grid
        return np.array([grid[0], grid[1], max(last, 2.0 * self._dt)])

    def _solve(self, q: np.ndarray, twist: np.ndarray | None, scale: float):
        """The IK for the tool twist (6,), or the joint jog's velocities when `twist` is None, times `scale`."""
        if twist is None:
            velocities = self._joint_velocities if scale == 1.0 else self._joint_velocities * scale
            return self._ik.limit_joint_velocities(q, velocities, dt=self._dt, previous_velocities=self._velocities,
                                                   accel_dt=self._accel_dt)
        # a pose target halts only the blocking joint, as MoveIt's POSE mode: the others carry on toward the pose
        halt_all = False if isinstance(self._command, PoseTarget) else None
        return self._ik.solve(q, twist if scale == 1.0 else twist * scale, dt=self._dt,
                              previous_velocities=self._velocities, check=False, accel_dt=self._accel_dt,
                              halt_all=halt_all)

    def _unlimited_share(self, q: np.ndarray, twist: np.ndarray | None, velocities: np.ndarray) -> float:
        """|velocities| / |the same command without the acceleration window|: a scale judged on an accelerating
        result must be applied to the command as that share of it, or the speed would creep past it tick by tick."""
        if twist is None:
            free = self._joint_velocities
        else:
            free = self._ik.solve(q, twist, dt=self._dt, check=False).velocities
        size = float(np.linalg.norm(free))
        return min(1.0, float(np.linalg.norm(velocities)) / size) if size > 0.0 else 1.0

    def update_scene(self, change: SceneChange, base_T_frame: pin.SE3 | None = None) -> str:
        """Add, move or remove a collision scene object (core/collision/scene_change.py); returns what changed.

        `base_T_frame`: the pose of `change.frame` when it is not a model frame (looked up in TF by the caller).

        Raises:
            InvalidInputError: collision checking is off, or the change is malformed (see `apply_scene_change`).
            UnknownFrameError: `change.frame` is not a frame of the model (and no `base_T_frame` is given).
        """
        if self._collision is None or not self.config.check_collisions:
            raise InvalidInputError(f"scene object '{change.id}' ignored: collision checking is off "
                                    "(check_collisions: false)")
        if base_T_frame is None:
            frame = self.robot.resolve_frame(change.frame)
            base_T_frame = pin.SE3.Identity() if frame == self.robot.base_frame_id else \
                self._frame_pose(frame, change.frame)
        text = apply_scene_change(self._collision.checker, change, base_T_frame)
        self._collision.clearance = None          # the next tick checks against the new scene
        return text

    @property
    def clearance(self):
        """The last collision check's nearest pair (core/collision/clearance.py), or None when not checking."""
        return self._collision.clearance if self._collision is not None else None

    @property
    def collision_guard(self) -> CollisionGuard | None:
        """The collision checking state (checker with its scene, last clearance), or None when it is off."""
        return self._collision if self.config.check_collisions else None

    def _pose_status(self, ik_status: ServoStatus, result) -> tuple[ServoStatus, str]:
        """A pose target's status: reached, moving to it, or the IK's reason it cannot move freely, with the
        remaining error."""
        tracker = self._pose_tracker
        error = tracker.describe_error()
        if tracker.reached:
            return ServoStatus.TARGET_REACHED, f"{ServoStatus.TARGET_REACHED.sentence}: remaining error {error}"
        note = f"; {tracker.stream_note}" if tracker.stream_note else ""
        if ik_status == ServoStatus.OK:
            return ik_status, f"moving to the pose target: remaining error {error}{note}"
        return ik_status, f"{result.message}; pose target error {error}{note}"

    def _stale(self, never_commanded: bool, status: ServoStatus | None = None, text: str = "") -> ServoOutput:
        """Ramp to rest, then hold; `status` and `text` say why when it is not a timed-out command."""
        v = self._velocities
        if status is None and self._refusal:
            status, text = ServoStatus.INVALID, self._refusal
        if status is None and isinstance(self._command, PoseTarget):
            # a reached target: the same ramp and hold as a stale command, reported as what it is
            status = ServoStatus.TARGET_REACHED
            text = f"{status.sentence}: remaining error {self._pose_tracker.describe_error()}"
        if v.any():
            self._advance(self._ramp_down(v))
            return self._output(status or ServoStatus.STALE_COMMAND, text or ServoStatus.STALE_COMMAND.sentence,
                                True)
        output = self._stale_hold(never_commanded)
        if status is None:
            return output
        return frozen(ServoOutput, {**output.__dict__, "status": status, "message": text})

    def _stale_hold(self, never_commanded: bool) -> ServoOutput:
        self._hold_ticks += 1
        limit = self.config.num_outgoing_halt_msgs_to_publish
        # Hold messages follow motion the servo commanded; a servo that never moved the arm, or has gone
        # silent, stays silent (another controller, e.g. a path execution, may be driving the arm) unless
        # it is told to hold forever (limit 0: the servo owns the arm).
        publish = limit == 0 or (self._engaged and self._hold_ticks <= limit)
        if not publish:
            # Silent: another controller may move the arm now, so the next command starts from where the
            # arm is, not from where the servo last left it (no jump after e.g. a path execution).
            self._engaged = False
            self._request_anchor()
        why = "no command received yet" if never_commanded else "the last command timed out"
        return self._hold(ServoStatus.STOPPED, f"{ServoStatus.STOPPED.sentence} ({why})", publish)

    def _ramp_down(self, v: np.ndarray) -> np.ndarray:
        """One uniform deceleration step: every joint changes by at most amax*dt, direction kept."""
        with np.errstate(divide="ignore"):
            shrink = np.min(self._amax * self._accel_dt / np.abs(v))     # share of v removable this tick
        v_next = max(0.0, 1.0 - shrink) * v
        lo, hi = np.empty_like(v), np.empty_like(v)
        position_velocity_bounds(self._positions, self._lower, self._upper, 0.0, self._dt, self._amax, lo, hi)
        return np.clip(v_next, lo, hi)

    def _joint_state_missing(self, now: float) -> ServoOutput:
        m = self._measurement
        self._request_anchor()          # resync on the next fresh state: the arm may have moved
        if m is None:
            why = "no joint state received yet"
        else:
            why = f"no joint state for {self._running_age('state', m, m.received_at, now):.3f} s of running " \
                  f"time (timeout {self.config.joint_state_timeout} s)"
        text = f"{ServoStatus.JOINT_STATE_MISSING.sentence} ({why})"
        if self._positions is not None and self._velocities.any():
            # A controlled stop along the commanded path, within the acceleration limits, rather than a
            # velocity step to zero (which the arm would have to follow as a jerk).
            self._advance(self._ramp_down(self._velocities))
            return self._output(ServoStatus.JOINT_STATE_MISSING, text, True)
        holding = self._engaged or (self.config.num_outgoing_halt_msgs_to_publish == 0
                                    and self._positions is not None)
        return self._hold(ServoStatus.JOINT_STATE_MISSING, text, publish=holding)

    # ---- state ------------------------------------------------------------------------------------
    def _catch_up(self, now: float) -> float:
        """Put the commanded state where the last published window has taken the arm at `now`; returns how long
        the servo itself stalled [s] (the time since the last tick beyond one period).

        The last tick advanced the state by one nominal period, but a Python timer ticks late (or early) by a
        fraction of it, and under CPU load by several periods, while the controller follows the window for the
        real time. Sampling that window (as the controller interpolates it) keeps the next window continuous in
        position and velocity: the tool keeps the commanded speed, and the stamps, which are the ticks' times,
        never drift into the past. A stall longer than the window finds the arm on, or at the end of, the
        window's stopping tail, and the servo continues from there.
        """
        last, self._last_tick = self._last_tick, now
        if last is None:
            return 0.0
        elapsed = now - last
        # An early tick (a timer catching up after a late one) may change the velocity only by what the
        # acceleration limits allow in the time since the last change; a late one keeps the one-period change.
        self._accel_dt = min(max(elapsed, 1e-6 * self._dt), self._dt)
        window = self._last_window
        if window is not None and self._positions is not None and abs(elapsed - self._dt) > 1e-6 * self._dt:
            q, v = np.empty(self.robot.n), np.empty(self.robot.n)
            sample_window(window.times, window.positions, window.velocities, elapsed, q, v)
            self._positions, self._velocities = q, v
        return max(0.0, elapsed - self._dt)

    def _anchor_if_needed(self, measurement: JointMeasurement, now: float) -> None:
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
        q, measured = self._positions, np.asarray(measurement.positions, dtype=float)
        moving = q is not None and self._velocities.any()
        # The measurement is as old as its transport: the arm has moved on at the commanded velocity since.
        age = max(0.0, now - measurement.received_at)
        if q is None or (self._anchor_needed and not moving and self._settled_since_request(measurement)) or \
                self._diverged_for_long(q, measured, age, now):
            v = self._velocities if q is not None else np.zeros(self.robot.n)
            self._positions = clamped(measured + v * age, self._lower, self._upper)
            self._velocities = v
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
                and _max_abs_difference(np.asarray(measurement.positions, dtype=float),
                                        np.asarray(previous.positions, dtype=float)) <= ANCHOR_AGREEMENT)

    def _request_anchor(self) -> None:
        """Re-anchor at the next measurement received from now on: one taken before the request may show the arm
        where it was before the servo brought it to rest (on a busy CPU joint states come late), and anchoring
        there stepped the next command back by up to 20 mrad."""
        self._anchor_needed = True
        self._anchor_after = self._last_tick if self._last_tick is not None else -math.inf

    def _diverged_for_long(self, q: np.ndarray, measured: np.ndarray, age: float, now: float) -> bool:
        """Whether the command has been more than max_state_divergence from the measured state for at least
        DIVERGENCE_PERSISTENCE of running time (the servo's own stalls excluded)."""
        if _max_abs_difference(q - self._velocities * age, measured) <= self.config.max_state_divergence:
            self._diverged_since = None
            return False
        if self._diverged_since is None:
            self._diverged_since = (now, self._stalled_before_tick)
        started, stalled_then = self._diverged_since
        return now - started - (self._stalled_total - stalled_then) >= DIVERGENCE_PERSISTENCE

    def _advance(self, velocities: np.ndarray) -> None:
        self._velocities = velocities
        self._positions = self._positions + velocities * self._dt

    def _hold(self, status: ServoStatus, message: str, publish: bool) -> ServoOutput:
        self._velocities = np.zeros(self.robot.n)
        return self._output(status, message, publish)

    def _output(self, status: ServoStatus, message: str, publish: bool, locked: tuple[str, ...] = (),
                sigma_min: float = _NAN, cond: float = _NAN, scale: float = 1.0) -> ServoOutput:
        q = self._positions if self._positions is not None else self.robot.home()
        q = clamped(q, self._lower, self._upper)      # a measured state may sit a hair outside
        v = self._velocities
        return frozen(ServoOutput, {"positions": q, "velocities": v.copy(), "window": self._window(q, v),
                                    "status": status, "message": message, "locked_joints": locked,
                                    "sigma_min": sigma_min, "condition_number": cond, "velocity_scale": scale,
                                    "publish": publish})

    def _window(self, q: np.ndarray, v: np.ndarray) -> TrajectoryWindow:
        """Look-ahead from now (time 0, state q - v dt) through dt (q) and on (`window.window_arrays`)."""
        return self._build_window(q - v * self._dt, v, self._sparse_times)[0]

    def _build_window(self, q: np.ndarray, v: np.ndarray, grid: np.ndarray) -> tuple[TrajectoryWindow, int]:
        """The window from positions q (clamped into the limits) and velocities v (n,) at time 0 on `grid` (see
        `window.window_arrays`), its points views of arrays sized for the most it can have; and the index of its
        point at dt. The outgoing check runs in the same compiled call: its verdict is this tick's (a tick builds
        one window, the one it publishes)."""
        n, rows = len(q), self._window_rows
        t, positions, velocities = np.empty(rows), np.empty((rows, n)), np.empty((rows, n))     # (k,), (k, n) ...
        k, first_period, verdict = checked_window(q, v, self._window_limits, self._dt, grid,
                                                  self.config.max_delivery_delay, LIMIT_TOLERANCE, t, positions,
                                                  velocities)
        self._checked = verdict
        window = frozen(TrajectoryWindow, {"times": t[:k], "positions": positions[:k], "velocities": velocities[:k]})
        return window, first_period


def warm_up(robot: RobotModel, config: ServoConfig) -> ServoOutput:
    """Run a throwaway servo through a few tracking ticks, so that the first tick of a real one does not pay
    one-off costs (the compiled kernels load on first call: ~0.2 s that would stall a control loop).

    Returns:
        The last tick's output (tracking the warm-up twist).
    """
    servo = Servo(robot, config)
    servo.set_measurement(JointMeasurement(robot.home(), 0.0))
    servo.set_command(TwistCommand(np.full(3, WARM_UP_TWIST), np.full(3, WARM_UP_TWIST), "", 0.0))
    now, tracking = 0.0, None
    for k in range(WARM_UP_TICKS):
        # every other tick late by half a period: the catch-up's window sampling is compiled here too, not on the
        # first late tick of the real loop (where compiling it stalled the arm for a second)
        now += config.publish_period * (1.5 if k % 2 else 1.0)
        tracking = servo.step(now)
    # the command times out: the ramp-down and hold paths call their kernels from Python, so they load here too
    for _ in range(math.ceil(config.incoming_command_timeout / config.publish_period) + 3):
        now += config.publish_period
        servo.set_measurement(JointMeasurement(robot.home(), now))
        if servo.step(now).status == ServoStatus.STALE_COMMAND:
            break
    # a pose target's tick (its compiled tracking twist)
    tool = robot.fk(robot.home())
    x, y, z, w = pin.Quaternion(tool.rotation).coeffs()
    servo.set_pose_target(PoseTarget(tool.translation, np.array([x, y, z, w]), "", 0.0, now))
    servo.step(now + config.publish_period)
    # the velocity limiting a joint held at its limit goes through (the hot path runs it inside the IK kernel)
    n = robot.n
    limit_velocity(np.zeros(n), 1.0, np.zeros(n), True, np.ones(n), np.ones(n), config.publish_period,
                   -np.ones(n), np.ones(n), np.empty(n))
    return tracking
