"""Every scaling input with 0, 1, 1.0001, 50, NaN, inf and -1 gets the documented answer (core/scaling.py; issue 23
part C): the core API (a path, a one-waypoint MoveJ approach, a motion program and its moves), the program file,
plan_path (the CLI), the studio's keyframe playback and the servo's override_velocity_scaling_factor. The action
through path_ik_node is test/ros/test_scaling_goals.py."""
import math
import re

import numpy as np
import pinocchio as pin
import pytest
import yaml

from robokin_ros.core.errors import ConfigError, InvalidInputError, PathInputError
from robokin_ros.core.trajectory.outgoing_check import spline_peaks
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.program.moves import Approach, MotionProgram, Move, MoveKind, waypoint_program
from robokin_ros.core.program.planner import MotionPlanner
from robokin_ros.core.program.program_file import program_from_mapping
from robokin_ros.core.scaling import SCALING_RULE, resolve_scaling, scaling_problem, speed_problem
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.studio.keyframes import Keyframe, plan_playback
from robokin_ros.tools import plan_path

VALUES = (0.0, 1.0, 1.0001, 50.0, math.nan, math.inf, -1.0)
VALID = {0.0, 1.0}
RULE = re.escape("a scaling must be a finite number in (0, 1] (a fraction of the limits), or 0 for")
PANDA_ACC = (15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0)


def refused(name: str, value) -> str:
    """The start of the refusal message for `name` = `value`."""
    return re.escape(f"{name}={value!r} is refused: ") + RULE


@pytest.mark.parametrize("value", VALUES)
def test_the_rule(value):
    if value in VALID:
        assert scaling_problem("velocity_scaling", value) is None
        assert resolve_scaling("velocity_scaling", value, 0.4) == (0.4 if value == 0.0 else value)
        return
    with pytest.raises(InvalidInputError, match=refused("velocity_scaling", value) + r" the default, 0\.4$"):
        resolve_scaling("velocity_scaling", value, 0.4)
    assert resolve_scaling("velocity_scaling", None, 0.4) == 0.4
    assert SCALING_RULE in scaling_problem("x", value)


def test_not_numbers_and_speeds():
    for value in ("fast", None, True, [0.5]):
        assert scaling_problem("velocity_scaling", value) is not None
    assert speed_problem("speed", 0.0, "m/s") is None and speed_problem("speed", 50.0, "m/s") is None
    for value in (-1.0, math.nan, math.inf, "fast"):
        assert "a speed must be a finite number >= 0, 0 for no limit" in speed_problem("speed", value, "m/s")


@pytest.fixture(scope="module")
def planner(panda):
    return MotionPlanner(panda, PathConfig(max_joint_acceleration=PANDA_ACC, velocity_scaling=0.5))


def away(panda, offset=(0.15, 0.1, -0.12)):
    """A waypoint 22 cm from the tool at home."""
    T = panda.fk(panda.home())
    return pin.SE3(T.rotation, T.translation + np.array(offset))


def played_ratios(trajectory, planner):
    v_max, a_max = planner.limits()[:2]
    played = spline_peaks(trajectory.times, trajectory.positions, trajectory.velocities, trajectory.accelerations)
    return (played.velocity / v_max).max(), (played.acceleration / a_max).max()


@pytest.mark.parametrize("field", ["velocity_scaling", "acceleration_scaling"])
@pytest.mark.parametrize("value", VALUES)
def test_core_api_one_waypoint_movej_approach(panda, planner, field, value):
    """Issue 23: a MoveJ approach to one waypoint took any scaling (50: 5.6x the velocity limit, 50x the
    acceleration limit). Now the rule; 0 = the config's (velocity 0.5 here)."""
    assert np.linalg.norm(away(panda).translation - panda.fk(panda.home()).translation) == pytest.approx(0.22, abs=0.01)
    if value not in VALID:
        for approach in Approach:             # PATH: the waypoint path without an approach move
            with pytest.raises(InvalidInputError, match=refused(field, value)):
                planner.plan(waypoint_program([away(panda)], 0.0, approach), panda.home(), **{field: value})
        return
    plan = planner.plan(waypoint_program([away(panda)], 0.0, Approach.JOINT), panda.home(), **{field: value})
    assert plan.success and plan.approach is not None
    v_ratio, a_ratio = played_ratios(plan.trajectory, planner)
    assert v_ratio <= (0.5 if field == "acceleration_scaling" or value == 0.0 else 1.0) * (1 + 1e-3)
    assert a_ratio <= 1 + 1e-3


