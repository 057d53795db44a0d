"""Pose tracking: a Cartesian controller that turns a target tool pose into the tool twist the servo follows.

Per tick, from the tool pose of the commanded joint positions (base frame):
- the error: e_p = p_target - p_tool [m], e_w = log3(R_target R_tool^T) [rad] (base axes);
- the twist along each error: speed = min(gain |e|, sqrt(2 a |e|), v_max) plus the target's own velocity
  (feed-forward). The square-root term is the braking curve of a constant deceleration `a`: the tool arrives
  at rest instead of overshooting, however far the target was. Near the target the proportional term is the
  smaller one, so the error decays exponentially (gain * dt < 1 at any servo rate, so no discrete overshoot);
- the twist then goes through the servo's velocity IK like any twist command: joint velocity and acceleration
  limits, locking and singularity handling apply unchanged.

Feed-forward: a target that moves (a stream of poses, e.g. a tracked object) has a velocity, estimated from the
last two targets by their stamps. Between updates the target is extrapolated along it, for at most
`EXTRAPOLATION_LIMIT` s: a stream that stops is taken to have stopped there. Without feed-forward, following a
target at speed v would lag by v / gain. The feed-forward velocity follows the estimate only as fast as the tool
may accelerate (`pose_tracking.max_linear_acceleration` / `max_angular_acceleration`): a stream that jumps is
not a moving object. Targets alternating +-10 mm every 10 ms estimate +-2 m/s; taken as they came, that velocity
was extrapolated up to 0.1 s past each target and the tool ran 80-600 mm away (issue 24). A stream whose estimate
had to be so limited (it jumps) is neither extrapolated nor fed forward: the feedback alone keeps the tool between
its targets, as for fixed ones. (Fed forward, the limited estimate of a chattering stream wanders: targets skipped
or bunched by a busy CPU make intervals of 20-30 ms whose estimates pull it one way, and its mean up to 0.04 m/s
held the tool v / gain = 2 mm past a target.) A real motion (whose velocity changes no faster than the tool can
follow) is estimated, extrapolated and fed forward as before.

"Reached": both errors within `pose_tracking.linear_tolerance` / `pose_tracking.angular_tolerance`. "Settled":
reached for `SETTLE_TIME_CONSTANTS` / gain seconds since, by when the proportional term has shrunk what was left
at the tolerance's edge to 2 % of it: the servo stops there (as a stale command stops) rather than at the edge.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pinocchio as pin
from numba import njit

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.so3 import exp3_unit_axis, log3_into
from robokin_ros.core.spatial import pose_from_xyzw
from robokin_ros.core.stamps import UNSTAMPED, header_seconds
from robokin_ros.core.validation import check_vector

# Targets further apart in time than this do not define a velocity: the stream was interrupted, or a new one began.
MAX_FEEDFORWARD_INTERVAL = 0.5      # [s]
EXTRAPOLATION_LIMIT = 0.1           # [s] how far past its last update a moving target is extrapolated
# No arm's tool moves faster than this: a faster target stream is an error in its stamps or poses.
MAX_TARGET_SPEED = 10.0             # [m/s]
MAX_TARGET_ANGULAR_SPEED = 20.0     # [rad/s]
SETTLE_TIME_CONSTANTS = 4.0         # e^-4 ~ 2 %
_AT_REST = np.zeros(6)         # a target's velocity when it stays put (writeable: one compiled signature with others)


@dataclass(frozen=True)
class PoseTarget:
    """A target pose of the servo's tip frame, as received: `frame_T_target` in `frame` ("" = the base frame)."""

    position: np.ndarray        # (3,) [m] in `frame`
    quaternion: np.ndarray      # (4,) x, y, z, w in `frame`; normalised on arrival (core/spatial.py's rule)
    frame: str
    stamp: int                  # [ns] the sender's stamp (0 = unstamped: the receive time is used instead)
    received_at: float          # [s] receive time on the caller's clock
    tip: str = ""               # the tip it moves, on a robot with several (robot.tip_frames); "" = the first tip


class PoseError(NamedTuple):
    """How far the tool is from its target."""

    linear: float               # [m]
    angular: float              # [rad]


def target_transform(target: PoseTarget) -> pin.SE3:
    """`frame_T_target` of a received target, checked.

    Raises:
        InvalidInputError: NaN/inf, wrong sizes, or a quaternion that is not a rotation (core/spatial.py's rule:
            squared norm within 0.01 of 1; most likely an unset orientation of all zeros).
    """
    check_vector("pose target position", target.position, 3)
    check_vector("pose target orientation", target.quaternion, 4)
    return pose_from_xyzw(target.position, target.quaternion, "pose target orientation quaternion")


