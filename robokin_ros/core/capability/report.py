"""Capability results as words and tables: one place decides names, units and flags for every front end."""
from __future__ import annotations

from robokin_ros.core.capability.analysis import CapabilityAnalysis, Ellipsoid
from robokin_ros.core.capability.polytope import ForcePolytope


def _axes(e: Ellipsoid | None) -> str:
    if e is None:
        return "unavailable"
    flags = "".join("*" if c else ("0" if d else "") for c, d in zip(e.capped, e.degenerate))
    text = ", ".join(f"{s:.4g}" for s in e.semi_axes) + f" [{e.unit}]"
    return text + (f"  ({flags.count('*')} capped, {flags.count('0')} zero)" if flags else "")


def measure_rows(analysis: CapabilityAnalysis, polytope: ForcePolytope | None = None,
                 polytope_reason: str = "") -> list[tuple[str, str]]:
    """(name, value) rows of every measure and ellipsoid; units inside the value."""
    m, r = analysis.manipulability, analysis.angular_manipulability
    rows = [
        ("yoshikawa sqrt(det JvJv^T)", f"{m.yoshikawa:.4g} [m^3]"),
        ("condition number (Jv)", f"{m.condition:.4g}"),
        ("sigma_min / sigma_max (Jv)", f"{m.sigma_min:.4g} / {m.sigma_max:.4g} [m/rad]"),
        ("isotropy (Jv)", f"{m.isotropy:.3f}" + ("  SINGULAR" if m.singular else "")),
        ("condition / sigma_min (Jw)", f"{r.condition:.4g} / {r.sigma_min:.4g} [rad/rad]"),
        ("velocity semi-axes", _axes(analysis.velocity)),
        ("angular velocity semi-axes", _axes(analysis.angular_velocity)),
        ("acceleration semi-axes", _axes(analysis.acceleration)),
        ("  normalized to velocity", f"x {analysis.acceleration_normalization:.4g} [s]"),
        ("force semi-axes, unweighted", _axes(analysis.force_unweighted)),
        ("force semi-axes, RMS-scaled", _axes(analysis.force_rms)),
        ("force semi-axes, torque-weighted", _axes(analysis.force_weighted)),
    ]
    if polytope is not None:
        rows.append((f"force polytope ({polytope.method})",
                     f"{len(polytope.vertices)} vertices, volume {polytope.volume:.4g} [N^3]"
                     + ("  CLIPPED" if polytope.clipped else "")
                     + (f"  flat ({polytope.dimension}-D)" if polytope.dimension < 3 else "")))
    elif polytope_reason:
        rows.append(("force polytope", "unavailable"))
    if analysis.unavailable_reason:
        rows.append(("note", analysis.unavailable_reason))
    return rows


def format_table(rows: list[tuple[str, str]]) -> str:
    """Two aligned columns, one row per line."""
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


def short_text(analysis: CapabilityAnalysis) -> str:
    """Two lines for a TEXT marker: the translational measures and a singularity flag."""
    m = analysis.manipulability
    first = f"w={m.yoshikawa:.3g} m^3  cond={m.condition:.3g}  sigma_min={m.sigma_min:.3g} m/rad"
    flags = [f"isotropy={m.isotropy:.2f}"]
    if m.singular:
        flags.append("SINGULAR: force axes capped")
    if analysis.force_weighted is None:
        flags.append("no torque limits")
    return first + "\n" + "  ".join(flags)
