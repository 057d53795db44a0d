"""Scheduling options for a node's process: niceness, a real-time (SCHED_FIFO) priority, CPU affinity.

On a robot PC that also runs perception, a control loop at normal priority shares the CPU with every busy loop
there is. A driver's controller_manager runs SCHED_FIFO for that reason; these options let the servo (and the
simulated driver) do the same. Each is off by default, and each is applied on its own: the OS may refuse one
(an unprivileged user may not raise priority), which is reported in words and does not stop the node.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from robokin_ros.core.schema import NodeConfig, spec


@dataclass(frozen=True)
class ProcessOptions:
    """What to ask of the OS; 0 / () mean "leave as it is"."""

    nice: int = 0                            # -20 (most favoured) .. 19
    realtime_priority: int = 0               # 1 .. 99: SCHED_FIFO at this priority
    cpu_affinity: tuple[int, ...] = ()       # the CPUs the process may run on


def cpu_list(text: str) -> tuple[int, ...]:
    """CPU numbers from '1' or '0, 1' ('' = none); ValueError names what is wrong."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not all(part.isdigit() for part in parts):
        raise ValueError("expected CPU numbers separated by commas, e.g. '1' or '0,1'")
    return tuple(int(part) for part in parts)


def apply_process_options(options: ProcessOptions, pid: int = 0) -> list[tuple[bool, str]]:
    """Apply each option that is set to process `pid` (0: this one); (applied, sentence) per option."""
    outcomes = []
    if options.nice:
        outcomes.append(_attempt(f"nice {options.nice}", lambda: os.setpriority(os.PRIO_PROCESS, pid, options.nice),
                                 "raising priority needs CAP_SYS_NICE (root, or `ulimit -e` / limits.conf rtprio)"))
    if options.realtime_priority:
        param = os.sched_param(options.realtime_priority)
        outcomes.append(_attempt(f"SCHED_FIFO priority {options.realtime_priority}",
                                 lambda: os.sched_setscheduler(pid, os.SCHED_FIFO, param),
                                 "needs CAP_SYS_NICE or an rtprio limit (the `realtime` group of a PREEMPT_RT "
                                 "setup, as ros2_control's docs describe)"))
    if options.cpu_affinity:
        cpus = set(options.cpu_affinity)
        outcomes.append(_attempt(f"CPU affinity {sorted(cpus)}", lambda: os.sched_setaffinity(pid, cpus),
                                 f"this machine has CPUs {sorted(os.sched_getaffinity(pid))}"))
    return outcomes


def _attempt(what: str, call, hint: str) -> tuple[bool, str]:
    try:
        call()
    except (OSError, ValueError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        return False, f"{what} refused by the OS ({reason}): {hint}; running without it"
    return True, f"{what} applied"


@dataclass(frozen=True)
class SchedulingConfig(NodeConfig):
    """A node configuration with the scheduling options of its process (nodes that run a control loop)."""

    process_nice: int = spec(0, "niceness of the node's process (negative = favoured; needs privilege); 0 leaves "
                             "it", param="process.nice", ge=-20, le=19, read_only=True)
    process_realtime_priority: int = spec(0, "run the node's process SCHED_FIFO at this priority (1-99; needs "
                                          "CAP_SYS_NICE or an rtprio limit); 0 = normal scheduling",
                                          param="process.realtime_priority", ge=0, le=99, read_only=True)
    process_cpu_affinity: str = spec("", "CPUs the node's process may run on, e.g. '1' or '0,1'; '' = any",
                                     param="process.cpu_affinity", read_only=True)

    def cross_field_problems(self) -> list[str]:
        try:
            cpu_list(self.process_cpu_affinity)
        except ValueError as err:
            return [f"process.cpu_affinity={self.process_cpu_affinity!r}: {err}"]
        return []

    @property
    def process_options(self) -> ProcessOptions:
        """The scheduling options to apply at start-up."""
        return ProcessOptions(self.process_nice, self.process_realtime_priority, cpu_list(self.process_cpu_affinity))
