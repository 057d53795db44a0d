"""robokin_demo: the README demo. Brings up sim_robot + servo_node (+ path_ik_node) on the Panda, runs a blended
rectangle through the path action, then drives the arm with a scripted twist sequence, and prints a report
(tracking error, status transitions, locked joints, time to stop) plus a PNG plot.

    robokin_demo                 # start the node graph itself (what scripts/demo.sh runs)
    robokin_demo --attach        # drive nodes that are already running (demo.launch.py)
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from robokin_ros.core.robot import RobotModel
from robokin_ros.demo.driver import make_driver, run_twist_script, spin_for, wait_for
from robokin_ros.demo.graph import NodeGraph, NodeProcess
from robokin_ros.demo.path import run_path_goal
from robokin_ros.demo.report import (
    analyse_phase,
    print_capability_along,
    print_twist_report,
    status_transitions,
    write_plot,
)
from robokin_ros.demo.script import Recording, demo_phases, time_to_stop
from robokin_ros.paths import config_file


def start_graph(out_dir: Path, robot_name: str) -> NodeGraph:
    graph = NodeGraph(out_dir / "logs")
    graph.start(NodeProcess("sim_robot", params_files=[config_file("sim_robot.yaml")], params={"robot": robot_name}))
    graph.start(NodeProcess("servo_node", params_files=[config_file(f"{robot_name}_servo.yaml")],
                            params={"robot": robot_name}))
    graph.start(NodeProcess("path_ik_node", params_files=[config_file(f"{robot_name}_path_ik.yaml")]))
    return graph


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--attach", action="store_true", help="drive already running nodes (demo.launch.py)")
    parser.add_argument("--out", type=Path, default=Path("out/demo"), help="folder for the plot and node logs")
    args, _ros_args = parser.parse_known_args(argv)
    robot = RobotModel.from_name("panda")
    scale_linear, scale_rotational = 0.4, 0.8
    recording = Recording()
    graph = None if args.attach else start_graph(args.out, "panda")
    rclpy = None
    try:
        import rclpy as _rclpy
        from rclpy.executors import SingleThreadedExecutor
        rclpy = _rclpy
        rclpy.init()
        _, driver = make_driver(robot, recording)
        executor = SingleThreadedExecutor()
        executor.add_node(driver)
        print("robokin_demo: waiting for sim_robot (/joint_states) and servo_node (/servo_node/status) ...",
              flush=True)
        wait_for(executor, lambda: recording.times and recording.status, 30.0, "joint states and servo status",
                 graph)
        wait_for(executor, lambda: driver.twist_pub.get_subscription_count() > 0, 20.0, "the servo subscriber",
                 graph)
        path_failed = run_path_goal(executor, driver, robot, recording)
        spin_for(executor, 0.5)
        t0 = time.monotonic()
        print("\nTwist script (unitless commands, scale.linear = 0.4 m/s, scale.rotational = 0.8 rad/s):")
        phases = demo_phases(scale_linear, scale_rotational)
        run_twist_script(executor, driver, phases, recording)
        spin_for(executor, 0.3)
        reports = [analyse_phase(robot, recording, p, s, e, scale_linear, scale_rotational)
                   for p, s, e in recording.phase_spans if p.name != "silence"]
        silence_start = recording.phase_spans[-1][1]
        t, _, dq = recording.arrays(silence_start - 0.1)
        print_twist_report(reports, status_transitions(recording, t0), time_to_stop(t, dq, silence_start))
        t_all, q_all, dq_all = recording.arrays()
        np.savez_compressed(args.out / "recording.npz", time=t_all - t0, positions=q_all, velocities=dq_all,
                            joint_names=np.array(robot.joint_names),
                            status=np.array([(s[0] - t0, s[1], s[4]) for s in recording.status]))
        print_capability_along(robot, recording, args.out)
        plot = args.out / "demo.png"
        write_plot(robot, recording, t0, plot)
        print(f"\nplot written to {plot}")
        dead = graph.dead() if graph else []
        if dead:
            print("nodes that died:\n  " + "\n  ".join(dead))
            return 1
        return path_failed
    except (RuntimeError, KeyboardInterrupt) as err:
        print(f"robokin_demo: {err}", file=sys.stderr)
        return 1
    finally:
        if rclpy is not None:
            rclpy.try_shutdown()
        if graph is not None:
            graph.stop()


if __name__ == "__main__":
    sys.exit(main())
