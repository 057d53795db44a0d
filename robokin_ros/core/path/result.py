"""Result types of the Cartesian path pipeline: IK outcome, timed trajectory, timing report, full plan."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from robokin_ros.core.codes import SentencedCode
from robokin_ros.core.path.geometry import DensePath


class PathStatus(SentencedCode):
    """Outcome codes, numbered as robokin_interfaces/action/ExecuteCartesianPath's error codes."""

    SUCCESS = 0, "path solved"
    INVALID_GOAL = 1, "the path request is invalid"
    PATH_DEVIATION = 2, "the tool left the path tolerance"
    JOINT_LIMIT = 3, "a joint reached its position limit"
    SINGULARITY = 4, "the arm reached a singularity (or the edge of its workspace)"
    JOINT_JUMP = 5, "a joint moved more than the jump bound between two samples"


class ExecutionCode(SentencedCode):
    """Outcomes path_ik_node decides while it waits for, executes or stops a planned path (numbered as
    robokin_interfaces/action/ExecuteCartesianPath's error codes, after PathStatus's)."""

    NO_JOINT_STATE = 6, "no fresh joint state arrived"
    CANCELED = 7, "the goal was canceled; the arm holds where it is"
    PREEMPTED = 8, "a newer goal replaced this one; the arm holds where it is"
    EXECUTION_FAILED = 9, "the arm did not finish the trajectory"
    INTERNAL_ERROR = 10, "an internal error ended the goal"
    CONTROLLER_UNAVAILABLE = 11, "the trajectory controller's action server did not answer"
    CONTROLLER_REJECTED = 12, "the trajectory controller rejected the trajectory"
    PATH_TOLERANCE_VIOLATED = 13, "the controller aborted: a joint left its path tolerance"
    GOAL_TOLERANCE_VIOLATED = 14, "the controller aborted: the arm did not settle within the goal tolerance in time"
    PLANNING_TIMEOUT = 15, "planning did not finish within its time budget (planning_timeout); nothing was executed"


@dataclass(frozen=True)
class Deviations:
    """Largest deviations from the geometric path on the constrained axes."""

    position: float = 0.0              # [m] at dense samples
    orientation: float = 0.0           # [rad] at dense samples
    mid_position: float = 0.0          # [m] at joint-space midpoints between samples
    mid_orientation: float = 0.0       # [rad]
    joint_step: float = 0.0            # [rad | m] largest per-joint change between two samples


@dataclass(frozen=True)
class PathIkResult:
    """Incremental path IK outcome; on failure `positions` is the solved prefix (row 0 = start)."""

    status: PathStatus
    message: str
    positions: np.ndarray              # (K, n) [rad | m], K = solved samples (start included)
    path: DensePath
    fraction: float                    # share of the path reached (PathDense.progress of the last good sample)
    arc_length: float                  # [m] translational arc length reached
    deviations: Deviations
    failed_sample: int = -1
    failure_pose: pin.SE3 | None = None  # geometric target of the failed sample, base frame
    failed_joint: str = ""
    joint_value: float = float("nan")   # [rad | m] value the failed joint would take
    joint_limit: float = float("nan")   # [rad | m] the limit it hit (margin included)
    compute_time: float = 0.0          # [s]

    @property
    def success(self) -> bool:
        """True when the whole path was solved within tolerance."""
        return self.status == PathStatus.SUCCESS


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


@dataclass(frozen=True)
class TimingReport:
    """Verification of a timed trajectory, sampled at the control rate."""

    duration: float                    # [s]
    peak_velocity_ratio: float         # max_k,j |qd| / v_max (must be <= 1 + 1e-3)
    peak_acceleration_ratio: float     # max_k,j |qdd| / a_max
    max_position_deviation: float = float("nan")     # [m] tool off the dense path after timing
    max_orientation_deviation: float = float("nan")  # [rad]
    retimings: int = 0                 # uniform time stretches applied after a measured overshoot
    compute_time: float = 0.0          # [s] time parameterization (toppra) incl. re-timings
    verify_time: float = 0.0           # [s]
    peak_tool_speed: float = float("nan")            # [m/s] tool frame origin at the control rate (nan = not measured)
    peak_tool_angular_speed: float = float("nan")    # [rad/s]
    peak_tool_speed_ratio: float = 0.0  # max over the set tool limits of peak / limit (<= 1 + 1e-3; 0 = none set)
    limited_by: str = ""               # the limit binding longest: "velocity of <joint>", "acceleration of
    #                                    <joint>", "tool speed", "tool angular speed" ("" = none / not measured)
    # the same peaks on the spline a joint_trajectory_controller plays through the points (core/outgoing.py); the
    # time-optimal profile's acceleration steps, replayed by the controller's quintic, overshoot by up to ~37 % of a
    # step, so toppra plans with the acceleration limits times a share (the smallest is reported, 1 = all of them;
    # core/path/played.py) and a residue is stretched away (1 = no stretch)
    played_velocity_ratio: float = float("nan")
    played_acceleration_ratio: float = float("nan")
    planned_acceleration_share: float = 1.0
    played_stretch: float = 1.0


@dataclass(frozen=True)
class DownsampleResult:
    """Indices of the dense samples kept for timing and the deviation the reduction causes."""

    indices: np.ndarray                # (M,) int, strictly increasing, first 0 and last N-1
    max_joint_deviation: float         # [rad | m] spline through the kept points vs the dense solution
    max_position_deviation: float      # [m] FK of that spline vs the geometric path
    max_orientation_deviation: float   # [rad]


@dataclass(frozen=True)
class PathPlan:
    """Everything `plan_cartesian_path` produces: IK result, downsampling, trajectory and its report."""

    ik: PathIkResult
    downsample: DownsampleResult | None = None
    trajectory: JointTrajectoryArrays | None = None
    timing: TimingReport | None = None
    timings: dict = field(default_factory=dict)    # stage name -> [s]
    # the approach move from the current state to the path start, when one was planned (`core/path/approach.py`);
    # `trajectory` then begins with it, and on failure the solved part is this followed by the timed prefix
    approach: JointTrajectoryArrays | None = None

    @property
    def success(self) -> bool:
        """True when IK succeeded and a verified trajectory exists."""
        return self.ik.success and self.trajectory is not None
