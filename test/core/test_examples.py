"""The numbered ROS-free examples run and print what they show (they are documentation that must not rot).

Every example must run and print; the ones that state results (05 onwards) are held to them: the numbers they
print are the evidence (FK of the planned trajectory, of the servo's commands, a clearance checker and Pinocchio
of their own), and each is compared here with the bound the example claims.
"""
import functools
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("0*.py"))
NUMBER = r"([-+0-9.e]+)"


@functools.cache
def run(name: str) -> str:
    """The example's stdout (it must exit 0); run once per session for every test that reads it."""
    example = next(p for p in EXAMPLES if p.name == name)
    with tempfile.TemporaryDirectory() as cwd:
        result = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=120,
                                cwd=cwd, env=dict(os.environ, MPLBACKEND="Agg"))
    assert result.returncode == 0, result.stderr
    return result.stdout


def numbers(pattern: str, text: str) -> tuple[float, ...]:
    """The numbers the first line matching `pattern` (a regex with NUMBER groups) prints."""
    found = re.search(pattern, text)
    assert found, f"no line matches {pattern!r} in:\n{text}"
    return tuple(float(g) for g in found.groups())


def test_there_are_examples():
    assert len(EXAMPLES) >= 8


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(example):
    assert len(run(example.name).splitlines()) >= 3


def test_05_motion_program_is_planned_within_its_speeds_stops_and_path_tolerance():
    out = run("05_motion_program.py")
    assert "status: SUCCESS" in out
    cycle, position, orientation = numbers(rf"cycle time {NUMBER} s, 6 moves, max deviation {NUMBER} mm / "
                                           rf"{NUMBER} mrad", out)
    assert position <= 0.1 and orientation <= 1.0                 # the planner's path tolerances, 0.1 mm / 1 mrad
    rows = re.findall(r"^(\d) (Move[LJC]) (\w+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +(\S+) +(\S+) ", out, re.M)
    assert [r[2] for r in rows] == ["above_pick", "pick", "lift", "transfer", "place", "home"]
    starts, durations = [float(r[3]) for r in rows], [float(r[4]) for r in rows]
    assert all(a < b for a, b in zip(starts, starts[1:]))
    assert abs(starts[-1] + durations[-1] - cycle) <= 2e-3        # the moves tile the cycle (rounded to 1 ms)
    for kind, peak, programmed in ((r[1], float(r[5]), r[6]) for r in rows):
        if kind != "MoveJ":
            assert peak <= float(programmed) * (1 + 1e-3), rows
    for stop in ("pick", "place"):
        error, speed = numbers(rf"exact stop at {stop}: {NUMBER} mm from its target, max joint speed there {NUMBER}",
                               out)
        assert error <= 0.02 and speed == 0.0
    off_line, peak = numbers(rf"MoveL lift \(fine to fine\): {NUMBER} mm off its line at most, peak tool speed "
                             rf"{NUMBER} m/s", out)
    assert off_line <= 0.1 and 0.25 * 0.99 <= peak <= 0.25 * (1 + 1e-3)


def test_06_pose_target_converges_without_overshoot_and_every_window_keeps_the_acceleration_limits():
    out = run("06_pose_target.py")
    linear_tolerance, angular_tolerance = numbers(rf"tolerances {NUMBER} mm / {NUMBER} rad", out)
    rows = [(float(t), float(p), float(o), status) for t, p, o, status in
            re.findall(r"^ *([0-9.]+) +([0-9.]+) +([0-9.]+)  (\w+)$", out, re.M)]
    assert len(rows) >= 10 and rows[0][1] > 150.0
    positions, orientations = [r[1] for r in rows], [r[2] for r in rows]
    assert all(b <= a for a, b in zip(positions, positions[1:]))          # the error only falls: no overshoot
    assert all(b <= a for a, b in zip(orientations, orientations[1:]))
    assert rows[-1][3] == "TARGET_REACHED"
    linear, angular, reached = numbers(rf"final error {NUMBER} mm / {NUMBER} mrad; target reached at t={NUMBER} s",
                                       out)
    assert linear <= linear_tolerance and angular <= angular_tolerance * 1e3 and reached < 2.0
    assert "last tick published=False, joint speeds 0.0e+00 rad/s" in out      # at rest, then silent
    windows, ticks = numbers(rf"peak acceleration / limit: {NUMBER} in the published windows, {NUMBER} from tick",
                             out)
    assert 0.5 < windows <= 1 + 1e-6 and 0.5 < ticks <= 1 + 1e-6


