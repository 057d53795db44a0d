"""Messages <-> core types, pure functions: the only servo code that knows message layouts.

Hot-path notes: array fields are assigned as `array.array('d')` (rclpy's fast path, ~0.3 us per field);
`trajectory_msg` can refill a previous message of the same size instead of building a new one.
"""
from __future__ import annotations

import array
from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

import numpy as np
import pinocchio as pin
from builtin_interfaces.msg import Duration, Time
from control_msgs.msg import JointJog
from geometry_msgs.msg import PoseStamped, TransformStamped, TwistStamped, WrenchStamped
from moveit_msgs.msg import ServoStatus as MoveItStatusMsg
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robokin_interfaces.msg import SceneObject as SceneObjectMsg
from robokin_interfaces.msg import ServoStatus as ServoStatusMsg
from robokin_ros.core.collision.scene_change import SceneChange
from robokin_ros.core.errors import InvalidInputError, UnknownJointError
from robokin_ros.core.servo.joint_jog import JointJogCommand
from robokin_ros.core.servo.pose_tracking import PoseTarget
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.tick_clock import WatchdogFigures
from robokin_ros.core.servo.types import JointMeasurement, TrajectoryWindow, TwistCommand
from robokin_ros.core.sim.trajectory_follower import TrajectoryPoints
from robokin_ros.core.validation import check_vector


def _doubles(values: np.ndarray) -> array.array:
    out = array.array("d")
    out.frombytes(np.ascontiguousarray(values, dtype=np.float64).tobytes())
    return out


