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
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pinocchio as pin

from ..core.robot import RobotModel
from ..core.status import ServoStatus
from ..paths import config_file
from .demo_script import Phase, PhaseReport, demo_phases, time_to_stop, tool_velocities
from .graph import NodeGraph, NodeProcess

TWIST_RATE_HZ = 100.0


@dataclass
class Recording:
    """Everything the driver saw, on the monotonic clock."""

    times: list[float] = field(default_factory=list)
    positions: list[np.ndarray] = field(default_factory=list)
    velocities: list[np.ndarray] = field(default_factory=list)
    status: list[tuple[float, int, str, tuple[str, ...], float]] = field(default_factory=list)
    phase_spans: list[tuple[Phase, float, float]] = field(default_factory=list)

    def arrays(self, start: float = -np.inf, end: float = np.inf):
        t = np.array(self.times)
        keep = (t >= start) & (t <= end)
        return t[keep], np.array(self.positions)[keep], np.array(self.velocities)[keep]


def _make_driver(robot: RobotModel, recording: Recording):
    import rclpy
    from geometry_msgs.msg import TwistStamped
    from rclpy.node import Node
    from robokin_interfaces.msg import ServoStatus as ServoStatusMsg
    from sensor_msgs.msg import JointState

    class DemoDriver(Node):
        def __init__(self) -> None:
            super().__init__("robokin_demo")
            self.twist_pub = self.create_publisher(TwistStamped, "/servo_node/delta_twist_cmds", 10)
            self.create_subscription(JointState, "/joint_states", self._on_joint_state, 100)
            self.create_subscription(ServoStatusMsg, "/servo_node/status", self._on_status, 100)
            self._index = {name: i for i, name in enumerate(robot.joint_names)}

        def _on_joint_state(self, msg: JointState) -> None:
            order = [msg.name.index(n) for n in robot.joint_names if n in msg.name]
            if len(order) != robot.n:
                return
            recording.times.append(time.monotonic())
            recording.positions.append(np.array([msg.position[i] for i in order]))
            velocities = [msg.velocity[i] for i in order] if len(msg.velocity) == len(msg.name) else [0.0] * robot.n
            recording.velocities.append(np.array(velocities))

        def _on_status(self, msg) -> None:
            recording.status.append((time.monotonic(), msg.code, msg.message, tuple(msg.locked_joints),
                                     msg.sigma_min))

        def send(self, phase: Phase) -> None:
            msg = TwistStamped()
            msg.header.stamp = self.get_clock().now().to_msg()
            msg.header.frame_id = robot.tip_frame if phase.frame == "tool" else phase.frame
            (msg.twist.linear.x, msg.twist.linear.y, msg.twist.linear.z) = phase.linear
            (msg.twist.angular.x, msg.twist.angular.y, msg.twist.angular.z) = phase.angular
            self.twist_pub.publish(msg)

    return rclpy, DemoDriver()


def _spin_for(executor, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=min(0.01, max(0.0, end - time.monotonic())))


def _wait_for(executor, predicate, timeout_s: float, what: str, graph: NodeGraph | None) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end and not predicate():
        executor.spin_once(timeout_sec=0.05)
        dead = graph.dead() if graph else []
        if dead:
            raise RuntimeError("a node died during start-up:\n  " + "\n  ".join(dead))
    if not predicate():
        raise RuntimeError(f"timed out after {timeout_s:.0f} s waiting for {what}")


def run_twist_script(executor, driver, phases: list[Phase], recording: Recording) -> None:
    """Publish each phase's twist at TWIST_RATE_HZ; the final 'silence' phase publishes nothing."""
    for phase in phases:
        start = time.monotonic()
        print(f"  - {phase.name:<30s} {phase.duration:4.1f} s   expect: {phase.expect}", flush=True)
        next_tick = start
        while time.monotonic() < start + phase.duration:
            if phase.name != "silence":
                driver.send(phase)
            next_tick += 1.0 / TWIST_RATE_HZ
            _spin_for(executor, max(0.0, next_tick - time.monotonic()))
        recording.phase_spans.append((phase, start, time.monotonic()))


