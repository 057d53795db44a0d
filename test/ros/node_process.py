"""Node executables as subprocesses, found as `ros2 run` finds them (importable: `from node_process import Process`).

`robokin_ros.share_files.executable` looks in the ament index first (`<prefix>/lib/robokin_ros`, where colcon installs
them), then beside this interpreter (a venv's bin/), so the same tests run in the wheel venv and under `colcon test`.
"""
import os
import signal
import subprocess
import time
from pathlib import Path

from robokin_ros.share_files import executable

PACKAGE_DIR = Path(__file__).resolve().parents[2]


class Process:
    """A node executable started with `--ros-args ...`; output captured to a file for assertions."""

    def __init__(self, name: str, args: list[str], log_dir: Path) -> None:
        self.log_path = log_dir / f"{name}-{time.monotonic_ns()}.log"
        self._log = open(self.log_path, "w")
        self.popen = subprocess.Popen([str(executable(name)), *args], stdout=self._log,
                                      stderr=subprocess.STDOUT, cwd=PACKAGE_DIR, env=os.environ.copy())

    @property
    def output(self) -> str:
        self._log.flush()
        return self.log_path.read_text()

    def wait(self, timeout: float = 30.0) -> int:
        return self.popen.wait(timeout=timeout)

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGINT)
            try:
                self.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        self._log.close()
