"""`robokin ik`: every closed-form IK solution of a UR arm (e-series in ROS 2 frames, or the CB3 UR3/UR5/UR10 in ROS 1
frames), of an OPW industrial arm (KUKA KR6 R700 sixx, ABB IRB 2400: core/ik/opw_arms.py) or of a planar 2R arm.

Examples:
  robokin ik --robot ur5 --pose 0.4 0.2 0.3 pi 0 0 --seed 0 -pi/2 pi/2 -pi/2 -pi/2 0
  robokin ik --robot ur10 --from-q 0.1 -1.2 1.4 -0.3 1.2 0.5
  robokin ik --robot kr6_r700 --pose 0.5 0.1 0.4 0 pi 0
  robokin ik --robot 2r --l1 1 --l2 0.5 --pose 0.3 1.0
Numbers may be written "pi/2", "-pi" (also after a space: "--seed 0 -pi/2").
Exit code: 0 solutions found, 1 unreachable (the reason is printed), 2 bad input.
"""
from __future__ import annotations

import argparse

import numpy as np
import pinocchio as pin

from robokin_ros.tools.cli_errors import report

HELP = ("closed-form IK: all solutions of a UR or OPW arm's pose or a planar 2R point, with FK error and "
        "singularities")
UR_ROBOTS = ("ur3e", "ur5e", "ur10e", "ur16e", "ur20", "ur30", "ur3", "ur5", "ur10")
NUMBER_LISTS = ("--pose", "--from-q", "--seed")     # "--seed 0 -pi/2" is joined into "--seed=0,-pi/2" first


def _numbers(text: str) -> list[float]:
    """An argparse type: one token of comma-separated numbers ("0,-pi/2", "1e-3")."""
    from robokin_ros.tools.robokin_cli.dh2urdf import parse_number
    try:
        return [parse_number(part) for part in text.split(",") if part.strip()]
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"{err} (use e.g. 0.5, -1e-3, pi/2)") from None


