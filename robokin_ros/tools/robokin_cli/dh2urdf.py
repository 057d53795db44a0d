"""`robokin dh2urdf table.yaml --out robot.urdf`: a DH table (YAML) to a URDF, checked by FK afterwards.

The YAML format (angles [rad], lengths [m]; a number may also be written "pi/2", "-pi", "2*pi", "0.5*pi"):

    name: ur5_dh                 # optional, the URDF robot name
    convention: standard         # "standard" (Rz(theta) Tz(d) Tx(a) Rx(alpha)) or "modified" (Craig)
    base: {xyz: [0, 0, 0], rpy: [0, 0, pi]}     # optional, base_T_frame0 (URDF origin convention)
    tool: {xyz: [0, 0, 0.1], rpy: [0, 0, 0]}    # optional, frame_n_T_tool
    rows:                        # one per joint, base to tool
      - {a: 0.0, alpha: pi/2, d: 0.089159, offset: 0, type: revolute, lower: -2*pi, upper: 2*pi}
      - {a: 0.1, alpha: 0, d: 0, type: prismatic, lower: 0, upper: 0.2, velocity: 0.5, effort: 100}

Row fields: a, alpha, d and type are required; offset (theta offset [rad], default 0), lower/upper (joint limits
[rad | m], default -pi/pi; .inf makes a revolute joint continuous), velocity [rad/s | m/s] (default 1) and
effort [N m | N] (default 0 = unknown) are optional. Every problem is reported at once, by row and field.

The written URDF has the links base, frame0..frame{n}, link1..link{n}, tool and the joints joint1..joint{n}
(see robokin_ros.core.classroom.dh_urdf). After writing, the file is loaded back and its FK compared with the
DH table's at random configurations: every DH frame, position and rotation.
"""
from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

import numpy as np
import pinocchio as pin
from robokin_ros.core.classroom.dh import DhRobot, DhRow
from robokin_ros.core.classroom.dh_urdf import BASE_LINK, TOOL_LINK, dh_to_urdf
from robokin_ros.core.classroom.transforms import pose
from robokin_ros.core.errors import ConfigError, InvalidInputError, RobokinError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.validation import is_real_number
from robokin_ros.core.yaml_lines import line_of, read_yaml, where
from robokin_ros.tools.cli_errors import report

HELP = "convert a DH table (YAML) to a URDF and check the URDF's FK against the table"
REQUIRED = ("a", "alpha", "d", "type")
OPTIONAL = ("offset", "lower", "upper", "velocity", "effort")
CHECK_TOLERANCE = 1e-9          # [m] and [rad]: the URDF keeps 17 digits, so only rounding remains
_PI_TERM = re.compile(r"^\s*([+-]?)\s*(?:(\d+\.?\d*|\.\d+)\s*\*?\s*)?pi\s*(?:/\s*(\d+\.?\d*))?\s*$")


def parse_number(value: object) -> float:
    """A YAML value as a float: a number, a numeric string ("1e-3") or a multiple of pi ("-pi/2", "2*pi").

    Raises:
        ValueError: anything else (bool included: `yes` for a length is a typo, not 1).
    """
    if is_real_number(value):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            match = _PI_TERM.match(value)
            if match:
                sign, factor, divisor = match.groups()
                number = float(factor or 1.0) * math.pi / float(divisor or 1.0)
                return -number if sign == "-" else number
    raise ValueError(f"{value!r} is not a number")


def _row(index: int, entry: object) -> tuple[DhRow | None, list[str]]:
    """(the row, []) or (None, every problem of the row, each naming the row and field)."""
    if not isinstance(entry, dict):
        return None, [f"row {index}: must be a mapping of fields, got {entry!r}"]
    missing = [name for name in REQUIRED if name not in entry]
    unknown = sorted(set(entry) - set(REQUIRED) - set(OPTIONAL))
    problems = [f"row {index}: missing field '{name}'" for name in missing]
    problems += [f"row {index}: unknown field '{name}'; fields are {list(REQUIRED + OPTIONAL)}" for name in unknown]
    values = {}
    for name in set(entry) & set(REQUIRED + OPTIONAL) - {"type"}:
        try:
            values[name] = parse_number(entry[name])
        except ValueError:
            problems.append(f"row {index}: {name} must be a number, got {entry[name]!r}")
    if problems:
        return None, problems
    return DhRow(joint=entry["type"], **values), []


