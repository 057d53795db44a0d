"""The servo stream and the demo on a quiet machine and on a busy one, side by side (issue 23 A).

A busy robot PC runs perception next to the arm. Here that is one CPU hog per core at normal priority, half of
them busy loops and half large-memory copy loops (numpy copies of 256 MB, which also thrash the caches), and with
`--stalls` the servo and sim_robot processes are in addition stopped (SIGSTOP) for 60-150 ms every 2 s: the
starvation an outside check saw, made repeatable.

Per condition:
  stream   sim_robot (the JTC stand-in, config/sim_robot.yaml) and servo_node (config/panda_servo.yaml) run for
           `--seconds`; this script is the client: a square of twists (4 sides of 100 mm at 0.1 m/s) and then a
           10 cm pose step out and back, repeated; every published window, refusal, status and joint state is
           recorded.
  demo     `robokin_demo` (the README's demo) runs to its end: exit code and refusals.
Reported:
  refusals             windows sim_robot refused (JTC's rules, e.g. "ends in the past")
  steps                consecutive windows W1, W2 compared where W2 starts (W1 sampled at W2's stamp, as a JTC
                       interpolates it): position steps > 10 urad and velocity steps beyond the acceleration limits
                       over the time between the stamps; also at the time W2 was received (where a JTC switches)
  missing-state halts  entries into JOINT_STATE_MISSING
  square sides         the shortest side the tool travelled, of 100 mm
  pose overshoot       the tool past the pose target, along the step [mm]
  tracking             tool distance between the servo's command at a window's stamp and the measured arm then
  windows/s, gap p99   windows received here per second, and the 99th percentile gap between them
  delivery             receive time here minus the window's stamp [ms]: the delay a controller sees
  tick lateness        the servo's own watchdog (robokin_status): worst lateness in a second, late ticks, overruns
Run: .venv/bin/python bench/busy_cpu.py [--seconds 60] [--stalls] [--no-demo] [--conditions quiet,busy]
     (.venv-kilted/bin/python for Kilted; --servo-param process.nice:=-10 to measure a priority)
     (~2 x (seconds + 90) s; source scripts/ros_env.sh first, or let this script set the same variables)
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
# a domain of its own, apart from the 1-100 that scripts/ros_env.sh gives test runs: a test's servo on the same
# domain would publish into this measurement
os.environ["ROS_DOMAIN_ID"] = str(random.SystemRandom().randint(101, 200))

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TRAJECTORY_TOPIC = "/joint_trajectory_controller/joint_trajectory"
PANDA_ACCELERATION = np.array([15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0])    # config/panda_servo.yaml
POSITION_STEP = 1e-5         # [rad] the outside check's threshold for a step between windows
VELOCITY_SLACK = 1e-6        # [rad/s] numerical slack on the allowed velocity change
SIDE = 0.1                   # [m] square side and pose step
SPEED = 0.1                  # [m/s] twist speed along a side (unitless 0.25 at scale.linear 0.4)
COPY_BYTES = 256 << 20


# ---- the load ---------------------------------------------------------------------------------------
def _busy_loop() -> None:
    x = 0
    while True:
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF


def _copy_loop() -> None:
    a = np.ones(COPY_BYTES // 8)
    b = np.empty_like(a)
    while True:
        np.copyto(b, a)
        np.copyto(a, b)


def start_hogs() -> list[multiprocessing.Process]:
    hogs = []
    for i in range(os.cpu_count() or 1):
        hog = multiprocessing.Process(target=_copy_loop if i % 2 else _busy_loop, daemon=True)
        hog.start()
        hogs.append(hog)
    return hogs


def stop_hogs(hogs: list[multiprocessing.Process]) -> None:
    for hog in hogs:
        hog.kill()
        hog.join()


def _stall_loop(pids: list[int], count) -> None:
    rng = random.Random(7)
    while True:
        time.sleep(1.5 + rng.random())
        pid = rng.choice(pids)
        os.kill(pid, signal.SIGSTOP)
        time.sleep(0.06 + 0.09 * rng.random())
        os.kill(pid, signal.SIGCONT)
        with count.get_lock():
            count.value += 1


class Staller:
    """Stops the given processes for 60-150 ms every ~2 s (each in turn), from a process of its own: a thread here
    would wait for this process's GIL to send SIGCONT, and held a node stopped for a second now and then."""

    def __init__(self, pids: list[int]) -> None:
        self._count = multiprocessing.Value("i", 0)
        self._pids = pids
        self._process = multiprocessing.Process(target=_stall_loop, args=(pids, self._count), daemon=True)
        self._process.start()

    @property
    def stalls(self) -> int:
        return self._count.value

    def close(self) -> None:
        self._process.kill()
        self._process.join()
        for pid in self._pids:            # a stall cut short by the kill must not leave a node stopped
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass


