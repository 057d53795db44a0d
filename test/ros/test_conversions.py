"""Message <-> core conversions: round trips, reordering by name, and a named error for every bad input."""
import numpy as np
import pinocchio as pin
import pytest
from builtin_interfaces.msg import Duration, Time
from geometry_msgs.msg import TwistStamped
from ros_helpers import pose_stamped
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


def test_pose_target_stamp_is_carried_as_integer_nanoseconds():
    msg = pose_stamped([0.1, 0.2, 0.3], frame="tool0")
    msg.header.stamp = Time(sec=1_700_000_000, nanosec=123_456_789)
    target = cv.pose_target_from_msg(msg, received_at=4.0)
    assert (target.stamp, target.received_at) == (1_700_000_000_123_456_789, 4.0)
    assert type(target.stamp) is int


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
    assert cv.duration_seconds(Duration(sec=12, nanosec=345)) == pytest.approx(12.000000345, abs=1e-12)


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


# ---- motion programs (ros/path_conversions.py) ----------------------------------------------------------
def _program_goal(*moves, **fields):
    from robokin_interfaces.action import ExecuteCartesianPath

    goal = ExecuteCartesianPath.Goal(program=list(moves))
    for key, value in fields.items():
        setattr(goal, key, value)
    return goal


def _move(kind, pose=None, via=None, via_frame="", **fields):
    from robokin_interfaces.msg import MotionMove

    msg = MotionMove(type=kind, **fields)
    if pose is not None:
        msg.pose = pose
    if via is not None:
        msg.via.header.frame_id = via_frame
        msg.via.point.x, msg.via.point.y, msg.via.point.z = (float(v) for v in via)
    return msg


def test_program_moves_keep_their_fields_in_the_base_frame_and_robot_joint_order(panda):
    from robokin_interfaces.msg import MotionMove as MM
    from robokin_ros.core.path.config import PathConfig
    from robokin_ros.core.program.moves import MoveKind
    from robokin_ros.ros.path_conversions import program_from_goal

    q = panda.home()
    target = np.linspace(-0.3, 0.3, panda.n)
    base_T_camera = pin.SE3(pin.rpy.rpyToMatrix(0.1, 0.2, -0.4), np.array([0.5, -0.2, 0.8]))
    looked_up = []

    def lookup(frame):
        looked_up.append(frame)
        return base_T_camera

    order = list(reversed(range(panda.n)))          # the message may name the joints in any order
    goal = _program_goal(
        _move(MM.MOVE_J, joint_names=[panda.joint_names[i] for i in order],
              joint_positions=target[order].tolist(), joint_speed_scaling=0.5, name="home"),
        _move(MM.MOVE_L, pose=pose_stamped([0.0, 0.0, 0.1], frame=panda.tip_frame), speed=0.2, zone=0.01),
        _move(MM.MOVE_C, pose=pose_stamped([0.4, 0.1, 0.3], frame="world"), via=[0.1, 0.0, 0.2], via_frame="camera",
              angular_speed=0.7, acceleration_scaling=0.3),
        _move(MM.MOVE_J, pose=pose_stamped([0.4, 0.0, 0.4], frame="camera")),
        velocity_scaling=0.25)
    cfg = PathConfig(velocity_scaling=0.4, acceleration_scaling=0.6)
    program = program_from_goal(panda, q, goal, lookup, cfg)
    home, line, arc, joint_to_pose = program.moves
    assert [m.kind for m in program.moves] == [MoveKind.JOINT, MoveKind.LINEAR, MoveKind.CIRCULAR, MoveKind.JOINT]
    np.testing.assert_array_equal(home.joints, target)
    assert home.pose is None and home.name == "home" and home.joint_speed == 0.5
    # a pose in the tool frame is placed by FK at the current state, not at an earlier move's target
    assert line.pose.isApprox(panda.fk(q) * pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.1])), 1e-12)
    assert (line.speed, line.zone, line.via) == (0.2, 0.01, None)
    np.testing.assert_allclose(arc.pose.translation, [0.4, 0.1, 0.3], atol=1e-12)        # world = base (Panda)
    np.testing.assert_allclose(arc.via, base_T_camera.act(np.array([0.1, 0.0, 0.2])), atol=1e-12)
    assert (arc.angular_speed, arc.acceleration) == (0.7, 0.3)
    assert joint_to_pose.joints is None
    assert joint_to_pose.pose.isApprox(base_T_camera * pin.SE3(np.eye(3), np.array([0.4, 0.0, 0.4])), 1e-12)
    assert looked_up == ["camera"]                   # one TF answer per frame and goal
    # goal scaling 0.25 kept; acceleration 0 = the node's default
    assert (program.velocity_scaling, program.acceleration_scaling) == (0.25, 0.6)


