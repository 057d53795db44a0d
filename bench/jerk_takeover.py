"""Jerk-limited servo windows played as a JTC takes them over when they *arrive*, not at their stamps (issue 27).

servo_node stamps each window with its tick's time; a JointTrajectoryController takes a window over when it
arrives, `delay` later, and jumps from where the old window had the arm at that moment to where the new window has
it `delay` after its stamp. Both windows agree at the old window's dt; beyond it they agree only as far as the old
window's carried motion predicted the new one. The ideal delivery (every window at its stamp: bench/jerk_play.py's
`stitched_play`) hides any disagreement; this bench measures it.

Runs the demo's twist script (robokin_ros/demo/script.py, config/panda_servo.yaml, Franka's joint jerk limits), a
twist start / change / reversal / stale stop, and joint jogs started, changed, reversed and left to go stale,
through the core Servo on an ideal arm (bench/jerk_servo.py), and the window builder alone toward wanted velocities
that hold (`held_target_windows`), then plays the windows under delivery delays:
- `ideal`: every window at its stamp;
- `const 0.25` / `const 0.5`: every window a quarter / half period late;
- `uniform`: each window late by a seeded uniform share of 0 to 0.5 period;
- `bursts`: as `uniform`, and one window in ten late by 1 to 3 periods (a window that arrives after a later one is
  superseded and never played: a controller takes the newest).
Figures: peak |jerk| / limit per case (worst joint), over the whole run and away from the script's command changes
(a window built for a new command cannot agree with one built before it; while the command holds, every window
can), by second finite differences of the played velocity at 1 kHz,
the worst over the controller's update phases PHASES against the servo's ticks (with the two clocks in step, a
delay under one controller period is never sampled: the update before the arrival is at the stamp, where the two
windows agree).

    PYTHONPATH=. .venv/bin/python bench/jerk_takeover.py [--seed 1] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from jerk_play import PERIOD, Played, controller_times, peaks, spline_state  # noqa: E402
from jerk_servo import run_script, script_phases  # noqa: E402
from stretch_recovery import demo_config  # noqa: E402

from robokin_ros.core.robot import RobotModel  # noqa: E402
from robokin_ros.core.servo.config import ServoConfig  # noqa: E402
from robokin_ros.core.servo.joint_jog import JointJogCommand  # noqa: E402
from robokin_ros.core.servo.servo import Servo  # noqa: E402
from robokin_ros.core.servo.status import ServoStatus  # noqa: E402
from robokin_ros.core.servo.types import JointMeasurement  # noqa: E402
from robokin_ros.demo.script import SCALE_LINEAR, SILENCE, Phase  # noqa: E402

PANDA_JERK = np.array([7500.0, 3750.0, 5000.0, 6250.0, 7500.0, 10000.0, 10000.0])      # [rad/s^3] Franka
PANDA_VMAX = np.array([2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61])                    # [rad/s]
LOWER = np.array([-2.8973, -1.7628, -2.8973, -3.0718, -2.8973, -0.0175, -2.8973])      # Panda [rad]
UPPER = np.array([2.8973, 1.7628, 2.8973, -0.0698, 2.8973, 3.7525, 2.8973])
PHASES = (0.0, 0.25e-3, 0.5e-3, 0.75e-3)       # [s] the controller's updates after the servo's ticks
CHANGE_SETTLE = 0.01     # [s] after a command change: the late windows that still carry the old command are played
CASES = ("ideal", "const 0.25", "const 0.5", "uniform", "bursts")


def delays(case: str, count: int, dt: float, seed: int) -> np.ndarray:
    """(count,) [s] each window's delivery delay in one of CASES."""
    rng = np.random.default_rng(seed)
    if case == "ideal":
        return np.zeros(count)
    if case.startswith("const"):
        return np.full(count, float(case.split()[1]) * dt)
    out = rng.uniform(0.0, 0.5 * dt, count)
    if case == "bursts":
        late = rng.random(count) < 0.1
        out[late] = rng.uniform(1.0, 3.0, int(late.sum())) * dt
    return out


