"""Jerk-limited against acceleration-limited motion on the same inputs, with the peers, in one run (issue 27).

robokin with jerk off (the default) and with the Panda's published jerk limits (Franka, "Robot and interface
specifications": [7500, 3750, 5000, 6250, 7500, 10000, 10000] rad/s^3) and a tenth of them, set through the servo
and path configs (`max_joint_jerk`), on:
- the demo's servo script (robokin_ros/demo/script.py) through the core Servo on an ideal arm at 500 Hz, its
  windows played as a JTC plays them stitched (bench/jerk_servo.py): the square, then the rest (tool rotation,
  stretch, way back, wrist limit, slide, silence);
- the blended rectangle of bench/bench_path.py (r = 30 mm);
- the 20-move pick-and-place of examples/programs, fine and zoned (bench/bench_program.py's settings).
Per case: peak |jerk| / limit per joint and peak |acceleration| / limit at 1 kHz (bench/jerk_play.py: finite
differences of the played velocity, the spline a JTC plays), the time cost against jerk off, and the tool's tracking
(servo) or path deviation (plans; the planner's own measure). Jerk-off rows are measured against the 1x limits.
Peers (bench/jerk_peers.py): toppra's own output, Ruckig point to point on the MoveJ moves, MoveIt Servo's Ruckig
filter on the servo script.

Run: /tmp/peers-venv/bin/python bench/bench_jerk.py [--json PATH]   (about a minute on 2 cores; ruckig is only in
that venv: with another Python the Ruckig peers are skipped with a message). The header names the git HEAD and
whether robokin_ros has uncommitted changes; to measure a commit while others edit the tree, run it from an archive
(git archive REV robokin_ros bench config examples | tar -x -C DIR; cd DIR; PYTHONPATH=DIR ... --rev REV).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_path import ACC, suite  # noqa: E402
from jerk_peers import (RUCKIG_MISSING, moveit_filter_run, moveit_first_tick_without_reset,  # noqa: E402
                        movej_ends, ruckig_move, toppra_sections)
from jerk_play import played_jerk_peaks, self_check, spline_figures  # noqa: E402
from jerk_servo import (SQUARE, phase_spans, run_script, script_figures, script_phases,  # noqa: E402
                        tick_acceleration_ratio, whole_window_ratio)
from stretch_recovery import demo_config  # noqa: E402

from robokin_ros.core.limits import motion_limits  # noqa: E402
from robokin_ros.core.path.config import PathConfig  # noqa: E402
from robokin_ros.core.program.moves import waypoint_program  # noqa: E402
from robokin_ros.core.program.planner import MotionPlanner  # noqa: E402
from robokin_ros.core.program.program_file import load_program_file, program_from_mapping  # noqa: E402
from robokin_ros.core.robot import RobotModel  # noqa: E402

warnings.filterwarnings("ignore")
ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "programs"
PANDA_JERK = np.array([7500.0, 3750.0, 5000.0, 6250.0, 7500.0, 10000.0, 10000.0])      # [rad/s^3] Franka
SETTINGS = (("jerk off", 0.0), ("jerk 1x", 1.0), ("jerk 0.1x", 0.1))      # share of PANDA_JERK (0 = off)


def jerk_limits(share: float) -> np.ndarray:
    """The limits a row is measured against: its own, the 1x ones for jerk off."""
    return PANDA_JERK * (share or 1.0)


def jerk_fields(share: float) -> dict:
    return {"max_joint_jerk": tuple(float(j) for j in PANDA_JERK * share)} if share else {}


def load() -> str:
    return "load " + "/".join(f"{x:.2f}" for x in os.getloadavg())


# ---- servo ---------------------------------------------------------------------------------------------------------
def servo_rows(robot: RobotModel) -> tuple[list[dict], dict]:
    """The script per setting, then MoveIt's filter fed by the jerk-off servo (with each jerk setting's limits)."""
    phases, rows, reference = script_phases(), [], None
    base = demo_config()
    limits = motion_limits(robot, base.max_joint_velocity, base.max_joint_acceleration,
                           base.default_joint_acceleration)
    for name, share in SETTINGS:
        config = demo_config(**jerk_fields(share))
        run = run_script(robot, config, phases)
        figures = script_figures(robot, config, phases, run.played, limits.acceleration, jerk_limits(share),
                                 reference)
        reference = reference or run.played
        square_end = phase_spans(phases)[SQUARE[-1]][1]
        figures["square"]["acc_ratio_tick"] = tick_acceleration_ratio(run, limits.acceleration,
                                                                      config.publish_period, end=square_end)
        figures["rest"]["acc_ratio_tick"] = tick_acceleration_ratio(run, limits.acceleration, config.publish_period,
                                                                    start=square_end)
        figures["whole_windows"] = whole_window_ratio(run, jerk_limits(share), phases, robot.joint_names)
        rows.append({"setting": name, **figures, "tick_median_us": round(float(np.median(run.tick_us)), 1),
                     "tick_p99_us": round(float(np.percentile(run.tick_us, 99)), 1), "load": load()})
    peers = {}
    if not RUCKIG_MISSING:
        for name, share in SETTINGS[1:]:
            moveit = moveit_filter_run(robot, base, phases, limits.velocity, limits.acceleration,
                                       jerk_limits(share))
            figures = script_figures(robot, base, phases, moveit.pop("played"), limits.acceleration,
                                     jerk_limits(share), reference)
            peers[name] = {**figures, **moveit}
        peers["without reset"] = moveit_first_tick_without_reset(robot, base, limits.velocity, limits.acceleration,
                                                                 PANDA_JERK)
    return rows, peers


# ---- plans ---------------------------------------------------------------------------------------------------------
def plan_figures(plan, seconds: float, a_max: np.ndarray, share: float) -> dict:
    """A plan's played figures: duration, peaks (bench/jerk_play.py `spline_figures`), deviation, planning time."""
    t = plan.trajectory
    return {"ok": bool(plan.success), "duration": round(float(t.duration), 4),
            **spline_figures(t.times, t.positions, t.velocities, t.accelerations, a_max, jerk_limits(share)),
            "deviation_mm": round(float(plan.max_position_deviation * 1e3), 4),
            "plan_ms": round(seconds * 1e3, 1), "load": load()}