def _joint_move(names, positions):
    from robokin_interfaces.msg import MotionMove

    return _move(MotionMove.MOVE_J, joint_names=list(names), joint_positions=[float(v) for v in positions])


@pytest.mark.parametrize("case, words", [
    ("unknown joint", "move 1 (MoveJ): joint 'elbow' is not an arm joint; arm joints: ['panda_joint1'"),
    ("missing joint", "move 1 (MoveJ): lacks joints ['panda_joint7']"),
    ("duplicate joint", "move 1 (MoveJ): joint 'panda_joint2' is named 2 times"),
    ("size mismatch", "move 1 (MoveJ): 7 joint_names but 6 joint_positions"),
    ("positions without names", "move 1 (MoveJ): 0 joint_names but 7 joint_positions"),
    ("nan joint", "move 1 (MoveJ): joint 'panda_joint3' position nan is not finite"),
    ("bad type", "move 1 (bad): type 7 is not MOVE_L (0), MOVE_J (1) or MOVE_C (2)"),
    ("unknown via frame", "move 1 (MoveC arc) via: frame 'nowhere' is not in the model"),
    ("tf lookup fails", "move 1 (MoveL) pose: no transform to 'camera'"),
    ("nan pose", "move 1 (MoveL) pose has non-finite values"),
    ("bad quaternion", "move 1 (MoveL) pose: quaternion [0.0, 0.0, 0.0, 0.5] has norm"),
    ("nan via", "move 1 (MoveC arc) via has non-finite values"),
])
def test_bad_program_moves_are_named(panda, case, words):
    from robokin_interfaces.msg import MotionMove as MM
    from robokin_ros.core.errors import PathInputError
    from robokin_ros.core.frames import TransformLookupError
    from robokin_ros.core.path.config import PathConfig
    from robokin_ros.ros.path_conversions import program_from_goal

    names, q = list(panda.joint_names), panda.home()
    pose = pose_stamped([0.4, 0.0, 0.4])
    bad = {
        "unknown joint": lambda: _joint_move(names[:-1] + ["elbow"], q),
        "missing joint": lambda: _joint_move(names[:-1], q[:-1]),
        "duplicate joint": lambda: _joint_move(names + ["panda_joint2"], np.r_[q, 0.0]),
        "size mismatch": lambda: _joint_move(names, q[:-1]),
        "positions without names": lambda: _joint_move([], q),
        "nan joint": lambda: _joint_move(names, np.where(np.arange(panda.n) == 2, np.nan, q)),
        "bad type": lambda: _move(7, pose=pose, name="bad"),
        "unknown via frame": lambda: _move(MM.MOVE_C, pose=pose, via=[0.3, 0.0, 0.4], via_frame="nowhere",
                                           name="arc"),
        "tf lookup fails": lambda: _move(MM.MOVE_L, pose=pose_stamped([0.4, 0.0, 0.4], frame="camera")),
        "nan pose": lambda: _move(MM.MOVE_L, pose=pose_stamped([0.4, np.nan, 0.4])),
        "bad quaternion": lambda: _move(MM.MOVE_L, pose=pose_stamped([0.4, 0.0, 0.4], (0, 0, 0, 0.5))),
        "nan via": lambda: _move(MM.MOVE_C, pose=pose, via=[0.3, np.nan, 0.4], name="arc"),
    }[case]()

    def lookup(frame):                 # TF that has never heard of the frame
        raise TransformLookupError(f"no transform to '{frame}'")

    goal = _program_goal(_move(MM.MOVE_L, pose=pose), bad)
    with pytest.raises(PathInputError) as err:
        program_from_goal(panda, q, goal, lookup if case == "tf lookup fails" else None, PathConfig())
    assert words in str(err.value)
    assert err.value.waypoint == 1


