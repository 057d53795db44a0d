"""A MoveJ between exact stops with no tool speed: the synchronised point-to-point profile (trapezoid or quintic,
`core/trajectory/profiles.py`) instead of toppra. All joints share one s(t) on the straight joint line; on that line the
trapezoid is what toppra finds too (a test compares the durations; up to 8 % longer, so that a controller's spline
through its points stays within the limits), the quintic has no acceleration steps."""
from __future__ import annotations

import numpy as np

from robokin_ros.core.trajectory.outgoing_check import spline_peaks
from robokin_ros.core.path.surface import StretchReport, TimedTrajectory, TimingReport, tool_speeds
from robokin_ros.core.trajectory.profiles import joint_move

BINDING = 1.0 - 1e-3       # a limit binds when the profile reaches it to within 0.1 %


def point_to_point(q0: np.ndarray, q1: np.ndarray, v_max: np.ndarray, a_max: np.ndarray, profile: str,
                   trajectory_rate_hz: float, control_rate_hz: float, joint_names,
                   chain) -> tuple[TimedTrajectory, StretchReport]:
    """The timed move and its report row; v_max, a_max already scaled by the move's fractions."""
    arrays = joint_move(q0, q1, v_max, a_max, profile, trajectory_rate_hz, joint_names, for_controller=True)
    fine = joint_move(q0, q1, v_max, a_max, profile, control_rate_hz, joint_names,      # for the tool speeds
                      for_controller=True)
    speeds = tool_speeds(chain, fine.positions, fine.velocities).max(axis=0)             # (2,)
    played = spline_peaks(arrays.times, arrays.positions, arrays.velocities, arrays.accelerations)
    v_ratio = played.velocity / v_max                                                     # (n,) as a JTC plays it
    a_ratio = played.acceleration / a_max
    if v_ratio.max() >= BINDING:
        limited_by = f"velocity of {joint_names[int(v_ratio.argmax())]}"
    elif a_ratio.max() >= BINDING:
        limited_by = f"acceleration of {joint_names[int(a_ratio.argmax())]}"
    else:
        limited_by = ""
    report = TimingReport(arrays.duration, float(v_ratio.max()), float(a_ratio.max()),
                          peak_tool_speed=float(speeds[0]), peak_tool_angular_speed=float(speeds[1]),
                          limited_by=limited_by, played_velocity_ratio=float(v_ratio.max()),
                          played_acceleration_ratio=float(a_ratio.max()))
    row = StretchReport(0.0, arrays.duration, float(speeds[0]), float(speeds[1]), float(v_ratio.max()),
                        float(a_ratio.max()), limited_by)
    return TimedTrajectory(arrays, report, None), row
