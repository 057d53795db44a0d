"""Closed-form UR5 IK (all 8 solutions) vs the iterative pose IK (one solution), one process, same poses.

Poses: FK of random UR5 configurations inside the limits. The iterative solver (robokin_ros.core.ik.pose_ik.solve_pose,
bounded DLS) starts 0.2 rad away from the configuration, as a MoveJ to a nearby pose would; the closed form gets
the configuration as its seed (to sort by). Rows time one call per pose after a warm-up (numba compiled).
Run: .venv/bin/python bench/bench_closed_form_ik.py [--poses 2000]
Target: <= 20 us for all UR5 solutions (closed form without FK verification).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from robokin_ros.core.ik.ur import UrGeometry, _ur_kernel, all_solutions, solve_ur
from robokin_ros.core.ik.pose_ik import solve_pose
from robokin_ros.core.robot import RobotModel


def timed(call, cases, warmup: int = 200) -> tuple[np.ndarray, list]:
    """Per-call times [us] of `call(case)` over `cases`, and the outputs."""
    for case in cases[:warmup]:
        call(case)
    clock, times, outputs = time.perf_counter_ns, np.empty(len(cases)), []
    for i, case in enumerate(cases):
        start = clock()
        outputs.append(call(case))
        times[i] = (clock() - start) * 1e-3
    return times, outputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--poses", type=int, default=2000, help="number of random poses")
    args = parser.parse_args()
    robot = RobotModel.from_name("ur5")
    geometry = UrGeometry.from_robot(robot)
    rng = np.random.default_rng(0)
    qs = [robot.random_positions(rng) for _ in range(args.poses)]
    cases = [(q, robot.fk(q), np.clip(q + rng.uniform(-0.2, 0.2, 6), robot.limits.lower, robot.limits.upper))
             for q in qs]
    Q, valid, flags = np.zeros((8, 6)), np.zeros(8, np.bool_), np.zeros(8, np.int64)

    def fk_errors(solutions):
        return [s.fk_error for s in solutions]

    rows = [
        ("closed form, kernel only (numba)", lambda c: _ur_kernel(c[1].homogeneous, geometry.constants, c[0], Q,
                                                                  valid, flags), None),
        ("closed form solve_ur (all, sorted)", lambda c: solve_ur(geometry, c[1], c[0], verify=False).solutions,
         None),
        ("closed form all_solutions(robot)", lambda c: all_solutions(robot, c[1], c[0], verify=False), None),
        ("closed form + Pinocchio FK check", lambda c: solve_ur(geometry, c[1], c[0]).solutions, fk_errors),
        ("pose_ik.solve_pose (iterative, 1)", lambda c: solve_pose(robot, c[1], c[2]), None),
    ]
    results = []
    for name, call, _ in rows:
        times, outputs = timed(call, cases)
        results.append((name, times, outputs))
    reference = np.median(results[1][1])
    print(f"UR5, {args.poses} random poses; times per call [us]; ratio = median / closed-form solve_ur median")
    print(f"{'method':<38} {'median':>8} {'p99':>8} {'ratio':>7} {'solutions':>10} {'success':>8} {'max FK err':>11}")
    for (name, times, outputs), (_, _, errors) in zip(results, rows):
        if name.startswith("pose_ik"):
            counts = [1 if r.success else 0 for r in outputs]
            success = np.mean(counts)
            worst = max(max(r.position_error, r.orientation_error) for r in outputs if r.success)
        elif name.startswith("closed form, kernel"):
            counts, success, worst = [np.nan], np.nan, np.nan
        else:
            counts = [len(o) for o in outputs]
            success = np.mean([any(np.abs(s.positions - c[0]).max() < 1e-7 for s in o)
                               for o, c in zip(outputs, cases)])
            worst = max(max(fk_errors(o)) for o in outputs) if errors else np.nan
        print(f"{name:<38} {np.median(times):8.2f} {np.percentile(times, 99):8.2f} "
              f"{np.median(times) / reference:7.2f} {np.mean(counts):10.2f} {success:8.3f} {worst:11.2e}")
    print("success: closed form = the configuration itself is among the solutions (1e-7 rad); "
          "iterative = its success flag (1e-9, or 1e-6 when it stalls)")


if __name__ == "__main__":
    main()
