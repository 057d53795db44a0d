"""Result types of the Cartesian path pipeline: IK outcome, timing report, full plan (the timed trajectory's
arrays are core/trajectory/arrays.py's)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from robokin_ros.core.codes import SentencedCode
from robokin_ros.core.path.geometry import DensePath
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays


class PathStatus(SentencedCode):
    """Outcome codes, numbered as robokin_interfaces/action/ExecuteCartesianPath's error codes."""

    SUCCESS = 0, "path solved"
    INVALID_GOAL = 1, "the path request is invalid"
    PATH_DEVIATION = 2, "the tool left the path tolerance"
    JOINT_LIMIT = 3, "a joint reached its position limit"
    SINGULARITY = 4, "the arm reached a singularity (or the edge of its workspace)"
    JOINT_JUMP = 5, "a joint moved more than the jump bound between two samples"


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
    # the same peaks on the spline a joint_trajectory_controller plays through the points
    # (core/trajectory/outgoing_check.py); the time-optimal profile's acceleration steps, replayed by the controller's
    # quintic, overshoot by up to ~37 % of a step, so toppra plans with the acceleration limits times a share (the
    # smallest is reported, 1 = all of them; core/path/timing.py) and a residue is stretched away (1 = no stretch)
    played_velocity_ratio: float = float("nan")
    played_acceleration_ratio: float = float("nan")
    planned_acceleration_share: float = 1.0
    played_stretch: float = 1.0
    # with joint jerk limits (core/path/jerk_timing.py): the largest peak |jerk| / limit over the joints on the played
    # quintic (nan = no jerk limit: not measured) and the averaging window of the profile [s] (0 = none)
    played_jerk_ratio: float = float("nan")
    jerk_window: float = 0.0
    # with joint jerk limits and max_cartesian_jerk / max_cartesian_angular_jerk on a tool-speed-limited section: the
    # tool's peak jerk over its limit, the larger of linear and angular (core/path/tool_jerk.py; nan = not measured)
    played_tool_jerk_ratio: float = float("nan")


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
    # the approach move from the current state to the path start, when one was planned (`program/moves.Approach`);
    # `trajectory` then begins with it, and on failure the solved part is this followed by the timed prefix
    approach: JointTrajectoryArrays | None = None

    @property
    def success(self) -> bool:
        """True when IK succeeded and a verified trajectory exists."""
        return self.ik.success and self.trajectory is not None