def analyse_phase(robot: RobotModel, recording: Recording, phase: Phase, start: float, end: float,
                  scale_linear: float, scale_rotational: float) -> PhaseReport:
    """Compare the measured tool motion of one phase with its command."""
    t, q, _ = recording.arrays(start, end + 0.005)     # + the few ms the arm lags the command
    origins, lin, ang = tool_velocities(robot, t, q)
    steady = t >= start + 0.3
    rotating = np.linalg.norm(phase.angular) > 0
    if rotating:
        commanded = np.array(phase.angular) * scale_rotational
        if phase.frame == "tool":   # tool-frame angular velocity rotated into base axes per sample
            measured = np.array([robot.fk(qi).rotation.T @ wi for qi, wi in zip(q, ang)])
        else:
            measured = ang
    else:
        commanded, measured = np.array(phase.linear) * scale_linear, lin
    errors = np.linalg.norm(measured[steady] - commanded, axis=1) if steady.any() else np.array([np.nan])
    statuses = [s for s in recording.status if start <= s[0] <= end]
    names = tuple(dict.fromkeys(ServoStatus(s[1]).name if s[1] in ServoStatus._value2member_map_ else str(s[1])
                                for s in statuses))
    locked = tuple(dict.fromkeys(j for s in statuses for j in s[3]))
    sigma = min((s[4] for s in statuses), default=np.nan)
    # rotations: origin travel after the 0.3 s transition (the previous phase's tail is not this phase's
    # doing); translations: the whole phase
    kept = origins[steady] if rotating else origins
    drift = float(np.linalg.norm(kept[-1] - kept[0])) if len(kept) else np.nan
    return PhaseReport(phase.name, float(np.linalg.norm(commanded)), float(np.median(errors)), drift,
                       float(sigma), names, locked)


def print_twist_report(reports: list[PhaseReport], transitions: list[str], stop_s: float | None) -> None:
    print("\nTwist teleoperation report")
    print(f"  {'phase':<30s} {'command':>9s} {'median err':>11s} {'origin moved':>13s} {'min sigma':>10s}  status")
    for r in reports:
        unit = "rad/s" if "rotate" in r.name or "wrist" in r.name else "m/s"
        err = f"{r.median_speed_error * (1 if unit == 'rad/s' else 1000):.3g}{'' if unit == 'rad/s' else ' mm/s'}"
        print(f"  {r.name:<30s} {r.commanded_speed:6.3f} {unit:<5s} {err:>11s} {r.tool_origin_drift * 1000:9.1f} mm "
              f"{r.min_sigma:10.4f}  {', '.join(r.statuses) or '-'}"
              + (f"  locked: {', '.join(r.locked_joints)}" if r.locked_joints else ""))
    print("\n  status transitions:")
    for line in transitions:
        print(f"    {line}")
    print(f"\n  time to stop after silence: {'still moving!' if stop_s is None else f'{stop_s * 1000:.0f} ms'}")


def status_transitions(recording: Recording, t0: float) -> list[str]:
    """One line per change of status code (or of the locked-joint set)."""
    lines, last = [], None
    for t, code, message, locked, _ in recording.status:
        key = (code, locked)
        if key != last:
            name = ServoStatus(code).name if code in ServoStatus._value2member_map_ else str(code)
            lines.append(f"t={t - t0:6.2f} s  {name:<40s} {message}")
            last = key
    return lines


