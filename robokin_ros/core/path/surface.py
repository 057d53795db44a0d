"""The path library's declared surface: what a planner chains into a motion, and nothing else of `core/path/`.

- dense geometry: `build_path` (blended polylines and arcs, sampled every `sample_step`), `DensePath`, `resting_path`,
  `DUPLICATE_TOLERANCE`, `unstopped_turn_limit`, `pose_from_position_quaternion` (the waypoint pose rule) and the
  reach sphere (`arm_reach`, `ArmReach`);
- dense solve: `PathIkSolver` (incremental IK along a dense path, its batched FK and axis selection), `PathIkResult`,
  `PathStatus`, `Deviations`;
- timing of a run: downsampling (`downsample`, `path_parameter`), toppra (`time_optimal`; within jerk limits
  `time_section_profile`, core/path/jerk_timing.py; `ToolSpeedLimit`,
  `LimitSchedule`, `stretch_reports`) and joining the reports of rest-to-rest pieces (`join_reports`);
- verification: `trajectory_deviation`, `played_deviation` (on `chain_fk`) and the tool speeds (`tool_speeds`);
- batched FK of a chain for many configurations at once (`ChainFk`; the classroom's workspace sampling uses it);
- the request's frame: `PathConfig`, `PlanningBudget` (time budget and cancel), `AxisSelection`;
- several tips (`tips_*`): synchronised dense paths (`TipsPath`, `per_tip_moves` with `TipMove`,
  `blended_per_tip`, `carried_paths`),
  their stacked IK (`TipsIkSolver`, `TipsIkResult`, `tip_sentence`) and their timing and true deviation per tip
  (`time_tips_section`, `TimedTipsSection`, `tips_deviation`, `TipsDeviation`).

`core/program/` (the one planner, `MotionPlanner`) and the classroom import `core/path/` only through this
module; the layering test (`test/core/test_layering.py`) holds them to that. The trajectory arrays, joining
rest-to-rest pieces, the hold and the joint line of a joint move are `core/trajectory/`'s (`arrays`, `profiles`),
which the program imports itself.
"""
from __future__ import annotations

from robokin_ros.core.path.budget import UNLIMITED, PlanningBudget
from robokin_ros.core.path.chain import ChainFk, chain_fk
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.deviation import AxisSelection, played_deviation, trajectory_deviation
from robokin_ros.core.path.downsample import downsample, path_parameter
from robokin_ros.core.limits import check_jerk_ramps
from robokin_ros.core.path.jerk_timing import time_section_profile
from robokin_ros.core.path.geometry import (
    DUPLICATE_TOLERANCE,
    DensePath,
    build_path,
    pose_from_position_quaternion,
    resting_path,
    unstopped_turn_limit,
)
from robokin_ros.core.path.limit_schedule import LimitSchedule, StretchReport, stretch_reports
from robokin_ros.core.path.reach import ArmReach, arm_reach
from robokin_ros.core.path.report import jerk_line
from robokin_ros.core.path.result import Deviations, DownsampleResult, PathIkResult, PathPlan, PathStatus, TimingReport
from robokin_ros.core.path.solver import PathIkSolver
from robokin_ros.core.path.timing import TimedTrajectory, join_reports, time_optimal
from robokin_ros.core.path.tips_geometry import (
    TipMove,
    TipsPath,
    blended_per_tip,
    carried_paths,
    per_tip_moves,
)
from robokin_ros.core.path.tips_solver import TipsIkResult, TipsIkSolver, tip_sentence
from robokin_ros.core.path.tips_timing import TimedTipsSection, TipsDeviation, time_tips_section, tips_deviation
from robokin_ros.core.path.toppra_constraints import ToolSpeedLimit, tool_speeds

__all__ = [
    "UNLIMITED", "PlanningBudget", "AxisSelection", "PathConfig", "played_deviation", "trajectory_deviation",
    "downsample", "path_parameter", "ChainFk", "chain_fk", "DUPLICATE_TOLERANCE", "DensePath", "build_path",
    "resting_path",
    "unstopped_turn_limit", "pose_from_position_quaternion", "LimitSchedule", "StretchReport", "stretch_reports",
    "ArmReach",
    "arm_reach", "Deviations", "DownsampleResult", "PathIkResult", "PathPlan",
    "PathStatus",
    "TimingReport", "jerk_line", "join_reports", "PathIkSolver", "TimedTrajectory", "time_optimal",
    "time_section_profile", "check_jerk_ramps", "ToolSpeedLimit",
    "tool_speeds", "TipMove", "TipsPath", "blended_per_tip", "carried_paths", "per_tip_moves", "TipsIkResult",
    "TipsIkSolver", "tip_sentence", "TimedTipsSection", "TipsDeviation", "time_tips_section", "tips_deviation",
]
