"""The studio with two arms (issue 26): a gizmo per tip and the held object's gizmo, driving the multi-tip servo.

Measured on the arm the studio shows (the servo's commanded positions, forward kinematics per tip) at every servo
tick: the driven hand reaches its gizmo within the servo's pose tolerance while the other drifts < 0.1 mm; in
coordinated mode an object gizmo moved 5 cm moves both hands 5 cm and their relative pose stays within 0.1 mm /
1 mrad throughout; the joint velocities and accelerations stay within the limits (finite differences of the path).
"""
import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.errors import InvalidInputError, RobokinError
from robokin_ros.core.robot import RobotModel
from robokin_ros.studio.session import IDLE, SERVO_PERIOD, TRACKING
from robokin_ros.studio.tips_session import COORDINATED, INDEPENDENT, OBJECT, RELATIVE, TipsSession, tracking_twist

LEFT, RIGHT = "left_panda_hand_tcp", "right_panda_hand_tcp"


@pytest.fixture(scope="module")
def dual():
    return RobotModel.load("dual_panda")


@pytest.fixture(scope="module")
def hands(dual):
    return TipsSession(dual)               # warms the servo up once for the module


@pytest.fixture
def fresh(hands, dual):
    """Each test starts in independent mode at home."""
    hands.set_tips_mode(INDEPENDENT)
    hands.set_positions(dual.home())
    return hands


def drift(a: pin.SE3, b: pin.SE3) -> tuple[float, float]:
    """([m], [rad]) between two poses, computed here."""
    return (float(np.linalg.norm(a.translation - b.translation)),
            float(np.linalg.norm(pin.log3(a.rotation.T @ b.rotation))))


def run(session, ticks, watch=None):
    """Advance one servo period at a time; `watch(session)` after each tick; returns the path (ticks + 1, n)."""
    path = [session.positions.copy()]
    for _ in range(ticks):
        session.advance(SERVO_PERIOD)
        path.append(session.positions.copy())
        if watch is not None:
            watch(session)
    return np.array(path)


def assert_within_joint_limits(session, path):
    robot = session.robot
    velocity = np.diff(path, axis=0) / SERVO_PERIOD
    assert np.all(np.abs(velocity) <= robot.limits.velocity * (1 + 1e-6))
    limits = robot.acceleration_limits
    limits = np.where(np.isfinite(limits), limits, session.servo_config.default_joint_acceleration)
    assert np.all(np.abs(np.diff(velocity, axis=0) / SERVO_PERIOD) <= limits * (1 + 1e-6))


def test_dragging_the_right_hand_s_gizmo_moves_it_there_while_the_left_holds(fresh, dual):
    left0, right0 = fresh.tip_poses()
    goal = pin.SE3(right0.rotation @ pin.exp3(np.array([0.0, 0.2, 0.1])),
                   right0.translation + np.array([0.05, -0.04, 0.03]))
    fresh.drive_target(RIGHT, goal)
    assert fresh.mode == TRACKING
    assert fresh.tip_targets()[0] is None and max(drift(fresh.tip_targets()[1], goal)) < 1e-12
    worst = [0.0]
    path = run(fresh, 750, lambda s: worst.__setitem__(0, max(worst[0], drift(s.tip_poses()[0], left0)[0])))
    reached = drift(fresh.tip_poses()[1], goal)
    tolerance = fresh.servo_config.pose_tracking
    assert reached[0] <= tolerance.linear_tolerance and reached[1] <= tolerance.angular_tolerance, reached
    assert worst[0] < 1e-4, worst
    assert "reached" in fresh.message and RIGHT in fresh.message
    assert np.abs(np.diff(path, axis=0)).max() > 0            # it did move
    assert_within_joint_limits(fresh, path)


def test_the_first_hand_s_gizmo_is_the_one_tip_gizmo(fresh):
    left0, right0 = fresh.tip_poses()
    goal = pin.SE3(left0.rotation, left0.translation + np.array([0.0, 0.0, 0.04]))
    fresh.set_target(goal)
    assert max(drift(fresh.target(), goal)) < 1e-12
    run(fresh, 500)
    assert drift(fresh.tip_poses()[0], goal)[0] <= fresh.servo_config.pose_tracking.linear_tolerance
    assert drift(fresh.tip_poses()[1], right0)[0] < 1e-4


