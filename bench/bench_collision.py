"""Collision clearance speed on the Panda: robokin's check vs plain Pinocchio/coal distance calls, one process.

Scene: the Panda's self pairs (SRDF-filtered) plus 10 primitives around it (a table top under the base, walls, a
shelf, boxes, spheres, cylinders, a cone): 44 self pairs + 10 x 16 robot-object pairs. Every row times one call
per configuration over the same uniformly random configurations (--configs, default 1000; ~40 % of them put the
arm through the table or itself), after a warm-up, and repeats the pass --repeats times keeping each
configuration's fastest time (the 2-core VM is shared: this removes the other engineers' load, not the method's
own variation).
Rows:
- robokin check: bounding-sphere/box lower bounds (numba), exact GJK/EPA on the pairs that can be nearest (convex
  hulls of the meshes), nearest pair, witness points, normal, gradient;
- the same without the gradient, and the gradient alone by central finite differences (2n extra checks);
- pin.computeDistances over every pair with the same hulls (no pruning), with the URDF meshes (BVH), and with the
  meshes and every pair of bodies (no SRDF filter).
Run: .venv/bin/python bench/bench_collision.py [--configs 1000] [--repeats 3]
Target (issue 11): <= 300 us per check.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pinocchio as pin

from robokin_ros.core.collision.clearance import ClearanceChecker
from robokin_ros.core.collision.geometry import build_robot_geometry
from robokin_ros.core.collision.scene import SceneObject, collision_shape
from robokin_ros.core.robot import RobotModel

SCENE = (
    SceneObject("table", "box", (1.6, 1.2, 0.05), (0.3, 0.0, -0.025)),
    SceneObject("back_wall", "box", (0.05, 1.2, 1.2), (-0.45, 0.0, 0.6)),
    SceneObject("side_wall", "box", (1.2, 0.05, 1.0), (0.3, -0.6, 0.5)),
    SceneObject("shelf", "box", (0.3, 0.6, 0.02), (0.65, 0.0, 0.8)),
    SceneObject("bin", "box", (0.3, 0.2, 0.15), (0.5, 0.35, 0.075), (0.0, 0.0, 0.149, 0.989)),
    SceneObject("crate", "box", (0.2, 0.2, 0.15), (0.55, -0.25, 0.075)),
    SceneObject("lamp", "sphere", (0.08,), (0.35, -0.3, 0.9)),
    SceneObject("ball", "sphere", (0.05,), (0.6, 0.2, 0.3)),
    SceneObject("post", "cylinder", (0.6, 0.03), (0.55, -0.35, 0.3)),
    SceneObject("funnel", "cone", (0.2, 0.06), (0.6, 0.1, 0.1)),
)


def timed(step, configs: list[np.ndarray], repeats: int) -> np.ndarray:
    """Per-configuration time [us] of `step(q)`: the fastest of `repeats` passes, after a warm-up pass."""
    for q in configs[:200]:
        step(q)
    best = np.full(len(configs), np.inf)
    clock = time.perf_counter_ns
    for _ in range(repeats):
        for k, q in enumerate(configs):
            t0 = clock()
            step(q)
            best[k] = min(best[k], (clock() - t0) / 1e3)
    return best


def plain_distances(robot: RobotModel, convex: bool, srdf_filter: bool):
    """pin.computeDistances over every pair: self pairs (SRDF-filtered or all cross-body) + robot-object pairs."""
    geometry = build_robot_geometry(robot, convex=convex)
    model = geometry.geometry_model.copy()
    model.removeAllCollisionPairs()
    robot_count = model.ngeoms
    if srdf_filter:
        pairs = list(geometry.self_pairs)
    else:
        objects = geometry.geometry_model.geometryObjects
        pairs = [(a, b) for a in range(robot_count) for b in range(a + 1, robot_count)
                 if objects[a].parentJoint != objects[b].parentJoint]
    for obj in SCENE:
        index = model.addGeometryObject(pin.GeometryObject(obj.id, 0, 0, obj.base_T_object, collision_shape(obj)))
        pairs += [(g, index) for g in range(robot_count) if model.geometryObjects[g].parentJoint != 0]
    for a, b in pairs:
        model.addCollisionPair(pin.CollisionPair(a, b))
    data, geometry_data = robot.model.createData(), pin.GeometryData(model)

    def step(q):
        pin.computeDistances(robot.model, data, model, geometry_data, q)
    return step, len(pairs)


def fd_gradient(checker: ClearanceChecker, n: int):
    steps = 1e-4 * np.eye(n)

    def step(q):
        return [checker.check(q + e, False).distance - checker.check(q - e, False).distance for e in steps]
    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    robot = RobotModel.from_name("panda")
    checker = ClearanceChecker(robot, objects=SCENE, relevant_distance=0.25)
    rng = np.random.default_rng(0)
    configs = [robot.random_positions(rng) for _ in range(args.configs)]
    results = [checker.check(q) for q in configs]
    pairs = len(checker.pair_names)
    rows = [("robokin check (with gradient)", "bounds -> exact on candidates (hulls)", checker.check, pairs),
            ("robokin check, no gradient", "same, FK only", lambda q: checker.check(q, False), pairs)]
    rows.append(("gradient by finite differences", "2n = 14 extra checks", fd_gradient(checker, robot.n), pairs))
    for name, convex, srdf in (("pin.computeDistances, hulls", True, True),
                               ("pin.computeDistances, meshes (BVH)", False, True),
                               ("pin.computeDistances, meshes, no SRDF", False, False)):
        step, count = plain_distances(robot, convex, srdf)
        rows.append((name, "every pair, no pruning", step, count))
    print(f"Panda self (SRDF) + {len(SCENE)} primitives, {len(configs)} random configurations x {args.repeats} "
          "passes (fastest per configuration); times in microseconds\n")
    print(f"| {'row':38} | {'how':38} | pairs |   median |      p99 | vs check |")
    print(f"|{'-' * 40}|{'-' * 40}|-------|----------|----------|----------|")
    times = {}
    for name, how, step, count in rows:
        times[name] = timed(step, configs, args.repeats)
        med, p99 = np.median(times[name]), np.percentile(times[name], 99)
        ratio = med / np.median(times[rows[0][0]])
        print(f"| {name:38} | {how:38} | {count:5d} | {med:8.1f} | {p99:8.1f} | {ratio:7.1f}x |", flush=True)
    ours = times[rows[0][0]]
    gradient = np.median(ours) - np.median(times[rows[1][0]])
    contact = np.array([r.distance <= 0 for r in results])
    evaluated = np.array([r.evaluated for r in results])
    print(f"\ngradient cost (check minus no-gradient check, medians): {gradient:.1f} us")
    print(f"exact distances computed per check: mean {evaluated.mean():.1f}, max {evaluated.max()} of {pairs} pairs; "
          f"nearest pair proven (within relevant_distance 0.25 m): {np.mean([r.exact for r in results]):.0%}")
    print(f"configurations in contact: {contact.mean():.0%} (check median {np.median(ours[contact]):.1f} us); "
          f"clear: median {np.median(ours[~contact]):.1f} us, p99 {np.percentile(ours[~contact], 99):.1f} us")
    print(f"\ncheck: median {np.median(ours):.1f} us, p99 {np.percentile(ours, 99):.1f} us (target <= 300 us)")


if __name__ == "__main__":
    main()
