"""Seeded servo replay: the core `Servo` (no ROS) driven through a scripted sequence, old tree against this one.

Every input of the script is fixed or drawn from a seeded generator that never looks at the servo's outputs, and
time is an argument of the core (`step(now)`), so the same tree gives the same record every run. The script covers
twists (base, tool, an intermediate model frame and a TF frame, about the tool and spatial), joint jogs (velocities
and displacements, into a joint limit), pose targets (fixed, in the tool frame, a stream chattering +-10 mm, a
moving stream that stops, a stream stamped on the ROS clock with jitter), hand guiding (push, saturation, a wrench
gap that pauses and one that ends it), pause and resume, stale commands with their hold messages, a joint-state
outage, a diverged measurement, the stretched (singular) Panda and a wrist joint limit at the demo's settings,
collision scaling with a scene file and runtime scene changes, and speed and separation monitoring, at 500 Hz with
seeded late ticks and stalls. Each record holds every output of a tick (the window's times, positions and
velocities, the commanded state, status, message, locked joints, numbers, publish) or the text of a refused input.

Run: .venv/bin/python bench/servo_replay.py [--rev REV]
compares this tree with `git archive REV robokin_ros` (run in a subprocess), exactly: `np.array_equal` on arrays
(NaN equal to NaN), `==` on strings. Exit status 1 on the first difference, which it names.
"""
from __future__ import annotations

import argparse
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

from other_tree import archived_tree, tree_env

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# the commit issue 25's servo step started from
DEFAULT_REV = "5d782a03d65a00c0a080de04b22af3b7a5b594ab"
DT = 0.002
SEED = 25
# config/panda_servo.yaml's acceleration limits (the demo's)
DEMO_ACCELERATION = (15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0)


class Replay:
    """One servo with a seeded, imperfect clock and arm; every tick's output and every refused input recorded."""

    def __init__(self, name: str, robot, params: dict, seed: int, lag_ticks: int = 1) -> None:
        from robokin_ros.core.schema import config_from_mapping
        from robokin_ros.core.servo.config import ServoConfig
        from robokin_ros.core.servo.servo import Servo
        from robokin_ros.core.servo.types import JointMeasurement
        self._config = lambda values: config_from_mapping(ServoConfig, {"publish_period": DT, **values})
        self._measurement = JointMeasurement
        self.name, self.robot, self.params = name, robot, dict(params)
        self.servo = Servo(robot, self._config(self.params))
        self.rng = np.random.default_rng(seed)
        self.now = 0.0
        self.lag = lag_ticks
        self.commanded = [robot.home()]          # commanded positions, newest last (the arm follows with a lag)
        self.measuring = True
        self.offset = np.zeros(robot.n)          # added to the measurement (a diverged arm)
        self.records: list[tuple] = []
        self.servo.set_measurement(JointMeasurement(robot.home(), 0.0))

    # ---- clock and arm ----------------------------------------------------------------------------
    def advance(self) -> float:
        """The next tick's time: mostly on time, sometimes early or late, now and then a stall."""
        draw = self.rng.random()
        if draw < 0.02:
            step = DT * self.rng.integers(3, 30)         # a stall of a few to tens of periods
        elif draw < 0.2:
            step = DT * self.rng.uniform(0.5, 1.6)
        else:
            step = DT
        self.now += step
        return self.now

    def tick(self, before=None) -> None:
        """Advance the clock, give `before(now)`'s inputs, step, record, then feed the arm's measurement."""
        now = self.advance()
        if before is not None:
            self.guard(before, now)
        self.record(self.servo.step(now), now)
        noise = self.rng.normal(0.0, 2e-6, self.robot.n)
        if self.measuring:
            q = self.commanded[max(0, len(self.commanded) - 1 - self.lag)] + noise + self.offset
            self.servo.set_measurement(self._measurement(q, now - self.rng.uniform(0.0, 0.003)))

    def ticks(self, seconds: float, before=None) -> None:
        end = self.now + seconds
        while self.now < end:
            self.tick(before)

    def guard(self, call, *args) -> None:
        """Call an input; a refused one is recorded by its error type and text."""
        try:
            result = call(*args)
        except Exception as err:  # noqa: BLE001: the refusal itself is what is recorded
            self.records.append(("refused", type(err).__name__, str(err)))
            return
        if isinstance(result, str):
            self.records.append(("answer", result))

    def record(self, out, now: float) -> None:
        w = out.window
        self.commanded.append(np.array(out.positions, dtype=float))
        del self.commanded[:-5]
        self.records.append(("tick", now, w.times.copy(), w.positions.copy(), w.velocities.copy(),
                             np.array(out.positions, dtype=float), np.array(out.velocities, dtype=float),
                             out.status.name, int(out.status), out.message, tuple(out.locked_joints),
                             np.array([out.sigma_min, out.condition_number, out.velocity_scale]), bool(out.publish),
                             self.servo.paused, self.servo.guiding, bool(self.servo.command_is_fresh(now))))

    def reconfigure(self, **changes) -> None:
        self.params.update(changes)
        self.guard(self.servo.update_config, self._config(self.params))


