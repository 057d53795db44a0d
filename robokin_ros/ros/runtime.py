"""What every robokin node shares: boot (parameters + robot), the main() wrapper, throttled logs, the
receive-time clock, and a side subscription for nodes on a multi-threaded executor."""
from __future__ import annotations

import gc
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

import rclpy
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.utilities import get_default_context

from robokin_ros.core.errors import RobokinError
from robokin_ros.core.robot import RobotModel
from robokin_ros.ros.joint_limits_params import with_planning_jerk
from robokin_ros.ros.params import declare_config
from robokin_ros.ros.robot_description import load_robot
from robokin_ros.ros.rclpy_compat import init_default_context, shutdown_default_context

# Queue depths: commands and states get a few messages of slack for a briefly stalled executor; topics where only
# the newest message matters (markers, a fire-and-forget path, a joint state sampled at a low rate) keep one.
QUEUE_DEPTH = 10
LATEST_ONLY = 1

SPIN_SLICE = 0.1     # [s] longest wait inside the executor before run_node looks at the context again

# Receive times come from the monotonic clock, never from message stamps: a zero stamp or a paused
# simulation clock must not be able to keep a stale command alive.
receive_time: Callable[[], float] = time.monotonic

# A process preempted between reading the receive clock and the ROS clock (4-8 ms is common with both cores busy)
# pairs two moments that far apart: a joint state stamped so carries positions of a later time, and a trajectory
# start carried over between the clocks shifts by as much.
CLOCK_PAIR_TOLERANCE = 50e-6     # [s] widest receive-clock bracket accepted around a ROS clock read
CLOCK_PAIR_TRIES = 5


def paired_clock_read(clock) -> tuple[float, int]:
    """(receive time [s], `clock`'s time [ns]) of one moment: the ROS clock read between two receive-clock reads,
    retried while the bracket is wider than CLOCK_PAIR_TOLERANCE (the narrowest bracket after CLOCK_PAIR_TRIES)."""
    best_width, best = float("inf"), (0.0, 0)
    for _ in range(CLOCK_PAIR_TRIES):
        before = receive_time()
        clock_ns = clock.now().nanoseconds
        after = receive_time()
        if after - before < best_width:
            best_width, best = after - before, (0.5 * (before + after), clock_ns)
        if best_width <= CLOCK_PAIR_TOLERANCE:
            break
    return best


class Boot(NamedTuple):
    """What every node starts from: its validated configuration and the robot chain it names."""

    config: Any
    robot: RobotModel


def boot(node: Node, config_cls: type) -> Boot:
    """Declare the node's parameters from `config_cls` (a `schema.NodeConfig`), read them and load the robot (from
    the parameters, else from the robot_description topic: `ros.robot_description.load_robot`).

    Raises:
        ConfigError: every invalid parameter at once. ModelError / UnknownFrameError: no model, or the robot
            cannot be loaded.
    """
    config = declare_config(node, config_cls)
    robot = load_robot(node, config)
    config.check_joint_lists(robot.joint_names)
    if hasattr(config, "max_joint_jerk"):
        # MoveIt's joint_limits.yaml (robot_description_planning) fills the jerk limits the node's own parameters
        # leave empty, as MoveIt Servo reads them
        config = with_planning_jerk(config, node, robot.joint_names)
    return Boot(config, robot)


class ThrottledLogger:
    """A node's logger that lets each message key through at most once per `period` [s].

    What it holds back is counted and reported with the next message of that key, so a flood of identical
    complaints (a bad joint state at 500 Hz) costs one line per period and loses no information.
    """

    def __init__(self, logger, period: float = 1.0) -> None:
        self._logger = logger
        self.period = period
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def _admit(self, key: str, now: float | None) -> str | None:
        """None if the key spoke within the period, else a suffix ('' or ' (N similar suppressed)')."""
        now = time.monotonic() if now is None else now
        if now - self._last.get(key, -float("inf")) < self.period:
            self._held[key] = self._held.get(key, 0) + 1
            return None
        self._last[key] = now
        held = self._held.pop(key, 0)
        return f" ({held} similar messages suppressed)" if held else ""

    # one call site per severity: rclpy refuses a call site that logs at two severities
    def info(self, key: str, text: str, now: float | None = None) -> None:
        """Log at INFO unless `key` spoke within the period."""
        suffix = self._admit(key, now)
        if suffix is not None:
            self._logger.info(text + suffix)

    def warning(self, key: str, text: str, now: float | None = None) -> None:
        """Log at WARN unless `key` spoke within the period."""
        suffix = self._admit(key, now)
        if suffix is not None:
            self._logger.warning(text + suffix)

    def error(self, key: str, text: str, now: float | None = None) -> None:
        """Log at ERROR unless `key` spoke within the period."""
        suffix = self._admit(key, now)
        if suffix is not None:
            self._logger.error(text + suffix)


