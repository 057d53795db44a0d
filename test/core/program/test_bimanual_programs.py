"""Programs on two arms (issue 26): a carried square, one-tip moves, a failure per tip, bad input.

Every figure is measured on the timed trajectory as a joint_trajectory_controller plays it (its quintic through the
points, sampled at 1 kHz), through Pinocchio's FK of each tip (`RobotModel.fk`): not from the plan's own numbers.
"""
import functools

import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.errors import PathInputError
from robokin_ros.core.ik.pose_ik import solve_pose
from robokin_ros.core.path.deviation import controller_positions
from robokin_ros.core.program.moves import MotionProgram, Move, MoveKind, TipTarget
from robokin_ros.core.program.planner import MotionPlanner
from robokin_ros.core.program.program_file import program_from_mapping
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.tips.held_object import relative_pose_error, take_grasp
from robokin_ros.core.trajectory.controller_rules import PointFacts, TrajectoryFacts
from robokin_ros.core.trajectory.outgoing_check import outgoing_rejection

LEFT, RIGHT = "left_panda_hand_tcp", "right_panda_hand_tcp"
# hands facing each other 0.3 m apart in front of the table: the left's approach axis (z) points to -y, the right's +y
LEFT_R = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
RIGHT_R = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
PLAY_RATE = 1000.0          # [Hz] the dense FK of the played trajectory


@functools.lru_cache
def two_arms(name: str):
    """(robot, planner, start): both hands at x 0.5 m, z 0.4 m, 0.3 m apart, facing each other (pose IK from home,
    one arm after the other)."""
    robot = RobotModel.load(name)
    q = robot.home()
    for tip, rotation, y in ((LEFT, LEFT_R, 0.15), (RIGHT, RIGHT_R, -0.15)):
        found = solve_pose(robot, pin.SE3(rotation, np.array([0.5, y, 0.4])), q, robot.frame_id(tip), 0.01)
        assert found.success
        q = found.positions
    return robot, MotionPlanner(robot), q


@pytest.fixture(scope="module")
def robot():
    return two_arms("dual_panda")[0]


@pytest.fixture(scope="module")
def planner():
    return two_arms("dual_panda")[1]


@pytest.fixture(scope="module")
def start():
    return two_arms("dual_panda")[2]


def played(robot, trajectory, tip):
    """(times, poses) of `tip` on the controller's spline through the trajectory's points, at PLAY_RATE."""
    times = np.arange(0.0, trajectory.duration, 1.0 / PLAY_RATE)
    q = controller_positions(trajectory, np.r_[times, trajectory.duration])
    return [robot.fk(row, tip) for row in q]


def distance_to_polyline(point, corners):
    """[m] distance of a point from the polyline through `corners` (K, 3)."""
    best = np.inf
    for a, b in zip(corners[:-1], corners[1:]):
        t = np.clip(np.dot(point - a, b - a) / np.dot(b - a, b - a), 0.0, 1.0)
        best = min(best, float(np.linalg.norm(a + t * (b - a) - point)))
    return best


def assert_sendable(robot, planner, trajectory):
    """The outgoing check a path_ik_node applies: a default JTC's rules and the joint limits on its spline."""
    points = [PointFacts(p, v, a, [], float(t)) for t, p, v, a in
              zip(trajectory.times, trajectory.positions, trajectory.velocities, trajectory.accelerations)]
    v_max, a_max = planner.limits()[:2]
    rejection = outgoing_rejection(TrajectoryFacts(list(trajectory.joint_names), points, 0), robot.joint_names, 0,
                                   v_max, a_max)
    assert rejection is None, rejection


