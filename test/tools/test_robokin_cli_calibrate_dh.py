"""`robokin calibrate --dh`: DH-delta calibration from the command line, checked against the true table of the
synthetic data set and against the written URDF."""
import argparse
import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from robokin_ros.core.classroom.dh import DhRobot
from robokin_ros.core.classroom.dh_errors import synthetic_dh_data
from robokin_ros.core.classroom.dh_examples import ur5
from robokin_ros.core.robot import RobotModel
from robokin_ros.tools.robokin_cli import calibrate as cli

NOISE = 5e-5                       # [m] per axis
NOISE_RMS = np.sqrt(3) * NOISE     # [m] RMS of the 3-D noise vector
UR5_YAML = Path(__file__).resolve().parents[2] / "examples" / "dh" / "ur5.yaml"


def _run(argv):
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    return cli.run(parser.parse_args(argv))


def _after_rms(printed):
    return float(printed.split("after: position RMS ")[1].split(" mm")[0]) * 1e-3


def _printed_table(printed, nominal):
    """The corrected table as printed (a [m], alpha [deg], d [m], offset [deg]) on the nominal's limits/base/tool."""
    lines = printed.split("corrected DH table (standard):\n")[1].splitlines()[1:1 + nominal.n]
    rows = []
    for line, row in zip(lines, nominal.rows):
        _, a, alpha, d, offset, _ = line.split()
        rows.append(dataclasses.replace(row, a=float(a), alpha=math.radians(float(alpha)), d=float(d),
                                        offset=math.radians(float(offset))))
    return DhRobot(tuple(rows), nominal.convention, nominal.base, nominal.tool)


def test_cli_dh_synthetic_prints_a_corrected_table_close_to_the_truth(tmp_path, capsys):
    csv, out = tmp_path / "tracker.csv", tmp_path / "corrected.urdf"
    assert _run(["--dh", "ur5", "--synthetic", "50", "--noise", str(NOISE), "--seed", "1", "--data", str(csv),
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert _after_rms(printed) <= 1.5 * NOISE_RMS
    assert float(printed.split("before: position RMS ")[1].split(" mm")[0]) * 1e-3 > 30 * NOISE_RMS
    assert "identifiable: 18 of 24" in printed and "row2.dd - row4.dd" in printed
    # same seed, same true table: the printed (6-decimal) table predicts it to within the noise at fresh poses
    nominal = ur5()
    truth = synthetic_dh_data(nominal, 50, NOISE, seed=1).true_table
    table = _printed_table(printed, nominal)
    fresh = synthetic_dh_data(nominal, 100, 0.0, seed=99).configurations
    gaps = [np.linalg.norm(table.tool_pose(q)[:3, 3] - truth.tool_pose(q)[:3, 3]) for q in fresh]
    assert np.sqrt(np.mean(np.square(gaps))) < NOISE_RMS
    # the written URDF is the printed table's chain (to the printed precision: 1e-6 m, 1e-5 deg)
    urdf = RobotModel.from_urdf_string(out.read_text(), "base", "tool")
    for q in fresh[:10]:
        np.testing.assert_allclose(urdf.fk(q).translation, table.tool_pose(q)[:3, 3], atol=5e-6)


def test_cli_dh_yaml_file_with_existing_data(tmp_path, capsys):
    csv = tmp_path / "tracker.csv"
    assert _run(["--dh", "ur5", "--synthetic", "50", "--seed", "4", "--data", str(csv)]) == 0
    builtin = capsys.readouterr().out
    assert _run(["--dh", str(UR5_YAML), "--data", str(csv)]) == 0
    from_file = capsys.readouterr().out
    # the YAML file is the same datasheet table: the same fit, the same corrected table
    assert _after_rms(from_file) == pytest.approx(_after_rms(builtin), rel=1e-6)
    assert from_file.split("corrected DH table")[1] == builtin.split("corrected DH table")[1]
    assert _run(["--dh", str(UR5_YAML), "--data", str(csv), "--loss", "soft_l1"]) == 0
    assert _after_rms(capsys.readouterr().out) <= 1.5 * NOISE_RMS


def test_cli_dh_bad_input_returns_2(tmp_path, capsys):
    csv = tmp_path / "tracker.csv"
    assert _run(["--dh", "ur5", "--synthetic", "30", "--data", str(csv)]) == 0
    capsys.readouterr()
    assert _run(["--dh", "puma", "--data", str(csv)]) == 2
    assert "neither a built-in table" in capsys.readouterr().err
    assert _run(["--dh", "ur5", "--data", str(csv), "--tool", "3"]) == 2
    assert "rows only" in capsys.readouterr().err
    assert _run(["--dh", "scara", "--data", str(csv)]) == 2          # 6 joint columns for a 4-joint table
    assert "7 or 11 columns" in capsys.readouterr().err
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("rows:\n  - {a: 0, alpha: 0, d: x, type: revolute}\n")
    assert _run(["--dh", str(bad_yaml), "--data", str(csv)]) == 2
    assert "row 0" in capsys.readouterr().err