def write_plot(robot: RobotModel, recording: Recording, t0: float, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t, q, dq = recording.arrays()
    origins = np.array([robot.fk(qi).translation for qi in q])
    fig = plt.figure(figsize=(14, 9))
    ax3d = fig.add_subplot(2, 2, 1, projection="3d")
    for phase, start, end in recording.phase_spans:
        keep = (t >= start) & (t <= end)
        ax3d.plot(*origins[keep].T, label=phase.name)
    ax3d.set_title("tool origin path (base frame) [m]")
    ax3d.legend(fontsize=6, loc="upper left")
    ax_v = fig.add_subplot(2, 2, 2)
    ax_v.plot(t - t0, dq)
    ax_v.set_title("joint velocities [rad/s]")
    ax_v.legend(robot.joint_names, fontsize=6)
    ax_q = fig.add_subplot(2, 2, 3)
    span = robot.limits.upper - robot.limits.lower
    ax_q.plot(t - t0, (q - robot.limits.lower) / span)
    ax_q.set_title("joint positions, share of range (0 = lower, 1 = upper limit)")
    ax_s = fig.add_subplot(2, 2, 4)
    if recording.status:
        st = np.array([(s[0] - t0, s[4], s[1]) for s in recording.status])
        ax_s.plot(st[:, 0], st[:, 1], label="sigma_min")
        ax_s.step(st[:, 0], st[:, 2] / 10.0, where="post", label="status code / 10")
        ax_s.legend(fontsize=7)
    ax_s.set_title("servo: smallest singular value and status")
    for ax in (ax_v, ax_q, ax_s):
        for phase, start, _ in recording.phase_spans:
            ax.axvline(start - t0, color="grey", lw=0.5)
        ax.set_xlabel("time [s]")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)


RECTANGLE_OFFSETS = [(0.1, 0.0, 0.0), (0.1, 0.15, 0.0), (-0.1, 0.15, 0.0), (-0.1, -0.15, 0.0),
                     (0.1, -0.15, 0.0), (0.1, 0.0, 0.0), (0.0, 0.0, 0.0)]   # [m] from the start, base axes


def run_path_goal(executor, driver, robot: RobotModel, recording: Recording, blend_radius: float = 0.03) -> int:
    """Send a closed 0.2 m x 0.3 m rectangle with blended corners to path_ik_node and report how it went."""
    from geometry_msgs.msg import PoseStamped
    from rclpy.action import ActionClient
    from robokin_interfaces.action import ExecuteCartesianPath

    client = ActionClient(driver, ExecuteCartesianPath, "/path_ik_node/execute_cartesian_path")
    end = time.monotonic() + 30.0
    while time.monotonic() < end and not client.server_is_ready():
        executor.spin_once(timeout_sec=0.1)
    if not client.server_is_ready():
        print("  path_ik_node's action server did not appear within 30 s")
        return 1
    start_pose = robot.fk(recording.positions[-1])
    goal = ExecuteCartesianPath.Goal(blend_radius=blend_radius)
    for offset in RECTANGLE_OFFSETS:
        waypoint = PoseStamped()
        waypoint.header.frame_id = robot.base_frame
        p = start_pose.translation + np.array(offset)
        waypoint.pose.position.x, waypoint.pose.position.y, waypoint.pose.position.z = p
        qx, qy, qz, qw = pin.Quaternion(start_pose.rotation).coeffs()
        waypoint.pose.orientation.x, waypoint.pose.orientation.y = qx, qy
        waypoint.pose.orientation.z, waypoint.pose.orientation.w = qz, qw
        goal.waypoints.append(waypoint)
    print(f"\nCartesian path: a closed 0.2 m x 0.3 m rectangle, {blend_radius * 1000:.0f} mm corner blends, "
          "through /path_ik_node/execute_cartesian_path")
    result, t_start = None, time.monotonic()
    for _attempt in range(10):     # a freshly started node may not have seen /joint_states yet
        t_start = time.monotonic()
        result = _execute(executor, client, goal)
        if result is None or result.error_code != ExecuteCartesianPath.Result.NO_JOINT_STATE:
            break
        _spin_for(executor, 1.0)
    if result is None:
        print("  the goal was rejected or got no result within 120 s")
        return 1
    t_end = time.monotonic()
    planned = [robot.fk(np.array(p.positions)).translation for p in result.trajectory.points]
    t, q, _ = recording.arrays(t_start, t_end)
    measured = np.array([robot.fk(qi).translation for qi in q])
    deviation = _distance_to_polyline(measured, np.array(planned)) if len(planned) > 1 and len(q) else None
    duration = (result.trajectory.points[-1].time_from_start.sec + 1e-9 * result.trajectory.points[-1]
                .time_from_start.nanosec) if result.trajectory.points else 0.0
    print(f"  result: code {result.error_code}, fraction {result.fraction:.3f}: {result.message}")
    print(f"  trajectory: {len(result.trajectory.points)} points, {duration:.2f} s; executed in "
          f"{t_end - t_start:.2f} s (planning included)")
    if deviation is not None:
        print(f"  measured tool path vs planned tool path: max {deviation.max() * 1000:.3f} mm, "
              f"median {np.median(deviation) * 1000:.3f} mm")
    return 0 if result.error_code == 0 else 1


