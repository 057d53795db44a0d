"""The demo's twist script and its analysis: pure numpy on recorded samples, so it is testable without ROS."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from robokin_ros.core.robot import RobotModel
from robokin_ros.core.so3 import log3_batch
from robokin_ros.core.stamps import header_seconds

# The servo's scale.linear [m/s] and scale.rotational [rad/s] in config/panda_servo.yaml: a unitless
# command of 1 means this speed.
SCALE_LINEAR, SCALE_ROTATIONAL = 0.4, 0.8
RAMP_S = 0.3            # [s] the servo's acceleration ramp at the start of a phase: not steady state yet
SILENCE = "silence"     # the last phase: nothing is published


@dataclass(frozen=True)
class Phase:
    """A constant twist held for `duration`; unitless numbers (scaled by the servo's scale.* parameters)."""

    name: str
    duration: float                       # [s]
    linear: tuple[float, float, float]    # unitless, in `frame` axes
    angular: tuple[float, float, float]
    frame: str = ""                       # "" = base frame; "tool" = the servo's tip frame
    expect: str = ""


def demo_phases(scale_linear: float = SCALE_LINEAR, scale_rotational: float = SCALE_ROTATIONAL) -> list[Phase]:
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
              expect="leaves the singular pose at once and reaches the commanded speed within ~0.2 s (the "
                     "singularity escape bends the elbow while damping holds the singular direction)"),
        Phase("twist the wrist to its limit", 4.0, (0, 0, 0), (0, 0, 1.0), frame="tool",
              expect="a joint reaches its limit and locks; the others cannot spin the tool in place, so the "
                     "servo halts rather than swing the tool"),
        Phase("slide along -y", 1.0, (0, -v, 0), (0, 0, 0),
              expect="a locked joint does not block motions that do not need it"),
        Phase(SILENCE, 1.5, (0, 0, 0), (0, 0, 0), expect="no command: ramp to zero, then hold"),
    ]


@dataclass(frozen=True)
class PhaseReport:
    """Measured behaviour of one phase."""

    name: str
    commanded_speed: float            # [m/s] or [rad/s] of the dominant part
    median_speed_error: float         # [m/s | rad/s], after the first RAMP_S (acceleration ramp)
    tool_origin_drift: float          # [m] tool origin travel (rotations: after the first RAMP_S, ~0)
    min_sigma: float
    statuses: tuple[str, ...]
    locked_joints: tuple[str, ...]


class ToolMotion(NamedTuple):
    """The tool's motion at each joint sample, base axes."""

    origins: np.ndarray     # (k, 3) tool origin positions [m]
    linear: np.ndarray      # (k, 3) [m/s]
    angular: np.ndarray     # (k, 3) [rad/s]


def tool_velocities(robot: RobotModel, times: np.ndarray, positions: np.ndarray,
                    window_s: float = 0.02) -> ToolMotion:
    """Tool origin positions and linear / angular velocities from joint samples, by central differences over
    about `window_s` [s] (the joint states are sampled, not exact)."""
    poses = [robot.fk(q) for q in positions]
    origins = np.array([T.translation for T in poses])
    rotations = np.array([T.rotation for T in poses])
    k = len(times)
    lin, ang = np.zeros((k, 3)), np.zeros((k, 3))
    if k < 3:
        return ToolMotion(origins, lin, ang)
    step = max(1, int(round(window_s / max(np.median(np.diff(times)), 1e-6) / 2)))
    for i in range(k):
        a, b = max(0, i - step), min(k - 1, i + step)
        dt = times[b] - times[a]
        if dt <= 0:
            continue
        lin[i] = (origins[b] - origins[a]) / dt
        ang[i] = log3_batch((rotations[b] @ rotations[a].T)[None]).vector[0] / dt     # base axes
    return ToolMotion(origins, lin, ang)


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


class StatusSample(NamedTuple):
    """One servo status message as the driver received it."""

    time: float                       # [s] monotonic clock
    code: int                         # ServoStatus value
    message: str
    locked_joints: tuple[str, ...]
    sigma_min: float                  # [m/rad]
    peak_jerk_share: float = float("nan")   # the window's peak jerk over its limit (NaN: no jerk limits)


class PhaseSpan(NamedTuple):
    """When a phase of the twist script ran, on the monotonic clock [s]."""

    phase: Phase
    start: float
    end: float


class Samples(NamedTuple):
    """Joint samples in a time window: times (k,) [s], positions and velocities (k, n) [rad | rad/s]."""

    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray


@dataclass
class Recording:
    """Everything the driver saw, on the monotonic clock."""

    times: list[float] = field(default_factory=list)
    stamps: list[int] = field(default_factory=list)             # the joint states' header stamps [ns]
    positions: list[np.ndarray] = field(default_factory=list)
    velocities: list[np.ndarray] = field(default_factory=list)
    status: list[StatusSample] = field(default_factory=list)
    phase_spans: list[PhaseSpan] = field(default_factory=list)
    trajectories_sent: int = 0                                   # JointTrajectory messages to the controller
    rejections: list[str] = field(default_factory=list)         # sim_robot's refusals, in the controller's words

    def arrays(self, start: float = -np.inf, end: float = np.inf) -> Samples:
        """The joint samples received between `start` and `end` [s], both included."""
        t = np.array(self.times)
        keep = (t >= start) & (t <= end)
        return Samples(t[keep], np.array(self.positions)[keep], np.array(self.velocities)[keep])

    def between_stamps(self, start: int, end: int) -> Samples:
        """The joint samples whose header stamps [ns, ROS clock] lie between `start` and `end` (their times in
        seconds): on a busy CPU this process takes them late, and selecting by receive time would miss the last
        ones of a motion."""
        stamps = np.array(self.stamps, dtype=np.int64)
        keep = (stamps >= start) & (stamps <= end)
        return Samples(header_seconds(stamps[keep]), np.array(self.positions)[keep], np.array(self.velocities)[keep])

    def stamped(self, start: float = -np.inf, end: float = np.inf) -> Samples:
        """As `arrays`, timed by the publisher's header stamps: rates measured with them do not see the delivery
        jitter of a loaded machine (receive times bunch when the driver's executor falls behind)."""
        t = np.array(self.times)
        keep = (t >= start) & (t <= end)
        stamps = np.array(self.stamps, dtype=np.int64)[keep]
        return Samples(header_seconds(stamps), np.array(self.positions)[keep], np.array(self.velocities)[keep])
