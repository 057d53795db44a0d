"""Limits that change along the path: a motion program's moves each carry their own joint speed and acceleration
fractions and tool speed limits. `LimitSchedule` holds them per stretch of the path parameter; `time_optimal`
(core/path/timing.py) times the path under them, and `stretch_reports` measures each stretch of the result.

At a stretch boundary the stricter of the two neighbouring stretches applies, limit by limit: the joint and tool
velocities are continuous there, so a move that is slower than its predecessor must already run at its own speed
when it starts (the predecessor brakes), and a faster one starts from the previous one's speed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.path.timing import TimedTrajectory
from robokin_ros.core.path.toppra_run import binding_limits, limit_name
from robokin_ros.core.trajectory.arrays import sample_times
from robokin_ros.core.path.toppra_constraints import ToolSpeedLimit, tool_speeds

BOUNDARY_TOLERANCE = 1e-9   # relative to the schedule's length: closer to a boundary than this = on it

_PER_STRETCH = {"velocity_scaling": "in (0, 1]", "acceleration_scaling": "in (0, 1]",
                "tool_speed": ">= 0 [m/s]", "tool_angular_speed": ">= 0 [rad/s]"}


@dataclass(frozen=True)
class LimitSchedule:
    """Limits per stretch of the path parameter: stretch k covers bounds[k] <= s <= bounds[k+1].

    At a boundary (within `BOUNDARY_TOLERANCE` of the schedule's length) the stricter of the two neighbours applies,
    limit by limit; outside [bounds[0], bounds[-1]] the first / last stretch applies.
    """

    bounds: np.ndarray                # (K+1,) strictly increasing path parameter (same units as ss)
    velocity_scaling: np.ndarray      # (K,) in (0, 1], multiplies the joint velocity limits
    acceleration_scaling: np.ndarray  # (K,) in (0, 1]
    tool_speed: np.ndarray            # (K,) [m/s], 0 = no tool speed limit on that stretch
    tool_angular_speed: np.ndarray    # (K,) [rad/s], 0 = none

    def __post_init__(self) -> None:
        for name in ("bounds", *_PER_STRETCH):
            try:
                value = np.array(getattr(self, name), dtype=float, ndmin=1)
            except (TypeError, ValueError) as error:
                raise InvalidInputError(f"invalid limit schedule: {name} is not numeric ({error})") from None
            value.flags.writeable = False          # frozen means frozen: the arrays too
            object.__setattr__(self, name, value)
        problems = _problems(self)
        if problems:
            raise InvalidInputError("invalid limit schedule:\n  " + "\n  ".join(problems))

    @property
    def count(self) -> int:
        """Number of stretches K."""
        return len(self.velocity_scaling)

    @property
    def tolerance(self) -> float:
        """Path parameter distance within which s is on a boundary."""
        return BOUNDARY_TOLERANCE * float(self.bounds[-1] - self.bounds[0])

    @property
    def has_tool_limits(self) -> bool:
        """True when some stretch limits the tool speed or angular speed."""
        return bool((self.tool_speed > 0).any() or (self.tool_angular_speed > 0).any())

    def neighbours(self, s) -> tuple[np.ndarray, np.ndarray]:
        """(left, right) stretch indices of path parameters `s` (M,): equal inside a stretch, k - 1 and k on the
        boundary bounds[k]."""
        s, tol = np.asarray(s, float), self.tolerance
        last = self.count - 1
        right = np.clip(np.searchsorted(self.bounds, s + tol, side="right") - 1, 0, last)
        left = np.clip(np.searchsorted(self.bounds, s - tol, side="left") - 1, 0, last)
        return left, right

    def velocity_limits(self, s, v_max: np.ndarray) -> np.ndarray:
        """(M, n) joint velocity limits at `s`: v_max times the stricter neighbour's scaling."""
        left, right = self.neighbours(s)
        return np.minimum(self.velocity_scaling[left], self.velocity_scaling[right])[:, None] * v_max

    def acceleration_limits(self, s, a_max: np.ndarray) -> np.ndarray:
        """(M, n) joint acceleration limits at `s`."""
        left, right = self.neighbours(s)
        return np.minimum(self.acceleration_scaling[left], self.acceleration_scaling[right])[:, None] * a_max

    def tool_limits(self, s) -> np.ndarray:
        """(M, 2) tool speed [m/s] and angular speed [rad/s] limits at `s`, inf where there is none."""
        limits = np.column_stack([self.tool_speed, self.tool_angular_speed])
        limits[limits <= 0] = np.inf
        left, right = self.neighbours(s)
        return np.minimum(limits[left], limits[right])

    def limits_at(self, s, v_max: np.ndarray, a_max: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`velocity_limits`, `acceleration_limits` and `tool_limits` at `s`, looking the stretches up once."""
        left, right = self.neighbours(s)
        tool = np.column_stack([self.tool_speed, self.tool_angular_speed])
        tool[tool <= 0] = np.inf
        return (np.minimum(self.velocity_scaling[left], self.velocity_scaling[right])[:, None] * v_max,
                np.minimum(self.acceleration_scaling[left], self.acceleration_scaling[right])[:, None] * a_max,
                np.minimum(tool[left], tool[right]))

    def check_covers(self, first: float, last: float) -> None:
        """Raise unless the stretches cover the path parameter range [first, last]."""
        if self.bounds[0] > first + self.tolerance or self.bounds[-1] < last - self.tolerance:
            raise InvalidInputError(f"limit schedule covers s in [{self.bounds[0]:.6g}, {self.bounds[-1]:.6g}] but "
                                    f"the path runs over [{first:.6g}, {last:.6g}]")


def _problems(schedule: LimitSchedule) -> list[str]:
    """Every violation, each naming its field and stretch."""
    bounds = schedule.bounds
    if bounds.ndim != 1 or len(bounds) < 2:
        return [f"bounds must be a 1-D array of at least 2 path parameters, got shape {bounds.shape}"]
    problems = [f"bounds[{k}]={float(b)} is not finite" for k, b in enumerate(bounds) if not np.isfinite(b)]
    if not problems:
        problems = [f"stretch {k}: bounds[{k}]={float(bounds[k])} must be < bounds[{k + 1}]={float(bounds[k + 1])}"
                    for k in np.flatnonzero(~(np.diff(bounds) > 0))]
    count = len(bounds) - 1
    for name, valid in _PER_STRETCH.items():
        value = getattr(schedule, name)
        if value.shape != (count,):
            problems.append(f"{name} must have one entry per stretch ({count}), got shape {value.shape}")
            continue
        ok = (value > 0) & (value <= 1) if "scaling" in name else (value >= 0) & np.isfinite(value)
        problems += [f"stretch {k}: {name}={float(value[k])} must be {valid}" for k in np.flatnonzero(~ok)]
    return problems


class StretchReport(NamedTuple):
    """How one stretch of a scheduled trajectory came out (measured at the control rate)."""

    start_time: float                  # [s] when s crosses bounds[k]
    end_time: float                    # [s] when s crosses bounds[k + 1]
    peak_tool_speed: float             # [m/s] nan without a tool chain
    peak_tool_angular_speed: float     # [rad/s]
    peak_velocity_ratio: float         # max |qd| / that stretch's velocity limits
    peak_acceleration_ratio: float     # max |qdd| / that stretch's acceleration limits
    limited_by: str                    # the limit binding the longest share of the stretch's duration, "" none


def stretch_reports(timed: TimedTrajectory, schedule: LimitSchedule, v_max, a_max, tool: ToolSpeedLimit | None,
                    joint_names, control_rate_hz: float, velocity_scaling: float = 1.0,
                    acceleration_scaling: float = 1.0) -> list[StretchReport]:
    """One report per stretch of a trajectory `time_optimal` timed under `schedule` (same limits and scalings).

    The control samples of stretch k are those with start_k <= t < end_k (the last stretch keeps the final
    sample) plus start_k itself; each is compared against stretch k's own limits. Stretches that lie outside
    the path get zero duration and nan peaks.
    """
    trajectory = timed.trajectory
    v_max = np.asarray(v_max, float) * velocity_scaling
    a_max = np.asarray(a_max, float) * acceleration_scaling
    duration = trajectory.duration
    edges = trajectory.time_at(np.clip(schedule.bounds, trajectory.ss[0], trajectory.ss[-1]))    # (K + 1,)
    edges[0], edges[-1] = 0.0, duration
    control = sample_times(duration, control_rate_hz)
    verified = _verified_samples(trajectory, control, schedule, v_max, a_max, tool)
    if verified is None:
        times = np.union1d(control, edges)
        qd, qdd, speeds = _evaluate(trajectory, times, tool)
        labels = binding_limits(trajectory, v_max, a_max, tool if schedule.has_tool_limits else None, schedule)
    else:
        # the same samples as the verification's, plus the stretch edges: only the edges are evaluated here
        extra = np.setdiff1d(edges, control)
        qd_e, qdd_e, speeds_e = _evaluate(trajectory, extra, tool)
        times = np.r_[control, extra]
        qd, qdd = np.vstack([verified.velocities, qd_e]), np.vstack([verified.accelerations, qdd_e])
        speeds = np.full((len(times), 2), np.nan) if tool is None else np.vstack([verified.tool_speeds, speeds_e])
        labels = verified.binding
    stretch = np.clip(np.searchsorted(edges, times, side="right") - 1, 0, schedule.count - 1)     # (M,)
    v_ratio = (np.abs(qd) / v_max).max(axis=1) / schedule.velocity_scaling[stretch]
    a_ratio = (np.abs(qdd) / a_max).max(axis=1) / schedule.acceleration_scaling[stretch]
    names = _stretch_limits(trajectory, schedule, labels, joint_names)
    peaks = np.column_stack([speeds, v_ratio, a_ratio])                                        # (M, 4)
    reports = []
    for k in range(schedule.count):
        inside = peaks[stretch == k]
        peak = inside.max(axis=0) if len(inside) else np.full(4, np.nan)
        reports.append(StretchReport(float(edges[k]), float(edges[k + 1]), *map(float, peak), names[k]))
    return reports


def _evaluate(trajectory, times: np.ndarray, tool: ToolSpeedLimit | None):
    """Joint velocities, accelerations (M, n) and tool speeds (M, 2) (nan without a tool) at `times`."""
    qd = trajectory(times, 1)
    speeds = (np.full((len(times), 2), np.nan) if tool is None
              else tool_speeds(tool.chain, trajectory(times), qd))                                  # (M, 2)
    return qd, trajectory(times, 2), speeds


def _verified_samples(trajectory, control: np.ndarray, schedule: LimitSchedule, v_max, a_max,
                      tool: ToolSpeedLimit | None):
    """`time_optimal`'s verification samples of this trajectory when they are the ones these reports measure
    (same control samples, limits, schedule and tool chain), else None."""
    verified = getattr(trajectory, "verified", None)
    if (verified is None or verified.schedule is not schedule or len(verified.times) != len(control)
            or not np.array_equal(verified.times, control) or not np.array_equal(verified.v_max, v_max)
            or not np.array_equal(verified.a_max, a_max)):
        return None
    if tool is not None and (verified.tool_speeds is None or verified.chain is not tool.chain):
        return None
    if schedule.has_tool_limits and (tool is None) != (verified.chain is None):
        return None                      # the binding limits were found with (or without) the tool's
    return verified


def _stretch_limits(trajectory, schedule: LimitSchedule, labels: np.ndarray, joint_names) -> list[str]:
    """Per stretch, the limit binding the longest share of its grid intervals' duration ("" when none binds),
    from the grid intervals' `binding_limits`."""
    stretch, _ = schedule.neighbours(0.5 * (trajectory.ss[:-1] + trajectory.ss[1:]))      # one per interval
    dt = np.diff(trajectory.ts)
    names = []
    for k in range(schedule.count):
        inside = (stretch == k) & (labels >= 0)
        weights = np.bincount(labels[inside], weights=dt[inside]) if inside.any() else np.zeros(1)
        names.append(limit_name(int(weights.argmax()), joint_names) if weights.max() > 0 else "")
    return names
