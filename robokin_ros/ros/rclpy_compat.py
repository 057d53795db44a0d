"""The rclpy calls whose behaviour differs between the ROS 2 distros robokin supports, made the same.

Jazzy ships rclpy 7.1, Kilted rclpy 9.1. Every difference the nodes depend on is handled here, so the rest of the
package is written once; docs/distros.md lists the audit this module came from.
"""
from __future__ import annotations

import threading

import rclpy
from rclpy.action import ActionClient, ActionServer
from rclpy.context import Context
from rclpy.executors import Executor, SingleThreadedExecutor
from rclpy.signals import uninstall_signal_handlers
from rclpy.utilities import get_default_context


def init_default_context(args: list[str] | None = None) -> Context:
    """Initialise rclpy on the default context, with its SIGINT/SIGTERM handlers; the context.

    Never relies on what `rclpy.init` returns: Kilted's returns a context manager, Jazzy's None (so `with
    rclpy.init():` raises TypeError on Jazzy).

    Raises:
        Whatever `rclpy.init` raises (an RCLError for an unparsable --params-file).
    """
    rclpy.init(args=args)
    return get_default_context()


def shutdown_default_context() -> None:
    """Shut the default context down if it is still up, and remove rclpy's signal handlers, as Kilted's
    `with rclpy.init():` does on exit."""
    rclpy.try_shutdown()            # rclpy puts a fresh default context in its place
    uninstall_signal_handlers()     # Kilted's try_shutdown does this for the default context; Jazzy's does not


def events_executor() -> Executor:
    """rclpy's EventsExecutor (`rclpy.experimental`, from rclpy 7.1.4 on Jazzy), else a SingleThreadedExecutor.

    For nodes with a fast timer: the EventsExecutor dispatches from a C++ event queue instead of rebuilding a wait
    set in Python on every wake-up, which at 1 kHz is most of a tick (see bench/bench_servo_node.py). Its callbacks
    run one at a time on the spinning thread, as a SingleThreadedExecutor's do.
    """
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError:        # rclpy before 7.1.4 (Jazzy's first releases)
        return SingleThreadedExecutor()
    return EventsExecutor()


# [s] how long an action server keeps a finished goal's result for a client's get_result request. rclpy 7.1
# (Jazzy) keeps it 900 s, as rcl_action and rclcpp_action servers (a real joint_trajectory_controller) do; rclpy 9.1
# (Kilted) lowered its default to 10 s, after which a late request gets STATUS_UNKNOWN and an empty result.
RESULT_TIMEOUT = 900


def action_server(node, action_type, name: str, **kwargs) -> ActionServer:
    """An ActionServer that keeps results for RESULT_TIMEOUT on every distro (kwargs as ActionServer's)."""
    return ActionServer(node, action_type, name, result_timeout=RESULT_TIMEOUT, **kwargs)


class ThreadSafeActionClient(ActionClient):
    """An ActionClient whose goal, cancel and result requests may be sent from one thread while an executor takes
    the responses on another (a blocking execute callback on a MultiThreadedExecutor).

    rclpy 7.1 (Jazzy) records a request as pending only after sending it, with no lock: a response taken by the
    executor in between is dropped ("Ignoring unexpected goal response") and its future never completes (rclpy
    issue #1123). rclpy 9.1 (Kilted) holds a lock around both and around taking responses; this holds one of its own
    the same way, so both distros behave as Kilted does (on Kilted it adds an uncontended lock, taken before
    Kilted's own in every path, so the two cannot deadlock).
    """

    # rclpy 9.1 (Kilted) adds the client to its node's waitables before it creates its own `_lock`: an executor
    # spinning on another thread while a client is made (path_ik_node makes its controller's client in the goal's
    # thread) can call get_num_entities on it in between, which raised AttributeError and stopped path_ik_node's
    # executor (seen once in CI). This class-level lock stands in until the instance's own lock shadows it.
    _lock = threading.Lock()

    def __init__(self, *args, **kwargs) -> None:
        self._request_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def take_data(self):
        with self._request_lock:
            return super().take_data()

    def send_goal_async(self, *args, **kwargs):
        with self._request_lock:
            return super().send_goal_async(*args, **kwargs)

    def _cancel_goal_async(self, goal_handle):
        with self._request_lock:
            return super()._cancel_goal_async(goal_handle)

    def _get_result_async(self, goal_handle):
        with self._request_lock:
            return super()._get_result_async(goal_handle)
