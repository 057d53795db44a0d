"""The demo's servo script through the core Servo without ROS, and what its played motion measures (issue 27).

An ideal arm at 500 Hz (each tick's commanded positions are the next measurement, as bench/stretch_recovery.py
drives it) runs robokin_ros/demo/script.py's phases with config/panda_servo.yaml's settings. Every published
window is kept with its stamp (the tick's time) and played as a JTC plays them stitched (bench/jerk_play.py).

Figures of a run: per-joint peak |jerk| and |acceleration| at 1 kHz over the square (the first four phases) and over
the rest of the script (rotation, stretch, way back, wrist limit, slide, silence); on the square the tool's
deviation from the commanded motion (timed: where the integrated twist puts it; geometric: off the commanded
square), its rise time to 95 % of the commanded speed, its steady speed band and the lowest phase's mean speed (a
stop-and-go shows there); on the
rest the stop time after the last command.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from jerk_play import Played, peaks, played_jerk_peaks, ratios, stitched_play
from stretch_recovery import ideal_arm_ticks

from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.servo import Servo
from robokin_ros.demo.script import SILENCE, demo_phases

SQUARE = ("square +y", "square +z", "square -y", "square -z")
STEADY_AFTER = 0.3         # [s] into a square phase: the speed band is taken after the ramp
STOPPED = 1e-3             # [rad/s] every joint below this: the arm has stopped


class ScriptRun(NamedTuple):
    """One pass of the script: per tick, and the played curve."""

    stamps: np.ndarray         # (k,) [s] tick times
    phases: list[str]          # (k,) the phase each tick ran in
    positions: np.ndarray      # (k, n) the tick's commanded positions (the state the next tick starts from)
    velocities: np.ndarray     # (k, n)
    statuses: list[str]
    tick_us: np.ndarray        # (k,) Servo.step wall time [us]
    played: Played             # at the controller's 1 kHz
    windows: list              # the published windows (TrajectoryWindow), in order
    window_stamps: np.ndarray  # (w,) [s] their stamps


def phase_spans(phases) -> dict[str, tuple[float, float]]:
    """[s] (start, end) of each phase on the script's clock (the first tick is at one period)."""
    spans, start = {}, 0.0
    for phase in phases:
        spans[phase.name] = (start, start + phase.duration)
        start += phase.duration
    return spans


def twist_of(robot: RobotModel, phase):
    return (np.array(phase.linear, float), np.array(phase.angular, float),
            robot.tip_frame if phase.frame == "tool" else phase.frame)


def run_script(robot: RobotModel, config: ServoConfig, phases) -> ScriptRun:
    """The script through a core Servo on an ideal arm; the published windows played stitched."""
    stamps, names, pos, vel, stat, cost, windows, published = [], [], [], [], [], [], [], []
    now = 0.0
    for now, phase, out, us in ideal_arm_ticks(robot, Servo(robot, config), phases, config.publish_period):
        cost.append(us)
        stamps.append(now)
        names.append(phase.name)
        pos.append(out.positions)
        vel.append(out.velocities)
        stat.append(out.status.name)
        if out.publish:
            windows.append(out.window)
            published.append(now)
    played = stitched_play(published, windows, end=now)
    return ScriptRun(np.array(stamps), names, np.array(pos), np.array(vel), stat, np.array(cost), played, windows,
                     np.array(published))


def commanded_tool(robot: RobotModel, config: ServoConfig, phases, start: np.ndarray, t: np.ndarray) -> np.ndarray:
    """(len(t), 3) where the integrated commanded (base-frame, linear) twist of the square puts the tool [m]."""
    spans = phase_spans(phases)
    out = np.repeat(start[None], len(t), axis=0)
    for phase in phases:
        if phase.name not in SQUARE:
            continue
        a, b = spans[phase.name]
        velocity = np.array(phase.linear) * config.scale.linear                          # (3,) [m/s]
        out += np.clip(t - a, 0.0, b - a)[:, None] * velocity
    return out


