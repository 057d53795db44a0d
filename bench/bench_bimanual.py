"""Bimanual path benchmark (issue 26): the 20 cm square carried by both hands, planned on dual_panda and on
dual_panda_torso (a torso joint both arms share), with the figures measured on the played trajectory.

Per robot: planning time (median of warm calls, wall), dense samples, cycle time at 0.1 m/s, and, measured through
Pinocchio's FK of each tip on the controller's quintic through the points at 1 kHz: each tip's largest distance from
its square, the hands' relative pose drift, and whether both tips sit at every corner in the same trajectory points.
The issue's targets: deviation <= 0.1 mm per tip, relative pose within 0.1 mm.

Run: source scripts/ros_env.sh && .venv/bin/python bench/bench_bimanual.py [--repeats 5]   (< 1 min)
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pinocchio as pin

from robokin_ros.core.ik.pose_ik import solve_pose
from robokin_ros.core.path.deviation import controller_positions
from robokin_ros.core.program.moves import MotionProgram, Move, MoveKind
from robokin_ros.core.program.planner import MotionPlanner
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.tips.held_object import relative_pose_error, take_grasp

FACING = {0: np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]]),      # left hand's z to -y
          1: np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])}      # right hand's z to +y
SQUARE = np.array([[0, 0.1, 0], [0, 0.1, 0.2], [0, -0.1, 0.2], [0, -0.1, 0], [0, 0, 0]])


def start_of(robot: RobotModel) -> np.ndarray:
    q = robot.home()
    for i, y in ((0, 0.15), (1, -0.15)):
        tip = robot.tip_frames[i]
        q = solve_pose(robot, pin.SE3(FACING[i], np.array([0.5, y, 0.4])), q, robot.frame_id(tip), 0.01).positions
    return q


def polyline_distance(point: np.ndarray, corners: np.ndarray) -> float:
    a, b = corners[:-1], corners[1:]
    t = np.clip(np.einsum("ij,ij->i", point - a, b - a) / np.einsum("ij,ij->i", b - a, b - a), 0.0, 1.0)
    return float(np.linalg.norm(a + t[:, None] * (b - a) - point, axis=1).min())


def measure(name: str, repeats: int) -> dict:
    robot = RobotModel.load(name)
    planner = MotionPlanner(robot)
    q0 = start_of(robot)
    poses = [robot.fk(q0, tip) for tip in robot.tip_frames]
    base_T_object, _ = take_grasp(poses)
    program = MotionProgram(tuple(Move(MoveKind.LINEAR, pose=pin.SE3(np.eye(3), base_T_object.translation + d),
                                       carried=True, speed=0.1) for d in SQUARE))
    planner.plan(program, q0)                                  # loads the compiled kernels
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        plan = planner.plan(program, q0)
        times.append(time.perf_counter() - t0)
    trajectory = plan.trajectory
    played = controller_positions(trajectory, np.r_[np.arange(0.0, trajectory.duration, 1e-3), trajectory.duration])
    tips = [[robot.fk(q, tip) for q in played] for tip in robot.tip_frames]
    deviation = [max(polyline_distance(p.translation, np.vstack([pose.translation, pose.translation + SQUARE]))
                     for p in path) for path, pose in zip(tips, poses)]
    held = poses[0].actInv(poses[1])
    drift = np.array([relative_pose_error(a, b, held) for a, b in zip(*tips)])
    together = all(
        np.array_equal(*[np.flatnonzero([np.linalg.norm(robot.fk(q, tip).translation - (pose.translation + d)) < 1e-5
                                         for q in trajectory.positions]) for tip, pose in zip(robot.tip_frames, poses)])
        for d in SQUARE[:-1])
    return {"robot": name, "status": plan.status.name, "plan_ms": 1e3 * statistics.median(times),
            "dense": plan.dense_samples, "cycle_s": trajectory.duration, "dev_mm": [1e3 * d for d in deviation],
            "rel_mm": 1e3 * float(np.linalg.norm(drift[:, :3], axis=1).max()),
            "rel_mrad": 1e3 * float(np.linalg.norm(drift[:, 3:], axis=1).max()), "corners_together": together}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print("| robot | status | plan [ms] | dense samples | cycle [s] | deviation left / right [mm] | relative pose "
          "[mm / mrad] | corners in the same points |")
    print("|---|---|---|---|---|---|---|---|")
    for name in ("dual_panda", "dual_panda_torso"):
        r = measure(name, args.repeats)
        print(f"| {r['robot']} | {r['status']} | {r['plan_ms']:.0f} | {r['dense']} | {r['cycle_s']:.3f} | "
              f"{r['dev_mm'][0]:.4f} / {r['dev_mm'][1]:.4f} | {r['rel_mm']:.4f} / {r['rel_mrad']:.4f} | "
              f"{r['corners_together']} |")


if __name__ == "__main__":
    main()
