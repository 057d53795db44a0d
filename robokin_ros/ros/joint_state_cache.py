"""The newest joint state of a chain, shared between a subscription thread and blocking action callbacks.

A node whose action callback blocks (path execution) reads the arm's state from another thread; this keeps
the newest valid state under a lock and lets the callback wait for a fresh one. Messages that name none of
the chain's joints (a gripper on the same topic) are ignored; malformed ones are logged and dropped.
"""
from __future__ import annotations

import threading
import time
from typing import NamedTuple

import numpy as np
from sensor_msgs.msg import JointState

from robokin_ros.core.errors import RobokinError
from robokin_ros.ros.conversions import concerns_chain, measurement_from_joint_state
from robokin_ros.ros.runtime import ThrottledLogger, receive_time

POLL_PERIOD = 0.005          # [s] between looks for a fresh state while waiting


class StateWait(NamedTuple):
    """The outcome of waiting for a fresh state: positions when one came, else why not."""

    positions: np.ndarray | None     # (n,) chain order [rad | m]
    why_not: str                     # "" when positions is set


class JointStateCache:
    """Newest joint positions of `joint_names` with their receive time; thread-safe."""

    def __init__(self, joint_names: tuple[str, ...], log: ThrottledLogger) -> None:
        self._joint_names = joint_names
        self._chain = frozenset(joint_names)
        self._log = log
        self._lock = threading.Lock()
        self._state: tuple[np.ndarray, float] | None = None

    def on_message(self, msg: JointState) -> None:
        """Subscription callback: keep the message's chain positions if it concerns the chain and is valid."""
        if not concerns_chain(msg, self._chain):
            return
        try:
            measured = measurement_from_joint_state(msg, self._joint_names, receive_time())
        except RobokinError as err:
            self._log.warning("joint_state", f"ignoring joint state: {err}")
            return
        with self._lock:
            self._state = (measured.positions, measured.received_at)

    def wait_fresh(self, max_age: float, first_wait: float) -> StateWait:
        """Positions no older than `max_age` [s], waiting up to `max_age` for one, or `first_wait` [s] when
        no state has been seen yet (discovery between freshly started processes takes seconds)."""
        with self._lock:
            never = self._state is None
        deadline = receive_time() + (max(first_wait, max_age) if never else max_age)
        while True:
            with self._lock:
                state = self._state
            fresh = state is not None and receive_time() - state[1] <= max_age
            if fresh or receive_time() >= deadline:
                break
            time.sleep(POLL_PERIOD)
        if fresh:
            return StateWait(state[0], "")
        age = "none received" if state is None else f"last one {receive_time() - state[1]:.2f} s old"
        return StateWait(None, f"{age}; timeout {max_age} s")
