"""Motion program files: parsing against the documented format, and errors that name the move and field."""
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.errors import PathInputError
from robokin_ros.core.program.moves import FINE, MotionProgram, Move, MoveKind, check_program
from robokin_ros.core.program.program_file import load_program_file, parse_zone, program_from_mapping

START = pin.SE3(np.diag([1.0, -1.0, -1.0]), np.array([0.3, 0.0, 0.5]))
EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "programs"


def _program(moves, **top):
    return program_from_mapping({"moves": moves, **top}, START, 7)


def test_zone_spellings():
    assert parse_zone("fine", "z") == FINE
    assert parse_zone("z50", "z") == pytest.approx(0.05)
    assert parse_zone(0.02, "z") == 0.02
    with pytest.raises(PathInputError, match="zone 'z5x'"):
        parse_zone("z5x", "moves[2].zone")


def test_relative_positions_defaults_and_kept_orientation():
    program = _program([{"type": "MoveL", "position": [0.1, 0.0, 0.0], "rpy": [np.pi, 0.0, 0.5]},
                        {"type": "MoveL", "position": [0.1, 0.1, 0.0], "speed": 0.2, "zone": "fine"},
                        {"type": "MoveC", "via": [0.2, 0.05, 0.0], "position": [0.1, 0.0, 0.0]}],
                       relative=True, defaults={"speed": 0.5, "zone": "z20"})
    first, second, third = program.moves
    np.testing.assert_allclose(first.pose.translation, [0.4, 0.0, 0.5])
    np.testing.assert_allclose(first.pose.rotation, pin.rpy.rpyToMatrix(np.pi, 0.0, 0.5))
    np.testing.assert_allclose(second.pose.rotation, first.pose.rotation)      # kept from the previous target
    assert (first.speed, first.zone) == (0.5, pytest.approx(0.02))              # defaults
    assert (second.speed, second.fine) == (0.2, True)                           # a move's own value wins
    assert third.kind is MoveKind.CIRCULAR
    np.testing.assert_allclose(third.via, [0.5, 0.05, 0.5])                    # relative via too


@pytest.mark.parametrize("moves, message", [
    ([{"type": "MoveX", "position": [0, 0, 0]}], r"moves\[0\].type: 'MoveX'"),
    ([{"type": "MoveL"}], r"moves\[0\]: a MoveL needs a 'position'"),
    ([{"type": "MoveL", "position": [0, 0]}], r"moves\[0\].position"),
    ([{"type": "MoveL", "position": [0, 0, float("nan")]}], r"moves\[0\].position"),
    ([{"type": "MoveL", "position": [0, 0, 0], "speed": -1}], r"moves\[0\].speed"),
    ([{"type": "MoveL", "position": [0, 0, 0], "sped": 1}], r"moves\[0\]: unknown field\(s\) \['sped'\]"),
    ([{"type": "MoveJ", "joints": [0, 1]}], r"moves\[0\].joints"),
    ([{"type": "MoveJ", "joints": [0] * 7, "position": [0, 0, 0]}], r"'joints' or a pose"),
    ([{"type": "MoveC", "position": [0, 0, 0]}], r"move 0 \(MoveC\) needs a via"),
    ([{"type": "MoveL", "position": [0, 0, 0], "orientation": [0, 0, 0, 2]}], r"norm"),
    ([{"type": "MoveL", "position": [0, 0, 0], "joint_speed": 1.5}],
     r"moves\[0\]\.joint_speed=1.5 is refused: a scaling must be a finite number in \(0, 1\]"),
])
def test_bad_moves_name_the_move_and_field(moves, message):
    with pytest.raises(PathInputError, match=message):
        check_program(_program(moves), 7)


def test_empty_and_malformed_programs():
    with pytest.raises(PathInputError, match="non-empty 'moves'"):
        _program([])
    with pytest.raises(PathInputError, match="unknown program field"):
        _program([{"type": "MoveL", "position": [0, 0, 0]}], blend=0.1)
    with pytest.raises(PathInputError, match="no moves"):
        check_program(MotionProgram(()), 7)
    with pytest.raises(PathInputError, match=r"program velocity_scaling=1.5 is refused"):
        check_program(MotionProgram((Move(MoveKind.LINEAR, pose=START),), velocity_scaling=1.5), 7)
    check_program(MotionProgram((Move(MoveKind.LINEAR, pose=START),), velocity_scaling=0.0), 7)    # the default


def test_missing_and_broken_files(tmp_path):
    with pytest.raises(PathInputError, match="not found"):
        load_program_file(tmp_path / "none.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("moves: [ {type: MoveL\n")
    with pytest.raises(PathInputError, match="not valid YAML"):
        load_program_file(bad)


@pytest.mark.parametrize("name", ["pick_place_fine.yaml", "pick_place_zoned.yaml"])
def test_example_programs_parse(name):
    program = program_from_mapping(load_program_file(EXAMPLES / name), START, 7)
    check_program(program, 7)
    assert len(program.moves) == 20
    zoned = sum(not m.fine for m in program.moves)
    assert zoned == (0 if "fine" in name else 13)
