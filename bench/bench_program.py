"""Motion program benchmark: the 20-move pick-and-place of examples/programs, planned by robokin_ros with zones and
with exact stops, next to peers planning the same targets as one waypoint path, in the same process.

Peers: (a) robokin's own planner (MotionPlanner) on the program's targets as one waypoint path (MoveJ as lines, a MoveC
as via + end waypoints, 50 mm corners, clamped), what a user had before programs; (b) RoboPlan's CartesianPathPlanner
(TimeOptimal) on the same waypoints, same URDF and acceleration limits. The peers do not honour per-move speeds or
zones, so their cycle time is not comparable move for move; the plan time is. Run: .venv/bin/python
bench/bench_program.py  (< 1 min). The issue's target: the 20-move program plans in <= 100 ms.

`--jerk` (issue 27): the cycle-time cost of jerk limiting instead, fine and zoned: the acceleration-limited plan
against the jerk-limited one with Franka's published joint jerk limits (frankaemika.github.io/docs/
control_parameters.html) and with a tenth of them; the played peak jerk (the controller's quintic through the points,
exact) over the limits, the deviation and the plan time (goal: cycle <= 1.15x on the pick-and-place).
"""
from __future__ import annotations

import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin

from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.program.moves import MoveKind
from robokin_ros.core.program.program_file import load_program_file, program_from_mapping
from robokin_ros.core.robot import RobotModel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_path import ACC, RoboPlanPeer  # noqa: E402

warnings.filterwarnings("ignore")
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "programs"
REPEATS = 7


def timed(call, repeats=REPEATS):
    """(median seconds, last result) of `repeats` calls after one warm-up call."""
    result = call()
    seconds = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = call()
        seconds.append(time.perf_counter() - t0)
    return statistics.median(seconds), result


def waypoints_of(program, robot) -> list[pin.SE3]:
    """The program's targets as one waypoint path (MoveJ joint targets by FK, a MoveC's via as a waypoint)."""
    out = []
    for move in program.moves:
        if move.kind is MoveKind.CIRCULAR:
            out.append(pin.SE3(move.pose.rotation, np.asarray(move.via, float)))
        out.append(robot.fk(move.joints) if move.pose is None else move.pose)
    return out


PANDA_JERK = (7500.0, 3750.0, 5000.0, 6250.0, 7500.0, 10000.0, 10000.0)     # [rad/s^3] Franka's published figures


def jerk_cost() -> None:
    """The --jerk table (module docstring)."""
    import os

    from robokin_ros.core.program.planner import MotionPlanner
    from robokin_ros.core.trajectory.jerk_check import played_jerk_peaks
    print(__doc__.split("\n")[0] + ": jerk-limited cycle time")
    robot = RobotModel.from_name("panda")
    q0, start = robot.home(), robot.fk(robot.home())
    settings = [("acceleration-limited", ()), ("jerk: Franka's figures", PANDA_JERK),
                ("jerk: a tenth of them", tuple(j / 10 for j in PANDA_JERK))]
    print(f"\n## Panda, medians of {REPEATS} warm calls, load {os.getloadavg()[0]:.2f}\n")
    print("| program | limits | cycle [s] | / acceleration-limited | played peak jerk / limit | deviation [mm] | "
          "plan [ms] |")
    print("|---|---|---|---|---|---|---|")
    for kind in ("fine", "zoned"):
        program = program_from_mapping(load_program_file(EXAMPLES / f"pick_place_{kind}.yaml"), start, robot.n,
                                       robot.fk)
        base = None
        for name, jerk in settings:
            planner = MotionPlanner(robot, PathConfig(robot="panda", max_joint_acceleration=ACC["panda"],
                                                      clamp_blend_radius=True, max_joint_jerk=jerk))
            seconds, plan = timed(lambda p=planner: p.plan(program, q0))
            t = plan.trajectory
            peak = played_jerk_peaks(t.times, t.positions, t.velocities, t.accelerations).jerk
            share = f"{(peak / np.array(jerk)).max():.3f}" if jerk else \
                f"{(peak / np.array(PANDA_JERK)).max():.2f} (of Franka's)"
            base = plan.cycle_time if base is None else base
            print(f"| {kind} | {name} | {plan.cycle_time:.3f} | {plan.cycle_time / base:.3f} | {share} | "
                  f"{plan.max_position_deviation * 1e3:.4f} | {seconds * 1e3:.1f} |")


def main() -> None:
    if "--jerk" in sys.argv[1:]:
        jerk_cost()
        return
    # imported here: bench/identical_plans.py imports this module's cases with older trees too
    from robokin_ros.core.program.moves import waypoint_program
    from robokin_ros.core.program.planner import MotionPlanner
    print(__doc__.split("\n")[0])
    robot = RobotModel.from_name("panda")
    config = PathConfig(robot="panda", max_joint_acceleration=ACC["panda"], clamp_blend_radius=True)
    planner = MotionPlanner(robot, config)
    q0, start = robot.home(), robot.fk(robot.home())
    rows, programs, phases = [], {}, {}
    for kind in ("zoned", "fine"):
        program = program_from_mapping(load_program_file(EXAMPLES / f"pick_place_{kind}.yaml"), start, robot.n,
                                       robot.fk)
        programs[kind] = program
        seconds, plan = timed(lambda p=program: planner.plan(p, q0))
        phases[kind] = plan.timings
        rows.append((f"robokin program, {kind} ({len(program)} moves)", seconds, plan.cycle_time,
                     "ok" if plan.success else plan.message[:40], plan.dense_samples))
    waypoints = waypoints_of(programs["zoned"], robot)
    path = waypoint_program(waypoints, 0.05)
    seconds, plan = timed(lambda: planner.plan(path, q0, solved_part=False))
    rows.append((f"(a) robokin waypoint path ({len(waypoints)} wp, 50 mm)", seconds,
                 plan.timing.duration if plan.success else float("nan"),
                 "ok" if plan.success else plan.message[:40], plan.dense_samples))
    try:
        peer = RoboPlanPeer("panda", robot)
        seconds, (traj, _, note) = timed(lambda: peer.plan(waypoints, q0), 3)
        duration = float(traj.times[-1]) if traj is not None else float("nan")
        rows.append((f"(b) RoboPlan waypoint path ({len(waypoints)} wp)", seconds, duration,
                     "ok" if traj is not None else note, 0))
    except ImportError as err:
        rows.append(("(b) RoboPlan", float("nan"), float("nan"), f"not installed: {err}", 0))
    ours = rows[0][1]
    print(f"\n## Panda, medians of {REPEATS} warm calls, this machine\n")
    print("| planner | plan [ms] | plan time / ours zoned | cycle [s] | result | dense samples |")
    print("|---|---|---|---|---|---|")
    for name, seconds, cycle, result, samples in rows:
        print(f"| {name} | {seconds * 1e3:.1f} | {seconds / ours:.2f} | {cycle:.3f} | {result} | {samples} |")
    print("\nours, phases of the last call [ms]: " + "; ".join(
        f"{kind}: " + ", ".join(f"{name} {seconds * 1e3:.1f}" for name, seconds in t.items())
        for kind, t in phases.items()))
    zoned, fine = rows[0][2], rows[1][2]
    print(f"\nzones vs exact stops: cycle {zoned:.3f} s vs {fine:.3f} s ({(zoned - fine) / fine * 100:+.1f} %)")


if __name__ == "__main__":
    main()
