"""One distro per environment, and the rclpy differences between Jazzy (rclpy 7.1) and Kilted (rclpy 9.1) handled.

The venv records its distro (scripts/setup.sh writes `.robokin-distro`); a sourced ROS 2 install says it in
ROS_DISTRO. Everything ROS in the environment must be that distro's: rclpy's release line and the vendored
control_msgs text, whose FollowJointTrajectory differs between the two.
"""
import os
import sys
from importlib import metadata
from pathlib import Path

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from robokin_ros.ros import rclpy_compat
from robokin_ros.ros.runtime import run_node

RCLPY_MAJOR = {"jazzy": 7, "kilted": 9}        # rclpy's release line per distro (rosdistro's distribution.yaml)


def environment_distro() -> str:
    marker = Path(sys.prefix) / ".robokin-distro"
    if marker.is_file():
        return marker.read_text().strip()
    if os.environ.get("ROS_DISTRO"):
        return os.environ["ROS_DISTRO"]
    pytest.skip("neither a robokin venv (.robokin-distro) nor a sourced ROS 2 install (ROS_DISTRO) says the distro")


def rclpy_version() -> str:
    try:
        return metadata.version("ros-rclpy")                 # the wheel venv
    except metadata.PackageNotFoundError:                    # a ROS 2 install: rclpy's package.xml
        import xml.etree.ElementTree as ET

        from ament_index_python.packages import get_package_share_directory
        return ET.parse(Path(get_package_share_directory("rclpy")) / "package.xml").getroot().findtext("version")


def test_rclpy_is_the_environments_distro():
    distro = environment_distro()
    assert distro in RCLPY_MAJOR, f"robokin supports {sorted(RCLPY_MAJOR)}, this environment holds {distro}"
    assert int(rclpy_version().split(".")[0]) == RCLPY_MAJOR[distro], rclpy_version()


def test_follow_joint_trajectory_is_the_environments_definition():
    """Kilted's feedback added `index` and `multi_dof_index`; a Jazzy controller's has neither."""
    from control_msgs.action import FollowJointTrajectory

    feedback = FollowJointTrajectory.Feedback.get_fields_and_field_types()
    has_index = {"index", "multi_dof_index"} <= set(feedback)
    assert has_index == (environment_distro() == "kilted"), sorted(feedback)


class StopsItself(Node):
    """A node that asks for shutdown once it has spun, so run_node returns on its own."""

    default_name = "stops_itself"
    spun = 0

    def __init__(self) -> None:
        super().__init__(self.default_name)
        self.create_timer(0.01, self._stop)

    def _stop(self) -> None:
        type(self).spun += 1
        rclpy.try_shutdown(context=self.context)


@pytest.mark.parametrize("executor_factory", [SingleThreadedExecutor, rclpy_compat.events_executor])
@pytest.mark.parametrize("init_returns_none", [False, True])
def test_run_node_starts_and_stops_whatever_rclpy_init_returns(monkeypatch, executor_factory, init_returns_none):
    """Jazzy's rclpy.init returns None, Kilted's a context manager; with None forced here, the code that entered
    the return value as a context manager died with a TypeError on every distro."""
    if init_returns_none:
        real_init = rclpy.init
        monkeypatch.setattr(rclpy, "init", lambda *args, **kwargs: real_init(*args, **kwargs) and None)
    StopsItself.spun = 0
    assert run_node(StopsItself, args=[], executor_factory=executor_factory) == 0
    assert StopsItself.spun >= 1
    assert not rclpy.ok(), "the default context is left shut down"


def test_the_default_context_can_be_started_again_after_a_shutdown():
    for _ in range(2):
        context = rclpy_compat.init_default_context([])
        assert context.ok()
        rclpy_compat.shutdown_default_context()
        assert not context.ok()
    rclpy_compat.shutdown_default_context()          # a second shutdown is harmless


def test_an_unparsable_argument_is_refused_by_init_and_leaves_nothing_up(capsys):
    assert run_node(StopsItself, args=["--ros-args", "--params-file", "/no/such/file.yaml"]) == 1
    assert "cannot start" in capsys.readouterr().err
    assert not rclpy.ok()


def test_the_events_executor_is_used_where_rclpy_has_it():
    """rclpy.experimental.EventsExecutor is a factory function of a C++ class, not a class, in both releases."""
    executor = rclpy_compat.events_executor()
    try:
        import rclpy.experimental  # noqa: F401
    except ImportError:
        assert isinstance(executor, SingleThreadedExecutor)
    else:
        assert type(executor).__name__ == "EventsExecutor", type(executor)
    executor.shutdown()
