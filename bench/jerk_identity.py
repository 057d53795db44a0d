"""Jerk-limited servo, old tree against this one, bit for bit (issue 27: a cheaper tick, the same windows).

Two records, each made in both trees (`git archive REV robokin_ros`, run in a subprocess) and compared exactly
(`np.array_equal`, NaN equal to NaN; `==` on strings):
- the seeded servo replay of bench/servo_replay.py (twist start, change and reversal, stale stops with their hold,
  pause, pose targets and streams, joint jogs into a limit, the stretched Panda, collision scaling, guiding...) with
  jerk limits on: Franka's published Panda limits (config/panda_servo.yaml) and a tenth of them;
- `JerkWindows.build` and `JerkWindows.stopping` alone from seeded random states (positions near and beyond the
  limit margins, velocities and accelerations up to and past the limits, wanted velocities past the caps, carried
  or not, short cruises), each window's times, positions, velocities, state at dt, braking count, shaping flag and
  peak jerk share.

Run: .venv/bin/python bench/jerk_identity.py [--rev REV] [--states N]
Exit status 1 on the first difference, which it names.
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

import servo_replay

ROOT = Path(__file__).resolve().parents[1]
# Franka's published Panda joint jerk limits [rad/s^3] (config/panda_servo.yaml) and the share of them replayed
PANDA_JERK = (7500.0, 3750.0, 5000.0, 6250.0, 7500.0, 10000.0, 10000.0)
SHARES = (1.0, 0.1)
SEED = 27


def replay_with_jerk(share: float) -> dict[str, list[tuple]]:
    """servo_replay's scenarios, every servo configured with the Panda's jerk limits times `share`."""
    plain = servo_replay.Replay

    class JerkReplay(plain):
        def __init__(self, name, robot, params, seed, lag_ticks=1):
            jerk = {"max_joint_jerk": tuple(j * share for j in PANDA_JERK)}
            super().__init__(name, robot, {**params, **jerk}, seed, lag_ticks)

    servo_replay.Replay = JerkReplay
    try:
        return servo_replay.replay()
    finally:
        servo_replay.Replay = plain


def kernel_records(states: int) -> list[tuple]:
    """`JerkWindows.build` / `stopping` from seeded random states (see the module docstring)."""
    from robokin_ros.core.robot import RobotModel
    from robokin_ros.core.schema import config_from_mapping
    from robokin_ros.core.servo.config import ServoConfig
    from robokin_ros.core.servo.jerk_window import JerkWindows
    from robokin_ros.core.servo.window import WindowBuilder
    robot = RobotModel.from_name("panda")
    acceleration = np.array(servo_replay.DEMO_ACCELERATION)
    config = config_from_mapping(ServoConfig, {"publish_period": servo_replay.DT,
                                               "max_joint_acceleration": servo_replay.DEMO_ACCELERATION})
    windows = WindowBuilder.for_config(robot, config, acceleration)
    rng = np.random.default_rng(SEED)
    lower, upper = robot.limits.lower, robot.limits.upper
    vmax = robot.limits.velocity
    records = []
    for share in SHARES:
        jerk = JerkWindows(servo_replay.DT, float(windows.grid[-1]), 0.1, windows.limits, np.array(PANDA_JERK) * share)
        for _ in range(states):
            q = rng.uniform(lower - 0.02, upper + 0.02)
            near = rng.random(robot.n) < 0.2          # some joints right at a limit
            q[near] = np.where(rng.random(near.sum()) < 0.5, lower[near], upper[near])
            v = rng.uniform(-1.1, 1.1, robot.n) * vmax * rng.choice([0.0, 0.01, 0.3, 1.0], robot.n)
            a = rng.uniform(-1.0, 1.0, robot.n) * acceleration * rng.choice([0.0, 0.1, 1.0], robot.n)
            wanted = rng.uniform(-1.2, 1.2, robot.n) * vmax * rng.choice([0.0, 0.05, 0.5, 1.0], robot.n)
            carry = bool(rng.random() < 0.8)
            cruise = None if rng.random() < 0.7 else float(rng.uniform(0.002, 0.1))
            if rng.random() < 0.15:
                window, state = jerk.stopping(q, v, a)
            else:
                window, state = jerk.build(q, v, a, wanted, carry, cruise)
            records.append((window.times.copy(), window.positions.copy(), window.velocities.copy(), state.copy(),
                            jerk.braking, jerk.shaping, jerk.peak_share))
    return records


def record(states: int) -> dict:
    return {**{f"replay, jerk x{share}": replay_with_jerk(share) for share in SHARES},
            "kernel": {"kernel": kernel_records(states)}}


def first_difference(before: dict, now: dict) -> str | None:
    for name in ("replay, jerk x1.0", "replay, jerk x0.1"):
        difference = servo_replay.first_difference(before[name], now[name])
        if difference:
            return f"{name}: {difference}"
    a, b = before["kernel"]["kernel"], now["kernel"]["kernel"]
    if len(a) != len(b):
        return f"kernel: {len(a)} windows before, {len(b)} now"
    for i, (x, y) in enumerate(zip(a, b)):
        for field, u, v in zip(("times", "positions", "velocities", "state", "braking", "shaping", "peak share"), x, y):
            if not servo_replay._same(u, v):
                return f"kernel window {i}, {field}: {u!r} vs {v!r}"
    return None


def record_in(tree: Path, out: Path, states: int) -> None:
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--emit", str(out), "--states", str(states)],
                   cwd=tree, env=tree_env(tree), check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="HEAD", help="git revision to compare against")
    parser.add_argument("--states", type=int, default=3000, help="random states per jerk setting (kernel record)")
    parser.add_argument("--emit", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.emit:
        with open(args.emit, "wb") as f:
            pickle.dump(record(args.states), f)
        return 0
    with tempfile.TemporaryDirectory() as folder, archived_tree(args.rev) as old_tree:
        record_in(old_tree, Path(folder) / "before.pkl", args.states)
        record_in(ROOT, Path(folder) / "now.pkl", args.states)
        before = pickle.loads((Path(folder) / "before.pkl").read_bytes())
        now = pickle.loads((Path(folder) / "now.pkl").read_bytes())
    for name in now:
        if name == "kernel":
            print(f"kernel: {len(now[name]['kernel'])} windows")
            continue
        ticks = sum(r[0] == "tick" for records in now[name].values() for r in records)
        statuses = sorted({r[7] for records in now[name].values() for r in records if r[0] == "tick"})
        print(f"{name}: {len(now[name])} scenarios, {ticks} ticks; statuses {', '.join(statuses)}")
    difference = first_difference(before, now)
    if difference:
        print(f"DIFFERENT (before = {args.rev}): {difference}")
        return 1
    print(f"identical to {args.rev}: every window, state, status and message bit for bit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
