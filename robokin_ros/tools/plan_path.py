"""plan_path: plan a Cartesian path or a motion program offline (no ROS) from YAML or CSV files.

Prints the report, writes the trajectory as CSV and JSON and a PNG (tool path, joint positions and
velocities over time; for programs the tool speed per move and the cycle time). Examples:
    plan_path examples/paths/panda_rectangle.yaml --out /tmp/rect
    plan_path examples/programs/pick_place_fine.yaml examples/programs/pick_place_zoned.yaml --out /tmp/pp

Several program files are planned one after the other and compared (cycle times, one PNG). A YAML file with a
`moves` list is a motion program (format: robokin_ros/core/program/program_file.py).

YAML file: `robot` (optional), `start_positions` (optional, default home), `blend_radius`, `relative`
(true: waypoint positions are offsets from the start tool position in base axes), `waypoints`: a list of
{position: [x, y, z], orientation: [qx, qy, qz, qw] (optional: keep the start orientation) or
rpy: [r, p, y] [rad] (base-frame roll-pitch-yaw)}. CSV file: rows `x, y, z[, qx, qy, qz, qw]`, a header
row is skipped; absolute positions.
"""
from __future__ import annotations

import dataclasses
import json
import re
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import ConfigError, InvalidInputError, PathInputError, RobokinError
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.report import report_text
from robokin_ros.core.path.result import PathPlan
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays
from robokin_ros.core.program.moves import Approach, MotionProgram, waypoint_program
from robokin_ros.core.program.planner import MotionPlanner
from robokin_ros.core.program.program_file import load_program_file, program_from_mapping
from robokin_ros.core.program.result import cycle_report_text
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.schema import config_from_mapping
from robokin_ros.core.yaml_lines import line_of, read_yaml, where
from robokin_ros.tools.cli_errors import OneLineParser, report
from robokin_ros.tools.program_plot import program_png
from robokin_ros.tools.waypoint_file import load_request, numbers, waypoint_line, waypoint_poses

__all__ = ["load_request", "main", "waypoint_poses", "write_outputs", "write_trajectory"]


def write_outputs(plan: PathPlan, prefix: Path) -> list[Path]:
    """Write prefix.csv, prefix.json and prefix.png; returns the written paths."""
    return [*write_trajectory(plan.trajectory, prefix), _plot(plan, prefix.with_suffix(".png"))]


def write_trajectory(traj: JointTrajectoryArrays | None, prefix: Path) -> list[Path]:
    """Write prefix.csv and prefix.json (nothing without a trajectory); returns the written paths."""
    prefix.parent.mkdir(parents=True, exist_ok=True)
    written = []
    if traj is not None:
        names = list(traj.joint_names)
        header = ["time"] + names + [f"{n}_vel" for n in names] + [f"{n}_acc" for n in names]
        table = np.column_stack([traj.times, traj.positions, traj.velocities, traj.accelerations])
        np.savetxt(prefix.with_suffix(".csv"), table, delimiter=",", header=",".join(header), comments="")
        written.append(prefix.with_suffix(".csv"))
        prefix.with_suffix(".json").write_text(json.dumps({
            "joint_names": names, "times": traj.times.tolist(), "positions": traj.positions.tolist(),
            "velocities": traj.velocities.tolist(), "accelerations": traj.accelerations.tolist()}))
        written.append(prefix.with_suffix(".json"))
    return written