@pytest.mark.parametrize("value", VALUES)
def test_programs_and_their_moves(panda, planner, value):
    """A program's fractions and each move's: 0 = the next level's (move -> program -> config)."""
    programs = planner
    target = panda.home() + np.array([0.3, -0.2, 0.2, 0.2, -0.2, 0.25, 0.3])
    cases = {"program velocity_scaling": MotionProgram((Move(MoveKind.JOINT, joints=target),), velocity_scaling=value),
             "program acceleration_scaling": MotionProgram((Move(MoveKind.JOINT, joints=target),),
                                                           acceleration_scaling=value),
             "move 0 (MoveJ): joint_speed": MotionProgram((Move(MoveKind.JOINT, joints=target, joint_speed=value),)),
             "move 0 (MoveL): acceleration": MotionProgram((Move(MoveKind.LINEAR, pose=away(panda),
                                                                 acceleration=value),))}
    for name, program in cases.items():
        if value not in VALID:
            with pytest.raises(PathInputError, match=refused(name, value)):
                programs.plan(program, panda.home())
            continue
        plan = programs.plan(program, panda.home())
        assert plan.success, plan.message
        v_ratio, a_ratio = played_ratios(plan.trajectory, planner)
        assert v_ratio <= 1 + 1e-3 and a_ratio <= 1 + 1e-3
        if name.startswith("program velocity") or name.endswith("joint_speed"):
            expected = 0.5 if value == 0.0 else 1.0                  # 0: the config's velocity_scaling
            assert plan.moves[0].limited_by.startswith(("velocity", "acceleration"))
            assert v_ratio == pytest.approx(expected, rel=2e-2) or plan.moves[0].limited_by.startswith("acceler")


@pytest.mark.parametrize("value", VALUES)
def test_program_file_fields(panda, value):
    """YAML as written (.nan, .inf included): errors name the file's field."""
    start = panda.fk(panda.home())
    text = yaml.safe_dump({"relative": True, "velocity_scaling": value, "moves": [
        {"type": "MoveL", "position": [0.1, 0, 0], "joint_speed": value, "acceleration": value}]})
    data = yaml.safe_load(text)
    if value in VALID:
        program = program_from_mapping(data, start, panda.n)
        assert program.velocity_scaling == value and program.moves[0].joint_speed == value
        return
    with pytest.raises(PathInputError, match=refused("moves[0].joint_speed", value)):
        program_from_mapping(data, start, panda.n)
    data["moves"][0].update(joint_speed=0.5, acceleration=0.5)
    with pytest.raises(PathInputError, match=refused("velocity_scaling", value) + " path_ik_node's"):
        program_from_mapping(data, start, panda.n)
    data["velocity_scaling"] = "fast"
    with pytest.raises(PathInputError, match=refused("velocity_scaling", "fast")):
        program_from_mapping(data, start, panda.n)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("plan_path_scaling")
    waypoints = folder / "line.yaml"
    waypoints.write_text(yaml.safe_dump({"robot": "panda", "relative": True,
                                         "waypoints": [{"position": [0.0, 0.05, 0.0]}]}))
    program = folder / "program.yaml"
    program.write_text(yaml.safe_dump({"robot": "panda", "relative": True,
                                       "moves": [{"type": "MoveL", "position": [0.0, 0.05, 0.0]}]}))
    return folder, waypoints, program


@pytest.mark.parametrize("flag", ["--velocity-scaling", "--acceleration-scaling"])
@pytest.mark.parametrize("value", VALUES)
def test_plan_path_cli(files, capsys, flag, value):
    """plan_path --velocity-scaling / --acceleration-scaling, for a waypoint file and a program file."""
    folder, waypoints, program = files
    field = flag[2:].replace("-", "_")
    for i, path in enumerate((waypoints, program)):
        code = plan_path.main([str(path), flag, str(value), "--out", str(folder / f"out{i}")])
        err = capsys.readouterr().err
        if value in VALID:
            assert code == 0, err
        else:
            assert code == 2
            name = field if path is waypoints else f"program {field}"
            assert re.search(refused(name, value), err), err


@pytest.mark.parametrize("value", VALUES)
def test_servo_override_velocity_scaling_factor(value):
    """The servo parameter: [0, 1] by its schema (0 = no override), the rest refused with a ConfigError naming it."""
    if value in VALID:
        assert ServoConfig(override_velocity_scaling_factor=value).override_velocity_scaling_factor == value
        return
    words = "must be finite" if not math.isfinite(value) else "must be <= 1.0" if value > 1 else "must be >= 0.0"
    with pytest.raises(ConfigError, match=re.escape(f"override_velocity_scaling_factor={value!r} {words}")):
        ServoConfig(override_velocity_scaling_factor=value)


@pytest.mark.parametrize("value", [0.0, 0.25, math.nan, math.inf, -1.0])
def test_studio_keyframe_speed(panda, planner, value):
    """The studio's keyframe playback: a MoveL speed [m/s], 0 = no tool limit; NaN, inf and -1 refused."""
    frames = [Keyframe(panda.home(), away(panda, (0.05, 0.0, 0.0)))]
    programs = planner
    if value in (0.0, 0.25):
        assert plan_playback(programs, panda.home(), frames, speed=value).plan.success
        return
    with pytest.raises(InvalidInputError, match=re.escape(f"speed={value!r} m/s is refused: a speed must be")):
        plan_playback(programs, panda.home(), frames, speed=value)
