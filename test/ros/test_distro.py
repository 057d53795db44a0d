"""One distro per environment, and the rclpy differences between Jazzy (rclpy 7.1) and Kilted (rclpy 9.1) handled:
start-up and shutdown, the action client's threading, the action server's result lifetime.

The venv records its distro (scripts/setup.sh writes `.robokin-distro`); a sourced ROS 2 install says it in
ROS_DISTRO. Everything ROS in the environment must be that distro's: rclpy's release line and the vendored
control_msgs text, whose FollowJointTrajectory differs between the two.
"""
import os
import sys
import threading
import time
from importlib import metadata
from pathlib import Path

import pytest
import rclpy
from rclpy.action import ActionClient
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from ros_helpers import spin_for, spin_until
from sensor_msgs.msg import JointState

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


class StoppedWhileBuilding(Node):
    """SIGINT / SIGTERM arriving while the node is built: the context goes down, the next rclpy call raises."""

    default_name = "stopped_while_building"

    def __init__(self) -> None:
        super().__init__(self.default_name)
        rclpy.try_shutdown(context=self.context)
        self.create_publisher(JointState, "~/late", 1)


class StoppedWhilePublishing(Node):
    """SIGINT / SIGTERM arriving inside a timer callback: the callback's publish meets an invalid context."""

    default_name = "stopped_while_publishing"

    def __init__(self) -> None:
        super().__init__(self.default_name)
        self._pub = self.create_publisher(JointState, "~/late", 1)
        self.create_timer(0.01, self._tick)

    def _tick(self) -> None:
        rclpy.try_shutdown(context=self.context)
        self._pub.publish(JointState())


class BrokenWhileRunning(StoppedWhilePublishing):
    """A real fault (the context is still up): it must not be mistaken for a shutdown."""

    default_name = "broken_while_running"

    def _tick(self) -> None:
        raise ZeroDivisionError("a bug in a callback")


@pytest.mark.parametrize("node_cls", [StoppedWhileBuilding, StoppedWhilePublishing])
def test_a_stop_request_during_start_up_or_a_callback_ends_the_node_quietly(node_cls):
    """ros2 launch reports a non-zero exit as a crash; a node asked to stop must exit 0 whenever the request came."""
    assert run_node(node_cls, args=[]) == 0


def test_a_fault_in_a_callback_is_still_raised():
    with pytest.raises(ZeroDivisionError):
        run_node(BrokenWhileRunning, args=[])
    assert not rclpy.ok()


class DelayedSend:
    """An action client's rcl handle whose goal requests return only after `delay` [s]: the executor takes the
    server's answer in the meantime, as when the sending thread is descheduled right after sending."""

    def __init__(self, handle, delay: float) -> None:
        self._handle, self._delay = handle, delay

    def send_goal_request(self, request):
        sequence = self._handle.send_goal_request(request)
        time.sleep(self._delay)
        return sequence

    def __getattr__(self, name):
        return getattr(self._handle, name)

    def __enter__(self):
        return self._handle.__enter__()

    def __exit__(self, *exc):
        return self._handle.__exit__(*exc)


@pytest.mark.parametrize("client_cls", [rclpy_compat.ThreadSafeActionClient, ActionClient])
def test_a_goal_sent_from_another_thread_gets_its_answer(ros, client_cls):
    """rclpy 7.1's ActionClient drops an answer taken between sending and recording the request (rclpy #1123);
    path_ik_node sends FollowJointTrajectory goals from a worker thread, so it uses ThreadSafeActionClient. The plain
    client is the control: it must lose the answer on rclpy 7 (Jazzy) and keep it on rclpy 9 (Kilted)."""
    from control_msgs.action import FollowJointTrajectory

    context, executor = ros
    server_node, client_node = Node("fjt_server", context=context), Node("fjt_client", context=context)
    rclpy_compat.action_server(server_node, FollowJointTrajectory, "fjt",
                               execute_callback=lambda handle: handle.succeed() or FollowJointTrajectory.Result())
    client = client_cls(client_node, FollowJointTrajectory, "fjt")
    for node in (server_node, client_node):
        executor.add_node(node)
    spinning = threading.Event()
    spinning.set()

    def spin() -> None:
        while spinning.is_set():
            executor.spin_once(timeout_sec=0.01)

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        assert client.wait_for_server(timeout_sec=15.0)
        client._client_handle = DelayedSend(client._client_handle, delay=0.3)
        future = client.send_goal_async(FollowJointTrajectory.Goal())
        answered = threading.Event()
        future.add_done_callback(lambda _: answered.set())
        answered.wait(5.0)
    finally:
        spinning.clear()
        spinner.join()
    lost = not future.done()
    expected_lost = client_cls is ActionClient and int(rclpy_version().split(".")[0]) < 9
    assert lost == expected_lost, f"{client_cls.__name__} on rclpy {rclpy_version()}: answer lost = {lost}"
    if not lost:
        assert future.result().accepted


def test_a_finished_goals_result_is_kept_for_a_late_client(ros):
    """Kilted's rclpy drops a result 10 s after the goal ends unless told otherwise; robokin's servers keep it for
    rclpy_compat.RESULT_TIMEOUT (900 s, Jazzy's and rclcpp's default) on both distros."""
    from action_msgs.msg import GoalStatus
    from control_msgs.action import FollowJointTrajectory

    context, executor = ros
    server_node, client_node = Node("late_server", context=context), Node("late_client", context=context)
    result = FollowJointTrajectory.Result(error_string="kept")
    rclpy_compat.action_server(server_node, FollowJointTrajectory, "late",
                               execute_callback=lambda handle: handle.succeed() or result)
    client = ActionClient(client_node, FollowJointTrajectory, "late")
    for node in (server_node, client_node):
        executor.add_node(node)
    assert spin_until(executor, client.server_is_ready)
    sent = client.send_goal_async(FollowJointTrajectory.Goal())
    assert spin_until(executor, sent.done)
    first = sent.result().get_result_async()
    assert spin_until(executor, first.done) and first.result().status == GoalStatus.STATUS_SUCCEEDED
    spin_for(executor, 11.0)                              # past Kilted's 10 s default, counted from the goal's end
    late = sent.result().get_result_async()
    assert spin_until(executor, late.done)
    assert late.result().status == GoalStatus.STATUS_SUCCEEDED, late.result().status
    assert late.result().result.error_string == "kept"