# ---- the script ----------------------------------------------------------------------------------------
def message_stamp(kind, stamp_ns: int | None):
    """A message's header stamp as the tree's `kind` carries it: int ns (`stamp: int`, issue 25), or the float
    seconds sec + nanosec * 1e-9 that the older trees' conversions made of it; None is unstamped."""
    if kind.__dataclass_fields__["stamp"].type in ("int", int):
        return 0 if stamp_ns is None else stamp_ns
    if stamp_ns is None:
        return 0.0
    sec, nanosec = divmod(stamp_ns, 1_000_000_000)
    return sec + 1e-9 * nanosec


def twist(replay: Replay, linear, angular, frame: str = "", base_T_frame=None):
    from robokin_ros.core.servo.types import TwistCommand

    def give(now):
        replay.servo.set_command(TwistCommand(np.array(linear, float), np.array(angular, float), frame, now),
                                 base_T_frame)
    return give


def twists(robot) -> list[tuple]:
    import pinocchio as pin
    r = Replay("twist", robot, {}, SEED)
    r.ticks(0.6, twist(r, (0.5, 0.2, -0.3), (0.1, 0.0, 0.2)))
    r.ticks(0.6, twist(r, (0.0, 0.3, 0.3), (0.0, 0.0, 0.5), robot.tip_frame))
    r.reconfigure(apply_twist_about_tool=False)
    r.ticks(0.4, twist(r, (0.2, 0.0, 0.0), (0.0, 0.3, 0.0), "panda_link3"))
    tf_frame = pin.SE3(pin.rpy.rpyToMatrix(0.3, -0.2, 1.0), np.array([0.4, -0.1, 0.5]))
    r.ticks(0.4, twist(r, (0.1, 0.2, 0.0), (0.2, 0.0, 0.0), "camera", tf_frame))
    r.reconfigure(apply_twist_about_tool=True, **{"scale.linear": 0.2, "command_in_type": "speed_units"})
    r.ticks(0.3, twist(r, (0.05, -0.05, 0.02), (0.0, 0.0, 0.3), robot.tip_frame))
    r.guard(twist(r, (np.nan, 0.0, 0.0), (0.0, 0.0, 0.0)), r.now)
    r.guard(twist(r, (0.1, 0.0, 0.0), (0.0, 0.0, 0.0), "no_such_frame"), r.now)
    r.guard(twist(r, (20.0, 0.0, 0.0), (0.0, 0.0, 0.0)), r.now)
    r.ticks(0.5)                                                   # stale: ramp down, hold messages, silence
    r.reconfigure(command_in_type="unitless", **{"scale.linear": 0.4})
    r.ticks(0.3, twist(r, (0.0, -0.4, 0.2), (0.0, 0.0, 0.0)))
    r.servo.pause()                                                # mid-motion: ramp to rest, then nothing
    r.ticks(0.3, twist(r, (0.0, -0.4, 0.2), (0.0, 0.0, 0.0)))
    r.guard(r.servo.resume)
    r.ticks(0.3, twist(r, (0.3, 0.0, 0.0), (0.0, 0.0, 0.0)))
    r.measuring = False                                            # joint-state outage while commanded
    r.ticks(0.8, twist(r, (0.3, 0.0, 0.0), (0.0, 0.0, 0.0)))
    r.measuring = True
    r.ticks(0.3, twist(r, (0.0, 0.0, 0.3), (0.0, 0.0, 0.0)))
    r.offset = np.full(robot.n, 0.08)                              # the arm held elsewhere: re-anchor
    r.ticks(0.4, twist(r, (0.0, 0.0, -0.3), (0.0, 0.0, 0.0)))
    r.offset = np.zeros(robot.n)
    r.reconfigure(num_outgoing_halt_msgs_to_publish=0, override_velocity_scaling_factor=0.5)
    r.ticks(0.3, twist(r, (0.0, 0.3, 0.0), (0.0, 0.0, 0.0)))
    r.ticks(0.4)
    return r.records


