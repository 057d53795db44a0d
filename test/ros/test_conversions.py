"""Message <-> core conversions: round trips, reordering by name, and a named error for every bad input."""
import numpy as np
import pinocchio as pin
import pytest
from builtin_interfaces.msg import Duration, Time
from geometry_msgs.msg import TwistStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robokin_ros.core.errors import InvalidInputError, UnknownJointError
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.types import ServoOutput, TrajectoryWindow
from robokin_ros.ros import conversions as cv

NAMES = ("j1", "j2", "j3")


def test_joint_state_round_trip_and_reordering_by_name():
    msg = cv.joint_state_msg(NAMES, np.array([0.1, -0.2, 0.3]), np.array([1.0, 2.0, 3.0]))
    m = cv.measurement_from_joint_state(msg, NAMES, received_at=12.5)
    np.testing.assert_array_equal(m.positions, [0.1, -0.2, 0.3])
    assert m.received_at == 12.5
    shuffled = JointState(name=["gripper", "j3", "j1", "j2"], position=[9.0, 0.3, 0.1, -0.2])
    np.testing.assert_array_equal(cv.measurement_from_joint_state(shuffled, NAMES, 0.0).positions,
                                  [0.1, -0.2, 0.3])


@pytest.mark.parametrize("msg, words", [
    (JointState(name=["j1", "j2"], position=[0.0, 0.0]), "lacks joints ['j3']"),
    (JointState(name=["j1", "j2", "j3"], position=[0.0, 0.0]), "3 names but 2 positions"),
    (JointState(name=["j1", "j2", "j3"], position=[0.0, float("nan"), 0.0]), "non-finite entries at indices [1]"),
    (JointState(), "lacks joints ['j1', 'j2', 'j3']"),
    # the last value used to win: j1 would read 0.3
    (JointState(name=["j1", "j2", "j3", "j1"], position=[0.0, 0.0, 0.0, 0.3]), "names 'j1' twice"),
    (JointState(name=["j1", "j2", "j3", "g", "g", "g"], position=[0.0] * 6), "names 'g' 3 times"),
])
def test_bad_joint_states_are_named(msg, words):
    with pytest.raises(InvalidInputError) as err:
        cv.measurement_from_joint_state(msg, NAMES, 0.0)
    assert words in str(err.value)