def _execute(executor, client, goal):
    """Send one goal and wait for its result (None when rejected or after 120 s)."""
    sent = client.send_goal_async(goal)
    while not sent.done():
        executor.spin_once(timeout_sec=0.05)
    handle = sent.result()
    if not handle.accepted:
        return None
    result_future = handle.get_result_async()
    end = time.monotonic() + 120.0
    while not result_future.done() and time.monotonic() < end:
        executor.spin_once(timeout_sec=0.05)
    return result_future.result().result if result_future.done() else None


def _distance_to_polyline(points: np.ndarray, polyline: np.ndarray) -> np.ndarray:
    """Distance of each point (k, 3) to the polyline (m, 3) [m]."""
    a, b = polyline[:-1], polyline[1:]                                # (m-1, 3)
    ab = b - a
    length_sq = np.maximum((ab * ab).sum(axis=1), 1e-18)
    best = np.full(len(points), np.inf)
    for i, p in enumerate(points):
        s = np.clip(((p - a) * ab).sum(axis=1) / length_sq, 0.0, 1.0)
        best[i] = np.sqrt((((a + s[:, None] * ab) - p) ** 2).sum(axis=1).min())
    return best


def print_capability_along(robot: RobotModel, recording: Recording, out_dir: Path) -> None:
    """How the arm's capability changes along the twist script; a picture at the most stretched pose."""
    from ..core.capability import analyze, torque_limits_of
    from .capability_view import render

    limits, reason = torque_limits_of(robot)
    print("\nCapability along the twist script (translational, at the end of each phase):")
    print(f"  {'phase':<30s} {'yoshikawa':>10s} {'cond':>7s} {'sigma_min':>10s} {'v_max m/s':>10s} "
          f"{'F_min N':>8s} {'F_max N':>8s}")
    worst_q, worst_sigma = None, np.inf
    for phase, _, end in recording.phase_spans:
        _, q, _ = recording.arrays(end - 0.05, end + 0.05)
        if not len(q):
            continue
        a = analyze(robot, q[-1], limits, reason)
        m = a.manipulability
        force = a.force_weighted.semi_axes if a.force_weighted is not None else (np.nan, np.nan, np.nan)
        print(f"  {phase.name:<30s} {m.yoshikawa:10.4f} {m.condition:7.1f} {m.sigma_min:10.4f} "
              f"{a.velocity.semi_axes[0]:10.3f} {min(force):8.1f} {max(force):8.1f}")
        if m.sigma_min < worst_sigma:
            worst_q, worst_sigma = q[-1], m.sigma_min
    if worst_q is not None:
        picture = out_dir / "capability_stretched.png"
        render(robot, worst_q, picture, views=("iso", "front"))
        print(f"  capability picture at the least dexterous pose (sigma_min {worst_sigma:.4f}): {picture}")


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
        _, driver = _make_driver(robot, recording)
        executor = SingleThreadedExecutor()
        executor.add_node(driver)
        print("robokin_demo: waiting for sim_robot (/joint_states) and servo_node (/servo_node/status) ...",
              flush=True)
        _wait_for(executor, lambda: recording.times and recording.status, 30.0, "joint states and servo status",
                  graph)
        _wait_for(executor, lambda: driver.twist_pub.get_subscription_count() > 0, 20.0, "the servo subscriber",
                  graph)
        path_failed = run_path_goal(executor, driver, robot, recording)
        _spin_for(executor, 0.5)
        t0 = time.monotonic()
        print("\nTwist script (unitless commands, scale.linear = 0.4 m/s, scale.rotational = 0.8 rad/s):")
        phases = demo_phases(scale_linear, scale_rotational)
        run_twist_script(executor, driver, phases, recording)
        _spin_for(executor, 0.3)
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
