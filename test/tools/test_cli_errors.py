"""Bad input on the command line (issue 24, items 10 and 13): every error is one line on stderr naming the file and
the line where there is a file, with exit code 2 and no traceback.

The command tools run as `python -m ...` subprocesses for one case each (the real entry points, what a student
types); the table of cases runs their `main()` in this process with fd-level capture (capfd), which also sees what
C++ libraries print on fd 2, at a fraction of the cost of one process per case.
"""
import subprocess
import sys
import textwrap

import pytest

from robokin_ros.tools import capability_view, plan_path
from robokin_ros.tools.robokin_cli import main as robokin

CASES = {
    # name: file text
    "wp_syntax.yaml": "robot: panda\nwaypoints:\n  - position: [0.4, 0, 0.5\n",
    "wp_strings.yaml": "robot: panda\nrelative: true\nwaypoints:\n  - position: [0.0, 0.0, -0.02]\n"
                       "  - position: ['a', 0, 0.4]\n",
    "wp_ok.yaml": "robot: panda\nrelative: true\nwaypoints:\n  - position: [0.0, 0.0, -0.02]\n",
    "prog_syntax.yaml": "moves:\n  - {type: MoveL, position: [0.1, 0, 0]\n",
    "prog_strings.yaml": "relative: true\nmoves:\n  - {type: MoveL, position: [0.0, 0, -0.02]}\n"
                         "  - {type: MoveL, position: ['a', 0, 0]}\n",
    "cfg_syntax.yaml": "path_ik_node:\n  ros__parameters: {blend_radius: 0.1\n",
    "cfg_unknown.yaml": "path_ik_node:\n  ros__parameters:\n    blend_radius: 0.01\n    blend_radus: 3\n",
    "wp_text.csv": "x,y,z\n0.4,0,0.5\n0.4,abc,0.5\n",
    "dh_syntax.yaml": "rows:\n  - {a: 0.1, alpha: 0, d: 0, type: revolute\n",
    "dh_rows.yaml": "convention: standard\nrows:\n  - {a: 0.1, alfa: 0, d: 0, type: revolute}\n"
                    "  - {a: x, alpha: 0, d: 0, type: revolute}\n",
    "bad.urdf": "<robot name='x'><link name='a'/><joint name='j' type='revolute'><parent link='a'/></joint></robot>",
    "data_nan.csv": "q1,q2,x,y,z\n1,2,3,4,5\n\n1,nan,3,4,5\n",
    "data_text.csv": "q1,q2,x,y,z\n1,2,3,4,5\n1,2,three,4,5\n",
    "data_quaternion.csv": "1,2,3,4,5,0,0,0,1\n1,2,3,4,5,0,0,0,2\n",
}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli_errors")
    for name, text in CASES.items():
        (folder / name).write_text(text)
    return folder


