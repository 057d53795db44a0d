"""Paths and programs with several tips through path_ik_node's action (issue 26): sim_robot simulates `dual_panda`
and path_ik_node runs config/dual_panda_path_ik.yaml, both as processes.

Every figure is measured outside the node: the forward kinematics of what sim_robot's controller played (the
/joint_states during the goal) and of the trajectory the node returned, played as joint_trajectory_controller plays
it (quintic between the points, 1 kHz); never the plan's own deviation numbers. The moving tests send the arms back
to the module's start with a joint-space MOVE_J, so they do not depend on their order.
"""
import math
import os

import numpy as np
import pinocchio as pin
import pytest
from geometry_msgs.msg import PoseStamped
from node_process import PACKAGE_DIR
from path_graph import PathGraph, send, wait_still
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import Marker, MarkerArray

from robokin_interfaces.action import ExecuteCartesianPath
from robokin_interfaces.msg import MotionMove
from robokin_ros.core.errors import PathInputError
from robokin_ros.core.ik.pose_ik import solve_pose
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.deviation import controller_positions
from robokin_ros.core.program.moves import MotionProgram, Move, MoveKind, TipTarget
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.tips.held_object import relative_pose_error, take_grasp
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays
from robokin_ros.launch_support import arm_nodes
from robokin_ros.ros.path_conversions import motion_move_msgs, pose_msg, program_from_goal

Goal, Result = ExecuteCartesianPath.Goal, ExecuteCartesianPath.Result
PARAMS = str(PACKAGE_DIR / "config" / "dual_panda_path_ik.yaml")
LEFT, RIGHT = "left_panda_hand_tcp", "right_panda_hand_tcp"
# the hands face each other 30 cm apart, 0.5 m in front of the table's middle: both arms well inside their workspace
FACING = {LEFT: np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]]),
          RIGHT: np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])}
HANDS_AT = {LEFT: np.array([0.5, 0.15, 0.4]), RIGHT: np.array([0.5, -0.15, 0.4])}
SQUARE = np.array([[0, 0.1, 0], [0, 0.1, 0.2], [0, -0.1, 0.2], [0, -0.1, 0], [0, 0, 0]])    # 20 cm, object offsets
DEVIATION = 1e-4           # [m] the issue's figure: per tip, and the hands' relative pose
GOAL_TOLERANCE = 0.01      # [rad] path_ik_node's default goal_tolerance


@pytest.fixture(scope="module")
def robot():
    return RobotModel.load("dual_panda")


@pytest.fixture(scope="module")
def start_q(robot):
    q = robot.home()
    for tip in robot.tip_frames:
        found = solve_pose(robot, pin.SE3(FACING[tip], HANDS_AT[tip]), q, robot.frame_id(tip), 0.01)
        assert found.success
        q = found.positions
    return q


class TwoArmGraph(PathGraph):
    """sim_robot on dual_panda (hands on the box) and path_ik_node, a client with the action, /joint_states and the
    path markers."""

    def __init__(self, log_dir, start_q) -> None:
        start = "[" + ", ".join(f"{v:.17g}" for v in start_q) + "]"
        super().__init__(log_dir, "two_arm_path_client", sim_args=("-p", f"initial_positions:={start}"),
                         state_depth=100, robot="dual_panda", params=PARAMS)
        self.markers: list[MarkerArray] = []
        self.node.create_subscription(MarkerArray, "/path_ik_node/markers", self.markers.append, 10)


@pytest.fixture(scope="module")
def graph(tmp_path_factory, start_q):
    graph = TwoArmGraph(tmp_path_factory.mktemp("two_arm_paths"), start_q)
    try:
        graph.wait_ready()
        yield graph
    finally:
        graph.close()


def positions(robot, state: JointState) -> np.ndarray:
    by_name = dict(zip(state.name, state.position))
    return np.array([by_name[n] for n in robot.joint_names])


