"""The servo tick's cost with jerk limits against jerk off (issue 27: a tick stays <= 1.5x the jerk-off median), in a
way a shared machine's load drifts do not decide.

The demo's servo script (bench/jerk_servo.py's, on an ideal arm: each tick's commanded positions are the next
measurement, as `run_script` does) through three servos of the demo's configuration (bench/stretch_recovery.py
`demo_config`): jerk off, Franka's published Panda joint jerk limits, a tenth of them. The script is cut into blocks
of BLOCK ticks that each servo runs in turn (the order rotating), every `Servo.step` timed: each servo runs with
its own code and data in cache, as in a run of its own, while a load drift is shared within ~10 ms. Windows are not
kept (a node keeps the last one), unlike `run_script`'s record.

Run: .venv/bin/python bench/jerk_tick_cost.py [--rounds N] [--block TICKS]
With another tree's package first on PYTHONPATH (bench/other_tree.py's `archived_tree`) it measures that tree.
"""
from __future__ import annotations

import argparse
import os
import time

from jerk_servo import SILENCE, script_phases, twist_of

import numpy as np

from stretch_recovery import demo_config

import robokin_ros
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.servo import Servo
from robokin_ros.core.servo.types import JointMeasurement, TwistCommand

PANDA_JERK = np.array([7500.0, 3750.0, 5000.0, 6250.0, 7500.0, 10000.0, 10000.0])    # [rad/s^3] Franka
SETTINGS = (("jerk off", 0.0), ("jerk 1x", 1.0), ("jerk 0.1x", 0.1))                   # share of PANDA_JERK


def script_ticks(robot: RobotModel, dt: float) -> list[tuple[float, tuple | None]]:
    """(time, (linear, angular, frame) or None in the script's silence) per tick."""
    ticks, now = [], 0.0
    for phase in script_phases():
        twist = twist_of(robot, phase)
        for _ in range(round(phase.duration / dt)):
            now += dt
            ticks.append((now, None if phase.name == SILENCE else twist))
    return ticks


def blocked_run(robot: RobotModel, configs: dict, ticks: list, block: int) -> dict[str, np.ndarray]:
    """Each setting's `Servo.step` costs [us] over the script, the servos taking turns block by block."""
    servos = {name: Servo(robot, config) for name, config in configs.items()}
    for servo in servos.values():
        servo.set_measurement(JointMeasurement(robot.home(), 0.0))
    names, clock = list(servos), time.perf_counter_ns
    costs: dict[str, list[float]] = {name: [] for name in names}
    for b, first in enumerate(range(0, len(ticks), block)):
        for name in names[b % len(names):] + names[:b % len(names)]:
            servo, cost = servos[name], costs[name]
            for now, twist in ticks[first:first + block]:
                if twist is not None:
                    servo.set_command(TwistCommand(twist[0], twist[1], twist[2], now))
                t0 = clock()
                out = servo.step(now)
                cost.append((clock() - t0) / 1e3)
                servo.set_measurement(JointMeasurement(out.positions, now))
    return {name: np.array(cost) for name, cost in costs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="whole scripts measured (after one to warm up)")
    parser.add_argument("--block", type=int, default=250, help="ticks each servo runs in turn")
    args = parser.parse_args()
    robot = RobotModel.from_name("panda")
    configs = {name: demo_config(**({"max_joint_jerk": tuple(float(j) for j in PANDA_JERK * share)} if share
                                    else {}))
               for name, share in SETTINGS}
    ticks = script_ticks(robot, configs["jerk off"].publish_period)
    load = os.getloadavg()[0]
    blocked_run(robot, configs, ticks, args.block)
    medians: dict[str, list[float]] = {name: [] for name in configs}
    for _ in range(args.rounds):
        for name, cost in blocked_run(robot, configs, ticks, args.block).items():
            medians[name].append(float(np.median(cost)))
    median = {name: float(np.median(values)) for name, values in medians.items()}
    off = median["jerk off"]
    print(f"{os.path.dirname(robokin_ros.__file__)}: Servo.step median [us] over {args.rounds} x {len(ticks)} "
          f"ticks (median of the rounds' medians), load {load:.2f} -> {os.getloadavg()[0]:.2f}")
    for name, values in medians.items():
        ratio = "" if name == "jerk off" else \
            f", x{median[name] / off:.2f} jerk off (rounds: " + ", ".join(
                f"{v / o:.2f}" for v, o in zip(values, medians["jerk off"])) + ")"
        print(f"  {name:9s} {median[name]:6.1f}{ratio}")


if __name__ == "__main__":
    main()