def timed_plan(planner: MotionPlanner, program, q0, **kw):
    planner.plan(program, q0, **kw)                       # warm: the first call of a planner compiles and caches
    t0 = time.perf_counter()
    plan = planner.plan(program, q0, **kw)
    return plan, time.perf_counter() - t0


def rectangle_rows(robot: RobotModel) -> tuple[list[dict], object]:
    """The blended rectangle per setting; also the jerk-off plan (toppra's peer runs on its knots)."""
    title, waypoints, blend = next(case for case in suite(robot) if case[0].startswith("rectangle"))
    rows, first = [], None
    for name, share in SETTINGS:
        planner = MotionPlanner(robot, PathConfig(max_joint_acceleration=ACC["panda"], **jerk_fields(share)))
        plan, seconds = timed_plan(planner, waypoint_program(waypoints, blend), robot.home(), solved_part=False)
        rows.append({"case": title, "setting": name,
                     **plan_figures(plan, seconds, planner.limits().acceleration, share)})
        first = first or plan
    return rows, first


def program_rows(robot: RobotModel) -> tuple[list[dict], dict]:
    """The pick-and-place, zoned and fine, per setting; also the fine plans (the MoveJ moves for Ruckig)."""
    q0, start = robot.home(), robot.fk(robot.home())
    rows, fine = [], {}
    for kind in ("fine", "zoned"):
        mapping = load_program_file(EXAMPLES / f"pick_place_{kind}.yaml")
        program = program_from_mapping(mapping, start, robot.n, robot.fk)
        for name, share in SETTINGS:
            config = PathConfig(robot="panda", max_joint_acceleration=ACC["panda"], clamp_blend_radius=True,
                                **jerk_fields(share))
            planner = MotionPlanner(robot, config)
            plan, seconds = timed_plan(planner, program, q0)
            rows.append({"case": f"pick-and-place {kind}", "setting": name,
                         **plan_figures(plan, seconds, planner.limits().acceleration, share)})
            if kind == "fine":
                fine[name] = (plan, planner.limits(), config.trajectory_rate_hz)
    return rows, fine


