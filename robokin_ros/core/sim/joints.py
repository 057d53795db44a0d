"""The joint state of a simulated robot driven like ros2_control controllers (sim_robot's arithmetic).

Three command modes, the most recent command wins: a JointTrajectory (followed as
JointTrajectoryController does), forward positions (approached at the velocity limits) and forward
velocities (integrated until the next command). Every step respects the joint velocity limits and the
position limits; the joints a command asked to exceed them are reported so the node can say so.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robokin_ros.core.robot import RobotModel
from robokin_ros.core.trajectory.controller_tolerances import TrackingSample
from robokin_ros.core.sim.trajectory_follower import TrajectoryFollower, TrajectoryPoints, check_trajectory
from robokin_ros.core.validation import check_vector

# A command may exceed a limit by this share before it is reported: rounding and timer jitter
# (the servo plans at exactly the limit over its own dt) should not produce log lines.
_REPORT_MARGIN = 1.02
VELOCITY_WINDOW = 0.001   # [s] shortest interval the reported velocity is differenced over


@dataclass(frozen=True)
class SimStep:
    """What one simulation step had to limit."""

    velocity_limited: tuple[str, ...]    # joints whose command asked more than their velocity limit
    position_limited: tuple[str, ...]    # joints stopped at a position limit
    tracking: TrackingSample | None = None   # set while a trajectory is followed


class SimulatedJoints:
    """Joint positions and velocities of a simulated arm.

    Args:
        robot: the chain (limits and joint names).
        initial_positions: (n,) start configuration [rad | m], clamped to the limits; empty = the robot's home.
        now: current time [s] on the caller's clock.
        velocity_scale: share of the URDF velocity limits the arm reaches (below 1: an arm that lags its
            commands, to exercise path tolerances).
    """

    def __init__(self, robot: RobotModel, initial_positions: npt.ArrayLike, now: float,
                 velocity_scale: float = 1.0) -> None:
        self.joint_names = robot.joint_names
        self._lower, self._upper = robot.limits.lower, robot.limits.upper
        self._vmax = robot.limits.velocity * velocity_scale
        if len(initial_positions) == 0:
            initial_positions = robot.home()
        initial = check_vector("initial_positions", initial_positions, robot.n)
        self.positions = np.clip(initial, self._lower, self._upper)
        self.velocities = np.zeros(robot.n)
        self._last = now
        self._velocity_positions, self._velocity_time = self.positions.copy(), now
        self._follower: TrajectoryFollower | None = None
        self._sampled = False                           # the follower has had its first control cycle
        self._started = now
        self._target: np.ndarray | None = None          # forward position command
        self._velocity_cmd: np.ndarray | None = None    # forward velocity command

    def follow(self, points: TrajectoryPoints, start: float) -> None:
        """Replace the active command by a trajectory starting at `start` [s]; InvalidInputError if invalid."""
        check_trajectory(points, self._lower, self._upper, self.joint_names)
        lead = start - self._last
        if lead > 0.0:
            # Starts in the future: like JointTrajectoryController, move from the current state to the
            # first point by its time instead of jumping there.
            points = TrajectoryPoints(points.times + lead, points.positions, points.velocities, points.accelerations)
            start = self._last
        # stamped in the past: played from where the clock is, from the accepted state only before the first point
        self._follower = TrajectoryFollower(points, self.positions.copy(), self.velocities.copy(), self._last - start)
        self._started, self._target, self._velocity_cmd = start, None, None
        self._sampled = False

    def hold(self) -> None:
        """Stop where the arm is (what JTC does after a cancel or an abort)."""
        self.command_positions(self.positions.copy())

    def command_positions(self, positions: np.ndarray) -> None:
        """Forward position command in chain order [rad | m]; InvalidInputError on size or NaN."""
        self._target = check_vector("position command", positions, len(self.joint_names)).copy()
        self._follower, self._velocity_cmd = None, None

    def command_velocities(self, velocities: np.ndarray) -> None:
        """Forward velocity command in chain order [rad/s | m/s]; InvalidInputError on size or NaN."""
        self._velocity_cmd = check_vector("velocity command", velocities, len(self.joint_names)).copy()
        self._follower, self._target = None, None

    def step(self, now: float) -> SimStep:
        """Advance the state to `now` [s]."""
        dt = now - self._last
        self._last = now
        if dt <= 0.0:
            return SimStep((), ())
        tracking = None
        if self._velocity_cmd is not None:
            wanted = self._velocity_cmd * dt
        elif self._target is not None:
            wanted = self._target - self.positions
        elif self._follower is not None:
            tracking = self._track(now - self._started)
            wanted = tracking.desired - self.positions
        else:
            wanted = np.zeros_like(self.positions)
        max_step = self._vmax * dt
        step = np.clip(wanted, -max_step, max_step)
        new = np.clip(self.positions + step, self._lower, self._upper)
        speed_limited = np.abs(wanted) > _REPORT_MARGIN * max_step
        if self._target is not None:     # approaching a position target at full speed is the intent
            speed_limited[:] = False
        pushing = self.positions + wanted
        position_limited = (pushing < self._lower) | (pushing > self._upper)
        self.positions = new
        # Velocity as a finite difference over at least VELOCITY_WINDOW: a command that arrives just after a
        # tick makes a step of microseconds, and dividing its rounding-level motion by that would report
        # velocity spikes the arm never had.
        elapsed = now - self._velocity_time
        if elapsed >= VELOCITY_WINDOW:
            self.velocities = (new - self._velocity_positions) / elapsed
            self._velocity_positions, self._velocity_time = new.copy(), now
        names = self.joint_names
        return SimStep(tuple(names[i] for i in np.flatnonzero(speed_limited)),
                       tuple(names[i] for i in np.flatnonzero(position_limited)), tracking)

    def _track(self, t: float) -> TrackingSample:
        """The trajectory sample at `t` [s] after its start, against the state at the start of the cycle."""
        first, self._sampled = not self._sampled, True
        end = self._follower.end_time
        return TrackingSample(self._follower.sample(t), self.positions.copy(), t < end, first, t - end)
