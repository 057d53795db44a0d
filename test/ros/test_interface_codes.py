"""The core's status and outcome codes are the interface's constants: same names, same numbers.

The core cannot import message packages, so its enums repeat the numbers of robokin_interfaces; this ties
them to the .msg/.action text and to the generated Python constants, in both directions.
"""
import re
from pathlib import Path

import pytest
from moveit_msgs.msg import ServoStatus as MoveItStatusMsg
from moveit_msgs.srv import ServoCommandType

from robokin_interfaces.action import ExecuteCartesianPath
from robokin_interfaces.msg import ServoStatus as ServoStatusMsg
from robokin_ros.core.path.result import PathStatus
from robokin_ros.core.trajectory.execution import ExecutionCode
from robokin_ros.core.servo.command_type import CommandType
from robokin_ros.core.servo.status import MoveItServoCode, ServoStatus

INTERFACES = Path(__file__).resolve().parents[2] / "robokin_interfaces"
CONSTANT = re.compile(r"^\s*int\d+\s+([A-Z_][A-Z0-9_]*)\s*=\s*(-?\d+)\s*$", re.M)
# Constants the servo core does not produce (none since collision checking came: kept to say so explicitly).
SERVO_CODES_NOT_FROM_THE_CORE: set[str] = set()


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


def test_moveit_servo_codes_are_moveit_msgs_constants():
    """Jazzy+ MoveIt Servo numbering: INVALID=-1 ... JOINT_BOUND=6, as moveit_msgs/msg/ServoStatus defines it."""
    expected = {"INVALID": -1, "NO_WARNING": 0, "DECELERATE_FOR_APPROACHING_SINGULARITY": 1,
                "HALT_FOR_SINGULARITY": 2, "DECELERATE_FOR_LEAVING_SINGULARITY": 3, "DECELERATE_FOR_COLLISION": 4,
                "HALT_FOR_COLLISION": 5, "JOINT_BOUND": 6}
    assert {code.name: int(code) for code in MoveItServoCode} == expected
    for name, value in expected.items():
        assert getattr(MoveItStatusMsg, name) == value, name
    assert {t.name: int(t) for t in CommandType} == {
        name: getattr(ServoCommandType.Request, name) for name in ("JOINT_JOG", "TWIST", "POSE")}


def test_robokin_status_keeps_moveit_numbers_and_maps_its_own_codes_to_moveit_codes():
    """A MoveIt client reading robokin's codes 0-6 sees the same meaning; robokin's own codes are above them and
    reach ~/status as the nearest MoveIt code."""
    for status in ServoStatus:
        if status.name in MoveItServoCode.__members__ or status == ServoStatus.OK:
            assert int(status) <= 6 and status.moveit_code == int(status), status
        else:
            assert int(status) >= 10, f"robokin's own code {status.name} must not take a MoveIt number"
        assert status.moveit_code in MoveItServoCode
    assert ServoStatus.OK.moveit_code == MoveItServoCode.NO_WARNING
    assert ServoStatus.JOINT_BOUND.moveit_code == MoveItServoCode.JOINT_BOUND == 6
    assert ServoStatus.JOINT_STATE_MISSING.moveit_code == ServoStatus.INVALID_COMMAND.moveit_code == -1
    for quiet in (ServoStatus.VELOCITY_LIMITED, ServoStatus.STALE_COMMAND, ServoStatus.STOPPED, ServoStatus.PAUSED,
                  ServoStatus.TARGET_REACHED, ServoStatus.HAND_GUIDING):
        assert quiet.moveit_code == MoveItServoCode.NO_WARNING, quiet
    # separation monitoring reads as MoveIt's collision codes: slowed / halted because something is near
    assert ServoStatus.SEPARATION_LIMITED.moveit_code == MoveItServoCode.DECELERATE_FOR_COLLISION
    assert ServoStatus.PROTECTIVE_STOP.moveit_code == MoveItServoCode.HALT_FOR_COLLISION


def test_path_outcome_codes_match_the_action_result():
    """The planner's codes (PathStatus) and the node's execution codes (ExecutionCode) together are exactly the
    action's constants, with the same numbers, and never share a number."""
    result_section = (INTERFACES / "action" / "ExecuteCartesianPath.action").read_text().split("---")[1]
    defined = constants(result_section)
    core = {status.name: int(status) for enum in (PathStatus, ExecutionCode) for status in enum}
    assert core == defined, "the core's codes and the action's constants differ"
    assert len(set(core.values())) == len(core), "two codes share a number"
    for name, value in defined.items():
        assert getattr(ExecuteCartesianPath.Result, name) == value, f"generated Result.{name} differs"


def test_controller_codes_match_follow_joint_trajectory():
    """The codes core/sim's controller and core/path's result mapping repeat are control_msgs' numbers."""
    from control_msgs.action import FollowJointTrajectory

    from robokin_ros.core.trajectory.execution import CONTROLLER_ABORT_CODES
    from robokin_ros.core.trajectory.controller_tolerances import FollowCode

    for code in FollowCode:
        assert getattr(FollowJointTrajectory.Result, code.name) == int(code), code.name
    for number, outcome in CONTROLLER_ABORT_CODES.items():
        assert getattr(FollowJointTrajectory.Result, outcome.name) == number, outcome.name


@pytest.mark.parametrize("enum", [ServoStatus, PathStatus, ExecutionCode])
def test_every_core_code_has_a_sentence(enum):
    for status in enum:
        assert status.sentence and status.sentence[0].islower(), f"{enum.__name__}.{status.name}"
