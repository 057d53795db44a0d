"""A FollowJointTrajectory client for a blocking action execute callback (path_ik_node's, through
ros/trajectory_executor.py), as MoveIt executes, and the check every trajectory passes before it leaves path_ik_node
(`check_outgoing`, which TrajectoryExecutor.check runs).

One ActionClient per action name (the name is a runtime parameter), all in the caller's reentrant callback group,
so the executor's other threads complete the futures this thread waits on; thread-safe on Jazzy too
(`rclpy_compat.ThreadSafeActionClient`).
"""
from __future__ import annotations

import threading

from action_msgs.msg import GoalStatus
from control_msgs.action import FollowJointTrajectory
from rclpy.node import Node

from trajectory_msgs.msg import JointTrajectory

from robokin_ros.core.limits import MotionLimits
from robokin_ros.core.trajectory.outgoing_check import outgoing_rejection
from robokin_ros.core.trajectory.execution import ExecutionCode
from robokin_ros.ros.goals import GoalAbort
from robokin_ros.ros.jtc_conversions import trajectory_facts
from robokin_ros.ros.rclpy_compat import ThreadSafeActionClient

ENDINGS = {GoalStatus.STATUS_SUCCEEDED: "succeeded", GoalStatus.STATUS_ABORTED: "aborted",
           GoalStatus.STATUS_CANCELED: "canceled"}


def check_outgoing(msg: JointTrajectory, joint_names, limits: MotionLimits, now: int, what: str = "sent") -> None:
    """Raise GoalAbort INTERNAL_ERROR, with the reason, when a trajectory robokin planned breaks a default
    joint_trajectory_controller's rules or the joint velocity / acceleration limits (and jerk, when limited) as the
    controller plays it (core/trajectory/outgoing_check.py); `now` [ns] is the controller clock's time, `what` how
    the trajectory leaves ("sent", "returned")."""
    rejection = outgoing_rejection(trajectory_facts(msg), joint_names, now, limits.velocity, limits.acceleration,
                                   j_max=limits.jerk if limits.jerk_limited else None)
    if rejection is not None:
        raise GoalAbort(ExecutionCode.INTERNAL_ERROR,
                        f"{ExecutionCode.INTERNAL_ERROR.sentence}: robokin planned a trajectory it must not have "
                        f"{what}, and {what} nothing: {rejection}")


def wait_for(future, timeout: float) -> bool:
    """Block until an rclpy future is done (completed by another executor thread) or `timeout` [s] passes."""
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    return done.wait(timeout) or future.done()


class ControllerClient:
    """Sends trajectories to trajectory controllers' FollowJointTrajectory actions."""

    def __init__(self, node: Node, callback_group) -> None:
        self._node, self._group = node, callback_group
        self._clients: dict[str, ThreadSafeActionClient] = {}
        self._lock = threading.Lock()

    def _client(self, action: str) -> ThreadSafeActionClient:
        with self._lock:
            if action not in self._clients:
                self._clients[action] = ThreadSafeActionClient(self._node, FollowJointTrajectory, action,
                                                               callback_group=self._group)
            return self._clients[action]

    def send(self, action: str, goal: FollowJointTrajectory.Goal, timeout: float):
        """Send a goal and wait for the controller to accept it; the goal handle.

        Raises:
            GoalAbort: CONTROLLER_UNAVAILABLE (no server, or no answer within `timeout` [s]) or
                CONTROLLER_REJECTED.
        """
        client = self._client(action)
        if not client.wait_for_server(timeout_sec=timeout):
            raise GoalAbort(ExecutionCode.CONTROLLER_UNAVAILABLE,
                            f"{ExecutionCode.CONTROLLER_UNAVAILABLE.sentence}: no FollowJointTrajectory server at "
                            f"{action} within {timeout:g} s (is the joint_trajectory_controller active?)")
        future = client.send_goal_async(goal)
        if not wait_for(future, timeout):
            raise GoalAbort(ExecutionCode.CONTROLLER_UNAVAILABLE,
                            f"{ExecutionCode.CONTROLLER_UNAVAILABLE.sentence}: {action} did not accept or reject the "
                            f"goal within {timeout:g} s")
        handle = future.result()
        if not handle.accepted:
            raise GoalAbort(ExecutionCode.CONTROLLER_REJECTED,
                            f"{ExecutionCode.CONTROLLER_REJECTED.sentence}: {action} rejected the goal. A "
                            "joint_trajectory_controller logs why; the trajectory passes its default rules for the "
                            f"joints {list(goal.trajectory.joint_names)}, so compare the controller's joints and "
                            "switches (allow_partial_joints_goal, ...)")
        return handle

    def send_and_forget(self, action: str, goal: FollowJointTrajectory.Goal, on_rejected) -> None:
        """Send a goal without waiting; `on_rejected(text)` is called if the controller rejects it."""
        future = self._client(action).send_goal_async(goal)

        def answered(done) -> None:
            if done.exception() is not None or not done.result().accepted:
                on_rejected(f"{action} rejected the trajectory")
        future.add_done_callback(answered)

    @staticmethod
    def cancel(handle, timeout: float) -> None:
        """Ask the controller to cancel (a JTC then holds the arm) and wait up to `timeout` [s] for the answer."""
        wait_for(handle.cancel_goal_async(), timeout)

    def close(self) -> None:
        """Destroy every action client."""
        with self._lock:
            for client in self._clients.values():
                client.destroy()
            self._clients.clear()