@pytest.mark.parametrize("name", ["dual_panda", "dual_panda_torso"])
def test_a_carried_square_keeps_both_tips_on_their_paths_and_the_grasp(name):
    """A 20 cm square carried by both hands: each tip within 0.1 mm of its square, the relative pose within 0.1 mm
    and 1 mrad, both tips at each corner in the same trajectory point. With a torso joint shared by both arms too."""
    robot, planner, start = two_arms(name)
    poses = [robot.fk(start, tip) for tip in (LEFT, RIGHT)]
    base_T_object, grasp = take_grasp(poses)
    centre = base_T_object.translation
    offsets = np.array([[0, 0.1, 0], [0, 0.1, 0.2], [0, -0.1, 0.2], [0, -0.1, 0], [0, 0, 0]])
    program = MotionProgram(tuple(Move(MoveKind.LINEAR, pose=pin.SE3(np.eye(3), centre + d), carried=True,
                                       speed=0.1) for d in offsets))
    plan = planner.plan(program, start)
    assert plan.success, plan.message
    trajectory = plan.trajectory
    assert trajectory.duration > 0.8 / 0.1                  # 0.8 m at 0.1 m/s at most
    held = poses[0].actInv(poses[1])
    left, right = played(robot, trajectory, LEFT), played(robot, trajectory, RIGHT)
    for tip_poses, start_pose in ((left, poses[0]), (right, poses[1])):
        corners = np.vstack([start_pose.translation, start_pose.translation + offsets])
        deviation = max(distance_to_polyline(p.translation, corners) for p in tip_poses)
        turn = max(np.linalg.norm(pin.log3(start_pose.rotation.T @ p.rotation)) for p in tip_poses)
        assert deviation <= 1e-4 and turn <= 1e-3, (deviation, turn)
    drift = np.array([relative_pose_error(a, b, held) for a, b in zip(left, right)])
    assert np.linalg.norm(drift[:, :3], axis=1).max() <= 1e-4
    assert np.linalg.norm(drift[:, 3:], axis=1).max() <= 1.2e-3
    # the corners: the trajectory points where each tip is at its corner (within 10 um) are the same points
    for d in offsets[:-1]:
        there = []
        for tip, start_pose in ((LEFT, poses[0]), (RIGHT, poses[1])):
            gaps = np.array([np.linalg.norm(robot.fk(q, tip).translation - (start_pose.translation + d))
                             for q in trajectory.positions])
            there.append(np.flatnonzero(gaps < 1e-5).tolist())
        assert there[0] and there[0] == there[1]
    assert_sendable(robot, planner, trajectory)
    assert {t for t, _, _ in plan.tip_deviations} == {LEFT, RIGHT}
    assert plan.relative_deviation is not None


def test_a_carried_object_blends_its_zones_and_follows_an_arc(robot, planner, start):
    """Carried moves with zones, a MoveC and a turn of the object: the hands pass the blended corners without
    stopping and keep their relative pose within 0.1 mm / 1 mrad on the played trajectory."""
    poses = [robot.fk(start, tip) for tip in (LEFT, RIGHT)]
    base_T_object, _ = take_grasp(poses)
    c = base_T_object.translation
    moves = (Move(MoveKind.LINEAR, pose=pin.SE3(np.eye(3), c + [0, 0.1, 0]), carried=True, zone=0.03),
             Move(MoveKind.CIRCULAR, pose=pin.SE3(pin.exp3(np.array([0, 0, 0.2])), c + [0, -0.1, 0]),
                  via=c + [0.1, 0, 0], carried=True, zone=0.02),
             Move(MoveKind.LINEAR, pose=pin.SE3(np.eye(3), c), carried=True))
    plan = planner.plan(MotionProgram(moves), start)
    assert plan.success, plan.message
    assert [m.zone for m in plan.moves] == [0.03, 0.02, 0.0]
    held = poses[0].actInv(poses[1])
    drift = np.array([relative_pose_error(a, b, held) for a, b in
                      zip(played(robot, plan.trajectory, LEFT), played(robot, plan.trajectory, RIGHT))])
    assert np.linalg.norm(drift[:, :3], axis=1).max() <= 1e-4
    assert np.linalg.norm(drift[:, 3:], axis=1).max() <= 1e-3
    speed = np.linalg.norm(plan.trajectory.velocities, axis=1)
    assert speed[1:-1].min() > 0.0                      # no stop between the first and the last point
    end = robot.fk(plan.trajectory.positions[-1], LEFT)
    assert np.linalg.norm(end.translation - poses[0].translation) < 1e-5
    assert_sendable(robot, planner, plan.trajectory)