@pytest.fixture
def arms(graph, robot, start_q):
    """The graph with the arms at the module's start; afterwards they go back there."""
    wait_still(graph.executor, graph.states)
    np.testing.assert_allclose(positions(robot, graph.states[-1]), start_q, atol=GOAL_TOLERANCE)
    yield graph
    wait_still(graph.executor, graph.states)
    home = MotionMove(type=MotionMove.MOVE_J, joint_names=list(robot.joint_names), joint_positions=start_q.tolist())
    r = send(graph, Goal(program=[home]))
    assert r.error_code == Result.SUCCESS, r.message
    wait_still(graph.executor, graph.states)


def stamped(pose: pin.SE3, frame="world") -> PoseStamped:
    msg = PoseStamped()
    msg.header.frame_id = frame
    msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = (float(v) for v in pose.translation)
    o = msg.pose.orientation
    o.x, o.y, o.z, o.w = (float(v) for v in pin.Quaternion(pose.rotation).coeffs())
    return msg


def played_states(graph, goal, robot):
    """Send `goal`; (result, joint positions sim_robot published from the goal's acceptance to rest)."""
    first = len(graph.states)
    result = send(graph, goal)
    wait_still(graph.executor, graph.states)
    return result, np.array([positions(robot, s) for s in graph.states[first:]])


def sent_and_played(robot, trajectory: JointTrajectory) -> np.ndarray:
    """The returned trajectory as the controller plays it (quintic, 1 kHz), joint positions (K, n)."""
    times = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in trajectory.points])
    order = [list(trajectory.joint_names).index(n) for n in robot.joint_names]
    arrays = JointTrajectoryArrays(tuple(robot.joint_names), times,
                                   *(np.array([getattr(p, f) for p in trajectory.points])[:, order]
                                     for f in ("positions", "velocities", "accelerations")))
    return controller_positions(arrays, np.r_[np.arange(0.0, arrays.duration, 1e-3), arrays.duration])


def polyline_distance(point: np.ndarray, corners: np.ndarray) -> float:
    a, b = corners[:-1], corners[1:]
    t = np.clip(np.einsum("ij,ij->i", point - a, b - a) / np.einsum("ij,ij->i", b - a, b - a), 0.0, 1.0)
    return float(np.linalg.norm(a + t[:, None] * (b - a) - point, axis=1).min())


def square_figures(robot, Q: np.ndarray, starts: dict) -> tuple[dict, float, float]:
    """Per tip, the largest distance [m] of its FK along Q from its own square (the object's square carried as
    grasped: the object keeps its base axes, so each tip translates by the object's offsets); and the largest
    relative-pose drift of the right hand in the left hand's frame [m], [rad]."""
    deviation = {}
    for tip, start in starts.items():
        corners = np.vstack([start.translation, start.translation + SQUARE])
        deviation[tip] = max(polyline_distance(robot.fk(q, tip).translation, corners) for q in Q)
    held = starts[LEFT].actInv(starts[RIGHT])
    drift = np.array([relative_pose_error(robot.fk(q, LEFT), robot.fk(q, RIGHT), held) for q in Q])
    return (deviation, float(np.linalg.norm(drift[:, :3], axis=1).max()),
            float(np.linalg.norm(drift[:, 3:], axis=1).max()))


