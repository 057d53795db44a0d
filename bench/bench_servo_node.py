"""servo_node under ROS at 500 Hz and 1 kHz, with sim_robot running: this tree against an earlier one, same run.

Per tree and run: sim_robot starts (joint states at 500 Hz; it follows every command), then for each rate a
servo_node process starts through the tree's own `servo_node.main` (its executor, its garbage-collector set-up),
with its timer callback timed. This script is the client in a third process: it streams twists and counts the
commands it receives. Measured:
  node tick       the servo's timer callback [us], median / p99, inside the servo process
  ticks/s         timer callbacks per second inside the servo process
  rx/s            JointTrajectory messages per second received here
  gap p99         99th percentile of the time between two received commands [ms]
  latency         publish a TwistStamped -> receive the first JointTrajectory whose velocities reflect it [ms];
                  the command alternates between two tiny opposite twists (well inside the acceleration limit
                  per tick), so the first command computed after the twist shows the new sign
  ready           process start -> first command received, twists streaming from the start, numba cache warm [s]
  RSS             the servo's and sim_robot's VmRSS after the measurement [MB]
  CPU             the servo's and sim_robot's CPU time while the commands are counted [% of one core]
Each run also measures the floor under any servo tick here: a bare node that only publishes a fixed,
pre-serialized 4-point trajectory at 1 kHz to the same subscribers (its tick is the middleware's write).
Targets (issue 10): tick <= 80 / 250 us, >= 995 commands/s and gap p99 <= 2 ms at 1 kHz, latency <= 1.0 / 3 ms at
1 kHz and <= 1.5 ms median at 500 Hz, ready <= 2 s, RSS <= 200 MB.
Run: .venv/bin/python bench/bench_servo_node.py [--runs 3] [--seconds 5] [--before REV|none]   (~8 min, ~4 with none)
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from other_tree import archived_tree as tree_at, tree_env

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(101, 200)))

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
# The tree issue 10 ("the ROS layer at 1 kHz") started from.
BEFORE_REV = "1c8a2d9"
PANDA_ACCELERATION = "[15.0,7.5,10.0,12.5,15.0,20.0,20.0]"
TRAJECTORY_TOPIC = "/joint_trajectory_controller/joint_trajectory"
TWIST_TOPIC = "/servo_node/delta_twist_cmds"
MAX_TICKS = 400_000

# figure key, label, target, format, lower is better
FIGURES = [
    ("tick_med_1000", "node tick median at 1 kHz [us]", "<= 80", "{:.0f}", True),
    ("tick_p99_1000", "node tick p99 at 1 kHz [us]", "<= 250", "{:.0f}", True),
    ("ticks_1000", "timer ticks/s at 1 kHz", "", "{:.0f}", False),
    ("rx_1000", "commands received /s at 1 kHz", ">= 995", "{:.0f}", False),
    ("gap_p99_1000", "inter-arrival gap p99 at 1 kHz [ms]", "<= 2", "{:.2f}", True),
    ("lat_med_1000", "twist->command latency median at 1 kHz [ms]", "<= 1.0", "{:.2f}", True),
    ("lat_p99_1000", "twist->command latency p99 at 1 kHz [ms]", "<= 3", "{:.2f}", True),
    ("cpu_servo_1000", "servo_node CPU at 1 kHz [% of a core]", "", "{:.0f}", True),
    ("cpu_sim_1000", "sim_robot CPU, servo at 1 kHz [% of a core]", "", "{:.0f}", True),
    ("tick_med_500", "node tick median at 500 Hz [us]", "", "{:.0f}", True),
    ("rx_500", "commands received /s at 500 Hz", "", "{:.0f}", False),
    ("lat_med_500", "twist->command latency median at 500 Hz [ms]", "<= 1.5", "{:.2f}", True),
    ("ready", "servo_node ready, warm cache [s]", "<= 2", "{:.2f}", True),
    ("rss_servo", "servo_node RSS [MB]", "<= 200", "{:.0f}", True),
    ("rss_sim", "sim_robot RSS [MB]", "<= 200", "{:.0f}", True),
]


# ---- the servo process ------------------------------------------------------------------------------
def run_servo(ticks_file: str, ros_args: list[str]) -> None:
    """Child process: the tree's servo_node main(), with its timer callback timed; raw tick times to a file."""
    from robokin_ros.nodes import servo_node

    starts, durations = np.zeros(MAX_TICKS), np.zeros(MAX_TICKS)
    count = [0]
    tick = servo_node.ServoNode._tick

    def timed_tick(self) -> None:
        start = time.monotonic()
        tick(self)
        i = count[0]
        if i < MAX_TICKS:
            starts[i], durations[i] = start, time.monotonic() - start
            count[0] = i + 1

    servo_node.ServoNode._tick = timed_tick
    try:
        servo_node.main(["servo_node", "--ros-args", *ros_args])
    finally:
        np.savez(ticks_file, starts=starts[:count[0]], durations=durations[:count[0]])


