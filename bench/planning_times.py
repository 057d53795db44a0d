"""Planning times of the path and program benches' cases, this tree against the tree of a git revision, interleaved.

Each round plans every case (bench_path's suite on the Panda and the UR5, its huge goals, bench_program's two
programs and its waypoint path) in a fresh process per tree, old and new alternately, and keeps per case the median
of the warm calls; the table gives the median over the rounds. A tree plans with `MotionPlanner.plan` where it has
it, else with the former `CartesianPathPlanner.plan` and `ProgramPlanner.plan`: the same requests are timed.
Times are the process's CPU time (one BLAS thread), which a machine shared with other jobs disturbs far less than
wall time; `--wall` for wall time.

Run: .venv/bin/python bench/planning_times.py [--rev REV] [--rounds 3] [--repeats 5]
"""
from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from other_tree import archived_tree, run_python

ROOT = Path(__file__).resolve().parents[1]

TIME_SCRIPT = r'''
import json, statistics, sys, time, warnings
import numpy as np, pinocchio as pin
warnings.filterwarnings("ignore")
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.program.program_file import load_program_file, program_from_mapping
from robokin_ros.core.robot import RobotModel
try:                                                # the one planner of issue 25
    from robokin_ros.core.program.moves import waypoint_program
    from robokin_ros.core.program.planner import MotionPlanner
except ImportError:                                 # before it: the former planners
    from robokin_ros.core.path.planner import CartesianPathPlanner
    from robokin_ros.core.program.planner import ProgramPlanner
    MotionPlanner = None
bench_dir, examples, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
clock = time.perf_counter if sys.argv[4] == "wall" else time.process_time
sys.path.insert(0, bench_dir)
from bench_path import ACC, suite                   # noqa: E402
from bench_program import waypoints_of              # noqa: E402
out = {}


def path_planner(robot, config):
    return CartesianPathPlanner(robot, config) if MotionPlanner is None else MotionPlanner(robot, config)


def plan_path(planner, q0, waypoints, blend):
    if MotionPlanner is None:
        return planner.plan(q0, waypoints, blend)
    return planner.plan(waypoint_program(waypoints, blend), q0, solved_part=False)


def timed(name, call, repeats=repeats):
    call()                                          # warm
    seconds = []
    for _ in range(repeats):
        t0 = clock()
        call()
        seconds.append(clock() - t0)
    out[name] = statistics.median(seconds)


for robot_name in ("panda", "ur5"):
    robot = RobotModel.from_name(robot_name)
    planner = path_planner(robot, PathConfig(max_joint_acceleration=ACC[robot_name], planning_timeout=3600.0))
    q0 = robot.home()
    for title, waypoints, blend in suite(robot):
        timed(f"path {robot_name}: {title}", lambda: plan_path(planner, q0, waypoints, blend))
robot = RobotModel.from_name("panda")
planner = path_planner(robot, PathConfig(max_joint_acceleration=ACC["panda"], planning_timeout=3600.0))
q0, T0 = robot.home(), robot.fk(robot.home())
a = np.linspace(0.0, 2 * np.pi, 5001)[1:]
square = 1e-3 * np.array([[1.0, 0, 0], [1.0, 1.0, 0], [0, 1.0, 0], [0, 0, 0]])
for name, offsets in {"circle 3 cm, 5000 wp": 0.015 * np.column_stack([np.cos(a) - 1, np.sin(a), 0 * a]),
                      "line 10 cm, 1000 collinear wp": np.column_stack([np.linspace(1e-4, 0.1, 1000),
                                                                        np.zeros(1000), np.zeros(1000)]),
                      "square loops 1 mm, 400 sharp corners": np.resize(square, (400, 3))}.items():
    waypoints = [pin.SE3(T0.rotation, T0.translation + d) for d in offsets]
    timed(f"huge: {name}", lambda: plan_path(planner, q0, waypoints, 0.0), 3)
config = PathConfig(robot="panda", max_joint_acceleration=ACC["panda"], clamp_blend_radius=True,
                    planning_timeout=3600.0)
paths = path_planner(robot, config)
programs = paths if MotionPlanner is not None else ProgramPlanner(paths)
loaded = {}
for kind in ("zoned", "fine"):
    from pathlib import Path
    loaded[kind] = program_from_mapping(load_program_file(Path(examples) / f"pick_place_{kind}.yaml"), T0, robot.n,
                                        robot.fk)
    timed(f"program: pick_place_{kind}", lambda: programs.plan(loaded[kind], q0))
waypoints = waypoints_of(loaded["zoned"], robot)
timed("program bench: waypoint path (50 mm)", lambda: plan_path(paths, q0, waypoints, 0.05))
print(json.dumps(out))
'''


def times_of(source_dir: Path, repeats: int, clock: str) -> dict:
    out = run_python(source_dir, TIME_SCRIPT, (ROOT / "bench", ROOT / "examples" / "programs", repeats, clock),
                     "timing", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rev", default="5d782a03d65a00c0a080de04b22af3b7a5b594ab", help="the 'before' revision")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--wall", action="store_true", help="wall time instead of the process's CPU time")
    args = parser.parse_args()
    before, now = [], []
    with archived_tree(args.rev) as old_tree:
        for _ in range(args.rounds):
            clock = "wall" if args.wall else "cpu"
            before.append(times_of(old_tree, args.repeats, clock))
            now.append(times_of(ROOT, args.repeats, clock))
    kind = "wall" if args.wall else "CPU"
    print(f"| case | before ({args.rev[:7]}) [ms {kind}] | now [ms {kind}] | now / before |")
    print("|---|---|---|---|")
    for name in before[0]:
        b = statistics.median(r[name] for r in before) * 1e3
        n = statistics.median(r[name] for r in now) * 1e3
        print(f"| {name} | {b:.1f} | {n:.1f} | {n / b:.3f} |")
    total_b = sum(statistics.median(r[k] for r in before) for k in before[0])
    total_n = sum(statistics.median(r[k] for r in now) for k in before[0])
    print(f"| total | {total_b * 1e3:.1f} | {total_n * 1e3:.1f} | {total_n / total_b:.3f} |")


if __name__ == "__main__":
    main()
