"""`robokin_studio`, the command the README gives: it serves the page on a local port, stops on Ctrl-C, and refuses
bad arguments with a sentence instead of a traceback."""
import importlib.util
import signal
import subprocess
import sys
import time
import urllib.request

import pytest
from studio_helpers import STUDIO_EXTRAS, free_port, need_modules

from robokin_ros.share_files import executable
from robokin_ros.studio.main import PIP_EXTRAS, main, parse_args


def test_the_command_serves_the_page_and_stops_on_ctrl_c():
    need_modules(*STUDIO_EXTRAS)
    port = free_port()
    process = subprocess.Popen([str(executable("robokin_studio")), "--port", str(port), "--render", "light"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline, said = time.monotonic() + 60.0, ""
        while time.monotonic() < deadline and "open http://" not in said:
            line = process.stdout.readline()
            assert line or process.poll() is None, f"robokin_studio ended early:\n{said}"
            said += line
        assert f"open http://127.0.0.1:{port}" in said, said
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}", timeout=10).read().decode()
        assert "<html" in page.lower()
    finally:
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=20)
    assert code == 0


def test_an_unknown_robot_is_refused_with_the_embedded_names(capsys):
    need_modules(*STUDIO_EXTRAS)          # without them the command stops earlier, naming the missing extra
    assert main(["--robot", "no_such_arm", "--port", str(free_port())]) == 2
    said = capsys.readouterr().err
    assert "no_such_arm" in said and "panda" in said


@pytest.mark.parametrize("args, words", [(["--rate", "0"], "--rate must be > 0"),
                                         (["--triangles", "-5"], "--triangles must be >= -1"),
                                         (["--render", "fancy"], "invalid choice")])
def test_bad_options_are_refused(args, words, capsys):
    with pytest.raises(SystemExit) as stop:
        parse_args(args)
    assert stop.value.code == 2 and words in capsys.readouterr().err


@pytest.mark.parametrize("absent", [["viser"], ["fast_simplification"], ["viser", "fast_simplification"]])
def test_every_missing_studio_extra_is_named(monkeypatch, capsys, absent):
    for module in absent:
        monkeypatch.setitem(sys.modules, module, None)      # what `import viser` meets without the pip extra
    missing = [module for module in PIP_EXTRAS if importlib.util.find_spec(module) is None]   # absent + not here
    assert set(absent) <= set(missing)
    assert main(["--port", str(free_port())]) == 2
    assert f"needs {', '.join(missing)}: pip install -r requirements/studio.txt" in capsys.readouterr().err


def test_a_misspelt_robot_is_named_as_such_before_any_server_starts(capfd):
    """Issue 24 item 13: "unknown robot 'pandaa'" (not "base_frame and tip_frame are required"), one line, and no
    HTTP banner: the robot is checked before viser's server exists."""
    need_modules(*STUDIO_EXTRAS)
    assert main(["--robot", "pandaa", "--port", str(free_port())]) == 2
    out, err = capfd.readouterr()
    assert err.strip() == err.strip().splitlines()[0], err
    assert "robokin_studio: error: unknown robot 'pandaa' (did you mean 'panda'?); known: [" in err
    assert "HTTP" not in out + err and "viser" not in out + err


def test_a_malformed_urdf_is_refused_in_one_line_with_the_parsers_reason(tmp_path):
    """Issue 24 item 13: urdfdom prints its reasons on fd 2 (two lines each) before Pinocchio raises; they are
    folded into the one refusal line, and the studio never printed its banner."""
    need_modules(*STUDIO_EXTRAS)
    urdf = tmp_path / "bad.urdf"
    urdf.write_text("<robot name='x'><link name='a'/><joint name='j' type='revolute'><parent link='a'/></joint>"
                    "</robot>")
    done = subprocess.run([sys.executable, "-m", "robokin_ros.studio.main", "--robot", str(urdf), "--base-frame", "a",
                           "--tip-frame", "b", "--port", str(free_port())], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and not done.stdout, done.stdout
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert (f"robokin_studio: error: cannot parse URDF: The file {urdf} does not contain a valid URDF model. "
            "(Joint [j] is of type REVOLUTE but it does not specify limits") in done.stderr
