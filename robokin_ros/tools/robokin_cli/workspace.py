"""`robokin workspace`: sample the reachable tool positions, print the reach envelope, optionally draw them.

    robokin workspace --robot panda --samples 100000 --colour manipulability --out docs/classroom_workspace.png
    robokin workspace --planar-2r 0.5 0.3 --samples 10201 --grid --bins 1 --out docs/classroom_workspace_2r.png
"""
from __future__ import annotations

import argparse

from robokin_ros.core.classroom.workspace import (JACOBIANS, format_envelope, planar_2r, reach_envelope,
                                                  sample_workspace)
from robokin_ros.core.robot import RobotModel
from robokin_ros.tools.cli_errors import report

HELP = "reachable workspace: sampled tool positions, reach envelope per height, manipulability picture"
COLOURS = ("manipulability", "sigma_min")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `robokin workspace`."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--robot", help="embedded robot name (panda, ur5, ...) or a URDF file path")
    source.add_argument("--planar-2r", nargs=2, type=float, metavar=("L1", "L2"),
                        help="a planar 2R arm with link lengths L1 L2 [m] (two unlimited joints about z)")
    parser.add_argument("--base-frame", default="", help="base frame (a URDF file needs it; default: embedded)")
    parser.add_argument("--tip-frame", default="", help="tool frame (a URDF file needs it; default: embedded)")
    parser.add_argument("--samples", type=int, default=20000,
                        help="number of samples; with --grid at most this many (floor(N^(1/n)) per joint)")
    parser.add_argument("--grid", action="store_true", help="sample a grid over the joint ranges, not at random")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random sampling")
    parser.add_argument("--jacobian", choices=JACOBIANS, default="translation",
                        help="rows of the Jacobian in the measures: translation (3, n) or full (6, n)")
    parser.add_argument("--colour", choices=COLOURS, default="manipulability", help="the colour of the points")
    parser.add_argument("--bins", type=int, default=None,
                        help="height bins of the reach envelope table (default 10; 1 for a planar arm)")
    parser.add_argument("--thickness", type=float, default=0.05, help="thickness of the picture's slices [m]")
    parser.add_argument("--out", default="", help="write the picture to this PNG file")


def run(args: argparse.Namespace) -> int:
    """Sample, print the envelope and draw; 0 on success, 2 on bad input."""
    if args.bins is None:
        args.bins = 1 if args.planar_2r else 10
    if args.samples < 1 or args.bins < 1 or not args.thickness > 0:
        return report("robokin workspace", f"--samples and --bins must be >= 1 and --thickness > 0, got "
                      f"{args.samples}, {args.bins}, {args.thickness}")
    annulus = None
    if args.planar_2r:
        l1, l2 = args.planar_2r
        robot = planar_2r(l1, l2)
        annulus = (abs(l1 - l2), l1 + l2)
    else:
        robot = RobotModel.load(args.robot, args.base_frame, args.tip_frame)
    samples = sample_workspace(robot, args.samples, grid=args.grid, seed=args.seed, jacobian=args.jacobian)
    envelope = reach_envelope(samples.points, args.bins)
    how = "grid" if args.grid else f"random, seed {args.seed}"
    print(f"{robot.name}: {len(samples.points)} samples ({how}), base {robot.base_frame} -> tool {robot.tip_frame}")
    print(format_envelope(envelope))
    if annulus is not None:
        print(f"  exact annulus: r min |L1 - L2| = {annulus[0] * 1e3:.1f} mm, "
              f"r max L1 + L2 = {annulus[1] * 1e3:.1f} mm")
    if args.out:
        from robokin_ros.core.classroom.workspace_plot import plot_workspace
        path = plot_workspace(samples, args.out, args.colour, args.thickness, annulus,
                              title=f"{robot.name}: reachable tool positions, {len(samples.points)} samples ({how})")
        print(f"wrote {path}")
    return 0