# ---- the client ---------------------------------------------------------------------------------------
@dataclass
class Record:
    windows: list = field(default_factory=list)      # (stamp [s], received [s], times, positions, velocities)
    refusals: list = field(default_factory=list)
    statuses: list = field(default_factory=list)     # (received [s], code, message, watchdog fields)
    states: list = field(default_factory=list)       # (stamp [s], positions)
    raw_windows: list = field(default_factory=list)  # (serialized bytes, middleware receive time [s])
    raw_states: list = field(default_factory=list)

    def decode(self, robot) -> None:
        """Turn the raw messages taken during the run into windows and states (off the clock)."""
        from rclpy.serialization import deserialize_message
        from sensor_msgs.msg import JointState
        from trajectory_msgs.msg import JointTrajectory
        for data, received in self.raw_windows:
            msg = deserialize_message(data, JointTrajectory)
            order = [msg.joint_names.index(name) for name in robot.joint_names]
            times = np.array([p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in msg.points])
            positions = np.array([p.positions for p in msg.points])[:, order]
            velocities = np.array([p.velocities for p in msg.points])[:, order]
            stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
            self.windows.append((stamp, received, times, positions, velocities))
        for data, _ in self.raw_states:
            msg = deserialize_message(data, JointState)
            if set(robot.joint_names) <= set(msg.name):
                q = np.array([msg.position[msg.name.index(name)] for name in robot.joint_names])
                self.states.append((msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9, q))
        self.raw_windows, self.raw_states = [], []


class Client:
    def __init__(self, robot) -> None:
        import rclpy
        from geometry_msgs.msg import PoseStamped, TwistStamped
        from sensor_msgs.msg import JointState
        from std_msgs.msg import String
        from trajectory_msgs.msg import JointTrajectory

        from robokin_interfaces.msg import ServoStatus
        from rclpy.executors import SingleThreadedExecutor
        self.robot, self.record = robot, Record()
        self.node = rclpy.create_node("busy_cpu_client")
        self.clock = self.node.get_clock()
        self.executor = SingleThreadedExecutor()      # the EventsExecutor cannot hand raw messages with their info
        self.executor.add_node(self.node)
        self.twist_type, self.pose_type = TwistStamped, PoseStamped
        # raw, with the middleware's receive stamp: the client must not be what falls behind on a busy CPU
        self.node.create_subscription(JointTrajectory, TRAJECTORY_TOPIC, self._on_window, 1000, raw=True)
        self.node.create_subscription(String, "/sim_robot/rejected", self._on_refusal, 100)
        self.node.create_subscription(ServoStatus, "/servo_node/robokin_status", self._on_status, 100)
        self.node.create_subscription(JointState, "/joint_states", self._on_state, 1000, raw=True)
        self._latest_state = None
        self.twists = self.node.create_publisher(TwistStamped, "/servo_node/delta_twist_cmds", 10)
        self.poses = self.node.create_publisher(PoseStamped, "/servo_node/pose_target_cmds", 10)
        self._index = {name: i for i, name in enumerate(robot.joint_names)}

    def now(self) -> float:
        return self.clock.now().nanoseconds * 1e-9

    def _on_window(self, data, info) -> None:
        self.record.raw_windows.append((data, info["received_timestamp"] * 1e-9))

    def _on_refusal(self, msg) -> None:
        self.record.refusals.append(msg.data)

    def _on_status(self, msg) -> None:
        watchdog = {name: getattr(msg, name) for name in ("worst_tick_lateness", "late_ticks", "overruns",
                                                          "ticks_last_second")
                    if hasattr(msg, name)}
        self.record.statuses.append((self.now(), msg.code, msg.message, watchdog))

    def _on_state(self, data, info) -> None:
        self.record.raw_states.append((data, info["received_timestamp"] * 1e-9))
        self._latest_state = data

    def spin(self, seconds: float, every=None, period: float = 0.01) -> None:
        end, next_call = time.monotonic() + seconds, 0.0
        while time.monotonic() < end:
            if every is not None and time.monotonic() >= next_call:
                every()
                next_call = time.monotonic() + period
            self.executor.spin_once(timeout_sec=0.002)

    def twist(self, v: np.ndarray) -> None:
        msg = self.twist_type()
        msg.header.stamp = self.clock.now().to_msg()
        msg.twist.linear.x, msg.twist.linear.y, msg.twist.linear.z = (float(x) / 0.4 for x in v)   # unitless
        self.twists.publish(msg)

    def pose(self, position: np.ndarray, quaternion_xyzw: np.ndarray) -> None:
        msg = self.pose_type()
        msg.header.stamp = self.clock.now().to_msg()
        msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = (float(x) for x in position)
        (msg.pose.orientation.x, msg.pose.orientation.y, msg.pose.orientation.z,
         msg.pose.orientation.w) = (float(x) for x in quaternion_xyzw)
        self.poses.publish(msg)

    def latest_q(self) -> np.ndarray | None:
        if self._latest_state is None:
            return None
        from rclpy.serialization import deserialize_message
        from sensor_msgs.msg import JointState
        msg = deserialize_message(self._latest_state, JointState)
        return np.array([msg.position[msg.name.index(name)] for name in self.robot.joint_names])

    def tool(self) -> np.ndarray | None:
        q = self.latest_q()
        return None if q is None else self.robot.fk(q).translation.copy()

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()


