"""Sampled joint trajectories: the arrays a plan hands to a trajectory controller, the time grid they are
sampled on, the trajectory that holds the arm, and rest-to-rest pieces joined into one."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def sample_times(duration: float, rate_hz: float) -> np.ndarray:
    """0, 1/rate, ... and exactly `duration`, strictly increasing (a last gap shorter than a tenth of a
    period is merged into the final point so no interval is degenerate)."""
    dt = 1.0 / rate_hz
    times = np.arange(0.0, duration, dt)
    if len(times) > 1 and duration - times[-1] < 0.1 * dt:
        times = times[:-1]
    return np.append(times, duration)


@dataclass(frozen=True)
class JointTrajectoryArrays:
    """Time-sampled joint trajectory, ready for trajectory_msgs/JointTrajectory (row 0 = start state)."""

    joint_names: tuple[str, ...]
    times: np.ndarray                  # (K,) [s], strictly increasing, times[0] = 0
    positions: np.ndarray              # (K, n) [rad | m]
    velocities: np.ndarray             # (K, n) [rad/s | m/s]
    accelerations: np.ndarray          # (K, n) [rad/s^2 | m/s^2]

    @property
    def duration(self) -> float:
        """Time of the last point [s]."""
        return float(self.times[-1])


def hold_trajectory(joint_names, q: np.ndarray) -> JointTrajectoryArrays:
    """The one-point trajectory that holds the arm at rest at `q` (duration 0): the plan of a request that does
    not move the arm."""
    zeros = np.zeros((1, len(q)))
    return JointTrajectoryArrays(tuple(joint_names), np.zeros(1), np.asarray(q)[None].copy(), zeros, zeros.copy())


# [s] between the end of one rest-to-rest piece and the start of the next when their accelerations differ: the
# arm rests at one pose for this long, and the controller's quintic turns one acceleration into the other there
# instead of inside the next piece's first interval, where it would overshoot the limit by up to 37 %
JOIN_HOLD = 2e-3


def piece_offsets(pieces: list[JointTrajectoryArrays]) -> np.ndarray:
    """[s] when each piece starts in `concatenate_trajectories(pieces)`, shape (len(pieces),)."""
    holds = [JOIN_HOLD if not np.allclose(a.accelerations[-1], b.accelerations[0], rtol=0.0, atol=1e-12) else 0.0
             for a, b in zip(pieces[:-1], pieces[1:])]
    return np.cumsum([0.0] + [a.duration + hold for a, hold in zip(pieces[:-1], holds)])


def concatenate_trajectories(pieces: list[JointTrajectoryArrays]) -> JointTrajectoryArrays:
    """Rest-to-rest trajectories played one after the other (each starts where the previous stopped) as one. A
    piece's repeated start point is dropped when its acceleration equals the previous end's; else it follows
    `JOIN_HOLD` later (`piece_offsets`), so every point keeps its own acceleration."""
    offsets = piece_offsets(pieces)
    keep = [slice(None)] + [slice(0 if offsets[i] > offsets[i - 1] + pieces[i - 1].duration else 1, None)
                            for i in range(1, len(pieces))]
    return JointTrajectoryArrays(
        pieces[0].joint_names,
        np.concatenate([a.times[k] + o for a, k, o in zip(pieces, keep, offsets)]),
        *(np.concatenate([getattr(a, name)[k] for a, k in zip(pieces, keep)])
          for name in ("positions", "velocities", "accelerations")))