def joint_jogs(robot) -> list[tuple]:
    from robokin_ros.core.servo.joint_jog import JointJogCommand

    def jog(names, velocities=(), displacements=(), duration=0.0):
        def give(now):
            r.servo.set_joint_command(JointJogCommand(tuple(names), tuple(velocities), tuple(displacements),
                                                      duration, now))
        return give
    r = Replay("joint jog", robot, {}, SEED + 1)
    r.ticks(2.5, jog(("panda_joint4", "panda_joint2"), (1.0, 0.6)))         # joint 4 into its upper limit
    r.ticks(0.5, jog(("panda_joint4",), (-1.0,)))                           # back out
    r.ticks(0.4, jog(("panda_joint1", "panda_joint7"), displacements=(0.004, -0.006), duration=0.01))
    r.guard(jog(("panda_joint9",), (1.0,)), r.now)
    r.guard(jog(("panda_joint1", "panda_joint1"), (1.0, 1.0)), r.now)
    r.guard(jog(("panda_joint1",), displacements=(0.1,), duration=0.0), r.now)
    r.reconfigure(halt_all_joints_in_joint_mode=False, command_in_type="speed_units", **{"scale.joint": 0.3})
    r.ticks(3.0, jog(("panda_joint6", "panda_joint3"), (-1.5, 0.4)))        # joint 6 into its lower limit alone
    r.ticks(0.3, twist(r, (0.02, 0.0, 0.0), (0.0, 0.0, 0.0)))               # a twist takes over
    r.ticks(0.3)
    return r.records


