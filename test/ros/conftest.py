"""rclpy fixtures for ROS tests: an isolated context per test, spin_until, node executables as subprocesses.

Discovery stays on loopback and the session uses one random ROS_DOMAIN_ID (unless one is set), so parallel
runs on one machine never see each other. Waits are on conditions with >= 10 s timeouts, never fixed sleeps.
"""
import gc
import os
import random

import pytest

os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(1, 100)))
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

import rclpy  # noqa: E402  (after the environment is set)
from rclpy.context import Context  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from node_process import Process  # noqa: E402
from ros_helpers import spin_for, spin_until  # noqa: E402,F401  (re-exported for tests)


# Nodes built in a test's context load the Panda unless the test passes another robot (a node given no model at all
# fails, as it would from a launch file): a context-wide parameter, as `ros2 run ... --ros-args -p robot:=panda`.
DEFAULT_ROBOT_ARGS = ["--ros-args", "-p", "robot:=panda"]


@pytest.fixture
def ros():
    """(context, executor): an rclpy context of its own, with `DEFAULT_ROBOT_ARGS`; nodes added to the executor are
    destroyed after."""
    context = Context()
    rclpy.init(context=context, args=DEFAULT_ROBOT_ARGS)
    executor = SingleThreadedExecutor(context=context)
    gc.collect()
    gc.freeze()        # as run_node does: no long collector pauses in the shared in-process loop
    try:
        yield context, executor
    finally:
        gc.unfreeze()
        for node in list(executor.get_nodes()):
            executor.remove_node(node)
            node.destroy_node()
        executor.shutdown()
        rclpy.try_shutdown(context=context)


@pytest.fixture
def probe(ros):
    """(node, executor): a plain node in the test's context, to look at and talk to node processes."""
    from rclpy.node import Node

    context, executor = ros
    node = Node("probe", context=context)
    executor.add_node(node)
    return node, executor


@pytest.fixture
def launch(tmp_path):
    """launch(executable, *ros_args) -> Process; every process is stopped (SIGINT, then kill) after the test."""
    started: list[Process] = []

    def start(executable: str, *args: str) -> Process:
        process = Process(executable, list(args), tmp_path)
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()
