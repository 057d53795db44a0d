"""`robokin fk`: forward kinematics frame by frame, as a table (and a stick figure with frame axes).

    robokin fk --dh ur5 --q=0,-pi/2,pi/2,-pi/2,-pi/2,0          # a built-in DH table: ur5, scara, 2r
    robokin fk --dh examples/dh/scara.yaml --q 0.3 0.5 0.1 0     # a DH table file (see `robokin dh2urdf`)
    robokin fk --robot panda --png panda.png                     # an embedded URDF robot, its home by default

The table lists every frame's origin [m] and ZYX roll-pitch-yaw [rad] in the base frame: frame0..frame{n} and
tool for a DH table, the base and each link of the chain for a URDF robot.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from robokin_ros.core.classroom.dh_examples import EXAMPLES
from robokin_ros.core.classroom.transforms import rotation_to_rpy
from robokin_ros.core.errors import InvalidInputError, RobokinError
from robokin_ros.core.robot import RobotModel
from robokin_ros.tools.cli_errors import report
from robokin_ros.tools.robokin_cli.dh2urdf import load_dh_yaml, parse_number

HELP = "forward kinematics of a DH table or an embedded robot: every frame's position and rpy"
NUMBER_LISTS = ("--q",)         # "--q 0 -pi/2" is joined into "--q=0,-pi/2" before argparse sees it


def parse_q(tokens: list[str] | None) -> list[float] | None:
    """Joint values from `--q` tokens; a token may hold several comma-separated values ("0,-pi/2").

    Raises:
        InvalidInputError: naming the value that is not a number.
    """
    if tokens is None:
        return None
    values = []
    for text in (part for token in tokens for part in token.split(",") if part.strip()):
        try:
            values.append(parse_number(text))
        except ValueError:
            raise InvalidInputError(f"--q value {text!r} is not a number (use e.g. 0.5, -1e-3, pi/2)") from None
    return values


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `robokin fk`."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--dh", help=f"a built-in DH table {sorted(EXAMPLES)} or a DH table YAML file")
    source.add_argument("--robot", help="an embedded robot name (e.g. ur5, panda)")
    parser.add_argument("--q", nargs="+", metavar="VALUE",
                        help="joint values [rad | m], space or comma separated, 'pi/2' style allowed: --q 0 -pi/2 or "
                        "--q=0,-pi/2 (default: zeros for a DH table, the home configuration for a robot)")
    parser.add_argument("--png", help="also draw the stick figure with every frame's axes to this PNG file")


def dh_frames(spec: str, q: list[float] | None) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(names, frames (k, 4, 4), q) of a built-in or file DH table."""
    if spec in EXAMPLES:
        robot = EXAMPLES[spec]()
    elif Path(spec).is_file():
        robot = load_dh_yaml(spec)
    else:
        raise InvalidInputError(f"--dh '{spec}' is neither a built-in table {sorted(EXAMPLES)} nor a YAML file")
    if q is not None and len(q) != robot.n:
        raise InvalidInputError(f"--q needs {robot.n} values for the DH table {spec}, got {len(q)}")
    q_arr = np.zeros(robot.n) if q is None else np.asarray(q, float)
    return list(robot.frame_names()), robot.fk(q_arr), q_arr


def robot_frames(name: str, q: list[float] | None) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(names, frames (k, 4, 4), q) of an embedded robot: its base frame, then each chain link and the tip."""
    robot = RobotModel.from_name(name)
    if q is not None and len(q) != robot.n:
        raise InvalidInputError(f"--q needs {robot.n} values for {name} ({', '.join(robot.joint_names)}), got {len(q)}")
    q_arr = robot.home() if q is None else robot.check_positions(q, "q")
    names = [robot.base_frame, *robot.chain_link_frames()]
    poses = robot.frame_poses(q_arr, [robot.frame_id(n) for n in names])
    return names, np.array([p.homogeneous for p in poses]), q_arr


def frame_table(names: list[str], frames: np.ndarray) -> str:
    """One line per frame: name, x y z [m], roll pitch yaw [rad]."""
    width = max(len(n) for n in names + ["frame"])
    lines = [f"{'frame':<{width}}  {'x [m]':>9} {'y [m]':>9} {'z [m]':>9}  {'roll':>8} {'pitch':>8} {'yaw':>8} [rad]"]
    for name, T in zip(names, frames):
        # rounded first (+ 0.0 turns -0.0 into 0.0) so that a value like -1e-17 does not print as -0.00000
        x, y, z = np.round(T[:3, 3], 5) + 0.0
        r, p, w = np.round(rotation_to_rpy(T), 4) + 0.0
        lines.append(f"{name:<{width}}  {x:9.5f} {y:9.5f} {z:9.5f}  {r:8.4f} {p:8.4f} {w:8.4f}")
    return "\n".join(lines)


def draw(frames: np.ndarray, names: list[str], title: str, path: str) -> None:
    """Stick figure through the frame origins with each frame's x (red), y (green), z (blue) axis."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    origins = frames[:, :3, 3]                                                # (k, 3)
    span = max(float(np.ptp(origins, axis=0).max()), 0.1)
    axis_length = 0.12 * span
    fig = plt.figure(figsize=(7, 6))
    ax = fig.add_subplot(projection="3d")
    ax.plot(*origins.T, "-o", color="0.3", lw=3, ms=4)
    labels: dict[tuple, list[str]] = {}       # frames sharing an origin share one label, not overprinted text
    for T, name in zip(frames, names):
        for column, color in zip(range(3), "rgb"):
            tip = T[:3, 3] + axis_length * T[:3, column]
            ax.plot(*np.stack([T[:3, 3], tip]).T, color=color, lw=1.5)
        labels.setdefault(tuple(np.round(T[:3, 3], 6)), []).append(name)
    for origin, group in labels.items():
        ax.text(*(np.array(origin) + 0.3 * axis_length), " = ".join(group), fontsize=7)
    for color, axis in zip("rgb", "xyz"):
        ax.plot([], [], color=color, label=f"{axis} axis")
    ax.legend(loc="upper left", fontsize=8)
    center = 0.5 * (origins.min(axis=0) + origins.max(axis=0))
    half = 0.5 * span + axis_length
    for setter, c in zip((ax.set_xlim, ax.set_ylim, ax.set_zlim), center):
        setter(c - half, c + half)
    ax.set_box_aspect((1, 1, 1))        # equal scales, or the arm's proportions lie
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_zlabel("z [m]")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(args: argparse.Namespace) -> int:
    """Print the frame table (and write the PNG); 2 on bad input."""
    try:
        if args.dh is not None:
            names, frames, q = dh_frames(args.dh, parse_q(args.q))
        else:
            names, frames, q = robot_frames(args.robot, parse_q(args.q))
    except RobokinError as err:
        return report("robokin fk", err)
    label = args.dh if args.dh is not None else args.robot
    print(f"{label} at q = {np.array2string(q, precision=4, separator=', ')}")
    print(frame_table(names, frames))
    if args.png:
        draw(frames, names, f"{label}, q = {np.array2string(q, precision=3, separator=', ')}", args.png)
        print(f"wrote {args.png}")
    return 0