def segment_distance(points: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """Distance of each point (k, 3) to the polyline through `corners` (m, 3) [m]."""
    best = np.full(len(points), np.inf)
    for a, b in zip(corners[:-1], corners[1:]):
        d = b - a
        f = np.clip((points - a) @ d / max(d @ d, 1e-30), 0.0, 1.0)
        best = np.minimum(best, np.linalg.norm(points - a - f[:, None] * d, axis=1))
    return best


def tool_positions(robot: RobotModel, positions: np.ndarray) -> np.ndarray:
    return np.array([robot.fk(q).translation for q in positions])


def square_tracking(robot: RobotModel, config: ServoConfig, phases, played: Played) -> dict:
    """The tool on the square against the commanded motion: timed and geometric deviation [mm], rise time to
    95 % of the commanded speed [ms] (worst phase) and the speed band after STEADY_AFTER [% of commanded]."""
    spans = phase_spans(phases)
    end = spans[SQUARE[-1]][1]
    keep = played.times <= end
    t, tool = played.times[keep], tool_positions(robot, played.positions[keep])
    start = tool[0]
    wanted = commanded_tool(robot, config, phases, start, t)
    corners = commanded_tool(robot, config, phases, start, np.array([0.0] + [spans[p][1] for p in SQUARE]))
    speed = np.diff(tool, axis=0) / np.diff(t)[:, None]                                # (k - 1, 3)
    mid = 0.5 * (t[1:] + t[:-1])
    rise, low, high, mean = [], np.inf, -np.inf, []
    for name in SQUARE:
        phase = next(p for p in phases if p.name == name)
        a, b = spans[name]
        command = np.array(phase.linear) * config.scale.linear
        along = speed @ command / (command @ command)                                  # share of commanded
        inside = (mid > a) & (mid < b)
        reached = np.flatnonzero(inside & (along >= 0.95))
        rise.append((mid[reached[0]] - a) * 1e3 if len(reached) else np.nan)
        steady = inside & (mid > a + STEADY_AFTER)
        low, high = min(low, along[steady].min()), max(high, along[steady].max())
        mean.append(along[steady].mean())
    return {"timed_deviation_mm": round(float(np.linalg.norm(tool - wanted, axis=1).max() * 1e3), 4),
            "path_deviation_mm": round(float(segment_distance(tool, corners).max() * 1e3), 4),
            "rise_ms": round(float(max(rise)), 1) if not np.isnan(rise).any() else float("nan"),
            "steady_speed_pct": [round(float(low * 100), 2), round(float(high * 100), 2)],
            "steady_mean_speed_pct": round(float(min(mean) * 100), 2)}


def stop_time(played: Played, silence_start: float) -> float:
    """[ms] from the last command until every joint stays below STOPPED (nan: still moving at the end)."""
    moving = np.abs(played.velocities).max(axis=1) >= STOPPED
    late = np.flatnonzero(moving & (played.times >= silence_start))
    if len(late) == 0:
        return 0.0
    if late[-1] == len(played.times) - 1:
        return float("nan")
    return float((played.times[late[-1] + 1] - silence_start) * 1e3)


def script_figures(robot: RobotModel, config: ServoConfig, phases, played: Played, a_max, j_max,
                   reference: Played | None) -> dict:
    """The figures of one run's played curve: the square and the rest of the script (see the module doc)."""
    spans = phase_spans(phases)
    square_end = spans[SQUARE[-1]][1]
    square = {**ratios(peaks(played, end=square_end), a_max, j_max),
              **square_tracking(robot, config, phases, played)}
    rest = ratios(peaks(played, start=square_end), a_max, j_max)
    rest["stop_ms"] = round(stop_time(played, spans[SILENCE][0]), 1)
    if reference is not None:
        # how far jerk limiting (or a peer) takes the tool from the jerk-off run, same times
        k = min(len(reference.times), len(played.times))
        keep = np.flatnonzero(played.times[:k] >= square_end)[::5]                     # every 5 ms
        ours = tool_positions(robot, played.positions[keep])
        theirs = tool_positions(robot, reference.positions[keep])
        rest["from_jerk_off_mm"] = round(float(np.linalg.norm(ours - theirs, axis=1).max() * 1e3), 3)
    return {"square": square, "rest": rest}


def script_phases():
    return demo_phases()


def tick_acceleration_ratio(run: ScriptRun, a_max: np.ndarray, dt: float, start: float = -np.inf,
                            end: float = np.inf) -> float:
    """Largest |dv| / (a_max dt) between consecutive ticks from `start` to `end` [s]: the acceleration limit as
    the servo keeps it, over its own period (the 1 kHz figure also sees each window's velocity step at once)."""
    keep = np.flatnonzero((run.stamps >= start) & (run.stamps <= end))
    dv = np.abs(np.diff(np.vstack((np.zeros(run.velocities.shape[1]), run.velocities)), axis=0))[keep]
    return round(float((dv / (a_max * dt)).max()), 4)


def whole_window_ratio(run: ScriptRun, j_max: np.ndarray, phases, joint_names) -> dict:
    """The largest exact jerk / limit over the published windows each played to its end (what the arm follows
    when the servo stalls or the stream stops: the tail and the hold), by core/trajectory/jerk_check.py with the
    step into each window's first point left to the stitched play (`from_rest=False`), where it happens, and how
    many windows exceed the limit by more than the check's 0.2 %; nan in a tree without jerk_check."""
    if played_jerk_peaks is None:
        return {"ratio": float("nan")}
    ratios = np.array([played_jerk_peaks(w.times, w.positions, w.velocities, getattr(w, "accelerations", None),
                                         from_rest=False).jerk / j_max for w in run.windows])     # (w, n)
    worst = int(ratios.max(axis=1).argmax())
    joint = int(ratios[worst].argmax())
    window = run.windows[worst]
    times = played_jerk_peaks(window.times, window.positions, window.velocities,
                              getattr(window, "accelerations", None), from_rest=False).time
    stamp = float(run.window_stamps[worst])
    phase = next(name for name, (a, b) in phase_spans(phases).items() if a < stamp <= b + 1e-9)
    return {"ratio": round(float(ratios[worst, joint]), 4), "over": int((ratios.max(axis=1) > 1.002).sum()),
            "where": f"{joint_names[joint]}, window stamped {stamp:.3f} s ({phase}), {float(times[joint]):.4f} s "
                     "into it"}
