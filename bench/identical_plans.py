"""Identity harness: every plan of the path and program benches, the approach variants and failing requests,
planned by this tree and by the tree of a git revision, compared bit for bit.

Compared: trajectories (times, positions, velocities, accelerations: np.array_equal), the IK prefix, kept knots,
status codes, messages, fraction, failed move / sample / joint, failure pose, report numbers (compute times
excluded), the solved part of a failed path, refusals (exception type and text), and the action result fields of
ExecuteCartesianPath as path_conversions / program_conversions fill them (needs the ROS environment; skipped with a
note without it).

Run: source scripts/ros_env.sh && .venv/bin/python bench/identical_plans.py [--rev REV] [--no-huge]
Exit status 0 when every case is identical.
"""
from __future__ import annotations

import argparse
import pickle
import sys
import tempfile
from pathlib import Path

from other_tree import archived_tree, run_python

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_REV = "5d782a03d65a00c0a080de04b22af3b7a5b594ab"     # the commit issue 25's planner step started from

# run by this tree and by the old tree alike: the planning calls go through a compat layer (`path_planner`,
# `path_plan`, `program_plan`, `prefix_of`, `outcome`) that uses MotionPlanner where the tree has it and the former
# planners (CartesianPathPlanner, plan_with_approach, ProgramPlanner) where it does not
PLAN_SCRIPT = r'''
import dataclasses, pickle, sys, types, warnings
import numpy as np, pinocchio as pin
warnings.filterwarnings("ignore")
from robokin_ros.core.path.config import PathConfig
try:                                       # the one planner of issue 25, where the tree has it
    from robokin_ros.core.program.planner import MotionPlanner
    from robokin_ros.core.program.moves import Approach, waypoint_program
    from robokin_ros.core.program.result import MotionPlan
    from robokin_ros.core.program.waypoint_plans import solved_trajectory, time_prefix
except ImportError:                        # before it: the former planners only
    MotionPlanner = None
    from robokin_ros.core.path.planner import CartesianPathPlanner
    from robokin_ros.core.path.approach import Approach, plan_with_approach
    from robokin_ros.core.program.planner import ProgramPlanner
from robokin_ros.core.program.program_file import load_program_file, program_from_mapping
from robokin_ros.core.program.moves import MotionProgram, Move, MoveKind
from robokin_ros.core.robot import RobotModel
try:                                       # core/ik/ since issue 25's rooms step; core/classroom/ before
    from robokin_ros.core.ik.branch_choice import nearest_branch_solver
except ImportError:
    from robokin_ros.core.classroom.branch_choice import nearest_branch_solver
try:
    from robokin_ros.ros import path_conversions as pc
    if hasattr(pc, "program_plan_options"):        # one module since issue 25
        prc = pc
    else:
        from robokin_ros.ros import program_conversions as prc
except ImportError:
    pc = prc = None

bench_dir, examples, out_file, huge = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
sys.path.insert(0, bench_dir)
from bench_path import ACC, suite                               # noqa: E402  (the benches' own cases)
from bench_program import waypoints_of                          # noqa: E402

NUMBERS = (int, float, bool, str, np.floating, np.integer, np.bool_)


def plain(value, depth=0):
    """A comparable picture of a result: arrays, numbers and strings; compute times left out."""
    if depth > 6:
        return repr(type(value))
    if value is None or isinstance(value, NUMBERS):
        return value.item() if isinstance(value, np.generic) else value
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, pin.SE3):
        return value.homogeneous.copy()
    if isinstance(value, (list, tuple)):
        return [plain(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v, depth + 1) for k, v in value.items() if k not in ("timings",)}
    if hasattr(value, "__dataclass_fields__"):
        return {f: plain(getattr(value, f), depth + 1) for f in value.__dataclass_fields__
                if f != "timings" and (not f.endswith("_time") or f == "start_time")} | {"@type": type(value).__name__}
    if hasattr(value, "value") and hasattr(value, "name"):        # enums and codes
        return (value.name, int(value))
    return repr(value)


def picture(plan):
    """Everything of a PathPlan or a ProgramPlan except compute times (timings dicts: keys only)."""
    out = plain(plan)
    out["timing keys"] = sorted((plan.timings or {}).keys())
    return out


def former_outcome(result, plan, goal, planner):
    """What a goal's result was filled from in the former mode: a PathPlan and its solved part, or a program's plan.
    Without the former conversions (path_outcome, solved_part, program_outcome: gone with the former planners) the
    same steps through MotionPlan: the timed solved part (`solved_trajectory`, what solved_part returned) on the
    MotionPlan of the PathPlan (what path_outcome built), then goal_outcome."""
    if MotionPlanner is None:
        if hasattr(plan, "ik"):
            solved = None if plan.ik.success else pc.solved_part(planner, plan, goal)
            return pc.path_outcome(result, plan, solved, goal)
        return prc.program_outcome(result, plan, goal)
    if hasattr(plan, "ik"):
        solved = None
        if not plan.ik.success:
            options = pc.plan_options(goal)
            solver = planner.solver(goal.tip_frame)
            solved = solved_trajectory(planner, plan, solver, solver.axes(options["axis_mask"],
                                                                          options["axis_frame"]))
        plan = MotionPlan.of_path(plan, solved, 0, 0)
    return prc.goal_outcome(result, plan, goal)


def outcome(plan, goal, planner=None, one_planner=False):
    """The ExecuteCartesianPath result fields path_conversions / program_conversions fill from a plan."""
    if pc is None:
        return "no ROS environment"
    result = pc.Result()
    if one_planner:
        got = prc.goal_outcome(result, plan, goal)
    else:
        got = former_outcome(result, plan, goal, planner)
    traj = got.trajectory
    fields = {name: getattr(result, name) for name in ("error_code", "message", "failed_joint", "fraction",
                                                       "arc_length", "failed_sample", "failed_move")}
    fields["failure_pose"] = [result.failure_pose.position.x, result.failure_pose.position.y,
                              result.failure_pose.position.z, result.failure_pose.orientation.x,
                              result.failure_pose.orientation.y, result.failure_pose.orientation.z,
                              result.failure_pose.orientation.w]
    fields["trajectory"] = [(p.time_from_start.sec, p.time_from_start.nanosec, list(p.positions),
                             list(p.velocities), list(p.accelerations)) for p in result.trajectory.points]
    fields["move_reports"] = [(m.name, m.start_time, m.duration, m.peak_tool_speed, m.peak_tool_angular_speed,
                               m.zone, m.limited_by) for m in result.move_reports]
    return {"code": got.code, "message": got.message, "executed_message": got.executed_message,
            "executes": None if traj is None else plain(traj), "result": fields}


def goal_of(**fields):
    base = dict(tip_frame="", axis_mask=[False] * 6, axis_mask_frame="", velocity_scaling=0.0,
                acceleration_scaling=0.0, plan_only=False, execute_partial=True, approach=0)
    base.update(fields)
    return types.SimpleNamespace(**base)


results = {}
# "former": the former calls' request and result (a PathPlan without the solved part; a program's plan), made by
# MotionPlanner where the tree has it; "one planner": MotionPlanner.plan's own result (the solved part included)
MODE = ["former"]


def path_planner(robot, config, pose_solver=None):
    if MotionPlanner is None:
        return CartesianPathPlanner(robot, config, pose_solver)
    return MotionPlanner(robot, config, pose_solver)


def path_plan(planner, q0, waypoints, blend=None, approach=0, **options):
    if MotionPlanner is None:
        return plan_with_approach(planner, q0, waypoints, blend, approach, **options) if approach else \
            planner.plan(q0, waypoints, blend, **options)
    program = waypoint_program(waypoints, planner.config.blend_radius if blend is None else blend, approach)
    if MODE[0] == "former":          # what CartesianPathPlanner.plan and plan_with_approach returned
        return planner.plan(program, q0, solved_part=False, **options).path_plan()
    return planner.plan(program, q0, **options)


def program_plan(programs, program, q0):
    # ProgramPlanner(paths).plan(program, q0) was MotionPlanner.plan(paths, program, q0): one call in both modes
    return programs.plan(program, q0)


def prefix_of(planner, ik):
    """The timed solved IK prefix of a failed path (default tool frame and axes, the config's scalings)."""
    if MotionPlanner is None:
        return planner.time_prefix(ik)
    solver = planner.solver()
    return time_prefix(planner, ik, solver, solver.axes(None, None))


def record(name, call, goal=None, planner=None):
    for mode in ("former", "one planner") if MotionPlanner is not None else ("former",):
        MODE[0] = mode
        key = name if mode == "former" else f"{name} [one planner]"
        try:
            plan = call()
        except Exception as err:                   # a refusal is a result too: its type and text
            results[key] = {"raised": type(err).__name__, "text": str(err)}
            continue
        if mode == "one planner" and plan.path_ik is not None:
            entry = {"plan": picture(plan.path_plan())}
        else:
            entry = {"plan": picture(plan)}
        ik = plan.ik if mode == "former" and hasattr(plan, "ik") else getattr(plan, "path_ik", None)
        if ik is not None and not ik.success and planner is not None:
            prefix = prefix_of(planner, ik)
            entry["prefix"] = None if prefix is None else plain(prefix)
        if goal is not None:
            entry["outcome"] = outcome(plan, goal, planner, mode == "one planner")
        results[key] = entry


# ---- bench_path's suite --------------------------------------------------------------------------------
for robot_name in ("panda", "ur5"):
    robot = RobotModel.from_name(robot_name)
    planner = path_planner(robot, PathConfig(max_joint_acceleration=ACC[robot_name]))
    q0 = robot.home()
    for title, waypoints, blend in suite(robot):
        record(f"path {robot_name}: {title}", lambda: path_plan(planner, q0, waypoints, blend), goal_of(), planner)
    if robot_name == "panda":
        waypoints = suite(robot)[2][1]
        record("path panda: rectangle, scalings 0.5/0.25, no timing",
               lambda: path_plan(planner, q0, waypoints, 0.03, time_parameterize=False))
        record("path panda: rectangle, scalings 0.5/0.25",
               lambda: path_plan(planner, q0, waypoints, 0.03, velocity_scaling=0.5, acceleration_scaling=0.25),
               goal_of(velocity_scaling=0.5, acceleration_scaling=0.25), planner)
        record("path panda: rectangle, plan_only",
               lambda: path_plan(planner, q0, waypoints, 0.03), goal_of(plan_only=True), planner)
        record("path panda: rectangle, axis mask xyz in tool",
               lambda: path_plan(planner, q0, waypoints, 0.03, axis_mask=np.array([1, 1, 1, 0, 0, 0], bool),
                                    axis_frame="tool"),
               goal_of(axis_mask=[True, True, True, False, False, False], axis_mask_frame="tool"), planner)
        record("path panda: bad scaling", lambda: path_plan(planner, q0, waypoints, 0.03, velocity_scaling=1.5))
        T0 = robot.fk(q0)
        record("path panda: already at the goal", lambda: path_plan(planner, q0, [T0, T0], 0.0), goal_of(), planner)
        record("path panda: no waypoints", lambda: path_plan(planner, q0, [], 0.0))
        absurd = [pin.SE3(T0.rotation, T0.translation + np.array([120.0, 0.0, 0.0]))]
        record("path panda: absurd waypoint", lambda: path_plan(planner, q0, absurd, 0.0))
        beyond = [pin.SE3(T0.rotation, T0.translation + np.array(d)) for d in ([0.1, 0, 0], [0.9, 0, 0])]
        for partial in (True, False):
            record(f"path panda: unreachable waypoint, execute_partial={partial}",
                   lambda: path_plan(planner, q0, beyond, 0.02), goal_of(execute_partial=partial), planner)

# ---- approach variants ----------------------------------------------------------------------------------
robot = RobotModel.from_name("panda")
for solver_name, pose_solver in (("iterative", None), ("nearest branch", nearest_branch_solver(robot))):
    planner = path_planner(robot, PathConfig(robot="panda"), pose_solver)
    q0, T0 = robot.home(), robot.fk(robot.home())

    def square(offset, corners=([0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.1, 0.1, 0.0])):
        return [pin.SE3(T0.rotation, T0.translation + np.asarray(offset) + np.asarray(c)) for c in corners]
    away, here = square([0.05, -0.1, -0.1]), square([0.0, 0.0, 0.0])
    far = square([0.05, -0.1, -0.1], ([0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.9, 0.1, 0.0]))
    cases = {"away": (away, 0.0), "away blended": (away, 0.02), "at start": (here, 0.0),
             "one waypoint": (away[:1], 0.0), "failing rest": (far, 0.0)}
    for approach in Approach:
        for case, (waypoints, blend) in cases.items():
            for scaled in (False, True):
                options = dict(velocity_scaling=0.5, acceleration_scaling=0.4) if scaled else {}
                goal = goal_of(approach=int(approach), **options)
                record(f"approach {solver_name} {approach.name}: {case}{', scaled' if scaled else ''}",
                       lambda: path_plan(planner, q0, waypoints, blend, approach, **options), goal, planner)
    unreachable = [pin.SE3(T0.rotation, T0.translation + np.array([0.7, 0.0, -0.3]))] + away[1:]
    for approach in (Approach.JOINT, Approach.LINEAR):
        record(f"approach {solver_name} {approach.name}: unreachable first waypoint",
               lambda: path_plan(planner, q0, unreachable, 0.0, approach), goal_of(approach=int(approach)),
               planner)
    record(f"approach {solver_name}: bad scaling",
           lambda: path_plan(planner, q0, away, 0.0, Approach.JOINT, acceleration_scaling=-1.0))

# ---- bench_program's programs, and failing ones -------------------------------------------------------------
config = PathConfig(robot="panda", max_joint_acceleration=ACC["panda"], clamp_blend_radius=True)
for solver_name, pose_solver in (("iterative", None), ("nearest branch", nearest_branch_solver(robot))):
    paths = path_planner(robot, config, pose_solver)
    programs = ProgramPlanner(paths) if MotionPlanner is None else paths
    q0, start = robot.home(), robot.fk(robot.home())
    loaded = {}
    for kind in ("zoned", "fine"):
        from pathlib import Path
        program = program_from_mapping(load_program_file(Path(examples) / f"pick_place_{kind}.yaml"), start,
                                       robot.n, robot.fk)
        loaded[kind] = program
        record(f"program {solver_name}: pick_place_{kind}", lambda: program_plan(programs, program, q0), goal_of())
        record(f"program {solver_name}: pick_place_{kind}, plan_only", lambda: program_plan(programs, program, q0),
               goal_of(plan_only=True))
        record(f"program {solver_name}: pick_place_{kind}, scalings",
               lambda: program_plan(programs, dataclasses.replace(program, velocity_scaling=0.6,
                                                                   acceleration_scaling=0.3), q0), goal_of())
    waypoints = waypoints_of(loaded["zoned"], robot)
    record(f"path {solver_name}: bench_program's waypoint path", lambda: path_plan(paths, q0, waypoints, 0.05),
           goal_of(), paths)

    def at(d):
        return pin.SE3(start.rotation, start.translation + np.asarray(d, float))
    failing = {
        "unreachable MoveL": [Move(MoveKind.LINEAR, at([0.1, 0, 0]), zone=0.02), Move(MoveKind.LINEAR, at([0.9, 0, 0])),
                              Move(MoveKind.LINEAR, at([0, 0, 0]))],
        "unreachable MoveJ pose": [Move(MoveKind.LINEAR, at([0.1, 0, 0])), Move(MoveKind.JOINT, at([0.7, 0, -0.3]))],
        "MoveJ outside limits": [Move(MoveKind.JOINT, joints=q0 + 10.0)],
        "absurd MoveL": [Move(MoveKind.LINEAR, at([120.0, 0, 0]))],
        "zero length": [Move(MoveKind.LINEAR, at([0, 0, 0])), Move(MoveKind.JOINT, joints=q0)],
        "zero length then a line": [Move(MoveKind.LINEAR, at([0, 0, 0])), Move(MoveKind.LINEAR, at([0.05, 0, 0]))],
        "MoveJ zone MoveL": [Move(MoveKind.JOINT, joints=q0 + 0.2, zone=0.03), Move(MoveKind.LINEAR, at([0.05, 0, 0]),
                                                                                    speed=0.1)],
        "bad move scaling": [Move(MoveKind.LINEAR, at([0.05, 0, 0]), joint_speed=2.0)],
    }
    for case, moves in failing.items():
        program = MotionProgram(tuple(moves))
        record(f"program {solver_name}: {case}", lambda: program_plan(programs, program, q0), goal_of())
        record(f"program {solver_name}: {case}, execute_partial=False", lambda: program_plan(programs, program, q0),
               goal_of(execute_partial=False))
    record(f"program {solver_name}: empty", lambda: program_plan(programs, MotionProgram(()), q0))

# ---- bench_path's huge goals --------------------------------------------------------------------------------
if huge:
    robot = RobotModel.from_name("panda")
    planner = path_planner(robot, PathConfig(max_joint_acceleration=ACC["panda"]))
    q0 = robot.home()
    T0 = robot.fk(q0)
    a = np.linspace(0.0, 2 * np.pi, 5001)[1:]
    square = 1e-3 * np.array([[1.0, 0, 0], [1.0, 1.0, 0], [0, 1.0, 0], [0, 0, 0]])
    cases = {"circle 3 cm, 5000 wp": 0.015 * np.column_stack([np.cos(a) - 1, np.sin(a), 0 * a]),
             "line 10 cm, 1000 collinear wp": np.column_stack([np.linspace(1e-4, 0.1, 1000), np.zeros(1000),
                                                               np.zeros(1000)]),
             "square loops 1 mm, 400 sharp corners": np.resize(square, (400, 3))}
    for name, offsets in cases.items():
        waypoints = [pin.SE3(T0.rotation, T0.translation + d) for d in offsets]
        record(f"huge: {name}", lambda: path_plan(planner, q0, waypoints, 0.0), goal_of(), planner)

with open(out_file, "wb") as f:
    pickle.dump(results, f)
'''