def test_carried_square_holds_each_tip_and_the_relative_pose_within_a_tenth_of_a_millimetre(arms, robot, start_q):
    starts = {tip: robot.fk(start_q, tip) for tip in robot.tip_frames}
    base_T_object, _ = take_grasp(list(starts.values()))
    program = [MotionMove(type=MotionMove.MOVE_L, pose=stamped(pin.SE3(np.eye(3), base_T_object.translation + d)),
                          carried=True, speed=0.1, name=f"corner{i}") for i, d in enumerate(SQUARE)]
    result, played = played_states(arms, Goal(program=program), robot)
    assert result.error_code == Result.SUCCESS, result.message
    assert result.failed_tip == "" and list(result.tip_names) == [LEFT, RIGHT]
    assert len(result.tip_position_deviations) == 2 and math.isfinite(result.relative_position_deviation)
    assert "per tip" in result.message, result.message
    moving = np.abs(np.diff(played, axis=0)).max(axis=1) > 0.0
    assert moving.sum() > 100, "the controller did not play the square"       # seconds of motion at the sim's rate
    sent = sent_and_played(robot, result.trajectory)
    for what, Q in (("played by sim_robot", played), ("sent, played at 1 kHz", sent)):
        deviation, rel_position, rel_orientation = square_figures(robot, Q, starts)
        print(f"{what}: deviation per tip [mm] " + ", ".join(f"{t} {d * 1e3:.4f}" for t, d in deviation.items())
              + f"; relative pose {rel_position * 1e3:.4f} mm / {rel_orientation * 1e3:.4f} mrad")
        assert all(d <= DEVIATION for d in deviation.values()), (what, deviation)
        assert rel_position <= DEVIATION, (what, rel_position)
        assert rel_orientation <= 1e-3, (what, rel_orientation)
    # RViz gets every tip's path: one line strip per tip through its planned positions
    strips = {m.ns: m for m in arms.markers[-1].markers if m.type == Marker.LINE_STRIP}
    assert set(strips) == {f"robokin_path/{LEFT}", f"robokin_path/{RIGHT}"}, set(strips)
    for tip in (LEFT, RIGHT):
        drawn = np.array([[p.x, p.y, p.z] for p in strips[f"robokin_path/{tip}"].points])
        corners = np.vstack([starts[tip].translation, starts[tip].translation + SQUARE])
        assert max(polyline_distance(p, corners) for p in drawn) <= DEVIATION
    # the square was travelled: every tip reached its far corner (the object's + (0, -0.1, 0.2))
    for tip, start in starts.items():
        far = start.translation + SQUARE[2]
        assert min(np.linalg.norm(robot.fk(q, tip).translation - far) for q in played) < 1e-3, tip


def test_a_move_naming_one_tip_moves_it_while_the_other_holds(arms, robot, start_q):
    right = robot.fk(start_q, RIGHT)
    target = pin.SE3(right.rotation, right.translation + np.array([0.0, 0.0, 0.08]))
    result, played = played_states(arms, Goal(program=[MotionMove(type=MotionMove.MOVE_L, pose=stamped(target),
                                                                  tip=RIGHT, speed=0.1)]), robot)
    assert result.error_code == Result.SUCCESS, result.message
    left = robot.fk(start_q, LEFT).translation
    still = max(np.linalg.norm(robot.fk(q, LEFT).translation - left) for q in played)
    assert still < 1e-9, still                                   # the left arm's joints never moved
    np.testing.assert_allclose(played[:, :7], np.tile(start_q[:7], (len(played), 1)), atol=1e-12)
    line = [polyline_distance(robot.fk(q, RIGHT).translation, np.vstack([right.translation, target.translation]))
            for q in sent_and_played(robot, result.trajectory)]
    assert max(line) <= DEVIATION, max(line)
    assert np.linalg.norm(robot.fk(played[-1], RIGHT).translation - target.translation) < 1e-3


def test_a_waypoint_goal_moves_the_tip_it_names(arms, robot, start_q):
    left = robot.fk(start_q, LEFT)
    target = pin.SE3(left.rotation, left.translation + np.array([0.05, 0.0, 0.0]))
    result, played = played_states(arms, Goal(waypoints=[stamped(target)], tip_frame=LEFT), robot)
    assert result.error_code == Result.SUCCESS, result.message
    np.testing.assert_allclose(played[:, 7:], np.tile(start_q[7:], (len(played), 1)), atol=1e-12)
    assert np.linalg.norm(robot.fk(played[-1], LEFT).translation - target.translation) < 1e-3


def test_a_failure_names_the_tip_and_returns_the_solved_part_without_moving(arms, robot, start_q):
    right = robot.fk(start_q, RIGHT)
    far = pin.SE3(right.rotation, right.translation + np.array([0.7, 0.0, 0.0]))     # beyond the right arm's reach
    result, played = played_states(arms, Goal(program=[MotionMove(type=MotionMove.MOVE_L, pose=stamped(far), tip=RIGHT,
                                                                  name="reach")]), robot)
    assert result.error_code not in (Result.SUCCESS, Result.INVALID_GOAL), result.message
    assert result.failed_tip == RIGHT and RIGHT in result.message, (result.failed_tip, result.message)
    assert result.failed_move == 0 and "reach" in result.message
    assert len(result.trajectory.points) > 1                     # the solved part is returned...
    Q = sent_and_played(robot, result.trajectory)
    progress = np.linalg.norm(robot.fk(Q[-1], RIGHT).translation - right.translation)
    assert progress > 0.05, progress                             # ...and reaches along the line toward the target
    np.testing.assert_allclose(played, np.tile(start_q, (len(played), 1)), atol=1e-12)    # but nothing moved


