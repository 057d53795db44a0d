"""Frames that are not in the robot model, looked up in TF as `base <- frame` for twist and waypoint inputs.

Nothing exists until the first frame that the model does not know: a node whose inputs only name model frames
("" / base / world / links) has no TF subscription, node or thread at all.

Backends, chosen when the first unknown frame arrives:
- tf2_ros, wherever it is installed (any real ROS 2 install): `tf2_ros.Buffer` filled by a
  `tf2_ros.TransformListener`, `lookup_transform(base, frame, Time())`, i.e. the newest transform;
- otherwise (the wheel venv: tf2_ros has no wheel) a small listener of our own on /tf and /tf_static (the
  vendored tf2_msgs, tf2's QoS) feeding `core.frames.TransformTree`. It keeps only the newest transform per
  child frame and does not interpolate in time, so it serves static frames exactly and slowly moving frames
  well; a fast-moving frame is only as fresh as its last /tf message.
Both run on a side node `<node>_tf_listener` spun by a thread of its own, so a lookup may wait for data
without blocking the node's executor.

The first lookup right after the listener starts cannot have data yet (/tf_static arrives after discovery,
0.2-4 s). A node says how long its first lookups may wait (`first_lookup_wait`, counted from the listener's
start): path_ik_node waits a few seconds inside its goal; servo_node never blocks its control loop (0 s), and
its status reads "waiting for TF (listener started 0.05 s ago): ..." until the transform arrives. Every failure
raises `TransformLookupError` carrying tf2's text (or text worded like it).
"""
from __future__ import annotations

import threading
import time

import pinocchio as pin
from geometry_msgs.msg import Transform
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.time import Time

from robokin_ros.core.errors import InvalidInputError, UnknownFrameError
from robokin_ros.core.frames import TransformLookupError, TransformTree, transform_from_translation_quaternion
from robokin_ros.core.robot import RobotModel
from robokin_ros.ros.runtime import SideNode

TF_TOPIC, TF_STATIC_TOPIC = "/tf", "/tf_static"
# tf2_ros TransformListener's profiles: depth 100; /tf_static transient local so a late listener gets every
# static transform published before it existed.
TF_QOS = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, durability=DurabilityPolicy.VOLATILE,
                    reliability=ReliabilityPolicy.RELIABLE)
TF_STATIC_QOS = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                           reliability=ReliabilityPolicy.RELIABLE)
# A lookup that fails this soon after the listener started is reported as "waiting for TF" (discovery of a
# late joiner takes up to ~4 s).
STARTUP_GRACE = 5.0          # [s]


def transform_from_msg(msg: Transform, child: str = "") -> pin.SE3:
    """geometry_msgs/Transform -> `parent_T_child`; InvalidInputError for NaN or a denormalized quaternion."""
    t, q = msg.translation, msg.rotation
    return transform_from_translation_quaternion((t.x, t.y, t.z), (q.x, q.y, q.z, q.w), child)


class _Tf2RosListener:
    """tf2_ros's Buffer and TransformListener (a real ROS 2 install)."""

    def __init__(self, node: Node, tf2_ros) -> None:
        self._tf2_ros = tf2_ros
        self._buffer = tf2_ros.Buffer()
        self._listener = tf2_ros.TransformListener(self._buffer, node)

    def lookup(self, target: str, source: str, timeout: float) -> pin.SE3:
        try:
            msg = self._buffer.lookup_transform(target, source, Time(), timeout=Duration(seconds=timeout))
        except self._tf2_ros.TransformException as err:
            raise TransformLookupError(str(err), target, source) from None
        return transform_from_msg(msg.transform, source)


