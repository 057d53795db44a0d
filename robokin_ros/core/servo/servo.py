"""The servo's state machine (MoveIt-Servo compatible behaviour), with no clock and no logging.

The servo holds one active command (commands.py, pose_command.py), the commanded state (commanded_state.py), the
speed guards (speed_guards.py) and the window builder (window.py); this module only decides, each tick, which of
them speaks.

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
   from where the last window has taken the arm by then (see `CommandedState.catch_up`), late, early or after
   a stall;
5. no command, or older than `incoming_command_timeout` (receive time, less the servo's own stalls as in 2)
   -> STALE_COMMAND: the velocity
   ramps to zero as one uniform factor within the acceleration limits (direction kept), then the position
   is held (STOPPED), published `num_outgoing_halt_msgs_to_publish` times (0 = forever), then silent.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pinocchio as pin

from robokin_ros.core.collision.scene_change import SceneChange
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.limits import MotionLimits, check_jerk_ramps, limit_velocity
from robokin_ros.core.trajectory.jerk_check import CONTROLLER_PERIOD, window_jerk_violation
from robokin_ros.core.trajectory.outgoing_check import JERK_TOLERANCE, WINDOW_OK
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.commanded_state import CommandedState
from robokin_ros.core.servo.commands import (
    GuidingMotion,
    JointJogMotion,
    TrackedCommand,
    TwistConverter,
    TwistMotion,
    solve,
    unlimited_share,
)
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.guiding_input import GuidingInput
from robokin_ros.core.servo.jerk_window import (
    JERK_SHAPING,
    JerkWindows,
    sample_window_state,
    servo_jerk_limits,
)
from robokin_ros.core.servo.joint_jog import JointJogCommand
from robokin_ros.core.servo.pose_command import PoseMotion
from robokin_ros.core.servo.pose_tracking import PoseTarget, PoseTracker
from robokin_ros.core.servo.speed_guards import CollisionGuard, SpeedGuards
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.stopping import Stopping
from robokin_ros.core.servo.tips_motion import TipsMotion, TipsReport, check_tips_config
from robokin_ros.core.servo.types import JointMeasurement, ServoOutput, TwistCommand, frozen
from robokin_ros.core.servo.velocity_ik import VelocityIk
from robokin_ros.core.servo.window import WindowBuilder, sample_window
from robokin_ros.core.validation import check_time

# The warm-up: a few ticks of a small twist along every axis, enough to run every compiled kernel once.
WARM_UP_TICKS = 3
WARM_UP_TWIST = 0.1        # each component, in the units of `command_in_type`


class Servo:
    """Stateful servo for one robot chain; feed it commands and measurements, call `step` each tick."""

    def __init__(self, robot: RobotModel, config: ServoConfig) -> None:
        self.robot = robot
        self.joint_names: tuple[str, ...] = robot.joint_names
        self._converter = TwistConverter(robot)
        self._pose_tracker = PoseTracker(robot, config)
        self._guiding = GuidingInput(config)
        self._state = CommandedState(robot, config.publish_period)
        self._stopping = Stopping(robot, self._state)
        self._command: TrackedCommand | None = None
        self._guards: SpeedGuards | None = None         # built with the first configuration's acceleration limits
        # several tips: one command holds every tip's input (core/servo/tips_motion.py); None with one tip
        self._tips = TipsMotion(robot, self._converter, config) if len(robot.tip_frames) > 1 else None
        self.update_config(config)
        self._paused = False
        self._refusal = ""          # why the outgoing check refused a window: the status until a new command

    # ---- inputs -----------------------------------------------------------------------------------
    def update_config(self, config: ServoConfig) -> None:
        """Swap the whole configuration (validated against the robot first; the state is kept)."""
        check_tips_config(self.robot, config)       # raises ConfigError before anything changes, as does the IK
        ik = VelocityIk(self.robot, config)
        jerk = servo_jerk_limits(config, self.robot.n)     # None: no jerk limit, the windows of window.py; or raises
        if jerk is not None:
            check_jerk_ramps(MotionLimits(ik.acceleration_limits, ik.acceleration_limits, jerk),
                             self.robot.joint_names, "servo configuration")
        self.config, self._ik, self._state.dt = config, ik, config.publish_period
        if self._tips is not None:
            self._tips.ik = ik
            self._tips.update_config(config)
        self._pose_tracker.update_config(config)
        if self._guards is None:
            self._guards = SpeedGuards(self.robot, config, ik.acceleration_limits, jerk)
        else:
            self._guards.update_config(config, ik.acceleration_limits, jerk)
        self._guiding.update_config(config)
        if self._command is not None and not self._command.update_config(config):
            self._command = None            # no longer a valid command in the new units: it stops being tracked
        self._amax = ik.acceleration_limits
        self.windows = WindowBuilder.for_config(self.robot, config, self._amax)
        self.jerk = None if jerk is None else JerkWindows(config.publish_period, float(self.windows.grid[-1]),
                                                          config.max_delivery_delay, self.windows.limits, jerk)
        self._state.jerk_limited = self.jerk is not None
        if self.jerk is None:
            self._state.accelerations = np.zeros(self.robot.n)      # followed again from 0 if jerk limits return
        self._stopping.update_config(config, self.windows, self._amax, self.jerk)

    @property
    def window_point_counts(self) -> tuple[int, ...]:
        """The numbers of points a published window can have with the current configuration (`WindowBuilder`, or
        with jerk limits `JerkWindows`)."""
        return self.windows.point_counts if self.jerk is None else self.jerk.point_counts

    @property
    def acceleration_limits(self) -> np.ndarray:
        """(n,) [rad/s^2] the joint acceleration limits every window keeps."""
        return self._amax

    @property
    def velocity_limits(self) -> np.ndarray:
        """(n,) [rad/s] the joint velocity limits the IK keeps (velocity_scaling applied)."""
        return self._ik.velocity_limits

    @property
    def command(self) -> TrackedCommand | None:
        """The command being tracked (commands.py), None when there is none."""
        return self._command

    def _replace_command(self, command: TrackedCommand) -> None:
        if not isinstance(command, PoseMotion) and self._pose_tracker.base_T_target is not None:
            self._pose_tracker.clear()      # (without a target it is clear already)
        if self._tips is not None and command is not self._tips and self._command is self._tips:
            self._tips.reset()              # a joint jog or guiding took over: the tips' inputs and grasp are gone
        self._command, self._refusal = command, ""

    def set_command(self, command: TwistCommand, base_T_frame: pin.SE3 | None = None) -> None:
        """Store a twist command; a bad one raises and is not stored (the previous one keeps ageing).

        `base_T_frame`: the pose of `command.frame` when it is not a model frame (looked up in TF by the
        caller); the twist then moves the arm exactly as for a model frame at that pose.

        Several tips (`robot.tip_frames`): `command.tip` names the tip it moves ("" = the first), or in coordinated
        mode the twist is the held object's (no tip); `tips.mode` says how (core/servo/tips_motion.py).

        Raises:
            InvalidInputError: NaN/inf or wrong sizes, or a non-finite receive time; a tip that is not one of the
                robot's (a tip on a one-tip robot other than its tip frame), or one the mode does not take.
            UnknownFrameError: `command.frame` is not a frame of the model (and no `base_T_frame` is given).
        """
        if self._tips is not None:
            self._tips.set_twist(command, base_T_frame, self.config)
            self._replace_command(self._tips)
            return
        if command.tip and command.tip != self.robot.tip_frame:
            raise InvalidInputError(f"twist command names tip '{command.tip}', but the robot has one tip: "
                                    f"{self.robot.tip_frame}")
        self._replace_command(TwistMotion.resolve(command, base_T_frame, self.robot, self._converter, self.config))

    def set_joint_command(self, command: JointJogCommand) -> None:
        """Store a joint jog (replacing any other command); a bad one raises and is not stored.

        Raises:
            UnknownJointError: a name that is not a chain joint.
            InvalidInputError: see `joint_jog.chain_velocities`, or a non-finite receive time.
        """
        self._replace_command(JointJogMotion(command, self.joint_names, self.config))

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

        Several tips: `target.tip` names the tip ("" = the first); the other tips hold still (independent mode).
        """
        if self._tips is not None:
            self._tips.set_pose_target(target, base_T_frame, self._state.frame_pose)
            self._replace_command(self._tips)
            return
        if target.tip and target.tip != self.robot.tip_frame:
            raise InvalidInputError(f"pose target names tip '{target.tip}', but the robot has one tip: "
                                    f"{self.robot.tip_frame}")
        self._replace_command(PoseMotion.resolve(target, base_T_frame, self.robot, self._pose_tracker,
                                                 self._state.frame_pose))

    @property
    def tips_report(self) -> TipsReport | None:
        """Several tips: the mode, the tips moving, and which tip limited the last tracking tick (the tip nearest a
        singularity, tips in conflict, shared joints that moved); None on a robot with one tip."""
        return None if self._tips is None else self._tips.report

    @property
    def pose_tracker(self) -> PoseTracker:
        """The pose target state: the target in the base frame, the remaining error, whether it is reached."""
        return self._pose_tracker

    def set_separation_distance(self, distance: float, received_at: float) -> None:
        """A person's distance [m] from the separation sensor (used when `separation.enabled`); raises
        InvalidInputError for NaN/inf or a negative one (the last good reading stays)."""
        self._guards.separation.monitor.set_distance(distance, received_at)

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
            base_R_sensor = self._state.frame_pose(sensor, frame).rotation
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
        self._replace_command(GuidingMotion(self._guiding, self._converter, self.robot, now))
        return "hand guiding on: the sensor's current reading is the zero push"

    def stop_guiding(self) -> None:
        """Hand guiding off: the arm ramps to rest within the acceleration limits."""
        if isinstance(self._command, GuidingMotion):
            self._command.stop("hand guiding switched off")

    @property
    def guiding(self) -> bool:
        """True while hand guiding drives the arm."""
        return isinstance(self._command, GuidingMotion) and not self._command.stopped

    def command_is_fresh(self, now: float) -> bool:
        """True while the stored command is younger than `incoming_command_timeout` at `now`, or still has
        somewhere to go (a pose target not yet reached, hand guiding)."""
        c = self._command
        return c is not None and (now - c.received_at <= self.config.incoming_command_timeout or c.pending(now))

    def set_measurement(self, measurement: JointMeasurement) -> None:
        """Store the latest measured joint positions (chain order); raises InvalidInputError for a wrong size,
        NaN/inf, or a non-finite receive time."""
        self.robot.check_positions(measurement.positions, "measured joint positions")
        check_time("joint measurement received_at", measurement.received_at)
        self._state.set_measurement(measurement)

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
        self._state.request_anchor()
        self._command = None
        self._pose_tracker.clear()
        if self._tips is not None:
            self._tips.reset()
        self._refusal = ""

    def update_scene(self, change: SceneChange, base_T_frame: pin.SE3 | None = None) -> str:
        """Add, move or remove a collision scene object (core/collision/scene_change.py); returns what changed.

        `base_T_frame`: the pose of `change.frame` when it is not a model frame (looked up in TF by the caller).

        Raises:
            InvalidInputError: collision checking is off, or the change is malformed (see `apply_scene_change`).
            UnknownFrameError: `change.frame` is not a frame of the model (and no `base_T_frame` is given).
        """
        return self._guards.update_scene(change, base_T_frame, self._state.frame_pose)

    @property
    def clearance(self):
        """The last collision check's nearest pair (core/collision/clearance.py), or None when not checking."""
        collision = self._guards.collision
        return collision.clearance if collision is not None else None

    @property
    def collision_guard(self) -> CollisionGuard | None:
        """The collision checking state (checker with its scene, last clearance), or None when it is off."""
        return self._guards.collision if self._guards.checking_collisions else None

    # ---- tick -------------------------------------------------------------------------------------
    def step(self, now: float) -> ServoOutput:
        """One control tick at time `now` [s] (same clock as the receive times)."""
        check_time("now", now)
        self._state.begin_tick(now)
        windows = self.windows
        windows.verdict = WINDOW_OK - 1         # no verdict yet: `WindowBuilder.build` checks the window it builds
        output = self._decide(now)
        if output.publish:
            jerk = self.jerk
            if jerk is not None and windows.verdict < WINDOW_OK and output.window is jerk.window:
                # the two checks below, made in the window's own compiled call (`JerkWindows.build`)
                windows.verdict = jerk.verdict
            else:
                if windows.verdict < WINDOW_OK:
                    windows.verdict = windows.check(output.window)
                if jerk is not None and windows.verdict == WINDOW_OK:
                    w = output.window
                    windows.verdict = window_jerk_violation(w.times, w.positions, w.velocities, jerk.jerk,
                                                            JERK_TOLERANCE, CONTROLLER_PERIOD)
            if windows.verdict != WINDOW_OK:
                output = self._refused(output)
            self._state.last_window = output.window
        return output

    def _refused(self, output: ServoOutput) -> ServoOutput:
        """A window that broke the outgoing check (core/trajectory/outgoing_check.py) is never published: the stop that
        replaces it is (`WindowBuilder.replacement`). The command is dropped, and the status says why until a new one
        arrives."""
        if self.jerk is None:
            replacement, self._refusal = self.windows.replacement(output.window, self.joint_names)
        else:
            replacement, self._refusal = self._jerk_replacement(output)
        self._command = None
        self._pose_tracker.clear()
        if self._tips is not None:
            self._tips.reset()
        q, v = np.empty(self.robot.n), np.empty(self.robot.n)
        if self.jerk is None:
            sample_window(replacement.times, replacement.positions, replacement.velocities, self._state.dt, q, v)
        else:
            a = np.empty(self.robot.n)
            sample_window_state(replacement.times, replacement.positions, replacement.velocities, self._state.dt,
                                q, v, a)
            self._state.accelerations = a
        self._state.positions, self._state.velocities = q, v
        return frozen(ServoOutput, {**output.__dict__, "positions": q.copy(), "velocities": v.copy(),
                                    "window": replacement, "status": ServoStatus.INVALID, "message": self._refusal,
                                    "locked_joints": ()})

    def _jerk_replacement(self, output: ServoOutput) -> tuple:
        """With jerk limits: the jerk-limited stop from the state the refused window started from, and why."""
        q, v, a = self.jerk.start
        stop, what = self.jerk.stopping(q, v, a)[0], "stopping"
        if self.windows.rejection(stop, self.joint_names, self.jerk.jerk) is not None:
            # not even the stop keeps the limits (a state the servo did not command): the arm held where it is
            zero = np.zeros(len(q))
            stop, what = self.jerk.stopping(q, zero, zero)[0], "holding the arm"
        reason = self.windows.rejection(output.window, self.joint_names, self.jerk.jerk)
        return stop, f"a servo window was not published, it broke the outgoing check: {reason}; {what} " \
                     "within the limits instead, command dropped"

    def _decide(self, now: float) -> ServoOutput:
        state, config = self._state, self.config
        if self._paused:
            return self._stopping.paused()
        m = state.measurement
        if m is None or state.running_age("state", m, m.received_at, now) > config.joint_state_timeout:
            return self._stopping.joint_state_missing(now)
        state.anchor_if_needed(m, now, config.max_state_divergence)
        c = self._command
        if c is None:
            return self._stale(True)
        if c.stopped:
            return self._stale(False, ServoStatus.STALE_COMMAND, c.stopped)
        if c.times_out and state.running_age("command", c.source, c.received_at, now) > \
                config.incoming_command_timeout and not c.pending(now):
            return self._stale(False)
        return self._track(c, now)

    def _track(self, command: TrackedCommand, now: float) -> ServoOutput:
        state, ik = self._state, self._ik
        q = state.positions
        twist = command.twist(q, now)
        if command.halted:
            return self._stale(False, ServoStatus.STALE_COMMAND, command.halted)
        self._stopping.engaged, self._stopping.hold_ticks = True, 0     # hold messages are owed once it stops
        result = solve(ik, command, q, twist, 1.0, state)
        status, message = command.outcome(result)
        # the guards: the smallest factor wins, solved again once through the same limits and acceleration window (a
        # stop is a ramp, never a step; at 0 the null-space motion stops too)
        verdict = None if not self._guards.active else self._guards.judge(
            q, twist, command.joint_velocities, result.velocities, now,
            lambda velocities: unlimited_share(ik, command, q, twist, velocities, state))
        if verdict is not None:
            status, message = verdict.status, verdict.message
            if verdict.scale < 1.0:
                result = solve(ik, command, q, twist if verdict.scale > 0.0 else None, verdict.scale, state)
        v = result.velocities
        if self.jerk is not None:
            return self._jerk_track(command, q, result, status, message)
        window, i = self.windows.build(q, v, command.window_grid(q, v, self.windows.grid, self._amax, state.dt))
        # the next tick starts where this window takes the arm in one period (q + v dt, unless a joint brakes for
        # its limit sooner)
        q_out, v_out = window.positions[i], window.velocities[i]
        if not math.isfinite(q_out.sum() + v_out.sum()):
            # Never publish a non-finite command: drop it, re-sync to the measured state and hold.
            state.request_anchor()
            return self._stopping.hold(ServoStatus.INVALID, "internal error: a non-finite command was discarded; "
                                       "re-synced to the measured state", publish=False)
        state.velocities, state.positions = v_out, q_out
        return frozen(ServoOutput, {"positions": q_out, "velocities": v_out, "window": window,
                                    "status": status or result.status, "message": message or result.message,
                                    "locked_joints": result.locked_joints, "sigma_min": result.sigma_min,
                                    "condition_number": result.condition_number,
                                    "velocity_scale": result.velocity_scale, "publish": True})

    def _jerk_track(self, command: TrackedCommand, q: np.ndarray, result, status, message) -> ServoOutput:
        """`_track`'s window with jerk limits: from the commanded state (acceleration included) toward the IK's
        velocities, carried on to the command's grid end (a pose target's is shorter), see jerk_window.py."""
        state = self._state
        state_v = state.velocities
        grid_end = command.window_grid(q, state_v, self.windows.grid, self._amax, state.dt)[-1]
        window, at_dt = self.jerk.build(q, state_v, state.accelerations, result.velocities, True, float(grid_end))
        q_out, v_out = at_dt[0], at_dt[1]
        # (`plainly_finite`: the same answer without numpy's reductions, the test below only when it cannot tell)
        if not (self.jerk.plainly_finite or math.isfinite(q_out.sum() + v_out.sum() + at_dt[2].sum())):
            state.request_anchor()
            return self._stopping.hold(ServoStatus.INVALID, "internal error: a non-finite command was discarded; "
                                       "re-synced to the measured state", publish=False)
        state.positions, state.velocities, state.accelerations = q_out, v_out, at_dt[2]
        status, message = status or result.status, message or result.message
        if self.jerk.braking and status == ServoStatus.OK:
            status, message = ServoStatus.JOINT_BOUND, f"{ServoStatus.JOINT_BOUND.sentence} " \
                f"({self.jerk.braking} joint(s) braking jerk-limited for their limit margin)"
        elif self.jerk.shaping:
            message = f"{message}; {JERK_SHAPING}"
        return frozen(ServoOutput, {"positions": q_out, "velocities": v_out.copy(), "window": window,
                                    "status": status, "message": message,
                                    "locked_joints": result.locked_joints, "sigma_min": result.sigma_min,
                                    "condition_number": result.condition_number,
                                    "velocity_scale": result.velocity_scale, "publish": True,
                                    "peak_jerk_share": self.jerk.peak_share})

    def _stale(self, never_commanded: bool, status: ServoStatus | None = None, text: str = "") -> ServoOutput:
        """Ramp to rest, then hold (`Stopping.stale`); the refusal or the command's idle status says why, if any."""
        if status is None and self._refusal:
            status, text = ServoStatus.INVALID, self._refusal
        if status is None and self._command is not None and self._command.idle() is not None:
            status, text = self._command.idle()
        return self._stopping.stale(never_commanded, status, text)


def warm_up(robot: RobotModel, config: ServoConfig) -> ServoOutput:
    """Run a throwaway servo through a few tracking ticks, so that the first tick of a real one does not pay
    one-off costs (the compiled kernels load on first call: ~0.2 s that would stall a control loop).

    Returns:
        The last tick's output (tracking the warm-up twist).
    """
    if len(robot.tip_frames) > 1 and config.tips.mode != "independent":
        # the warm-up's twists and pose target name no tip: the independent mode takes both (same kernels)
        config = replace(config, tips=replace(config.tips, mode="independent"))
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