def taken(arrivals: np.ndarray) -> np.ndarray:
    """Indices of the windows a controller plays: those no later window arrives before (or with)."""
    later_first = np.minimum.accumulate(arrivals[::-1])[::-1]           # earliest arrival from i on
    keep = np.ones(len(arrivals), bool)
    keep[:-1] = arrivals[:-1] < later_first[1:]
    return np.flatnonzero(keep)


def arrival_play(stamps: Sequence[float], arrivals: Sequence[float], windows: Sequence, end: float,
                 phase: float = 0.0) -> Played:
    """The windows played at the controller's 1 kHz, its updates `phase` [s] after the servo's ticks (their
    clocks are not in step), each window from its arrival (at its stamp's time into it) until the next played
    window arrives; the arm rests at the first window's start before it arrives."""
    stamps, arrivals = np.asarray(stamps, float), np.asarray(arrivals, float)
    keep = taken(arrivals)
    stamps, arrivals, windows = stamps[keep], arrivals[keep], [windows[i] for i in keep]
    t = controller_times(end - stamps[0] + 2 * PERIOD, float(stamps[0]) - 2 * PERIOD + phase)
    owner = np.searchsorted(arrivals, t, side="right") - 1
    n = windows[0].positions.shape[1]
    q, v = np.empty((len(t), n)), np.empty((len(t), n))
    q[owner < 0], v[owner < 0] = windows[0].positions[0], 0.0
    starts = np.flatnonzero(np.r_[True, np.diff(owner) > 0])
    for a, b in zip(starts, np.r_[starts[1:], len(t)]):
        if owner[a] < 0:
            continue
        w = windows[owner[a]]
        q[a:b], v[a:b] = spline_state(w.times, w.positions, w.velocities, None, t[a:b] - stamps[owner[a]])
    return Played(t, q, v)


def start_change_reversal() -> list:
    """A 0.2 m/s base-frame twist started from rest, turned by 90 degrees, reversed, then silence (the
    stale-command stop), in the demo's unitless commands."""
    v = 0.2 / SCALE_LINEAR
    zero = (0.0, 0.0, 0.0)
    return [Phase("start +x", 0.4, (v, 0.0, 0.0), zero), Phase("change +y", 0.4, (0.0, v, 0.0), zero),
            Phase("reverse -y", 0.4, (0.0, -v, 0.0), zero), Phase(SILENCE, 0.3, zero, zero)]


JOG_PHASES = ((0.4, {"panda_joint4": 1.0}), (0.4, {"panda_joint2": 0.5, "panda_joint4": 1.0}),
              (0.4, {"panda_joint2": -0.5, "panda_joint4": -1.0}), (0.3, {}))


def run_jog(robot: RobotModel, config: ServoConfig, phases=JOG_PHASES) -> tuple[np.ndarray, list, list]:
    """Joint jogs (a command the IK passes on unchanged, tick after tick) through a core Servo on an ideal arm:
    [(duration [s], {joint: velocity [rad/s]})], {} = silence (the stale-command stop). Returns the published
    windows' stamps, the windows and [the time the stale-command stop starts] (empty if none)."""
    servo, dt, now = Servo(robot, config), config.publish_period, 0.0
    servo.set_measurement(JointMeasurement(robot.home(), now))
    stamps, windows, stale = [], [], []
    for duration, jog in phases:
        for _ in range(round(duration / dt)):
            now += dt
            if jog:
                servo.set_joint_command(JointJogCommand(tuple(jog), tuple(jog.values()), (), 0.0, now))
            out = servo.step(now)
            servo.set_measurement(JointMeasurement(out.positions, now))
            if out.status == ServoStatus.STALE_COMMAND:
                stale.append(now)
            if out.publish:
                stamps.append(now)
                windows.append(out.window)
    return np.array(stamps), windows, stale[:1]


def held_jerk(played: Played, changes: np.ndarray, settle: float = CHANGE_SETTLE) -> np.ndarray:
    """(n,) peak |jerk| [rad/s^3] by 1 kHz finite differences over the samples not within `settle` after a
    command change (`changes` [s], the start from rest among them: a first window taken over late is played from
    where it had the arm by then; and the start of the stale-command stop, the servo's own change of command):
    where every window taken over continues an unchanged command."""
    a = np.diff(played.velocities, axis=0) / PERIOD
    jerk = np.abs(np.diff(a, axis=0)) / PERIOD                       # at played.times[1:-1]
    t = played.times[1:-1]
    near = np.zeros(len(t), bool)
    for change in changes:
        near |= (t >= change - 2 * PERIOD) & (t <= change + settle)
    return jerk[~near].max(axis=0)


