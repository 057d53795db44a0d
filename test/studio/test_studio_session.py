"""ArmSession: the servo tracking a gizmo pose (reach, limits by finite differences, locking) and keyframe playback
(end pose, continuity, MoveJ fallback, errors)."""
import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.studio.session import IDLE, PLAYING, SERVO_PERIOD, TRACKING, ArmSession


@pytest.fixture(scope="module")
def arm(panda):
    return ArmSession(panda)                 # warms the servo up once (~0.3 s) for the whole module


@pytest.fixture(scope="module")
def ur5_arm(ur5):
    return ArmSession(ur5)


def pose_error(a: pin.SE3, b: pin.SE3) -> tuple[float, float]:
    """Position [m] and rotation [rad] distance, computed here rather than taken from the servo's message."""
    angle = np.linalg.norm(pin.log3(a.rotation.T @ b.rotation))
    return float(np.linalg.norm(a.translation - b.translation)), float(angle)


def run(session, ticks):
    """Positions (ticks + 1, n) sampled after every advance of one servo period."""
    path = [session.positions.copy()]
    for _ in range(ticks):
        session.advance(SERVO_PERIOD)
        path.append(session.positions.copy())
    return np.array(path)


def acceleration_limits(session):
    limits = session.robot.acceleration_limits
    return np.where(np.isfinite(limits), limits, session.servo_config.default_joint_acceleration)


def test_pose_target_is_reached_within_the_joint_limits(arm, panda):
    arm.set_positions(panda.home())
    start = arm.tool_pose()
    target = pin.SE3(start.rotation @ pin.exp3(np.array([0.1, -0.2, 0.3])),
                     start.translation + np.array([0.06, -0.08, 0.05]))
    arm.set_target(target)
    assert arm.mode == TRACKING
    assert max(pose_error(arm.target(), target)) < 1e-9
    path = run(arm, 600)
    reached = pose_error(panda.fk(arm.positions), target)
    assert reached[0] < 1e-3 and reached[1] < 1e-3, reached
    assert "reached" in arm.message
    velocity = np.diff(path, axis=0) / SERVO_PERIOD                              # (ticks, n)
    assert np.all(np.abs(velocity) <= panda.limits.velocity * (1 + 1e-6))
    assert np.abs(velocity).max() > 0.05                                         # it did move
    acceleration = np.diff(velocity, axis=0) / SERVO_PERIOD
    assert np.all(np.abs(acceleration) <= acceleration_limits(arm) * (1 + 1e-6))
    assert np.all(path >= panda.limits.lower) and np.all(path <= panda.limits.upper)


def test_advance_runs_whole_servo_ticks(arm, panda):
    # floor(dt / period) ticks: half a period at a time moves every other call
    arm.set_positions(panda.home())
    start = arm.tool_pose()
    arm.set_target(pin.SE3(start.rotation, start.translation + np.array([0.0, 0.0, 0.05])))
    moved = []
    for _ in range(6):
        before = arm.positions.copy()
        arm.advance(0.5 * SERVO_PERIOD)
        moved.append(bool(np.any(arm.positions != before)))
    assert moved.count(True) == 3 and moved.count(False) == 3
    with pytest.raises(InvalidInputError, match="time step must be >= 0"):
        arm.advance(-1.0)


def test_target_out_of_reach_stops_short_and_says_why(arm, panda):
    arm.set_positions(panda.home())
    start = arm.tool_pose()
    far = pin.SE3(start.rotation, np.array([2.0, 0.3, 0.5]))                    # a Panda reaches ~0.85 m
    arm.set_target(far)
    path = run(arm, 500)
    assert np.isfinite(path).all()
    assert np.linalg.norm(panda.fk(arm.positions).translation) < 1.2
    assert "pose target error" in arm.message and "reached" not in arm.message
    assert np.all(np.abs(np.diff(path, axis=0)) <= panda.limits.velocity * SERVO_PERIOD * (1 + 1e-6))


def test_joint_pushed_against_its_limit_is_locked(arm, panda):
    q = panda.home()
    q[6] = panda.limits.upper[6] - 0.05
    arm.set_positions(q)
    tool = arm.tool_pose()
    # spinning the tool +2 rad about its own z needs joint 7 (its axis) far beyond the upper limit
    arm.set_target(pin.SE3(tool.rotation @ pin.exp3(np.array([0.0, 0.0, 2.0])), tool.translation.copy()))
    path = run(arm, 400)
    assert "panda_joint7" in arm.locked_joints
    assert "panda_joint7 locked at its upper limit" in arm.message
    assert path[:, 6].max() <= panda.limits.upper[6]