@njit(cache=True)
def _tracking_twist(target_p, target_R, v_target, ahead, feed, tool_p, tool_R, limits, twist, error):
    """Fill `twist` (6,) with the tracking twist and `error` (6,) with the error [m; rad] (base axes); return
    its (linear [m], angular [rad]) sizes.

    The target is extrapolated `ahead` [s] along v_target (6,), and `feed` (0 or 1) times v_target is the
    feed-forward; limits (2, 3): per part (linear, angular) the
    gain [1/s], the braking acceleration and the speed cap. One compiled call: in numpy the few 3-vectors cost
    ~20 us a tick in call overhead alone.
    """
    R = target_R.copy()
    wx, wy, wz = v_target[3] * ahead, v_target[4] * ahead, v_target[5] * ahead
    turn = np.sqrt(wx * wx + wy * wy + wz * wz)
    if turn > 0.0:
        e = exp3_unit_axis(wx / turn, wy / turn, wz / turn, turn)
        for i in range(3):
            for j in range(3):
                R[i, j] = e[3 * i] * target_R[0, j] + e[3 * i + 1] * target_R[1, j] + e[3 * i + 2] * target_R[2, j]
    for i in range(3):
        error[i] = target_p[i] + v_target[i] * ahead - tool_p[i]
    D = R @ tool_R.T
    log = np.empty(3)
    log3_into(D, log)
    error[3:] = log
    sizes = np.empty(2)
    for part in range(2):
        e0, e1, e2 = error[3 * part], error[3 * part + 1], error[3 * part + 2]
        size = np.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
        sizes[part] = size
        factor = 0.0
        if size > 0.0:
            speed = min(limits[part, 0] * size, np.sqrt(2.0 * limits[part, 1] * size), limits[part, 2])
            factor = speed / size
        for i in range(3):
            twist[3 * part + i] = feed * v_target[3 * part + i] + error[3 * part + i] * factor
    return sizes[0], sizes[1]