def ruckig_rows(fine: dict) -> list[dict]:
    """Ruckig on the fine pick-and-place's MoveJ moves (ends from the jerk-off plan), each jerk setting's limits,
    next to robokin's MoveJ durations with that setting and with jerk off."""
    if RUCKIG_MISSING:
        return []
    off_plan = fine["jerk off"][0]
    ends = movej_ends(off_plan)
    rows = []
    for name, share in SETTINGS[1:]:
        plan, limits, rate = fine[name]
        ours = {m.label: m.duration for m in plan.moves}
        for label, start, goal, off_duration in ends:
            r = ruckig_move(start, goal, limits.velocity, limits.acceleration, jerk_limits(share), rate)
            sent = r["played"].get("exact_jerk_ratio", r["played"]["jerk_ratio"])
            rows.append({"setting": name, "move": label, "ruckig_s": round(r["duration"], 4),
                         "robokin_jerk_s": round(ours.get(label, float("nan")), 4),
                         "robokin_off_s": round(off_duration, 4),
                         "ruckig_jerk_ratio": round(float((r["own"].jerk / jerk_limits(share)).max()), 4),
                         "ruckig_played_jerk_ratio": max(sent),
                         "ruckig_acc_ratio": round(float((r["own"].acceleration / limits.acceleration).max()), 4)})
    return rows


def toppra_rows(robot: RobotModel, plan) -> list[dict]:
    limits = MotionPlanner(robot, PathConfig(max_joint_acceleration=ACC["panda"])).limits()
    out = []
    for parametrizer, r in toppra_sections(plan, limits.velocity, limits.acceleration).items():
        out.append({"parametrizer": parametrizer, "duration": round(r["duration"], 4),
                    "jerk_ratio": [round(float(x), 3) for x in r["jerk"] / PANDA_JERK],
                    "acc_ratio": [round(float(x), 3) for x in r["acceleration"] / limits.acceleration]})
    return out


# ---- table ---------------------------------------------------------------------------------------------------------
def joints(values) -> str:
    return " ".join(f"{v:.2f}" for v in values)


def cost(value: float, reference: float) -> str:
    return f"{value / reference:.3f}" if reference and np.isfinite(value) else "-"


def print_tables(results: dict) -> None:
    head = results["head"]
    print(f"# bench_jerk at {head}, {results['load']}\n")
    print(results["self_check"] + "\n")
    print("## robokin: jerk off vs jerk-limited (1x = Franka's published limits; off rows against 1x)\n")
    print("servo: 1 kHz finite differences of the stitched windows' play (bench/jerk_play.py); plans: the exact peak "
          "on the played quintic (core/trajectory/jerk_check.py played_jerk_peaks), then in brackets the 1 kHz "
          "finite differences (jerk_check.sampled_jerk / bench/jerk_play.py)" if played_jerk_peaks else
          "jerk by 1 kHz finite differences of the play (bench/jerk_play.py); this tree has no jerk_check")
    print()
    print("| case | setting | peak jerk / limit per joint (1 kHz) | worst | peak acc / limit (worst; servo: 1 kHz, "
          "per tick) | time | cost vs off | tracking / deviation |")
    print("|---|---|---|---|---|---|---|---|")
    servo = results["servo"]
    off = servo[0]
    for row in servo:
        s, r = row["square"], row["rest"]
        rise, stop = cost(s["rise_ms"], off["square"]["rise_ms"]), cost(r["stop_ms"], off["rest"]["stop_ms"])
        print(f"| servo square | {row['setting']} | {joints(s['jerk_ratio'])} | {max(s['jerk_ratio']):.2f} "
              f"| {max(s['acc_ratio']):.2f}, {s['acc_ratio_tick']:.2f} | rise {s['rise_ms']:.1f} ms | {rise}"
              f" | timed {s['timed_deviation_mm']:.2f} mm, off square {s['path_deviation_mm']:.3f} mm, speed "
              f"{s['steady_speed_pct'][0]:.1f}-{s['steady_speed_pct'][1]:.1f} % |")
        print(f"| servo rest of script | {row['setting']} | {joints(r['jerk_ratio'])} | {max(r['jerk_ratio']):.2f} "
              f"| {max(r['acc_ratio']):.2f}, {r['acc_ratio_tick']:.2f} | stop {r['stop_ms']:.0f} ms | {stop}"
              f" | {r.get('from_jerk_off_mm', 0.0):.2f} mm from jerk off |")
    plans = results["rectangle"] + results["programs"]
    for row in plans:
        ref = next(p for p in plans if p["case"] == row["case"] and p["setting"] == "jerk off")
        shown = row.get("exact_jerk_ratio", row["jerk_ratio"])
        sampled = f"{max(row['sampled_jerk_ratio']):.2f} / " if "sampled_jerk_ratio" in row else ""
        print(f"| {row['case']} | {row['setting']} | {joints(shown)} | {max(shown):.2f} (1 kHz: {sampled}"
              f"{max(row['jerk_ratio']):.2f}) | {max(row['acc_ratio']):.2f} | {row['duration']:.3f} s | "
              f"{cost(row['duration'], ref['duration'])} | {row['deviation_mm']:.4f} mm"
              f"{'' if row['ok'] else ', FAILED'} |")
    print("\nservo tick (Servo.step, ideal arm, whole script) median / p99 [us]: " + "; ".join(
        f"{r['setting']} {r['tick_median_us']:.1f} / {r['tick_p99_us']:.1f} ({r['load']})" for r in servo))
    print("servo windows each played to their end (what the arm follows if the stream stops), worst exact jerk / "
          "limit: " + "; ".join(f"{r['setting']} {r['whole_windows']['ratio']:.2f}" + (
              f" ({r['whole_windows']['over']} windows over 1.002, worst {r['whole_windows']['where']})"
              if r["whole_windows"].get("over") else "") for r in servo))
    print("planning [ms], one warm call: " + "; ".join(
        f"{r['case']} {r['setting']} {r['plan_ms']:.0f} ({r['load']})" for r in plans))
    print_goals(results)
    print_peers(results)


