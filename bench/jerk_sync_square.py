"""The demo servo script's square with and without jerk limits (issue 27): how far the tool leaves its line while
the joints ramp (bench/jerk_servo.py's figures: timed and geometric deviation, rise time, steady speed), the peak
jerk / limit over the square, and the Servo.step median, on an ideal arm at 500 Hz, windows played stitched.

    PYTHONPATH=. .venv/bin/python bench/jerk_sync_square.py [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from jerk_play import peaks  # noqa: E402
from jerk_servo import SQUARE, phase_spans, run_script, script_phases, square_tracking  # noqa: E402
from stretch_recovery import demo_config  # noqa: E402

from robokin_ros.core.robot import RobotModel  # noqa: E402

PANDA_JERK = np.array([7500.0, 3750.0, 5000.0, 6250.0, 7500.0, 10000.0, 10000.0])      # [rad/s^3] Franka


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    robot, phases = RobotModel.from_name("panda"), script_phases()
    square_end = phase_spans(phases)[SQUARE[-1]][1]
    result = {}
    for name, fields in (("jerk off", {}), ("Franka jerk", {"max_joint_jerk": tuple(float(j) for j in PANDA_JERK)})):
        config = demo_config(**fields)
        run = run_script(robot, config, phases)
        figures = square_tracking(robot, config, phases, run.played)
        share = peaks(run.played, end=square_end).jerk / PANDA_JERK
        figures["square_peak_jerk_share"] = round(float(share.max()), 4)
        figures["tick_median_us"] = round(float(np.median(run.tick_us)), 1)
        result[name] = figures
        print(f"{name}: {figures}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
