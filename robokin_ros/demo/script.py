"""The demo's twist script and its analysis: pure numpy on recorded samples, so it is testable without ROS."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from robokin_ros.core.robot import RobotModel


@dataclass(frozen=True)
class Phase:
    """A constant twist held for `duration`; unitless numbers (scaled by the servo's scale.* parameters)."""

    name: str
    duration: float                       # [s]
    linear: tuple[float, float, float]    # unitless, in `frame` axes
    angular: tuple[float, float, float]
    frame: str = ""                       # "" = base frame; "tool" = the servo's tip frame
    expect: str = ""


def demo_phases(scale_linear: float = 0.4, scale_rotational: float = 0.8) -> list[Phase]:
    """The README demo: a square, a tool-axis rotation, a push into the stretched (singular) arm, a push into a
    joint limit, then silence. Speeds are chosen in SI here and converted to unitless commands."""
    v = 0.05 / scale_linear        # 5 cm/s
    w = 0.6 / scale_rotational     # 0.6 rad/s
    return [
        Phase("square +y", 2.0, (0, v, 0), (0, 0, 0), expect="10 cm along base +y"),
        Phase("square +z", 2.0, (0, 0, v), (0, 0, 0), expect="10 cm along base +z"),
        Phase("square -y", 2.0, (0, -v, 0), (0, 0, 0), expect="10 cm along base -y"),
        Phase("square -z", 2.0, (0, 0, -v), (0, 0, 0), expect="10 cm along base -z"),
        Phase("rotate about tool z", 2.0, (0, 0, 0), (0, 0, w), frame="tool",
              expect="tool spins in place: its origin must not move"),
        Phase("stretch outward", 7.0, (2 * v, 0, 0.5 * v), (0, 0, 0),
              expect="the arm straightens into its workspace boundary: sigma_min falls to ~0, damping keeps "
                     "the joints bounded and the arm stops at the boundary"),
        Phase("back from stretch", 2.0, (-2 * v, 0, -0.5 * v), (0, 0, 0),
              expect="leaves the singular pose at once (slowly at first: near sigma_min = 0 the joint speeds "
                     "it would take are bounded by damping)"),
        Phase("twist the wrist to its limit", 4.0, (0, 0, 0), (0, 0, 1.0), frame="tool",
              expect="a joint reaches its limit and locks; the others cannot spin the tool in place, so the "
                     "servo halts rather than swing the tool"),
        Phase("slide along -y", 1.0, (0, -v, 0), (0, 0, 0),
              expect="a locked joint does not block motions that do not need it"),
        Phase("silence", 1.5, (0, 0, 0), (0, 0, 0), expect="no command: ramp to zero, then hold"),
    ]


@dataclass(frozen=True)
class PhaseReport:
    """Measured behaviour of one phase."""

    name: str
    commanded_speed: float            # [m/s] or [rad/s] of the dominant part
    median_speed_error: float         # [m/s | rad/s], after the first 0.3 s (acceleration ramp)
    tool_origin_drift: float          # [m] tool origin travel (rotations: after the first 0.3 s, ~0)
    min_sigma: float
    statuses: tuple[str, ...]
    locked_joints: tuple[str, ...]


def tool_velocities(robot: RobotModel, times: np.ndarray, positions: np.ndarray,
                    window_s: float = 0.02) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tool origin positions (k, 3) and linear / angular velocities (k, 3) in base axes from joint samples,
    by central differences over about `window_s` (the joint states are sampled, not exact)."""
    poses = [robot.fk(q) for q in positions]
    origins = np.array([T.translation for T in poses])
    rotations = np.array([T.rotation for T in poses])
    k = len(times)
    lin, ang = np.zeros((k, 3)), np.zeros((k, 3))
    if k < 3:
        return origins, lin, ang
    step = max(1, int(round(window_s / max(np.median(np.diff(times)), 1e-6) / 2)))
    for i in range(k):
        a, b = max(0, i - step), min(k - 1, i + step)
        dt = times[b] - times[a]
        if dt <= 0:
            continue
        lin[i] = (origins[b] - origins[a]) / dt
        R = rotations[b] @ rotations[a].T
        angle = np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1))
        axis = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
        norm = np.linalg.norm(axis)
        ang[i] = axis / norm * angle / dt if norm > 1e-12 else 0.0
    return origins, lin, ang


def time_to_stop(times: np.ndarray, velocities: np.ndarray, silence_start: float,
                 threshold: float = 1e-3) -> float | None:
    """Seconds from `silence_start` until every joint velocity stays below `threshold` [rad/s]."""
    moving = np.abs(velocities).max(axis=1) >= threshold
    after = times >= silence_start
    if not after.any():
        return None
    last_moving = np.flatnonzero(moving & after)
    if len(last_moving) == 0:
        return 0.0
    if last_moving[-1] == len(times) - 1:
        return None      # still moving at the end of the recording
    return float(times[last_moving[-1] + 1] - silence_start)


@dataclass
class Recording:
    """Everything the driver saw, on the monotonic clock."""

    times: list[float] = field(default_factory=list)
    positions: list[np.ndarray] = field(default_factory=list)
    velocities: list[np.ndarray] = field(default_factory=list)
    status: list[tuple[float, int, str, tuple[str, ...], float]] = field(default_factory=list)
    phase_spans: list[tuple[Phase, float, float]] = field(default_factory=list)

    def arrays(self, start: float = -np.inf, end: float = np.inf):
        t = np.array(self.times)
        keep = (t >= start) & (t <= end)
        return t[keep], np.array(self.positions)[keep], np.array(self.velocities)[keep]