def worst_jerk(row: dict) -> float:
    """A row's worst jerk / limit: the exact played peak where measured, else the 1 kHz one."""
    return max(row.get("exact_jerk_ratio", row["jerk_ratio"]))


def print_goals(results: dict) -> None:
    """The issue's goals against this run: peak jerk <= 1.0x the limit with jerk on, pick-and-place cycle <= 1.15x
    the acceleration-limited one, servo tick median <= 1.5x."""
    servo, plans = results["servo"], results["rectangle"] + results["programs"]
    off_tick = servo[0]["tick_median_us"]
    print("\ngoals (jerk-limited rows): peak jerk <= 1.0 x limit: " + "; ".join(
        f"servo {r['setting']} {max(worst_jerk(r['square']), worst_jerk(r['rest'])):.2f} (whole windows "
        f"{r['whole_windows']['ratio']:.2f})" for r in servo[1:]) + "; " + "; ".join(
        f"{r['case']} {r['setting']} {worst_jerk(r):.2f}" for r in plans if r["setting"] != "jerk off"))
    costs = [f"{r['case']} {r['setting']} {r['duration'] / p['duration']:.3f}" for r in results["programs"]
             for p in results["programs"] if p["case"] == r["case"] and p["setting"] == "jerk off"
             and r["setting"] != "jerk off"]
    print("  cycle time <= 1.15 x jerk off on the pick-and-place: " + "; ".join(costs))
    print("  servo tick median <= 1.5 x jerk off: " + "; ".join(
        f"{r['setting']} {r['tick_median_us'] / off_tick:.2f}" for r in servo[1:]))


def print_peers(results: dict) -> None:
    print("\n## peers, same inputs\n")
    print("| peer | case | peak jerk / limit per joint (1 kHz) | worst | peak acc / limit | time | notes |")
    print("|---|---|---|---|---|---|---|")
    rect_off = next(r for r in results["rectangle"] if r["setting"] == "jerk off")
    for row in results["toppra"]:
        print(f"| toppra {row['parametrizer']} (own output) | rectangle, 1x | {joints(row['jerk_ratio'])} "
              f"| {max(row['jerk_ratio']):.2f} | {max(row['acc_ratio']):.2f} | {row['duration']:.3f} s "
              f"| robokin jerk off {rect_off['duration']:.3f} s |")
    if results["ruckig_missing"]:
        print(f"| Ruckig, MoveIt filter | - | skipped: {results['ruckig_missing']} | | | | |")
        return
    print_ruckig_peers(results)
    print("\nMoveIt Servo's Ruckig filter: ruckig_filter.cpp's doSmoothing and reset re-implemented with the ruckig "
          "package, fed by robokin's servo (jerk off) from the filter's last output; not reproduced: MoveIt Servo's "
          "own IK, joint-limit halting, collision scaling and smoothHalt (robokin's commands and stop ramp are fed "
          "instead) and its trajectory message (sliding window, finite-difference velocities): the filter's states "
          "are played as a quintic through them.")


