"""The servo's collision picture as visualization_msgs/MarkerArray (for RViz): the nearest pair's witness points
joined by a line with its distance, and the scene objects; on a robot with several tips, each tip's axes and name
(`tip_markers`), so the pair's text reads against the hands it names."""
from __future__ import annotations

import math
from collections.abc import Sequence

import pinocchio as pin
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from robokin_ros.core.collision.clearance import Clearance
from robokin_ros.core.collision.scene import SceneObject

NAMESPACE = "robokin_collision"
SCENE_NAMESPACE = "robokin_scene"
TIPS_NAMESPACE = "robokin_tips"
TIP_AXIS_LENGTH = 0.08          # [m]
_PRIMITIVES = {"box": Marker.CUBE, "sphere": Marker.SPHERE, "cylinder": Marker.CYLINDER}
NEAR = (1.0, 0.2, 0.1)          # colour of a pair within the warning distance
CLEAR = (0.2, 0.8, 0.3)


def collision_markers(clearance: Clearance | None, objects: tuple[SceneObject, ...], warning_distance: float,
                      frame_id: str, stamp) -> MarkerArray:
    """Markers in `frame_id` (the base frame): DELETEALL, the nearest pair (red within `warning_distance` [m],
    green beyond) with a text giving the pair and the distance in mm, and one marker per primitive scene object
    (mesh objects are named by their text only)."""
    markers = [Marker(action=Marker.DELETEALL, ns=NAMESPACE), Marker(action=Marker.DELETEALL, ns=SCENE_NAMESPACE)]
    if clearance is not None and math.isfinite(clearance.distance) and clearance.names[0]:
        rgb = NEAR if clearance.distance <= warning_distance else CLEAR
        line = _marker(NAMESPACE, 1, Marker.LINE_LIST, frame_id, stamp, rgb)
        line.scale.x = 0.003
        line.points = [_point(clearance.point_a), _point(clearance.point_b)]
        text = _marker(NAMESPACE, 2, Marker.TEXT_VIEW_FACING, frame_id, stamp, rgb)
        middle = 0.5 * (clearance.point_a + clearance.point_b)
        text.pose.position = _point(middle)
        text.pose.position.z += 0.03
        text.scale.z = 0.025
        text.text = f"{clearance.names[0]} - {clearance.names[1]}: {clearance.distance * 1e3:.1f} mm"
        markers += [line, text]
    for index, obj in enumerate(objects, start=1):
        kind = _PRIMITIVES.get(obj.shape)
        if kind is None:
            continue
        m = _marker(SCENE_NAMESPACE, index, kind, frame_id, stamp, (0.5, 0.5, 0.6), alpha=0.5)
        m.pose.position = _point(obj.position)
        m.pose.orientation.x, m.pose.orientation.y, m.pose.orientation.z, m.pose.orientation.w = obj.orientation
        if obj.shape == "box":
            m.scale.x, m.scale.y, m.scale.z = obj.dimensions
        elif obj.shape == "sphere":
            m.scale.x = m.scale.y = m.scale.z = 2.0 * obj.dimensions[0]
        else:                                   # cylinder: [height, radius], axis along z
            m.scale.x = m.scale.y = 2.0 * obj.dimensions[1]
            m.scale.z = obj.dimensions[0]
        m.text = obj.id
        markers.append(m)
    return MarkerArray(markers=markers)


def tip_markers(tips: Sequence[tuple[str, pin.SE3]], frame_id: str, stamp) -> list[Marker]:
    """Per tip (name, base_T_tip): its x, y, z axes (red, green, blue lines) and its name above it, in `frame_id`.
    Appended after `collision_markers`' DELETEALL of its own namespaces, so a DELETEALL of this one leads them."""
    markers = [Marker(action=Marker.DELETEALL, ns=TIPS_NAMESPACE)]
    for index, (name, pose) in enumerate(tips):
        origin = pose.translation
        axes = _marker(TIPS_NAMESPACE, 2 * index + 1, Marker.LINE_LIST, frame_id, stamp, (1.0, 1.0, 1.0))
        axes.scale.x = 0.005
        for column, rgb in enumerate(((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))):
            axes.points += [_point(origin), _point(origin + TIP_AXIS_LENGTH * pose.rotation[:, column])]
            axes.colors += [ColorRGBA(r=rgb[0], g=rgb[1], b=rgb[2], a=1.0)] * 2
        label = _marker(TIPS_NAMESPACE, 2 * index + 2, Marker.TEXT_VIEW_FACING, frame_id, stamp, (1.0, 1.0, 1.0))
        label.pose.position = _point(origin)
        label.pose.position.z += 0.05
        label.scale.z = 0.025
        label.text = name
        markers += [axes, label]
    return markers


def _marker(ns: str, marker_id: int, kind: int, frame_id: str, stamp, rgb, alpha: float = 1.0) -> Marker:
    m = Marker(ns=ns, id=marker_id, type=kind, action=Marker.ADD)
    m.header.frame_id, m.header.stamp = frame_id, stamp
    m.pose.orientation.w = 1.0
    m.color.r, m.color.g, m.color.b, m.color.a = (*rgb, alpha)
    return m


def _point(p) -> Point:
    return Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))