def plan_all(source_dir: Path, huge: bool) -> dict:
    """PLAN_SCRIPT's results with `robokin_ros` imported from `source_dir`."""
    with tempfile.NamedTemporaryFile(suffix=".pkl", delete=False) as f:
        out = Path(f.name)
    try:
        run_python(source_dir, PLAN_SCRIPT, (ROOT / "bench", ROOT / "examples" / "programs", out, "1" if huge else "0"),
                   "planning")
        with open(out, "rb") as f:
            return pickle.load(f)
    finally:
        out.unlink(missing_ok=True)


RENAMED = {("ProgramPlan", "MotionPlan")}          # result types renamed by issue 25 (same fields, and more)


def differences(a, b, where: str = "") -> list[str]:
    """Where two pictures differ (arrays by np.array_equal, NaN equal to NaN); fields only `b` has are allowed."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        same = (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
        return [] if same else [f"{where}: arrays differ"]
    if isinstance(a, dict) and isinstance(b, dict):
        # fields the new result adds are not differences; every field of the old one must be there, equal
        out = [f"{where}.{k}: only before" for k in sorted(set(a) - set(b))]
        for k in sorted(set(a) & set(b) - {"@type"}):
            out += differences(a[k], b[k], f"{where}.{k}")
        types = (a.get("@type"), b.get("@type"))
        if types[0] != types[1] and types not in RENAMED:
            out.append(f"{where}: a {types[0]} before, a {types[1]} now")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} vs {len(b)} items"]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += differences(x, y, f"{where}[{i}]")
        return out
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return []
    return [] if a == b else [f"{where}: {a!r} before, {b!r} now"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rev", default=DEFAULT_REV, help="git revision of the 'before' tree")
    parser.add_argument("--no-huge", action="store_true", help="leave out bench_path's huge goals")
    args = parser.parse_args()
    with archived_tree(args.rev) as old_tree:
        before = plan_all(old_tree, not args.no_huge)
    now = plan_all(ROOT, not args.no_huge)
    failed = 0
    for name in sorted(set(before) | set(now)):
        if name.endswith(" [one planner]"):         # MotionPlanner.plan against the former call, before
            if name.removesuffix(" [one planner]") in before:
                found = differences(before[name.removesuffix(" [one planner]")], now[name])
                if found:
                    failed += 1
                    print(f"DIFFERENT  {name}")
                    for line in found[:12]:
                        print(f"    {line}")
            continue
        if name not in before or name not in now:
            print(f"DIFFERENT  {name}: only {'before' if name in before else 'now'}")
            failed += 1
            continue
        found = differences(before[name], now[name])
        if found:
            failed += 1
            print(f"DIFFERENT  {name}")
            for line in found[:12]:
                print(f"    {line}")
    ros = any(isinstance(v, dict) and isinstance(v.get("outcome"), dict) for v in now.values())
    compared = len(set(before) | {n for n in now if not n.endswith(" [one planner]")}) + \
        sum(n.removesuffix(" [one planner]") in before for n in now if n.endswith(" [one planner]"))
    print(f"{compared - failed} of {compared} plans identical to {args.rev[:12]} "
          f"({sum(n.endswith(' [one planner]') for n in now)} of them through MotionPlanner.plan)"
          + ("" if ros else " (action results not compared: no ROS environment)"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