def _flat(values: list[list[float]] | None) -> list[float] | None:
    return None if values is None else [v for group in values for v in group]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `robokin ik`."""
    from robokin_ros.core.ik.opw_arms import OPW_ARMS
    parser.add_argument("--robot", choices=UR_ROBOTS + tuple(OPW_ARMS) + ("2r",), default="ur5",
                        help="arm: an embedded UR model (geometry read from its URDF), an OPW industrial arm "
                        "(kr6_r700: KUKA KR6 R700 sixx, irb2400: ABB IRB 2400/10; published parameters) or a planar "
                        "2R arm")
    parser.add_argument("--l1", type=float, help="2R: length of link 1 [m]")
    parser.add_argument("--l2", type=float, help="2R: length of link 2 [m]")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--pose", type=_numbers, nargs="+", metavar="V",
                        help="target: x y z [m] roll pitch yaw [rad] of the tool (UR: tool0 in base_link; OPW: the "
                        "flange, z out of it, in the base frame) (2R: x y [m])")
    target.add_argument("--from-q", type=_numbers, nargs="+", metavar="Q",
                        help="target: the FK of these joint positions [rad]")
    parser.add_argument("--seed", type=_numbers, nargs="+", metavar="Q",
                        help="joint positions [rad] the solutions are sorted by distance to (default: zeros)")


def _fail(message: str) -> int:
    return report("robokin ik", message)


def _print_result(result, joint_names: tuple[str, ...]) -> int:
    if not result.reachable:
        print(f"unreachable: {result.reason}")
        return 1
    print(f"{len(result.solutions)} solution(s), nearest to the seed first; joints {', '.join(joint_names)} [rad]; "
          "FK error: max(position [m], rotation [rad]); distance to the seed [rad]")
    print(f"{'#':>2}  {'branch':<32} {'positions [rad]':<{9 * len(joint_names)}} "
          f"{'FK error':>10} {'distance':>9}  singular")
    for i, s in enumerate(result.solutions):
        positions = " ".join(f"{v:8.4f}" for v in s.positions)
        print(f"{i:>2}  {s.branch:<32} {positions} {s.fk_error:10.2e} {s.distance:9.4f}  "
              f"{','.join(s.singular) or '-'}")
    if result.dropped_by_limits:
        print(f"({result.dropped_by_limits} branch(es) outside the joint limits not shown)")
    return 0


def _run_2r(args: argparse.Namespace) -> int:
    from robokin_ros.core.ik.planar_2r import Planar2R
    if args.l1 is None or args.l2 is None:
        return _fail("--robot 2r needs --l1 and --l2 [m]")
    arm = Planar2R(args.l1, args.l2)
    if args.from_q is not None:
        if len(args.from_q) != 2:
            return _fail(f"--from-q needs 2 joint positions for a 2R arm, got {len(args.from_q)}")
        point = arm.fk(args.from_q)
    elif len(args.pose) != 2:
        return _fail(f"--pose needs x y for a 2R arm, got {len(args.pose)} numbers")
    else:
        point = np.array(args.pose)
    if args.seed is not None and len(args.seed) != 2:
        return _fail(f"--seed needs 2 joint positions, got {len(args.seed)}")
    print(f"2R arm l1={arm.l1} m, l2={arm.l2} m; target ({point[0]:.6g}, {point[1]:.6g}) m; "
          "elbow up: q2 < 0, down: q2 > 0")
    return _print_result(arm.solve(point, args.seed), ("q1", "q2"))


def _run_ur(args: argparse.Namespace) -> int:
    from robokin_ros.core.ik.ur import UrGeometry, solve_ur
    from robokin_ros.core.robot import RobotModel
    robot = RobotModel.from_name(args.robot)
    geometry = UrGeometry.from_robot(robot)
    pose = _target_pose(args, robot.n, robot.fk)
    if isinstance(pose, str):
        return _fail(pose)
    if args.seed is not None and len(args.seed) != robot.n:
        return _fail(f"--seed needs {robot.n} joint positions, got {len(args.seed)}")
    xyz, rpy = pose.translation, pin.rpy.matrixToRpy(pose.rotation)
    print(f"{args.robot} (a2={geometry.a2:.5g} m, a3={geometry.a3:.5g} m, d4={geometry.d4:.5g} m from the URDF); "
          f"target {robot.tip_frame} in {robot.base_frame}: xyz {np.round(xyz, 6).tolist()} m, "
          f"rpy {np.round(rpy, 6).tolist()} rad")
    return _print_result(solve_ur(geometry, pose, args.seed), robot.joint_names)


def _target_pose(args: argparse.Namespace, n: int, fk) -> pin.SE3 | str:
    """The target of --pose or --from-q (FK by `fk`), or the problem as a sentence."""
    if args.from_q is not None:
        if len(args.from_q) != n:
            return f"--from-q needs {n} joint positions, got {len(args.from_q)}"
        return fk(args.from_q)
    if len(args.pose) != 6:
        return f"--pose needs x y z roll pitch yaw, got {len(args.pose)} numbers"
    return pin.SE3(pin.rpy.rpyToMatrix(*args.pose[3:]), np.array(args.pose[:3]))


def _run_opw(args: argparse.Namespace) -> int:
    from robokin_ros.core.ik.opw_arms import opw_arm
    arm = opw_arm(args.robot)
    g = arm.geometry
    pose = _target_pose(args, 6, g.fk)
    if isinstance(pose, str):
        return _fail(pose)
    if args.seed is not None and len(args.seed) != 6:
        return _fail(f"--seed needs 6 joint positions, got {len(args.seed)}")
    xyz, rpy = pose.translation, pin.rpy.matrixToRpy(pose.rotation)
    print(f"{args.robot}: {arm.title}, OPW a1={g.a1:g} a2={g.a2:g} b={g.b:g} c1={g.c1:g} c2={g.c2:g} c3={g.c3:g} "
          f"c4={g.c4:g} m ({arm.source}); target flange in the base frame: xyz {np.round(xyz, 6).tolist()} m, "
          f"rpy {np.round(rpy, 6).tolist()} rad; FK error by the OPW forward kinematics")
    return _print_result(g.solve(pose, args.seed), arm.joint_names)


def run(args: argparse.Namespace) -> int:
    """Solve and print; 0 = solutions, 1 = unreachable, 2 = bad input."""
    from robokin_ros.core.ik.opw_arms import OPW_ARMS
    for name in ("pose", "from_q", "seed"):
        setattr(args, name, _flat(getattr(args, name)))
    if args.robot == "2r":
        return _run_2r(args)
    return _run_opw(args) if args.robot in OPW_ARMS else _run_ur(args)