def test_twist_keeps_values_and_frame_and_uses_receive_time():
    msg = TwistStamped()
    msg.header.frame_id, msg.header.stamp = "tool0", Time(sec=999)     # the stamp never becomes the receive time
    msg.twist.linear.x, msg.twist.linear.y, msg.twist.linear.z = 0.1, 0.2, 0.3
    msg.twist.angular.x, msg.twist.angular.y, msg.twist.angular.z = -1.0, 0.5, 0.0
    back = cv.twist_command_from_msg(msg, received_at=4.0)
    np.testing.assert_array_equal(back.linear, [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(back.angular, [-1.0, 0.5, 0.0])
    assert (back.frame, back.received_at) == ("tool0", 4.0)


def _window(k=4, n=3):
    rng = np.random.default_rng(1)
    return TrajectoryWindow(np.arange(1, k + 1) * 0.002, rng.uniform(-1, 1, (k, n)), rng.uniform(-1, 1, (k, n)))


def test_trajectory_round_trip_and_zero_stamp():
    window = _window()
    msg = cv.trajectory_msg(NAMES, window)
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (0, 0)
    assert list(msg.joint_names) == list(NAMES)
    assert [p.time_from_start.nanosec for p in msg.points] == [2_000_000, 4_000_000, 6_000_000, 8_000_000]
    back = cv.trajectory_points_from_msg(msg, NAMES)
    np.testing.assert_allclose(back.times, window.times, atol=1e-9)
    np.testing.assert_array_equal(back.positions, window.positions)
    np.testing.assert_array_equal(back.velocities, window.velocities)


def test_trajectory_reuse_refills_in_place_with_new_values():
    first = cv.trajectory_msg(NAMES, _window())
    window = TrajectoryWindow(_window().times, -_window().positions, np.zeros((4, 3)))
    again = cv.trajectory_msg(NAMES, window, reuse=first)
    assert again is first
    np.testing.assert_array_equal(cv.trajectory_points_from_msg(again, NAMES).positions, window.positions)
    assert cv.trajectory_msg(NAMES, _window(k=5), reuse=first) is not first   # size change: a new message


def test_trajectory_from_msg_reorders_and_reads_missing_velocities_as_linear():
    msg = JointTrajectory(joint_names=["j3", "j1", "j2"],
                          points=[JointTrajectoryPoint(positions=[3.0, 1.0, 2.0], time_from_start=Duration(sec=1))])
    points = cv.trajectory_points_from_msg(msg, NAMES)
    np.testing.assert_array_equal(points.positions, [[1.0, 2.0, 3.0]])
    assert points.velocities is None and points.times.tolist() == [1.0]


@pytest.mark.parametrize("names, positions, error, words", [
    (["j1", "j2", "elbow"], [0.0] * 3, UnknownJointError, "'elbow' is not in the model"),
    (["j1", "j2"], [0.0] * 2, InvalidInputError, "lacks joints ['j3']"),
    (["j1", "j2", "j2"], [0.0] * 3, InvalidInputError, "names a joint twice"),
    (["j1", "j2", "j3"], [0.0] * 2, InvalidInputError, "point 0 has 2 positions for 3 joint names"),
])
def test_bad_trajectories_are_named(names, positions, error, words):
    msg = JointTrajectory(joint_names=names, points=[JointTrajectoryPoint(positions=positions)])
    with pytest.raises(error) as err:
        cv.trajectory_points_from_msg(msg, NAMES)
    assert words in str(err.value)


def test_trajectory_without_points_is_rejected():
    with pytest.raises(InvalidInputError, match="no points"):
        cv.trajectory_points_from_msg(JointTrajectory(joint_names=list(NAMES)), NAMES)


def test_float64_array_round_trip_and_errors():
    values = np.array([1.5, -2.0, 0.25])
    np.testing.assert_array_equal(cv.vector_from_float64_array(cv.float64_array_msg(values), 3), values)
    with pytest.raises(InvalidInputError, match="velocity command must have 3 entries"):
        cv.vector_from_float64_array(Float64MultiArray(data=[1.0]), 3, "velocity command")
    with pytest.raises(InvalidInputError, match="non-finite"):
        cv.vector_from_float64_array(Float64MultiArray(data=[1.0, np.inf, 0.0]), 3)


def test_status_msg_carries_every_field_and_its_code_reads_back():
    output = ServoOutput(np.zeros(3), np.zeros(3), _window(), ServoStatus.JOINT_BOUND, "j2 is at its limit",
                         ("j2",), 0.03, 45.0, 0.5, True)
    msg = cv.status_msg(output.status, output.message, output.locked_joints, output.sigma_min,
                        output.condition_number, output.velocity_scale)          # as servo_node calls it
    assert (msg.code, msg.message, list(msg.locked_joints)) == (6, "j2 is at its limit", ["j2"])   # MoveIt's number
    assert (msg.sigma_min, msg.condition_number, msg.velocity_scale) == (0.03, 45.0, 0.5)
    assert ServoStatus(msg.code) is ServoStatus.JOINT_BOUND
    with pytest.raises(ValueError, match="7 is not a valid ServoStatus"):      # 7 is unused
        ServoStatus(7)


def test_time_msg_splits_nanoseconds():
    msg = cv.time_msg(12 * 1_000_000_000 + 345)
    assert (msg.sec, msg.nanosec) == (12, 345)
    assert cv.time_nanoseconds(msg) == 12 * 1_000_000_000 + 345
    assert cv.time_nanoseconds(Time()) == 0
    assert cv.duration_seconds(msg) == pytest.approx(12.000000345, abs=1e-12)


def test_duration_conversion_rounds_to_nanoseconds():
    d = cv.duration_msg(1.0000000004)
    assert (d.sec, d.nanosec) == (1, 0)
    assert cv.duration_seconds(cv.duration_msg(2.75)) == 2.75


def test_transform_msg_matches_the_pose():
    pose = pin.SE3(pin.rpy.rpyToMatrix(0.3, -0.2, 1.1), np.array([0.1, 0.2, 0.3]))
    msg = cv.transform_msg("base", "tool", pose, Time(sec=1))
    r = msg.transform.rotation
    q = pin.Quaternion(r.w, r.x, r.y, r.z)          # pinocchio's constructor takes w first
    np.testing.assert_allclose(q.toRotationMatrix(), pose.rotation, atol=1e-12)
    t = msg.transform.translation
    assert (t.x, t.y, t.z) == (0.1, 0.2, 0.3)
    assert (msg.header.frame_id, msg.child_frame_id) == ("base", "tool")


def test_waypoints_in_world_and_tf_style_frames_are_accepted(panda):
    """A waypoint in `world` or `/panda_link0` means the same pose as one in the base frame (the Panda's base
    is at the world origin); one in the tool frame is placed by the FK at the current state."""
    from geometry_msgs.msg import PoseStamped

    from robokin_ros.ros.path_conversions import waypoints_in_base

    q = panda.home()
    stamped = []
    for frame in ("", "world", "/panda_link0", panda.tip_frame):
        msg = PoseStamped()
        msg.header.frame_id = frame
        msg.pose.position.x, msg.pose.position.z, msg.pose.orientation.w = 0.4, 0.3, 1.0
        stamped.append(msg)
    base, world, slash, tool = waypoints_in_base(panda, q, stamped)
    assert world.isApprox(base, 1e-12) and slash.isApprox(base, 1e-12)
    assert tool.isApprox(panda.fk(q) * base, 1e-12)
