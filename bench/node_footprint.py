"""Start-up time and memory of every robokin node, each started as a user starts it, in a process of its own.

The nodes run one at a time next to a sim_robot (measured first, then kept running as their driver); this
script is the client. Per node:
  ready  process spawn -> the node is usable, as this script sees it:
           sim_robot        the first /joint_states message
           servo_node       the first JointTrajectory on /joint_trajectory_controller/joint_trajectory while this
                            script streams TwistStamped on /servo_node/delta_twist_cmds at 100 Hz (from spawn on)
           path_ik_node     its action server /path_ik_node/execute_cartesian_path is discovered (an action
                            client can send goals from then on)
           capability_node  the first MarkerArray on /capability_node/markers
  RSS    VmRSS of /proc/<pid>/status [MB], SETTLE s after the node has done real work: sim_robot, servo_node and
         capability_node keep working (joint states at 500 Hz; twists streamed, commands at 500 Hz; markers with
         the force polytope at 10 Hz) for SETTLE s after ready; path_ik_node plans and executes one goal (a 5 cm
         line through sim_robot's FollowJointTrajectory action) and is read SETTLE s after the result.
  anon   RssAnon: the process's private memory. RSS also counts shared library pages it touched, most of them
         clean and shared with every other process mapping the same library (libllvmlite alone: ~70 MB).
  peak   VmHWM, read just before the node is stopped (sim_robot: at the end, after serving every other node).

Other benches import `measure_footprint` to print the figures of another tree: with `python_tree`, a folder
holding robokin_ros/ and config/ (e.g. `git archive <rev> robokin_ros config launch | tar -x -C <dir>`), each node
runs as `python -m robokin_ros.nodes.<node>` with that folder as working directory and first PYTHONPATH entry;
without it, the installed console scripts run with this repository's config/. A tree without numba's cache
(robokin_ros/**/__pycache__/*.nbi; a fresh `git archive` has none) compiles every kernel in its first run: slower
and bigger than it will ever be again, so measure it from the second run on (`--runs 2` and read the last).

Run: .venv/bin/python bench/node_footprint.py [--runs 3] [--tree DIR] [--nodes servo_node path_ik_node]
"""
from __future__ import annotations

import argparse
import math
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(101, 200)))

import numpy as np  # noqa: E402
import rclpy  # noqa: E402
from geometry_msgs.msg import PoseStamped, TwistStamped  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from rclpy.context import Context  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectory  # noqa: E402
from visualization_msgs.msg import MarkerArray  # noqa: E402

from robokin_interfaces.action import ExecuteCartesianPath  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
NODES = ("sim_robot", "servo_node", "path_ik_node", "capability_node")
PARAMS_FILE = {"sim_robot": "sim_robot.yaml", "servo_node": "panda_servo.yaml",
               "path_ik_node": "panda_path_ik.yaml", "capability_node": "capability.yaml"}
SETTLE = 3.0              # [s] of work after ready (after the goal's result for path_ik_node) before RSS is read
READY_TIMEOUT = 60.0      # [s] a node that is not ready by then is reported as such
# [s] the probe spins before the first node starts: with a brand-new DDS participant on both sides the first
# message came up to 3 s late (the node itself was up after 0.7 s)
PROBE_WARM_UP = 1.0
STOP_GAP = 0.5            # [s] between stopping one node and starting the next (its DDS participant leaves)
GOAL_TIMEOUT = 60.0       # [s] for the path goal's result
TWIST_PERIOD = 0.01       # [s] 100 Hz, as a teleoperation device
TWIST_SPEED = 0.05        # unitless command (x 0.4 m/s in config/panda_servo.yaml): 2 cm/s
TWIST_FLIP = 0.5          # [s] the twist reverses this often, so the arm stays near its start for the path goal
PATH_STEP = (0.0, 0.05, 0.0)   # [m] the path goal: one straight line in the base frame from the current tool pose
TRAJECTORY_TOPIC = "/joint_trajectory_controller/joint_trajectory"
MB = 1024.0               # /proc reports kB