def duration_msg(seconds: float) -> Duration:
    """Seconds -> builtin_interfaces/Duration (rounded to the nanosecond)."""
    total = int(round(seconds * 1e9))
    return Duration(sec=total // 1_000_000_000, nanosec=total % 1_000_000_000)


def time_msg(nanoseconds: int) -> Time:
    """A time in integer nanoseconds -> builtin_interfaces/Time."""
    return Time(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)


def duration_seconds(msg: Duration) -> float:
    """builtin_interfaces/Duration -> seconds. A Time is a stamp: `time_nanoseconds` (core/stamps.py)."""
    return msg.sec + msg.nanosec * 1e-9


# ---- JointState <-> JointMeasurement ---------------------------------------------------------------
def concerns_chain(msg: JointState, chain_joints: frozenset[str]) -> bool:
    """False for a JointState naming none of the chain's joints: another device's (a gripper's) states on the
    same topic, to be ignored rather than rejected, so they cannot displace the arm's latest state."""
    return not chain_joints.isdisjoint(msg.name)


def time_nanoseconds(msg: Time) -> int:
    """builtin_interfaces/Time -> integer nanoseconds (0 for an unset stamp): how stamps travel (core/stamps.py)."""
    return msg.sec * 1_000_000_000 + msg.nanosec


@lru_cache(maxsize=16)
def _reorder_index(message_names: tuple[str, ...], joint_names: tuple[str, ...]) -> np.ndarray:
    where = {name: i for i, name in enumerate(message_names)}
    if len(where) != len(message_names):
        # which of the values is the joint's is unknowable: taking the last one moved the arm to a phantom
        counts = {name: message_names.count(name) for name in message_names}
        repeated = ", ".join(f"'{name}' {'twice' if n == 2 else f'{n} times'}" for name, n in counts.items() if n > 1)
        raise InvalidInputError(f"joint state names {repeated}: refused, which value is the joint's is ambiguous; "
                                f"it names {list(message_names)}")
    missing = [name for name in joint_names if name not in where]
    if missing:
        raise InvalidInputError(f"joint state lacks joints {missing} of the chain {list(joint_names)}; "
                                f"it names {list(message_names)}")
    return np.array([where[name] for name in joint_names], dtype=np.intp)


def measurement_from_joint_state(msg: JointState, joint_names: tuple[str, ...],
                                 received_at: float) -> JointMeasurement:
    """Pick the chain's joints out of a JointState by name (extra joints are ignored).

    Args:
        msg: the joint state as received.
        joint_names: the chain's joints, in chain order.
        received_at: receive time [s] on the caller's clock (not the message stamp).

    Raises:
        InvalidInputError: a chain joint is missing, a name appears twice, len(name) != len(position), or a NaN/inf
            position.
    """
    if len(msg.name) != len(msg.position):
        raise InvalidInputError(f"joint state has {len(msg.name)} names but {len(msg.position)} positions")
    index = _reorder_index(tuple(msg.name), tuple(joint_names))
    positions = np.frombuffer(msg.position, dtype=np.float64)[index] if len(msg.position) else np.empty(0)
    return JointMeasurement(check_vector("joint state positions", positions, len(joint_names)), received_at)


def joint_state_msg(joint_names: Sequence[str], positions: np.ndarray, velocities: np.ndarray | None = None,
                    stamp: Time | None = None) -> JointState:
    """Chain positions [rad | m] (and velocities) -> JointState."""
    msg = JointState(name=list(joint_names), position=_doubles(positions))
    if velocities is not None:
        msg.velocity = _doubles(velocities)
    if stamp is not None:
        msg.header.stamp = stamp
    return msg


# ---- TwistStamped <-> TwistCommand ----------------------------------------------------------------
def twist_command_from_msg(msg: TwistStamped, received_at: float, tip: str = "") -> TwistCommand:
    """TwistStamped -> TwistCommand; `header.frame_id` is the command frame ("" = base); `tip`: the tip it moves on
    a robot with several ("" = the first, or the held object). Not validated here: `Servo.set_command` checks values,
    frame and tip."""
    linear, angular = msg.twist.linear, msg.twist.angular
    return TwistCommand(np.array((linear.x, linear.y, linear.z)), np.array((angular.x, angular.y, angular.z)),
                        msg.header.frame_id, received_at, tip)


def joint_jog_command_from_msg(msg: JointJog, received_at: float) -> JointJogCommand:
    """control_msgs/JointJog -> JointJogCommand (names, velocities or displacements, duration [s]). Not validated
    here: `Servo.set_joint_command` checks names, sizes and values."""
    return JointJogCommand(tuple(msg.joint_names), tuple(msg.velocities), tuple(msg.displacements),
                           float(msg.duration), received_at)


def pose_target_from_msg(msg: PoseStamped, received_at: float, tip: str = "") -> PoseTarget:
    """PoseStamped -> PoseTarget; `header.frame_id` is the target's frame ("" = base), `header.stamp` times a
    target stream (zero = unstamped); `tip`: the tip it moves ("" = the first). Not validated here:
    `Servo.set_pose_target` checks values, frame and tip."""
    p, o = msg.pose.position, msg.pose.orientation
    stamp = time_nanoseconds(msg.header.stamp)
    return PoseTarget(np.array((p.x, p.y, p.z)), np.array((o.x, o.y, o.z, o.w)), msg.header.frame_id, stamp,
                      received_at, tip)


def wrench_from_msg(msg: WrenchStamped) -> tuple[np.ndarray, str]:
    """WrenchStamped -> ((6,) [force; torque] [N, N m], header.frame_id). Not validated here: `Servo.set_wrench`
    checks the values and the frame."""
    f, t = msg.wrench.force, msg.wrench.torque
    return np.array((f.x, f.y, f.z, t.x, t.y, t.z)), msg.header.frame_id


def scene_change_from_msg(msg: SceneObjectMsg) -> SceneChange:
    """robokin_interfaces/SceneObject -> SceneChange. Not validated here: `Servo.update_scene` checks it."""
    p, o = msg.pose.position, msg.pose.orientation
    return SceneChange(int(msg.operation), msg.id, msg.header.frame_id, np.array((p.x, p.y, p.z)),
                       np.array((o.x, o.y, o.z, o.w)), int(msg.primitive.type),
                       tuple(float(d) for d in msg.primitive.dimensions),
                       tuple((v.x, v.y, v.z) for v in msg.mesh.vertices))


# ---- JointTrajectory <-> TrajectoryWindow / TrajectoryPoints --------------------------------------
def trajectory_msg(joint_names: Sequence[str], window: TrajectoryWindow,
                   reuse: JointTrajectory | None = None) -> JointTrajectory:
    """TrajectoryWindow -> JointTrajectory (stamp zero = "start now"; the servo node stamps its tick time).

    Args:
        joint_names: chain order names.
        window: points at strictly increasing times [s] with positions and velocities.
        reuse: a message from an earlier call with the same joints and number of points; it is refilled
            in place (publish() has already serialized it), which saves most of the build time.
    """
    k, n = window.positions.shape
    msg = reuse if reuse is not None and len(reuse.points) == k else None
    if msg is None:
        msg = JointTrajectory(joint_names=list(joint_names), points=[JointTrajectoryPoint() for _ in range(k)])
    durations = _durations(np.ascontiguousarray(window.times, dtype=np.float64).tobytes())
    positions = memoryview(np.ascontiguousarray(window.positions, dtype=np.float64).tobytes())
    velocities = memoryview(np.ascontiguousarray(window.velocities, dtype=np.float64).tobytes())
    row = 8 * n
    for i, point in enumerate(msg.points):
        # one bytes copy per array: rclpy keeps an array.array('d') as is (no per-element checks)
        p, v = array.array("d"), array.array("d")
        p.frombytes(positions[i * row:(i + 1) * row])
        v.frombytes(velocities[i * row:(i + 1) * row])
        point.positions, point.velocities = p, v
        if point.time_from_start is not durations[i]:
            point.time_from_start = durations[i]
    return msg


@lru_cache(maxsize=8)
def _durations(times: bytes) -> tuple[Duration, ...]:
    """Duration messages of a window's times (the same few windows recur every tick: built once).

    Shared between messages: callers must not modify them."""
    return tuple(duration_msg(float(t)) for t in np.frombuffer(times, dtype=np.float64))


def _point_matrix(points: list[JointTrajectoryPoint], field: str, index: np.ndarray, n_names: int) -> np.ndarray:
    """(k, n) chain-order values of one point field; every point must have one value per name."""
    rows = []
    for i, point in enumerate(points):
        values = getattr(point, field)
        if len(values) != n_names:
            raise InvalidInputError(f"trajectory point {i} has {len(values)} {field} for {n_names} joint names")
        rows.append(np.frombuffer(values, dtype=np.float64)[index])
    return np.vstack(rows)


def trajectory_points_from_msg(msg: JointTrajectory, joint_names: tuple[str, ...]) -> TrajectoryPoints:
    """JointTrajectory -> TrajectoryPoints in chain order (as JointTrajectoryController reads it).

    Velocities are used only when every point has them. Times, limits and finiteness are checked by
    `core.trajectory_follower.check_trajectory`.

    Raises:
        UnknownJointError: a name that is not a chain joint.
        InvalidInputError: missing chain joints, duplicate names, no points, or sizes that do not match the names.
    """
    names = list(msg.joint_names)
    for name in names:
        if name not in joint_names:
            raise UnknownJointError(name, joint_names)
    if len(set(names)) != len(names):
        raise InvalidInputError(f"trajectory names a joint twice: {names}")
    index = _reorder_index(tuple(names), tuple(joint_names))
    if not msg.points:
        raise InvalidInputError("trajectory has no points")
    times = np.array([duration_seconds(p.time_from_start) for p in msg.points])
    positions = _point_matrix(msg.points, "positions", index, len(names))
    velocities = None
    if any(len(p.velocities) for p in msg.points):
        velocities = _point_matrix(msg.points, "velocities", index, len(names))
    return TrajectoryPoints(times, positions, velocities)


# ---- Float64MultiArray <-> vector ------------------------------------------------------------------
def float64_array_msg(values: np.ndarray) -> Float64MultiArray:
    """Vector -> Float64MultiArray (no layout, as forward command controllers expect)."""
    return Float64MultiArray(data=_doubles(values))


def vector_from_float64_array(msg: Float64MultiArray, size: int, what: str = "command") -> np.ndarray:
    """Float64MultiArray -> vector of `size` finite values; InvalidInputError otherwise."""
    return check_vector(what, np.frombuffer(msg.data, dtype=np.float64) if len(msg.data) else [], size)


# ---- poses -----------------------------------------------------------------------------------------
def transform_msg(parent: str, child: str, parent_T_child: pin.SE3, stamp: Time) -> TransformStamped:
    """A pose -> TransformStamped (as /tf carries it)."""
    msg = TransformStamped()
    msg.header.stamp, msg.header.frame_id, msg.child_frame_id = stamp, parent, child
    translation, rotation = msg.transform.translation, msg.transform.rotation
    translation.x, translation.y, translation.z = (float(v) for v in parent_T_child.translation)
    quaternion = pin.Quaternion(parent_T_child.rotation)
    rotation.x, rotation.y, rotation.z, rotation.w = (float(quaternion.x), float(quaternion.y),
                                                      float(quaternion.z), float(quaternion.w))
    return msg


# ---- ServoStatus message ---------------------------------------------------------------------------
class TipsStatus(NamedTuple):
    """The several-tips fields of robokin_interfaces/ServoStatus (see the message's comments)."""

    mode: str
    moving: tuple[str, ...]
    limiting: tuple[str, ...]


def status_msg(code: ServoStatus, message: str, locked_joints: Sequence[str] = (), sigma_min: float = np.nan,
               condition_number: float = np.nan, velocity_scale: float = 1.0, stamp: Time | None = None,
               frame_id: str = "", watchdog: WatchdogFigures | None = None,
               tips: TipsStatus | None = None) -> ServoStatusMsg:
    """Status fields -> robokin_interfaces/ServoStatus (header: `stamp`, `frame_id` = the base frame; `tips`: the
    several-tips fields, left empty without)."""
    msg = ServoStatusMsg(code=int(code), message=message, locked_joints=list(locked_joints),
                         sigma_min=float(sigma_min), condition_number=float(condition_number),
                         velocity_scale=float(velocity_scale))
    if watchdog is not None:
        msg.worst_tick_lateness = float(watchdog.worst_lateness)
        msg.ticks_last_second = int(watchdog.ticks_last_second)
        msg.late_ticks, msg.overruns = int(watchdog.late_ticks), int(watchdog.overruns)
    if tips is not None:
        msg.tips_mode, msg.moving_tips, msg.limiting_tips = tips.mode, list(tips.moving), list(tips.limiting)
    if stamp is not None:
        msg.header.stamp = stamp
    msg.header.frame_id = frame_id
    return msg


def moveit_status_msg(code: int, message: str) -> MoveItStatusMsg:
    """A MoveIt Servo status code (see `ServoStatus.moveit_code`) and a sentence -> moveit_msgs/ServoStatus."""
    return MoveItStatusMsg(code=int(code), message=message)