class _TopicListener:
    """/tf and /tf_static into a `TransformTree` (the newest transform per child frame)."""

    def __init__(self, node: Node) -> None:
        from tf2_msgs.msg import TFMessage  # vendored in the wheel venv; part of every ROS 2 install

        self._tree = TransformTree()
        self._new_data = threading.Condition()
        self._logger = node.get_logger()
        node.create_subscription(TFMessage, TF_TOPIC, self._on_tf, TF_QOS)
        node.create_subscription(TFMessage, TF_STATIC_TOPIC, self._on_tf, TF_STATIC_QOS)

    def _on_tf(self, msg) -> None:
        for stamped in msg.transforms:
            try:
                parent_T_child = transform_from_msg(stamped.transform, stamped.child_frame_id)
                self._tree.set_transform(stamped.header.frame_id, stamped.child_frame_id, parent_T_child)
            except InvalidInputError as err:     # tf2 also ignores such a transform, with an error log
                self._logger.error(f"ignoring a transform: {err}", throttle_duration_sec=5.0)
        with self._new_data:
            self._new_data.notify_all()

    def lookup(self, target: str, source: str, timeout: float) -> pin.SE3:
        deadline = time.monotonic() + timeout
        with self._new_data:
            while True:
                try:
                    return self._tree.lookup(target, source)
                except TransformLookupError:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0.0:
                        raise
                    self._new_data.wait(remaining)


class TfFrames:
    """`base_T_frame` of frames outside the robot model, from TF; see the module docstring.

    Args:
        node: the owning node (its name, namespace and context name the side node).
        robot: decides which frames are model frames (`RobotModel.resolve_frame`) and names the base.
        first_lookup_wait: how long lookups may wait for data, counted from the listener's start [s].
    """

    def __init__(self, node: Node, robot: RobotModel, first_lookup_wait: float = 0.0) -> None:
        self._owner, self._robot, self._first_lookup_wait = node, robot, first_lookup_wait
        self._model_frames: set[str] = set()
        self._lock = threading.Lock()
        self._side: SideNode | None = None
        self._listener: _Tf2RosListener | _TopicListener | None = None
        self._started_at = 0.0

    @property
    def listening(self) -> bool:
        """True once the first frame outside the model has started the TF listener."""
        return self._listener is not None

    def pose_if_external(self, frame: str) -> pin.SE3 | None:
        """None for a model frame (the core resolves it itself); `base_T_frame` from TF for any other frame.

        Raises:
            TransformLookupError: the frame is neither in the model nor available in TF (tf2's text).
        """
        if frame in self._model_frames:
            return None
        try:
            self._robot.resolve_frame(frame)
        except UnknownFrameError:
            return self.lookup(frame)
        self._model_frames.add(frame)
        return None

    def lookup(self, frame: str) -> pin.SE3:
        """`base_T_frame` of a frame outside the model, from TF (newest data); starts the listener on first use.

        Raises:
            TransformLookupError: naming the frame, with tf2's error text ("waiting for TF" shortly after the
                listener started).
        """
        listener = self._listener or self._start()
        base, source = self._robot.base_frame, frame.lstrip("/")
        age = time.monotonic() - self._started_at
        try:
            return listener.lookup(base, source, max(0.0, self._first_lookup_wait - age))
        except TransformLookupError as err:
            age = time.monotonic() - self._started_at
            # a node that waited for TF has given it its chance; one that never waits reports the start-up
            starting = age < (self._first_lookup_wait or STARTUP_GRACE)
            why = (f"waiting for TF (listener started {age:.2f} s ago)" if starting
                   else f"TF has no transform {base} <- {source}")
            raise TransformLookupError(f"frame '{source}' is not in the robot model; {why}: {err}",
                                       base, source) from None

    def _start(self) -> _Tf2RosListener | _TopicListener:
        with self._lock:             # path_ik_node plans on several threads
            if self._listener is None:
                side = SideNode(self._owner, "tf_listener")
                try:
                    import tf2_ros
                except ImportError:
                    listener = _TopicListener(side.node)
                    kind = "own /tf listener (tf2_ros is not installed)"
                else:
                    listener = _Tf2RosListener(side.node, tf2_ros)
                    kind = "tf2_ros"
                side.start()
                self._side, self._started_at, self._listener = side, time.monotonic(), listener
                self._owner.get_logger().info(f"listening to TF for frames outside the robot model ({kind})")
            return self._listener

    def close(self) -> None:
        """Stop the listener's thread and destroy its node (nothing to do if it never started)."""
        with self._lock:
            if self._side is not None:
                self._side.close()
                self._side, self._listener = None, None
