"""robokin_demo: the README demo. Brings up sim_robot + servo_node (+ path_ik_node) on the Panda, runs a blended
rectangle and a pick-and-place motion program (exact stops, then zones) through the path action, then drives
the arm with a scripted twist sequence, and prints a report
(tracking error, status transitions, locked joints, time to stop) plus a PNG plot.
Then a second launch on two Pandas (demo/two_arms.py): both hands carry a box through a 20 cm square, then move it
with the servo in coordinated mode; its report follows, its plot is two_arms.png.

    robokin_demo                 # start the node graphs itself (what scripts/demo.sh runs)
    robokin_demo --attach        # drive nodes that are already running (demo.launch.py): the Panda only
    robokin_demo --skip-two-arms # the Panda only
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
from robokin_ros.demo.inputs import print_input_report, run_input_phases
from robokin_ros.demo.path import run_path_goal
from robokin_ros.demo.program import run_program_goals
from robokin_ros.demo.report import (
    analyse_phase,
    configured_jerk,
    print_capability_along,
    print_jerk_report,
    print_twist_report,
    status_transitions,
    write_plot,
)
from robokin_ros.demo.script import SCALE_LINEAR, SCALE_ROTATIONAL, SILENCE, Recording, demo_phases, time_to_stop
from robokin_ros.demo.two_arms import run_two_arms
from robokin_ros.share_files import config_file

ROBOT = "panda"
STATE_TIMEOUT_S = 30.0        # [s] for the first joint states and servo status (node start-up)
SUBSCRIBER_TIMEOUT_S = 20.0   # [s] for the servo's twist subscription to be matched
SETTLE_S = 0.5                # [s] pause between the path run and the twist script
TAIL_S = 0.3                  # [s] recorded after the script, so the stop is seen
STOP_LEAD_S = 0.1             # [s] of samples before the silence, for the time-to-stop reference


def start_graph(out_dir: Path, robot_name: str) -> NodeGraph:
    """sim_robot, servo_node and path_ik_node as child processes, logs in out_dir/logs."""
    graph = NodeGraph(out_dir / "logs")
    graph.start(NodeProcess("sim_robot", params_files=[config_file("sim_robot.yaml")], params={"robot": robot_name}))
    graph.start(NodeProcess("servo_node", params_files=[config_file(f"{robot_name}_servo.yaml")],
                            params={"robot": robot_name}))
    graph.start(NodeProcess("path_ik_node", params_files=[config_file(f"{robot_name}_path_ik.yaml")]))
    return graph


def _run(executor, driver, robot: RobotModel, recording: Recording, graph: NodeGraph | None, out: Path) -> int:
    """The path goal, the twist script and the report; 0 when everything went as expected."""
    print("robokin_demo: waiting for sim_robot (/joint_states) and servo_node (/servo_node/robokin_status) ...",
          flush=True)
    wait_for(executor, lambda: recording.times and recording.status, STATE_TIMEOUT_S,
             "joint states and servo status", graph)
    wait_for(executor, lambda: driver.twist_pub.get_subscription_count() > 0, SUBSCRIBER_TIMEOUT_S,
             "the servo subscriber", graph)
    path_failed = run_path_goal(executor, driver, robot, recording)
    spin_for(executor, SETTLE_S)
    print("\nMotion program: pick and place of three parts (20 moves), with exact stops, then with zones:")
    path_failed |= run_program_goals(executor, driver, robot, recording)
    spin_for(executor, SETTLE_S)
    print("\nOther servo inputs (a joint jog, a pose target, a guided push, a pose target back):")
    inputs = run_input_phases(executor, driver, robot, recording)
    spin_for(executor, SETTLE_S)
    t0 = time.monotonic()
    print(f"\nTwist script (unitless commands, scale.linear = {SCALE_LINEAR} m/s, "
          f"scale.rotational = {SCALE_ROTATIONAL} rad/s):")
    run_twist_script(executor, driver, demo_phases(SCALE_LINEAR, SCALE_ROTATIONAL), recording)
    spin_for(executor, TAIL_S)
    reports = [analyse_phase(robot, recording, p, s, e, SCALE_LINEAR, SCALE_ROTATIONAL)
               for p, s, e in recording.phase_spans if p.name != SILENCE]
    silence_start = recording.phase_spans[-1].start
    t, _, dq = recording.arrays(silence_start - STOP_LEAD_S)
    print_twist_report(reports, status_transitions(recording, t0), time_to_stop(t, dq, silence_start))
    print_jerk_report(recording, t0, configured_jerk(config_file(f"{ROBOT}_servo.yaml"), robot.n))
    t_all, q_all, dq_all = recording.arrays()
    np.savez_compressed(out / "recording.npz", time=t_all - t0, positions=q_all, velocities=dq_all,
                        joint_names=np.array(robot.joint_names),
                        status=np.array([(s.time - t0, s.code, s.sigma_min) for s in recording.status]))
    print_input_report(inputs)
    print_capability_along(robot, recording, out)
    plot = out / "demo.png"
    write_plot(robot, recording, t0, plot)
    print(f"\nplot written to {plot}")
    print(f"\nController check: sim_robot judged {recording.trajectories_sent} JointTrajectory messages and the "
          f"path goal by a default joint_trajectory_controller's rules; it refused {len(recording.rejections)}")
    for reason in dict.fromkeys(recording.rejections):
        print(f"  refused: {reason}")
    dead = graph.dead() if graph else []
    if dead:
        print("nodes that died:\n  " + "\n  ".join(dead))
        return 1
    if not all(r.ok for r in inputs):
        return 1
    return 1 if recording.rejections or not recording.trajectories_sent else path_failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--attach", action="store_true", help="drive already running nodes (demo.launch.py)")
    parser.add_argument("--out", type=Path, default=Path("out/demo"), help="folder for the plot and node logs")
    parser.add_argument("--skip-two-arms", action="store_true",
                        help="leave out the second launch on two Pandas (always left out with --attach)")
    args, _ros_args = parser.parse_known_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)      # --attach starts no graph, whose log folder made it before
    robot = RobotModel.from_name(ROBOT)
    recording = Recording()
    graph = None if args.attach else start_graph(args.out, ROBOT)
    rclpy = None
    try:
        import rclpy as _rclpy
        from rclpy.executors import SingleThreadedExecutor
        rclpy = _rclpy
        rclpy.init()
        driver = make_driver(robot, recording)
        executor = SingleThreadedExecutor()
        executor.add_node(driver)
        code = _run(executor, driver, robot, recording, graph, args.out)
        if args.attach or args.skip_two_arms:
            if args.attach:
                print("\nrobokin_demo --attach drives the Panda it was given; the two-arm phase (a launch of its "
                      "own) runs in robokin_demo without --attach")
            return code
        # the Panda's nodes go before the two arms' come: they share the topic and action names
        executor.remove_node(driver)
        driver.destroy_node()
        graph.stop()
        return run_two_arms(executor, args.out) or code
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
