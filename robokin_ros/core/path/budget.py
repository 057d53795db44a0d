"""A planning call's time budget and cancel check, polled between units of work in every planning phase.

`MotionPlanner.plan` creates one `PlanningBudget` per call (a request that plans several times, an approach
move and its path, passes one to all); the phases (geometry, IK, downsampling, timing, verification) call `check`
between pieces, blocks of dense samples, blocks of a refinement round's FK, toppra's stages, re-timings and blocks
of played samples, so a cancel or an exhausted budget ends planning within one unit of work: ~10 ms on this
2-core machine, whatever the path's size (the test measures the largest gap between two checks). Before issue 23
toppra and the final verification were single units; on a long section they took seconds, tripled under load,
and a 10 s budget ended after 14.7-15.9 s. `should_stop` is any callable, e.g. "the action goal has a cancel
request", which keeps this module free of ROS.
"""
from __future__ import annotations

import time
from collections.abc import Callable

from robokin_ros.core.errors import RobokinError

CANCELED = "canceled"
TIMEOUT = "timeout"
_UNITS = {"geometry": "path pieces", "IK": "dense samples", "downsampling": "refinement rounds",
          "timing": "rest-to-rest sections", "verification": "played samples"}


class PlanningStopped(RobokinError):
    """Planning ended before a result: `reason` is CANCELED (the caller's `should_stop`) or TIMEOUT (the
    budget); `phase`, `done` and `total` say how far it got, `elapsed` [s] how long it ran."""

    def __init__(self, reason: str, phase: str, done: int, total: int, elapsed: float, budget: float) -> None:
        self.reason, self.phase, self.done, self.total = reason, phase, done, total
        self.elapsed, self.budget = elapsed, budget
        self.where = (f"after {elapsed:.2f} s in the {phase} phase"
                      + (f" ({done} of {total} {_UNITS.get(phase, 'steps')} done)" if total > 0 else ""))
        if reason == TIMEOUT:
            text = (f"planning exceeded its time budget of {budget:.3g} s (parameter planning_timeout): stopped "
                    f"{self.where}; simplify the path (fewer waypoints, blend radii instead of sharp corners) or "
                    "raise planning_timeout")
        else:
            text = f"planning {reason} {self.where}"
        super().__init__(text)


class PlanningBudget:
    """Deadline and cancel check of one planning call.

    Args:
        timeout: [s] budget from construction on, > 0 (inf = no deadline).
        should_stop: returns True when the caller wants planning to end (None = never).
        clock: monotonic time source [s] (injectable for tests).
    """

    def __init__(self, timeout: float = float("inf"), should_stop: Callable[[], bool] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.timeout = float(timeout)
        self._should_stop = should_stop
        self._clock = clock
        self._start = clock()

    @property
    def elapsed(self) -> float:
        """[s] since the budget was created."""
        return self._clock() - self._start

    def check(self, phase: str, done: int = 0, total: int = 0) -> None:
        """Raise PlanningStopped if the caller asked to stop or the budget is spent; `phase`, `done` and
        `total` (units of that phase) describe the progress for the message."""
        if self._should_stop is not None and self._should_stop():
            raise PlanningStopped(CANCELED, phase, done, total, self.elapsed, self.timeout)
        elapsed = self.elapsed
        if elapsed > self.timeout:
            raise PlanningStopped(TIMEOUT, phase, done, total, elapsed, self.timeout)


UNLIMITED = PlanningBudget()       # no deadline, never canceled: the default of the phase functions