class PoseTracker:
    """Holds the current target (base frame) and computes the tracking twist for given joint positions."""

    def __init__(self, robot: RobotModel, config: ServoConfig, tip_id: int | None = None) -> None:
        self.robot = robot
        self.tip_id = robot.tip_frame_id if tip_id is None else tip_id      # the frame it brings to the target
        self._data = robot.model.createData()          # own data: the IK's Jacobian cache stays untouched
        self._base_T_world = robot.world_T_base.inverse()
        self.update_config(config)
        self.base_T_target: pin.SE3 | None = None
        self._target_time = 0.0                          # [s] when base_T_target arrived (servo clock)
        self._target_stamp = UNSTAMPED                   # [ns] its sender's stamp
        self._velocity = np.zeros(6)                     # (6,) the target's [v; w], base axes (feed-forward)
        self.stream_note = ""                            # why the feed-forward lags the stream, "" when it does not
        self._moving = False
        self._extrapolated = False                       # the target is extrapolated (its stream does not jump)
        self.error = PoseError(math.inf, math.inf)
        self.error_vector = np.zeros(6)                  # (6,) the last error [m; rad], base axes (see `twist`)
        self._ahead_velocity, self._ahead_left = _AT_REST, 0.0          # see `target_motion`
        self.reached = False
        self._reached_at = math.inf                      # [s] when the error last came within tolerance

    def update_config(self, config: ServoConfig) -> None:
        self.config = pose = config.pose_tracking
        self._gains = (pose.linear_gain, pose.angular_gain)
        self._accelerations = (pose.max_linear_acceleration, pose.max_angular_acceleration)
        self._speeds = (pose.max_linear_speed, pose.max_angular_speed)
        self._limits = np.array((self._gains, self._accelerations, self._speeds)).T.copy()     # (2, 3) per part
        self._settle_time = SETTLE_TIME_CONSTANTS / min(self._gains)     # [s]

    def set_target(self, base_T_target: pin.SE3, received_at: float, stamp: int = UNSTAMPED) -> None:
        """A new target in the base frame, received at `received_at` [s] (the servo's clock); updates the
        feed-forward velocity, timed by the sender's stamps [ns] when both targets have one (receive times
        jitter by the transport's latency), by the receive times otherwise.

        Raises:
            InvalidInputError: the implied target velocity is beyond what any arm's tool does.
        """
        previous = self.base_T_target
        stamp = int(stamp)
        stamped = stamp > 0 and self._target_stamp > 0
        interval = header_seconds(stamp) - header_seconds(self._target_stamp) if stamped \
            else received_at - self._target_time
        velocity, note = np.zeros(6), ""
        if previous is not None and 0.0 < interval <= MAX_FEEDFORWARD_INTERVAL:
            estimate = np.empty(6)
            estimate[:3] = (base_T_target.translation - previous.translation) / interval
            estimate[3:] = pin.log3(base_T_target.rotation @ previous.rotation.T) / interval
            linear, angular = np.linalg.norm(estimate[:3]), np.linalg.norm(estimate[3:])
            if linear > MAX_TARGET_SPEED or angular > MAX_TARGET_ANGULAR_SPEED:
                raise InvalidInputError(f"pose target moves at {linear:.3g} m/s, {angular:.3g} rad/s between "
                                        f"targets {interval * 1e3:.3g} ms apart: beyond any arm ({MAX_TARGET_SPEED} "
                                        f"m/s, {MAX_TARGET_ANGULAR_SPEED} rad/s); are the stamps right?")
            velocity, note = self._followed_velocity(estimate, interval)
        self.base_T_target, self._target_time, self._velocity = base_T_target.copy(), received_at, velocity
        self.stream_note = note
        self._moving = bool(velocity.any())
        self._extrapolated = self._moving and not note
        self._target_stamp = stamp
        self.reached = False            # judged again at the next tick, against this target

    def _followed_velocity(self, estimate: np.ndarray, interval: float) -> tuple[np.ndarray, str]:
        """The feed-forward velocity (6,) after a target `interval` [s] after the last one whose velocity is
        estimated as `estimate` (6,): the last feed-forward moved toward the estimate by at most the tracking
        accelerations times the interval (per part, as one vector: the direction of the change is kept); and
        a sentence naming the stream's own acceleration when it was beyond them ("" otherwise)."""
        velocity, notes = estimate.copy(), []
        for part, (unit, name) in enumerate((("m/s^2", "max_linear_acceleration"),
                                             ("rad/s^2", "max_angular_acceleration"))):
            rows = slice(3 * part, 3 * part + 3)
            change = estimate[rows] - self._velocity[rows]
            size, allowed = float(np.linalg.norm(change)), self._accelerations[part] * interval
            if size > allowed:
                velocity[rows] = self._velocity[rows] + change * (allowed / size)
                notes.append(f"{size / interval:.3g} {unit} (pose_tracking.{name} {self._accelerations[part]:g})")
        if not notes:
            return velocity, ""
        return velocity, (f"the target stream changes its velocity at {' and '.join(notes)}: its motion is "
                          "followed only that fast, toward the latest target")

    def clear(self) -> None:
        """Forget the target (another command took over)."""
        self.base_T_target = None
        self.reached = False
        self._velocity = np.zeros(6)
        self.stream_note = ""
        self._moving = self._extrapolated = False

    def tool_pose(self, positions: np.ndarray) -> pin.SE3:
        """`base_T_tool` at `positions` (n,)."""
        robot = self.robot
        pin.forwardKinematics(robot.model, self._data, robot.to_pinocchio_q(positions))
        return self._base_T_world * pin.updateFramePlacement(robot.model, self._data, self.tip_id)

    def twist(self, positions: np.ndarray, now: float) -> np.ndarray:
        """(6,) tool-origin twist [v; w] in base axes [m/s, rad/s] toward the target at `now`; updates `error`,
        `error_vector`, `target_motion` and `reached` (judged against the target as extrapolated to `now`)."""
        base_T_tool = self.tool_pose(positions)
        since = max(now - self._target_time, 0.0)
        # a stream silent for EXTRAPOLATION_LIMIT has stopped where it was extrapolated to: no feed-forward after
        # that (it kept the tool moving at the stream's last velocity, settled v / gain past that point)
        feeding = self._moving and since <= EXTRAPOLATION_LIMIT
        # a stream that jumps is neither extrapolated nor fed forward: its targets are where it wants the tool,
        # nothing beyond them (its rate-limited velocity, fed forward, held the tool v / gain past them)
        ahead = min(since, EXTRAPOLATION_LIMIT) if self._extrapolated else 0.0
        runs_ahead = feeding and self._extrapolated
        self._ahead_velocity = self._velocity if runs_ahead else _AT_REST
        self._ahead_left = EXTRAPOLATION_LIMIT - since if runs_ahead else 0.0
        target = self.base_T_target
        twist = np.empty(6)
        linear, angular = _tracking_twist(target.translation, target.rotation, self._velocity, ahead,
                                          1.0 if runs_ahead else 0.0, base_T_tool.translation,
                                          base_T_tool.rotation, self._limits, twist, self.error_vector)
        self.error = PoseError(linear, angular)
        reached = linear <= self.config.linear_tolerance and angular <= self.config.angular_tolerance
        if reached and not self.reached:
            self._reached_at = now
        self.reached = reached
        return twist

    def settled(self, now: float) -> bool:
        """True once the target has been within tolerance for the settle time (see the module docstring)."""
        return self.reached and now - self._reached_at >= self._settle_time

    @property
    def target_motion(self) -> tuple[np.ndarray, float]:
        """How the target the error was last measured against (`twist`) moves on: its velocity (6,) [m/s; rad/s],
        base axes, and for how long [s] it is extrapolated further. Zero for a target the tool is to stop at: a
        fixed one, a jumping stream's latest target (not extrapolated), a stream that has stopped."""
        return self._ahead_velocity, self._ahead_left

    def describe_error(self) -> str:
        """The remaining error for a person: "12.3 mm, 4.5 mrad"."""
        return f"{self.error.linear * 1e3:.3g} mm, {self.error.angular * 1e3:.3g} mrad"