def pose_targets(robot) -> list[tuple]:
    import pinocchio as pin
    from robokin_ros.core.servo.pose_tracking import PoseTarget

    def target(pose, frame="", stamp=None):
        x, y, z, w = pin.Quaternion(pose.rotation).coeffs()
        carried = message_stamp(PoseTarget, stamp)

        def give(now):
            r.servo.set_pose_target(PoseTarget(pose.translation.copy(), np.array([x, y, z, w]), frame, carried, now))
        return give
    r = Replay("pose", robot, {}, SEED + 2)
    home = robot.fk(robot.home())
    r.tick()
    r.guard(target(pin.SE3(pin.rpy.rpyToMatrix(0.2, 0.0, -0.1), home.translation + [0.05, -0.03, 0.04])), r.now)
    r.ticks(1.5)                                                   # one message is enough: reached, settled
    r.guard(target(pin.SE3(pin.rpy.rpyToMatrix(0.0, 0.0, 0.3), np.array([0.0, 0.02, 0.03])), robot.tip_frame),
            r.now)
    r.ticks(1.0)
    base = robot.fk(r.commanded[-1])
    for k in range(100):                                           # a stream chattering +-10 mm every ~10 ms
        for _ in range(r.rng.integers(4, 7)):
            r.tick()
        side = 0.01 if k % 2 else -0.01
        stamp = round(r.now * 1e9)                                  # [ns] the sender stamps its send time
        r.guard(target(pin.SE3(base.rotation, base.translation + [0.0, side, 0.0]), stamp=stamp), r.now)
    r.ticks(0.5)
    start, t0 = robot.fk(r.commanded[-1]), r.now
    for i in range(150):                                           # a target moving at 5 cm/s, then stopping
        r.tick()
        if i % 5 == 0:
            r.guard(target(pin.SE3(start.rotation, start.translation + [0.0, 0.0, 0.05 * (r.now - t0)]),
                           stamp=round(r.now * 1e9)), r.now)
    r.ticks(0.8)
    r.guard(lambda now: r.servo.set_pose_target(PoseTarget(np.zeros(3), np.zeros(4), "", 0.0, now)), r.now)
    r.guard(target(pin.SE3(start.rotation, start.translation + [3.0, 0.0, 0.0]), stamp=round((r.now + 0.001) * 1e9)),
            r.now)
    r.ticks(0.3, twist(r, (0.0, 0.0, 0.2), (0.0, 0.0, 0.0)))      # a twist replaces the target
    r.ticks(0.3)
    return r.records


def pose_stream(robot) -> list[tuple]:
    """A target moving on a 3 cm circle at 3 cm/s, stamped by its sender on the ROS clock (~1.76e9 s, where a
    float of seconds resolves only ~240 ns) every 8-12 ms, sent up to 3 ms before the tick that takes it: the
    feed-forward is timed by the stamps, so this checks their arithmetic bit for bit."""
    import pinocchio as pin
    from robokin_ros.core.servo.pose_tracking import PoseTarget
    r = Replay("pose stream", robot, {}, SEED + 7)
    start = robot.fk(robot.home())
    ros_clock_ns = 1_764_000_000_123_456_789 - round(r.now * 1e9)          # the ROS clock at receive time 0
    r.tick()
    for _ in range(250):
        for _ in range(r.rng.integers(4, 7)):
            r.tick()
        angle = r.now                                                # [rad] at 1 rad/s
        offset = 0.03 * np.array([np.cos(angle) - 1.0, np.sin(angle), 0.0])
        x, y, z, w = pin.Quaternion(start.rotation).coeffs()
        stamp = message_stamp(PoseTarget, ros_clock_ns + round(r.now * 1e9) - int(r.rng.integers(0, 3_000_000)))
        r.guard(lambda now, p=start.translation + offset, s=stamp: r.servo.set_pose_target(
            PoseTarget(p, np.array([x, y, z, w]), "", s, now)), r.now)
    r.ticks(0.5)
    return r.records


def guiding(robot) -> list[tuple]:
    r = Replay("guiding", robot, {}, SEED + 3)

    def push(force, torque=(0.0, 0.0, 0.0), frame="panda_link0"):
        def give(now):
            wrench = np.concatenate((force, torque)) + r.rng.normal(0.0, 0.05, 6)
            r.servo.set_wrench(wrench, frame, now)
        return give
    r.guard(r.servo.start_guiding, r.now)                          # no wrench yet: refused
    r.ticks(0.1, push((0.5, 0.0, 0.0)))
    r.guard(r.servo.start_guiding, r.now)
    r.ticks(0.8, push((12.0, -4.0, 3.0), (0.0, 0.5, 0.0)))
    r.ticks(0.15)                                                  # a gap: paused, coming to rest
    r.ticks(0.5, push((-8.0, 0.0, 6.0)))                           # resumed by fresh wrenches
    r.ticks(0.4, push((200.0, 0.0, 0.0), (0.0, 0.0, 10.0), robot.tip_frame))    # saturated, in the tool's axes
    r.guard(push((1e5, 0.0, 0.0)), r.now)                          # not physical: refused
    r.servo.stop_guiding()
    r.ticks(0.4, push((10.0, 0.0, 0.0)))
    r.guard(r.servo.start_guiding, r.now)
    r.ticks(0.3, push((0.0, 10.0, 0.0)))
    r.ticks(1.3)                                                   # longer than resume_timeout: guiding ends
    r.ticks(0.2, push((0.0, 10.0, 0.0)))
    r.servo.pause()
    r.guard(r.servo.start_guiding, r.now)                          # paused: refused
    r.ticks(0.1)
    return r.records


