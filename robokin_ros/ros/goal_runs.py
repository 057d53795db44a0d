"""How one path_ik_node action goal runs to its result: planning that a cancel or a preemption interrupts, and
every way a goal can end, an unexpected exception included, written into the result (an action always gets one)."""
from __future__ import annotations

from collections.abc import Callable

from robokin_ros.core.errors import RobokinError, TrajectoryTimingError
from robokin_ros.core.path.budget import TIMEOUT, PlanningStopped
from robokin_ros.core.path.result import PathStatus
from robokin_ros.core.trajectory.execution import ExecutionCode
from robokin_ros.ros.goals import GoalAbort, GoalGate

Interruption = tuple[int, str] | None          # (code, words) when a goal must stop, else None


def interruption(goal_handle, gate: GoalGate, running: bool) -> Interruption:
    """(code, words) when a goal must stop planning or executing: canceled, preempted, or the node (`running`
    False) shutting down."""
    if goal_handle.is_cancel_requested:
        return int(ExecutionCode.CANCELED), "canceled"
    if gate.preempted() or not running:
        return int(ExecutionCode.PREEMPTED), "preempted by a new goal"
    return None


def plan_interruptibly(plan: Callable[[Callable[[], bool]], object], interrupted: Callable[[], Interruption]):
    """`plan(should_stop)`'s plan; GoalAbort when the goal is interrupted while planning (or right after: nothing
    is sent then) or when planning exceeds `planning_timeout` (PLANNING_TIMEOUT)."""
    try:
        planned = plan(lambda: interrupted() is not None)
    except PlanningStopped as err:
        if err.reason == TIMEOUT:
            raise GoalAbort(int(ExecutionCode.PLANNING_TIMEOUT), str(err)) from None
        code, words = interrupted() or (int(ExecutionCode.CANCELED), "canceled")
        raise GoalAbort(code, f"{words} while planning ({err.where}); nothing was sent to the controller") from None
    stop = interrupted()
    if stop is not None:
        raise GoalAbort(stop[0], f"{stop[1]} right after planning; nothing was sent to the controller")
    return planned


def run_into_result(run: Callable[[], None], result, logger) -> None:
    """Call `run()`, which fills `result` on success; write how it ended otherwise into `result.error_code` and
    `result.message`."""
    try:
        run()
    except GoalAbort as err:
        result.error_code, result.message = err.code, str(err)
    except TrajectoryTimingError as err:
        result.error_code, result.message = int(ExecutionCode.INTERNAL_ERROR), f"time parameterization failed: {err}"
    except RobokinError as err:
        result.error_code, result.message = int(PathStatus.INVALID_GOAL), str(err)
    except Exception as err:  # noqa: BLE001 - every goal must get a result, whatever happened
        logger.error(f"path goal failed unexpectedly: {err!r}")
        result.error_code, result.message = int(ExecutionCode.INTERNAL_ERROR), f"internal error: {err!r}"
