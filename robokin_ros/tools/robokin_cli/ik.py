"""`robokin ik`: every closed-form IK solution of a UR arm (e-series in ROS 2 frames, or the CB3 UR3/UR5/UR10 in ROS 1
frames) or of a planar 2R arm.

Examples:
  robokin ik --robot ur5 --pose 0.4 0.2 0.3 3.14159 0 0 --seed 0 -1.57 1.57 -1.57 -1.57 0
  robokin ik --robot ur10 --from-q 0.1 -1.2 1.4 -0.3 1.2 0.5
  robokin ik --robot 2r --l1 1 --l2 0.5 --pose 0.3 1.0
Exit code: 0 solutions found, 1 unreachable (the reason is printed), 2 bad input.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np
import pinocchio as pin

HELP = "closed-form IK: all solutions of a UR arm's pose or a planar 2R point, with FK error and singularities"
UR_ROBOTS = ("ur3e", "ur5e", "ur10e", "ur16e", "ur20", "ur30", "ur3", "ur5", "ur10")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", choices=UR_ROBOTS + ("2r",), default="ur5",
                        help="arm: an embedded UR model (geometry read from its URDF) or a planar 2R arm")
    parser.add_argument("--l1", type=float, help="2R: length of link 1 [m]")
    parser.add_argument("--l2", type=float, help="2R: length of link 2 [m]")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--pose", type=float, nargs="+", metavar="V",
                        help="target: x y z [m] roll pitch yaw [rad] of tool0 in base_link (2R: x y [m])")
    target.add_argument("--from-q", type=float, nargs="+", metavar="Q",
                        help="target: the FK of these joint positions [rad]")
    parser.add_argument("--seed", type=float, nargs="+", metavar="Q",
                        help="joint positions [rad] the solutions are sorted by distance to (default: zeros)")


def _fail(message: str) -> int:
    print(f"robokin ik: error: {message}", file=sys.stderr)
    return 2


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
    from robokin_ros.core.classroom.ik_planar_2r import Planar2R
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
    from robokin_ros.core.classroom.ik_ur import UrGeometry, solve_ur
    from robokin_ros.core.robot import RobotModel
    robot = RobotModel.from_name(args.robot)
    geometry = UrGeometry.from_robot(robot)
    if args.from_q is not None:
        if len(args.from_q) != robot.n:
            return _fail(f"--from-q needs {robot.n} joint positions, got {len(args.from_q)}")
        pose = robot.fk(args.from_q)
    elif len(args.pose) != 6:
        return _fail(f"--pose needs x y z roll pitch yaw, got {len(args.pose)} numbers")
    else:
        pose = pin.SE3(pin.rpy.rpyToMatrix(*args.pose[3:]), np.array(args.pose[:3]))
    if args.seed is not None and len(args.seed) != robot.n:
        return _fail(f"--seed needs {robot.n} joint positions, got {len(args.seed)}")
    xyz, rpy = pose.translation, pin.rpy.matrixToRpy(pose.rotation)
    print(f"{args.robot} (a2={geometry.a2:.5g} m, a3={geometry.a3:.5g} m, d4={geometry.d4:.5g} m from the URDF); "
          f"target {robot.tip_frame} in {robot.base_frame}: xyz {np.round(xyz, 6).tolist()} m, "
          f"rpy {np.round(rpy, 6).tolist()} rad")
    return _print_result(solve_ur(geometry, pose, args.seed), robot.joint_names)


def run(args: argparse.Namespace) -> int:
    """Solve and print; 0 = solutions, 1 = unreachable, 2 = bad input."""
    return _run_2r(args) if args.robot == "2r" else _run_ur(args)
