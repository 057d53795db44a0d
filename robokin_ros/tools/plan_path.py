"""plan_path: plan a Cartesian path offline (no ROS) from a YAML or CSV waypoint file.

Prints the report, writes the trajectory as CSV and JSON and a PNG (tool path, joint positions and
velocities over time). Example:
    plan_path examples/paths/panda_rectangle.yaml --out /tmp/rect

YAML file: `robot` (optional), `start_positions` (optional, default home), `blend_radius`, `relative`
(true: waypoint positions are offsets from the start tool position in base axes), `waypoints`: a list of
{position: [x, y, z], orientation: [qx, qy, qz, qw] (optional: keep the start orientation) or
rpy: [r, p, y] [rad] (base-frame roll-pitch-yaw)}. CSV file: rows `x, y, z[, qx, qy, qz, qw]`, a header
row is skipped; absolute positions.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import yaml

from robokin_ros.core.errors import RobokinError
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.geometry import pose_from_position_quaternion
from robokin_ros.core.path.planner import CartesianPathPlanner
from robokin_ros.core.path.report import report_text
from robokin_ros.core.path.result import PathPlan
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.schema import config_from_mapping


def load_request(path: str | Path) -> dict:
    """Read a waypoint file into a dict with keys robot, start_positions, blend_radius, relative, waypoints."""
    path = Path(path)
    if not path.is_file():
        raise RobokinError(f"waypoint file not found: {path}")
    if path.suffix.lower() == ".csv":
        rows = [r for r in csv.reader(path.read_text().splitlines()) if r and not r[0].strip().startswith("#")]
        if rows and not _is_number(rows[0][0]):
            rows = rows[1:]
        wps = [{"position": [float(v) for v in r[:3]],
                **({"orientation": [float(v) for v in r[3:7]]} if len(r) >= 7 else {})} for r in rows]
        return {"waypoints": wps}
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict) or "waypoints" not in data:
        raise RobokinError(f"{path}: expected a mapping with a 'waypoints' list")
    return data


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def waypoint_poses(request: dict, start: pin.SE3) -> list[pin.SE3]:
    """Waypoint dicts -> base-frame poses (relative offsets and missing orientations resolved)."""
    poses = []
    for i, wp in enumerate(request["waypoints"]):
        position = np.asarray(wp["position"], float)
        if request.get("relative", False):
            position = start.translation + position
        if "orientation" in wp:
            poses.append(pose_from_position_quaternion(position, wp["orientation"], i))
        else:
            R = pin.rpy.rpyToMatrix(*map(float, wp["rpy"])) if "rpy" in wp else start.rotation
            poses.append(pose_from_position_quaternion(position, _quat_xyzw(R), i))
    return poses


def _quat_xyzw(R: np.ndarray) -> np.ndarray:
    return pin.Quaternion(R).coeffs()        # (x, y, z, w)


def write_outputs(plan: PathPlan, prefix: Path) -> list[Path]:
    """Write prefix.csv, prefix.json and prefix.png; returns the written paths."""
    prefix.parent.mkdir(parents=True, exist_ok=True)
    written = []
    traj = plan.trajectory
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
    written.append(_plot(plan, prefix.with_suffix(".png")))
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
    values = {}
    if args.config:
        data = yaml.safe_load(Path(args.config).read_text()) or {}
        for node in data.values():           # {node_name_or_/**: {ros__parameters: {...}}}
            values.update((node or {}).get("ros__parameters", {}))
    values["robot"] = robot_name
    return config_from_mapping(PathConfig, values)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `plan_path` console script."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("waypoints", help="YAML or CSV waypoint file")
    parser.add_argument("--robot", default=None, help="embedded robot name or URDF path (default: file or panda)")
    parser.add_argument("--config", default=None, help="ROS parameter YAML of path_ik_node (PathConfig)")
    parser.add_argument("--start", default=None, help="comma-separated start joint positions [rad]")
    parser.add_argument("--blend-radius", type=float, default=None, help="corner blend radius [m]")
    parser.add_argument("--velocity-scaling", type=float, default=None)
    parser.add_argument("--acceleration-scaling", type=float, default=None)
    parser.add_argument("--tip", default="", help="tool frame (default: the robot's tip)")
    parser.add_argument("--axis-mask", default=None, help="six 0/1 digits (vx vy vz wx wy wz), e.g. 111110")
    parser.add_argument("--axis-frame", default=None, choices=("tool", "base"))
    parser.add_argument("--out", default=None, help="output prefix for .csv/.json/.png (default: next to input)")
    args = parser.parse_args(argv)
    try:
        request = load_request(args.waypoints)
        robot_name = args.robot or request.get("robot", "panda")
        config = _config(args, robot_name)
        robot = RobotModel.load(robot_name, config.base_frame, config.tip_frame)
        planner = CartesianPathPlanner(robot, config)
        start = (np.array([float(v) for v in args.start.split(",")]) if args.start
                 else np.asarray(request.get("start_positions", robot.home()), float))
        solver = planner.solver(args.tip)
        R, p = solver.fk(robot.check_positions(start)[None])
        poses = waypoint_poses(request, pin.SE3(R[0], p[0]))
        mask = _axis_mask(args.axis_mask)
        blend = args.blend_radius if args.blend_radius is not None else request.get("blend_radius")
        plan = planner.plan(start, poses, blend, tip_frame=args.tip, axis_mask=mask, axis_frame=args.axis_frame,
                            velocity_scaling=args.velocity_scaling, acceleration_scaling=args.acceleration_scaling)
    except RobokinError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(report_text(plan))
    prefix = Path(args.out) if args.out else Path(args.waypoints).with_suffix("")
    for written in write_outputs(plan, prefix):
        print(f"wrote {written}")
    return 0 if plan.success else 1


if __name__ == "__main__":
    sys.exit(main())
