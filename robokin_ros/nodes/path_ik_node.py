"""path_ik_node: Cartesian path IK as an action server (plan and execute), a fire-and-forget topic, markers.

Interfaces (names relative to the node):
- action `~/execute_cartesian_path` (robokin_interfaces/action/ExecuteCartesianPath): plans from the measured
  joint state; unless `plan_only`, executes the trajectory. A goal is either a waypoint path (CartesianPathPlanner,
  begun as its `approach` says: core/path/approach.py) or, when `program` is not empty, a motion program of
  MoveL / MoveJ / MoveC moves (core/program/planner.py; messages converted by ros/program_conversions.py) whose
  result also carries `failed_move` and the per-move cycle-time report `move_reports`. A plan that fails returns
  its solved part, which `execute_partial` also executes (ros/path_conversions.py decides what a plan executes).
  `execution: action` (default, as MoveIt does) sends it as a control_msgs/FollowJointTrajectory goal to
  `follow_joint_trajectory_action` with `path_tolerance`, `goal_tolerance` and `execution_timeout_margin` as the
  goal's tolerances, and reports the controller's acceptance and result in its own words
  (ros/trajectory_execution.py). `execution: topic` publishes on `command_out_topic` and follows `joint_topic` until
  every joint is within `goal_tolerance` of the end.
  Every trajectory goes out stamped `START_LEAD` ahead, so the node knows where the controller is on it at any
  time. Cancel, preemption and the execution timeout (`execution_timeout_margin` past the planned duration, judged
  from the joint states) send a stop in place of the running trajectory (a new goal, or on the topic; the
  controller's goal is never cancelled while a stop can be sent: a default JTC holds the arm at once then): the
  running trajectory's own points, stamped in its own time, up to `STOP_LEAD` ahead, then the rest of the path
  re-timed to rest within the acceleration limits (core/path/stopping.py), or a ramp along the measured velocity
  when the arm is off the plan. The goal ends once the joint states show the arm at rest, and its message gives
  the time from the request to rest as measured. Every
  trajectory sent or returned passes joint_trajectory_controller's default rules and stays within the joint
  velocity and acceleration limits as the controller plays it (checked before it leaves, else INTERNAL_ERROR).
  A goal arriving while one runs is rejected (`preempt: false`, default) or stops the running one, which ends
  with PREEMPTED (`preempt: true`; bookkeeping in `ros/goals.py`). Every accepted goal gets a filled result;
  following the arm is decided by `core/path/execution.py`.
- Parameters can be changed at run time (`ros2 param set`): the whole new PathConfig is validated and swapped
  with a rebuilt planner; an invalid value is refused with the reason. Robot and topic parameters are read-only.
- `~/path` (nav_msgs/Path): plan with the configured defaults (APPROACH_PATH: the path starts at the tool) and
  send the trajectory (fire and forget).
- `~/markers` (visualization_msgs/MarkerArray): planned tool path and failure point (waypoint paths only).
The execute callback blocks while following the arm, so the node runs on a MultiThreadedExecutor with a
reentrant callback group; the joint-state callback only stores the latest message.
"""
from __future__ import annotations

import threading
import time

import numpy as np
from nav_msgs.msg import Path
from rclpy.action import CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.duration import Duration
from rclpy.executors import MultiThreadedExecutor
from rclpy.time import Time
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray

from robokin_interfaces.action import ExecuteCartesianPath
from robokin_ros.core.classroom.branch_choice import nearest_branch_solver
from robokin_ros.core.errors import RobokinError, TrajectoryTimingError
from robokin_ros.core.frames import TransformLookupError
from robokin_ros.core.path.approach import Approach, plan_with_approach
from robokin_ros.core.path.budget import TIMEOUT, PlanningStopped
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.execution import ExecutionMonitor, ExecutionState, RestWatch, controller_outcome
from robokin_ros.core.path.planner import CartesianPathPlanner
from robokin_ros.core.path.stopping import plan_stop
from robokin_ros.core.program.planner import ProgramPlanner
from robokin_ros.ros.goals import GoalAbort, GoalGate, end_goal
from robokin_ros.ros.joint_state_cache import JointStateCache
from robokin_ros.ros.jtc_conversions import follow_goal
from robokin_ros.ros.params import watch_config
from robokin_ros.ros.path_conversions import (
    GoalOutcome,
    approach_from_goal,
    joint_trajectory_msg,
    path_outcome,
    plan_options,
    solved_part,
    waypoints_in_base,
)
from robokin_ros.ros.path_markers import path_markers
from robokin_ros.ros.program_conversions import program_from_goal, program_outcome, program_plan_options
from robokin_ros.ros.rclpy_compat import action_server
from robokin_ros.ros.runtime import LATEST_ONLY, QUEUE_DEPTH, RobokinNode, SideSubscription, receive_time, run_node
from robokin_ros.ros.tf_frames import TfFrames
from robokin_ros.ros.trajectory_execution import ENDINGS, ControllerClient, check_outgoing