def test_a_bimanual_arc_brings_both_tips_through_their_vias(robot, planner, start):
    left0, right0 = robot.fk(start, LEFT), robot.fk(start, RIGHT)
    up = np.array([0.0, 0.0, 0.1])
    move = Move(MoveKind.CIRCULAR, targets=(
        TipTarget(LEFT, pin.SE3(left0.rotation, left0.translation + up), left0.translation + [0.05, 0, 0.05]),
        TipTarget(RIGHT, pin.SE3(right0.rotation, right0.translation + up), right0.translation + [-0.05, 0, 0.05])))
    plan = planner.plan(MotionProgram((move,)), start)
    assert plan.success, plan.message
    for tip, tip0, bulge in ((LEFT, left0, 1.0), (RIGHT, right0, -1.0)):
        centre = tip0.translation + [0.0, 0.0, 0.05]              # the circle through start, via and end
        path = played(robot, plan.trajectory, tip)
        radii = [np.linalg.norm(p.translation - centre) for p in path]
        assert max(abs(r - 0.05) for r in radii) <= 1e-4
        assert max(bulge * (p.translation[0] - tip0.translation[0]) for p in path) == pytest.approx(0.05, abs=1e-4)
    assert_sendable(robot, planner, plan.trajectory)


def test_bimanual_moves_blend_their_zones_together(robot, planner, start):
    """Three bimanual moves, 20 mm zones at the two corners: the arms never stop between the first and the last
    point, each hand stays within 0.1 mm of its lines away from the zones, passes every corner within its zone,
    and both end at their last targets."""
    left0, right0 = robot.fk(start, LEFT), robot.fk(start, RIGHT)
    offsets = {LEFT: [[0, 0, 0.1], [0.1, 0, 0.1], [0.1, 0, 0]],
               RIGHT: [[0, -0.05, 0.05], [0.05, -0.05, 0.05], [0.05, 0, 0]]}
    poses = {LEFT: left0, RIGHT: right0}

    def target(tip, j):
        return TipTarget(tip, pin.SE3(poses[tip].rotation, poses[tip].translation + offsets[tip][j]))
    moves = tuple(Move(MoveKind.LINEAR, targets=(target(LEFT, j), target(RIGHT, j)), zone=0.02 if j < 2 else 0.0)
                  for j in range(3))
    plan = planner.plan(MotionProgram(moves), start)
    assert plan.success, plan.message
    assert not plan.notes
    speed = np.linalg.norm(plan.trajectory.velocities, axis=1)
    assert speed[1:-1].min() > 0.0
    for tip in (LEFT, RIGHT):
        corners = np.vstack([poses[tip].translation, poses[tip].translation + np.array(offsets[tip])])
        path = np.array([p.translation for p in played(robot, plan.trajectory, tip)])
        near = np.min([np.linalg.norm(path - c, axis=1) for c in corners[1:3]], axis=0) <= 0.02
        assert max(distance_to_polyline(p, corners) for p in path[~near]) <= 1e-4
        for c in corners[1:3]:
            assert np.linalg.norm(path - c, axis=1).min() <= 0.02
        assert np.linalg.norm(path[-1] - corners[-1]) < 1e-5
    assert_sendable(robot, planner, plan.trajectory)


def test_a_given_grasp_is_the_one_taken_at_the_start(robot, planner, start):
    """The program's grasp, when it holds the hands where they are, plans what the grasp taken at the start does
    (to rounding: the test's grasp comes from Pinocchio's FK, the planner's from its own chains)."""
    poses = [robot.fk(start, tip) for tip in (LEFT, RIGHT)]
    base_T_object, grasp = take_grasp(poses)
    move = Move(MoveKind.LINEAR, pose=pin.SE3(np.eye(3), base_T_object.translation + [0.0, 0.0, 0.05]), carried=True)
    taken = planner.plan(MotionProgram((move,)), start)
    given = planner.plan(MotionProgram((move,), grasp=grasp), start)
    assert taken.success and np.abs(taken.trajectory.positions - given.trajectory.positions).max() < 1e-9


