"""plan_path with motion programs on a robot with several tips (issue 26): `tip:`, `targets:` and `carried: true`
moves in YAML, the per-tip deviations printed, the tip that failed named; judged on the written trajectory's FK."""
import re
from pathlib import Path

import numpy as np
import yaml

from robokin_ros.core.robot import RobotModel
from robokin_ros.tools.plan_path import main as plan_path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "programs" / "dual_panda_carry_square.yaml"
LEFT, RIGHT = "left_panda_hand_tcp", "right_panda_hand_tcp"
SQUARE = np.array([[0, 0.1, 0], [0, 0.1, 0.2], [0, -0.1, 0.2], [0, -0.1, 0], [0, 0, 0]])


def _written_positions(csv: Path, robot: RobotModel) -> np.ndarray:
    table = np.loadtxt(csv, delimiter=",", skiprows=1)
    header = csv.read_text().splitlines()[0].split(",")
    return table[:, [header.index(name) for name in robot.joint_names]]


def test_the_carried_square_example_plans_both_hands_and_prints_each_tips_deviation(tmp_path, capsys):
    assert plan_path([str(EXAMPLE), "--out", str(tmp_path / "carry")]) == 0
    out = capsys.readouterr().out
    for tip in (LEFT, RIGHT):
        assert f"tip {tip}: max deviation" in out, out
    assert "held relative pose: max drift" in out
    robot = RobotModel.load("dual_panda")
    Q = _written_positions(tmp_path / "carry.csv", robot)
    start = np.array(yaml.safe_load(EXAMPLE.read_text())["start_positions"], float)
    np.testing.assert_allclose(Q[0], start, atol=1e-12)
    for tip in (LEFT, RIGHT):
        path = np.array([robot.fk(q, tip).translation for q in Q])
        origin = robot.fk(start, tip).translation
        # the object's corners carried by each hand: the hand passes each of its own corners (a fine stop)
        for corner in origin + SQUARE:
            assert np.linalg.norm(path - corner, axis=1).min() < 1e-4, (tip, corner)
    # the right hand's own move: 5 cm up from its start while the left arm holds
    right_up = robot.fk(start, RIGHT).translation + [0, 0, 0.05]
    at = int(np.argmin([np.linalg.norm(robot.fk(q, RIGHT).translation - right_up) for q in Q]))
    assert np.linalg.norm(robot.fk(Q[at], RIGHT).translation - right_up) < 1e-4
    # the report's rows of moves 5 and 6 (start, duration): the left hand holds through them
    (up_start, _), (down_start, down_time) = (
        map(float, re.search(rf"{name}\s+([\d.]+)\s+([\d.]+)", out).groups())
        for name in ("5 MoveL right_up", "6 MoveL right_down"))
    times = np.loadtxt(tmp_path / "carry.csv", delimiter=",", skiprows=1)[:, 0]
    during = (times >= up_start) & (times <= down_start + down_time)
    assert during[at] and during.sum() > 50
    left = np.array([robot.fk(q, LEFT).translation for q in Q[during]])
    assert np.linalg.norm(left - left[0], axis=1).max() < 1e-4        # the left hand holds its pose
    # the last bimanual move: both hands 5 cm forward of their starts
    for tip in (LEFT, RIGHT):
        end = robot.fk(start, tip).translation + [0.05, 0, 0]
        assert np.linalg.norm(robot.fk(Q[-1], tip).translation - end) < 1e-4, tip


def test_a_failure_names_the_tip(tmp_path, capsys):
    data = yaml.safe_load(EXAMPLE.read_text())
    data["moves"] = [{"type": "MoveL", "name": "reach", "tip": RIGHT, "position": [0.7, 0, 0]}]
    program = tmp_path / "reach.yaml"
    program.write_text(yaml.safe_dump(data))
    assert plan_path([str(program), "--out", str(tmp_path / "reach")]) == 1
    out = capsys.readouterr().out
    assert f"failed tip: {RIGHT}" in out and "0 MoveL reach" in out, out


def test_carried_on_one_arm_is_refused_naming_the_move(tmp_path, capsys):
    program = tmp_path / "one_arm.yaml"
    program.write_text(yaml.safe_dump({"robot": "panda", "relative": True,
                                       "moves": [{"type": "MoveL", "carried": True, "position": [0, 0, 0.05]}]}))
    assert plan_path([str(program), "--out", str(tmp_path / "x")]) == 2
    assert "needs a robot with several tips" in capsys.readouterr().err