Result = ExecuteCartesianPath.Result
FIRST_STATE_WAIT = 5.0       # [s] a goal before any joint state has arrived waits this long for one
FOLLOW_PERIOD = 0.02         # [s] between execution checks (and feedback messages)
EXECUTOR_THREADS = 4
RESULT_GRACE = 2.0           # [s] past the controller's own deadline (duration + goal time) before giving up on it
TF_FIRST_LOOKUP_WAIT = 3.0   # [s] after the TF listener starts, a waypoint frame lookup may wait this long for data
# A stop's first point is this far ahead of the decision: time to compute (10-30 ms, more under load) and deliver
# it, and a long enough blend for the controller, which interpolates from the arm's state to that first point:
# a timing error e [s] at speed v costs ~6 v e / lead^2 of acceleration (0.12 s measured up to 1.5x the limit).
STOP_LEAD = 0.25             # [s]
# A trajectory's time 0 is stamped this far ahead of sending: the node then knows the controller's progress along
# it exactly (a stop is stamped in the same time), and the goal reaches the controller before it starts.
START_LEAD = 0.1             # [s]
REST_CONFIRM = 0.1           # [s] a stopped arm is at rest once its joint states have not moved for this long
STOP_ATTEMPTS = 3
STOP_SETTLE = 1.0            # [s] past a stop's end, allowed for the arm to settle (the stop goal's goal time)
GOAL_TIME_EXTRA = 1.0        # [s] added to the controller's goal time: the node's own timeout stops the arm first


