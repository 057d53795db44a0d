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

from robokin_ros.paths import executable
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
