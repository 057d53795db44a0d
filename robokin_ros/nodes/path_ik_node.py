"""path_ik_node: Cartesian path IK as an action server (plan and execute), a fire-and-forget topic, markers.

- action `~/execute_cartesian_path` (ExecuteCartesianPath): a waypoint path or a motion program, planned from the
  measured joint state by the one planner (core/program/planner.MotionPlanner; a failed plan returns its solved part)
  and, unless `plan_only`, executed by ros/trajectory_executor.py (outgoing check, FollowJointTrajectory goal or
  topic, stop within the acceleration limits on cancel, preemption and timeout). One goal at a time: a new one is
  rejected or preempts (`preempt`; ros/goals.py); every accepted goal gets a filled result (ros/goal_runs.py).
- `~/path` (nav_msgs/Path): planned with the defaults and sent without following; `~/markers`: the planned tool path.
- Robots with several tips (`tip_frames`, e.g. dual_panda): a move names its tip, a bimanual move gives every
  moving tip's target, a carried move the held object's (ros/tips_conversions.py); the result names the failed tip
  and gives each tip's deviation and the held relative pose's; `~/markers` shows every tip's path.
- Parameters change at run time: the whole new PathConfig is validated and swapped with a rebuilt planner.
The execute callback blocks while following the arm: a MultiThreadedExecutor with a reentrant callback group; the
joint-state callback only stores. Interfaces and parameters: docs/path_ik_node.md.
"""
from __future__ import annotations

import threading

import numpy as np
from nav_msgs.msg import Path
from rclpy.action import CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray

from robokin_interfaces.action import ExecuteCartesianPath
from robokin_ros.core.errors import RobokinError
from robokin_ros.core.frames import TransformLookupError
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.program.moves import Approach, waypoint_program
from robokin_ros.core.program.planner import MotionPlanner
from robokin_ros.ros.goal_runs import interruption, plan_interruptibly, run_into_result
from robokin_ros.ros.goals import GoalAbort, GoalGate, end_goal
from robokin_ros.ros.joint_state_cache import JointStateCache
from robokin_ros.ros.params import watch_config
from robokin_ros.ros.path_conversions import approach_from_goal, goal_outcome, joint_trajectory_msg, plan_options, \
    program_from_goal, program_plan_options, waypoints_in_base
from robokin_ros.ros.path_markers import path_markers, tips_path_markers
from robokin_ros.ros.rclpy_compat import action_server
from robokin_ros.ros.runtime import LATEST_ONLY, RobokinNode, SideSubscription, run_node
from robokin_ros.ros.tf_frames import TfFrames
from robokin_ros.ros.trajectory_executor import TrajectoryExecutor, current_positions

Result = ExecuteCartesianPath.Result
EXECUTOR_THREADS = 4
TF_FIRST_LOOKUP_WAIT = 3.0   # [s] after the TF listener starts, a waypoint frame lookup may wait this long for data