class PathIkNode(RobokinNode):
    """See the module docstring."""

    default_name = "path_ik_node"
    config_class = PathConfig

    def __init__(self, node_name: str | None = None, **kwargs) -> None:
        super().__init__(node_name, **kwargs)
        cfg = self._config
        self._planner, self._programs = self._warm_planner(cfg)
        self._lock = threading.Lock()
        self._goals = GoalGate()
        # no TF listener until a waypoint names a frame outside the model; the first goal then waits for TF
        self._tf_frames = TfFrames(self, self._robot, first_lookup_wait=TF_FIRST_LOOKUP_WAIT)
        group = ReentrantCallbackGroup()
        self._traj_pub = self.create_publisher(JointTrajectory, cfg.command_out_topic, QUEUE_DEPTH)
        self._controller = ControllerClient(self, group)
        self._marker_pub = self.create_publisher(MarkerArray, "~/markers", LATEST_ONLY)
        self._states = JointStateCache(self._robot.joint_names, self._log)
        self._state_sub = SideSubscription(self, "joint_states", JointState, cfg.joint_topic, self._states.on_message)
        self.create_subscription(Path, "~/path", self._on_path, LATEST_ONLY, callback_group=group)
        self._server = action_server(self, ExecuteCartesianPath, "~/execute_cartesian_path",
                                     execute_callback=self._execute, goal_callback=self._on_goal,
                                     handle_accepted_callback=self._on_accepted,
                                     cancel_callback=lambda _: CancelResponse.ACCEPT, callback_group=group)
        watch_config(self, lambda: self._config, self._apply_config)
        target = cfg.follow_joint_trajectory_action if cfg.execution == "action" else cfg.command_out_topic
        self.get_logger().info(f"path IK for {self._robot.name} ({self._robot.base_frame} -> "
                               f"{self._robot.tip_frame}) ready; preempt={cfg.preempt}; executes via {target}")

    def _warm_planner(self, cfg: PathConfig) -> tuple[CartesianPathPlanner, ProgramPlanner]:
        """Path and program planners for `cfg`, the path planner having solved once (checks per-joint lists:
        ConfigError); the program planner plans on the path planner (its solvers and limits). Joint targets given as
        poses take the nearest closed-form solution on arms that have one (UR), else the iterative pose IK."""
        planner = CartesianPathPlanner(self._robot, cfg, nearest_branch_solver(self._robot))
        planner.warm_up()
        return planner, ProgramPlanner(planner)

    def _apply_config(self, cfg: PathConfig) -> None:
        """Install a validated config (called by watch_config); RobokinError refuses it with the reason."""
        planner, programs = self._warm_planner(cfg)
        with self._lock:
            self._config, self._planner, self._programs = cfg, planner, programs
        self.get_logger().info("path parameters updated")

    def _settings(self) -> tuple[PathConfig, CartesianPathPlanner, ProgramPlanner]:
        """The config and planners as one consistent set (a parameter update swaps them all)."""
        with self._lock:
            return self._config, self._planner, self._programs

    # ---- inputs --------------------------------------------------------------------------------------
    def destroy_node(self) -> None:
        # rclpy's context shutdown also destroys a node whose __init__ raised: close only what was made
        for part in ("_tf_frames", "_state_sub", "_controller"):
            closable = getattr(self, part, None)
            if closable is not None:
                closable.close()
        super().destroy_node()

    def _current_positions(self, cfg: PathConfig) -> np.ndarray:
        wait = self._states.wait_fresh(cfg.joint_state_timeout, FIRST_STATE_WAIT)
        if wait.positions is None:
            raise GoalAbort(Result.NO_JOINT_STATE, f"no fresh joint state on {cfg.joint_topic} ({wait.why_not})")
        return wait.positions

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
        cfg, planner, _ = self._settings()
        try:
            plan = self._plan(planner, self._current_positions(cfg), msg.poses, cfg.blend_radius,
                              should_stop=lambda: not self.context.ok())
            if plan.success and plan.trajectory.duration == 0.0:
                self._log.info("path", f"nav_msgs/Path: {plan.ik.message}")
            elif plan.success:
                self._send_and_forget(self._checked_msg(plan.trajectory), cfg)
            else:
                self._log.warning("path", f"nav_msgs/Path refused: {plan.ik.message}")
        except (RobokinError, GoalAbort) as err:
            self._log.warning("path", f"nav_msgs/Path refused: {err}")

    # ---- planning ------------------------------------------------------------------------------------
    def _plan(self, planner: CartesianPathPlanner, q0: np.ndarray, waypoints, blend: float, goal=None,
              should_stop=None):
        """Plan, validated by the planner (a goal's scalings by core/scaling.py's rule, an empty frame means the
        node's default; its `approach` says how the path begins); `should_stop` is polled while planning
        (PlanningStopped), which also ends at `planning_timeout`."""
        try:
            poses = waypoints_in_base(self._robot, q0, waypoints, self._tf_frames.lookup)
        except TransformLookupError as err:
            raise GoalAbort(Result.INVALID_GOAL, f"waypoint frame lookup failed: {err}") from None
        approach, options = (Approach.PATH, {}) if goal is None else (approach_from_goal(goal), plan_options(goal))
        plan = plan_with_approach(planner, q0, poses, blend, approach, should_stop=should_stop, **options)
        self._marker_pub.publish(path_markers(plan.ik, self._robot.base_frame, self.get_clock().now().to_msg()))
        return plan

    def _plan_program(self, programs: ProgramPlanner, q0: np.ndarray, goal, cfg: PathConfig, should_stop):
        """Plan a program goal (frames resolved as for waypoints; malformed moves raise PathInputError)."""
        program = program_from_goal(self._robot, q0, goal, self._tf_frames.lookup, cfg)
        return programs.plan(program, q0, should_stop=should_stop, **program_plan_options(goal))

    def _plan_goal(self, goal_handle, cfg: PathConfig, plan):
        """Plan an action goal with `plan(q0, should_stop)`; GoalAbort when it is canceled or preempted while
        planning (or right after: nothing is sent then) or when planning exceeds `planning_timeout`
        (PLANNING_TIMEOUT)."""
        try:
            plan = plan(self._current_positions(cfg), lambda: self._planning_interrupt(goal_handle) is not None)
        except PlanningStopped as err:
            if err.reason == TIMEOUT:
                raise GoalAbort(Result.PLANNING_TIMEOUT, str(err)) from None
            code, words = self._planning_interrupt(goal_handle) or (Result.CANCELED, "canceled")
            raise GoalAbort(code, f"{words} while planning ({err.where}); nothing was sent to the controller") \
                from None
        stop = self._planning_interrupt(goal_handle)
        if stop is not None:
            raise GoalAbort(stop[0], f"{stop[1]} right after planning; nothing was sent to the controller")
        return plan

    def _planning_interrupt(self, goal_handle) -> tuple[int, str] | None:
        """(code, words) when a goal must stop planning: canceled, preempted or shutting down."""
        if goal_handle.is_cancel_requested:
            return Result.CANCELED, "canceled"
        if self._goals.preempted() or not self.context.ok():
            return Result.PREEMPTED, "preempted by a new goal"
        return None

    # ---- action --------------------------------------------------------------------------------------
    def _execute(self, goal_handle):
        result = Result(error_code=Result.INTERNAL_ERROR, message="not finished", failed_sample=-1, failed_move=-1)
        with self._goals.executing(lambda: self._finish(goal_handle, result)):
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
        return result

    def _finish(self, goal_handle, result) -> None:
        if result.error_code != Result.SUCCESS:
            self._log.warning(f"goal{result.error_code}",
                              f"path goal ended with code {result.error_code}: {result.message}")
        end_goal(goal_handle, result.error_code == Result.SUCCESS, result.error_code == Result.CANCELED)

    def _run_goal(self, goal_handle, result) -> None:
        goal = goal_handle.request
        cfg, planner, programs = self._settings()          # one consistent set for the whole goal
        self._feedback(goal_handle, "planning", 0.0)
        outcome: GoalOutcome
        if goal.program:
            plan = self._plan_goal(goal_handle, cfg,
                                   lambda q0, stop: self._plan_program(programs, q0, goal, cfg, stop))
            outcome = program_outcome(result, plan, goal)
        else:
            plan = self._plan_goal(goal_handle, cfg,
                                   lambda q0, stop: self._plan(planner, q0, goal.waypoints, goal.blend_radius,
                                                               goal, stop))
            outcome = path_outcome(result, plan, None if plan.ik.success else solved_part(planner, plan, goal), goal)
        try:
            if result.trajectory.points:                   # what a plan_only client may execute itself
                self._check(result.trajectory, "returned")
        except GoalAbort:
            result.trajectory = JointTrajectory()
            raise
        if outcome.trajectory is not None:
            self._follow(goal_handle, outcome.trajectory, cfg)
        result.error_code = outcome.code
        result.message = outcome.message if outcome.trajectory is None else outcome.executed_message

    # ---- execution -----------------------------------------------------------------------------------
    def _checked_msg(self, trajectory) -> JointTrajectory:
        """The trajectory as a message, checked (`_check`) before it is sent."""
        msg = joint_trajectory_msg(trajectory)
        self._check(msg)
        return msg

    def _check(self, msg: JointTrajectory, what: str = "sent") -> None:
        """GoalAbort INTERNAL_ERROR unless the trajectory passes a default joint_trajectory_controller's rules and
        stays within the joint limits as the controller plays it (ros/trajectory_execution.check_outgoing)."""
        check_outgoing(msg, self._robot.joint_names, self._settings()[1].limits(),
                       self.get_clock().now().nanoseconds * 1e-9, what)

    def _send_and_forget(self, msg: JointTrajectory, cfg: PathConfig) -> None:
        if cfg.execution == "topic":
            self._traj_pub.publish(msg)
            return
        self._controller.send_and_forget(
            cfg.follow_joint_trajectory_action,
            follow_goal(msg, cfg.path_tolerance, cfg.goal_tolerance, cfg.execution_timeout_margin),
            lambda why: self._log.warning("path", f"nav_msgs/Path not executed: {why}"))

    def _stop_reason(self, goal_handle, monitor: ExecutionMonitor, now: float, status) -> tuple[int, str] | None:
        """(code, words) when the goal must stop now: canceled, preempted, shutting down or timed out."""
        if goal_handle.is_cancel_requested:
            return Result.CANCELED, monitor.stopped_message(now, "canceled")
        if self._goals.preempted() or not self.context.ok():
            return Result.PREEMPTED, monitor.stopped_message(now, "preempted by a new goal")
        if status is not None and status.state == ExecutionState.TIMED_OUT:
            return Result.EXECUTION_FAILED, status.message
        return None

    def _fresh_positions(self, cfg: PathConfig) -> np.ndarray | None:
        """The newest joint positions if fresh (waits at most `joint_state_timeout` for one), else None."""
        return self._states.wait_fresh(cfg.joint_state_timeout, 0.0).positions

    def _follow(self, goal_handle, trajectory, cfg: PathConfig) -> None:
        """Execute the trajectory as `cfg.execution` says; GoalAbort when it does not end at the goal."""
        msg = self._checked_msg(trajectory)
        if cfg.execution == "topic":
            self._follow_topic(goal_handle, trajectory, msg, cfg)
        else:
            self._follow_action(goal_handle, trajectory, msg, cfg)

    def _follow_action(self, goal_handle, trajectory, msg: JointTrajectory, cfg: PathConfig) -> None:
        """Send a FollowJointTrajectory goal and wait for the controller's result; cancel, preemption and the
        execution timeout stop the arm (`_stop_arm`); GoalAbort with the controller's words when it rejects or
        aborts."""
        action = cfg.follow_joint_trajectory_action
        origin, started = self._stamp_ahead(msg)
        handle = self._controller.send(action, follow_goal(msg, cfg.path_tolerance, cfg.goal_tolerance,
                                                           cfg.execution_timeout_margin + GOAL_TIME_EXTRA),
                                       cfg.controller_response_timeout)
        result = handle.get_result_async()
        if receive_time() > started:     # the controller plays it from where the clock is: it began part-way in
            self._log.warning("late", f"{action} accepted the trajectory {receive_time() - started + START_LEAD:.3f} "
                              f"s after it was sent, later than its stamped start {START_LEAD} s ahead")
        monitor = ExecutionMonitor(trajectory, cfg.goal_tolerance, cfg.execution_timeout_margin, started)
        deadline = monitor.duration + cfg.execution_timeout_margin + RESULT_GRACE
        while not result.done():
            q = self._fresh_positions(cfg)
            now = receive_time()
            stop = self._stop_reason(goal_handle, monitor, now, None if q is None else monitor.update(now, q))
            if stop is not None:
                raise GoalAbort(stop[0], f"{stop[1]}; {self._stop_arm(trajectory, monitor, cfg, origin, now, handle)}")
            if monitor.elapsed(now) > deadline:
                self._controller.cancel(handle, cfg.controller_response_timeout)
                raise GoalAbort(Result.EXECUTION_FAILED, f"no result from {action} within {deadline:.2f} s; "
                                                         "asked it to cancel")
            self._feedback(goal_handle, "executing", min(monitor.elapsed(now) / max(monitor.duration, 1e-9), 1.0))
            time.sleep(FOLLOW_PERIOD)
        wrapped = result.result()
        code, message = controller_outcome(ENDINGS.get(wrapped.status, "ended"), wrapped.result.error_code,
                                           wrapped.result.error_string, action)
        if code is not None:
            raise GoalAbort(int(code), message)

    def _follow_topic(self, goal_handle, trajectory, msg: JointTrajectory, cfg: PathConfig) -> None:
        """Publish the trajectory and follow the joint states until done; GoalAbort when canceled, preempted
        or timed out (after stopping the arm, `_stop_arm`)."""
        origin, started = self._stamp_ahead(msg)
        self._traj_pub.publish(msg)
        monitor = ExecutionMonitor(trajectory, cfg.goal_tolerance, cfg.execution_timeout_margin, started)
        while True:
            q = self._current_positions(cfg)
            now = receive_time()
            status = monitor.update(now, q)
            stop = self._stop_reason(goal_handle, monitor, now, status)
            if stop is not None:
                raise GoalAbort(stop[0], f"{stop[1]}; {self._stop_arm(trajectory, monitor, cfg, origin, now)}")
            self._feedback(goal_handle, "executing", status.progress)
            if status.state == ExecutionState.SUCCEEDED:
                return
            time.sleep(FOLLOW_PERIOD)

    def _stamp_ahead(self, msg: JointTrajectory) -> tuple[Time, float]:
        """Stamp `msg` START_LEAD ahead; (its time 0 on the ROS clock, the same on the receive clock [s])."""
        origin = self.get_clock().now() + Duration(nanoseconds=int(START_LEAD * 1e9))
        msg.header.stamp = origin.to_msg()
        return origin, receive_time() + START_LEAD

    def _stop_arm(self, trajectory, monitor: ExecutionMonitor, cfg: PathConfig, origin: Time, requested: float,
                  handle=None) -> str:
        """Bring the arm to rest within the acceleration limits and wait until it is; words for the result.

        While the arm follows the plan, the stop (core/path/stopping.py) is the running trajectory's own points from
        now to `STOP_LEAD` ahead, then the rest of the path re-timed to rest; stamped in the running trajectory's
        time (`origin`), so the controller plays the same command until the braking begins, with no blend from the
        arm's state. Off the plan it ramps the measured velocity down. It replaces the running trajectory on the
        controller; cancelling the controller's goal (a default JTC then holds the arm at once) is the last resort,
        when no stop can be sent. `requested` [s] is when the stop was decided (receive clock)."""
        limits = self._settings()[1].limits().acceleration
        measured = monitor.positions if monitor.positions is not None else self._fresh_positions(cfg)
        rest = None if measured is None else RestWatch(requested, measured)
        for _ in range(STOP_ATTEMPTS):   # computing takes longer under load: start later rather than arrive late
            decided = receive_time()
            q = self._fresh_positions(cfg)
            stop = plan_stop(trajectory.joint_names, trajectory, monitor.elapsed(decided),
                             monitor.positions if q is None else q, monitor.velocities, limits, STOP_LEAD)
            if decided + STOP_LEAD - receive_time() >= 0.5 * STOP_LEAD:
                break
        words = self._send_stop(stop, monitor, cfg, origin, rest)
        if words is None and stop is not None and stop.along_path:      # the path stop could not be sent
            velocity_stop = plan_stop(trajectory.joint_names, None, monitor.elapsed(decided),
                                      monitor.positions if q is None else q, monitor.velocities, limits, STOP_LEAD)
            words = self._send_stop(velocity_stop, monitor, cfg, origin, rest)
        if words is not None:
            return words
        if handle is not None:
            self._controller.cancel(handle, cfg.controller_response_timeout)
            return "the controller's goal was cancelled (the controller holds the arm)"
        return "no joint state to stop from: the controller was left with its trajectory"

    def _send_stop(self, stop, monitor: ExecutionMonitor, cfg: PathConfig, origin: Time,
                   rest: RestWatch | None) -> str | None:
        """Send a StopPlan stamped in the running trajectory's time and wait for rest: words for the result, or None
        (logged) when there is no stop or it cannot be sent."""
        if stop is None:
            return None
        how = "along the path" if stop.along_path else "along its velocity"
        stamp = origin + Duration(nanoseconds=int(stop.start * 1e9))
        msg = joint_trajectory_msg(stop.trajectory, stamp=stamp.to_msg())
        try:
            ends = monitor.start_time + stop.start + stop.trajectory.duration
            return f"stopped {how} within the acceleration limits{self._deliver_stop(msg, cfg, ends, rest)}"
        except (GoalAbort, RobokinError) as err:
            self._log.warning("stop", f"could not send the stop trajectory {how} ({err})")
            return None

    def _deliver_stop(self, msg: JointTrajectory, cfg: PathConfig, ends: float, rest: RestWatch | None) -> str:
        """Send the stop in place of the running trajectory (a new FollowJointTrajectory goal replaces a JTC's
        goal, a topic message its trajectory) and wait until the joint states show the arm at rest (at most
        2 STOP_SETTLE [s] past the stop's planned end `ends`, receive clock); the words on the measured time to rest.
        GoalAbort or RobokinError when it cannot be sent."""
        self._check(msg)
        if cfg.execution == "topic":
            self._traj_pub.publish(msg)
        else:
            self._controller.send(cfg.follow_joint_trajectory_action,
                                  follow_goal(msg, cfg.path_tolerance, cfg.goal_tolerance, STOP_SETTLE),
                                  cfg.controller_response_timeout)
        while (now := receive_time()) < ends + 2 * STOP_SETTLE:
            q = self._fresh_positions(cfg)
            if q is None or rest is None:
                return ""
            rest.update(now, q)
            if now >= ends and rest.still_for(now) >= REST_CONFIRM:
                return f"; at rest {rest.stopping_time:.2f} s after the request (measured)"
            time.sleep(FOLLOW_PERIOD)
        return f"; still moving {rest.stopping_time:.2f} s after the request"

    def _feedback(self, goal_handle, stage: str, progress: float) -> None:
        goal_handle.publish_feedback(ExecuteCartesianPath.Feedback(stage=stage, progress=float(progress)))


def main(args: list[str] | None = None) -> int:
    """Run the node on a MultiThreadedExecutor (the action's execute callback blocks while following)."""
    return run_node(PathIkNode, args, executor_factory=lambda: MultiThreadedExecutor(num_threads=EXECUTOR_THREADS))


if __name__ == "__main__":
    raise SystemExit(main())