def stretch(robot, thresholds: bool) -> list[tuple]:
    """The demo's push into the stretched arm and back, then the wrist into its limit (config/panda_servo.yaml)."""
    params = {"max_joint_acceleration": DEMO_ACCELERATION, "use_condition_number_thresholds": thresholds}
    r = Replay("stretch" + (" thresholds" if thresholds else ""), robot, params, SEED + 4 + thresholds, lag_ticks=0)
    v, w = 0.05 / 0.4, 0.6 / 0.8
    for linear, angular, frame, seconds in (((0, v, 0), (0, 0, 0), "", 1.0), ((0, 0, v), (0, 0, 0), "", 1.0),
                                            ((0, 0, 0), (0, 0, w), robot.tip_frame, 1.0),
                                            ((2 * v, 0, 0.5 * v), (0, 0, 0), "", 7.0),
                                            ((-2 * v, 0, -0.5 * v), (0, 0, 0), "", 2.0),
                                            ((0, 0, 0), (0, 0, 1.0), robot.tip_frame, 4.0),
                                            ((0, -v, 0), (0, 0, 0), "", 1.0)):
        r.ticks(seconds, twist(r, linear, angular, frame))
    r.ticks(0.5)
    return r.records


def collision(robot) -> list[tuple]:
    import pinocchio as pin
    from robokin_ros.core.collision.scene_change import SceneChange, SceneOperation
    tool = robot.fk(robot.home()).translation
    with tempfile.TemporaryDirectory() as folder:
        scene = Path(folder) / "scene.yaml"
        scene.write_text("objects:\n  - id: block\n    shape: box\n    dimensions: [0.2, 0.2, 0.04]\n"
                         f"    position: [{tool[0] + 0.05}, {tool[1]}, 0.15]\n")
        r = Replay("collision", robot, {"check_collisions": True, "scene_objects_file": str(scene),
                                        "separation.enabled": True, "command_in_type": "speed_units"}, SEED + 6)

    def toward(linear, distance=None):
        def give(now):
            twist(r, linear, (0.0, 0.0, 0.0))(now)
            if distance is not None:
                r.servo.set_separation_distance(distance, now)
        return give
    r.ticks(0.5, toward((0.0, 0.0, -0.1)))                         # no separation reading yet: slowest speed
    r.ticks(2.5, toward((0.0, 0.0, -0.2), 1.5))                    # down to the block: decelerate, halt
    r.ticks(0.5, toward((0.0, 0.0, 0.1), 0.6))                     # backing out, separation-limited
    r.ticks(0.3, toward((0.0, 0.1, 0.0), 0.2))                     # protective stop
    r.guard(r.servo.set_separation_distance, float("nan"), r.now)
    r.guard(r.servo.set_separation_distance, -1.0, r.now)
    r.ticks(0.5, toward((0.0, 0.1, 0.0)))                          # the reading goes stale
    sphere = SceneChange(SceneOperation.ADD, "ball", "", tool + [0.0, 0.15, 0.0], np.array([0.0, 0.0, 0.0, 1.0]),
                         2, (0.05,))
    r.guard(r.servo.update_scene, sphere)
    r.ticks(1.0, toward((0.0, 0.1, 0.0), 1.2))
    moved = SceneChange(SceneOperation.MOVE, "ball", robot.tip_frame, np.array([0.0, 0.0, 0.3]),
                        np.array([0.0, 0.0, 0.0, 1.0]))
    r.guard(r.servo.update_scene, moved)
    r.guard(r.servo.update_scene, moved, pin.SE3(np.eye(3), np.array([0.3, 0.3, 0.3])))
    r.ticks(0.6, toward((0.0, -0.1, 0.05), 1.2))
    r.guard(r.servo.update_scene, SceneChange(SceneOperation.REMOVE, "ball", "", np.zeros(3), np.zeros(4)))
    r.guard(r.servo.update_scene, SceneChange(SceneOperation.REMOVE, "nothing", "", np.zeros(3), np.zeros(4)))
    r.ticks(0.4, toward((0.0, 0.1, 0.0), 1.2))
    r.ticks(0.4)
    return r.records


