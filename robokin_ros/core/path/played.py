"""The trajectory a joint_trajectory_controller plays: the points robokin sends and the controller's spline through
them (core/trajectory/outgoing_check.py), measured against the joint limits while timing.

Why it differs from the timed trajectory: toppra's time-optimal profile steps its acceleration (from +a_max to
-a_max at a switch, from a_max to 0 where a cruise begins), and no spline with continuous acceleration through exact
samples of such a profile can stay within its bounds (the bang-bang profile is the only one that covers the
distance in the time). The controller's quintic overshoots a step by up to ~0.37 times its size (a quarter more
where toppra alternates between neighbouring grid intervals). `time_optimal` therefore measures the played spline and
plans again with the acceleration limits lowered by the overshoot (`derated`): cruise phases keep their speeds,
only the acceleration phases are longer (by the square root of the overshoot). A last residue is removed by the
uniform stretch, as toppra's own overshoot between grid points is.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from robokin_ros.core.path.budget import UNLIMITED, PlanningBudget
from robokin_ros.core.path.const_accel import ConstAccelTrajectory
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays
from robokin_ros.core.path.toppra_constraints import LimitLookup
from robokin_ros.core.trajectory.quintic_peaks import quintic_peaks

MAX_DERATINGS = 2        # toppra runs after the first with lowered acceleration limits (each costs a toppra run)
DERATE_MARGIN = 0.02     # the points fall elsewhere on the new profile: a little below the measured share


class PlayedRatios(NamedTuple):
    """Per joint, the peak |qd| / v_max and |qdd| / a_max on the controller's spline."""

    velocity: np.ndarray             # (n,)
    acceleration: np.ndarray         # (n,)

    def worst(self) -> float:
        """The uniform stretch that would bring both to 1 (velocities scale by 1/c, accelerations by 1/c^2)."""
        if len(self.velocity) == 0:
            return 1.0
        return float(max(self.velocity.max(), np.sqrt(self.acceleration.max()), 1.0))


def sampled_points(trajectory: ConstAccelTrajectory, start: np.ndarray, joint_names, times: np.ndarray,
                   states: tuple | None = None) -> JointTrajectoryArrays:
    """The trajectory's points at `times` [s], the first one exactly `start` (the arm's state); `states`: their
    (positions, velocities, accelerations) when the caller has evaluated them."""
    positions, velocities, accelerations = trajectory.states(times)[1:] if states is None else states
    positions[0] = start
    return JointTrajectoryArrays(tuple(joint_names), times, positions, velocities, accelerations)


def played_ratios(trajectory: ConstAccelTrajectory, points: JointTrajectoryArrays, v_max, a_max,
                  schedule: LimitLookup | None, budget: PlanningBudget = UNLIMITED) -> PlayedRatios:
    """Peaks of the controller's spline through `points` over the limits, each interval against the stricter
    limits of its two ends (the schedule's, when one is given); `budget` is checked between blocks of intervals."""
    n = points.positions.shape[1]
    velocity, acceleration = np.zeros(n), np.zeros(n)
    if schedule is not None:
        v_lim, a_lim, _ = schedule.limits_at(trajectory.path_parameter(points.times), v_max, a_max)    # (K, n)
    for first in range(0, len(points.times) - 1, CHECK_BLOCK):
        budget.check("timing")
        k = slice(first, first + CHECK_BLOCK + 1)                      # the block's points, its intervals between
        # the exact peaks core/trajectory/outgoing_check.py's final check measures too, without its array conversions
        v_peak, _, a_peak, _ = quintic_peaks(points.times[k], points.positions[k], points.velocities[k],
                                             points.accelerations[k])                            # (B, n)
        if schedule is None:        # one limit per joint: the largest peak over it is the largest ratio, exactly
            v_ratio, a_ratio = v_peak.max(axis=0) / v_max, a_peak.max(axis=0) / a_max
        else:
            v_ratio = (v_peak / np.minimum(v_lim[k][:-1], v_lim[k][1:])).max(axis=0)
            a_ratio = (a_peak / np.minimum(a_lim[k][:-1], a_lim[k][1:])).max(axis=0)
        velocity, acceleration = np.maximum(velocity, v_ratio), np.maximum(acceleration, a_ratio)
    return PlayedRatios(velocity, acceleration)


CHECK_BLOCK = 4096       # intervals between budget checks (~20 ms)


def derated(share: np.ndarray, excess: np.ndarray) -> np.ndarray:
    """The next shares (n,) of the acceleration limits to plan with, from the shares planned with and the played
    peaks over the limits (n,). The overshoot is a share of the planned profile's own steps, so it is divided out;
    of every joint, since a joint's steps follow from whichever joint binds (lowering only the joint that overshoots
    moves the steps elsewhere without shrinking them)."""
    worst = float(np.max(excess, initial=1.0))
    if worst <= 1.0:
        return share
    # in whole percent, rounded down: toppra's constraint objects for these limits are then built once and reused
    return np.floor(share / (worst * (1.0 + DERATE_MARGIN)) * 100.0) / 100.0