def test_coordinated_mode_takes_the_grasp_at_the_centroid_when_it_starts(fresh, dual):
    q = dual.home().copy()
    q[dual.joint_index("right_panda_joint1")] += 0.3            # the hands not mirror images
    fresh.set_positions(q)
    fresh.set_tips_mode(COORDINATED)
    left, right = dual.fk(q, LEFT), dual.fk(q, RIGHT)
    base_T_object = fresh.object_pose()
    np.testing.assert_allclose(base_T_object.translation, 0.5 * (left.translation + right.translation), atol=1e-12)
    np.testing.assert_allclose(base_T_object.rotation, np.eye(3), atol=1e-12)
    assert fresh.mode == IDLE and fresh.object_target() is None


def test_an_object_gizmo_moved_5_cm_moves_both_hands_5_cm_and_keeps_their_relative_pose(fresh):
    """The issue's coordinated figure on the studio's object gizmo: both hands travel the gizmo's 5 cm (to 0.1 mm),
    their relative pose stays within 0.1 mm / 1 mrad at every tick, the object ends on the gizmo."""
    fresh.set_tips_mode(COORDINATED)
    left0, right0 = fresh.tip_poses()
    held = left0.actInv(right0)
    object0 = fresh.object_pose()
    step = np.array([0.05, 0.0, 0.0])
    goal = pin.SE3(object0.rotation, object0.translation + step)
    fresh.drive_target(OBJECT, goal)
    assert max(drift(fresh.object_target(), goal)) < 1e-12
    worst = [0.0, 0.0]

    def watch(session):
        left, right = session.tip_poses()
        linear, angular = drift(left.actInv(right), held)
        worst[:] = max(worst[0], linear), max(worst[1], angular)
    path = run(fresh, 750, watch)
    assert worst[0] <= 1e-4 and worst[1] <= 1e-3, worst
    left, right = fresh.tip_poses()
    for hand, start in ((left, left0), (right, right0)):
        np.testing.assert_allclose(hand.translation - start.translation, step, atol=1e-4)
        assert drift(pin.SE3(hand.rotation, start.translation), start)[1] <= 1e-3
    assert max(drift(fresh.object_pose(), goal)) <= 1e-4
    assert_within_joint_limits(fresh, path)


def test_an_object_gizmo_turned_turns_both_hands_about_the_object(fresh):
    fresh.set_tips_mode(COORDINATED)
    left0, right0 = fresh.tip_poses()
    object0 = fresh.object_pose()
    goal = pin.SE3(pin.exp3(np.array([0.0, 0.0, 0.2])) @ object0.rotation, object0.translation)
    fresh.drive_target(OBJECT, goal)
    run(fresh, 750)
    left, right = fresh.tip_poses()
    assert max(drift(left.actInv(right), left0.actInv(right0))) <= 1e-4
    assert max(drift(fresh.object_pose(), goal)) <= 1e-4
    # each hand went round the object origin: its position in the object frame is unchanged
    for hand, start in ((left, left0), (right, right0)):
        np.testing.assert_allclose(goal.actInv(hand).translation, object0.actInv(start).translation, atol=1e-4)


def test_relative_mode_moves_the_second_hand_while_the_first_holds_and_the_first_carries_the_second(fresh):
    fresh.set_tips_mode(RELATIVE)
    left0, right0 = fresh.tip_poses()
    goal = pin.SE3(right0.rotation, right0.translation + np.array([0.0, 0.03, 0.04]))
    fresh.drive_target(RIGHT, goal)
    worst = [0.0]
    run(fresh, 500, lambda s: worst.__setitem__(0, max(worst[0], drift(s.tip_poses()[0], left0)[0])))
    assert worst[0] <= 1e-4, worst
    assert drift(fresh.tip_poses()[1], goal)[0] <= 1e-4
    # now the first hand's gizmo: the second follows, their relative pose kept
    left1, right1 = fresh.tip_poses()
    goal = pin.SE3(left1.rotation, left1.translation + np.array([0.0, 0.0, 0.05]))
    fresh.drive_target(LEFT, goal)
    run(fresh, 500)
    left, right = fresh.tip_poses()
    assert drift(left, goal)[0] <= 1e-4
    assert max(drift(left.actInv(right), left1.actInv(right1))) <= 1e-4


def test_tracking_twist_brakes_and_caps_like_the_pose_tracker():
    limits = np.array(((20.0, 1.0, 0.25), (10.0, 3.0, 1.0)))      # gain, braking, cap per part
    here = pin.SE3.Identity()
    far = pin.SE3(np.eye(3), np.array([0.5, 0.0, 0.0]))
    twist, linear, angular = tracking_twist(here, far, limits)
    assert linear == 0.5 and angular == 0.0
    np.testing.assert_allclose(twist, [0.25, 0, 0, 0, 0, 0])                 # capped
    near = pin.SE3(np.eye(3), np.array([0.0, 0.02, 0.0]))
    np.testing.assert_allclose(tracking_twist(here, near, limits)[0][:3], [0, np.sqrt(2 * 1.0 * 0.02), 0])  # braking
    tiny = pin.SE3(pin.exp3(np.array([0.0, 0.0, 1e-3])), np.array([0.0, 0.0, 1e-4]))
    np.testing.assert_allclose(tracking_twist(here, tiny, limits)[0], [0, 0, 20 * 1e-4, 0, 0, 10 * 1e-3])


