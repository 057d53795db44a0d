"""The capability overlays at one configuration: which ellipsoids and polytope to draw, and the measures panel.

All numbers come from `core.capability` (analysis, polytope, report, directional); this module only picks what is
switched on and adds the two directional figures the studio shows: the largest force (the polytope's support along
the direction) and the largest tool speed within the joint velocity limits.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from robokin_ros.core.capability.analysis import CapabilityAnalysis, analyze, torque_limits_of
from robokin_ros.core.capability.config import CapabilityConfig
from robokin_ros.core.capability.directional import max_tool_speed, unit_direction
from robokin_ros.core.capability.per_tip import analyze_tip
from robokin_ros.core.capability.polytope import ForcePolytope, max_force, tool_force_polytope
from robokin_ros.core.capability.report import (EllipsoidDisplay, PolytopeDisplay, Row, ellipsoid_display,
                                                measure_rows, polytope_display, shown_ellipsoids)
from robokin_ros.core.robot import RobotModel

ELLIPSOID_ITEMS = ("velocity", "acceleration", "force_unweighted", "force_rms", "force_weighted")
OVERLAY_ITEMS = ELLIPSOID_ITEMS + ("polytope",)
PANEL_ROWS = ("yoshikawa", "condition number", "sigma_min / sigma_max", "isotropy", "force polytope", "note")
LABELS = {
    "velocity": "Velocity ellipsoid",
    "acceleration": "Acceleration ellipsoid",
    "force_unweighted": "Force ellipsoid (unit torque)",
    "force_rms": "Force ellipsoid (RMS torque)",
    "force_weighted": "Force ellipsoid (torque-weighted)",
    "polytope": "Force polytope",
}


@dataclass(frozen=True)
class OverlayFrame:
    """Everything the overlays show at one configuration (base frame)."""

    analysis: CapabilityAnalysis
    ellipsoids: dict[str, EllipsoidDisplay]      # shown and available items only
    polytope: ForcePolytope | None               # computed whenever torque limits exist (the STL export needs it)
    polytope_shown: PolytopeDisplay | None       # None when switched off or unavailable
    direction: np.ndarray                        # (3,) unit, base axes
    max_force: float                             # [N] along `direction`, nan without torque limits
    speed_limits: np.ndarray | None              # (n,) joint velocity limits [rad/s | m/s], None if some lack one
    unavailable: dict[str, str] = field(default_factory=dict)   # item -> why it is not drawn

    @functools.cached_property
    def max_speed(self) -> float:
        """[m/s] along `direction`, nan without velocity limits. Computed on first read: the LP costs about half of an
        update's overlays, and only the measures panel (10 Hz) reads it."""
        if self.speed_limits is None:
            return float("nan")
        return max_tool_speed(self.analysis.jacobian[:3], self.speed_limits, self.direction)

    def measures(self) -> list[Row]:
        """The measures panel: the core's table plus the directional figures."""
        d = ", ".join(f"{c:+.2f}" for c in self.direction)
        rows = [row for row in measure_rows(self.analysis, self.polytope) if row.name.startswith(PANEL_ROWS)]
        rows.append(Row(f"largest force along ({d})", "unavailable" if np.isnan(self.max_force)
                        else f"{self.max_force:.4g} [N]"))
        rows.append(Row(f"largest speed along ({d})", "unavailable" if np.isnan(self.max_speed)
                        else f"{self.max_speed:.4g} [m/s]"))
        return rows


class OverlayBuilder:
    """Capability overlays of one robot; the display settings are a CapabilityConfig (the node's parameters)."""

    def __init__(self, robot: RobotModel, config: CapabilityConfig | None = None) -> None:
        self.robot = robot
        self.config = config if config is not None else CapabilityConfig(robot=robot.name)
        self.torque = torque_limits_of(robot, self.config.torque_limits or None)
        limits = robot.limits.velocity
        self._speed_limits = limits if np.isfinite(limits).all() and (limits > 0).all() else None

    def build(self, positions: npt.ArrayLike, shown: frozenset[str] | set[str],
              direction: npt.ArrayLike = (1.0, 0.0, 0.0), tip: str = "") -> OverlayFrame:
        """The overlays switched on in `shown` (OVERLAY_ITEMS names) at `positions`, of `tip` on a robot with several
        tips ("" = the first): over the joints that move that tip (`capability.per_tip`).

        Raises:
            InvalidInputError: positions of the wrong size or with NaN/inf; a zero or non-finite direction; an
                unknown tip.
        """
        cfg = self.config
        d = unit_direction(direction)
        speed_limits = self._speed_limits
        if len(self.robot.tip_frames) > 1:
            analysis = analyze_tip(self.robot, positions, tip or self.robot.tip_frame, self.torque.limits,
                                   self.torque.reason, cfg.singular_sigma)
            if speed_limits is not None:
                speed_limits = speed_limits[analysis.joint_indices]
        else:
            analysis = analyze(self.robot, positions, self.torque.limits, self.torque.reason, cfg.singular_sigma)
        polytope = tool_force_polytope(analysis, cfg.polytope_method, cfg.singular_sigma)
        unavailable: dict[str, str] = {}
        ellipsoids: dict[str, EllipsoidDisplay] = {}
        for item, entry in shown_ellipsoids(analysis, cfg).items():
            if item not in shown:
                continue
            drawn = ellipsoid_display(entry, cfg)
            if drawn is None:
                unavailable[item] = analysis.unavailable_reason
            else:
                ellipsoids[item] = drawn
        polytope_shown = None
        if "polytope" in shown:
            if polytope is None:
                unavailable["polytope"] = analysis.unavailable_reason
            else:
                polytope_shown = polytope_display(polytope, cfg)
        force = max_force(polytope, d) if polytope is not None else float("nan")
        return OverlayFrame(analysis, ellipsoids, polytope, polytope_shown, d, force, speed_limits, unavailable)

    def build_other_tips(self, positions: npt.ArrayLike, shown: frozenset[str] | set[str],
                         direction: npt.ArrayLike = (1.0, 0.0, 0.0)) -> list[OverlayFrame]:
        """`build` for every tip but the first (none on a robot with one tip)."""
        return [self.build(positions, shown, direction, tip) for tip in self.robot.tip_frames[1:]]
