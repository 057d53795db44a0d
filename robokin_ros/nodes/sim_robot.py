"""sim_robot: an embedded stand-in for a ros2_control robot driver (the arithmetic is in core/sim/).

Interfaces:
- the joint_trajectory_controller (JTC) topic `trajectory_topic` and its FollowJointTrajectory action
  (`<controller namespace>/follow_joint_trajectory`), validated by JTC's rules with its default switches
  (core/trajectory/controller_rules.py) plus robokin's own checks; path and goal tolerances and `constraints.goal_time`
  judged as JTC judges them (core/trajectory/controller_tolerances.py). As in JTC, a rejected goal is REJECTED (the
  client sees no result), a newer goal aborts the running one, a topic trajectory replaces the followed
  trajectory but not the goal, and a cancel holds the arm where it is (JTC's default, `decelerate_on_cancel`
  false). Trajectories are played as JTC's splines (core/sim/trajectory_follower.py): quintic through points with
  accelerations (from the arm's state at zero acceleration), cubic with velocities, linear with positions only; one
  stamped in the past is played from the point the clock is at.
- the forward position / velocity controller topics (Float64MultiArray in chain order).
- /joint_states at `rate`; the URDF link tree on /tf and /tf_static (ros/link_tree_tf.py) while no
  robot_state_publisher runs.
- The executable refuses to start (exit code 1, naming the other node) when another node already publishes its
  joint state topic with any of its joints: a driver is running (ros/joint_state_sources.py, `driver_check_wait`).
  A SimRobot built inside another program (the tests) skips that look at the graph.
Every refused command is logged in the controller's words, counted in `rejected_count` (`last_rejection`
keeps the reason) and published on `~/rejected` (std_msgs/String), so a test or demo can fail on it. The
newest command wins; a refused one leaves the previous command running.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from control_msgs.action import FollowJointTrajectory
from rclpy.action import CancelResponse, GoalResponse
from rclpy.task import Future
from rclpy.time import Time
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory

from robokin_ros.core.errors import RobokinError
from robokin_ros.core.process_options import apply_process_options
from robokin_ros.core.sim.config import SimRobotConfig
from robokin_ros.core.sim.joints import SimulatedJoints
from robokin_ros.core.sim.trajectory_follower import chain_points
from robokin_ros.core.trajectory.controller_rules import JtcSwitches, Rejection, jtc_rejection, robokin_rejection
from robokin_ros.core.trajectory.controller_tolerances import (
    PREEMPTED_MESSAGE,
    FollowCode,
    TrackingSample,
    Verdict,
    goal_tolerances,
    judge,
)
from robokin_ros.core.sim.trajectory_follower import TrajectoryPoints, trajectory_start
from robokin_ros.ros.conversions import duration_seconds, joint_state_msg, time_nanoseconds, vector_from_float64_array
from robokin_ros.ros.joint_state_sources import refuse_second_source
from robokin_ros.ros.jtc_conversions import (
    declare_joint_constraints,
    feedback_msg,
    tolerance_requests,
    trajectory_facts,
)
from robokin_ros.ros.link_tree_tf import LinkTreeTf, TFMessage
from robokin_ros.ros.params import watch_config
from robokin_ros.ros.rclpy_compat import action_server, events_executor
from robokin_ros.ros.runtime import QUEUE_DEPTH, RobokinNode, paired_clock_read, receive_time, run_node

Result = FollowJointTrajectory.Result
LOG_KEY_CHARS = 40      # rejections that agree in this many leading characters are throttled as one


@dataclass
class ActiveGoal:
    """The FollowJointTrajectory goal being executed; `done` carries its result to the execute coroutine."""

    handle: object
    done: Future


class SimRobot(RobokinNode):
    """Simulated arm; see the module docstring for its interfaces."""

    default_name = "sim_robot"
    config_class = SimRobotConfig
    executor_factory = staticmethod(events_executor)
    driver_check: ClassVar[bool] = False       # look for a running driver first (the executable's node does)

    def __init__(self, node_name: str | None = None, **kwargs) -> None:
        super().__init__(node_name, **kwargs)
        cfg = self._config
        if self.driver_check:
            refuse_second_source(self, cfg.joint_states_topic, self._robot.joint_names, cfg.driver_check_wait)
        self._joints = SimulatedJoints(self._robot, cfg.initial_positions, receive_time(), cfg.velocity_limit_scale)
        self._names = self._robot.joint_names
        self._switches = switches_of(cfg)
        self._default_tolerances = declare_joint_constraints(self, self._names, cfg.goal_time)
        self._tolerances = self._default_tolerances     # as JTC: a goal's tolerances stay until the next goal
        self._judging = False                           # the followed trajectory's tolerances are still judged
        self._goal: ActiveGoal | None = None
        self._executions: dict[bytes, Future] = {}      # goal id -> its result, awaited by _execute
        self._last_sample: TrackingSample | None = None
        self.rejected_count = 0
        self.last_rejection = ""
        self._accepted_points: tuple = (None, None)     # (trajectory message, its chain points) of the goal judged last

        self.create_subscription(JointTrajectory, cfg.trajectory_topic, self._on_trajectory, QUEUE_DEPTH)
        self.create_subscription(Float64MultiArray, cfg.position_command_topic, self._on_positions, QUEUE_DEPTH)
        self.create_subscription(Float64MultiArray, cfg.velocity_command_topic, self._on_velocities, QUEUE_DEPTH)
        self._state_pub = self.create_publisher(JointState, cfg.joint_states_topic, QUEUE_DEPTH)
        self._rejected_pub = self.create_publisher(String, "~/rejected", QUEUE_DEPTH)
        self._server = action_server(self, FollowJointTrajectory, cfg.action_name(), execute_callback=self._execute,
                                     goal_callback=self._on_goal, handle_accepted_callback=self._on_goal_accepted,
                                     cancel_callback=lambda _: CancelResponse.ACCEPT)
        for applied, sentence in apply_process_options(cfg.process_options):
            # one call site per severity: rclpy raises when a call site logs at a second severity
            if applied:
                self.get_logger().info(f"process: {sentence}")
            else:
                self.get_logger().warning(f"process: {sentence}")
        self.create_timer(1.0 / cfg.rate, self._tick)
        self.create_timer(1.0 / cfg.action_monitor_rate, self._publish_feedback)
        self._tf = None
        if cfg.publish_tf and TFMessage is None:
            self.get_logger().warning("publish_tf is true but tf2_msgs is not importable: no /tf")
        elif cfg.publish_tf:
            self._tf = LinkTreeTf(self, self._robot, lambda: self._joints.positions, cfg.tf_rate)
        watch_config(self, lambda: self._config, self._apply_config)
        self.get_logger().info(f"simulating {self._robot.name} ({list(self._names)}) at {cfg.rate:.0f} Hz from "
                               f"{np.round(self._joints.positions, 4).tolist()}; trajectory action "
                               f"{cfg.action_name()}")

    # ---- read-only views of the simulated arm, for tests and tools that watch it --------------------------
    @property
    def joint_positions(self) -> np.ndarray:
        """The simulated joint positions now [rad | m, chain order]; a copy, so a reader cannot move the arm."""
        return self._joints.positions.copy()

    @property
    def joint_velocities(self) -> np.ndarray:
        """The simulated joint velocities now [rad/s | m/s, chain order]; a copy."""
        return self._joints.velocities.copy()

    @property
    def tf_paused(self) -> bool:
        """True while /tf is left to a running robot_state_publisher; false when this node publishes no /tf."""
        return self._tf is not None and self._tf.paused

    def _apply_config(self, cfg: SimRobotConfig) -> None:
        """Runtime update of the controller switches and goal_time (the other fields are read-only)."""
        self._config, self._switches = cfg, switches_of(cfg)
        self._default_tolerances = dataclasses.replace(self._default_tolerances, goal_time=cfg.goal_time)

    # ---- validation, as JTC's validate_trajectory_msg plus robokin's own checks ------------------------
    def _validated(self, msg: JointTrajectory) -> TrajectoryPoints | None:
        """The message in chain order, or None after reporting why it is refused."""
        facts = trajectory_facts(msg)
        now = self.get_clock().now().nanoseconds
        limits = self._robot.limits
        rejection = (jtc_rejection(facts, self._names, now, self._switches)
                     or robokin_rejection(facts, self._names, limits.lower, limits.upper))
        if rejection is None:
            try:
                return chain_points(facts, self._names, self._joints.positions)
            except ValueError as err:
                rejection = Rejection("positions", str(err), False)
        self._reject(str(rejection))
        return None

    def _reject(self, reason: str) -> None:
        self.rejected_count += 1
        self.last_rejection = reason
        self._rejected_pub.publish(String(data=reason))
        self._log.error(reason[:LOG_KEY_CHARS], f"rejected: {reason}")

    # ---- the trajectory topic and the forward controllers: the newest command replaces the active one ------
    def _on_trajectory(self, msg: JointTrajectory) -> None:
        self._joints.step(receive_time())     # the old command acts up to the moment it is replaced
        points = self._validated(msg)
        if points is not None:
            self._follow(points, msg)

    def _follow(self, points: TrajectoryPoints, msg: JointTrajectory) -> None:
        received, clock_ns = paired_clock_read(self.get_clock())
        start = trajectory_start(received, time_nanoseconds(msg.header.stamp), clock_ns)
        self._joints.follow(points, start)
        self._judging = True

    def _on_positions(self, msg: Float64MultiArray) -> None:
        self._forward(lambda: self._joints.command_positions(
            vector_from_float64_array(msg, len(self._names), "position command")), "position command")

    def _on_velocities(self, msg: Float64MultiArray) -> None:
        self._forward(lambda: self._joints.command_velocities(
            vector_from_float64_array(msg, len(self._names), "velocity command")), "velocity command")

    def _forward(self, accept, what: str) -> None:
        self._joints.step(receive_time())
        try:
            accept()
        except RobokinError as err:
            self._reject(f"{what}: {err}")
            return
        self._judging = False
        self._end_goal(Verdict(FollowCode.INVALID_GOAL, f"a {what} replaced the trajectory (sim_robot)", ""))

    # ---- FollowJointTrajectory, as JTC serves it -------------------------------------------------------
    def _on_goal(self, goal) -> GoalResponse:
        self._joints.step(receive_time())
        points = self._validated(goal.trajectory)
        # kept for the acceptance: converting a long program twice held this loop (and /joint_states) ~0.5 s on a
        # busy CPU, long enough for the servo to report the joint states missing
        self._accepted_points = (goal.trajectory, points)
        return GoalResponse.REJECT if points is None else GoalResponse.ACCEPT

    def _on_goal_accepted(self, handle) -> None:
        self._end_goal(Verdict(FollowCode.INVALID_GOAL, PREEMPTED_MESSAGE, ""))
        request = handle.request
        trajectory, points = self._accepted_points
        self._accepted_points = (None, None)
        if trajectory is not request.trajectory or points is None:
            points = chain_points(trajectory_facts(request.trajectory), self._names, self._joints.positions)
        self._follow(points, request.trajectory)
        self._tolerances, problem = goal_tolerances(
            self._default_tolerances, self._names, tolerance_requests(request.path_tolerance),
            tolerance_requests(request.goal_tolerance), duration_seconds(request.goal_time_tolerance))
        if problem:
            self._log.error("tolerance", problem)
        self._goal = ActiveGoal(handle, Future())
        self._executions[bytes(handle.goal_id.uuid)] = self._goal.done
        handle.execute()

    async def _execute(self, handle):
        # Resumed once per executor wake-up (the 500 Hz tick at least) until the tick ends the goal.
        return await self._executions.pop(bytes(handle.goal_id.uuid))

    def _end_goal(self, verdict: Verdict, canceled: bool = False) -> None:
        """End the active goal (if any) with the verdict's code and message, or as canceled."""
        goal, self._goal = self._goal, None
        if goal is None:
            return
        result = Result(error_code=int(verdict.code), error_string=verdict.message)
        if canceled:
            goal.handle.canceled()
            result = Result()                               # JTC cancels with an empty result
        elif verdict.code == FollowCode.SUCCESSFUL:
            goal.handle.succeed()
        else:
            goal.handle.abort()
        goal.done.set_result(result)

    def _publish_feedback(self) -> None:
        if self._goal is not None and self._last_sample is not None:
            self._goal.handle.publish_feedback(feedback_msg(self._names, self._last_sample, self._joints.velocities,
                                                            self.get_clock().now().to_msg()))

    # ---- the control cycle -------------------------------------------------------------------------------
    def _tick(self) -> None:
        # the state's stamp and the step's time are one moment (paired_clock_read): a preemption between two
        # separate reads put the positions of a later time under the stamp, 1.3-2x the acceleration limits for
        # anyone differencing the joint states of a busy CPU
        moment, clock_ns = paired_clock_read(self.get_clock())
        stamp = Time(nanoseconds=clock_ns).to_msg()
        report = self._joints.step(moment)
        if report.velocity_limited:
            self._log.warning("velocity", f"command exceeds the velocity limit of "
                              f"{list(report.velocity_limited)}: clamped")
        if report.position_limited:
            self._log.warning("position", f"command pushes {list(report.position_limited)} past a position "
                              "limit: held at the limit")
        if self._goal is not None and self._goal.handle.is_cancel_requested:
            self._joints.hold()
            self._judging = False
            self._end_goal(Verdict(FollowCode.SUCCESSFUL, "", ""), canceled=True)
        elif report.tracking is not None and self._judging:
            self._last_sample = report.tracking
            self._act_on(judge(report.tracking, self._tolerances, self._names))
        self._state_pub.publish(joint_state_msg(self._names, self._joints.positions, self._joints.velocities, stamp))

    def _act_on(self, verdict: Verdict) -> None:
        """What JTC does with one cycle's verdict: nothing, succeed, or hold the arm and abort."""
        if verdict.code is None:
            return
        self._judging = False
        if verdict.code == FollowCode.SUCCESSFUL:
            if self._goal is not None:
                self.get_logger().info("Goal reached, success!")
            self._end_goal(verdict)
            return
        self._joints.hold()
        if self._goal is not None:
            self.get_logger().warning(f"{verdict.message}: {verdict.detail}")
        elif verdict.code == FollowCode.PATH_TOLERANCE_VIOLATED:
            self.get_logger().error(f"Holding position due to state tolerance violation: {verdict.detail}")
        else:
            self.get_logger().error(f"Exceeded goal_time_tolerance: holding position... {verdict.detail}")
        self._end_goal(verdict)


def switches_of(cfg: SimRobotConfig) -> JtcSwitches:
    """The controller switches a sim configuration sets."""
    return JtcSwitches(cfg.allow_partial_joints_goal, cfg.allow_nonzero_velocity_at_trajectory_end,
                       cfg.allow_integration_in_goal_trajectories)


class CheckedSimRobot(SimRobot):
    """The `sim_robot` executable's node: it refuses to start next to a running driver (see `driver_check_wait`)."""

    driver_check = True


def main(args: list[str] | None = None) -> int:
    """Entry point of the `sim_robot` executable."""
    return run_node(CheckedSimRobot, args)


if __name__ == "__main__":
    raise SystemExit(main())