def test_moving_by_joint_values_stops_tracking(arm, panda):
    arm.set_positions(panda.home())
    arm.set_target(arm.tool_pose())
    arm.set_joint(0, 0.3)
    assert arm.mode == IDLE and arm.target() is None and arm.positions[0] == 0.3
    with pytest.raises(InvalidInputError, match="joint index 7 is outside 0..6"):
        arm.set_joint(7, 0.0)


def keyframes_near_home(session, robot):
    session.clear_keyframes()
    session.set_positions(robot.home())
    recorded = []
    for offset in ([0.3, 0.2, 0.0, 0.2, 0.0, 0.0, 0.3], [-0.2, 0.1, 0.2, -0.1, 0.3, -0.2, 0.0],
                   [0.0, -0.2, -0.2, 0.3, -0.3, 0.2, -0.4]):
        session.set_positions(robot.home() + np.array(offset))
        session.record_keyframe()
        recorded.append(session.positions.copy())
    session.set_positions(robot.home())
    return recorded


def test_playback_ends_on_the_last_keyframe_without_jumps(arm, panda):
    recorded = keyframes_near_home(arm, panda)
    assert len(arm.keyframes) == 3
    playback = arm.play()
    assert arm.mode == PLAYING and playback.kinds == ("MoveL",) * 3 and playback.fallbacks == ()
    dt = 0.01
    path = [arm.positions.copy()]
    for _ in range(int(np.ceil(playback.duration / dt)) + 2):
        arm.advance(dt)
        path.append(arm.positions.copy())
    assert arm.mode == IDLE and arm.message.startswith("playback finished")
    reached = pose_error(panda.fk(arm.positions), panda.fk(recorded[-1]))
    assert reached[0] < 1e-3 and reached[1] < 1e-3, reached
    jumps = np.abs(np.diff(np.array(path), axis=0))                              # (steps, n)
    assert np.all(jumps <= panda.limits.velocity * dt * 1.5)
    # the tool passes through the middle keyframe (a 20 mm zone blend at most)
    tools = np.array([panda.fk(q).translation for q in path])
    assert np.min(np.linalg.norm(tools - panda.fk(recorded[1]).translation, axis=1)) < 0.02


def test_line_through_the_base_axis_falls_back_to_move_j(ur5_arm, ur5):
    # the same tool position turned 180 deg about the base: the straight line crosses the base z axis, where a UR's
    # wrist centre cannot go (shoulder singularity)
    ur5_arm.clear_keyframes()
    first = ur5.home() + np.array([0.0, 0.37, -0.37, 0.0, 0.0, 0.0])
    second = first + np.array([np.pi, 0, 0, 0, 0, 0])
    for q in (first, second):
        ur5_arm.set_positions(q)
        ur5_arm.record_keyframe()
    ur5_arm.set_positions(first)
    playback = ur5_arm.play()
    assert playback.kinds == ("MoveL", "MoveJ")
    assert len(playback.fallbacks) == 1 and playback.fallbacks[0].startswith("keyframe 2 as MoveJ")
    assert "keyframe 2 as MoveJ" in ur5_arm.message
    ur5_arm.advance(playback.duration + 0.1)
    reached = pose_error(ur5.fk(ur5_arm.positions), ur5.fk(second))
    assert reached[0] < 1e-3 and reached[1] < 1e-3, reached


def test_playing_without_keyframes_raises(arm):
    arm.clear_keyframes()
    with pytest.raises(InvalidInputError, match="no keyframes"):
        arm.play()


def test_clearing_keyframes_stops_the_playback(arm, panda):
    keyframes_near_home(arm, panda)
    arm.play()
    arm.advance(0.2)
    held = arm.positions.copy()
    arm.clear_keyframes()
    assert arm.mode == IDLE and arm.playback is None and len(arm.keyframes) == 0
    assert "keyframes cleared" in arm.message
    arm.advance(0.5)
    np.testing.assert_array_equal(arm.positions, held)
