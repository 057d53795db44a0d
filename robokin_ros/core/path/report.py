"""A plan as human-readable text: what the tools, the examples and the demo print."""
from __future__ import annotations

from robokin_ros.core.path.result import PathPlan


def jerk_line(ratio: float, window: float) -> str:
    """The peak jerk as a share of the limit, as the controller plays the trajectory (`TimingReport`)."""
    averaged = f"; averaging window up to {window * 1e3:.1f} ms" if window > 0 else ""
    return f"peak jerk {ratio * 100:.1f} % of the limit (worst joint, on the controller's quintic{averaged})"


def report_text(plan: PathPlan) -> str:
    """Human summary of a plan."""
    ik, d = plan.ik, plan.ik.deviations
    lines = [f"status: {ik.status.name} - {ik.message}",
             f"dense samples: {ik.path.size}, length {ik.path.length * 1e3:.1f} mm, fraction {ik.fraction:.3f}",
             f"blend radii [mm]: {[round(r * 1e3, 3) for r in ik.path.blend_radii]}"
             + (f", clamped at waypoints {list(ik.path.clamped_corners)}" if ik.path.clamped_corners else ""),
             f"max deviation at samples: {d.position * 1e3:.4f} mm / {d.orientation * 1e3:.4f} mrad; at "
             f"midpoints: {d.mid_position * 1e3:.4f} mm / {d.mid_orientation * 1e3:.4f} mrad",
             f"max joint step: {d.joint_step:.5f} rad; IK {ik.compute_time * 1e3:.2f} ms "
             f"({ik.compute_time / max(ik.path.size - 1, 1) * 1e6:.2f} us/sample)"]
    if plan.downsample is not None:
        ds = plan.downsample
        lines.append(f"downsampled to {len(ds.indices)} points: joint dev {ds.max_joint_deviation:.2e} rad, tool "
                     f"dev {ds.max_position_deviation * 1e3:.4f} mm / {ds.max_orientation_deviation * 1e3:.4f} mrad")
    if plan.timing is not None:
        t = plan.timing
        lines.append(f"duration {t.duration:.3f} s; peak |qd|/v_max {t.peak_velocity_ratio:.4f}, |qdd|/a_max "
                     f"{t.peak_acceleration_ratio:.4f} (re-timings {t.retimings}); after timing "
                     f"{t.max_position_deviation * 1e3:.4f} mm / {t.max_orientation_deviation * 1e3:.4f} mrad; "
                     f"timing {t.compute_time * 1e3:.2f} ms")
        if t.played_jerk_ratio == t.played_jerk_ratio:          # measured: jerk limits set
            lines.append(jerk_line(t.played_jerk_ratio, t.jerk_window))
    return "\n".join(lines)