def test_a_move_for_one_tip_holds_the_other(robot, planner, start):
    """A MoveL of the right hand 10 cm up: it follows its line; the left hand stays where it is (< 1e-6 m)."""
    right0, left0 = robot.fk(start, RIGHT), robot.fk(start, LEFT)
    target = pin.SE3(right0.rotation, right0.translation + np.array([0.0, 0.0, 0.1]))
    plan = planner.plan(MotionProgram((Move(MoveKind.LINEAR, pose=target, tip=RIGHT),)), start)
    assert plan.success, plan.message
    left = played(robot, plan.trajectory, LEFT)
    assert max(np.linalg.norm(p.translation - left0.translation) for p in left) < 1e-6
    assert max(np.linalg.norm(pin.log3(left0.rotation.T @ p.rotation)) for p in left) < 1e-6
    right = played(robot, plan.trajectory, RIGHT)
    line = np.array([right0.translation, target.translation])
    assert max(distance_to_polyline(p.translation, line) for p in right) <= 1e-4
    assert np.linalg.norm(right[-1].translation - target.translation) < 1e-5
    assert_sendable(robot, planner, plan.trajectory)


def test_on_a_shared_torso_the_holding_hand_compensates_the_torso():
    """dual_panda_torso: the right hand's MoveL turns the shared torso joint, and the left arm keeps its hand where
    it was (measured 0.2 um; its rows ask for zero motion, so only the timing's spline tolerances remain)."""
    robot, planner, start = two_arms("dual_panda_torso")
    right0, left0 = robot.fk(start, RIGHT), robot.fk(start, LEFT)
    target = pin.SE3(right0.rotation, right0.translation + np.array([0.0, -0.1, 0.1]))
    plan = planner.plan(MotionProgram((Move(MoveKind.LINEAR, pose=target, tip=RIGHT),)), start)
    assert plan.success, plan.message
    assert np.ptp(plan.trajectory.positions[:, 0]) > 0.01                   # the torso turned
    left = played(robot, plan.trajectory, LEFT)
    assert max(np.linalg.norm(p.translation - left0.translation) for p in left) < 1e-5
    assert_sendable(robot, planner, plan.trajectory)


def test_a_movej_to_a_tip_pose_moves_that_arm_only(robot, planner, start):
    left0 = robot.fk(start, LEFT)
    target = pin.SE3(left0.rotation, left0.translation + np.array([0.0, 0.0, 0.1]))
    plan = planner.plan(MotionProgram((Move(MoveKind.JOINT, pose=target, tip=LEFT),
                                       Move(MoveKind.JOINT, joints=start, joint_speed=0.5))), start)
    assert plan.success, plan.message
    q = plan.trajectory.positions
    reached = np.argmin([np.linalg.norm(robot.fk(row, LEFT).translation - target.translation) for row in q])
    assert np.linalg.norm(robot.fk(q[reached], LEFT).translation - target.translation) < 1e-6
    assert np.abs(q[:, 7:] - start[7:]).max() < 1e-12                     # the right arm never moved
    assert np.abs(q[-1] - start).max() < 1e-12
    assert_sendable(robot, planner, plan.trajectory)


def test_a_bimanual_move_brings_both_tips_to_their_targets_at_once(robot, planner, start):
    """Targets for both tips in one move: both arrive at the last point, each along its line in proportion to the
    other all the way (the one with the longer line sets the pace)."""
    left0, right0 = robot.fk(start, LEFT), robot.fk(start, RIGHT)
    left1 = pin.SE3(left0.rotation, left0.translation + np.array([-0.05, 0.0, 0.05]))      # 7 cm
    right1 = pin.SE3(right0.rotation, right0.translation + np.array([0.0, -0.15, 0.0]))    # 15 cm: sets the count
    move = Move(MoveKind.LINEAR, targets=(TipTarget(LEFT, left1), TipTarget(RIGHT, right1)))
    plan = planner.plan(MotionProgram((move,)), start)
    assert plan.success, plan.message
    q = plan.trajectory.positions
    for tip, target in ((LEFT, left1), (RIGHT, right1)):
        gaps = np.array([np.linalg.norm(robot.fk(row, tip).translation - target.translation) for row in q])
        assert gaps[-1] < 1e-5
    # progress along each line is in proportion: the tips move synchronously
    for row in controller_positions(plan.trajectory, np.linspace(0.0, plan.trajectory.duration, 300)):
        share_l = np.linalg.norm(robot.fk(row, LEFT).translation - left0.translation) / np.linalg.norm(
            left1.translation - left0.translation)
        share_r = np.linalg.norm(robot.fk(row, RIGHT).translation - right0.translation) / 0.15
        assert abs(share_l - share_r) < 2e-3
    assert_sendable(robot, planner, plan.trajectory)


