"""Runs path_ik_node's trajectories on a trajectory controller: checks what leaves, sends it, follows the arm, stops it.

`TrajectoryExecutor` is the only way a trajectory leaves path_ik_node:
- `check` is the one outgoing check: joint_trajectory_controller's default rules and the joint velocity and
  acceleration limits as the controller plays the trajectory (ros/trajectory_execution.check_outgoing, else
  INTERNAL_ERROR). Only a `CheckedTrajectory` can be sent; the stops are checked the same way.
- `run` executes a checked trajectory through one backend (`execution: action` sends a FollowJointTrajectory goal
  and reports the controller's acceptance and result in its own words; `execution: topic` publishes it and follows
  the joint states until every joint is within `goal_tolerance` of the end), following the arm with
  core/trajectory/execution.py. The message sent is the checked one (the action result's), stamped `START_LEAD` ahead,
  so the executor knows where the controller is on it at any time.
- Cancel, preemption and the execution timeout send a stop in place of the running trajectory (a new goal, or on
  the topic; the controller's goal is never cancelled while a stop can be sent: a default JTC holds the arm at once
  then): the running trajectory's own points, stamped in its own time, up to `STOP_LEAD` ahead, then the rest of the
  path re-timed to rest within the acceleration limits (core/trajectory/stopping.py), or a ramp along the measured
  velocity when the arm is off the plan. The run ends once the joint states show the arm at rest, and its words
  give the time from the request to rest as measured.
- `send_and_forget` sends a checked trajectory without following it (path_ik_node's nav_msgs/Path input).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.time import Time
from std_msgs.msg import Header
from trajectory_msgs.msg import JointTrajectory

from robokin_ros.core.errors import RobokinError
from robokin_ros.core.limits import MotionLimits
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.trajectory.execution import ExecutionMonitor, ExecutionState, RestWatch, controller_outcome
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays
from robokin_ros.core.trajectory.execution import ExecutionCode
from robokin_ros.core.trajectory.stopping import StopPlan, plan_stop
from robokin_ros.ros.goals import GoalAbort
from robokin_ros.ros.joint_state_cache import JointStateCache
from robokin_ros.ros.jtc_conversions import follow_goal
from robokin_ros.ros.path_conversions import joint_trajectory_msg
from robokin_ros.ros.runtime import QUEUE_DEPTH, ThrottledLogger, paired_clock_read, receive_time
from robokin_ros.ros.trajectory_execution import ENDINGS, ControllerClient, check_outgoing

FIRST_STATE_WAIT = 5.0       # [s] a goal before any joint state has arrived waits this long for one
FOLLOW_PERIOD = 0.02         # [s] between execution checks (and feedback messages)
RESULT_GRACE = 2.0           # [s] past the controller's own deadline (duration + goal time) before giving up on it
# A stop's first point is this far ahead of the decision: time to compute (10-30 ms, more under load) and deliver
# it, and a long enough blend for the controller, which interpolates from the arm's state to that first point:
# a timing error e [s] at speed v costs ~6 v e / lead^2 of acceleration (0.12 s measured up to 1.5x the limit).
STOP_LEAD = 0.25             # [s]
# A trajectory's time 0 is stamped this far ahead of sending: the executor then knows the controller's progress
# along it exactly (a stop is stamped in the same time), and the goal reaches the controller before it starts.
START_LEAD = 0.1             # [s]
REST_CONFIRM = 0.1           # [s] a stopped arm is at rest once its joint states have not moved for this long
STOP_ATTEMPTS = 3
STOP_SETTLE = 1.0            # [s] past a stop's end, allowed for the arm to settle (the stop goal's goal time)
GOAL_TIME_EXTRA = 1.0        # [s] added to the controller's goal time: the executor's own timeout stops the arm first

Interruption = Callable[[], tuple[int, str] | None]   # (code, why) when a run must stop from outside, else None


def current_positions(states: JointStateCache, cfg: PathConfig) -> np.ndarray:
    """The newest joint positions, waiting for fresh ones; GoalAbort NO_JOINT_STATE when none come."""
    wait = states.wait_fresh(cfg.joint_state_timeout, FIRST_STATE_WAIT)
    if wait.positions is None:
        raise GoalAbort(int(ExecutionCode.NO_JOINT_STATE),
                        f"no fresh joint state on {cfg.joint_topic} ({wait.why_not})")
    return wait.positions


class CheckedTrajectory(NamedTuple):
    """A message that passed `TrajectoryExecutor.check` (unstamped: what is sent is stamped when it is sent)."""

    msg: JointTrajectory


def stamped(msg: JointTrajectory, stamp) -> JointTrajectory:
    """`msg` with another header stamp, sharing its joint names and points (the original keeps its stamp)."""
    return JointTrajectory(header=Header(stamp=stamp, frame_id=msg.header.frame_id), joint_names=msg.joint_names,
                           points=msg.points)


class ActionBackend:
    """`execution: action`: each trajectory is a FollowJointTrajectory goal to `follow_joint_trajectory_action`
    (a new goal replaces a JTC's running one); the controller's result ends a run."""

    ends_at_arrival = False

    def __init__(self, controller: ControllerClient, cfg: PathConfig, log: ThrottledLogger) -> None:
        self._controller, self._cfg, self._log = controller, cfg, log
        self._action = cfg.follow_joint_trajectory_action
        self._handle = self._result = None

    def _goal(self, msg: JointTrajectory, goal_time: float):
        """The FollowJointTrajectory goal for `msg`: the configured tolerances, `goal_time` [s] to settle."""
        return follow_goal(msg, self._cfg.path_tolerance, self._cfg.goal_tolerance, goal_time)

    def _send(self, msg: JointTrajectory, goal_time: float):
        return self._controller.send(self._action, self._goal(msg, goal_time), self._cfg.controller_response_timeout)

    def start(self, msg: JointTrajectory, started: float) -> None:
        """Send the run's goal (its time 0 is `started`, receive clock) and wait for the controller to accept it."""
        self._handle = self._send(msg, self._cfg.execution_timeout_margin + GOAL_TIME_EXTRA)
        self._result = self._handle.get_result_async()
        if receive_time() > started:     # the controller plays it from where the clock is: it began part-way in
            self._log.warning("late", f"{self._action} accepted the trajectory "
                              f"{receive_time() - started + START_LEAD:.3f} s after it was sent, later than its "
                              f"stamped start {START_LEAD} s ahead")

    def watch(self, monitor: ExecutionMonitor, now: float) -> None:
        """GoalAbort EXECUTION_FAILED (after asking the controller to cancel) once its result is overdue."""
        deadline = monitor.duration + self._cfg.execution_timeout_margin + RESULT_GRACE
        if monitor.elapsed(now) > deadline:
            self._controller.cancel(self._handle, self._cfg.controller_response_timeout)
            raise GoalAbort(int(ExecutionCode.EXECUTION_FAILED), f"no result from {self._action} within "
                                                                 f"{deadline:.2f} s; asked it to cancel")

    def answered(self) -> bool:
        """The controller has sent its result."""
        return self._result.done()

    def outcome(self) -> None:
        """GoalAbort with the controller's words unless it reports success."""
        wrapped = self._result.result()
        code, message = controller_outcome(ENDINGS.get(wrapped.status, "ended"), wrapped.result.error_code,
                                           wrapped.result.error_string, self._action)
        if code is not None:
            raise GoalAbort(int(code), message)

    def replace(self, stop: JointTrajectory) -> None:
        """Send a stop in place of the running goal (GoalAbort when the controller does not take it)."""
        self._send(stop, STOP_SETTLE)

    def give_up(self) -> str:
        """No stop could be sent: cancel the controller's goal (a default JTC then holds the arm at once)."""
        self._controller.cancel(self._handle, self._cfg.controller_response_timeout)
        return "the controller's goal was cancelled (the controller holds the arm)"

    def forget(self, msg: JointTrajectory, on_rejected: Callable[[str], None]) -> None:
        """Send a goal without waiting; `on_rejected(words)` if the controller refuses it."""
        self._controller.send_and_forget(self._action, self._goal(msg, self._cfg.execution_timeout_margin),
                                         on_rejected)


class TopicBackend:
    """`execution: topic`: each trajectory is published on `command_out_topic` (a new one replaces the running one);
    the joint states end a run, once the arm is at the end."""

    ends_at_arrival = True

    def __init__(self, publish: Callable[[JointTrajectory], None]) -> None:
        self._publish = publish

    def start(self, msg: JointTrajectory, started: float) -> None:
        self._publish(msg)

    def watch(self, monitor: ExecutionMonitor, now: float) -> None:
        """Nothing: the monitor's own timeout judges a published trajectory."""

    @staticmethod
    def answered() -> bool:
        """Never: a topic has no result; the joint states end the run."""
        return False

    def outcome(self) -> None:
        """Nothing: a run on the topic ends when the arm is at the end."""

    def replace(self, stop: JointTrajectory) -> None:
        self._publish(stop)

    @staticmethod
    def give_up() -> str:
        """No stop could be sent (no measured state to plan one from): a topic has no goal to cancel."""
        return "no joint state to stop from: the controller was left with its trajectory"

    def forget(self, msg: JointTrajectory, on_rejected: Callable[[str], None]) -> None:
        self._publish(msg)


class _Run(NamedTuple):
    """One trajectory being executed."""

    trajectory: JointTrajectoryArrays
    cfg: PathConfig
    backend: ActionBackend | TopicBackend
    origin: Time                  # its time 0 on the ROS clock (its stamp)
    monitor: ExecutionMonitor     # started at its time 0 on the receive clock


class TrajectoryExecutor:
    """Sends, follows and stops path_ik_node's trajectories (module docstring).

    Args:
        node: publishes, sends goals, gives the ROS clock. joint_names: the controller's joints (the check's).
        limits: the current joint limits (a parameter update may change them). states: the measured joint states.
        log: throttled warnings. callback_group: the action clients' (reentrant, so other executor threads
            complete the futures a run waits on). command_topic: the topic backend's.
    """

    def __init__(self, node: Node, joint_names, limits: Callable[[], MotionLimits], states: JointStateCache,
                 log: ThrottledLogger, callback_group, command_topic: str) -> None:
        self._node, self._joint_names, self._limits, self._states, self._log = node, joint_names, limits, states, log
        self._publisher = node.create_publisher(JointTrajectory, command_topic, QUEUE_DEPTH)
        self._controller = ControllerClient(node, callback_group)

    def close(self) -> None:
        self._controller.close()

    def check(self, msg: JointTrajectory, what: str = "sent") -> CheckedTrajectory:
        """The outgoing check (module docstring): GoalAbort INTERNAL_ERROR with the reason, naming how the
        trajectory leaves (`what`: "sent", "returned")."""
        check_outgoing(msg, self._joint_names, self._limits(), self._node.get_clock().now().nanoseconds, what)
        return CheckedTrajectory(msg)

    def _backend(self, cfg: PathConfig) -> ActionBackend | TopicBackend:
        if cfg.execution == "topic":
            return TopicBackend(self._publisher.publish)
        return ActionBackend(self._controller, cfg, self._log)

    def send_and_forget(self, checked: CheckedTrajectory, cfg: PathConfig, on_rejected: Callable[[str], None]) -> None:
        """Send as `cfg.execution` says, unstamped (played on receipt), without following it; `on_rejected(words)`
        when a controller refuses it."""
        self._backend(cfg).forget(checked.msg, on_rejected)

    def run(self, checked: CheckedTrajectory, trajectory: JointTrajectoryArrays, cfg: PathConfig,
            interruption: Interruption, feedback: Callable[[float], None]) -> None:
        """Execute `checked` (the message of `trajectory`) as `cfg.execution` says and follow it to its end.

        `interruption()` is polled: (code, why) stops the arm and ends the run; `feedback(progress)` is called
        at every check. GoalAbort when it does not end at the goal: the interruption's code, EXECUTION_FAILED
        (timed out), the controller's refusal or failure, NO_JOINT_STATE (topic: no joint states to follow).
        """
        backend = self._backend(cfg)
        moment, clock_ns = paired_clock_read(self._node.get_clock())
        origin = Time(nanoseconds=clock_ns, clock_type=self._node.get_clock().clock_type) + Duration(
            nanoseconds=int(START_LEAD * 1e9))
        started = moment + START_LEAD
        backend.start(stamped(checked.msg, origin.to_msg()), started)
        run = _Run(trajectory, cfg, backend, origin,
                   ExecutionMonitor(trajectory, cfg.goal_tolerance, cfg.execution_timeout_margin, started))
        self._follow(run, interruption, feedback)

    def _follow(self, run: _Run, interruption: Interruption, feedback: Callable[[float], None]) -> None:
        monitor, backend = run.monitor, run.backend
        while not backend.answered():
            q = current_positions(self._states, run.cfg) if backend.ends_at_arrival else self._fresh_positions(run.cfg)
            now = receive_time()
            status = None if q is None else monitor.update(now, q)
            stop = self._stop_reason(interruption, monitor, now, status)
            if stop is not None:
                raise GoalAbort(stop[0], f"{stop[1]}; {self._stop_arm(run, now)}")
            backend.watch(monitor, now)
            feedback(min(monitor.elapsed(now) / max(monitor.duration, 1e-9), 1.0))
            if backend.ends_at_arrival and status.state == ExecutionState.SUCCEEDED:
                return
            time.sleep(FOLLOW_PERIOD)
        backend.outcome()

    @staticmethod
    def _stop_reason(interruption: Interruption, monitor: ExecutionMonitor, now: float,
                     status) -> tuple[int, str] | None:
        """(code, words) when the run must stop now: interrupted from outside or timed out."""
        interrupted = interruption()
        if interrupted is not None:
            return interrupted[0], monitor.stopped_message(now, interrupted[1])
        if status is not None and status.state == ExecutionState.TIMED_OUT:
            return int(ExecutionCode.EXECUTION_FAILED), status.message
        return None

    def _fresh_positions(self, cfg: PathConfig) -> np.ndarray | None:
        """The newest joint positions if fresh (waits at most `joint_state_timeout` for one), else None."""
        return self._states.wait_fresh(cfg.joint_state_timeout, 0.0).positions

    def _stop_arm(self, run: _Run, requested: float) -> str:
        """Bring the arm to rest within the acceleration limits and wait until it is; words for the result.

        While the arm follows the plan, the stop (core/trajectory/stopping.py) is the running trajectory's own points
        from now to `STOP_LEAD` ahead, then the rest of the path re-timed to rest; stamped in the running trajectory's
        time, so the controller plays the same command until the braking begins, with no blend from the arm's
        state. Off the plan it ramps the measured velocity down. It replaces the running trajectory on the
        controller; the backend's last resort (`give_up`) is for when no stop can be sent. `requested` [s] is when
        the stop was decided (receive clock). With joint jerk limits set, both stops keep within them as played."""
        monitor, trajectory = run.monitor, run.trajectory
        motion = self._limits()
        limits, jerk = motion.acceleration, motion.jerk if motion.jerk_limited else None
        measured = monitor.positions if monitor.positions is not None else self._fresh_positions(run.cfg)
        rest = None if measured is None else RestWatch(requested, measured)
        for _ in range(STOP_ATTEMPTS):   # computing takes longer under load: start later rather than arrive late
            decided = receive_time()
            q = self._fresh_positions(run.cfg)
            stop = plan_stop(trajectory.joint_names, trajectory, monitor.elapsed(decided),
                             monitor.positions if q is None else q, monitor.velocities, limits, STOP_LEAD, j_max=jerk)
            if decided + STOP_LEAD - receive_time() >= 0.5 * STOP_LEAD:
                break
        words = self._send_stop(stop, run, rest)
        if words is None and stop is not None and stop.along_path:      # the path stop could not be sent
            velocity_stop = plan_stop(trajectory.joint_names, None, monitor.elapsed(decided),
                                      monitor.positions if q is None else q, monitor.velocities, limits, STOP_LEAD,
                                      j_max=jerk)
            words = self._send_stop(velocity_stop, run, rest)
        return words if words is not None else run.backend.give_up()

    def _send_stop(self, stop: StopPlan | None, run: _Run, rest: RestWatch | None) -> str | None:
        """Send a StopPlan stamped in the running trajectory's time and wait for rest: words for the result, or None
        (logged) when there is no stop or it cannot be sent."""
        if stop is None:
            return None
        how = "along the path" if stop.along_path else "along its velocity"
        stamp = run.origin + Duration(nanoseconds=int(stop.start * 1e9))
        msg = joint_trajectory_msg(stop.trajectory, stamp=stamp.to_msg())
        try:
            ends = run.monitor.start_time + stop.start + stop.trajectory.duration
            return f"stopped {how} within the acceleration limits{self._deliver_stop(msg, run, ends, rest)}"
        except (GoalAbort, RobokinError) as err:
            self._log.warning("stop", f"could not send the stop trajectory {how} ({err})")
            return None

    def _deliver_stop(self, msg: JointTrajectory, run: _Run, ends: float, rest: RestWatch | None) -> str:
        """Check the stop, send it in place of the running trajectory and wait until the joint states show the arm
        at rest (at most 2 STOP_SETTLE [s] past the stop's planned end `ends`, receive clock); the words on the
        measured time to rest. GoalAbort or RobokinError when it cannot be sent."""
        run.backend.replace(self.check(msg).msg)
        while (now := receive_time()) < ends + 2 * STOP_SETTLE:
            q = self._fresh_positions(run.cfg)
            if q is None or rest is None:
                return ""
            rest.update(now, q)
            if now >= ends and rest.still_for(now) >= REST_CONFIRM:
                return f"; at rest {rest.stopping_time:.2f} s after the request (measured)"
            time.sleep(FOLLOW_PERIOD)
        return f"; still moving {rest.stopping_time:.2f} s after the request"