class RobokinNode(Node):
    """Base of every robokin node: its parameters declared from `config_class` and its robot loaded (`boot`)
    into `self._config` and `self._robot`, and `self._log`, a `ThrottledLogger`.

    Subclasses set `default_name` (the node name unless the caller gives one) and `config_class`, and may set
    `executor_factory`, the executor `run_node` spins them with.
    """

    default_name: ClassVar[str]
    config_class: ClassVar[type]
    log_period: ClassVar[float] = 1.0       # [s] a repeated complaint is logged at most this often
    executor_factory: ClassVar[Callable[[], Executor]] = SingleThreadedExecutor

    def __init__(self, node_name: str | None = None, **kwargs) -> None:
        super().__init__(node_name or self.default_name, **kwargs)
        self._config, self._robot = boot(self, self.config_class)
        self._log = ThrottledLogger(self.get_logger(), self.log_period)


def run_node(node_cls: Callable[[], Node], args: list[str] | None = None,
             executor_factory: Callable[[], Executor] | None = None) -> int:
    """Run one node until shutdown, spun by `executor_factory()` (default: the node class's `executor_factory`,
    a SingleThreadedExecutor unless the node says otherwise); the process exit code.

    A RobokinError while the node starts (bad parameters, unloadable robot) is logged in full and
    gives exit code 1; so does an rcl argument error such as an unparsable parameter file.
    """
    name = getattr(node_cls, "default_name", node_cls.__name__)
    try:
        init_default_context(args)
    except Exception as err:  # rcl raises RCLError with the parser's message for a bad --params-file
        print(f"[{name}] cannot start: {err}", file=sys.stderr)
        return 1
    try:
        return _spin_node(node_cls, name, executor_factory)
    finally:
        shutdown_default_context()


def _spin_node(node_cls: Callable[[], Node], name: str, executor_factory: Callable[[], Executor] | None) -> int:
    """Build the node and spin it until shutdown (rclpy initialised); the exit code.

    SIGINT / SIGTERM shut the context down wherever the process is: an rclpy call that was under way then raises
    (creating a publisher while the node is built, publishing from a timer callback). Once the context is down,
    such an error is the shutdown itself, not a fault: the node stops quietly with exit code 0, as launch expects.
    """
    context = get_default_context()
    try:
        node = node_cls()
    except RobokinError as err:
        rclpy.logging.get_logger(name).fatal(f"cannot start: {err}")
        return 1
    except (KeyboardInterrupt, ExternalShutdownException):
        return 0
    except Exception:
        if context.ok():
            raise
        return 0                   # asked to stop while starting
    # Start-up objects (models, messages, modules) never die: keep them out of the collector's scans,
    # so a full collection cannot stall the control loop for tens of milliseconds.
    gc.freeze()
    executor = (executor_factory or getattr(node_cls, "executor_factory", SingleThreadedExecutor))()
    executor.add_node(node)
    try:
        # one callback per call, not executor.spin(): the EventsExecutor's spin() never returns to Python, so
        # SIGINT / SIGTERM would not stop it (for the other executors spin() is this very loop)
        while rclpy.ok(context=node.context):
            executor.spin_once(timeout_sec=SPIN_SLICE)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        if context.ok():
            raise
    finally:
        executor.shutdown()
        node.destroy_node()
    return 0


def create_side_node(owner: Node, suffix: str) -> Node:
    """A node of its own named `<owner>_<suffix>` in the owner's namespace and context, without parameter services.

    A global `-r __node:=NAME` (what launch's `name=` passes) would rename it to the owner's name too; rcl applies
    node-local arguments before global ones, so a local remap keeps the side name.
    """
    name = f"{owner.get_name()}_{suffix}"
    return rclpy.create_node(name, namespace=owner.get_namespace(), context=owner.context,
                             cli_args=["--ros-args", "-r", f"__node:={name}"], start_parameter_services=False)


class SideNode:
    """A node of its own, spun by a SingleThreadedExecutor on a daemon thread once `start` is called.

    For work that must not wait on the owner's executor: a high-rate topic beside a blocking action callback
    (rclpy's multi-threaded executor falls behind a 500 Hz /joint_states: gaps of half a second were measured,
    while a single-threaded one keeps up), or TF data a lookup waits for. Named `<owner>_<suffix>` in the
    owner's namespace.
    """

    def __init__(self, owner: Node, suffix: str) -> None:
        self.node = create_side_node(owner, suffix)
        self._executor = SingleThreadedExecutor(context=owner.context)
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Spin the node on its own thread (after its subscriptions are made)."""
        self._executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, name=self.node.get_name(), daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:
            self._executor.spin()
        except (ExternalShutdownException, Exception):  # noqa: BLE001 - shutting down: nothing to report
            pass

    def close(self) -> None:
        """Stop the thread and destroy the side node."""
        self._executor.shutdown(timeout_sec=1.0)
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        self.node.destroy_node()


class SideSubscription(SideNode):
    """One subscription served by a `SideNode` named `<owner>_<suffix>`."""

    def __init__(self, owner: Node, suffix: str, msg_type, topic: str, callback, qos=QUEUE_DEPTH) -> None:
        super().__init__(owner, suffix)
        self.node.create_subscription(msg_type, topic, callback, qos)
        self.start()