def _transform(name: str, entry: object) -> tuple[np.ndarray, list[str]]:
    """(the 4x4 transform of a base/tool entry, its problems)."""
    if entry is None:
        return np.eye(4), []
    if not isinstance(entry, dict) or set(entry) - {"xyz", "rpy"}:
        return np.eye(4), [f"{name}: must be a mapping with xyz and rpy, got {entry!r}"]
    try:
        xyz = [parse_number(v) for v in entry.get("xyz", [0, 0, 0])]
        rpy = [parse_number(v) for v in entry.get("rpy", [0, 0, 0])]
        return pose(xyz, rpy), []
    except (ValueError, TypeError, InvalidInputError) as err:
        return np.eye(4), [f"{name}: xyz and rpy must be 3 finite numbers each ({err})"]


def load_dh_yaml(path: str | Path) -> DhRobot:
    """The DhRobot of a YAML table file (format: this module's docstring).

    Raises:
        ConfigError: every problem in the file, each naming its line ("table.yaml:5: row 2: ..."), row and field.
    """
    path = Path(path)
    try:
        doc = read_yaml(path, "DH table")
    except InvalidInputError as err:
        raise ConfigError([str(err)], "DH table") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        raise ConfigError([f"{where(path, doc)}: the file must be a mapping with a 'rows' list"], "DH table")
    problems: list[str] = []
    rows = []
    for i, entry in enumerate(doc["rows"]):
        row, row_problems = _row(i, entry)
        rows.append(row)
        problems += [f"{where(path, line_of(doc['rows'], i))}: {problem}" for problem in row_problems]
    ends = {}
    for name in ("base", "tool"):
        ends[name], end_problems = _transform(name, doc.get(name))
        problems += [f"{where(path, line_of(doc, name))}: {problem}" for problem in end_problems]
    if problems:
        raise ConfigError(problems, "DH table")
    try:
        return DhRobot(tuple(rows), doc.get("convention", "standard"), ends["base"], ends["tool"],
                       str(doc.get("name", path.stem)))
    except ConfigError as err:
        # DhRobot's problems begin with the field they name ("convention must be ...")
        located = [f"{where(path, line_of(doc, problem.split(' ')[0]))}: {problem}" for problem in err.problems]
        raise ConfigError(located, "DH table") from None


def fk_check(robot: DhRobot, model: RobotModel, samples: int, seed: int) -> tuple[float, float]:
    """Worst position [m] and rotation [rad] difference over every DH frame, model vs table, random q."""
    rng = np.random.default_rng(seed)
    ids = [model.frame_id(name) for name in robot.frame_names()]
    worst_p = worst_r = 0.0
    for _ in range(samples):
        q = robot.random_q(rng)
        for T, U in zip(robot.fk(q), model.frame_poses(q, ids)):
            worst_p = max(worst_p, float(np.linalg.norm(T[:3, 3] - U.translation)))
            worst_r = max(worst_r, float(np.linalg.norm(pin.log3(T[:3, :3].T @ U.rotation))))
    return worst_p, worst_r


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `robokin dh2urdf`."""
    parser.add_argument("table", help="DH table YAML file (format: see the module docstring of "
                        "robokin_ros.tools.robokin_cli.dh2urdf)")
    parser.add_argument("--out", required=True, help="URDF file to write")
    parser.add_argument("--samples", type=int, default=100, help="random configurations of the FK check")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the FK check")
    parser.add_argument("--link-mass", type=float, default=1.0,
                        help="placeholder mass of each moving link [kg] (a DH table has none; 0 = no inertia)")


def run(args: argparse.Namespace) -> int:
    """Write the URDF and print the FK check; 0 when it holds, 1 when it does not, 2 on bad input."""
    try:
        robot = load_dh_yaml(args.table)
        out = Path(args.out)
        out.write_text(dh_to_urdf(robot, args.link_mass))
        model = RobotModel.from_urdf_file(out, BASE_LINK, TOOL_LINK)
    except (RobokinError, OSError) as err:
        return report("robokin dh2urdf", err)
    worst_p, worst_r = fk_check(robot, model, args.samples, args.seed)
    ok = worst_p < CHECK_TOLERANCE and worst_r < CHECK_TOLERANCE
    print(f"wrote {out}: {robot.n} joints ({', '.join(r.joint for r in robot.rows)}), {robot.convention} DH")
    print(f"check: FK of {out.name} vs the DH table, {len(robot.frame_names())} frames at {args.samples} random "
          f"configurations: max position error {worst_p:.2e} m, max rotation error {worst_r:.2e} rad "
          f"({'ok' if ok else 'FAILED'}, tolerance {CHECK_TOLERANCE:g})")
    return 0 if ok else 1
