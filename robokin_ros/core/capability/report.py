"""Capability results as words, tables and display items: one place decides names, units, flags, scales and
colours for every front end (RViz markers, the capability_view picture, the demo)."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from robokin_ros.core.capability.analysis import CapabilityAnalysis, Ellipsoid
from robokin_ros.core.capability.config import CapabilityConfig
from robokin_ros.core.capability.held_capability import HeldObjectAnalysis
from robokin_ros.core.capability.polytope import ForcePolytope


class Row(NamedTuple):
    """One line of the measures table; the unit is inside `value`."""

    name: str
    value: str


class ShownEllipsoid(NamedTuple):
    """An ellipsoid as the front ends draw it."""

    ellipsoid: Ellipsoid | None    # None: unavailable (no torque limits)
    scale: float                   # display length per unit of the ellipsoid [m per its unit]
    rgba: tuple[float, ...]        # colour [0..1 each]


def shown_ellipsoids(analysis: CapabilityAnalysis | HeldObjectAnalysis,
                     cfg: CapabilityConfig) -> dict[str, ShownEllipsoid]:
    """Every ellipsoid `show` item (a SHOW_ITEMS name) with its display scale and colour from `cfg` (a held object
    has no acceleration ellipsoid: that item is unavailable)."""
    return {
        "velocity": ShownEllipsoid(analysis.velocity, cfg.velocity_scale, cfg.color_velocity),
        "acceleration": ShownEllipsoid(analysis.acceleration_normalized, cfg.acceleration_scale,
                                       cfg.color_acceleration),
        "force_unweighted": ShownEllipsoid(analysis.force_unweighted, cfg.unit_force_scale, cfg.color_force),
        "force_rms": ShownEllipsoid(analysis.force_rms, cfg.force_scale, cfg.color_force),
        "force_weighted": ShownEllipsoid(analysis.force_weighted, cfg.force_scale, cfg.color_force),
    }


MIN_EXTENT = 1e-4        # [m] smallest drawn extent: a zero axis stays visible (and RViz rejects a zero scale)


class EllipsoidDisplay(NamedTuple):
    """An ellipsoid as drawn: a unit sphere scaled to `diameters` along the columns of `rotation`."""

    diameters: np.ndarray          # (3,) [m] 2 * semi-axes * display scale, clamped to [MIN_EXTENT, max_marker_size]
    rotation: np.ndarray           # (3, 3) columns = principal directions (det +1), base axes
    rgba: tuple[float, ...]        # the item's colour, or color_singular when flagged
    flagged: bool                  # an axis is capped, zero or clamped for display


class PolytopeDisplay(NamedTuple):
    """The force polytope as drawn: hull points relative to the tool [m] and its triangles."""

    points: np.ndarray             # (k, 3) [m] force_scale * vertices, pulled in to max_marker_size / 2
    triangles: np.ndarray          # (m, 3) indices into points (empty for a segment)
    rgba: tuple[float, ...]
    flagged: bool                  # clipped, pulled in, or flat


def ellipsoid_display(shown: ShownEllipsoid, cfg: CapabilityConfig) -> EllipsoidDisplay | None:
    """How to draw one shown ellipsoid; None when it is unavailable (no torque limits)."""
    if shown.ellipsoid is None:
        return None
    e = shown.ellipsoid
    raw = 2.0 * shown.scale * e.semi_axes                                 # (3,) diameters [m]
    diameters = np.clip(raw, MIN_EXTENT, cfg.max_marker_size)
    flagged = bool(e.capped.any() or e.degenerate.any() or (diameters != raw).any())
    return EllipsoidDisplay(diameters, e.axes, cfg.color_singular if flagged else shown.rgba, flagged)


def polytope_display(polytope: ForcePolytope, cfg: CapabilityConfig) -> PolytopeDisplay:
    """How to draw the force polytope at `cfg.force_scale` [m/N]; far vertices are pulled in to the display cap."""
    points = cfg.force_scale * polytope.vertices                          # (k, 3) [m]
    radius = np.linalg.norm(points, axis=1, keepdims=True)
    limit = 0.5 * cfg.max_marker_size
    too_far = radius[:, 0] > limit
    points[too_far] *= limit / radius[too_far]
    flagged = bool(polytope.clipped or too_far.any() or polytope.dimension < 3)
    return PolytopeDisplay(points, polytope.triangles, cfg.color_singular if polytope.clipped else
                           cfg.color_polytope, flagged)


def _axes(e: Ellipsoid | None) -> str:
    if e is None:
        return "unavailable"
    flags = "".join("*" if c else ("0" if d else "") for c, d in zip(e.capped, e.degenerate))
    text = ", ".join(f"{s:.4g}" for s in e.semi_axes) + f" [{e.unit}]"
    return text + (f"  ({flags.count('*')} capped, {flags.count('0')} zero)" if flags else "")


def measure_rows(analysis: CapabilityAnalysis, polytope: ForcePolytope | None = None,
                 polytope_reason: str = "") -> list[Row]:
    """One row per measure and ellipsoid; units inside the value."""
    m, r = analysis.manipulability, analysis.angular_manipulability
    rows = [
        Row("yoshikawa sqrt(det JvJv^T)", f"{m.yoshikawa:.4g} [m^3]"),
        Row("condition number (Jv)", f"{m.condition:.4g}"),
        Row("sigma_min / sigma_max (Jv)", f"{m.sigma_min:.4g} / {m.sigma_max:.4g} [m/rad]"),
        Row("isotropy (Jv)", f"{m.isotropy:.3f}" + ("  SINGULAR" if m.singular else "")),
        Row("condition / sigma_min (Jw)", f"{r.condition:.4g} / {r.sigma_min:.4g} [rad/rad]"),
        Row("velocity semi-axes", _axes(analysis.velocity)),
        Row("angular velocity semi-axes", _axes(analysis.angular_velocity)),
        Row("acceleration semi-axes", _axes(analysis.acceleration)),
        Row("  normalized to velocity", f"x {analysis.acceleration_normalization:.4g} [s]"),
        Row("force semi-axes, unweighted", _axes(analysis.force_unweighted)),
        Row("force semi-axes, RMS-scaled", _axes(analysis.force_rms)),
        Row("force semi-axes, torque-weighted", _axes(analysis.force_weighted)),
    ]
    if polytope is not None:
        rows.append(Row(f"force polytope ({polytope.method})",
                        f"{len(polytope.vertices)} vertices, volume {polytope.volume:.4g} [N^3]"
                        + ("  CLIPPED" if polytope.clipped else "")
                        + (f"  flat ({polytope.dimension}-D)" if polytope.dimension < 3 else "")))
    elif polytope_reason:
        rows.append(Row("force polytope", "unavailable"))
    if analysis.unavailable_reason:
        rows.append(Row("note", analysis.unavailable_reason))
    return rows


def held_object_rows(held: HeldObjectAnalysis) -> list[Row]:
    """One row per measure and ellipsoid of a held object; units inside the value."""
    m = held.manipulability
    n_internal = held.internal_wrenches.shape[1]
    rows = [
        Row("held by", ", ".join(held.tips)),
        Row("object origin", ", ".join(f"{p:.4g}" for p in held.object_position) + " [m]"),
        Row("closure-consistent joint motions", f"{held.closure_velocities.shape[1]} of {len(held.positions)}"),
        Row("internal wrenches (null space of G)", f"{n_internal}"),
        Row("condition number (object, linear)", f"{m.condition:.4g}"),
        Row("isotropy (object, linear)", f"{m.isotropy:.3f}" + ("  SINGULAR" if m.singular else "")),
        Row("velocity semi-axes", _axes(held.velocity)),
        Row("  within joint velocity limits", _axes(held.velocity_limited)),
        Row("angular velocity semi-axes", _axes(held.angular_velocity)),
        Row("force semi-axes, unweighted", _axes(held.force_unweighted)),
        Row("force semi-axes, RMS-scaled", _axes(held.force_rms)),
        Row("force semi-axes, torque-weighted", _axes(held.force_weighted)),
    ]
    if held.unavailable_reason:
        rows.append(Row("note", held.unavailable_reason))
    return rows


def format_table(rows: list[Row]) -> str:
    """Two aligned columns, one row per line."""
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


def short_text(analysis: CapabilityAnalysis | HeldObjectAnalysis) -> str:
    """Two lines for a TEXT marker: the translational measures and a singularity flag."""
    m = analysis.manipulability
    first = f"w={m.yoshikawa:.3g} m^3  cond={m.condition:.3g}  sigma_min={m.sigma_min:.3g} m/rad"
    flags = [f"isotropy={m.isotropy:.2f}"]
    if m.singular:
        flags.append("SINGULAR: force axes capped")
    if analysis.force_weighted is None:
        flags.append("no torque limits")
    return first + "\n" + "  ".join(flags)
