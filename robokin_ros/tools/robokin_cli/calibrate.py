"""`robokin calibrate`: joint-origin calibration of an arm from a CSV of laser-tracker measurements.

With `--dh ur5 | scara | 2r | table.yaml` the errors are DH parameter deltas (a, alpha, d, theta offset per row,
see robokin_ros.core.classroom.dh_errors) of that table's chain (joints joint1..joint{n}, tip "tool"), and the
corrected DH table is printed; `--out` then writes the URDF of the corrected table.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.spatial import quaternion_problem
from robokin_ros.core.yaml_lines import read_text
from robokin_ros.tools.cli_errors import report

HELP = "calibrate joint origins from tracker measurements (CSV: joints, x, y, z[, qx, qy, qz, qw])"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `robokin calibrate`."""
    parser.add_argument("--robot", default="ur5", help="embedded robot name (ur5, panda, ...) or URDF file path")
    parser.add_argument("--base-frame", default="", help="base frame (needed for a URDF file)")
    parser.add_argument("--tip-frame", default="", help="tip frame the tracker target sits on (needed for a URDF)")
    parser.add_argument("--data", required=True, help="CSV of measurements: one row per pose, the joint values "
                        "[rad | m] then x, y, z [m] (and qx, qy, qz, qw for full poses); a header row is allowed")
    parser.add_argument("--loss", choices=("linear", "soft_l1", "huber"), default="linear",
                        help="least-squares loss: linear (Levenberg-Marquardt) or a robust loss against outliers")
    parser.add_argument("--f-scale", type=float, default=1e-4,
                        help="residual [m] where the robust loss turns linear (about 2-3x the tracker noise)")
    parser.add_argument("--tool", type=int, choices=(0, 3, 6), default=0,
                        help="tool offset parameters to identify: 0, 3 (translation) or 6 (translation+rotation)")
    parser.add_argument("--threshold", type=float, default=1e-6,
                        help="relative singular value below which a parameter combination is unidentifiable")
    parser.add_argument("--out", default="", help="write the corrected URDF here")
    parser.add_argument("--synthetic", type=int, default=0, metavar="N",
                        help="first write a synthetic tracker data set of N random poses to --data (true robot: "
                        "random joint-origin offsets of +/-0.5 mm, +/-0.5 deg)")
    parser.add_argument("--noise", type=float, default=5e-5, help="synthetic measurement noise per axis [m]")
    parser.add_argument("--seed", type=int, default=1, help="random seed of the synthetic data set")
    parser.add_argument("--dh", default="", metavar="TABLE",
                        help="calibrate DH parameter deltas of this table instead of URDF joint origins: a built-in "
                        "table (ur5, scara, 2r) or a DH table YAML file (see `robokin dh2urdf`); replaces --robot, "
                        "and --synthetic then perturbs a, d by +/-0.5 mm and alpha, offset by +/-0.5 deg")


