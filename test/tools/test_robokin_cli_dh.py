"""`robokin fk` and `robokin dh2urdf`: printed frames against textbook values and the URDF, and the error messages
of malformed DH tables."""
import argparse
import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from robokin_ros.core.classroom import dh_examples as ex
from robokin_ros.core.classroom.dh_urdf import dh_robot_model
from robokin_ros.core.robot import RobotModel
from robokin_ros.tools.robokin_cli import dh2urdf, fk

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples" / "dh"


def run(module, argv):
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)
    return module.run(parser.parse_args(argv))


def table_rows(text):
    """{frame name: (x, y, z, roll, pitch, yaw)} from the printed table."""
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("frame "))
    rows = {}
    for line in lines[header + 1:]:
        parts = line.split()
        if len(parts) == 7:
            rows[parts[0]] = np.array([float(v) for v in parts[1:]])
    return rows


def test_fk_prints_every_frame_of_the_2r_arm_with_textbook_values(capsys):
    assert run(fk, ["--dh", "2r", "--q", "0.5", "-1.2"]) == 0
    rows = table_rows(capsys.readouterr().out)
    assert list(rows) == ["frame0", "frame1", "frame2", "tool"]
    np.testing.assert_allclose(rows["frame1"][:3], [math.cos(0.5), math.sin(0.5), 0], atol=1e-5)
    tip = [math.cos(0.5) + math.cos(-0.7), math.sin(0.5) + math.sin(-0.7), 0]   # l1 = l2 = 1 m
    np.testing.assert_allclose(rows["tool"][:3], tip, atol=1e-5)
    assert rows["tool"][5] == pytest.approx(-0.7, abs=1e-4)


def test_fk_of_the_ur5_table_prints_the_urdf_tool_pose(capsys):
    q = "0.6,-1.1,1.4,-1.9,-1.57,0.4"
    assert run(fk, ["--dh", "ur5", f"--q={q}"]) == 0
    dh_rows = table_rows(capsys.readouterr().out)
    assert run(fk, ["--robot", "ur5", "--q", *q.split(",")]) == 0
    urdf_rows = table_rows(capsys.readouterr().out)
    np.testing.assert_allclose(dh_rows["tool"], urdf_rows["tool0"], atol=1e-4)
    assert len(dh_rows) == 8 and list(urdf_rows)[0] == "base_link"


def test_fk_reads_a_table_file_and_pi_expressions(capsys):
    assert run(fk, ["--dh", str(EXAMPLES_DIR / "scara.yaml"), "--q=pi/4,-pi/3,0.1,0"]) == 0
    rows = table_rows(capsys.readouterr().out)
    expected = ex.scara().tool_pose([math.pi / 4, -math.pi / 3, 0.1, 0.0])[:3, 3]
    np.testing.assert_allclose(rows["tool"][:3], expected, atol=1e-5)


def test_fk_draws_a_png(tmp_path, capsys):
    out = tmp_path / "ur5.png"
    assert run(fk, ["--dh", "ur5", "--png", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20_000
    assert f"wrote {out}" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--dh", "puma"], "--dh 'puma' is neither a built-in table ['2r', 'scara', 'ur5'] nor a YAML file"),
    (["--dh", "2r", "--q", "0.1", "abc"], "--q value 'abc' is not a number"),
    (["--dh", "2r", "--q", "0.1"], "--q needs 2 values for the DH table 2r, got 1"),
    (["--robot", "ur5", "--q", "0.1"], "--q needs 6 values for ur5 (shoulder_pan_joint, "),
])
def test_fk_bad_input_returns_2_with_the_reason(argv, message, capsys):
    assert run(fk, argv) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("name, make", [("ur5", ex.ur5), ("scara", ex.scara), ("planar_2r", ex.planar_2r)])
def test_example_files_equal_the_python_tables(name, make):
    from_file, built_in = dh2urdf.load_dh_yaml(EXAMPLES_DIR / f"{name}.yaml"), make()
    assert from_file.rows == built_in.rows and from_file.convention == built_in.convention
    rng = np.random.default_rng(1)
    for _ in range(20):
        q = built_in.random_q(rng)
        np.testing.assert_allclose(from_file.fk(q), built_in.fk(q), atol=1e-15)


