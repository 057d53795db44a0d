"""The peers of bench/bench_jerk.py, on the same inputs (issue 27, "Measured").

- toppra's own output on the blended rectangle: the same joint spline and grid as the acceleration-limited robokin
  times (core/path/toppra_run.py), parametrized by toppra's ParametrizeConstAccel (what robokin samples) and by its
  default ParametrizeSpline, each evaluated at 1 kHz;
- Ruckig point-to-point on the pick-and-place's MoveJ moves: rest to rest, time-synchronized, the same velocity,
  acceleration and jerk limits; its own curve at 1 kHz, and the same curve sent as robokin sends a plan (points at
  the trajectory rate with positions, velocities and accelerations: the quintic a JTC plays through them);
- MoveIt Servo's Ruckig smoothing plugin (moveit_core/online_signal_smoothing/src/ruckig_filter.cpp, jazzy and
  main alike), re-implemented with the `ruckig` package and fed, tick by tick, by what robokin's servo computes
  with jerk off from the filter's last output (MoveIt Servo computes its next command from its last published
  state). Each tick, as the plugin does: the current state is Ruckig's last output (after a reset or a failure:
  the state the input last held); the target position is the servo's; the target velocity is the current velocity
  plus the current acceleration times the period; the target acceleration 0; phase synchronization; one update of
  `update_period` (the servo's period). Results other than Finished, Working and ErrorSynchronizationCalculation
  (and, in Python, a RuckigError: the C++ plugin's ErrorInvalidInput) leave the servo's command unsmoothed and the
  filter without an initial output. Its per-tick states are played as a quintic through them.
  Not reproduced: MoveIt Servo's own IK, its joint-limit halting and collision scaling (robokin's servo computes
  the commands), its smoothHalt on a stale command (robokin's stop ramp is fed instead), and its trajectory
  message (common.cpp's sliding window, which stamps states max_expected_latency ahead and recomputes velocities by
  finite differences). Also shown: the filter's first output when `reset` was never called, as in MoveIt Servo's
  C++ demos (`initialize` leaves Ruckig's current position at 0 on every joint). The filter here runs on ruckig
  0.19 (Python); MoveIt links the ruckig its distribution ships.

Each needs `ruckig` (installed in /tmp/peers-venv only): without it the Ruckig peers are skipped with a message.
"""
from __future__ import annotations

import numpy as np

from jerk_play import Played, controller_times, peaks, spline_figures, spline_play

from robokin_ros.core.path.downsample import path_parameter
from robokin_ros.core.path.toppra_constraints import import_toppra
from robokin_ros.core.path.toppra_run import grid
from robokin_ros.core.servo.servo import Servo
from robokin_ros.core.servo.types import JointMeasurement, TwistCommand
from robokin_ros.demo.script import SILENCE

try:
    import ruckig
except ImportError as err:          # the main venv has no ruckig: the bench says so in its table
    ruckig, RUCKIG_MISSING = None, f"ruckig not installed ({err}); run with /tmp/peers-venv/bin/python"
else:
    RUCKIG_MISSING = ""

ACCEPTED = ("Finished", "Working", "ErrorSynchronizationCalculation")     # the plugin's accepted results


# ---- toppra ------------------------------------------------------------------------------------------------------
def toppra_sections(plan, v_max: np.ndarray, a_max: np.ndarray) -> dict:
    """toppra's own output on each rest-to-rest section of a waypoint path's plan (its kept knots, robokin's
    grid), both parametrizers: duration [s] and per-joint peaks at 1 kHz."""
    ta = import_toppra()
    ik, kept = plan.path_ik, plan.downsample.indices
    bounds = [0, *ik.path.stops, ik.path.size - 1]
    out = {}
    for parametrizer in ("ParametrizeConstAccel", "ParametrizeSpline"):
        duration, acc, jerk = 0.0, np.zeros(len(v_max)), np.zeros(len(v_max))
        for first, last in zip(bounds[:-1], bounds[1:]):
            knots = kept[(kept >= first) & (kept <= last)]
            ss = path_parameter(ik.positions[first:last + 1])[knots - first]
            path = ta.SplineInterpolator(ss, ik.positions[knots], bc_type="not-a-knot")
            constraints = [ta.constraint.JointVelocityConstraint(np.column_stack([-v_max, v_max])),
                           ta.constraint.JointAccelerationConstraint(
                               np.column_stack([-a_max, a_max]),
                               discretization_scheme=ta.constraint.DiscretizationType.Interpolation)]
            instance = ta.algorithm.TOPPRA(constraints, path, gridpoints=grid(ss), parametrizer=parametrizer)
            trajectory = instance.compute_trajectory(0.0, 0.0)
            # at rest 2 periods before and after, as the controller holds the arm (see jerk_play.spline_play)
            t = controller_times(float(trajectory.duration) + 4e-3, -2e-3)
            inside = np.clip(t, 0.0, float(trajectory.duration))
            velocities = trajectory.evald(inside)
            velocities[(t < 0.0) | (t > trajectory.duration)] = 0.0
            played = Played(t, trajectory.eval(inside), velocities)
            p = peaks(played)
            duration += float(trajectory.duration)
            acc, jerk = np.maximum(acc, p.acceleration), np.maximum(jerk, p.jerk)
        out[parametrizer] = {"duration": duration, "acceleration": acc, "jerk": jerk}
    return out


