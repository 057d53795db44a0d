"""What planning a motion program returns: the trajectory, the per-move cycle-time report and the outcome."""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin

from robokin_ros.core.codes import SentencedCode
from robokin_ros.core.path.surface import DownsampleResult, PathIkResult, PathPlan, TimingReport, jerk_line
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays
from robokin_ros.core.trajectory.jerk_smoothing import interval_jerk_peaks


@dataclass(frozen=True)
class MoveReport:
    """One line of the cycle-time report."""

    index: int
    label: str                       # "3 MoveL pick"
    start_time: float                # [s] from the program start; a blended move starts mid-zone
    duration: float                  # [s]
    peak_tool_speed: float           # [m/s] at the control rate
    peak_tool_angular_speed: float   # [rad/s]
    limited_by: str                  # "velocity of <joint>", "acceleration of <joint>", "tool speed", ... or ""
    programmed_speed: float = 0.0    # [m/s] the move's tool speed (0 = none)
    zone: float = 0.0                # [m] as planned (clamped zones smaller than programmed)
    # with joint jerk limits: the peak |jerk| / limit over the joints of the controller's quintic through the points
    # while this move plays (`with_jerk_shares`; nan = no jerk limit: not measured)
    peak_jerk_share: float = float("nan")

    @property
    def end_time(self) -> float:
        """[s]"""
        return self.start_time + self.duration


def with_jerk_shares(reports, trajectory: JointTrajectoryArrays | None, jerk) -> tuple:
    """The move reports with their `peak_jerk_share`: per point interval of `trajectory`, the played quintic's peak
    jerk over the limits `jerk` (n,), and per move the largest over the intervals it overlaps. Unchanged without a
    jerk limit (None or all inf) or a trajectory."""
    if jerk is None or not np.isfinite(np.asarray(jerk, float)).any() or trajectory is None or \
            len(trajectory.times) < 2:
        return tuple(reports)
    t = trajectory.times
    share = (interval_jerk_peaks(t, trajectory.positions, trajectory.velocities, trajectory.accelerations)
             / np.asarray(jerk, float)).max(axis=1)                                              # (K - 1,)
    out = []
    for r in reports:
        inside = (t[1:] > r.start_time) & (t[:-1] < r.end_time)
        out.append(replace(r, peak_jerk_share=float(share[inside].max())) if inside.any() else r)
    return tuple(out)


