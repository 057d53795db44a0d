"""The newest joint state of a chain, shared between a subscription thread and blocking action callbacks.

A node whose action callback blocks (path execution) reads the arm's state from another thread; this keeps
the newest valid state under a lock and lets the callback wait for a fresh one. Messages that name none of
the chain's joints (a gripper on the same topic) are ignored. Malformed ones (a joint named twice, a missing
joint, NaN) and ones older than the state in use (core/stamp_order.py) are logged and dropped; the newest
refusal is kept to explain a wait that found no state.
"""
from __future__ import annotations

import threading
import time
from typing import NamedTuple

import numpy as np
from sensor_msgs.msg import JointState

from robokin_ros.core.errors import RobokinError
from robokin_ros.core.stamp_order import StampOrder
from robokin_ros.ros.conversions import concerns_chain, measurement_from_joint_state, time_nanoseconds
from robokin_ros.ros.runtime import ThrottledLogger, receive_time

POLL_PERIOD = 0.005          # [s] between looks for a fresh state while waiting
KEY_CHARS = 60               # refusals that agree in this many leading characters are throttled as one


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
        self._order = StampOrder()
        self._refused = ""               # why a state was refused since the last accepted one

    def on_message(self, msg: JointState) -> None:
        """Subscription callback: keep the message's chain positions if it concerns the chain, is valid and is
        not older than the state in use."""
        if not concerns_chain(msg, self._chain):
            return
        now = receive_time()
        try:
            measured = measurement_from_joint_state(msg, self._joint_names, now)
            with self._lock:
                self._order.admit(self._joint_names, time_nanoseconds(msg.header.stamp), now)
                self._state, self._refused = (measured.positions, now), ""
        except RobokinError as err:
            self._refused = str(err)
            self._log.warning(f"joint_state {err}"[:KEY_CHARS], f"ignoring joint state: {err}")

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
        refused = f"; refused since: {self._refused}" if self._refused else ""
        return StateWait(None, f"{age}; timeout {max_age} s{refused}")
