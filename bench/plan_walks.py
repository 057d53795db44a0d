"""The walks of issue 25: which package files a waypoint goal and a program move cross, this tree and a git revision.

A walk is the set of robokin_ros files whose code runs during one warm plan of an ExecuteCartesianPath goal and
the filling of its result: a 3-waypoint path with a MoveJ approach, and a 3-move program (MoveJ, MoveL, MoveC).
Files are found by profiling the calls (sys.setprofile), so a module only imported does not count.

Run: source scripts/ros_env.sh && .venv/bin/python bench/plan_walks.py [--rev REV] [--list]
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from other_tree import archived_tree, run_python

ROOT = Path(__file__).resolve().parents[1]

WALK_SCRIPT = r'''
import json, sys, types, warnings
import numpy as np, pinocchio as pin
warnings.filterwarnings("ignore")
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.program.moves import MotionProgram, Move, MoveKind
from robokin_ros.core.robot import RobotModel
from robokin_ros.ros import path_conversions as pc
if hasattr(pc, "program_plan_options"):        # one module since issue 25
    prc = pc
else:
    from robokin_ros.ros import program_conversions as prc
try:
    from robokin_ros.core.program.planner import MotionPlanner
    from robokin_ros.core.program.moves import Approach, waypoint_program
except ImportError:
    MotionPlanner = None
    from robokin_ros.core.path.approach import Approach, plan_with_approach
    from robokin_ros.core.path.planner import CartesianPathPlanner
    from robokin_ros.core.program.planner import ProgramPlanner
robot = RobotModel.from_name("panda")
q0, T0 = robot.home(), robot.fk(robot.home())


def at(d):
    return pin.SE3(T0.rotation, T0.translation + np.asarray(d, float))
goal = types.SimpleNamespace(tip_frame="", axis_mask=[False] * 6, axis_mask_frame="", velocity_scaling=0.0,
                             acceleration_scaling=0.0, plan_only=False, execute_partial=True, approach=1)
waypoints = [at([0.05, -0.1, -0.1]), at([0.15, -0.1, -0.1]), at([0.15, 0.0, -0.1])]
program = MotionProgram((Move(MoveKind.JOINT, joints=q0 + 0.1, zone=0.02), Move(MoveKind.LINEAR, at([0.05, 0, 0])),
                         Move(MoveKind.CIRCULAR, at([0.05, 0.1, 0]), via=np.array(at([0.1, 0.05, 0]).translation))))
if MotionPlanner is not None:
    planner = MotionPlanner(robot, PathConfig(robot="panda", planning_timeout=3600.0))

    def waypoint_goal():
        plan = planner.plan(waypoint_program(waypoints, 0.0, Approach.JOINT), q0, **pc.plan_options(goal))
        return prc.goal_outcome(pc.Result(), plan, goal)

    def program_goal():
        plan = planner.plan(program, q0, **prc.program_plan_options(goal))
        return prc.goal_outcome(pc.Result(), plan, goal)
else:
    planner = CartesianPathPlanner(robot, PathConfig(robot="panda", planning_timeout=3600.0))
    programs = ProgramPlanner(planner)

    def waypoint_goal():
        plan = plan_with_approach(planner, q0, waypoints, 0.0, Approach.JOINT, **pc.plan_options(goal))
        solved = None if plan.ik.success else pc.solved_part(planner, plan, goal)
        return pc.path_outcome(pc.Result(), plan, solved, goal)

    def program_goal():
        plan = programs.plan(program, q0, **prc.program_plan_options(goal))
        return prc.program_outcome(pc.Result(), plan, goal)
out = {}
for name, call in (("waypoint goal", waypoint_goal), ("program goal", program_goal)):
    assert call().code == 0
    files = set()

    def profile(frame, event, arg):
        if event == "call":
            path = frame.f_code.co_filename
            if "/robokin_ros/" in path:
                files.add(path.split("/robokin_ros/", 1)[1])
    sys.setprofile(profile)
    call()
    sys.setprofile(None)
    out[name] = sorted(files)
print(json.dumps(out))
'''


def walks_of(source_dir: Path) -> dict:
    return json.loads(run_python(source_dir, WALK_SCRIPT, what="walking").strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rev", default="5d782a03d65a00c0a080de04b22af3b7a5b594ab", help="the 'before' revision")
    parser.add_argument("--list", action="store_true", help="list the files of each walk")
    args = parser.parse_args()
    with archived_tree(args.rev) as old_tree:
        before = walks_of(old_tree)
    now = walks_of(ROOT)
    for name in before:
        print(f"{name}: {len(before[name])} files before ({args.rev[:7]}), {len(now[name])} now")
        if args.list:
            print("  only before: " + ", ".join(sorted(set(before[name]) - set(now[name]))))
            print("  only now: " + ", ".join(sorted(set(now[name]) - set(before[name]))))
            print("  now: " + ", ".join(now[name]))


if __name__ == "__main__":
    main()