def run_main(capfd, main, argv):
    """(exit code, stdout, stderr) of a CLI main() in this process (argparse's SystemExit included)."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as stop:
        code = stop.code
    out, err = capfd.readouterr()
    return code, out, err


def assert_one_line_error(code, err, words):
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, f"exit {code}, {len(lines)} lines on stderr:\n{err}"
    for word in words:
        assert word in lines[0], f"{word!r} not in {lines[0]!r}"


PLAN_PATH_CASES = [
    (["wp_syntax.yaml"], ["plan_path: error: ", "wp_syntax.yaml:4: not valid YAML", "flow sequence at line 3"]),
    (["prog_syntax.yaml"], ["prog_syntax.yaml:3: not valid YAML", "flow mapping at line 2"]),
    (["wp_strings.yaml"], ["wp_strings.yaml:5: waypoint 1: position must be 3 finite numbers, got ['a', 0, 0.4]"]),
    (["prog_strings.yaml"], ["prog_strings.yaml:4: moves[1].position: ['a', 0, 0] is not a list of numbers"]),
    (["wp_ok.yaml", "--config", "cfg_syntax.yaml"], ["cfg_syntax.yaml:3: not valid YAML"]),
    (["wp_ok.yaml", "--config", "cfg_unknown.yaml"], ["cfg_unknown.yaml:4: unknown parameter 'blend_radus'"]),
    (["wp_text.csv"], ["wp_text.csv:3: 'abc' is not a number"]),
    (["wp_ok.yaml", "--start", "0,x"], ["--start: 'x' is not a number"]),
    (["wp_ok.yaml", "--robot", "pandaa"], ["unknown robot 'pandaa' (did you mean 'panda'?); known: ["]),
    (["wp_ok.yaml", "--blend-radius", "abc"], ["invalid float value: 'abc'", "(see plan_path --help)"]),
    (["missing.yaml"], ["missing.yaml: waypoint file not found"]),
]


@pytest.mark.parametrize("argv, words", PLAN_PATH_CASES, ids=[" ".join(a) for a, _ in PLAN_PATH_CASES])
def test_plan_path_bad_input_is_one_line_naming_file_and_line(files, capfd, monkeypatch, argv, words):
    monkeypatch.chdir(files)
    assert_one_line_error(*run_main(capfd, plan_path.main, argv)[::2], words)


ROBOKIN_CASES = [
    (["fk", "--dh", "dh_syntax.yaml"], ["robokin fk: error: invalid DH table: ", "dh_syntax.yaml:3: not valid YAML",
                                        "flow mapping at line 2"]),
    (["dh2urdf", "dh_syntax.yaml", "--out", "o.urdf"], ["dh_syntax.yaml:3: not valid YAML"]),
    (["calibrate", "--dh", "dh_syntax.yaml", "--data", "data_nan.csv"], ["dh_syntax.yaml:3: not valid YAML"]),
    (["dh2urdf", "dh_rows.yaml", "--out", "o.urdf"], ["dh_rows.yaml:3: row 0: missing field 'alpha'",
                                                      "; dh_rows.yaml:4: row 1: a must be a number, got 'x'"]),
    (["dh2urdf", "missing.yaml", "--out", "o.urdf"], ["missing.yaml: DH table not found"]),
    (["workspace", "--robot", "pandaa"], ["robokin workspace: error: unknown robot 'pandaa' (did you mean 'panda'?)"]),
    (["calibrate", "--robot", "pandaa", "--data", "data_nan.csv"], ["unknown robot 'pandaa'"]),
    (["calibrate", "--dh", "2r", "--data", "data_nan.csv"], ["data_nan.csv:4: column 2 is nan"]),
    (["calibrate", "--dh", "2r", "--data", "data_text.csv"], ["data_text.csv:3: a value is not a number"]),
    (["calibrate", "--dh", "2r", "--data", "data_quaternion.csv"],
     ["data_quaternion.csv:2: the quaternion qx, qy, qz, qw has norm 2, not 1"]),
    (["calibrate", "--dh", "2r", "--data", "missing.csv"], ["missing.csv: data file not found"]),
    (["workspace", "--robot", "bad.urdf", "--base-frame", "a", "--tip-frame", "b"],
     ["bad.urdf does not contain a valid URDF model", "(Joint [j] is of type REVOLUTE but it does not specify limits"]),
    (["workspace", "--robot", "panda", "--samples", "0"], ["--samples and --bins must be >= 1"]),
    (["fk", "--robot", "pandaa"], ["no embedded robot named 'pandaa'; known: ["]),
    (["fk", "--robot", "panda", "--q", "0", "-pi/2"], ["--q needs 7 values for panda (panda_joint1, "]),
    (["fk"], ["one of the arguments --dh --robot is required", "(see robokin fk --help)"]),
    (["ik", "--robot", "ur5", "--pose", "1", "2"], ["--pose needs x y z roll pitch yaw, got 2 numbers"]),
    (["ik", "--robot", "ur5", "--pose", "a", "b"], ["argument --pose: 'a' is not a number"]),
    (["ik", "--robot", "kr600", "--pose", "1", "2"], ["argument --robot: invalid choice: 'kr600'"]),
    (["nosuch"], ["invalid choice: 'nosuch'", "(see robokin --help)"]),
]


@pytest.mark.parametrize("argv, words", ROBOKIN_CASES, ids=[" ".join(a) for a, _ in ROBOKIN_CASES])
def test_robokin_bad_input_is_one_line_naming_file_and_line(files, capfd, monkeypatch, argv, words):
    monkeypatch.chdir(files)
    assert_one_line_error(*run_main(capfd, robokin, argv)[::2], words)


@pytest.mark.parametrize("argv, words", [
    (["--torque-limits", "1,2"], ["capability_view: error: invalid capability configuration: torque_limits has 2 "
                                  "entries but the chain has 7 joints"]),
    (["--torque-limits", "a"], ["--torque-limits must be comma-separated numbers, got 'a'"]),
    (["--robot", "pandaa"], ["unknown robot 'pandaa'"]),
])
def test_capability_view_bad_input_is_one_line(capfd, tmp_path, argv, words):
    assert_one_line_error(*run_main(capfd, capability_view.main, [*argv, "--out", tmp_path / "c.png"])[::2], words)


def test_q_values_may_follow_a_space_even_when_they_start_with_minus_pi(capfd):
    code, out, err = run_main(capfd, robokin, ["fk", "--robot", "panda", "--q", "-pi/2", "0", "0", "-2", "0", "1",
                                               "0"])
    assert code == 0 and not err, err
    assert out.startswith("panda at q = [-1.5708,  0.    ,  0.    , -2.    ,  0.    ,  1.    ,  0.    ]"), out
    code, out, _ = run_main(capfd, robokin, ["ik", "--robot", "ur5", "--from-q", "0", "-pi/2", "pi/2", "-pi/2",
                                             "-pi/2", "0", "--seed", "0", "-pi/2", "pi/2", "-pi/2", "-pi/2", "0"])
    first = [line for line in out.splitlines() if "shoulder=" in line][0].split()
    expected = [0, -1.5708, 1.5708, -1.5708, -1.5708, 0]
    assert code == 0 and [float(v) for v in first[4:10]] == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("module, argv, words", [
    ("robokin_ros.tools.plan_path", ["wp_syntax.yaml"], ["wp_syntax.yaml:4: not valid YAML"]),
    ("robokin_ros.tools.robokin_cli", ["dh2urdf", "dh_syntax.yaml", "--out", "o.urdf"],
     ["dh_syntax.yaml:3: not valid YAML"]),
])
def test_the_commands_as_students_run_them(files, module, argv, words):
    done = subprocess.run([sys.executable, "-m", module, *argv], cwd=files, capture_output=True, text=True,
                          timeout=120)
    assert_one_line_error(done.returncode, done.stderr, words)
    assert not done.stdout


def test_yaml_problems_name_the_line_of_the_value(tmp_path):
    """The line numbers come from the YAML nodes, not from counting: a flow list spread over lines, a comment."""
    from robokin_ros.core.yaml_lines import line_of, read_yaml
    path = tmp_path / "f.yaml"
    path.write_text(textwrap.dedent("""\
        # a comment
        waypoints:
          - position: [0.1,
                       0.2, 0.3]
            rpy: [0, 0, 1]
          - {position: [1, 2, 3]}
        """))
    data = read_yaml(path)
    assert line_of(data, "waypoints") == 2 and line_of(data["waypoints"], 1) == 6
    assert line_of(data["waypoints"][0], "rpy") == 5 and data["waypoints"][0]["position"] == [0.1, 0.2, 0.3]
