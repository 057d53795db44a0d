"""Capability results -> visualization_msgs/MarkerArray (ellipsoid SPHEREs, polytope TRIANGLE_LIST, TEXT).

RViz draws a SPHERE with `scale` = its three DIAMETERS along the marker's own axes, so each ellipsoid
marker has orientation = the rotation whose columns are the principal directions (det +1) and
scale = 2 * semi_axes * display scale. Every extent is clamped to `max_marker_size` [m] (and floored at
MIN_EXTENT, RViz rejects a zero scale); a clamped, capped or zero axis turns the marker `color.singular`
and is listed in the TEXT marker, so a singular configuration is visible without producing NaN.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pinocchio as pin
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from robokin_ros.core.capability.analysis import CapabilityAnalysis
from robokin_ros.core.capability.config import SHOW_ITEMS, CapabilityConfig
from robokin_ros.core.capability.held_capability import HeldObjectAnalysis
from robokin_ros.core.capability.polytope import ForcePolytope
from robokin_ros.core.capability.report import (EllipsoidDisplay, ShownEllipsoid, ellipsoid_display,
                                                polytope_display, short_text, shown_ellipsoids)

SEGMENT_WIDTH = 0.01     # [m] line width of a one-joint (segment) polytope
TEXT_HEIGHT = 0.04       # [m]
TEXT_LIFT = 0.25         # [m] text above the tool
TEXT_COLOUR = (1.0, 1.0, 1.0, 1.0)
_IDS = {item: i for i, item in enumerate(SHOW_ITEMS)}
HELD_OBJECT_NAMESPACE = "held_object"    # marker ns prefix of the held object's capability


@dataclass(frozen=True)
class _Style:
    frame_id: str
    stamp: Time
    cfg: CapabilityConfig | None
    namespace: str = ""      # "" (a single-tip robot): ns = the item; else ns = namespace/item


class _Drawn(NamedTuple):
    marker: Marker
    flagged: bool        # capped, zero or clamped somewhere: listed in the text marker


def _color(rgba) -> ColorRGBA:
    return ColorRGBA(r=float(rgba[0]), g=float(rgba[1]), b=float(rgba[2]), a=float(rgba[3]))


def _base(item: str, kind: int, style: _Style, position: np.ndarray) -> Marker:
    marker = Marker(ns=f"{style.namespace}/{item}" if style.namespace else item, id=_IDS[item], type=kind,
                    action=Marker.ADD)
    marker.header.frame_id, marker.header.stamp = style.frame_id, style.stamp
    marker.pose.position.x, marker.pose.position.y, marker.pose.position.z = (float(p) for p in position)
    marker.pose.orientation.w = 1.0
    return marker


def _ellipsoid_marker(item: str, shown: EllipsoidDisplay, position: np.ndarray, style: _Style) -> _Drawn:
    """SPHERE marker of a shown ellipsoid centred at `position` [m]."""
    marker = _base(item, Marker.SPHERE, style, position)
    marker.scale.x, marker.scale.y, marker.scale.z = (float(d) for d in shown.diameters)
    x, y, z, w = pin.Quaternion(shown.rotation).normalized().coeffs()
    marker.pose.orientation.x, marker.pose.orientation.y = float(x), float(y)
    marker.pose.orientation.z, marker.pose.orientation.w = float(z), float(w)
    marker.color = _color(shown.rgba)
    return _Drawn(marker, shown.flagged)


def _polytope_marker(polytope: ForcePolytope, position: np.ndarray, style: _Style) -> _Drawn:
    """TRIANGLE_LIST of the hull (LINE_LIST for a segment), scaled by force_scale [m/N] at `position`."""
    shown = polytope_display(polytope, style.cfg)
    # The points are relative to the marker pose, so the marker sits at the origin of the frame.
    if polytope.dimension >= 2:
        marker = _base("polytope", Marker.TRIANGLE_LIST, style, np.zeros(3))
        corners = shown.points[shown.triangles].reshape(-1, 3) + position
        marker.scale.x = marker.scale.y = marker.scale.z = 1.0
    else:
        marker = _base("polytope", Marker.LINE_LIST, style, np.zeros(3))
        corners = shown.points[[0, -1]] + position
        marker.scale.x = SEGMENT_WIDTH
    marker.points = [Point(x=float(a), y=float(b), z=float(c)) for a, b, c in corners]
    marker.color = _color(shown.rgba)
    return _Drawn(marker, shown.flagged)


def _text_marker(analysis: CapabilityAnalysis | HeldObjectAnalysis, flagged: list[str], style: _Style) -> Marker:
    """The measures above the tool, and which markers are flagged."""
    text = _base("manipulability", Marker.TEXT_VIEW_FACING, style, analysis.tool_position + [0.0, 0.0, TEXT_LIFT])
    text.scale.z = TEXT_HEIGHT
    text.color = _color(style.cfg.color_singular if analysis.singular else TEXT_COLOUR)
    text.text = short_text(analysis) + (f"\nflagged (capped/zero/clamped): {', '.join(flagged)}" if flagged else "")
    if style.namespace:
        text.text = f"{style.namespace}\n{text.text}"
    return text


def _deleted(item: str, style: _Style) -> Marker:
    marker = _base(item, Marker.SPHERE, style, np.zeros(3))
    marker.action = Marker.DELETE
    return marker


def _drawn(item: str, analysis: CapabilityAnalysis | HeldObjectAnalysis, ellipsoids: dict[str, ShownEllipsoid],
           polytope: ForcePolytope | None, style: _Style) -> _Drawn | None:
    """The marker of one ellipsoid or polytope item; None when it is unavailable (no torque limits)."""
    at = analysis.tool_position
    if item == "polytope":
        return None if polytope is None else _polytope_marker(polytope, at, style)
    shown = ellipsoid_display(ellipsoids[item], style.cfg)
    return None if shown is None else _ellipsoid_marker(item, shown, at, style)


def capability_markers(analysis: CapabilityAnalysis | HeldObjectAnalysis, polytope: ForcePolytope | None,
                       show: tuple[str, ...], cfg: CapabilityConfig, frame_id: str, stamp: Time,
                       namespace: str = "") -> MarkerArray:
    """One marker per SHOW_ITEMS entry: ADD for shown and available items, DELETE for the rest.

    `namespace` prefixes every marker's ns (a tip's name, or HELD_OBJECT_NAMESPACE), so several tips' markers
    live side by side; "" keeps the single-tip names (ns = the item).
    """
    style, ellipsoids = _Style(frame_id, stamp, cfg, namespace), shown_ellipsoids(analysis, cfg)
    markers, flagged = [], []
    for item in SHOW_ITEMS:
        drawn = (_drawn(item, analysis, ellipsoids, polytope, style) if item in show and item != "manipulability"
                 else None)
        if drawn is not None and drawn.flagged:
            flagged.append(item)
        markers.append(_deleted(item, style) if drawn is None else drawn.marker)
    if "manipulability" in show:
        markers[_IDS["manipulability"]] = _text_marker(analysis, flagged, style)
    return MarkerArray(markers=markers)


def deleted_markers(namespace: str, frame_id: str, stamp: Time) -> MarkerArray:
    """DELETE for every item of a namespace (the held object's, when it is switched off)."""
    style = _Style(frame_id, stamp, None, namespace)
    return MarkerArray(markers=[_deleted(item, style) for item in SHOW_ITEMS])