def test_a_path_only_the_right_arm_cannot_follow_returns_the_solved_part_and_names_it(robot, planner, start):
    """The right hand is sent 0.8 m forward (beyond its reach) while the left moves 5 cm: the plan fails, names the
    right tip, and its trajectory is the solved part, ending at rest."""
    left0, right0 = robot.fk(start, LEFT), robot.fk(start, RIGHT)
    left1 = pin.SE3(left0.rotation, left0.translation + np.array([0.0, 0.0, 0.05]))
    right1 = pin.SE3(right0.rotation, right0.translation + np.array([0.8, 0.0, 0.0]))
    program = MotionProgram((Move(MoveKind.LINEAR, targets=(TipTarget(LEFT, left1), TipTarget(RIGHT, right1))),))
    plan = planner.plan(program, start)
    assert not plan.success
    assert plan.failed_tip == RIGHT and RIGHT in plan.message and plan.failed_move == 0
    assert plan.message.startswith("0 MoveL: ")
    assert plan.trajectory is not None and plan.trajectory.duration > 0
    assert np.abs(plan.trajectory.velocities[-1]).max() < 1e-9
    reached = robot.fk(plan.trajectory.positions[-1], RIGHT).translation[0] - right0.translation[0]
    assert 0.05 < reached < 0.8
    assert_sendable(robot, planner, plan.trajectory)


def test_a_joint_limit_names_the_tip_and_the_joint(robot, planner, start):
    """Turning the right hand 3 rad about its approach axis drives right_panda_joint7 into its limit (2.8973 rad
    less the 0.01 rad margin): JOINT_LIMIT, naming the right tip and that joint; the left hand never moved."""
    right0, left0 = robot.fk(start, RIGHT), robot.fk(start, LEFT)
    target = pin.SE3(right0.rotation @ pin.exp3(np.array([0.0, 0.0, 3.0])), right0.translation)
    plan = planner.plan(MotionProgram((Move(MoveKind.LINEAR, pose=target, tip=RIGHT),)), start)
    assert int(plan.status) == 3 and plan.failed_tip == RIGHT
    assert f"a joint of {RIGHT}'s chain reached its position limit" in plan.message
    assert "joint 'right_panda_joint7'" in plan.message
    last = plan.trajectory.positions[-1]
    assert last[13] == pytest.approx(robot.limits.upper[13] - 0.01, abs=0.02)
    assert np.linalg.norm(robot.fk(last, LEFT).translation - left0.translation) < 1e-9
    assert_sendable(robot, planner, plan.trajectory)


def test_bad_tip_input_is_refused_with_the_reason(robot, planner, start):
    pose = robot.fk(start, LEFT)
    with pytest.raises(PathInputError, match=r"tip 'left_hand' is not one of the robot's tips \['left_panda"):
        planner.plan(MotionProgram((Move(MoveKind.LINEAR, pose=pose, tip="left_hand"),)), start)
    with pytest.raises(PathInputError, match="tips named more than once"):
        planner.plan(MotionProgram((Move(MoveKind.LINEAR, targets=(TipTarget(LEFT, pose), TipTarget(LEFT, pose))),)),
                     start)
    with pytest.raises(PathInputError, match="leave pose, via, tip and carried unset"):
        planner.plan(MotionProgram((Move(MoveKind.LINEAR, pose=pose, targets=(TipTarget(LEFT, pose),)),)), start)
    left0, right0 = robot.fk(start, LEFT), robot.fk(start, RIGHT)
    wide = take_grasp([left0, pin.SE3(right0.rotation, right0.translation + np.array([0.0, -0.01, 0.0]))])[1]
    with pytest.raises(PathInputError, match="the program's grasp puts right_panda_hand_tcp 10.00 mm"):
        planner.plan(MotionProgram((Move(MoveKind.LINEAR, pose=pose, carried=True),), grasp=wide), start)
    with pytest.raises(PathInputError, match="all six axes"):
        planner.plan(MotionProgram((Move(MoveKind.LINEAR, pose=pose, tip=LEFT),)), start,
                     axis_mask=[True, True, True, False, False, True])


