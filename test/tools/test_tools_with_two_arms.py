"""The offline tools that take a robot, given a robot with two arms (issue 26): `robokin fk` lists both arms and
both tips, capability_view draws one branch per tip and analyses the first tip."""
import numpy as np

from robokin_ros.core.robot import RobotModel
from robokin_ros.tools.capability_view import arm_points
from robokin_ros.tools.robokin_cli import main
from robokin_ros.tools.robokin_cli.fk import robot_frames

TIPS = ("left_panda_hand_tcp", "right_panda_hand_tcp")


def test_fk_lists_both_arms_and_both_tips_at_their_poses():
    robot = RobotModel.load("dual_panda")
    names, frames, q = robot_frames("dual_panda", None)
    assert names[0] == "world" and names[-2:] == list(TIPS)
    assert {f"{side}panda_link7" for side in ("left_", "right_")} <= set(names)
    for tip in TIPS:
        np.testing.assert_array_equal(frames[names.index(tip)], robot.fk(q, tip).homogeneous)


def test_fk_command_runs_for_two_arms(capsys):
    assert main(["fk", "--robot", "dual_panda_torso"]) == 0
    out = capsys.readouterr().out
    assert "torso" in out and all(tip in out for tip in TIPS)


def test_capability_view_draws_each_arm_from_the_base_out():
    robot = RobotModel.load("dual_panda")
    q = robot.home()
    points = arm_points(robot, q)
    assert np.isfinite(points).all()
    # the polyline passes through every tip and returns to the base between the branches
    for tip in TIPS:
        assert np.abs(points - robot.fk(q, tip).translation).sum(axis=1).min() == 0.0
    assert np.array_equal(points[0], np.zeros(3)) and (np.abs(points).sum(axis=1) == 0.0).sum() >= 2


def test_capability_view_of_one_arm_is_the_chain_as_before():
    robot = RobotModel.load("panda")
    q = robot.home()
    chain = [robot.frame_id(name) for name in robot.chain_link_frames()]
    expected = np.vstack([np.zeros(3)] + [pose.translation for pose in robot.frame_poses(q, chain)])
    np.testing.assert_array_equal(arm_points(robot, q), expected)
