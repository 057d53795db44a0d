"""Start a graph of node executables as child processes: the stand-in for `ros2 launch` where launch is missing."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from robokin_ros.share_files import executable


@dataclass
class NodeProcess:
    """One node executable with its ROS arguments; `log` receives its stdout and stderr."""

    name: str
    params_files: list[Path] = field(default_factory=list)
    params: dict[str, str] = field(default_factory=dict)
    remaps: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen | None = None
    log: Path | None = None

    def command(self) -> list[str]:
        args = [str(executable(self.name)), "--ros-args"]
        for path in self.params_files:
            args += ["--params-file", str(path)]
        for key, value in self.params.items():
            args += ["-p", f"{key}:={value}"]
        for old, new in self.remaps.items():
            args += ["-r", f"{old}:={new}"]
        return args


class NodeGraph:
    """Starts nodes, keeps their logs, and stops them all (SIGINT, then SIGKILL) on exit."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.nodes: list[NodeProcess] = []

    def start(self, node: NodeProcess) -> NodeProcess:
        node.log = self.log_dir / f"{node.name}.log"
        stream = open(node.log, "w")   # noqa: SIM115 - closed in stop()
        node.process = subprocess.Popen(node.command(), stdout=stream, stderr=subprocess.STDOUT,
                                        env=dict(os.environ, PYTHONUNBUFFERED="1"), start_new_session=True)
        self.nodes.append(node)
        return node

    def dead(self) -> list[str]:
        """Nodes that have exited, with their exit code and the end of their log."""
        report = []
        for node in self.nodes:
            if node.process is not None and node.process.poll() is not None:
                tail = node.log.read_text().strip().splitlines()[-5:] if node.log else []
                report.append(f"{node.name} exited with {node.process.returncode}: " + " | ".join(tail))
        return report

    def stop(self, timeout_s: float = 5.0) -> None:
        for node in self.nodes:
            if node.process is not None and node.process.poll() is None:
                node.process.send_signal(signal.SIGINT)
        deadline = time.monotonic() + timeout_s
        for node in self.nodes:
            if node.process is None:
                continue
            try:
                node.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(node.process.pid, signal.SIGKILL)
                node.process.wait()

    def __enter__(self) -> NodeGraph:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