def _plot(plan: PathPlan, out: Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = plt.figure(figsize=(13, 4.5))
    ax = fig.add_subplot(1, 3, 1, projection="3d")
    P = plan.ik.path.positions
    ax.plot(P[:, 0], P[:, 1], P[:, 2], "b-", lw=1, label="planned tool path")
    if not plan.ik.success:
        f = plan.ik.failure_pose.translation
        ax.scatter([f[0]], [f[1]], [f[2]], c="r", s=40, label="failure")
    ax.set_xlabel("x [m]"), ax.set_ylabel("y [m]"), ax.set_zlabel("z [m]"), ax.legend(fontsize=7)
    traj = plan.trajectory
    for col, (title, values) in enumerate((("joint positions [rad]", None), ("joint velocities [rad/s]", None)), 2):
        a = fig.add_subplot(1, 3, col)
        if traj is not None:
            a.plot(traj.times, traj.positions if col == 2 else traj.velocities, lw=1)
            a.set_xlabel("time [s]")
        else:
            a.plot(plan.ik.positions, lw=1)
            a.set_xlabel("dense sample (solved prefix)")
        a.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out


def _axis_mask(digits: str | None) -> np.ndarray | None:
    """The command line's six 0/1 digits as the bool (6,) mask the planner takes (None = the config's)."""
    if digits is None:
        return None
    if len(digits) != 6 or set(digits) - {"0", "1"}:
        raise RobokinError(f"--axis-mask {digits!r} must be six 0/1 digits (vx vy vz wx wy wz), e.g. 111110")
    return np.array([ch == "1" for ch in digits])


def _config(args, robot_name: str) -> PathConfig:
    """PathConfig from --config (a path_ik_node parameter YAML) and the robot; problems name `file:line`."""
    values, lines = _config_values(args.config) if args.config else ({}, {})
    values["robot"] = robot_name
    try:
        return config_from_mapping(PathConfig, values)
    except ConfigError as err:
        located = [f"{where(args.config, _problem_line(problem, lines))}: {problem}" if args.config else problem
                   for problem in err.problems]
        raise ConfigError(located, "path_ik_node parameters") from None


def _config_values(path: str) -> tuple[dict, dict]:
    """({parameter: value}, {parameter: line}) of a ROS parameter file {node_name or /**: {ros__parameters}}."""
    data = read_yaml(path, "--config file") or {}
    values, lines = {}, {}
    if not isinstance(data, dict):
        raise InvalidInputError(f"{where(path, data)}: expected {{node name: {{ros__parameters: {{...}}}}}}")
    for name, node in data.items():
        parameters = node.get("ros__parameters") if isinstance(node, dict) else None
        if not isinstance(parameters, dict):
            raise InvalidInputError(f"{where(path, line_of(data, name))}: '{name}' needs a ros__parameters mapping")
        values.update(parameters)
        lines.update((key, line_of(parameters, key)) for key in parameters)
    return values, lines


def _problem_line(problem: str, lines: dict) -> int:
    """The line of the parameter a ConfigError problem names ("name=value ..." or "parameter 'name'")."""
    return next((line for key, line in lines.items()
                 if problem.startswith(f"{key}=") or f"parameter '{key}'" in problem), 0)


def _start_positions(args, request: dict, path: str) -> np.ndarray | None:
    """--start (comma-separated, 'pi/2' style allowed), else the file's start_positions, else None (home)."""
    if args.start:
        from robokin_ros.tools.robokin_cli.dh2urdf import parse_number
        try:
            return np.array([parse_number(v) for v in args.start.split(",")])
        except ValueError as err:
            raise InvalidInputError(f"--start: {err} (comma-separated joint positions [rad])") from None
    value = request.get("start_positions")
    if value is None or isinstance(value, np.ndarray):
        return value
    try:
        return numbers(value, None, "start_positions")
    except InvalidInputError as err:
        raise InvalidInputError(f"{where(path, line_of(request, 'start_positions'))}: {err}") from None


def _planner_and_start(args, request: dict, path: str, one_chain: bool = False) -> tuple[MotionPlanner, np.ndarray,
                                                                                         pin.SE3]:
    """The planner for the file's (or --robot's) robot and the start state (--start, the file's, else home) with
    its tool pose. `one_chain` (a waypoint path): a robot with several tips is cut to the chain of --tip, else of
    its first tip, and stderr says so."""
    robot_name = args.robot or request.get("robot", "panda")
    if not isinstance(robot_name, str):
        raise InvalidInputError(f"{where(path, line_of(request, 'robot'))}: robot must be a name or a URDF path, "
                                f"got {robot_name!r}")
    config = _config(args, robot_name)
    robot = RobotModel.load(robot_name, config.base_frame, config.tip_frame)
    if one_chain and len(robot.tip_frames) > 1:
        tip = args.tip or robot.tip_frame
        if tip not in robot.tip_frames:
            raise InvalidInputError(f"--tip {tip!r}: a waypoint path on {robot_name} plans one of its tips "
                                    f"{list(robot.tip_frames)}")
        robot = RobotModel.load(robot_name, robot.base_frame, tip)
        print(f"plan_path: {robot_name} has several tips: planning the chain {robot.base_frame} -> {tip} "
              f"({len(robot.joint_names)} joints; --tip names another)", file=sys.stderr)
    planner = MotionPlanner(robot, config)
    start = _start_positions(args, request, path)
    start = robot.home() if start is None else start
    try:
        start = robot.check_positions(start, "start positions")
    except InvalidInputError as err:
        source = "--start" if args.start else where(path, line_of(request, "start_positions"))
        raise InvalidInputError(f"{source}: {err}") from None
    if len(robot.tip_frames) > 1:                  # a program on several tips: the solvers of one chain do not apply
        tip = args.tip or robot.tip_frame
        if tip not in robot.tip_frames:
            raise InvalidInputError(f"--tip {tip!r} is not one of {robot_name}'s tips {list(robot.tip_frames)}")
        return planner, start, robot.fk(start, tip)
    R, p = planner.solver(args.tip).fk(start[None])
    return planner, start, pin.SE3(R[0], p[0])


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `plan_path` console script."""
    parser = OneLineParser(prog="plan_path", description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+", metavar="file",
                        help="YAML or CSV waypoint file, or one or more motion program YAML files")
    parser.add_argument("--robot", default=None, help="embedded robot name or URDF path (default: file or panda)")
    parser.add_argument("--config", default=None, help="ROS parameter YAML of path_ik_node (PathConfig)")
    parser.add_argument("--start", default=None, help="comma-separated start joint positions [rad]")
    parser.add_argument("--blend-radius", type=float, default=None, help="corner blend radius [m]")
    parser.add_argument("--velocity-scaling", type=float, default=None,
                        help="fraction of the joint velocity limits in (0, 1]; 0 = the config's (a program's own "
                             "velocity_scaling is replaced)")
    parser.add_argument("--acceleration-scaling", type=float, default=None,
                        help="fraction of the joint acceleration limits in (0, 1]; 0 = the config's")
    parser.add_argument("--tip", default="", help="tool frame (default: the robot's tip)")
    parser.add_argument("--axis-mask", default=None, help="six 0/1 digits (vx vy vz wx wy wz), e.g. 111110")
    parser.add_argument("--axis-frame", default=None, choices=("tool", "base"))
    parser.add_argument("--out", default=None, help="output prefix for .csv/.json/.png (default: next to input)")
    parser.add_argument("--approach", default="path", choices=[a.name.lower() for a in Approach],
                        help="how a waypoint path begins: path (from the current pose, as before), joint / linear "
                             "(an approach move to the first waypoint), refuse")
    args = parser.parse_args(argv)
    if any(_is_program(f) for f in args.files):
        return program_main(args)
    if len(args.files) > 1:
        return report("plan_path", "several files are compared only when they are motion programs")
    args.waypoints = args.files[0]
    try:
        request = load_request(args.waypoints)
        planner, start, start_pose = _planner_and_start(args, request, args.waypoints, one_chain=True)
        poses = waypoint_poses(request, start_pose)
        mask = _axis_mask(args.axis_mask)
        blend = args.blend_radius if args.blend_radius is not None else request.get("blend_radius")
        program = waypoint_program(poses, planner.config.blend_radius if blend is None else blend,
                                   Approach[args.approach.upper()])
        # the path's report and files as before: no trajectory file when the path failed
        plan = planner.plan(program, start, tip_frame=args.tip, axis_mask=mask, axis_frame=args.axis_frame,
                            velocity_scaling=args.velocity_scaling, acceleration_scaling=args.acceleration_scaling,
                            solved_part=False).path_plan()
    except PathInputError as err:
        line = waypoint_line(args.waypoints, err.waypoint)
        return report("plan_path", f"{args.waypoints}:{line}: {err}" if line else err)
    except RobokinError as err:
        return report("plan_path", err)
    print(report_text(plan))
    prefix = Path(args.out) if args.out else Path(args.waypoints).with_suffix("")
    for written in write_outputs(plan, prefix):
        print(f"wrote {written}")
    return 0 if plan.success else 1


def _is_program(path: str) -> bool:
    """True for a YAML file with a `moves` list (a motion program)."""
    if Path(path).suffix.lower() not in (".yaml", ".yml") or not Path(path).is_file():
        return False
    try:
        data = read_yaml(path)
    except InvalidInputError:
        return False            # reported with its line when the file is read as a waypoint file
    return isinstance(data, dict) and "moves" in data


def _with_scalings(program: MotionProgram, args) -> MotionProgram:
    """The program with --velocity-scaling / --acceleration-scaling as its own fractions, when given (the
    planner applies core/scaling.py's rule to them: 0 = the config's)."""
    given = {name: value for name, value in (("velocity_scaling", args.velocity_scaling),
                                             ("acceleration_scaling", args.acceleration_scaling)) if value is not None}
    return dataclasses.replace(program, **given)


def _program_line(data: dict, err: PathInputError) -> int:
    """The line of the move (or top-level field) a program error names."""
    moves = data.get("moves")
    named = re.match(r"moves\[(\d+)\]", str(err))          # "moves[3].position: ..." names the move too
    index = err.waypoint if err.waypoint >= 0 else int(named.group(1)) if named else -1
    if index >= 0 and isinstance(moves, list):
        return line_of(moves, index)
    return line_of(data, re.split(r"[:.\[ ]", str(err), maxsplit=1)[0])


def _tool_fk(robot: RobotModel, solver, tip: str):
    """q -> the tool pose after a MoveJ to joint values: the program's tip on a robot with several tips."""
    if solver is None:
        return lambda q: robot.fk(np.asarray(q, float), tip or robot.tip_frame)
    return lambda q: pin.SE3(*(a[0] for a in solver.fk(np.asarray(q)[None])))


def _tip_starts(robot: RobotModel, start: np.ndarray) -> dict:
    """Every tip's start pose: moves that name a tip, target several or carry the object are written relative to
    them (a one-tip robot's program parses them too, so that the planner refuses a carried move with its reason;
    moves without these fields do not use them)."""
    return {tip: robot.fk(start, tip) for tip in robot.tip_frames}


def tips_report_text(plan) -> str:
    """The per-tip lines of a plan on several tips ("" on one tip): each tip's deviation, the held relative pose's
    drift and the tip that failed."""
    if not plan.tip_deviations and not plan.failed_tip:
        return ""
    lines = [f"tip {name}: max deviation {p * 1e3:.4f} mm / {o * 1e3:.4f} mrad" for name, p, o in plan.tip_deviations]
    if plan.relative_deviation is not None:
        lines.append(f"held relative pose: max drift {plan.relative_deviation[0] * 1e3:.4f} mm / "
                     f"{plan.relative_deviation[1] * 1e3:.4f} mrad")
    if plan.failed_tip:
        lines.append(f"failed tip: {plan.failed_tip}")
    return "\n" + "\n".join(lines)


def program_main(args) -> int:
    """Plan one or more motion programs, print their cycle-time reports and compare them."""
    plans, written = {}, []
    try:
        for path in args.files:
            data = load_program_file(path)
            paths, start, start_pose = _planner_and_start(args, data, path)
            robot = paths.robot
            several = len(robot.tip_frames) > 1
            solver = None if several else paths.solver(args.tip)
            try:
                program = program_from_mapping(data, start_pose, robot.n, _tool_fk(robot, solver, args.tip),
                                               tip_starts=_tip_starts(robot, start))
            except PathInputError as err:
                raise PathInputError(f"{where(path, _program_line(data, err))}: {err}", err.waypoint) from None
            program = _with_scalings(program, args)
            plan = paths.plan(program, start, tip_frame=args.tip, axis_mask=_axis_mask(args.axis_mask),
                              axis_frame=args.axis_frame)
            name = Path(path).stem
            plans[name] = plan
            print(f"== {path}\n{cycle_report_text(plan)}" + tips_report_text(plan))
            prefix = (Path(args.out).with_name(f"{Path(args.out).name}_{name}") if args.out and len(args.files) > 1
                      else Path(args.out) if args.out else Path(path).with_suffix(""))
            written += write_trajectory(plan.trajectory, prefix)
    except RobokinError as err:
        return report("plan_path", err)
    if len(plans) > 1:
        names = list(plans)
        base = plans[names[0]].cycle_time
        for name in names[1:]:
            other = plans[name].cycle_time
            print(f"cycle time {name}: {other:.3f} s vs {names[0]}: {base:.3f} s "
                  f"({(other - base) / base * 100:+.1f} %)" if base > 0 else "")
    png = Path(args.out).with_suffix(".png") if args.out else Path(args.files[0]).with_suffix(".png")
    if solver is not None:
        written.append(program_png(plans, solver.fk.arrays(), solver.fk, png))
    else:
        print("plan_path: the PNG draws one tool's path and speed; on a robot with several tips it is not drawn "
              "(the per-tip deviations are above, the trajectory in the CSV / JSON)", file=sys.stderr)
    for path in written:
        print(f"wrote {path}")
    return 0 if all(p.success for p in plans.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
