"""path_ik_node: Cartesian path IK as an action server (plan and execute), a fire-and-forget topic, markers.

Interfaces (names relative to the node):
- action `~/execute_cartesian_path` (robokin_interfaces/action/ExecuteCartesianPath): plans from the measured
  joint state; unless `plan_only`, publishes the trajectory on `command_out_topic` and follows `joint_topic`
  until every joint is within `goal_tolerance` of the end. Cancel -> a hold trajectory at the current state
  and a CANCELED result. A goal arriving while one runs is rejected (`preempt: false`, default) or cancels the
  running one, which ends with PREEMPTED (`preempt: true`). Every accepted goal gets a filled result.
  The goal callback claims the busy state under a lock, so two goals sent back to back cannot both be
  accepted with `preempt: false`; the claim is released when the goal's execute callback ends.
- Parameters can be changed at run time (`ros2 param set`): the whole new PathConfig is validated and swapped
  with a rebuilt planner; an invalid value is refused with the reason. Robot and topic parameters are read-only.
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
from robokin_ros.core.errors import RobokinError, TrajectoryTimingError, UnknownFrameError
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.planner import CartesianPathPlanner
from robokin_ros.ros.conversions import concerns_chain, measurement_from_joint_state
from robokin_ros.ros.params import watch_config
from robokin_ros.ros.path_conversions import hold_trajectory_msg, joint_trajectory_msg, pose_msg, waypoints_in_base
from robokin_ros.ros.path_markers import path_markers
from robokin_ros.ros.runtime import SideSubscription, ThrottledLogger, boot, receive_time, run_node

Result = ExecuteCartesianPath.Result
# [s] an accepted goal that never reaches handle_accepted (rclpy drops it when the goal response cannot be
# sent, e.g. the client went away) stops counting as busy after this long instead of blocking forever.
PENDING_CLAIM_TIMEOUT = 5.0
FIRST_STATE_WAIT = 5.0       # [s] a goal before any joint state has arrived waits this long for one


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
        cfg, self._robot = boot(self, PathConfig)
        self._config = cfg
        self._planner = self._warm_planner(cfg)
        self._log = ThrottledLogger(self.get_logger())
        self._lock = threading.Lock()
        self._state: tuple[np.ndarray, float] | None = None
        self._claim_lock = threading.Lock()
        self._pending: list[float] = []           # acceptance times of goals not yet handed to execute
        self._running = 0                         # goals handed to execute whose callback has not ended
        self._preempted = threading.Event()
        self._exec_lock = threading.Lock()
        group = ReentrantCallbackGroup()
        self._traj_pub = self.create_publisher(JointTrajectory, cfg.command_out_topic, 10)
        self._marker_pub = self.create_publisher(MarkerArray, "~/markers", 1)
        self._chain_joints = frozenset(self._robot.joint_names)
        self._states = SideSubscription(self, "joint_states", JointState, cfg.joint_topic, self._on_joint_state)
        self.create_subscription(Path, "~/path", self._on_path, 1, callback_group=group)
        self._server = ActionServer(self, ExecuteCartesianPath, "~/execute_cartesian_path",
                                    execute_callback=self._execute, goal_callback=self._on_goal,
                                    handle_accepted_callback=self._on_accepted,
                                    cancel_callback=lambda _: CancelResponse.ACCEPT, callback_group=group)
        watch_config(self, lambda: self._config, self._apply_config)
        self.get_logger().info(f"path IK for {self._robot.name} ({self._robot.base_frame} -> "
                               f"{self._robot.tip_frame}) ready; preempt={cfg.preempt}")

    def _warm_planner(self, cfg: PathConfig) -> CartesianPathPlanner:
        """A planner for `cfg` whose default solver has run once (JIT/cache warm-up before the first goal)."""
        from robokin_ros.core.path.geometry import build_path
        planner = CartesianPathPlanner(self._robot, cfg)
        start = self._robot.fk(self._robot.home())
        target = start.copy()
        target.translation = target.translation + np.array([0.0, 0.0, 0.002])
        planner.solver().solve(build_path(start, [target]), self._robot.home())
        return planner

    def _apply_config(self, cfg: PathConfig) -> None:
        """Install a validated config (called by watch_config); RobokinError refuses it with the reason."""
        planner = self._warm_planner(cfg)          # checks per-joint lists; raises ConfigError
        with self._lock:
            self._config, self._planner = cfg, planner
        self.get_logger().info("path parameters updated")

    def _settings(self) -> tuple[PathConfig, CartesianPathPlanner]:
        """The config and planner as one consistent pair (a parameter update swaps both)."""
        with self._lock:
            return self._config, self._planner

    # ---- inputs --------------------------------------------------------------------------------------
    def destroy_node(self) -> None:
        self._states.close()
        super().destroy_node()

    def _on_joint_state(self, msg: JointState) -> None:
        if not concerns_chain(msg, self._chain_joints):
            return                                # another device's states (a gripper) on the same topic
        try:
            measured = measurement_from_joint_state(msg, self._robot.joint_names, receive_time())
        except RobokinError as err:
            self._log.warning("joint_state", f"ignoring joint state: {err}")
            return
        with self._lock:
            self._state = (measured.positions, measured.received_at)

    def _current_positions(self, cfg: PathConfig) -> np.ndarray:
        # A goal may arrive before the first joint state of a freshly started graph (discovery between
        # processes takes up to a few seconds): wait for it before refusing the goal; later, one timeout.
        with self._lock:
            never = self._state is None
        deadline = receive_time() + (max(FIRST_STATE_WAIT, cfg.joint_state_timeout) if never
                                     else cfg.joint_state_timeout)
        while True:
            with self._lock:
                state = self._state
            fresh = state is not None and receive_time() - state[1] <= cfg.joint_state_timeout
            if fresh or receive_time() >= deadline:
                break
            time.sleep(0.005)
        if not fresh:
            age = "none received" if state is None else f"last one {receive_time() - state[1]:.2f} s old"
            raise GoalAbort(Result.NO_JOINT_STATE, f"no fresh joint state on {cfg.joint_topic} "
                                                   f"({age}; timeout {cfg.joint_state_timeout} s)")
        return state[0]

    def _on_goal(self, goal) -> GoalResponse:
        # Accepting claims the busy state right here: a goal accepted but not yet executing counts as
        # running, so a second goal in that window is judged against it (released in _execute).
        with self._claim_lock:
            now = time.monotonic()
            self._pending = [t for t in self._pending if now - t < PENDING_CLAIM_TIMEOUT]
            busy = self._running > 0 or bool(self._pending)
            if busy and not self._config.preempt:
                self.get_logger().warning("rejecting a new path goal: one is running (parameter preempt=false)")
                return GoalResponse.REJECT
            if busy:
                self._preempted.set()
            self._pending.append(now)
        return GoalResponse.ACCEPT

    def _on_accepted(self, goal_handle) -> None:
        with self._claim_lock:                    # the claim moves from pending to running
            if self._pending:
                self._pending.pop(0)
            self._running += 1
        goal_handle.execute()

    def _on_path(self, msg: Path) -> None:
        with self._claim_lock:
            busy = self._running > 0 or bool(self._pending)
        if busy:                                      # never two trajectories racing on one controller
            self._log.warning("path", "nav_msgs/Path ignored: an action goal is running")
            return
        cfg, planner = self._settings()
        try:
            q0 = self._current_positions(cfg)
            plan = self._plan(planner, q0, msg.poses, cfg.blend_radius, "", "", "", 0.0, 0.0)
            if plan.success:
                self._traj_pub.publish(joint_trajectory_msg(plan.trajectory))
            else:
                self._log.warning("path", f"nav_msgs/Path refused: {plan.ik.message}")
        except (RobokinError, GoalAbort) as err:
            self._log.warning("path", f"nav_msgs/Path refused: {err}")

    # ---- planning ------------------------------------------------------------------------------------
    def _plan(self, planner, q0, waypoints, blend, tip, mask, mask_frame, v_scale, a_scale):
        if len(waypoints) == 0:
            raise GoalAbort(Result.INVALID_GOAL, "the goal has no waypoints")
        if tip and tip not in self._robot.frame_names:
            raise UnknownFrameError(tip, self._robot.frame_names)
        for name, s in (("velocity_scaling", v_scale), ("acceleration_scaling", a_scale)):
            if not (np.isfinite(s) and 0.0 <= s <= 1.0):
                raise GoalAbort(Result.INVALID_GOAL, f"{name}={s} must be in [0, 1] (0 = the node's default)")
        poses = waypoints_in_base(self._robot, q0, waypoints)
        plan = planner.plan(q0, poses, blend, tip_frame=tip, axis_mask=mask or None,
                            axis_frame=mask_frame or None, velocity_scaling=v_scale or None,
                            acceleration_scaling=a_scale or None)
        self._marker_pub.publish(path_markers(plan.ik, self._robot.base_frame, self.get_clock().now().to_msg()))
        return plan

    # ---- action --------------------------------------------------------------------------------------
    def _execute(self, goal_handle):
        result = Result(error_code=Result.INTERNAL_ERROR, message="not finished", failed_sample=-1)
        with self._exec_lock:                    # a preempting goal waits here for the old one to stop
            self._preempted.clear()
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
                with self._claim_lock:
                    self._running -= 1
                self._finish(goal_handle, result)
        return result

    def _finish(self, goal_handle, result) -> None:
        if result.error_code != Result.SUCCESS:
            self._log.warning(f"goal{result.error_code}",
                              f"path goal ended with code {result.error_code}: {result.message}")
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
        cfg, planner = self._settings()          # one consistent pair for the whole goal
        self._feedback(goal_handle, "planning", 0.0)
        q0 = self._current_positions(cfg)
        mask = "".join("1" if a else "0" for a in goal.axis_mask) if any(goal.axis_mask) else ""
        plan = self._plan(planner, q0, goal.waypoints, goal.blend_radius, goal.tip_frame, mask, goal.axis_mask_frame,
                          goal.velocity_scaling, goal.acceleration_scaling)
        ik = plan.ik
        result.fraction, result.arc_length, result.failed_sample = ik.fraction, ik.arc_length, ik.failed_sample
        if not ik.success:
            result.error_code, result.message, result.failed_joint = int(ik.status), ik.message, ik.failed_joint
            result.failure_pose = pose_msg(ik.failure_pose)
            prefix = planner.time_prefix(ik, goal.tip_frame, mask or None, goal.axis_mask_frame or None)
            if prefix is not None:
                result.trajectory = joint_trajectory_msg(prefix)
            return
        result.trajectory = joint_trajectory_msg(plan.trajectory)
        summary = (f"{ik.path.length * 1e3:.1f} mm in {plan.timing.duration:.2f} s, max deviation "
                   f"{max(ik.deviations.position, plan.timing.max_position_deviation) * 1e3:.3f} mm")
        if goal.plan_only:
            result.error_code, result.message = Result.SUCCESS, f"planned (plan_only): {summary}"
            return
        self._follow(goal_handle, plan.trajectory, result, cfg)
        if result.error_code == Result.SUCCESS:
            result.message = f"executed: {summary}"

    def _follow(self, goal_handle, trajectory, result, cfg: PathConfig) -> None:
        """Publish the trajectory and follow the joint states until done, canceled, preempted or timed out."""
        self._traj_pub.publish(joint_trajectory_msg(trajectory))
        start, end = time.monotonic(), trajectory.positions[-1]
        deadline = start + trajectory.duration + cfg.execution_timeout_margin
        while True:
            q = self._current_positions(cfg)
            elapsed = time.monotonic() - start
            if goal_handle.is_cancel_requested or self._preempted.is_set() or not rclpy.ok():
                self._traj_pub.publish(hold_trajectory_msg(trajectory.joint_names, q))
                code, why = ((Result.CANCELED, "canceled") if goal_handle.is_cancel_requested
                             else (Result.PREEMPTED, "preempted by a new goal"))
                raise GoalAbort(code, f"{why} after {elapsed:.2f} s; holding at the current state")
            if elapsed >= trajectory.duration and np.abs(q - end).max() <= cfg.goal_tolerance:
                result.error_code = Result.SUCCESS
                self._feedback(goal_handle, "executing", 1.0)
                return
            if time.monotonic() > deadline:
                self._traj_pub.publish(hold_trajectory_msg(trajectory.joint_names, q))
                raise GoalAbort(Result.EXECUTION_FAILED, f"the arm did not reach the end within "
                                f"{cfg.execution_timeout_margin} s after the planned "
                                f"{trajectory.duration:.2f} s (max joint error {np.abs(q - end).max():.4f} rad)")
            self._feedback(goal_handle, "executing", min(elapsed / max(trajectory.duration, 1e-9), 1.0))
            time.sleep(0.02)

    def _feedback(self, goal_handle, stage: str, progress: float) -> None:
        goal_handle.publish_feedback(ExecuteCartesianPath.Feedback(stage=stage, progress=float(progress)))


def main(args: list[str] | None = None) -> int:
    """Run the node on a MultiThreadedExecutor (the action's execute callback blocks while following)."""
    return run_node(PathIkNode, args, executor_factory=lambda: MultiThreadedExecutor(num_threads=4))


if __name__ == "__main__":
    raise SystemExit(main())