def test_07_collision_scaling_slows_then_halts_at_the_minimum_clearance_and_backing_away_is_free():
    out = run("07_collision_scaling.py")
    minimum = numbers(rf"min_allowable_collision_distance {NUMBER} mm", out)[0]
    rows = [(float(t), float(v), float(s), float(d), status) for t, v, s, d, status in
            re.findall(r"^ *([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+)  (\w+) \(", out, re.M)]
    descending = [r for r in rows if r[0] <= 4.5]
    assert all(r[2] <= 1 + 1e-3 for r in rows)                  # never faster than commanded
    slowing = [r for r in descending if r[4] == "DECELERATE_FOR_COLLISION"]
    assert any(0.1 < r[2] < 0.9 for r in slowing)                # a ramp, not a step
    clearances = [r[3] for r in descending if r[0] >= 1.5]       # the fingers are nearest from here on
    assert all(b <= a for a, b in zip(clearances, clearances[1:]))
    assert descending[-1][4] == "HALT_FOR_COLLISION"
    speed, halted_at, closest = numbers(rf"halted: tool speed {NUMBER} m/s at {NUMBER} mm clearance "
                                        rf"\(HALT_FOR_COLLISION\); closest clearance of the run {NUMBER} mm", out)
    assert speed < 1e-6 and halted_at <= minimum + 0.2
    # the guard checks at 100 Hz and brakes within the acceleration limits: it stops within a micrometre
    assert closest >= minimum - 1e-3
    backing, _ = numbers(rf"backing away: tool speed {NUMBER} m/s, clearance {NUMBER} mm \(OK\)", out)
    assert abs(backing - 0.1) < 1e-3


def test_08_toolbox_dh_fk_every_ik_branch_and_statics_agree_with_pinocchio():
    out = run("08_toolbox.py")
    assert numbers(rf"DH FK vs Pinocchio FK of tool0: max difference {NUMBER}", out)[0] <= 1e-12
    count = int(numbers(rf"closed-form IK of that pose: {NUMBER} solutions", out)[0])
    branches = re.findall(rf"^  (shoulder=\w wrist=\w elbow=\w) +q = .*\|q - seed\| +{NUMBER}  FK error {NUMBER} m / "
                          rf"{NUMBER} rad", out, re.M)
    assert count == 8 and len(branches) == 8 and len({b[0] for b in branches}) == 8    # every branch, each once
    distances = [float(b[1]) for b in branches]
    assert distances == sorted(distances) and distances[0] == 0.0
    assert max(max(float(b[2]), float(b[3])) for b in branches) <= 1e-9
    worst, seed = numbers(rf"worst error {NUMBER}; seed found again: {NUMBER} rad", out)
    assert worst <= 1e-9 and seed <= 1e-9
    assert numbers(rf"the batched FK vs Pinocchio's on 200 samples: max difference {NUMBER} m", out)[0] <= 1e-12
    assert numbers(rf"Pinocchio's rnea with the push applied differs by {NUMBER} N m", out)[0] <= 1e-9


def test_09_two_arms_carry_the_box_with_the_grasp_held():
    out = run("09_two_arms.py")
    assert "carried square: SUCCESS" in out
    position, angle, off_plane, span_x, span_z = numbers(
        rf"relative pose held within {NUMBER} mm / {NUMBER} mrad; the box stays in its plane within {NUMBER} mm; "
        rf"it spans {NUMBER} mm x {NUMBER} mm", out)
    assert position <= 0.1 and angle <= 1.0 and off_plane <= 0.1          # issue 26: 0.1 mm (and ~1 mrad)
    assert abs(span_x - 200.0) <= 0.2 and abs(span_z - 200.0) <= 0.2
    moved, across, speed, held_mm, held_mrad = numbers(
        rf"the box moved {NUMBER} mm along x \({NUMBER} mm across\) for {NUMBER} mm/s over 1 s; relative pose held "
        rf"within {NUMBER} mm / {NUMBER} mrad", out)
    assert abs(moved - speed * 1.0) <= 1.0 and across <= 0.1
    assert held_mm <= 0.1 and held_mrad <= 1.0
