"""Planned tool path and failure point as visualization_msgs/MarkerArray (for RViz); every tip's path on a robot
with several tips."""
from __future__ import annotations

from geometry_msgs.msg import Point
from visualization_msgs.msg import Marker, MarkerArray

from robokin_ros.core.path.result import PathIkResult

NAMESPACE = "robokin_path"


def path_markers(result: PathIkResult, frame_id: str, stamp, spacing: int = 5) -> MarkerArray:
    """Line strip of the planned path (green: solved part, grey: the rest) and a red sphere at a failure."""
    path = result.path
    solved = len(result.positions)
    markers = [Marker(action=Marker.DELETEALL, ns=NAMESPACE)]
    for marker_id, (first, last, rgb) in enumerate(((0, solved, (0.1, 0.8, 0.2)),
                                                    (max(solved - 1, 0), path.size, (0.6, 0.6, 0.6))), start=1):
        if last - first < 2:
            continue
        m = Marker(ns=NAMESPACE, id=marker_id, type=Marker.LINE_STRIP, action=Marker.ADD)
        m.header.frame_id, m.header.stamp = frame_id, stamp
        m.pose.orientation.w = 1.0
        m.scale.x = 0.004
        m.color.r, m.color.g, m.color.b, m.color.a = (*rgb, 1.0)
        idx = list(range(first, last, spacing)) + [last - 1]
        m.points = [Point(x=float(p[0]), y=float(p[1]), z=float(p[2])) for p in path.positions[idx]]
        markers.append(m)
    if result.failure_pose is not None:
        m = Marker(ns=NAMESPACE, id=10, type=Marker.SPHERE, action=Marker.ADD)
        m.header.frame_id, m.header.stamp = frame_id, stamp
        p = result.failure_pose.translation
        m.pose.position.x, m.pose.position.y, m.pose.position.z = float(p[0]), float(p[1]), float(p[2])
        m.pose.orientation.w = 1.0
        m.scale.x = m.scale.y = m.scale.z = 0.02
        m.color.r, m.color.a = 1.0, 1.0
        m.text = result.message
        markers.append(m)
    return MarkerArray(markers=markers)


TIP_COLOURS = ((0.1, 0.8, 0.2), (0.2, 0.4, 1.0), (1.0, 0.6, 0.1), (0.8, 0.2, 0.8))


def tips_path_markers(robot, trajectory, frame_id: str, stamp, spacing: int = 5) -> MarkerArray:
    """Robots with several tips: one line strip per tip through its FK along the planned trajectory (the solved part
    of a failed plan), each tip in its own colour, named by the marker's namespace suffix "/<tip>"."""
    markers = [Marker(action=Marker.DELETEALL, ns=NAMESPACE)]
    if trajectory is None or len(trajectory.positions) < 2:
        return MarkerArray(markers=markers)
    rows = list(range(0, len(trajectory.positions), spacing)) + [len(trajectory.positions) - 1]
    for k, tip in enumerate(robot.tip_frames):
        m = Marker(ns=f"{NAMESPACE}/{tip}", id=1, type=Marker.LINE_STRIP, action=Marker.ADD)
        m.header.frame_id, m.header.stamp = frame_id, stamp
        m.pose.orientation.w = 1.0
        m.scale.x = 0.004
        m.color.r, m.color.g, m.color.b, m.color.a = (*TIP_COLOURS[k % len(TIP_COLOURS)], 1.0)
        points = (robot.fk(trajectory.positions[i], tip).translation for i in rows)
        m.points = [Point(x=float(p[0]), y=float(p[1]), z=float(p[2])) for p in points]
        markers.append(m)
    return MarkerArray(markers=markers)