@dataclass(frozen=True)
class Footprint:
    """One node's figures; NaN where it never got there."""

    node: str
    ready_s: float        # [s] spawn -> ready
    rss_mb: float         # VmRSS [MB] after the work
    anon_mb: float        # RssAnon [MB], same moment
    peak_mb: float        # VmHWM [MB] before stopping
    note: str = ""


def proc_memory(pid: int) -> dict[str, float]:
    """VmRSS, RssAnon and VmHWM of a process [MB]; NaN for each when it is gone."""
    keys = ("VmRSS", "RssAnon", "VmHWM")
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return dict.fromkeys(keys, math.nan)
    values = {line.split(":")[0]: line.split()[1] for line in lines if line.split(":")[0] in keys}
    return {key: int(values[key]) / MB if key in values else math.nan for key in keys}


def launch_command(node: str, python_tree: Path | None) -> tuple[list[str], Path, dict[str, str]]:
    """(argv, working directory, environment) that start `node` with its parameter file."""
    env = dict(os.environ)
    if python_tree is None:
        argv, cwd = [str(Path(sys.executable).parent / node)], REPO
    else:
        cwd = Path(python_tree).resolve()
        argv = [sys.executable, "-m", f"robokin_ros.nodes.{node}"]
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(cwd), env.get("PYTHONPATH", "")]))
    params = cwd / "config" / PARAMS_FILE[node]
    ros_args = ["--params-file", str(params)] if params.is_file() else ["-p", "robot:=panda"]
    return [*argv, "--ros-args", *ros_args], cwd, env


class NodeProcess:
    """A node process whose output goes to a log file; `spawned` is its start on the monotonic clock."""

    def __init__(self, node: str, python_tree: Path | None, log_dir: Path) -> None:
        argv, cwd, env = launch_command(node, python_tree)
        self.node = node
        self.log = log_dir / f"{node}.log"
        with self.log.open("w") as out:
            self.spawned = time.monotonic()
            self.popen = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)

    def memory(self) -> dict[str, float]:
        return proc_memory(self.popen.pid)

    def tail(self, lines: int = 15) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> str:
        """SIGINT (the nodes shut down cleanly on it), then SIGKILL after 10 s; '' or what went wrong.

        A killed node's DDS participant lingers: after one, the next servo_node got no joint state in 2 of 3 runs."""
        if self.popen.poll() is not None:
            return f"exited early (code {self.popen.returncode})"
        self.popen.send_signal(signal.SIGINT)
        try:
            self.popen.wait(timeout=10.0)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
            return "did not stop on SIGINT within 10 s: killed"
        return ""


