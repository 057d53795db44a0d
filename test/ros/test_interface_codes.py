"""The core's status and outcome codes are the interface's constants: same names, same numbers.

The core cannot import message packages, so its enums repeat the numbers of robokin_interfaces; this ties
them to the .msg/.action text and to the generated Python constants, in both directions.
"""
import re
from pathlib import Path

import pytest

from robokin_interfaces.action import ExecuteCartesianPath
from robokin_interfaces.msg import ServoStatus as ServoStatusMsg
from robokin_ros.core.path.result import PathStatus
from robokin_ros.core.servo.status import ServoStatus

INTERFACES = Path(__file__).resolve().parents[2] / "robokin_interfaces"
CONSTANT = re.compile(r"^\s*int\d+\s+([A-Z_][A-Z0-9_]*)\s*=\s*(-?\d+)\s*$", re.M)
# Constants the servo core does not produce: MoveIt Servo's collision codes, kept so dashboards that read
# MoveIt Servo's numbering also read robokin's.
SERVO_CODES_NOT_FROM_THE_CORE = {"DECELERATE_FOR_COLLISION", "HALT_FOR_COLLISION"}
# Outcomes decided by path_ik_node while it waits for, executes or aborts a goal, not by the path planner.
PATH_CODES_FROM_THE_NODE = {"NO_JOINT_STATE", "CANCELED", "PREEMPTED", "EXECUTION_FAILED", "INTERNAL_ERROR"}


def constants(text: str) -> dict[str, int]:
    """NAME -> value of every integer constant in an interface definition (or one section of it)."""
    return {name: int(value) for name, value in CONSTANT.findall(text)}


def test_constant_parser_reads_definitions():
    """Control: the parser finds constants and ignores fields and comments."""
    text = "# int8 COMMENTED = 3\nint8 A = -1\nint32 B=7\nint8 code\nstring message\n"
    assert constants(text) == {"A": -1, "B": 7}


def test_servo_status_codes_match_the_message():
    defined = constants((INTERFACES / "msg" / "ServoStatus.msg").read_text())
    core = {status.name: int(status) for status in ServoStatus}
    assert core == {name: value for name, value in defined.items() if name in core}, "numbers differ"
    assert set(defined) - set(core) == SERVO_CODES_NOT_FROM_THE_CORE
    for name, value in defined.items():
        assert getattr(ServoStatusMsg, name) == value, f"generated ServoStatus.{name} differs from the .msg"


def test_path_outcome_codes_match_the_action_result():
    result_section = (INTERFACES / "action" / "ExecuteCartesianPath.action").read_text().split("---")[1]
    defined = constants(result_section)
    core = {status.name: int(status) for status in PathStatus}
    assert core == {name: value for name, value in defined.items() if name in core}, "numbers differ"
    assert set(defined) - set(core) == PATH_CODES_FROM_THE_NODE
    for name, value in defined.items():
        assert getattr(ExecuteCartesianPath.Result, name) == value, f"generated Result.{name} differs"


@pytest.mark.parametrize("enum", [ServoStatus, PathStatus])
def test_every_core_code_has_a_sentence(enum):
    for status in enum:
        assert status.sentence and status.sentence[0].islower(), f"{enum.__name__}.{status.name}"
