"""The servo's collision picture as visualization_msgs/MarkerArray (for RViz): the nearest pair's witness points
joined by a line with its distance, and the scene objects."""
from __future__ import annotations

import math

from geometry_msgs.msg import Point
from visualization_msgs.msg import Marker, MarkerArray

from robokin_ros.core.collision.clearance import Clearance
from robokin_ros.core.collision.scene import SceneObject

NAMESPACE = "robokin_collision"
SCENE_NAMESPACE = "robokin_scene"
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


def _marker(ns: str, marker_id: int, kind: int, frame_id: str, stamp, rgb, alpha: float = 1.0) -> Marker:
    m = Marker(ns=ns, id=marker_id, type=kind, action=Marker.ADD)
    m.header.frame_id, m.header.stamp = frame_id, stamp
    m.pose.orientation.w = 1.0
    m.color.r, m.color.g, m.color.b, m.color.a = (*rgb, alpha)
    return m


def _point(p) -> Point:
    return Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))