def drive(client: Client, seconds: float) -> dict:
    """Squares of twists and pose steps until `seconds` have passed; the sides' lengths and pose overshoots."""
    import pinocchio as pin
    sides, overshoots = [], []
    directions = [np.array(d, float) for d in ((1, 0, 0), (0, 1, 0), (-1, 0, 0), (0, -1, 0))]
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for direction in directions:
            start = client.tool()
            client.spin(SIDE / SPEED, every=lambda d=direction: client.twist(d * SPEED))
            client.spin(0.5)
            sides.append(float(np.dot(client.tool() - start, direction)))
        tool = client.robot.fk(client.latest_q())
        quaternion = pin.Quaternion(tool.rotation).coeffs()
        for sign in (1.0, -1.0):
            origin = client.tool()
            target = origin + sign * SIDE * directions[0]
            first = len(client.record.raw_states)
            client.pose(target, quaternion)
            client.spin(2.5)
            overshoots.append((first, len(client.record.raw_states), target, sign))
    return {"sides": sides, "overshoots": overshoots}


# ---- analysis -------------------------------------------------------------------------------------------
def sample(times, positions, velocities, t):
    from robokin_ros.core.servo.window import sample_window
    q, v = np.empty(positions.shape[1]), np.empty(positions.shape[1])
    sample_window(times, positions, velocities, t, q, v)
    return q, v


def window_steps(windows: list, amax: np.ndarray) -> dict:
    """Position and velocity steps between consecutive windows, where the second starts and where it arrived."""
    counts = {"pos_stamp": 0, "vel_stamp": 0, "pos_receipt": 0, "vel_receipt": 0}
    worst = {"pos_stamp": 0.0, "vel_stamp": 0.0, "pos_receipt": 0.0, "vel_receipt": 0.0}
    for (s1, _, t1, p1, v1), (s2, r2, t2, p2, v2) in zip(windows, windows[1:]):
        gap = s2 - s1
        for where, at in (("stamp", 0.0), ("receipt", max(r2 - s2, 0.0))):
            qa, va = sample(t1, p1, v1, gap + at)
            qb, vb = sample(t2, p2, v2, at)
            dpos = float(np.max(np.abs(qb - qa)))
            allowed = amax * max(gap, 0.0) + VELOCITY_SLACK
            dvel = float(np.max(np.abs(vb - va) / allowed))
            counts[f"pos_{where}"] += dpos > POSITION_STEP
            counts[f"vel_{where}"] += dvel > 1.001      # float slack on the limit itself
            worst[f"pos_{where}"] = max(worst[f"pos_{where}"], dpos)
            worst[f"vel_{where}"] = max(worst[f"vel_{where}"], dvel)
    return {"counts": counts, "worst": worst}