class Probe:
    """This script's ROS side, in a context of its own (a caller may have rclpy initialised already)."""

    def __init__(self) -> None:
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("node_footprint_probe", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.state: JointState | None = None
        self.first: dict[str, float] = {}       # topic -> monotonic time of its first message since `reset`
        self.node.create_subscription(JointState, "/joint_states", self._on_state, 1)
        for topic, msg_type in ((TRAJECTORY_TOPIC, JointTrajectory), ("/capability_node/markers", MarkerArray)):
            self.node.create_subscription(msg_type, topic, lambda _msg, t=topic: self._seen(t), 10)
        self.twist_pub = self.node.create_publisher(TwistStamped, "/servo_node/delta_twist_cmds", 10)
        self.path_client = ActionClient(self.node, ExecuteCartesianPath, "/path_ik_node/execute_cartesian_path")
        self._twist_timer = None

    def _on_state(self, msg: JointState) -> None:
        self.state = msg
        self._seen("/joint_states")

    def _seen(self, topic: str) -> None:
        self.first.setdefault(topic, time.monotonic())

    def reset(self) -> None:
        self.first.clear()

    def spin_until(self, predicate: Callable[[], bool], timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end and not predicate():
            self.executor.spin_once(timeout_sec=0.005)
        return bool(predicate())

    def spin_for(self, seconds: float) -> None:
        self.spin_until(lambda: False, seconds)

    def stream_twists(self, on: bool) -> None:
        """Publish TwistStamped at 100 Hz while spinning (on) or stop (off)."""
        if on and self._twist_timer is None:
            start = time.monotonic()

            def publish() -> None:
                msg = TwistStamped()
                msg.twist.linear.x = TWIST_SPEED * (1.0 if int((time.monotonic() - start) / TWIST_FLIP) % 2 else -1.0)
                self.twist_pub.publish(msg)
            self._twist_timer = self.node.create_timer(TWIST_PERIOD, publish)
        elif not on and self._twist_timer is not None:
            self.node.destroy_timer(self._twist_timer)
            self._twist_timer = None

    def close(self) -> None:
        self.stream_twists(False)
        self.path_client.destroy()
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def _path_goal(state: JointState) -> ExecuteCartesianPath.Goal:
    """One straight PATH_STEP line from the current tool pose, orientation kept (executed, not plan_only)."""
    import pinocchio as pin     # only here: the probe's own imports stay light

    from robokin_ros.core.robot import RobotModel
    model = RobotModel.from_name("panda")
    by_name = dict(zip(state.name, state.position))
    world_T_tool = model.fk(np.array([by_name[name] for name in model.joint_names]))
    pose = PoseStamped()
    pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = (
        float(v) for v in world_T_tool.translation + np.asarray(PATH_STEP))
    q = pin.Quaternion(world_T_tool.rotation)
    o = pose.pose.orientation
    o.x, o.y, o.z, o.w = float(q.x), float(q.y), float(q.z), float(q.w)
    return ExecuteCartesianPath.Goal(waypoints=[pose])


def _send_path_goal(probe: Probe) -> str:
    """Send the path goal, wait for its result; a note on how it ended."""
    if not probe.spin_until(lambda: probe.state is not None, 10.0):
        return "no joint state for the path goal"
    future = probe.path_client.send_goal_async(_path_goal(probe.state))
    if not probe.spin_until(future.done, 15.0) or not future.result().accepted:
        return "path goal not accepted"
    result = future.result().get_result_async()
    if not probe.spin_until(result.done, GOAL_TIMEOUT):
        return "path goal: no result"
    r = result.result().result
    return f"path goal: code {r.error_code}" + ("" if r.error_code == 0 else f" ({r.message[:60]})")


# node -> the topic whose first message means ready (None: the action server is discovered)
READY_TOPIC = {"sim_robot": "/joint_states", "servo_node": TRAJECTORY_TOPIC, "path_ik_node": None,
               "capability_node": "/capability_node/markers"}


def _ready(probe: Probe, node: str) -> bool:
    topic = READY_TOPIC[node]
    return probe.path_client.server_is_ready() if topic is None else topic in probe.first


def measure_node(probe: Probe, node: str, python_tree: Path | None, log_dir: Path,
                 settle: float = SETTLE) -> tuple[Footprint, NodeProcess]:
    """Start `node`, wait until ready, let it work, read its memory; the footprint and the (running) process."""
    probe.reset()
    probe.stream_twists(node == "servo_node")
    process = NodeProcess(node, python_tree, log_dir)
    if not probe.spin_until(lambda: _ready(probe, node) or process.popen.poll() is not None, READY_TIMEOUT) \
            or not _ready(probe, node):
        probe.stream_twists(False)
        note = f"not ready (exit code {process.popen.poll()}):\n{process.tail()}"
        return Footprint(node, math.nan, math.nan, math.nan, math.nan, note), process
    topic = READY_TOPIC[node]
    ready_s = (probe.first[topic] if topic else time.monotonic()) - process.spawned
    note = _send_path_goal(probe) if node == "path_ik_node" else ""
    probe.spin_for(settle)
    probe.stream_twists(False)
    memory = process.memory()
    return Footprint(node, ready_s, memory["VmRSS"], memory["RssAnon"], memory["VmHWM"], note), process


def measure_started(probe: Probe, node: str, python_tree: Path | None, log_dir: Path,
                    settle: float = SETTLE) -> tuple[Footprint, NodeProcess]:
    """`measure_node`, with a second start when the first never gets ready (seen after a node of the previous run
    had to be killed: the next servo_node received no joint state in 60 s); the footprint's note says so."""
    footprint, process = measure_node(probe, node, python_tree, log_dir, settle)
    if not math.isnan(footprint.ready_s):
        return footprint, process
    process.stop()
    first_note = footprint.note.splitlines()[0]
    footprint, process = measure_node(probe, node, python_tree, log_dir, settle)
    return Footprint(**{**footprint.__dict__, "note": f"2nd start (1st {first_note}) {footprint.note}"}), process


def measure_footprint(python_tree: Path | None = None, nodes: Sequence[str] = NODES,
                      settle: float = SETTLE) -> list[Footprint]:
    """One measuring run over `nodes` (sim_robot always runs: it drives the others); see the module docstring.

    Args:
        python_tree: folder with robokin_ros/ and config/ to run with `python -m`; None: the console scripts.
        nodes: which nodes to report, any of NODES.
        settle: [s] of work before the memory is read.
    """
    if python_tree is not None and not any((Path(python_tree) / "robokin_ros").rglob("*.nbi")):
        warnings.warn(f"no numba cache in {python_tree}: this run compiles the kernels (slower, bigger)", stacklevel=2)
    probe = Probe()
    probe.spin_for(PROBE_WARM_UP)
    results: dict[str, Footprint] = {}
    with tempfile.TemporaryDirectory(prefix="node_footprint_") as logs:
        sim_fp, sim = measure_started(probe, "sim_robot", python_tree, Path(logs), settle)
        try:
            if math.isnan(sim_fp.ready_s):
                raise RuntimeError(f"sim_robot did not start: {sim_fp.note}")
            for node in (n for n in nodes if n != "sim_robot"):
                footprint, process = measure_started(probe, node, python_tree, Path(logs), settle)
                peak = process.memory()["VmHWM"]
                stopped = process.stop()
                probe.spin_for(STOP_GAP)
                note = " ".join(filter(None, [footprint.note, stopped]))
                results[node] = Footprint(**{**footprint.__dict__, "peak_mb": peak, "note": note})
            # sim_robot's peak after it served every other node
            results["sim_robot"] = Footprint(**{**sim_fp.__dict__, "peak_mb": sim.memory()["VmHWM"]})
        finally:
            sim.stop()
            probe.close()
    return [results[n] for n in NODES if n in results and n in nodes]


def _spread(values: list[float], fmt: str) -> str:
    finite = [v for v in values if not math.isnan(v)]
    if not finite:
        return "n/a"
    text = format(statistics.median(finite), fmt)
    return text if len(finite) == 1 else f"{text} ({format(min(finite), fmt)}-{format(max(finite), fmt)})"


def format_table(runs: Sequence[Sequence[Footprint]], title: str = "") -> str:
    """Median (min-max) over the runs per node: ready [s], RSS, anon and peak [MB]; notes of the last run."""
    lines = [title] if title else []
    lines.append(f"{'node':<16} | {'ready [s]':<17} | {'RSS [MB]':<17} | {'anon [MB]':<17} | {'peak [MB]':<17}")
    lines.append("-" * 96)
    for i, last in enumerate(runs[-1]):
        column = [run[i] for run in runs]
        cells = [_spread([fp.ready_s for fp in column], ".2f")] + [
            _spread([getattr(fp, field) for fp in column], ".0f") for field in ("rss_mb", "anon_mb", "peak_mb")]
        lines.append(f"{last.node:<16} | " + " | ".join(f"{c:<17}" for c in cells)
                     + (f"  {last.note}" if last.note else ""))
    return "\n".join(lines)


# `--steps NODE`: where one node's memory goes, in a fresh interpreter. Every import that crosses into another
# top-level package is timed by VmRSS; a package is charged what its imports added minus what the other packages
# they pulled in added (numba is charged without the scipy it imports). Then the node is built and spun.
STEPS_CHILD = """
import builtins, importlib, inspect, sys, time
def rss():
    return next(int(l.split()[1]) / 1024 for l in open('/proc/self/status') if l.startswith('VmRSS'))
real_import, stack, own = builtins.__import__, [['<start>', 0.0]], {}
def timed(name, globals=None, locals=None, fromlist=(), level=0):
    top = name.partition('.')[0]
    if level or name in sys.modules or top == stack[-1][0]:
        return real_import(name, globals, locals, fromlist, level)
    before = rss(); stack.append([top, 0.0])
    try:
        return real_import(name, globals, locals, fromlist, level)
    finally:
        nested = stack.pop()[1]; grown = rss() - before
        own[top] = own.get(top, 0.0) + grown - nested; stack[-1][1] += grown
start = rss(); builtins.__import__ = timed
module = importlib.import_module('robokin_ros.nodes.' + sys.argv[1]); builtins.__import__ = real_import
for top, mb in sorted(own.items(), key=lambda kv: -kv[1]):
    if mb >= 0.5: print(f'  import {top:<28} {mb:7.1f} MB')
print(f'  {"interpreter start":<35} {start:7.1f} MB')
print(f'  {"after the imports":<35} {rss():7.1f} MB')
import rclpy
from rclpy.node import Node
from rclpy.executors import SingleThreadedExecutor
rclpy.init(args=['node', '--ros-args', *sys.argv[2:]])
cls = next(c for _, c in inspect.getmembers(module, inspect.isclass)
           if issubclass(c, Node) and c.__module__ == module.__name__)
before, t = rss(), time.perf_counter(); node = cls()
after, took = rss(), time.perf_counter() - t
print(f'  {"node built (warm-up included)":<35} {after:7.1f} MB  (+{after - before:.1f}, {took:.2f} s)')
executor = SingleThreadedExecutor(); executor.add_node(node); end = time.monotonic() + 3.0
while time.monotonic() < end: executor.spin_once(timeout_sec=0.05)
print(f'  {"spun 3 s (alone: no driver)":<35} {rss():7.1f} MB')
"""


def import_steps(node: str, python_tree: Path | None = None) -> str:
    """The `--steps` report of one node (see STEPS_CHILD), run in a fresh interpreter."""
    argv, cwd, env = launch_command(node, python_tree)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(python_tree or REPO), env.get("PYTHONPATH", "")]))
    ros_args = argv[argv.index("--ros-args") + 1:]
    done = subprocess.run([sys.executable, "-c", STEPS_CHILD, node, *ros_args], cwd=cwd, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=120)
    return f"{node}:\n{done.stdout}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="measuring runs (the table shows median and range)")
    parser.add_argument("--tree", type=Path, help="run the nodes of this tree with python -m (see the docstring)")
    parser.add_argument("--nodes", nargs="+", choices=NODES, default=list(NODES))
    parser.add_argument("--settle", type=float, default=SETTLE, help="[s] of work before the memory is read")
    parser.add_argument("--steps", nargs="+", choices=NODES, help="only print where these nodes' memory goes")
    args = parser.parse_args()
    if args.steps:
        print("\n".join(import_steps(node, args.tree) for node in args.steps))
        return
    runs = [measure_footprint(args.tree, args.nodes, args.settle) for _ in range(args.runs)]
    how = f"python -m from {args.tree}" if args.tree else "console scripts"
    print(format_table(runs, f"robokin nodes, Panda, {how}, {len(runs)} run(s), {os.cpu_count()} cores, "
                             f"RSS {args.settle:g} s after ready/work (ROS_DOMAIN_ID {os.environ['ROS_DOMAIN_ID']})"))


if __name__ == "__main__":
    main()
