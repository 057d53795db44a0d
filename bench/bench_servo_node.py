"""servo_node under ROS: loop rate held at 500 Hz and 1 kHz, and twist -> command latency across processes.

Three processes per rate: sim_robot (joint states), the servo node (in a child process of this script that
timestamps every tick), and this script as the client. Measured:
  late ticks   share of ticks starting more than 1.5 periods after the previous one (inside the node)
  rx rate      JointTrajectory messages per second seen by a subscriber in this (another) process
  latency      publish a TwistStamped -> receive the first JointTrajectory whose velocities reflect it.
               The command alternates between two tiny opposite twists (well inside the acceleration
               limit per tick), so the first command computed after the twist shows the new sign.
Run: .venv/bin/python bench/bench_servo_node.py [--seconds 5]
Targets: 1 kHz with <= 1 % late ticks; latency median <= 1.5 ms, p99 <= 5 ms.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(101, 200)))

import numpy as np  # noqa: E402
import rclpy  # noqa: E402
from geometry_msgs.msg import TwistStamped  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from trajectory_msgs.msg import JointTrajectory  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PANDA_ACCELERATION = [15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0]
TRAJECTORY_TOPIC = "/joint_trajectory_controller/joint_trajectory"


def run_servo(period: float, seconds: float) -> None:
    """Child process: a ServoNode whose ticks are timestamped; prints the tick statistics as JSON."""
    from robokin_ros.nodes.servo_node import ServoNode
    rclpy.init()
    node = ServoNode(parameter_overrides=[
        Parameter("publish_period", value=period), Parameter("incoming_command_timeout", value=5.0),
        Parameter("max_joint_acceleration", value=PANDA_ACCELERATION)])
    starts = np.zeros(int(seconds / period * 1.2) + 100)
    durations = np.zeros_like(starts)
    count = [0]
    tick = node._timer.callback

    def timed_tick() -> None:
        i = count[0]
        start = time.monotonic()
        tick()
        if i < len(starts):
            starts[i], durations[i] = start, time.monotonic() - start
            count[0] = i + 1

    node._timer.callback = timed_tick
    gc.freeze()       # as run_node does
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.05)
    n = count[0]
    gaps = np.diff(starts[:n])
    print(json.dumps({"ticks": n, "late": float(np.mean(gaps > 1.5 * period)) if n > 1 else 1.0,
                      "rate": float((n - 1) / (starts[n - 1] - starts[0])) if n > 1 else 0.0,
                      "tick_median_us": float(np.median(durations[:n]) * 1e6),
                      "tick_p99_us": float(np.percentile(durations[:n], 99) * 1e6),
                      "max_gap_ms": float(gaps.max() * 1e3) if n > 1 else 0.0}), flush=True)
    executor.shutdown()
    node.destroy_node()
    rclpy.try_shutdown()


class Client:
    """This process: counts JointTrajectory messages and measures twist -> command latency."""

    def __init__(self) -> None:
        self.node = rclpy.create_node("bench_client")
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.received: list[tuple[float, float]] = []      # (receive time, velocity of the watched joint)
        self.last_velocities = None
        self.watch = 0
        self.node.create_subscription(JointTrajectory, TRAJECTORY_TOPIC, self._on_trajectory, 100)
        self.pub = self.node.create_publisher(TwistStamped, "/servo_node/delta_twist_cmds", 10)

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        velocities = msg.points[0].velocities
        self.received.append((time.monotonic(), velocities[self.watch]))
        self.last_velocities = velocities

    def spin_until(self, predicate, timeout: float = 30.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end and not predicate():
            self.executor.spin_once(timeout_sec=0.01)
        return predicate()

    def twist(self, x: float) -> float:
        msg = TwistStamped()
        msg.twist.linear.x = x
        sent = time.monotonic()
        self.pub.publish(msg)
        return sent

    def rate(self, seconds: float) -> float:
        self.twist(0.001)
        self.spin_until(lambda: False, 0.3)
        self.received.clear()
        self.spin_until(lambda: False, seconds)
        times = [t for t, _ in self.received]
        return (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 else 0.0

    def latency(self, samples: int) -> np.ndarray:
        # find the joint that moves most for +x, then flip the command's sign and wait for that joint's sign
        self.twist(0.001)
        self.spin_until(lambda: False, 0.2)
        steady = np.array(self.last_velocities)
        self.watch = int(np.argmax(np.abs(steady)))
        sign = np.sign(steady[self.watch])
        out, direction = [], 1.0
        for _ in range(samples):
            direction = -direction
            self.received.clear()
            sent = self.twist(0.001 * direction)
            want = sign * direction
            if self.spin_until(lambda: any(v * want > 0 for _, v in self.received), 1.0):
                out.append(next(t for t, v in self.received if v * want > 0) - sent)
            self.spin_until(lambda: False, 0.005 + random.random() * 0.005)   # random phase vs. the tick
        return np.array(out)


def bench_rate(client: Client, period: float, seconds: float) -> dict:
    child = subprocess.Popen([sys.executable, __file__, "--servo-child", str(period), str(seconds + 12.0)],
                             stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        if not client.spin_until(lambda: client.pub.get_subscription_count() > 0, 30.0):
            raise RuntimeError("servo node not discovered")
        rx_rate = client.rate(seconds)
        latency = client.latency(int(seconds * 60))
        out, _ = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    stats = json.loads(out.strip().splitlines()[-1])
    stats.update(rx_rate=rx_rate, latency_ms=latency * 1e3)
    return stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measuring time per phase and rate [s]")
    parser.add_argument("--servo-child", nargs=2, type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.servo_child:
        run_servo(*args.servo_child)
        return
    sim = subprocess.Popen([str(Path(sys.executable).parent / "sim_robot"), "--ros-args", "--params-file",
                            str(REPO / "config/sim_robot.yaml"), "-p", "publish_tf:=false"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rclpy.init()
    client = Client()
    rows = []
    try:
        for hz in (500, 1000):
            stats = bench_rate(client, 1.0 / hz, args.seconds)
            rows.append((hz, stats))
            client.received.clear()
    finally:
        sim.terminate()
        sim.wait()
        client.node.destroy_node()
        rclpy.try_shutdown()
    print(f"\nservo_node, Panda, sim_robot at 500 Hz, {os.cpu_count()} cores (ROS_DOMAIN_ID "
          f"{os.environ['ROS_DOMAIN_ID']})")
    print(f"{'loop':>6} | {'ticks/s':>8} | {'late ticks':>10} | {'max gap':>8} | {'tick med/p99':>14} | "
          f"{'rx rate':>8} | {'latency med':>11} | {'p99':>7} | {'n':>4}")
    print("-" * 100)
    for hz, s in rows:
        lat = s["latency_ms"]
        med, p99 = (np.median(lat), np.percentile(lat, 99)) if len(lat) else (np.nan, np.nan)
        print(f"{hz:>4}Hz | {s['rate']:>8.1f} | {100 * s['late']:>9.2f}% | {s['max_gap_ms']:>6.1f}ms | "
              f"{s['tick_median_us']:>5.0f}/{s['tick_p99_us']:>4.0f} us | {s['rx_rate']:>7.1f} | "
              f"{med:>8.2f} ms | {p99:>4.2f} ms | {len(lat):>4}")
    print("targets: 1 kHz with <= 1 % late ticks; latency median <= 1.5 ms, p99 <= 5 ms")


if __name__ == "__main__":
    main()
