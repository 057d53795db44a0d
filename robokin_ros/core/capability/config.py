"""CapabilityConfig: parameters of the capability analysis and its node, validated whole on construction.

The `show` list (which items are drawn) is a string array; `ros/params.py` maps tuple fields to number
arrays, so the node declares `show` itself and validates it with `check_show_items` from this module.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields

from robokin_ros.core.capability.polytope import METHODS as POLYTOPE_METHODS
from robokin_ros.core.errors import ConfigError
from robokin_ros.core.schema import NodeConfig, param_name, spec

SHOW_ITEMS = ("velocity", "acceleration", "force_unweighted", "force_rms", "force_weighted", "polytope",
              "manipulability")
DEFAULT_SHOW = ("velocity", "acceleration", "force_weighted", "polytope", "manipulability")
RGBA = ("r", "g", "b", "a")


def check_show_items(items: Iterable[str]) -> tuple[str, ...]:
    """Validate the `show` list; ConfigError names every unknown item and lists the valid ones."""
    items = tuple(items)
    unknown = [i for i in items if i not in SHOW_ITEMS]
    if unknown:
        raise ConfigError([f"show item '{u}' is unknown; valid items: {list(SHOW_ITEMS)}" for u in unknown],
                          "show parameter")
    return items


def _colour(rgba: tuple[float, ...], name: str, doc: str):
    return spec(rgba, f"RGBA colour of the {doc} [0..1 each]", param=f"color.{name}", ge=0.0, le=1.0)


@dataclass(frozen=True)
class CapabilityConfig(NodeConfig):
    """Everything the capability node needs; the analysis itself reads only the last block."""

    what = "capability configuration"

    joint_topic: str = spec("/joint_states", "measured joint states", read_only=True)
    # --- publishing ---
    rate: float = spec(10.0, "marker publishing rate", unit="Hz", gt=0.0, le=100.0, read_only=True)
    velocity_scale: float = spec(0.3, "marker length per tool speed of a unit joint-velocity norm",
                                 unit="m per m/s", param="ellipsoid_scale.velocity", gt=0.0, le=100.0)
    acceleration_scale: float = spec(0.3, "marker length per unit of the normalized acceleration ellipsoid "
                                     "(normalized to the velocity ellipsoid's largest semi-axis)",
                                     unit="m per m/s", param="ellipsoid_scale.acceleration", gt=0.0, le=100.0)
    force_scale: float = spec(0.001, "marker length per newton (RMS and torque-weighted force ellipsoids "
                              "and the polytope share it, so the inscribed ellipsoid is visible)",
                              unit="m/N", param="ellipsoid_scale.force", gt=0.0, le=10.0)
    unit_force_scale: float = spec(0.02, "marker length per newton of the unweighted force ellipsoid "
                                   "(unit joint-torque norm)", unit="m per N/(N m)",
                                   param="ellipsoid_scale.force_unweighted", gt=0.0, le=10.0)
    max_marker_size: float = spec(2.0, "display cap on any marker extent; capped markers are flagged",
                                  unit="m", gt=0.0, le=100.0)
    color_velocity: tuple = _colour((0.1, 0.5, 1.0, 0.35), "velocity", "velocity ellipsoid")
    color_acceleration: tuple = _colour((0.1, 0.8, 0.2, 0.35), "acceleration", "acceleration ellipsoid")
    color_force: tuple = _colour((1.0, 0.4, 0.0, 0.35), "force", "force ellipsoids")
    color_polytope: tuple = _colour((0.8, 0.1, 0.6, 0.25), "polytope", "force polytope")
    color_singular: tuple = _colour((1.0, 0.0, 0.0, 0.6), "singular", "markers of a singular configuration")
    stl_path: str = spec("/tmp/robokin_force_polytope.stl", "file the export_polytope service writes")
    # --- analysis ---
    torque_limits: tuple = spec((), "per-joint torque limits (empty = URDF effort limits)", unit="N m", gt=0.0,
                                per_joint=True)
    singular_sigma: float = spec(1e-3, "a translational singular value below this is singular: force axes "
                                 "are capped at limit/singular_sigma and flagged", unit="m/rad", gt=0.0, le=1.0)
    held_object: bool = spec(False, "robots with several tips: also draw the capability of an object held rigidly "
                             "by all tips (origin at the tips' centroid; velocity and force ellipsoids through the "
                             "grasp matrix)")
    polytope_method: str = spec("pinv", "pinv: torque-box vertices through pinv(J^T) (an outer set for a "
                                "redundant arm); exact: {F : |J^T F| <= tau_max} (static equilibrium)",
                                choices=POLYTOPE_METHODS)

    def cross_field_problems(self) -> list[str]:
        return [f"{param_name(f)}={getattr(self, f.name)!r} must have {len(RGBA)} entries ({', '.join(RGBA)})"
                for f in fields(self) if f.name.startswith("color_") and len(getattr(self, f.name)) != len(RGBA)]