def replay() -> dict[str, list[tuple]]:
    """Every scenario's records, with `robokin_ros` as imported (this tree, or the one on PYTHONPATH)."""
    from robokin_ros.core.robot import RobotModel
    panda = RobotModel.from_name("panda")
    return {"twist": twists(panda), "joint jog": joint_jogs(panda), "pose stream": pose_stream(panda),
            "pose": pose_targets(panda),
            "guiding": guiding(panda), "stretch": stretch(panda, False), "stretch thresholds": stretch(panda, True),
            "collision": collision(panda)}


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and \
            np.array_equal(a, b, equal_nan=True)
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (a != a and b != b)
    return type(a) is type(b) and a == b


FIELDS = ("kind", "now", "window times", "window positions", "window velocities", "positions", "velocities",
          "status", "status code", "message", "locked joints", "sigma_min, condition number, velocity scale",
          "publish", "paused", "guiding", "command fresh")


def first_difference(before: dict, now: dict) -> str | None:
    """Where two replays first differ, or None when they are identical."""
    if list(before) != list(now):
        return f"scenarios differ: {list(before)} vs {list(now)}"
    for name in before:
        a, b = before[name], now[name]
        for i, (x, y) in enumerate(zip(a, b)):
            if len(x) != len(y) or x[0] != y[0]:
                return f"{name} record {i}: {x[:3]} vs {y[:3]}"
            for field, u, v in zip(FIELDS if x[0] == "tick" else ("kind", "type", "text"), x, y):
                if not _same(u, v):
                    return f"{name} record {i} ({x[0]}), {field}: {u!r} vs {v!r}"
        if len(a) != len(b):
            return f"{name}: {len(a)} records before, {len(b)} now"
    return None


def replay_in(tree: Path, out: Path) -> None:
    """Run the replay with `robokin_ros` imported from `tree` in a subprocess, pickled into `out`."""
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--emit", str(out)], cwd=tree, env=tree_env(tree),
                   check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default=DEFAULT_REV, help="git revision to compare against")
    parser.add_argument("--emit", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.emit:
        with open(args.emit, "wb") as f:
            pickle.dump(replay(), f)
        return 0
    with tempfile.TemporaryDirectory() as folder, archived_tree(args.rev) as old_tree:
        replay_in(old_tree, Path(folder) / "before.pkl")
        replay_in(ROOT, Path(folder) / "now.pkl")
        before = pickle.loads((Path(folder) / "before.pkl").read_bytes())
        now = pickle.loads((Path(folder) / "now.pkl").read_bytes())
    ticks = sum(r[0] == "tick" for records in now.values() for r in records)
    refused = sum(r[0] == "refused" for records in now.values() for r in records)
    print(f"servo replay: {len(now)} scenarios, {ticks} ticks, {refused} refused inputs; before = {args.rev}")
    for name, records in now.items():
        statuses = sorted({r[7] for r in records if r[0] == "tick"})
        print(f"  {name}: {len(records)} records; statuses {', '.join(statuses)}")
    difference = first_difference(before, now)
    if difference:
        print(f"DIFFERENT: {difference}")
        return 1
    print("identical: every window, state, status and message bit for bit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
