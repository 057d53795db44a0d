"""path_ik_node: Cartesian path IK as an action server (plan and execute), a fire-and-forget topic, markers.

Interfaces (names relative to the node):
- action `~/execute_cartesian_path` (robokin_interfaces/action/ExecuteCartesianPath): plans from the measured
  joint state; unless `plan_only`, publishes the trajectory on `command_out_topic` and follows `joint_topic`
  until every joint is within `goal_tolerance` of the end. Cancel -> a hold trajectory at the current state
  and a CANCELED result. A goal arriving while one runs is rejected (`preempt: false`, default) or cancels the
  running one, which ends with PREEMPTED (`preempt: true`). Every accepted goal gets a filled result.
- `~/path` (nav_msgs/Path): plan with the configured defaults and publish the trajectory (fire and forget).
- `~/markers` (visualization_msgs/MarkerArray): planned tool path and failure point.
The execute callback blocks while following the arm, so the node runs on a MultiThreadedExecutor with a
reentrant callback group; the joint-state callback only stores the latest message.
"""
from __future__ import annotations

import threading
import time

import numpy as np
import rclpy
from nav_msgs.msg import Path
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray

from robokin_interfaces.action import ExecuteCartesianPath

from ..core.errors import RobokinError, TrajectoryTimingError, UnknownFrameError
from ..core.path.planner import CartesianPathPlanner
from ..core.path_config import PathConfig
from ..ros.conversions import measurement_from_joint_state
from ..ros.node_utils import Throttle, load_robot, receive_time, run_node
from ..ros.params import declare_config
from ..ros.path_conversions import (hold_trajectory_msg, joint_trajectory_msg, pose_msg, waypoints_in_base)
from ..ros.path_markers import path_markers

Result = ExecuteCartesianPath.Result


class GoalAbort(Exception):
    """Ends a goal early with an error code and message (not a RobokinError: a node-level outcome)."""

    def __init__(self, code: int, message: str) -> None:
        self.code = code
        super().__init__(message)