def tracking_mm(robot, windows: list, states: list) -> np.ndarray:
    if not states:
        return np.array([np.nan])
    stamps = np.array([s for s, _ in states])
    qs = np.array([q for _, q in states])
    errors = []
    for stamp, _, times, positions, velocities in windows[::10]:
        i = int(np.searchsorted(stamps, stamp))
        if 0 < i < len(stamps):
            w = (stamp - stamps[i - 1]) / max(stamps[i] - stamps[i - 1], 1e-9)
            measured = (1 - w) * qs[i - 1] + w * qs[i]
            commanded, _ = sample(times, positions, velocities, 0.0)
            errors.append(np.linalg.norm(robot.fk(commanded).translation - robot.fk(measured).translation) * 1e3)
    return np.array(errors or [np.nan])


def pose_overshoots(robot, record: Record, steps: list) -> list[float]:
    """The tool past each pose target along its step [m] (0 if it never passed it)."""
    from rclpy.serialization import deserialize_message
    from sensor_msgs.msg import JointState
    out = []
    for first, last, target, sign in steps:
        along = [0.0]
        for data, _ in record.raw_states[first:last]:
            msg = deserialize_message(data, JointState)
            q = np.array([msg.position[msg.name.index(name)] for name in robot.joint_names])
            along.append(sign * float(robot.fk(q).translation[0] - target[0]))
        out.append(max(along))
    return out


def summarize(robot, record: Record, driven: dict, seconds: float, dump: Path | None = None) -> dict:
    driven = dict(driven, overshoots=pose_overshoots(robot, record, driven["overshoots"]))
    record.decode(robot)
    steps = window_steps(record.windows, PANDA_ACCELERATION)
    if dump is not None:
        np.savez(dump, stamps=[w[0] for w in record.windows], received=[w[1] for w in record.windows],
                 times=np.array([w[2] for w in record.windows], dtype=object),
                 positions=np.array([w[3] for w in record.windows], dtype=object),
                 velocities=np.array([w[4] for w in record.windows], dtype=object),
                 status=np.array([(s[0], s[1], s[2]) for s in record.statuses], dtype=object), allow_pickle=True)
    stamps = np.array([w[0] for w in record.windows])
    received = np.array([w[1] for w in record.windows])
    delivery = (received - stamps) * 1e3
    halts = sum(1 for a, b in zip(record.statuses, record.statuses[1:]) if b[1] == 13 and a[1] != 13)
    lateness = [s[3].get("worst_tick_lateness", np.nan) for s in record.statuses]
    tracking = tracking_mm(robot, record.windows, record.states)
    moving = np.array([np.any(w[4][1] != 0.0) for w in record.windows[:-1]], dtype=bool)
    gaps = np.diff(received)[moving] * 1e3 if len(received) > 1 else np.array([])
    ticks = [s[3].get("ticks_last_second", np.nan) for s in record.statuses]
    return {
        "refusals": len(record.refusals),
        "refusal_example": record.refusals[0] if record.refusals else "",
        "steps_pos_stamp": steps["counts"]["pos_stamp"], "worst_pos_stamp_mrad": steps["worst"]["pos_stamp"] * 1e3,
        "steps_vel_stamp": steps["counts"]["vel_stamp"], "worst_vel_stamp": steps["worst"]["vel_stamp"],
        "steps_pos_receipt": steps["counts"]["pos_receipt"],
        "worst_pos_receipt_mrad": steps["worst"]["pos_receipt"] * 1e3,
        "steps_vel_receipt": steps["counts"]["vel_receipt"], "worst_vel_receipt": steps["worst"]["vel_receipt"],
        "missing_state_halts": halts,
        "shortest_side_mm": min(driven["sides"]) * 1e3 if driven["sides"] else np.nan,
        "pose_overshoot_mm": max(driven["overshoots"]) * 1e3 if driven["overshoots"] else np.nan,
        "tracking_p99_mm": float(np.nanpercentile(tracking, 99)), "tracking_max_mm": float(np.nanmax(tracking)),
        "windows_per_s": len(record.windows) / seconds,
        "ticks_per_s_median": float(np.nanmedian(ticks)) if ticks else np.nan,
        "ticks_per_s_min": float(np.nanmin(ticks)) if ticks else np.nan,
        "gap_p99_ms": float(np.percentile(gaps, 99)) if len(gaps) else np.nan,
        "gap_max_ms": float(np.max(gaps)) if len(gaps) else np.nan,
        "delivery_p50_ms": float(np.percentile(delivery, 50)) if len(delivery) else np.nan,
        "delivery_p99_ms": float(np.percentile(delivery, 99)) if len(delivery) else np.nan,
        "delivery_max_ms": float(np.max(delivery)) if len(delivery) else np.nan,
        "tick_lateness_max_ms": float(np.nanmax(lateness) * 1e3) if lateness and not np.all(np.isnan(lateness))
        else np.nan,
    }