HELD_TARGET = np.array([1.0, 0.5, -1.2, 1.5, -2.0, 2.4, 1.0])      # [rad/s] from rest; several joints ramp at A


def held_target_windows(config: ServoConfig, ticks: int = 150) -> tuple[np.ndarray, list]:
    """The window builder alone (core/servo/jerk_window.py's `JerkWindows`, the servo's limits) toward wanted
    velocities that never change (HELD_TARGET), each window from the state at dt of the one before, a window every
    period from rest: the case a window's carried motion can predict exactly. Returns stamps and windows."""
    from robokin_ros.core.servo.jerk_window import JerkWindows
    robot_limits = np.vstack((LOWER, UPPER, LOWER + 0.02, UPPER - 0.02, np.array(config.max_joint_acceleration),
                              PANDA_VMAX))
    builder = JerkWindows(config.publish_period, config.max_expected_latency, 1.0, robot_limits, PANDA_JERK)
    q, v, a = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]), np.zeros(7), np.zeros(7)
    stamps, windows = [], []
    for k in range(ticks):
        window, (q, v, a) = builder.build(q, v, a, HELD_TARGET)
        stamps.append((k + 1) * config.publish_period)
        windows.append(window)
    return np.array(stamps), windows


def measure(robot: RobotModel, phases, seed: int) -> dict:
    """Peak |jerk| / limit (worst joint) and the joint it is on, per delivery case."""
    config = demo_config(max_joint_jerk=tuple(float(j) for j in PANDA_JERK))
    if phases is HELD_TARGET:
        stamps, windows = held_target_windows(config)
        changes = np.zeros(1)
    elif phases is JOG_PHASES:
        stamps, windows, stale = run_jog(robot, config)
        changes = np.r_[0.0, np.cumsum([duration for duration, _ in JOG_PHASES])[:-1], stale]
    else:
        run = run_script(robot, config, phases)
        stamps, windows = run.window_stamps, run.windows
        stale = [t for t, status in zip(run.stamps, run.statuses) if status == ServoStatus.STALE_COMMAND.name][:1]
        changes = np.r_[0.0, np.cumsum([phase.duration for phase in phases])[:-1], stale]
    dt = config.publish_period
    end = float(stamps[-1]) + 0.3
    rows = {}
    for case in CASES:
        arrivals = stamps + delays(case, len(stamps), dt, seed)
        plays = [arrival_play(stamps, arrivals, windows, end, phase) for phase in PHASES]
        share = np.max([peaks(played).jerk for played in plays], axis=0) / PANDA_JERK
        held = np.max([held_jerk(played, changes) for played in plays], axis=0) / PANDA_JERK
        rows[case] = {"peak_jerk_share": round(float(share.max()), 4), "joint": int(share.argmax()) + 1,
                      "held_command_share": round(float(held.max()), 4), "held_joint": int(held.argmax()) + 1,
                      "played_windows": int(len(taken(arrivals)))}
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    robot = RobotModel.from_name("panda")
    result = {}
    for name, phases in (("demo script", script_phases()), ("twist start/change/reversal", start_change_reversal()),
                         ("joint jog start/change/reversal", JOG_PHASES),
                         ("window builder alone, wanted velocities held", HELD_TARGET)):
        result[name] = measure(robot, phases, args.seed)
        print(f"{name}: peak |jerk| / limit at 1 kHz, windows taken over on arrival: all / away from command "
              f"changes (> {CHANGE_SETTLE * 1e3:.0f} ms after)")
        for case, row in result[name].items():
            print(f"  {case:<11} {row['peak_jerk_share']:>8.4f} (joint {row['joint']}) / "
                  f"{row['held_command_share']:>8.4f} (joint {row['held_joint']}), "
                  f"{row['played_windows']} windows played")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