def print_ruckig_peers(results: dict) -> None:
    for name, r in results["moveit_filter"].items():
        if name == "without reset":
            print(f"| MoveIt Servo Ruckig filter, never reset (its C++ demos) | first tick at home | - | - | - | - "
                  f"| first command {r['joint_step_rad']:.3f} rad / {r['tool_step_mm']:.0f} mm (tool) from the arm: "
                  f"Ruckig starts from q = 0, the Panda's straight, singular pose |")
            continue
        s, rest = r["square"], r["rest"]
        print(f"| MoveIt Servo Ruckig filter | servo square, {name} | {joints(s['jerk_ratio'])} "
              f"| {max(s['jerk_ratio']):.2f} | {max(s['acc_ratio']):.2f} | rise {s['rise_ms']} ms "
              f"| timed {s['timed_deviation_mm']:.1f} mm, off square {s['path_deviation_mm']:.1f} mm, speed "
              f"{s['steady_speed_pct'][0]:.1f}-{s['steady_speed_pct'][1]:.1f} % (lowest phase mean "
              f"{s['steady_mean_speed_pct']:.1f} %); Ruckig failures {r['failures']} {r['failure_kinds']} |")
        print(f"| MoveIt Servo Ruckig filter | servo rest, {name} | {joints(rest['jerk_ratio'])} "
              f"| {max(rest['jerk_ratio']):.2f} | {max(rest['acc_ratio']):.2f} | stop {rest['stop_ms']:.0f} ms "
              f"| {rest['from_jerk_off_mm']:.1f} mm from robokin jerk off |")
    for row in results["ruckig"]:
        print(f"| Ruckig point to point | {row['move']}, {row['setting']} | - | {row['ruckig_jerk_ratio']:.2f} "
              f"(as sent at the trajectory rate: {row['ruckig_played_jerk_ratio']:.2f}) | {row['ruckig_acc_ratio']:.2f}"
              f" | {row['ruckig_s']:.3f} s | robokin {row['robokin_jerk_s']:.3f} s with {row['setting']}, "
              f"{row['robokin_off_s']:.3f} s jerk off |")


def git_head(rev: str = "") -> str:
    if rev:
        return f"{rev} (an archive of it)"
    done = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%h %s"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "robokin_ros"],
                           capture_output=True, text=True).stdout.strip()
    return (done.stdout.strip()[:60] or "unknown") + (" (robokin_ros has uncommitted changes)" if dirty else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, help="write every number to this file")
    parser.add_argument("--rev", default="", help="the revision this tree is, when run from an archive of it")
    args = parser.parse_args()
    robot = RobotModel.from_name("panda")
    started = time.perf_counter()
    servo, moveit = servo_rows(robot)
    rectangle, rectangle_off = rectangle_rows(robot)
    programs, fine = program_rows(robot)
    results = {"head": git_head(args.rev), "load": load(), "self_check": self_check(),
               "jerk_limits_1x": PANDA_JERK.tolist(), "servo": servo, "moveit_filter": moveit, "rectangle": rectangle,
               "programs": programs,
               "toppra": toppra_rows(robot, rectangle_off), "ruckig": ruckig_rows(fine),
               "ruckig_missing": RUCKIG_MISSING, "exact_peaks": played_jerk_peaks is not None}
    results["seconds"] = round(time.perf_counter() - started, 1)
    print_tables(results)
    print(f"\n{results['seconds']:.0f} s in all ({load()})")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
        print(f"numbers written to {args.json}")


if __name__ == "__main__":
    main()
