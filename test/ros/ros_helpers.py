"""Waiting helpers for ROS tests (importable from test files: `from ros_helpers import spin_until`)."""
import time

DISCOVERY_TIMEOUT = 15.0


def spin_until(executor, predicate, timeout_s: float = DISCOVERY_TIMEOUT) -> bool:
    """Spin `executor` until `predicate()` holds or `timeout_s` passes; the final predicate value."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end and not predicate():
        executor.spin_once(timeout_sec=0.005)
    return bool(predicate())


def spin_for(executor, seconds: float) -> None:
    """Spin for a duration (to observe behaviour over time, not to wait for discovery)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.002)


def pose_stamped(position, quat_xyzw=(0.0, 0.0, 0.0, 1.0), frame=""):
    """geometry_msgs/PoseStamped from a position [m], a quaternion (x, y, z, w) and a frame id."""
    from geometry_msgs.msg import PoseStamped

    msg = PoseStamped()
    msg.header.frame_id = frame
    msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = (float(v) for v in position)
    o = msg.pose.orientation
    o.x, o.y, o.z, o.w = (float(v) for v in quat_xyzw)
    return msg


def se3_pose_stamped(T, frame: str = "", stamp: float = 0.0):
    """PoseStamped of a pin.SE3 in `frame`, stamped `stamp` [s] (0 = unstamped)."""
    import pinocchio as pin

    q = pin.Quaternion(T.rotation)
    msg = pose_stamped(T.translation, (q.x, q.y, q.z, q.w), frame)
    if stamp:
        msg.header.stamp.sec, msg.header.stamp.nanosec = int(stamp), int(round((stamp % 1.0) * 1e9)) % 10**9
    return msg