# ---- one condition ------------------------------------------------------------------------------------
def node(module: str, params: list[str], log: Path) -> subprocess.Popen:
    argv = [sys.executable, "-m", f"robokin_ros.nodes.{module}", "--ros-args", *params]
    return subprocess.Popen(argv, cwd=REPO, stdout=open(log, "w"), stderr=subprocess.STDOUT)


def stop(process: subprocess.Popen) -> int:
    if process.poll() is None:
        process.send_signal(signal.SIGCONT)
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


def run_stream(robot, seconds: float, stalls: bool, logs: Path, servo_params: list[str],
               process_params: list[str]) -> dict:
    sim = node("sim_robot", ["--params-file", str(REPO / "config/sim_robot.yaml"), "-p", "publish_tf:=false",
                             *process_params], logs / "sim_robot.log")
    servo = node("servo_node", ["--params-file", str(REPO / "config/panda_servo.yaml"), *servo_params,
                                *process_params],
                 logs / "servo_node.log")
    client = Client(robot)
    staller = None
    try:
        deadline = time.monotonic() + 90
        while not (client.record.raw_states and client.record.statuses) and time.monotonic() < deadline:
            client.spin(0.1, every=lambda: client.twist(np.zeros(3)))
        if not client.record.statuses:
            raise RuntimeError(f"servo_node did not come up: see {logs}")
        client.spin(1.0)
        client.record = Record()
        staller = Staller([servo.pid, sim.pid]) if stalls else None
        started = time.monotonic()
        driven = drive(client, seconds)
        publishers = client.node.count_publishers(TRAJECTORY_TOPIC)
        if publishers != 1:
            raise RuntimeError(f"{publishers} publishers on {TRAJECTORY_TOPIC}: another graph shares the domain")
        elapsed = time.monotonic() - started
        result = summarize(robot, client.record, driven, elapsed, logs / "windows.npz")
        result["stalls"] = staller.stalls if staller else 0
    finally:
        if staller is not None:
            staller.close()
        client.close()
        result_codes = stop(servo), stop(sim)
    result["exit_codes"] = result_codes
    return result