class PathIkNode(Node):
    """See the module docstring."""

    default_name = "path_ik_node"

    def __init__(self, node_name: str = default_name, **kwargs) -> None:
        super().__init__(node_name, **kwargs)
        cfg = self._config = declare_config(self, PathConfig)
        self._robot = load_robot(cfg.robot, cfg.robot_description, cfg.base_frame, cfg.tip_frame)
        self._planner = CartesianPathPlanner(self._robot, cfg)
        self._throttle = Throttle(1.0)
        self._lock = threading.Lock()
        self._state: tuple[np.ndarray, float] | None = None
        self._active = None                       # goal handle being executed
        self._preempted = threading.Event()
        self._exec_lock = threading.Lock()
        group = ReentrantCallbackGroup()
        self._traj_pub = self.create_publisher(JointTrajectory, cfg.command_out_topic, 10)
        self._marker_pub = self.create_publisher(MarkerArray, "~/markers", 1)
        self.create_subscription(JointState, cfg.joint_topic, self._on_joint_state, 10, callback_group=group)
        self.create_subscription(Path, "~/path", self._on_path, 1, callback_group=group)
        self._server = ActionServer(self, ExecuteCartesianPath, "~/execute_cartesian_path",
                                    execute_callback=self._execute, goal_callback=self._on_goal,
                                    cancel_callback=lambda _: CancelResponse.ACCEPT, callback_group=group)
        self._planner.solver().solve(self._planner_warmup_path(), self._robot.home())   # JIT/cache warm-up
        self.get_logger().info(f"path IK for {self._robot.name} ({self._robot.base_frame} -> "
                               f"{self._robot.tip_frame}) ready; preempt={cfg.preempt}")

    def _planner_warmup_path(self):
        from ..core.path.geometry import build_path
        start = self._robot.fk(self._robot.home())
        target = start.copy()
        target.translation = target.translation + np.array([0.0, 0.0, 0.002])
        return build_path(start, [target])

    # ---- inputs --------------------------------------------------------------------------------------
    def _on_joint_state(self, msg: JointState) -> None:
        try:
            measured = measurement_from_joint_state(msg, self._robot.joint_names, receive_time())
        except RobokinError as err:
            self._warn("joint_state", f"ignoring joint state: {err}")
            return
        with self._lock:
            self._state = (measured.positions, measured.received_at)

    def _current_positions(self) -> np.ndarray:
        # A goal may arrive before the first joint state of a freshly started graph: wait one timeout for it
        # (the subscription runs in parallel on the multi-threaded executor) before refusing the goal.
        deadline = receive_time() + self._config.joint_state_timeout
        while True:
            with self._lock:
                state = self._state
            fresh = state is not None and receive_time() - state[1] <= self._config.joint_state_timeout
            if fresh or receive_time() >= deadline:
                break
            time.sleep(0.005)
        if not fresh:
            age = "none received" if state is None else f"last one {receive_time() - state[1]:.2f} s old"
            raise GoalAbort(Result.NO_JOINT_STATE, f"no fresh joint state on {self._config.joint_topic} "
                                                   f"({age}; timeout {self._config.joint_state_timeout} s)")
        return state[0]

    def _on_goal(self, goal) -> GoalResponse:
        if self._active is None:
            return GoalResponse.ACCEPT
        if not self._config.preempt:
            self.get_logger().warning("rejecting a new path goal: one is running (parameter preempt=false)")
            return GoalResponse.REJECT
        self._preempted.set()
        return GoalResponse.ACCEPT

    def _on_path(self, msg: Path) -> None:
        try:
            q0 = self._current_positions()
            plan = self._plan(q0, msg.poses, self._config.blend_radius, "", "", "", 0.0, 0.0)
            if plan.success:
                self._traj_pub.publish(joint_trajectory_msg(plan.trajectory))
            else:
                self._warn("path", f"nav_msgs/Path refused: {plan.ik.message}")
        except (RobokinError, GoalAbort) as err:
            self._warn("path", f"nav_msgs/Path refused: {err}")

    # ---- planning ------------------------------------------------------------------------------------
    def _plan(self, q0, waypoints, blend, tip, mask, mask_frame, v_scale, a_scale):
        if len(waypoints) == 0:
            raise GoalAbort(Result.INVALID_GOAL, "the goal has no waypoints")
        if tip and tip not in self._robot.frame_names:
            raise UnknownFrameError(tip, self._robot.frame_names)
        for name, s in (("velocity_scaling", v_scale), ("acceleration_scaling", a_scale)):
            if not (np.isfinite(s) and 0.0 <= s <= 1.0):
                raise GoalAbort(Result.INVALID_GOAL, f"{name}={s} must be in [0, 1] (0 = the node's default)")
        poses = waypoints_in_base(self._robot, q0, waypoints)
        plan = self._planner.plan(q0, poses, blend, tip_frame=tip, axis_mask=mask or None,
                                  axis_frame=mask_frame or None, velocity_scaling=v_scale or None,
                                  acceleration_scaling=a_scale or None)
        self._marker_pub.publish(path_markers(plan.ik, self._robot.base_frame, self.get_clock().now().to_msg()))
        return plan

    # ---- action --------------------------------------------------------------------------------------
    def _execute(self, goal_handle):
        result = Result(error_code=Result.INTERNAL_ERROR, message="not finished", failed_sample=-1)
        with self._exec_lock:                    # a preempting goal waits here for the old one to stop
            self._preempted.clear()
            self._active = goal_handle
            try:
                self._run_goal(goal_handle, result)
            except GoalAbort as err:
                result.error_code, result.message = err.code, str(err)
            except TrajectoryTimingError as err:
                result.error_code, result.message = Result.INTERNAL_ERROR, f"time parameterization failed: {err}"
            except RobokinError as err:
                result.error_code, result.message = Result.INVALID_GOAL, str(err)
            except Exception as err:  # noqa: BLE001 - every goal must get a result, whatever happened
                self.get_logger().error(f"path goal failed unexpectedly: {err!r}")
                result.error_code, result.message = Result.INTERNAL_ERROR, f"internal error: {err!r}"
            finally:
                self._active = None
                self._finish(goal_handle, result)
        return result

    def _finish(self, goal_handle, result) -> None:
        if result.error_code != Result.SUCCESS:
            self._warn(f"goal{result.error_code}", f"path goal ended with code {result.error_code}: {result.message}")
        if not goal_handle.is_active:
            return
        if result.error_code == Result.SUCCESS:
            goal_handle.succeed()
        elif result.error_code == Result.CANCELED and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        else:
            goal_handle.abort()

    def _run_goal(self, goal_handle, result) -> None:
        goal = goal_handle.request
        self._feedback(goal_handle, "planning", 0.0)
        q0 = self._current_positions()
        mask = "".join("1" if a else "0" for a in goal.axis_mask) if any(goal.axis_mask) else ""
        plan = self._plan(q0, goal.waypoints, goal.blend_radius, goal.tip_frame, mask, goal.axis_mask_frame,
                          goal.velocity_scaling, goal.acceleration_scaling)
        ik = plan.ik
        result.fraction, result.arc_length, result.failed_sample = ik.fraction, ik.arc_length, ik.failed_sample
        if not ik.success:
            result.error_code, result.message, result.failed_joint = int(ik.status), ik.message, ik.failed_joint
            result.failure_pose = pose_msg(ik.failure_pose)
            prefix = self._planner.time_prefix(ik, goal.tip_frame, mask or None, goal.axis_mask_frame or None)
            if prefix is not None:
                result.trajectory = joint_trajectory_msg(prefix)
            return
        result.trajectory = joint_trajectory_msg(plan.trajectory)
        summary = (f"{ik.path.length * 1e3:.1f} mm in {plan.timing.duration:.2f} s, max deviation "
                   f"{max(ik.deviations.position, plan.timing.max_position_deviation) * 1e3:.3f} mm")
        if goal.plan_only:
            result.error_code, result.message = Result.SUCCESS, f"planned (plan_only): {summary}"
            return
        self._follow(goal_handle, plan.trajectory, result)
        if result.error_code == Result.SUCCESS:
            result.message = f"executed: {summary}"

    def _follow(self, goal_handle, trajectory, result) -> None:
        """Publish the trajectory and follow the joint states until done, canceled, preempted or timed out."""
        self._traj_pub.publish(joint_trajectory_msg(trajectory))
        start, end = time.monotonic(), trajectory.positions[-1]
        deadline = start + trajectory.duration + self._config.execution_timeout_margin
        while True:
            q = self._current_positions()
            elapsed = time.monotonic() - start
            if goal_handle.is_cancel_requested or self._preempted.is_set() or not rclpy.ok():
                self._traj_pub.publish(hold_trajectory_msg(trajectory.joint_names, q))
                code, why = ((Result.CANCELED, "canceled") if goal_handle.is_cancel_requested
                             else (Result.PREEMPTED, "preempted by a new goal"))
                raise GoalAbort(code, f"{why} after {elapsed:.2f} s; holding at the current state")
            if elapsed >= trajectory.duration and np.abs(q - end).max() <= self._config.goal_tolerance:
                result.error_code = Result.SUCCESS
                self._feedback(goal_handle, "executing", 1.0)
                return
            if time.monotonic() > deadline:
                self._traj_pub.publish(hold_trajectory_msg(trajectory.joint_names, q))
                raise GoalAbort(Result.EXECUTION_FAILED, f"the arm did not reach the end within "
                                f"{self._config.execution_timeout_margin} s after the planned "
                                f"{trajectory.duration:.2f} s (max joint error {np.abs(q - end).max():.4f} rad)")
            self._feedback(goal_handle, "executing", min(elapsed / max(trajectory.duration, 1e-9), 1.0))
            time.sleep(0.02)

    def _feedback(self, goal_handle, stage: str, progress: float) -> None:
        goal_handle.publish_feedback(ExecuteCartesianPath.Feedback(stage=stage, progress=float(progress)))

    def _warn(self, key: str, text: str) -> None:
        suffix = self._throttle(key)
        if suffix is not None:
            self.get_logger().warning(text + suffix)


def main(args: list[str] | None = None) -> int:
    """Run the node on a MultiThreadedExecutor (the action's execute callback blocks while following)."""
    return run_node(PathIkNode, args, executor_factory=lambda: MultiThreadedExecutor(num_threads=4))


if __name__ == "__main__":
    raise SystemExit(main())