def test_dh2urdf_writes_a_urdf_that_matches_the_ur5_description(tmp_path, capsys, ur5):
    out = tmp_path / "ur5_dh.urdf"
    assert run(dh2urdf, [str(EXAMPLES_DIR / "ur5.yaml"), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "8 frames at 100 random configurations" in text and "(ok, tolerance 1e-09)" in text
    written = RobotModel.from_urdf_file(out, "base", "tool")
    rng = np.random.default_rng(2)
    for _ in range(100):
        q = ur5.random_positions(rng)
        np.testing.assert_allclose(written.fk(q).homogeneous, ur5.fk(q).homogeneous, atol=1e-9)


def test_fk_check_detects_a_urdf_of_another_table():
    """Control: the printed check is evidence only if it fails for a wrong URDF (a2 off by 1 mm)."""
    robot = ex.ur5()
    rows = list(robot.rows)
    rows[1] = dataclasses.replace(rows[1], a=rows[1].a - 1e-3)
    wrong = dh_robot_model(dataclasses.replace(robot, rows=tuple(rows)))
    worst_p, _ = dh2urdf.fk_check(robot, wrong, 20, 0)
    assert 1e-4 < worst_p <= 1e-3 + 1e-12


def write(tmp_path, text):
    path = tmp_path / "table.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("rows, messages", [
    ("- {a: 0.1, alpha: 0, type: revolute}", ["row 0: missing field 'd'"]),
    ("- {a: abc, alpha: 0, d: 0, type: revolute}", ["row 0: a must be a number, got 'abc'"]),
    ("- {a: 0.1, alpha: 0, d: 0, type: revolute}\n- {a: 0.1, alpha: .nan, d: 0, type: revolute}",
     ["row 1: alpha must be a finite number, got nan"]),
    ("- {a: 0.1, alpha: 0, d: 0, type: hinge}", ["row 0: type must be one of ['revolute', 'prismatic'], got 'hinge'"]),
    ("- {a: 0.1, alfa: 0, d: 0, type: revolute, lower: yes}",
     ["row 0: missing field 'alpha'", "row 0: unknown field 'alfa'", "row 0: lower must be a number, got True"]),
    ("- [0.1, 0, 0]", ["row 0: must be a mapping of fields"]),
])
def test_dh2urdf_reports_malformed_tables_by_row_and_field(tmp_path, capsys, rows, messages):
    out = tmp_path / "robot.urdf"
    assert run(dh2urdf, [str(write(tmp_path, f"convention: standard\nrows:\n{rows}\n")), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("robokin dh2urdf: error: invalid DH table")
    for message in messages:
        assert message in err, err
    assert not out.exists()


def test_dh2urdf_reports_a_missing_file_and_a_bad_base(tmp_path, capsys):
    assert run(dh2urdf, [str(tmp_path / "nope.yaml"), "--out", str(tmp_path / "r.urdf")]) == 2
    assert "nope.yaml: DH table not found" in capsys.readouterr().err
    table = write(tmp_path, "base: {xyz: [0, 0], rpy: [0, 0, 0]}\nrows:\n- {a: 1, alpha: 0, d: 0, type: revolute}\n")
    assert run(dh2urdf, [str(table), "--out", str(tmp_path / "r.urdf")]) == 2
    assert "base: xyz and rpy must be 3 finite numbers each (xyz must have 3 entries" in capsys.readouterr().err


@pytest.mark.parametrize("text, value", [("pi/2", math.pi / 2), ("-2*pi", -2 * math.pi), ("0.5pi", math.pi / 2),
                                         ("1e-3", 1e-3), (3, 3.0), ("-pi", -math.pi)])
def test_parse_number_accepts_multiples_of_pi(text, value):
    assert dh2urdf.parse_number(text) == pytest.approx(value, abs=1e-15)


@pytest.mark.parametrize("text", [True, "pi*2", "2pi/", "one", None, [1.0]])
def test_parse_number_refuses_everything_else(text):
    with pytest.raises(ValueError, match="is not a number"):
        dh2urdf.parse_number(text)