def run_demo(logs: Path) -> dict:
    started = time.monotonic()
    # this venv's interpreter (Jazzy's or Kilted's) on this tree's code (run from another checkout, that one's)
    argv = [sys.executable, "-m", "robokin_ros.demo.main", "--out", str(logs / "demo")]
    with open(logs / "demo.log", "w") as log:
        code = subprocess.call(argv, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    text = (logs / "demo.log").read_text()
    return {"demo_exit": code, "demo_refused_lines": text.count("  refused: "),
            "demo_seconds": time.monotonic() - started}


FIGURES = [
    ("refusals", "windows refused by the controller", "0", "{}"),
    ("steps_pos_stamp", "position steps > 10 urad between windows (at the stamp)", "0", "{}"),
    ("worst_pos_stamp_mrad", "  largest [mrad]", "", "{:.4f}"),
    ("steps_vel_stamp", "velocity steps beyond the acceleration limits (at the stamp)", "0", "{}"),
    ("worst_vel_stamp", "  largest, as a share of what the limits allow", "<= 1", "{:.2f}"),
    ("steps_pos_receipt", "position steps > 10 urad where a JTC switches (at receipt)", "", "{}"),
    ("worst_pos_receipt_mrad", "  largest [mrad]", "", "{:.4f}"),
    ("steps_vel_receipt", "velocity steps beyond the limits (at receipt)", "", "{}"),
    ("missing_state_halts", "JOINT_STATE_MISSING halts", "0", "{}"),
    ("shortest_side_mm", "shortest square side [mm of 100]", "", "{:.1f}"),
    ("pose_overshoot_mm", "pose target overshoot [mm]", "0", "{:.3f}"),
    ("tracking_p99_mm", "tracking error p99 [mm]", "<= 2x quiet", "{:.3f}"),
    ("tracking_max_mm", "tracking error max [mm]", "", "{:.3f}"),
    ("windows_per_s", "windows received /s (500 Hz servo)", "", "{:.0f}"),
    ("ticks_per_s_median", "servo ticks /s (watchdog, median of the status messages)", "500", "{:.0f}"),
    ("ticks_per_s_min", "servo ticks /s, lowest", "", "{:.0f}"),
    ("gap_p99_ms", "gap between windows while moving p99 [ms]", "", "{:.2f}"),
    ("gap_max_ms", "gap between windows while moving max [ms]", "", "{:.1f}"),
    ("delivery_p50_ms", "delivery (receipt - stamp) median [ms]", "<= 2x quiet", "{:.2f}"),
    ("delivery_p99_ms", "delivery p99 [ms]", "", "{:.2f}"),
    ("delivery_max_ms", "delivery max [ms]", "", "{:.1f}"),
    ("tick_lateness_max_ms", "servo watchdog: worst tick lateness [ms]", "", "{:.1f}"),
    ("stalls", "SIGSTOP stalls injected", "", "{}"),
    ("demo_exit", "demo exit code", "0", "{}"),
    ("demo_refused_lines", "demo: refusals reported", "0", "{}"),
    ("demo_seconds", "demo duration [s]", "", "{:.0f}"),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--conditions", default="quiet,busy")
    parser.add_argument("--stalls", action="store_true", help="also SIGSTOP the nodes in the busy condition")
    parser.add_argument("--no-demo", action="store_true")
    parser.add_argument("--servo-param", action="append", default=[], help="extra servo_node -p name:=value")
    parser.add_argument("--nice", type=int, default=0, help="process.nice of servo_node and sim_robot (stream)")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    import rclpy

    from robokin_ros.core.robot import RobotModel
    robot = RobotModel.from_source("panda", "", "panda_link0", "panda_hand_tcp")
    servo_params = [x for p in args.servo_param for x in ("-p", p)]
    rclpy.init()
    results = {}
    try:
        for condition in args.conditions.split(","):
            logs = REPO / "out" / "busy_cpu" / condition
            logs.mkdir(parents=True, exist_ok=True)
            hogs = start_hogs() if condition != "quiet" else []
            try:
                time.sleep(2.0 if hogs else 0.0)
                print(f"[{condition}] stream {args.seconds:.0f} s ...", flush=True)
                process_params = ["-p", f"process.nice:={args.nice}"] if args.nice else []
                result = run_stream(robot, args.seconds, args.stalls and condition != "quiet", logs, servo_params,
                                    process_params)
                if not args.no_demo:
                    print(f"[{condition}] demo ...", flush=True)
                    result.update(run_demo(logs))
            finally:
                stop_hogs(hogs)
            results[condition] = result
    finally:
        rclpy.try_shutdown()
    names = list(results)
    print(f"\n{'figure':<62} {'goal':>12} " + " ".join(f"{n:>10}" for n in names))
    for key, label, goal, fmt in FIGURES:
        if any(key in results[n] for n in names):
            cells = [fmt.format(results[n][key]) if key in results[n] else "-" for n in names]
            print(f"{label:<62} {goal:>12} " + " ".join(f"{c:>10}" for c in cells))
    for n in names:
        if results[n].get("refusal_example"):
            print(f"[{n}] first refusal: {results[n]['refusal_example']}")
    print(f"load: {os.cpu_count()} hogs (busy loops and {COPY_BYTES >> 20} MB copy loops) in the busy condition; "
          f"rclpy {_rclpy_version()}; logs in out/busy_cpu/")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))
    return 0


def _rclpy_version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    for name in ("ros-rclpy", "rclpy"):
        try:
            return version(name)
        except PackageNotFoundError:
            continue
    return "?"


if __name__ == "__main__":
    raise SystemExit(main())