# ---- Ruckig point to point ---------------------------------------------------------------------------------------
def movej_ends(plan) -> list[tuple[str, np.ndarray, np.ndarray, float]]:
    """(label, start, goal, robokin's duration) of each MoveJ of a planned program with exact stops."""
    trajectory, out = plan.trajectory, []
    for move in plan.moves:
        if "MoveJ" not in move.label:
            continue
        ends = [np.array([np.interp(t, trajectory.times, trajectory.positions[:, j])
                          for j in range(trajectory.positions.shape[1])]) for t in (move.start_time, move.end_time)]
        out.append((move.label, ends[0], ends[1], move.duration))
    return out


def ruckig_move(start: np.ndarray, goal: np.ndarray, v_max, a_max, j_max, rate_hz: float) -> dict:
    """Ruckig's time-synchronized rest-to-rest move: duration [s], peaks of its own curve at 1 kHz, and the
    figures (`spline_figures`) of the quintic through its samples at `rate_hz` (how a plan reaches the
    controller)."""
    n = len(start)
    inp = ruckig.InputParameter(n)
    inp.current_position, inp.current_velocity, inp.current_acceleration = list(start), [0.0] * n, [0.0] * n
    inp.target_position, inp.target_velocity, inp.target_acceleration = list(goal), [0.0] * n, [0.0] * n
    inp.max_velocity, inp.max_acceleration, inp.max_jerk = list(v_max), list(a_max), list(j_max)
    inp.synchronization = ruckig.Synchronization.Time
    trajectory = ruckig.Trajectory(n)
    ruckig.Ruckig(n).calculate(inp, trajectory)

    def states(times):
        rows = [trajectory.at_time(float(t)) for t in times]
        return (np.array([r[0] for r in rows]), np.array([r[1] for r in rows]), np.array([r[2] for r in rows]))

    t = controller_times(trajectory.duration)
    q, v, _ = states(t)
    own = peaks(Played(t, q, v))
    sent = np.append(np.arange(0.0, trajectory.duration, 1.0 / rate_hz), trajectory.duration)
    played = spline_figures(sent, *states(sent), np.asarray(a_max, float), np.asarray(j_max, float))
    return {"duration": float(trajectory.duration), "own": own, "played": played}


# ---- MoveIt Servo's Ruckig filter --------------------------------------------------------------------------------
class MoveItRuckigFilter:
    """online_signal_smoothing::RuckigFilterPlugin's behaviour, tick by tick (see the module doc)."""

    def __init__(self, v_max, a_max, j_max, update_period: float, q0: np.ndarray) -> None:
        n = len(q0)
        self.period = update_period
        self.otg = ruckig.Ruckig(n, update_period)
        self.inp, self.out = ruckig.InputParameter(n), ruckig.OutputParameter(n)
        self.inp.max_velocity, self.inp.max_acceleration, self.inp.max_jerk = list(v_max), list(a_max), list(j_max)
        self.inp.synchronization = ruckig.Synchronization.Phase
        self.inp.current_position, self.inp.current_velocity = list(q0), [0.0] * n
        self.inp.current_acceleration = [0.0] * n
        self.inp.target_acceleration = [0.0] * n
        self.have_output = False
        self.failures: list[str] = []

    def smooth(self, positions: np.ndarray, velocities: np.ndarray, accelerations: np.ndarray):
        """The plugin's doSmoothing: the smoothed (positions, velocities, accelerations), or the inputs unchanged
        when Ruckig fails."""
        inp = self.inp
        if self.have_output:
            self.out.pass_to_input(inp)
        inp.target_position = list(positions)
        inp.target_velocity = [v + a * self.period for v, a in zip(inp.current_velocity, inp.current_acceleration)]
        try:
            result = self.otg.update(inp, self.out).name
        except ruckig.RuckigError as err:           # the C++ plugin gets ErrorInvalidInput back instead
            result = f"ErrorInvalidInput ({str(err).strip().splitlines()[-1]})"
        if not result.startswith(ACCEPTED):
            self.failures.append(result)
            self.have_output = False
            return positions, velocities, accelerations
        self.have_output = True
        return (np.array(self.out.new_position), np.array(self.out.new_velocity),
                np.array(self.out.new_acceleration))