def _bad(robot, start_q, **fields):
    right = robot.fk(start_q, RIGHT)
    return MotionMove(type=MotionMove.MOVE_L, pose=stamped(pin.SE3(right.rotation, right.translation + 0.01)),
                      **fields)


def test_bad_tip_input_is_an_invalid_goal_with_a_reason_and_the_node_runs_on(arms, robot, start_q):
    left = stamped(robot.fk(start_q, LEFT))
    nan = stamped(robot.fk(start_q, LEFT))
    nan.pose.position.y = float("nan")
    cases = [(Goal(program=[_bad(robot, start_q, tip="middle_hand")]), "tip 'middle_hand' is not one of"),
             (Goal(program=[MotionMove(type=MotionMove.MOVE_L, target_tips=[LEFT, RIGHT], target_poses=[left])]),
              "2 target_tips but 1 target_poses"),
             (Goal(program=[MotionMove(type=MotionMove.MOVE_L, target_tips=[LEFT], target_poses=[nan])]),
              "non-finite"),
             (Goal(program=[_bad(robot, start_q, carried=True)], grasp_tips=[LEFT], grasp_object_to_tip=[]),
              "1 grasp_tips but 0 grasp_object_to_tip")]
    for goal, words in cases:
        result = send(arms, goal)
        assert result.error_code == Result.INVALID_GOAL, (words, result.message)
        assert words in result.message, (words, result.message)
    plan_only = send(arms, Goal(program=[_bad(robot, start_q, tip=RIGHT)], plan_only=True))
    assert plan_only.error_code == Result.SUCCESS, plan_only.message


def test_carried_on_a_one_tip_robot_is_an_invalid_goal_and_single_arm_goals_run_on(tmp_path, monkeypatch):
    """path_ik_node on the Panda (config/panda_path_ik.yaml): a carried move or a bimanual move is refused with the
    reason, a move naming the Panda's own tip plans as the move without it, and the node runs on. Its processes
    and client run in another ROS domain than the module's two-arm graph (same node and topic names)."""
    monkeypatch.setenv("ROS_DOMAIN_ID", str((int(os.environ.get("ROS_DOMAIN_ID", "0")) + 50) % 100 + 1))
    graph = PathGraph(tmp_path, "one_tip_client")
    try:
        graph.wait_ready()
        panda = RobotModel.load("panda")
        q = np.array(positions(panda, graph.states[-1]))
        target = stamped(pin.SE3(panda.fk(q).rotation, panda.fk(q).translation + [0.0, 0.0, 0.03]), "")
        carried = send(graph, Goal(program=[MotionMove(type=MotionMove.MOVE_L, pose=target, carried=True)]))
        assert carried.error_code == Result.INVALID_GOAL
        assert "carried-object move needs a robot with several tips" in carried.message, carried.message
        bimanual = send(graph, Goal(program=[MotionMove(type=MotionMove.MOVE_L, target_tips=["panda_hand_tcp"],
                                                        target_poses=[target])]))
        assert bimanual.error_code == Result.INVALID_GOAL and "needs a robot with several tips" in bimanual.message
        plain, named = (send(graph, Goal(program=[MotionMove(type=MotionMove.MOVE_L, pose=target, **tip)],
                                         plan_only=True)) for tip in ({}, {"tip": "panda_hand_tcp"}))
        assert plain.error_code == named.error_code == Result.SUCCESS, (plain.message, named.message)
        assert [p.positions for p in plain.trajectory.points] == [p.positions for p in named.trajectory.points]
        assert list(plain.tip_names) == [] and math.isnan(plain.relative_position_deviation)
    finally:
        graph.close()