def run_floor(ticks_file: str, seconds: float) -> None:
    """Child process: the floor under any servo tick here: a bare node whose 1 kHz timer (EventsExecutor) only
    publishes one fixed 4-point Panda JointTrajectory, pre-serialized (no IK, no inputs, no message building)."""
    import rclpy
    from rclpy.serialization import serialize_message
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from robokin_ros.ros.rclpy_compat import events_executor
    rclpy.init()
    node = rclpy.create_node("floor_servo")
    pub = node.create_publisher(JointTrajectory, TRAJECTORY_TOPIC, 10)
    msg = JointTrajectory(joint_names=[f"panda_joint{j}" for j in range(1, 8)])
    msg.points = [JointTrajectoryPoint(positions=[0.0] * 7, velocities=[0.0] * 7) for _ in range(4)]
    for i, point in enumerate(msg.points):
        point.time_from_start.nanosec = 1_000_000 * (i + 1)
    data = serialize_message(msg)
    starts, durations = np.zeros(MAX_TICKS), np.zeros(MAX_TICKS)
    count = [0]

    def tick() -> None:
        start = time.monotonic()
        pub.publish(data)
        i = count[0]
        if i < MAX_TICKS:
            starts[i], durations[i] = start, time.monotonic() - start
            count[0] = i + 1

    node.create_timer(0.001, tick)
    executor = events_executor()
    executor.add_node(node)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.1)
    np.savez(ticks_file, starts=starts[:count[0]], durations=durations[:count[0]])
    rclpy.try_shutdown()