@dataclass(frozen=True)
class MotionPlan:
    """A planned program or waypoint path; on failure `trajectory` is the solved part (ending at rest), or None when
    nothing was.

    A waypoint path's plan also carries `path_ik` (the IK of the path after its approach: dense path, deviations,
    fraction, failure), its `approach` move and the kept knots (`downsample`); its move reports are empty.
    """

    status: SentencedCode
    message: str
    trajectory: JointTrajectoryArrays | None
    moves: tuple[MoveReport, ...]
    timing: TimingReport | None = None
    failed_move: int = -1                  # index of the move that failed, -1 when none
    completed_moves: int = 0               # moves fully inside the trajectory
    max_position_deviation: float = float("nan")     # [m] played trajectory vs the Cartesian moves' geometry
    max_orientation_deviation: float = float("nan")  # [rad]
    dense_samples: int = 0
    timings: dict | None = None           # phase -> [s]
    notes: tuple[str, ...] = ()           # what the plan accepted but a user should know (zero-length moves)
    failed_sample: int = -1               # dense sample of a waypoint path's failure, -1 when none
    failure_pose: pin.SE3 | None = None   # geometric target of the failed sample, base frame
    failed_joint: str = ""
    path_ik: PathIkResult | None = None   # waypoint paths: the IK of the path after the approach
    approach: JointTrajectoryArrays | None = None    # waypoint paths: the approach move, when one was planned
    downsample: DownsampleResult | None = None        # waypoint paths: the knots kept for timing
    # robots with several tips (core/program/bimanual.py)
    failed_tip: str = ""                  # the tip that failed ("" = none, or the relative pose of a carried object)
    tip_deviations: tuple[tuple[str, float, float], ...] = ()   # per tip: (name, [m], [rad]) played vs its geometry
    relative_deviation: tuple[float, float] | None = None       # [m, rad] drift of the hands' held relative pose

    @property
    def success(self) -> bool:
        """True when every move was planned and timed."""
        return self.failed_move < 0 and int(self.status) == 0 and self.trajectory is not None

    @property
    def cycle_time(self) -> float:
        """[s] duration of the (solved part of the) trajectory."""
        return self.trajectory.duration if self.trajectory is not None else 0.0

    @property
    def fraction(self) -> float:
        """Share of the path reached (waypoint paths), or of the moves completed (programs)."""
        if self.path_ik is not None:
            return self.path_ik.fraction
        return self.completed_moves / max(len(self.moves), 1) if self.moves else float(self.success)

    @property
    def arc_length(self) -> float:
        """[m] translational arc length a waypoint path reached (0 for programs)."""
        return self.path_ik.arc_length if self.path_ik is not None else 0.0

    @classmethod
    def of_path(cls, plan: PathPlan, solved: JointTrajectoryArrays | None, lead: int, move_count: int) -> MotionPlan:
        """The MotionPlan of a waypoint path's PathPlan; `solved`: the timed solved part of a failed plan; `lead`:
        1 when the program's move 0 was planned as an approach (the path's waypoint i is then move i + 1)."""
        ik = plan.ik
        failed = -1
        if not ik.success:
            sample = min(max(ik.failed_sample, 0), ik.path.size - 1)
            failed = lead + int(ik.path.segment[sample])
        timing = plan.timing
        return cls(ik.status, ik.message, plan.trajectory if plan.success else solved, (), timing,
                   failed_move=failed, completed_moves=failed if failed >= 0 else move_count,
                   max_position_deviation=timing.max_position_deviation if timing else float("nan"),
                   max_orientation_deviation=timing.max_orientation_deviation if timing else float("nan"),
                   dense_samples=ik.path.size, timings=plan.timings, failed_sample=ik.failed_sample,
                   failure_pose=ik.failure_pose, failed_joint=ik.failed_joint, path_ik=ik, approach=plan.approach,
                   downsample=plan.downsample)

    def path_plan(self) -> PathPlan:
        """A waypoint path's plan as the deprecated PathPlan (trajectory None on failure)."""
        return PathPlan(self.path_ik, self.downsample, self.trajectory if self.success else None, self.timing,
                        self.timings, self.approach)


ProgramPlan = MotionPlan          # the former name of a program's plan


def cycle_report_text(plan: ProgramPlan) -> str:
    """The cycle-time report as a table: one row per move."""
    lines = [f"status: {plan.status.name} - {plan.message}",
             f"cycle time {plan.cycle_time:.3f} s, {len(plan.moves)} moves, max deviation "
             f"{plan.max_position_deviation * 1e3:.4f} mm / {plan.max_orientation_deviation * 1e3:.4f} mrad",
             f"{'move':<22} {'start [s]':>9} {'time [s]':>9} {'peak v [m/s]':>12} {'prog v':>7} {'zone [mm]':>9}"
             "  limited by"]
    timing = plan.timing
    if timing is not None and timing.played_jerk_ratio == timing.played_jerk_ratio:    # measured: jerk limits set
        lines.insert(2, jerk_line(timing.played_jerk_ratio, timing.jerk_window))
    jerk = any(np.isfinite(m.peak_jerk_share) for m in plan.moves)
    if jerk:
        lines[-1] = lines[-1].replace("  limited by", " jerk [%]  limited by")
    for m in plan.moves:
        programmed = f"{m.programmed_speed:.3f}" if m.programmed_speed > 0 else "-"
        zone = f"{m.zone * 1e3:.1f}" if m.zone > 0 else "fine"
        share = "" if not jerk else f" {m.peak_jerk_share * 100:8.1f}" if np.isfinite(m.peak_jerk_share) else \
            f" {'-':>8}"
        lines.append(f"{m.label:<22} {m.start_time:9.3f} {m.duration:9.3f} {m.peak_tool_speed:12.4f} "
                     f"{programmed:>7} {zone:>9}{share}  {m.limited_by or '-'}")
    return "\n".join(lines)