def test_program_plan_becomes_reports_and_an_outcome():
    from robokin_interfaces.action import ExecuteCartesianPath
    from robokin_ros.core.path.result import PathStatus
    from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays
    from robokin_ros.core.program.result import MoveReport, ProgramPlan
    from robokin_ros.ros.path_conversions import goal_outcome

    Result = ExecuteCartesianPath.Result
    times = np.linspace(0.0, 1.5, 4)
    trajectory = JointTrajectoryArrays(NAMES, times, np.outer(times, [1.0, 0.0, -1.0]), np.zeros((4, 3)),
                                       np.zeros((4, 3)))
    reports = (MoveReport(0, "0 MoveJ up", 0.0, 1.5, 0.3, 0.1, "velocity of j1", 0.0, 0.02),
               MoveReport(1, "1 MoveL", 0.0, 0.0, 0.0, 0.0, "", 0.1, 0.0))
    failed = ProgramPlan(PathStatus.JOINT_LIMIT, "move 1 hit a limit", trajectory, reports, failed_move=1,
                         completed_moves=1)
    plan_only = ExecuteCartesianPath.Goal(plan_only=True, execute_partial=True)
    partial = ExecuteCartesianPath.Goal(execute_partial=True)

    result = Result()
    outcome = goal_outcome(result, failed, ExecuteCartesianPath.Goal())
    assert (outcome.code, outcome.message, outcome.trajectory) == (Result.JOINT_LIMIT, "move 1 hit a limit", None)
    assert (result.failed_move, result.fraction, len(result.trajectory.points)) == (1, 0.5, 4)
    first, second = result.move_reports
    assert (first.name, first.start_time, first.duration, first.peak_tool_speed, first.peak_tool_angular_speed,
            first.zone, first.limited_by) == ("0 MoveJ up", 0.0, 1.5, 0.3, 0.1, 0.02, "velocity of j1")
    assert (second.name, second.duration) == ("1 MoveL", 0.0)
    assert goal_outcome(Result(), failed, plan_only).trajectory is None      # plan_only never moves the arm
    outcome = goal_outcome(Result(), failed, partial)
    assert outcome.trajectory is trajectory and "executed the solved part (1 of 2 moves) in 1.50 s" in \
        outcome.executed_message

    done = ProgramPlan(PathStatus.SUCCESS, "program planned", trajectory, reports, completed_moves=2)
    result = Result(failed_move=7)
    outcome = goal_outcome(result, done, ExecuteCartesianPath.Goal())
    assert (result.failed_move, result.fraction, outcome.code) == (-1, 1.0, Result.SUCCESS)
    assert outcome.trajectory is trajectory and outcome.executed_message == "executed: 2 moves, cycle time 1.500 s"
    assert goal_outcome(Result(), done, plan_only).message == "planned (plan_only): 2 moves, cycle time 1.500 s"


def test_unknown_approach_value_is_named():
    from robokin_interfaces.action import ExecuteCartesianPath
    from robokin_ros.core.errors import PathInputError
    from robokin_ros.core.program.moves import Approach
    from robokin_ros.ros.path_conversions import approach_from_goal

    goal = ExecuteCartesianPath.Goal(approach=ExecuteCartesianPath.Goal.APPROACH_MOVEL)
    assert approach_from_goal(goal) is Approach.LINEAR
    goal.approach = 9
    with pytest.raises(PathInputError, match=r"approach 9 is not one of APPROACH_PATH \(0\), .*APPROACH_REFUSE \(3\)"):
        approach_from_goal(goal)


def test_program_messages_round_trip(panda):
    """What a client builds with motion_move_msgs is what the node reads back with program_from_goal."""
    from robokin_interfaces.action import ExecuteCartesianPath
    from robokin_ros.core.path.config import PathConfig
    from robokin_ros.core.program.moves import MotionProgram, Move, MoveKind
    from robokin_ros.ros.path_conversions import motion_move_msgs, program_from_goal

    start = panda.fk(panda.home())
    down = pin.SE3(start.rotation, start.translation + np.array([0.1, 0.0, -0.1]))
    program = MotionProgram((
        Move(MoveKind.JOINT, joints=panda.home() + 0.1, joint_speed=0.5, zone=0.05, name="approach"),
        Move(MoveKind.LINEAR, pose=down, speed=0.1, acceleration=0.25),
        Move(MoveKind.CIRCULAR, pose=start, via=np.array([0.45, 0.05, 0.45]), speed=0.3, angular_speed=0.5,
             zone=0.02, name="arc")))
    goal = ExecuteCartesianPath.Goal(program=motion_move_msgs(program, panda))
    back = program_from_goal(panda, panda.home(), goal, None, PathConfig())
    for a, b in zip(program.moves, back.moves):
        assert (a.kind, a.name, a.speed, a.angular_speed, a.joint_speed, a.acceleration, a.zone) == \
            (b.kind, b.name, b.speed, b.angular_speed, b.joint_speed, b.acceleration, b.zone)
        for field in ("joints", "via"):
            if getattr(a, field) is not None:
                np.testing.assert_allclose(getattr(b, field), getattr(a, field), atol=1e-12)
        if a.pose is not None:
            np.testing.assert_allclose(b.pose.homogeneous, a.pose.homogeneous, atol=1e-12)