def set_commanded_positions(servo: Servo, positions: np.ndarray) -> None:
    """Start the servo's next tick from `positions`, as MoveIt Servo computes its next command from its last
    published positions; the servo keeps its own commanded velocity (MoveIt's IK step does not depend on the arm's
    velocity, and robokin's acceleration window is about its own command stream). The commanded state is the
    servo's private part: a bench reaching in, checked so that it fails loudly if that part changes."""
    state = servo._state                                                   # noqa: SLF001 - see the docstring
    if not isinstance(getattr(state, "positions", None), np.ndarray):
        raise RuntimeError("Servo._state.positions is gone: update bench/jerk_peers.py")
    state.positions = positions.copy()


def moveit_filter_run(robot, config, phases, v_max, a_max, j_max) -> dict:
    """The script through robokin's servo (jerk off) with MoveIt's Ruckig filter after it, on an ideal arm."""
    from jerk_servo import twist_of

    servo, dt = Servo(robot, config), config.publish_period
    q, v, a = robot.home(), np.zeros(robot.n), np.zeros(robot.n)
    smoother = MoveItRuckigFilter(v_max, a_max, j_max, dt, q)
    now, started = 0.0, False
    servo.set_measurement(JointMeasurement(q, now))
    stamps, pos, vel, acc = [now], [q], [v], [a]
    for phase in phases:
        linear, angular, frame = twist_of(robot, phase)
        for _ in range(round(phase.duration / dt)):
            now += dt
            if started:
                set_commanded_positions(servo, q)
            if phase.name != SILENCE:
                servo.set_command(TwistCommand(linear, angular, frame, now))
            out = servo.step(now)
            started = True
            q, v, a = smoother.smooth(out.positions, out.velocities, np.zeros(robot.n))
            servo.set_measurement(JointMeasurement(q, now))
            stamps.append(now)
            pos.append(q)
            vel.append(v)
            acc.append(a)
    pos, vel = np.array(pos), np.array(vel)
    played = spline_play(np.array(stamps), pos, vel, np.array(acc))
    # a step the states' own velocities do not explain: where a failure handed over the unsmoothed command, or the
    # filter went on from the state it held before
    jump = np.abs(np.diff(pos, axis=0) - 0.5 * (vel[1:] + vel[:-1]) * dt).max()
    return {"played": played, "failures": len(smoother.failures), "failure_kinds": sorted(set(smoother.failures)),
            "largest_unexplained_step_rad": float(jump)}


def moveit_first_tick_without_reset(robot, config, v_max, a_max, j_max) -> dict:
    """The filter's first output when its `reset` was never called (MoveIt Servo's C++ demos call getNextJointState
    without resetSmoothing; `initialize` leaves Ruckig's current position at 0 on every joint): how far that first
    command is from the arm at home, in joint space [rad] and at the tool [mm]."""
    servo = Servo(robot, config)
    home = robot.home()
    servo.set_measurement(JointMeasurement(home, 0.0))
    servo.set_command(TwistCommand(np.array([0.0, 0.125, 0.0]), np.zeros(3), "", config.publish_period))
    out = servo.step(config.publish_period)
    smoother = MoveItRuckigFilter(v_max, a_max, j_max, config.publish_period, np.zeros(robot.n))
    q, _, _ = smoother.smooth(out.positions, out.velocities, np.zeros(robot.n))
    tool = np.linalg.norm(robot.fk(q).translation - robot.fk(home).translation)
    return {"joint_step_rad": round(float(np.abs(q - home).max()), 4), "tool_step_mm": round(float(tool * 1e3), 1),
            "failures": smoother.failures}
