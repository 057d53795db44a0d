"""The rclpy calls whose behaviour differs between the ROS 2 distros robokin supports, made the same.

Jazzy ships rclpy 7.1, Kilted rclpy 9.1. Every difference the nodes depend on is handled here, so the rest of the
package is written once; README "Jazzy and Kilted" lists the audit this module came from.
"""
from __future__ import annotations

import rclpy
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
