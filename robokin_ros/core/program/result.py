"""What planning a motion program returns: the trajectory, the per-move cycle-time report and the outcome."""
from __future__ import annotations

from dataclasses import dataclass

from robokin_ros.core.codes import SentencedCode
from robokin_ros.core.path.result import JointTrajectoryArrays, TimingReport


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

    @property
    def end_time(self) -> float:
        """[s]"""
        return self.start_time + self.duration


@dataclass(frozen=True)
class ProgramPlan:
    """A planned program; on failure `trajectory` is the solved part (ending at rest), or None when nothing was."""

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

    @property
    def success(self) -> bool:
        """True when every move was planned and timed."""
        return self.failed_move < 0 and self.trajectory is not None

    @property
    def cycle_time(self) -> float:
        """[s] duration of the (solved part of the) trajectory."""
        return self.trajectory.duration if self.trajectory is not None else 0.0

    @property
    def fraction(self) -> float:
        """Share of the moves completed."""
        return self.completed_moves / max(len(self.moves), 1) if self.moves else float(self.success)


def cycle_report_text(plan: ProgramPlan) -> str:
    """The cycle-time report as a table: one row per move."""
    lines = [f"status: {plan.status.name} - {plan.message}",
             f"cycle time {plan.cycle_time:.3f} s, {len(plan.moves)} moves, max deviation "
             f"{plan.max_position_deviation * 1e3:.4f} mm / {plan.max_orientation_deviation * 1e3:.4f} mrad",
             f"{'move':<22} {'start [s]':>9} {'time [s]':>9} {'peak v [m/s]':>12} {'prog v':>7} {'zone [mm]':>9}"
             "  limited by"]
    for m in plan.moves:
        programmed = f"{m.programmed_speed:.3f}" if m.programmed_speed > 0 else "-"
        zone = f"{m.zone * 1e3:.1f}" if m.zone > 0 else "fine"
        lines.append(f"{m.label:<22} {m.start_time:9.3f} {m.duration:9.3f} {m.peak_tool_speed:12.4f} "
                     f"{programmed:>7} {zone:>9}  {m.limited_by or '-'}")
    return "\n".join(lines)