def measure_floor(tree: Path, seconds: float) -> dict:
    """The floor node's tick and the commands a client receives from it, with the tree's sim_robot subscribed."""
    argv, env = node_command(tree, "sim_robot", ["--params-file", str(tree / "config/sim_robot.yaml"),
                                                 "-p", "publish_tf:=false"])
    sim = subprocess.Popen(argv, env=env, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = Client()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            ticks_file = str(Path(tmp) / "ticks.npz")
            child = subprocess.Popen([sys.executable, __file__, "--floor-child", ticks_file, str(seconds + 4.0)],
                                     env=tree_env(REPO), cwd=REPO)
            if not client.spin_until(lambda: bool(client.received), 30.0):
                raise RuntimeError("the floor node sent nothing within 30 s")
            client.spin_until(lambda: False, 1.0)
            window_start = time.monotonic()
            arrivals = client.stream(seconds)
            window_end = time.monotonic()
            child.wait(timeout=30)
            ticks = np.load(ticks_file)
    finally:
        stop(sim)
        client.executor.shutdown()
        client.node.destroy_node()
    starts, durations = ticks["starts"], ticks["durations"]
    inside = (starts >= window_start) & (starts <= window_end)
    return {"tick_med": float(np.median(durations[inside]) * 1e6),
            "tick_p99": float(np.percentile(durations[inside], 99) * 1e6),
            "rx": float((len(arrivals) - 1) / (arrivals[-1] - arrivals[0])),
            "gap_p99": float(np.percentile(np.diff(arrivals), 99) * 1e3)}


# ---- this process: the client -----------------------------------------------------------------------
class Client:
    """Streams twists, counts JointTrajectory messages, measures twist -> command latency."""

    def __init__(self) -> None:
        import rclpy
        from geometry_msgs.msg import TwistStamped
        from trajectory_msgs.msg import JointTrajectory

        from robokin_ros.ros.rclpy_compat import events_executor
        self.twist_type = TwistStamped
        self.node = rclpy.create_node("bench_client")
        self.executor = events_executor()
        self.executor.add_node(self.node)
        self.received: list[tuple[float, float]] = []      # (receive time, velocity of the watched joint)
        self.last_velocities = None
        self.watch = 0
        self.node.create_subscription(JointTrajectory, TRAJECTORY_TOPIC, self._on_trajectory, 100)
        self.pub = self.node.create_publisher(TwistStamped, TWIST_TOPIC, 10)

    def _on_trajectory(self, msg) -> None:
        velocities = msg.points[0].velocities
        self.received.append((time.monotonic(), velocities[self.watch]))
        self.last_velocities = velocities

    def spin_until(self, predicate, timeout: float, every=None) -> bool:
        """Spin until `predicate()` or `timeout` [s]; `every()` is called about every 10 ms meanwhile."""
        end, next_call = time.monotonic() + timeout, 0.0
        while time.monotonic() < end and not predicate():
            if every is not None and time.monotonic() >= next_call:
                every()
                next_call = time.monotonic() + 0.01
            self.executor.spin_once(timeout_sec=0.002)
        return predicate()

    def twist(self, x: float) -> float:
        msg = self.twist_type()
        msg.twist.linear.x = x
        sent = time.monotonic()
        self.pub.publish(msg)
        return sent

    def stream(self, seconds: float) -> np.ndarray:
        """Receive times [s] of the commands over `seconds`, one twist holding the servo in motion."""
        self.twist(0.001)
        self.spin_until(lambda: False, 0.3)
        self.received.clear()
        self.spin_until(lambda: False, seconds)
        return np.array([t for t, _ in self.received])

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
        self.watch = 0
        return np.array(out)


def rss_mb(pid: int) -> float:
    """VmRSS of a running process [MB]."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far [s]."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def node_command(tree: Path, module: str, ros_args: list[str]) -> tuple[list[str], dict]:
    """argv and environment that run robokin_ros.nodes.<module> from `tree`."""
    env = tree_env(tree)
    return [sys.executable, "-m", f"robokin_ros.nodes.{module}", "--ros-args", *ros_args], env


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def measure_rate(client: Client, tree: Path, hz: int, seconds: float, sim_pid: int) -> dict:
    """One servo process at `hz`: the figures of FIGURES for that rate (keys without the rate suffix)."""
    with tempfile.TemporaryDirectory() as tmp:
        ticks_file = str(Path(tmp) / "ticks.npz")
        ros_args = ["-p", "robot:=panda", "-p", f"publish_period:={1.0 / hz}", "-p", "incoming_command_timeout:=5.0",
                    "-p", f"max_joint_acceleration:={PANDA_ACCELERATION}"]
        env = tree_env(tree)
        client.received.clear()
        spawned = time.monotonic()
        log = open(Path(tmp) / "servo.log", "w")
        child = subprocess.Popen([sys.executable, __file__, "--servo-child", ticks_file, *ros_args], env=env,
                                 cwd=tree, stdout=log, stderr=subprocess.STDOUT)
        try:
            if not client.spin_until(lambda: bool(client.received), 60.0, every=lambda: client.twist(0.001)):
                log.flush()
                raise RuntimeError(f"servo_node of {tree} sent no command within 60 s:\n"
                                   f"{(Path(tmp) / 'servo.log').read_text()[-3000:]}")
            ready = client.received[0][0] - spawned
            window_start = time.monotonic()
            cpu_start = cpu_seconds(child.pid), cpu_seconds(sim_pid)
            arrivals = client.stream(seconds)
            window_end = time.monotonic()
            cpu_servo, cpu_sim = ((cpu_seconds(pid) - start) / (window_end - window_start)
                                  for pid, start in zip((child.pid, sim_pid), cpu_start))
            latency = client.latency(int(seconds * 60))
            rss = rss_mb(child.pid)
        finally:
            stop(child)
            log.close()
        if len(arrivals) < 2:
            raise RuntimeError(f"servo_node of {tree} at {hz} Hz stopped sending commands:\n"
                               f"{(Path(tmp) / 'servo.log').read_text()[-3000:]}")
        ticks = np.load(ticks_file)
    starts, durations = ticks["starts"], ticks["durations"]
    inside = (starts >= window_start) & (starts <= window_end)
    if inside.sum() < 2:
        raise RuntimeError(f"servo_node of {tree} at {hz} Hz recorded {len(starts)} ticks, {inside.sum()} while "
                           f"measured ({starts[:1]}..{starts[-1:]} vs {window_start}..{window_end})")
    gaps = np.diff(arrivals)
    return {"tick_med": float(np.median(durations[inside]) * 1e6),
            "tick_p99": float(np.percentile(durations[inside], 99) * 1e6),
            "ticks": float((inside.sum() - 1) / (starts[inside][-1] - starts[inside][0])),
            "rx": float((len(arrivals) - 1) / (arrivals[-1] - arrivals[0])),
            "gap_p99": float(np.percentile(gaps, 99) * 1e3),
            "lat_med": float(np.median(latency) * 1e3), "lat_p99": float(np.percentile(latency, 99) * 1e3),
            "ready": ready, "rss_servo": rss, "cpu_servo": 100 * cpu_servo, "cpu_sim": 100 * cpu_sim}


def measure_tree(tree: Path, seconds: float) -> dict:
    """All FIGURES for one tree: sim_robot, then a servo at 500 Hz and one at 1 kHz, with a client of its own."""
    argv, env = node_command(tree, "sim_robot", ["--params-file", str(tree / "config/sim_robot.yaml"),
                                                 "-p", "publish_tf:=false"])
    sim = subprocess.Popen(argv, env=env, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    figures: dict[str, float] = {}
    client = Client()
    try:
        for hz in (500, 1000):
            stats = measure_rate(client, tree, hz, seconds, sim.pid)
            figures.update({f"{key}_{hz}": value for key, value in stats.items()})
        figures["rss_sim"] = rss_mb(sim.pid)
    finally:
        stop(sim)
        client.executor.shutdown()
        client.node.destroy_node()
    figures["ready"] = figures["ready_1000"]
    figures["rss_servo"] = max(figures["rss_servo_500"], figures["rss_servo_1000"])
    return figures


@contextmanager
def archived_tree(rev: str):
    """The package and its config as they were at git revision `rev`, in a temporary directory (None for rev
    'none')."""
    if rev == "none":
        yield None
        return
    with tree_at(rev, ("robokin_ros", "config")) as tree:
        yield tree


def warm_numba_cache(tree: Path) -> None:
    """Compile the tree's servo kernels into its numba cache, so that 'ready' is measured with a warm cache."""
    code = ("from robokin_ros.core.robot import RobotModel\n"
            "from robokin_ros.core.servo.config import ServoConfig\n"
            "from robokin_ros.core.servo.servo import warm_up\n"
            "warm_up(RobotModel.from_name('panda'), ServoConfig())\n")
    subprocess.run([sys.executable, "-c", code], env=tree_env(tree), cwd=tree, check=True,
                   stdout=subprocess.DEVNULL)


def spread(values: list[float], fmt: str) -> str:
    return " / ".join(fmt.format(v) for v in values)


def print_table(before: list[dict], now: list[dict], rev: str) -> None:
    marker = Path(sys.prefix) / ".robokin-distro"            # scripts/setup.sh records the venv's distro there
    distro = marker.read_text().strip() if marker.is_file() else "unrecorded"
    if not before:
        print(f"\n## servo_node, Panda, sim_robot at 500 Hz, {os.cpu_count()} cores, ROS 2 {distro}; this tree; "
              f"{len(now)} runs, median in the last column\n")
        print("| figure | target | per run | median |")
        print("|---|---|---|---|")
        for key, label, target, fmt, _lower_better in FIGURES:
            values = [r[key] for r in now]
            print(f"| {label} | {target} | {spread(values, fmt)} | {fmt.format(float(np.median(values)))} |")
        return
    print(f"\n## servo_node, Panda, sim_robot at 500 Hz, {os.cpu_count()} cores, ROS 2 {distro}; before = {rev}, "
          f"now = this tree; {len(now)} runs (run 1 / 2 / 3), medians in the last columns\n")
    print("| figure | target | before, per run | now, per run | before | now | ratio |")
    print("|---|---|---|---|---|---|---|")
    for key, label, target, fmt, _lower_better in FIGURES:
        b, n = [r[key] for r in before], [r[key] for r in now]
        mb, mn = float(np.median(b)), float(np.median(n))
        print(f"| {label} | {target} | {spread(b, fmt)} | {spread(n, fmt)} | {fmt.format(mb)} | {fmt.format(mn)} | "
              f"{mn / mb:.2f} |")


def print_floor(floors: list[dict]) -> None:
    print("\n## the floor: a bare node publishing a fixed, pre-serialized 4-point trajectory at 1 kHz "
          "(EventsExecutor), sim_robot and this client subscribed\n")
    print("| figure | per run | median |")
    print("|---|---|---|")
    for key, label, fmt in (("tick_med", "tick median [us]", "{:.0f}"), ("tick_p99", "tick p99 [us]", "{:.0f}"),
                            ("rx", "received /s", "{:.0f}"), ("gap_p99", "gap p99 [ms]", "{:.2f}")):
        values = [f[key] for f in floors]
        print(f"| {label} | {spread(values, fmt)} | {fmt.format(float(np.median(values)))} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measuring time per rate [s]")
    parser.add_argument("--runs", type=int, default=3, help="runs per tree (alternating trees)")
    parser.add_argument("--before", default=BEFORE_REV,
                        help="git revision of the 'before' tree, or 'none' to measure this tree only (a tree from "
                             "before Jazzy support cannot start its nodes on Jazzy)")
    parser.add_argument("--servo-child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    parser.add_argument("--floor-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.servo_child:
        run_servo(args.servo_child[0], args.servo_child[1:])
        return
    if args.floor_child:
        run_floor(args.floor_child[0], float(args.floor_child[1]))
        return
    import rclpy
    rclpy.init()
    before, now, floors = [], [], []
    try:
        with archived_tree(args.before) as old_tree:
            trees = [(REPO, now, "now")] if old_tree is None else [(old_tree, before, "before"), (REPO, now, "now")]
            for tree, _, _ in trees:
                warm_numba_cache(tree)
            for run in range(args.runs):
                for tree, results, name in trees:
                    results.append(measure_tree(tree, args.seconds))
                    print(f"run {run + 1} {name}: {json.dumps({k: round(v, 3) for k, v in results[-1].items()})}",
                          flush=True)
                floors.append(measure_floor(REPO, args.seconds))
                print(f"run {run + 1} floor: {json.dumps({k: round(v, 3) for k, v in floors[-1].items()})}",
                      flush=True)
    finally:
        rclpy.try_shutdown()
    print_table(before, now, args.before)
    print_floor(floors)


if __name__ == "__main__":
    main()
