"""Getting out of the stretch (issue 11 section 5): the demo's twist script through the core Servo, old vs new.

An ideal arm (each tick's commanded positions are the next measurement) at 500 Hz runs the demo's phases (square,
tool rotation, 7 s push outward into the stretched Panda, 2 s back) with config/panda_servo.yaml's settings,
once with `singularity_escape` off (the behaviour before) and once with the default (on). Tool speeds come from
FK of the commanded positions, along the commanded direction. Also prints the cost of a damped tick (servo
ticks with sigma_min below the damping threshold; VelocityIk.solve at the deepest pose, pushing and coming
back) and the statuses of every demo phase (the later ones start where the way back ended).
Run: .venv/bin/python bench/stretch_recovery.py  (about 20 s)
"""
from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np
import yaml

from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.servo import Servo
from robokin_ros.core.servo.types import JointMeasurement, TwistCommand
from robokin_ros.core.servo.velocity_ik import VelocityIk
from robokin_ros.demo.script import SILENCE, demo_phases
from robokin_ros.share_files import config_file

BACK, STRETCH = "back from stretch", "stretch outward"

Config = ServoConfig


class Run(NamedTuple):
    phase: list[str]             # per tick
    positions: np.ndarray        # (k, n) commanded
    velocities: np.ndarray       # (k, n) commanded
    sigma: np.ndarray            # (k,)
    status: list[str]
    tick_us: np.ndarray          # (k,) Servo.step wall time
    dt: float


def demo_config(**kw) -> Config:
    """The demo's servo parameters (config/panda_servo.yaml) that the core uses."""
    params = yaml.safe_load(config_file("panda_servo.yaml").read_text())["/**"]["ros__parameters"]
    return Config(publish_period=params["publish_period"],
                  max_joint_acceleration=tuple(params["max_joint_acceleration"]),
                  halt_all_joints_in_cartesian_mode=params["halt_all_joints_in_cartesian_mode"], **kw)


def ideal_arm_ticks(robot: RobotModel, servo: Servo, phases, dt: float):
    """The script's ticks on an ideal arm from home (each tick's commanded positions are the next measurement):
    yields (time [s], phase, the tick's output, its `Servo.step` cost [us])."""
    now = 0.0
    servo.set_measurement(JointMeasurement(robot.home(), now))
    clock = time.perf_counter_ns
    for phase in phases:
        frame = robot.tip_frame if phase.frame == "tool" else phase.frame
        linear, angular = np.array(phase.linear, float), np.array(phase.angular, float)
        for _ in range(round(phase.duration / dt)):
            now += dt
            if phase.name != SILENCE:                   # the demo publishes nothing then
                servo.set_command(TwistCommand(linear, angular, frame, now))
            t0 = clock()
            out = servo.step(now)
            cost = (clock() - t0) / 1e3
            servo.set_measurement(JointMeasurement(out.positions, now))
            yield now, phase, out, cost


def run(robot: RobotModel, config: ServoConfig, phases) -> Run:
    names, pos, vel, sig, stat, cost = [], [], [], [], [], []
    for _, phase, out, us in ideal_arm_ticks(robot, Servo(robot, config), phases, config.publish_period):
        cost.append(us)
        names.append(phase.name)
        pos.append(out.positions)
        vel.append(out.velocities)
        sig.append(out.sigma_min)
        stat.append(out.status.name)
    return Run(names, np.array(pos), np.array(vel), np.array(sig), stat, np.array(cost), config.publish_period)


def way_back(robot: RobotModel, r: Run, config: ServoConfig, phase) -> dict:
    """Figures of the way back: distance and speed along the command, time to half speed, line deviation."""
    k = np.flatnonzero(np.array(r.phase) == BACK)
    start = r.positions[k[0] - 1]
    tool = np.array([robot.fk(q).translation for q in np.vstack((start, r.positions[k]))])     # (m + 1, 3)
    command = np.array(phase.linear) * config.scale.linear                                     # [m/s]
    speed = np.linalg.norm(command)
    axis = command / speed
    moved = tool - tool[0]
    along = moved @ axis
    v = np.diff(along) / r.dt
    half = np.flatnonzero(v >= 0.5 * speed)
    off = np.linalg.norm(moved - np.outer(along, axis), axis=1)
    return {"distance_mm": along[-1] * 1e3, "commanded_mm_s": speed * 1e3,
            "t50_s": (half[0] + 1) * r.dt if len(half) else np.nan,
            "speed_at_0.5s_mm_s": v[round(0.5 / r.dt) - 1] * 1e3, "off_line_mm": off.max() * 1e3}