def test_a_one_tip_robot_refuses_moves_of_several_tips():
    panda = RobotModel.load("panda")
    planner = MotionPlanner(panda)
    q = panda.home()
    pose = panda.fk(q)
    with pytest.raises(PathInputError, match="a bimanual move .* needs a robot with several tips"):
        planner.plan(MotionProgram((Move(MoveKind.LINEAR, targets=(TipTarget(panda.tip_frame, pose),)),)), q)
    with pytest.raises(PathInputError, match="a carried-object move needs a robot with several tips"):
        planner.plan(MotionProgram((Move(MoveKind.LINEAR, pose=pose, carried=True),)), q)
    with pytest.raises(PathInputError, match="carrying an object needs several tips"):
        planner.plan(MotionProgram((Move(MoveKind.LINEAR, pose=pose),), grasp=take_grasp([pose])[1]), q)
    with pytest.raises(PathInputError, match="tip 'right_panda_hand_tcp' is not one of the robot's tips"):
        planner.plan(MotionProgram((Move(MoveKind.LINEAR, pose=pose, tip=RIGHT),)), q)


def test_warm_up_plans_a_short_move_on_two_arms():
    """The path node warms its planner up at start: on two arms that is a 2 mm move of the first tip."""
    MotionPlanner(RobotModel.load("dual_panda")).warm_up()


def test_a_program_file_names_tips_targets_and_the_carried_object(robot, planner, start):
    """The YAML form: relative positions of a tip's move from that tip's start, of a carried move from the object's
    (the tips' centroid), of each bimanual target from its own tip's start."""
    tip_starts = {tip: robot.fk(start, tip) for tip in (LEFT, RIGHT)}
    data = {"relative": True, "moves": [
        {"type": "MoveL", "carried": True, "position": [0, 0, 0.05], "zone": "z10"},
        {"type": "MoveL", "carried": True, "position": [0.05, 0, 0.05]},
        {"type": "MoveL", "tip": RIGHT, "position": [0.05, -0.05, 0.05]},
        {"type": "MoveL", "targets": [{"tip": LEFT, "position": [0, 0, 0]}, {"tip": RIGHT, "position": [0, 0, 0]}]},
    ]}
    program = program_from_mapping(data, tip_starts[LEFT], robot.n, tip_starts=tip_starts)
    centre = take_grasp(list(tip_starts.values()))[0].translation
    assert program.moves[0].carried and np.allclose(program.moves[0].pose.translation, centre + [0, 0, 0.05])
    assert program.moves[2].tip == RIGHT
    assert np.allclose(program.moves[2].pose.translation, tip_starts[RIGHT].translation + [0.05, -0.05, 0.05])
    assert [t.tip for t in program.moves[3].targets] == [LEFT, RIGHT]
    plan = planner.plan(program, start)
    assert plan.success, plan.message
    for tip, pose in tip_starts.items():                                      # back where both hands started
        assert np.linalg.norm(robot.fk(plan.trajectory.positions[-1], tip).translation - pose.translation) < 1e-5
    with pytest.raises(PathInputError, match=r"moves\[0\]: tip 'right_panda_hand_tcp' needs the tips' start poses"):
        program_from_mapping({"moves": [{"type": "MoveL", "tip": RIGHT, "position": [0.5, 0, 0.5]}]},
                             tip_starts[LEFT], robot.n)