def test_bad_gizmo_input_is_refused_naming_what_is_wrong_and_the_target_stays(fresh):
    left0, right0 = fresh.tip_poses()
    goal = pin.SE3(right0.rotation, right0.translation + np.array([0.02, 0.0, 0.0]))
    fresh.drive_target(RIGHT, goal)
    with pytest.raises(InvalidInputError, match=f"unknown tip 'middle'.*{LEFT}.*{RIGHT}"):
        fresh.drive_target("middle", goal)
    with pytest.raises(InvalidInputError, match="object gizmo needs the coordinated mode"):
        fresh.drive_target(OBJECT, goal)
    with pytest.raises(InvalidInputError, match="not finite"):
        fresh.drive_target(RIGHT, pin.SE3(np.eye(3), np.array([np.nan, 0.0, 0.0])))
    with pytest.raises(InvalidInputError, match="unknown tips mode 'sideways'"):
        fresh.set_tips_mode("sideways")
    assert fresh.tips_mode == INDEPENDENT and fresh.mode == TRACKING
    assert max(drift(fresh.tip_targets()[1], goal)) < 1e-12
    run(fresh, 300)
    assert drift(fresh.tip_poses()[1], goal)[0] <= fresh.servo_config.pose_tracking.linear_tolerance
    fresh.set_tips_mode(COORDINATED)
    with pytest.raises(InvalidInputError, match="drive the held object, not a tip"):
        fresh.drive_target(RIGHT, goal)


def test_a_robot_with_one_tip_is_not_a_tips_session(panda):
    with pytest.raises(RobokinError, match="several tips"):
        TipsSession(panda)


def test_on_a_shared_torso_the_still_hand_holds_while_the_other_hand_s_gizmo_is_followed():
    """dual_panda_torso: a joint both arms share; the right hand's target moves it, the left arm compensates."""
    robot = RobotModel.load("dual_panda_torso")
    session = TipsSession(robot)
    left0, right0 = session.tip_poses()
    goal = pin.SE3(right0.rotation, right0.translation + np.array([0.03, -0.05, 0.02]))
    session.drive_target(RIGHT, goal)
    worst, torso = [0.0], robot.joint_index("torso_joint")
    path = run(session, 750, lambda s: worst.__setitem__(0, max(worst[0], drift(s.tip_poses()[0], left0)[0])))
    assert drift(session.tip_poses()[1], goal)[0] <= session.servo_config.pose_tracking.linear_tolerance
    assert worst[0] < 1e-4, worst
    assert np.abs(path[:, torso] - path[0, torso]).max() > 1e-4          # the shared joint did take part


def test_keyframes_record_every_hand_and_play_back_as_bimanual_lines(fresh, dual):
    """A keyframe holds both hands' poses; the playback (a bimanual MoveL per keyframe) ends with each hand on its
    recorded pose (the planner's 1 mm), and the hand whose pose is the same in both keyframes stays within it."""
    left0, right0 = fresh.tip_poses()
    fresh.clear_keyframes()
    fresh.record_keyframe()
    goal = pin.SE3(right0.rotation, right0.translation + np.array([0.06, 0.0, -0.04]))
    fresh.drive_target(RIGHT, goal)
    run(fresh, 500)
    assert fresh.record_keyframe() == 2
    assert [tip for tip, _ in fresh.keyframes.frames[1].tips] == [LEFT, RIGHT]
    fresh.set_positions(dual.home())
    playback = fresh.play()
    assert playback.kinds == ("MoveL", "MoveL") and not playback.fallbacks
    worst = [0.0]
    run(fresh, int(playback.duration / SERVO_PERIOD) + 10,
        lambda s: worst.__setitem__(0, max(worst[0], drift(s.tip_poses()[0], left0)[0])))
    assert fresh.mode == IDLE and "finished" in fresh.message
    for hand, (_, recorded) in zip(fresh.tip_poses(), fresh.keyframes.frames[1].tips):
        assert drift(hand, recorded)[0] <= 1e-3
    assert worst[0] <= 1e-3, worst
