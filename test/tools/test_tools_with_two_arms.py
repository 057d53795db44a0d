"""The offline tools that take a robot, given a robot with two arms (issue 26): `robokin fk` lists both arms and
both tips, capability_view draws one branch per tip and analyses the first tip, plan_path plans a waypoint file
on one tip."""
from pathlib import Path

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


def test_plan_path_plans_a_waypoint_file_on_one_tip_of_two_arms(tmp_path, capsys):
    from robokin_ros.tools.plan_path import main as plan_path
    rectangle = str(Path(__file__).resolve().parents[2] / "examples" / "paths" / "panda_rectangle.yaml")
    assert plan_path([rectangle, "--robot", "dual_panda", "--tip", TIPS[1], "--out", str(tmp_path / "r")]) == 0
    assert "planning the chain world -> right_panda_hand_tcp (7 joints" in capsys.readouterr().err
    header = (tmp_path / "r.csv").read_text().splitlines()[0].split(",")
    assert header[1:8] == [f"right_panda_joint{i}" for i in range(1, 8)]
    assert plan_path([rectangle, "--robot", "dual_panda", "--tip", "panda_link3", "--out", str(tmp_path / "x")]) == 2
    assert "plans one of its tips" in capsys.readouterr().err