def read_csv(path: str | Path, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(configurations (N, n), measured (N, 3 | 7)) from a CSV; the first row may be a header.

    Raises:
        InvalidInputError: naming the file and the line (1-based, as an editor shows it) of the first bad row.
    """
    path = Path(path)
    text = read_text(path, "data file", reading="the data file")
    widths = (n + 3, n + 7)
    rows = []
    for line, content in enumerate(text.splitlines(), start=1):
        if not content.strip():
            continue
        if not rows and not _is_numeric(content) and not any(_is_numeric(cell) for cell in content.split(",")):
            continue                                        # the header row
        try:
            row = [float(v) for v in content.split(",")]
        except ValueError:
            raise InvalidInputError(f"{path}:{line}: a value is not a number: {content.strip()!r}") from None
        if len(row) not in widths:
            raise InvalidInputError(f"{path}:{line}: {len(row)} columns; every row needs {n} joint values then x, y, "
                                    f"z (and optionally qx, qy, qz, qw): {widths[0]} or {widths[1]} columns")
        if rows and len(row) != len(rows[0][1]):
            raise InvalidInputError(f"{path}:{line}: {len(row)} columns where the rows before have "
                                    f"{len(rows[0][1])}")
        if not np.isfinite(row).all():
            column = int(np.flatnonzero(~np.isfinite(row))[0])
            raise InvalidInputError(f"{path}:{line}: column {column + 1} is {row[column]} (every value must be finite)")
        if len(row) == widths[1] and quaternion_problem(row[n + 3:]) is not None:   # core/spatial.py's rule
            norm = float(np.linalg.norm(row[n + 3:]))
            raise InvalidInputError(f"{path}:{line}: the quaternion qx, qy, qz, qw has norm {norm:.6g}, not 1")
        rows.append((line, row))
    if not rows:
        raise InvalidInputError(f"{path}: no data rows")
    data = np.array([row for _, row in rows])
    return data[:, :n], data[:, n:]


def _is_numeric(line: str) -> bool:
    try:
        [float(v) for v in line.split(",")]
        return True
    except ValueError:
        return False


def write_synthetic(robot: RobotModel, path: str | Path, count: int, noise: float, seed: int) -> None:
    """Write a synthetic tracker data set (CSV with header) measured on a randomly offset copy of `robot`."""
    from robokin_ros.core.classroom.calibration import synthetic_tracker_data
    data = synthetic_tracker_data(robot, count, noise, seed)
    header = ",".join(list(robot.joint_names) + ["x", "y", "z"])
    np.savetxt(path, np.hstack([data.configurations, data.measured]), delimiter=",", header=header, comments="",
               fmt="%.17g")
    print(f"wrote {count} synthetic poses (noise {noise * 1e3:.3g} mm, seed {seed}) to {path}")


def _print_result(result) -> None:
    for label, stats in (("before", result.before), ("after", result.after)):
        line = f"{label:>6}: position RMS {stats.position_rms * 1e3:.4f} mm, max {stats.position_max * 1e3:.4f} mm"
        if np.isfinite(stats.orientation_rms):
            line += (f"; orientation RMS {np.rad2deg(stats.orientation_rms):.4f} deg, "
                     f"max {np.rad2deg(stats.orientation_max):.4f} deg")
        print(line)
    ident = result.identifiability
    print(f"identifiable: {ident.rank} of {len(result.parameter_names)} parameters "
          f"(condition of the scaled Jacobian {ident.singular_values[0] / ident.singular_values[ident.rank - 1]:.3g})")
    print(f"unidentifiable combinations ({len(result.unidentifiable)}), kept at zero:")
    for text in result.unidentifiable:
        print(f"  {text}")


def load_dh_table(spec: str):
    """The DhRobot of a built-in table name or a YAML file."""
    from robokin_ros.core.classroom.dh_examples import EXAMPLES
    from robokin_ros.tools.robokin_cli.dh2urdf import load_dh_yaml
    if spec in EXAMPLES:
        return EXAMPLES[spec]()
    if Path(spec).is_file():
        return load_dh_yaml(spec)
    raise InvalidInputError(f"--dh '{spec}' is neither a built-in table {sorted(EXAMPLES)} nor a YAML file")


def write_synthetic_dh(table, robot: RobotModel, path: str | Path, count: int, noise: float, seed: int) -> None:
    """Write a synthetic tracker data set (CSV with header) measured on a randomly perturbed copy of `table`."""
    from robokin_ros.core.classroom.dh_errors import synthetic_dh_data
    data = synthetic_dh_data(table, count, noise, seed)
    header = ",".join(list(robot.joint_names) + ["x", "y", "z"])
    np.savetxt(path, np.hstack([data.configurations, data.measured]), delimiter=",", header=header, comments="",
               fmt="%.17g")
    print(f"wrote {count} synthetic poses (DH deltas +/-0.5 mm, +/-0.5 deg; noise {noise * 1e3:.3g} mm, "
          f"seed {seed}) to {path}")


def run_dh(args: argparse.Namespace) -> int:
    """`--dh`: calibrate DH deltas, print before/after errors and the corrected table; 2 on bad input."""
    from robokin_ros.core.classroom.calibration import calibrate
    from robokin_ros.core.classroom.dh_errors import DhErrorModel, format_table
    from robokin_ros.core.classroom.dh_urdf import dh_robot_model, dh_to_urdf
    from robokin_ros.core.errors import RobokinError
    try:
        if args.tool:
            raise InvalidInputError("--tool is for joint-origin calibration; the DH model calibrates rows only")
        table = load_dh_table(args.dh)
        robot = dh_robot_model(table)
        if args.synthetic:
            write_synthetic_dh(table, robot, args.data, args.synthetic, args.noise, args.seed)
        configurations, measured = read_csv(args.data, robot.n)
        error_model = DhErrorModel(table, robot)
        result = calibrate(robot, configurations, measured, error_model=error_model, loss=args.loss,
                           f_scale=args.f_scale, threshold=args.threshold)
        corrected = error_model.corrected_table(result.parameters)
        if args.out:
            Path(args.out).write_text(dh_to_urdf(corrected))
    except (RobokinError, OSError) as err:
        return report("robokin calibrate", err)
    _print_result(result)
    print(f"corrected DH table ({table.convention}):")
    print(format_table(corrected))
    if args.out:
        print(f"wrote the URDF of the corrected DH table to {args.out}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Calibrate and print before/after errors; 2 on bad input."""
    from robokin_ros.core.classroom.calibration import calibrate
    from robokin_ros.core.errors import RobokinError
    if args.dh:
        return run_dh(args)
    try:
        robot = RobotModel.load(args.robot, args.base_frame, args.tip_frame)
        if args.synthetic:
            write_synthetic(robot, args.data, args.synthetic, args.noise, args.seed)
        configurations, measured = read_csv(args.data, robot.n)
        result = calibrate(robot, configurations, measured, tool_dofs=args.tool, loss=args.loss,
                           f_scale=args.f_scale, threshold=args.threshold)
    except (RobokinError, OSError) as err:
        return report("robokin calibrate", err)
    _print_result(result)
    if args.out:
        if result.urdf is None:
            return report("robokin calibrate", "the robot has no URDF text to correct")
        Path(args.out).write_text(result.urdf)
        print(f"wrote the corrected URDF to {args.out}")
    return 0