def acceleration_ratio(r: Run, amax: np.ndarray, names: tuple[str, ...]) -> float:
    """Largest |dv| / (amax dt) over the ticks of the named phases (<= 1 within the limits)."""
    k = np.flatnonzero(np.isin(r.phase, names))
    dv = np.abs(r.velocities[k] - r.velocities[k - 1])
    return float((dv / (amax * r.dt)).max())


def solve_cost(robot: RobotModel, config: ServoConfig, q: np.ndarray, twist: np.ndarray, ticks: int = 3000):
    """(median, p99) [us] of VelocityIk.solve at q, the previous velocity fed back as in the servo."""
    ik, v = VelocityIk(robot, config), np.zeros(robot.n)
    out, clock = np.empty(ticks), time.perf_counter_ns
    for k in range(-300, ticks):
        t0 = clock()
        v = ik.solve(q, twist, dt=config.publish_period, previous_velocities=v, check=False).velocities
        if k >= 0:
            out[k] = clock() - t0
    return float(np.median(out)) / 1e3, float(np.percentile(out, 99)) / 1e3


def main() -> None:
    robot = RobotModel.from_name("panda")
    phases = demo_phases()
    back = next(p for p in phases if p.name == BACK)
    print("Way back from the stretch (ideal arm, 500 Hz, config/panda_servo.yaml), core Servo\n")
    print(f"| {'singularity_escape':20s} | sigma_min end of push | back in 2 s | time to 50 % | speed at 0.5 s "
          f"| off the line | max |dv|/(amax dt) | damped tick median / p99 |")
    print("|" + "---|" * 8)
    runs = {}
    for escape in (False, True):
        config = demo_config(singularity_escape=escape)
        r = runs[escape] = run(robot, config, phases)
        amax = np.array(config.max_joint_acceleration)
        k_push = np.flatnonzero(np.array(r.phase) == STRETCH)
        w = way_back(robot, r, config, back)
        damped = np.isin(r.phase, (STRETCH, BACK)) & (r.sigma < config.singularity_sigma_threshold)
        print(f"| {str(escape):20s} | {r.sigma[k_push[-1]]:21.5f} | {w['distance_mm']:6.1f} of "
              f"{w['commanded_mm_s'] * 2:.0f} mm | {w['t50_s']:10.3f} s | {w['speed_at_0.5s_mm_s']:7.1f} mm/s "
              f"| {w['off_line_mm']:7.1f} mm | {acceleration_ratio(r, amax, (STRETCH, BACK)):.6f} "
              f"| {np.median(r.tick_us[damped]):6.1f} / {np.percentile(r.tick_us[damped], 99):6.1f} us |")
    first_back = runs[True].phase.index(BACK)
    same = np.array_equal(runs[False].velocities[:first_back], runs[True].velocities[:first_back])
    print(f"\npush identical with and without the escape (bit for bit, every tick before the way back): {same}")
    deepest = runs[False].positions[first_back - 1]
    push = np.r_[np.array(next(p for p in phases if p.name == STRETCH).linear) * demo_config().scale.linear, 0, 0, 0]
    print("\nVelocityIk.solve at the end of the push [us], median / p99:")
    for escape in (False, True):
        config = demo_config(singularity_escape=escape)
        costs = [solve_cost(robot, config, deepest, sign * push) for sign in (1.0, -1.0)]
        print(f"  singularity_escape={str(escape):5s}  pushing {costs[0][0]:6.1f} / {costs[0][1]:6.1f}   "
              f"coming back {costs[1][0]:6.1f} / {costs[1][1]:6.1f}")
    print("\nstatuses per phase (ticks), escape off -> on:")
    for phase in phases:
        counts = []
        for escape in (False, True):
            st = [s for p, s in zip(runs[escape].phase, runs[escape].status) if p == phase.name]
            counts.append(", ".join(f"{name} {st.count(name)}" for name in dict.fromkeys(st)))
        print(f"  {phase.name:28s} {counts[0]}\n  {'':28s} -> {counts[1]}")


if __name__ == "__main__":
    main()