def test_path_ik_launch_on_dual_panda_takes_the_two_arm_file_and_gives_the_sim_both_tips():
    """`ros2 launch robokin_ros path_ik.launch.py robot:=dual_panda sim:=true`: the node's parameters come from
    config/dual_panda_path_ik.yaml (tip_frames, one acceleration per joint of both arms) and sim_robot gets the
    same tips; the file builds a PathConfig that fits the model's 14 joints."""
    arguments = {"robot": "dual_panda", "sim": "true"}

    def value(name: str) -> str:
        return arguments.get(name, "")

    nodes, effective = arm_nodes(lambda **kw: kw, value, "path_ik_node", "path_ik")
    assert nodes[0]["parameters"][0].endswith("dual_panda_path_ik.yaml")
    assert list(effective["tip_frames"]) == [LEFT, RIGHT]
    sim_overrides = nodes[1]["parameters"][-1]
    assert list(sim_overrides["tip_frames"]) == [LEFT, RIGHT] and sim_overrides["robot"] == "dual_panda"
    config = PathConfig(max_joint_acceleration=tuple(effective["max_joint_acceleration"]))
    config.check_joint_lists(RobotModel.load("dual_panda").joint_names)


def test_tip_fields_round_trip_between_program_and_messages(robot, start_q):
    """motion_move_msgs (what a client sends) and program_from_goal (what the node reads) are inverse on every tip
    field: a one-tip move, a bimanual MoveC with a via per tip, a carried move; the grasp comes in the robot's tip
    order whatever order the goal names the tips in."""
    left, right = robot.fk(start_q, LEFT), robot.fk(start_q, RIGHT)
    up = np.array([0.0, 0.0, 0.05])
    moves = (Move(MoveKind.LINEAR, pose=pin.SE3(right.rotation, right.translation + up), tip=RIGHT, speed=0.1),
             Move(MoveKind.CIRCULAR, targets=(TipTarget(LEFT, left, left.translation + [0.02, 0, 0.02]),
                                              TipTarget(RIGHT, right, right.translation + [0.02, 0, 0.02]))),
             Move(MoveKind.LINEAR, pose=pin.SE3(np.eye(3), np.array([0.5, 0.0, 0.45])), carried=True))
    grasp = take_grasp([left, right])[1]
    goal = Goal(program=motion_move_msgs(MotionProgram(moves), robot), grasp_tips=[RIGHT, LEFT],
                grasp_object_to_tip=[pose_msg(grasp.object_T_tips[1]), pose_msg(grasp.object_T_tips[0])])
    program = program_from_goal(robot, start_q, goal, None, PathConfig())
    for sent, read in zip(moves, program.moves):
        assert (read.kind, read.tip, read.carried, read.speed) == (sent.kind, sent.tip, sent.carried, sent.speed)
        assert (read.pose is None) == (sent.pose is None) and (read.via is None) == (sent.via is None)
        if sent.pose is not None:
            assert np.allclose(read.pose.homogeneous, sent.pose.homogeneous, atol=1e-12)
        assert [t.tip for t in read.targets] == [t.tip for t in sent.targets]
        for a, b in zip(read.targets, sent.targets):
            assert np.allclose(a.pose.homogeneous, b.pose.homogeneous, atol=1e-12)
            np.testing.assert_allclose(a.via, b.via, atol=1e-12)
    for got, want in zip(program.grasp.object_T_tips, grasp.object_T_tips):
        assert np.allclose(got.homogeneous, want.homogeneous, atol=1e-12)
    one_tip = Goal(program=[MotionMove(type=MotionMove.MOVE_L, pose=stamped(right))])
    assert program_from_goal(robot, start_q, one_tip, None, PathConfig()).grasp is None
    for tips, words in (([LEFT, "middle"], "'middle' is not one of"), ([LEFT, LEFT], "name each of the robot's")):
        bad = Goal(program=[], grasp_tips=tips, grasp_object_to_tip=[pose_msg(left)] * 2)
        with pytest.raises(PathInputError, match=words):
            program_from_goal(robot, start_q, bad, None, PathConfig())