class PathIkNode(RobokinNode):
    """See the module docstring."""

    default_name = "path_ik_node"
    config_class = PathConfig

    def __init__(self, node_name: str | None = None, **kwargs) -> None:
        super().__init__(node_name, **kwargs)
        cfg = self._config
        self._planner = self._warm_planner(cfg)
        self._lock = threading.Lock()
        self._goals = GoalGate()
        # no TF listener until a waypoint names a frame outside the model; the first goal then waits for TF
        self._tf_frames = TfFrames(self, self._robot, first_lookup_wait=TF_FIRST_LOOKUP_WAIT)
        group = ReentrantCallbackGroup()
        self._marker_pub = self.create_publisher(MarkerArray, "~/markers", LATEST_ONLY)
        self._states = JointStateCache(self._robot.joint_names, self._log)
        self._execution = TrajectoryExecutor(self, self._robot.joint_names, lambda: self._settings()[1].limits(),
                                             self._states, self._log, group, cfg.command_out_topic)
        self._state_sub = SideSubscription(self, "joint_states", JointState, cfg.joint_topic, self._states.on_message)
        self.create_subscription(Path, "~/path", self._on_path, LATEST_ONLY, callback_group=group)
        self._server = action_server(self, ExecuteCartesianPath, "~/execute_cartesian_path",
                                     execute_callback=self._execute, goal_callback=self._on_goal,
                                     handle_accepted_callback=self._on_accepted,
                                     cancel_callback=lambda _: CancelResponse.ACCEPT, callback_group=group)
        watch_config(self, lambda: self._config, self._apply_config)
        target = cfg.follow_joint_trajectory_action if cfg.execution == "action" else cfg.command_out_topic
        tips = ", ".join(self._robot.tip_frames)
        self.get_logger().info(f"path IK for {self._robot.name} ({self._robot.base_frame} -> {tips}) ready; "
                               f"preempt={cfg.preempt}; executes via {target}")

    def _warm_planner(self, cfg: PathConfig) -> MotionPlanner:
        """The planner for `cfg`, having solved once (ConfigError for bad per-joint lists); poses as joint targets
        take the nearest closed-form solution on arms that have one (UR), else the iterative pose IK."""
        planner = MotionPlanner(self._robot, cfg)
        planner.warm_up()
        return planner

    def _apply_config(self, cfg: PathConfig) -> None:
        """Install a validated config (called by watch_config); RobokinError refuses it with the reason."""
        planner = self._warm_planner(cfg)
        with self._lock:
            self._config, self._planner = cfg, planner
        self.get_logger().info("path parameters updated")

    def _settings(self) -> tuple[PathConfig, MotionPlanner]:
        """The config and planner as one consistent set (a parameter update swaps both)."""
        with self._lock:
            return self._config, self._planner

    def destroy_node(self) -> None:
        # rclpy's context shutdown also destroys a node whose __init__ raised: close only what was made
        for part in ("_tf_frames", "_state_sub", "_execution"):
            closable = getattr(self, part, None)
            if closable is not None:
                closable.close()
        super().destroy_node()

    def _on_goal(self, goal) -> GoalResponse:
        if self._goals.claim(self._config.preempt):
            return GoalResponse.ACCEPT
        self.get_logger().warning("rejecting a new path goal: one is running (parameter preempt=false)")
        return GoalResponse.REJECT

    def _on_accepted(self, goal_handle) -> None:
        self._goals.start()
        goal_handle.execute()

    def _on_path(self, msg: Path) -> None:
        if self._goals.busy():                    # never two trajectories racing on one controller
            self._log.warning("path", "nav_msgs/Path ignored: an action goal is running")
            return
        cfg, planner = self._settings()
        try:
            plan = self._plan(planner, current_positions(self._states, cfg), msg.poses, cfg.blend_radius,
                              should_stop=lambda: not self.context.ok())
            if plan.success and plan.trajectory.duration == 0.0:
                self._log.info("path", f"nav_msgs/Path: {plan.message}")
            elif plan.success:
                checked = self._execution.check(joint_trajectory_msg(plan.trajectory))
                self._execution.send_and_forget(checked, cfg, lambda why: self._log.warning(
                    "path", f"nav_msgs/Path not executed: {why}"))
            else:
                self._log.warning("path", f"nav_msgs/Path refused: {plan.message}")
        except (RobokinError, GoalAbort) as err:
            self._log.warning("path", f"nav_msgs/Path refused: {err}")

    def _plan(self, planner: MotionPlanner, q0: np.ndarray, waypoints, blend: float, goal=None,
              should_stop=None):
        """Plan a waypoint path (a goal's options, scalings and approach validated by the planner; `should_stop`
        polled while planning); a goal's failed plan carries its timed solved part (the topic's needs none)."""
        try:
            poses = waypoints_in_base(self._robot, q0, waypoints, self._tf_frames.lookup)
        except TransformLookupError as err:
            raise GoalAbort(Result.INVALID_GOAL, f"waypoint frame lookup failed: {err}") from None
        approach, options = (Approach.PATH, {}) if goal is None else (approach_from_goal(goal), plan_options(goal))
        plan = planner.plan(waypoint_program(poses, blend, approach), q0, should_stop=should_stop,
                            solved_part=goal is not None, **options)
        self._publish_markers(plan)
        return plan

    def _publish_markers(self, plan) -> None:
        """The planned tool path (a waypoint path on one tip), or every tip's path (robots with several tips)."""
        stamp, frame = self.get_clock().now().to_msg(), self._robot.base_frame
        if plan.path_ik is not None:
            self._marker_pub.publish(path_markers(plan.path_ik, frame, stamp))
        elif len(self._robot.tip_frames) > 1:
            self._marker_pub.publish(tips_path_markers(self._robot, plan.trajectory, frame, stamp))

    def _plan_program(self, planner: MotionPlanner, q0: np.ndarray, goal, cfg: PathConfig, should_stop):
        """Plan a program goal (frames resolved as for waypoints; malformed moves raise PathInputError)."""
        program = program_from_goal(self._robot, q0, goal, self._tf_frames.lookup, cfg)
        plan = planner.plan(program, q0, should_stop=should_stop, **program_plan_options(goal))
        if len(self._robot.tip_frames) > 1:              # one-tip programs publish no markers, as before
            self._publish_markers(plan)
        return plan

    def _interruption(self, goal_handle):
        return interruption(goal_handle, self._goals, self.context.ok())

    def _execute(self, goal_handle):
        result = Result(error_code=Result.INTERNAL_ERROR, message="not finished", failed_sample=-1, failed_move=-1,
                        peak_jerk_share=float("nan"))
        with self._goals.executing(lambda: self._finish(goal_handle, result)):
            run_into_result(lambda: self._run_goal(goal_handle, result), result, self.get_logger())
        return result

    def _finish(self, goal_handle, result) -> None:
        if result.error_code != Result.SUCCESS:
            self._log.warning(f"goal{result.error_code}",
                              f"path goal ended with code {result.error_code}: {result.message}")
        end_goal(goal_handle, result.error_code == Result.SUCCESS, result.error_code == Result.CANCELED)

    def _run_goal(self, goal_handle, result) -> None:
        goal = goal_handle.request
        cfg, planner = self._settings()                    # one consistent set for the whole goal
        self._feedback(goal_handle, "planning", 0.0)
        q0, interrupted = current_positions(self._states, cfg), lambda: self._interruption(goal_handle)
        plan = plan_interruptibly(lambda stop: self._plan_program(planner, q0, goal, cfg, stop) if goal.program else
                                  self._plan(planner, q0, goal.waypoints, goal.blend_radius, goal, stop), interrupted)
        outcome = goal_outcome(result, plan, goal)
        if result.trajectory.points:                       # what a plan_only client may execute itself
            try:
                checked = self._execution.check(result.trajectory, "returned")
            except GoalAbort:
                result.trajectory = JointTrajectory()
                raise
            if outcome.trajectory is not None:             # result.trajectory is its message (*_outcome)
                self._execution.run(checked, outcome.trajectory, cfg, interrupted,
                                    lambda progress: self._feedback(goal_handle, "executing", progress))
        result.error_code = outcome.code
        result.message = outcome.message if outcome.trajectory is None else outcome.executed_message

    def _feedback(self, goal_handle, stage: str, progress: float) -> None:
        goal_handle.publish_feedback(ExecuteCartesianPath.Feedback(stage=stage, progress=float(progress)))


def main(args: list[str] | None = None) -> int:
    """Run the node on a MultiThreadedExecutor (the action's execute callback blocks while following)."""
    return run_node(PathIkNode, args, executor_factory=lambda: MultiThreadedExecutor(num_threads=EXECUTOR_THREADS))


if __name__ == "__main__":
    raise SystemExit(main())
