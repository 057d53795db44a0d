"""Servo core speed on the Panda: robokin_ros vs a plain numpy DLS, pink and RoboPlan OInK, one process.

Every row times one call per tick over a moving configuration (the tool follows a slow twist and the
configuration is reset to home every 500 ticks), after a warm-up. Also times the linear-algebra options
considered for the kernel and numba's compile / cached-load time (in fresh subprocesses).
Run: .venv/bin/python bench/bench_servo_core.py [--ticks 20000] [--servo-only] [--two-tips]
(`--servo-only`: the robokin rows alone, for before/after comparisons: `PYTHONPATH=<an old tree>` runs them on it.
Configurations are built from parameter names, which every tree since issue 25 accepts. With jerk limits (issue 27):
the tick with the Panda's published jerk limits, the jerk window kernel alone, and Ruckig's per-tick velocity update
as its peer when `ruckig` imports: /tmp/peers-venv/bin/python bench/bench_servo_core.py --servo-only.)
Targets: core tick median <= 10 us and p99 <= 40 us; >= 8x faster than pink, >= 2x faster than OInK.

Two tips (issue 26; `--two-tips` runs these rows alone, and the full run ends with them): the dual Panda (14 joints)
holding a box, its object moving along TWIST: robokin's stacked task (both tips' kinematics, the object point and
the relative rows) and its solve, the full servo tick, and pink and mink with two FrameTasks plus a RelativeFrameTask
(and a PostureTask), in the same process. Goal: <= 20 us per tick for the stacked solve. Peers are skipped with a
printed reason when they do not import (a peer goes in its own venv, e.g. one adding .venv's site-packages by a .pth).
"""
from __future__ import annotations

import argparse
import os
from dataclasses import replace
import subprocess
import sys
import tempfile
import time

import numpy as np
import pinocchio as pin

from robokin_ros.core.robot import RobotModel
from robokin_ros.core.schema import config_from_mapping
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.pose_tracking import PoseTarget
from robokin_ros.core.servo.servo import Servo
from robokin_ros.core.servo.types import JointMeasurement, TwistCommand
from robokin_ros.core.servo.velocity_ik import VelocityIk

DT = 0.002
TWIST = np.array([0.05, -0.03, 0.02, 0.1, -0.05, 0.08])


def servo_config(**params) -> ServoConfig:
    """A ServoConfig from {parameter name: value} (dotted names as keyword `**{"separation.enabled": True}`)."""
    return config_from_mapping(ServoConfig, params)


def timed(step, ticks: int, warmup: int = 2000, prepare=None) -> tuple[float, float]:
    """(median, p99) [us] of `step(k)` over `ticks` calls after `warmup` calls; `prepare(k)` is untimed."""
    for k in range(warmup):
        if prepare:
            prepare(k)
        step(k)
    out = np.empty(ticks)
    clock = time.perf_counter_ns
    for k in range(ticks):
        if prepare:
            prepare(k)
        t0 = clock()
        step(k)
        out[k] = clock() - t0
    return float(np.median(out)) / 1e3, float(np.percentile(out, 99)) / 1e3


def target_after(pose: pin.SE3) -> pin.SE3:
    """Pose after DT of TWIST (tool origin velocity and angular velocity in base axes)."""
    return pin.SE3(pin.exp3(TWIST[3:] * DT) @ pose.rotation, pose.translation + TWIST[:3] * DT)


class Moving:
    """A configuration that follows the twist with whatever velocity the stepper returns."""

    def __init__(self, robot: RobotModel) -> None:
        self.home, self.q = robot.home(), robot.home()

    def advance(self, k: int, dq: np.ndarray) -> None:
        self.q = self.home.copy() if k % 500 == 0 else self.q + dq * DT


# ---- rows ------------------------------------------------------------------------------------------------
def robokin_solve(robot, check: bool):
    ik = VelocityIk(robot, ServoConfig())
    state, prev = Moving(robot), [np.zeros(robot.n)]

    def step(k):
        dq = ik.solve(state.q, TWIST, dt=DT, previous_velocities=prev[0], check=check).velocities
        prev[0] = dq
        state.advance(k, dq)
    return step


def robokin_servo(robot, **params):
    """Servo.step alone; the callbacks (set_command, set_measurement) run untimed in `prepare`."""
    servo = Servo(robot, servo_config(command_in_type="speed_units", publish_period=DT, **params))
    last = [robot.home()]

    def prepare(k):
        now = k * DT
        servo.set_command(TwistCommand(TWIST[:3], TWIST[3:], "", now))
        servo.set_measurement(JointMeasurement(robot.home() if k % 500 == 0 else last[0], now))

    def step(k):
        last[0] = servo.step(k * DT).positions
    return step, prepare


# a sender's stamp is int ns since issue 25 (PoseTarget.stamp: int), float seconds in older trees
STAMPS_IN_NS = PoseTarget.__dataclass_fields__["stamp"].type in ("int", int)


def robokin_pose_servo(robot):
    """Servo.step tracking a target moving along TWIST (a 100 Hz stamped stream, set untimed in `prepare`)."""
    servo = Servo(robot, servo_config(publish_period=DT))
    last, start = [robot.home()], robot.fk(robot.home())

    def prepare(k):
        now = k * DT
        if k % 5 == 0:
            t = (k % 500) * DT
            goal = pin.SE3(pin.exp3(TWIST[3:] * t) @ start.rotation, start.translation + TWIST[:3] * t)
            x, y, z, w = pin.Quaternion(goal.rotation).coeffs()
            stamp = 10**9 + round(now * 1e9) if STAMPS_IN_NS else 1.0 + now
            servo.set_pose_target(PoseTarget(goal.translation, np.array([x, y, z, w]), "", stamp, now))
        servo.set_measurement(JointMeasurement(robot.home() if k % 500 == 0 else last[0], now))

    def step(k):
        last[0] = servo.step(k * DT).positions
    return step, prepare


def robokin_guarded_servo(robot):
    """Servo.step with separation monitoring on (a person at 0.5 m: every tick is scaled and solved again)."""
    config = servo_config(command_in_type="speed_units", publish_period=DT, **{"separation.enabled": True})
    servo = Servo(robot, config)
    last = [robot.home()]

    def prepare(k):
        now = k * DT
        servo.set_command(TwistCommand(TWIST[:3] * 4.0, TWIST[3:], "", now))
        servo.set_separation_distance(0.5, now)
        servo.set_measurement(JointMeasurement(robot.home() if k % 500 == 0 else last[0], now))

    def step(k):
        last[0] = servo.step(k * DT).positions
    return step, prepare


def numpy_dls(robot, full: bool):
    """Baseline: pin Jacobian + np.linalg.solve DLS + null-space limit push (+ scaling and clamp if full)."""
    model, data, fid = robot.model, robot.data, robot.tip_frame_id
    lo, hi, vmax = robot.limits.lower, robot.limits.upper, robot.limits.velocity
    mid, band = 0.5 * (lo + hi), 0.25 * (hi - lo)
    state, eye6, eye = Moving(robot), np.eye(6), np.eye(robot.n)

    def step(k):
        q = state.q
        J = pin.computeFrameJacobian(model, data, q, fid, pin.LOCAL_WORLD_ALIGNED)        # (6, n)
        JJt = J @ J.T + 1e-4 * eye6
        dq = J.T @ np.linalg.solve(JJt, TWIST)
        push = -np.clip(np.abs(q - mid) - (0.5 * (hi - lo) - band), 0.0, None) * np.sign(q - mid)
        dq += (eye - J.T @ np.linalg.solve(JJt, J)) @ push
        if full:
            dq *= min(1.0, float(np.min(vmax / np.maximum(np.abs(dq), 1e-300))))
            dq = np.clip(dq, (lo - q) / DT, (hi - q) / DT)
        state.advance(k, dq)
    return step


def pink_step(robot):
    import pink
    from pink.tasks import FrameTask, PostureTask
    config = pink.Configuration(robot.model, robot.data, robot.home())
    frame = FrameTask(robot.tip_frame, position_cost=1.0, orientation_cost=1.0)
    posture = PostureTask(cost=1e-3)
    posture.set_target(robot.home())
    state = Moving(robot)

    def step(k):
        config.update(state.q)
        frame.set_target(target_after(config.get_transform_frame_to_world(robot.tip_frame)))
        dq = pink.solve_ik(config, [frame, posture], DT, solver="daqp")
        state.advance(k, dq)
    return step


def oink_step(robot):
    import roboplan.core as rc
    import roboplan.optimal_ik as oik

    from robokin_ros.core.embedded import example_robot_data_dir
    robots = example_robot_data_dir()
    urdf = str(robots / "panda_description/urdf/panda.urdf")
    scene = rc.Scene("panda", rc.loadUrdfSceneDescription(urdf, [str(robots.parent.parent)]))
    scene.addGroupFromChain("arm", robot.base_frame, robot.tip_frame)
    oink = oik.Oink(scene, "arm")
    home = robot.home()
    target = rc.CartesianConfiguration(robot.base_frame, robot.tip_frame, robot.fk(home).homogeneous)
    frame = oik.FrameTask(oink, scene, target, oik.FrameTaskOptions())
    posture = oik.ConfigurationTask(oink, home, np.full(robot.n, 1e-3), oik.ConfigurationTaskOptions())
    constraints = [oik.PositionLimit(oink), oik.VelocityLimit(oink, DT, robot.limits.velocity)]
    delta_q, state = np.zeros(oink.num_variables), Moving(robot)
    q_full = np.zeros(scene.getCurrentJointPositions().shape[0])

    def step(k):
        q_full[:robot.n] = state.q
        frame.setTargetFrameTransform(np.asfortranarray(target_after(robot.fk(state.q)).homogeneous))
        oink.solveIk(q_full, [frame, posture], constraints, delta_q)
        state.advance(k, delta_q[:robot.n] / DT)
    return step, "solveIk(q, [FrameTask, ConfigurationTask], [PositionLimit, VelocityLimit]), daqp"


# ---- two tips ------------------------------------------------------------------------------------------------
LEFT, RIGHT = "left_panda_hand_tcp", "right_panda_hand_tcp"


def hands_holding_a_box(robot) -> np.ndarray:
    """The dual Panda's positions with the hands facing each other 0.3 m apart, 0.4 m in front at 0.6 m (pose IK;
    test_multi_tip's start, clear of singularities)."""
    from robokin_ros.core.ik.pose_ik import solve_pose
    q = robot.home()
    for tip, side in ((LEFT, 1.0), (RIGHT, -1.0)):
        z, x = np.array([0.0, -side, 0.0]), np.array([0.0, 0.0, -1.0])
        target = pin.SE3(np.column_stack((x, np.cross(z, x), z)), np.array([0.4, side * 0.15, 0.6]))
        q = solve_pose(robot, target, q, robot.frame_id(tip), margin=0.2).positions
    return q


class MovingFrom(Moving):
    """`Moving` from a given start instead of home."""

    def __init__(self, start: np.ndarray) -> None:
        self.home, self.q = start.copy(), start.copy()


def robokin_stacked_solve(robot, start, mode: str):
    """One tick's stacked task (tip kinematics, blocks) and its solve, `mode` coordinated or independent."""
    from robokin_ros.core.servo.commands import TwistConverter        # (not in trees before issue 26)
    from robokin_ros.core.servo.tips_motion import TipsMotion
    config = servo_config(command_in_type="speed_units", publish_period=DT, **{"tips.mode": mode})
    ik, tips = VelocityIk(robot, config), TipsMotion(robot, TwistConverter(robot), config)
    state, prev = MovingFrom(start), [np.zeros(robot.n)]
    if mode == "coordinated":
        commands = [TwistCommand(TWIST[:3], TWIST[3:], "", 0.0)]
    else:
        commands = [TwistCommand(TWIST[:3], TWIST[3:], "", 0.0, tip=LEFT),
                    TwistCommand(-TWIST[:3], TWIST[3:], "", 0.0, tip=RIGHT)]

    def prepare(k):
        for command in commands:
            tips.set_twist(replace(command, received_at=k * DT), None, config)

    def step(k):
        task = tips.twist(state.q, k * DT)
        dq = ik.solve_task(state.q, task, dt=DT, previous_velocities=prev[0]).velocities
        prev[0] = dq
        state.advance(k, dq)
    return step, prepare


def robokin_two_tip_servo(robot, start):
    """Servo.step carrying the box (coordinated); the callbacks run untimed in `prepare`. Every 500 ticks a new servo
    starts from the start (untimed): a measurement alone would not bring one back (it integrates its own command and
    re-anchors only at rest), and the box would wander into the arms' limits and singularities."""
    config = servo_config(command_in_type="speed_units", publish_period=DT, **{"tips.mode": "coordinated"})
    servo, last = [None], [start]

    def prepare(k):
        now = k * DT
        if k % 500 == 0:
            servo[0] = Servo(robot, config)
        servo[0].set_command(TwistCommand(TWIST[:3], TWIST[3:], "", now))
        servo[0].set_measurement(JointMeasurement(start if k % 500 == 0 else last[0], now))

    def step(k):
        last[0] = servo[0].step(k * DT).positions
    return step, prepare


def pink_two_tips(robot, start):
    """pink: FrameTask per hand (targets moved along the box's twist), RelativeFrameTask right-in-left, PostureTask."""
    import pink
    from pink.tasks import FrameTask, PostureTask, RelativeFrameTask
    config = pink.Configuration(robot.model, robot.data, start)
    left, right = (FrameTask(tip, position_cost=1.0, orientation_cost=1.0) for tip in (LEFT, RIGHT))
    relative = RelativeFrameTask(RIGHT, LEFT, position_cost=1.0, orientation_cost=1.0)
    relative.set_target(robot.fk(start, LEFT).actInv(robot.fk(start, RIGHT)))
    posture = PostureTask(cost=1e-3)
    posture.set_target(start)
    state = MovingFrom(start)

    def step(k):
        config.update(state.q)
        for task, tip in ((left, LEFT), (right, RIGHT)):
            task.set_target(target_after(config.get_transform_frame_to_world(tip)))
        dq = pink.solve_ik(config, [left, right, relative, posture], DT, solver="daqp")
        state.advance(k, dq)
    return step


def mink_two_tips(robot, start):
    """mink on a MuJoCo model compiled from the dual Panda's URDF (geometry stripped; MuJoCo fuses the fixed hand
    links into link7, so the frames are the link7 bodies, and the fingers add 4 joints): FrameTask per hand,
    RelativeFrameTask right-in-left, PostureTask, daqp."""
    import re

    import mink
    import mujoco
    xml = re.sub(r"<(visual|collision)>.*?</\1>", "", robot.urdf_xml, flags=re.S)
    model = mujoco.MjModel.from_xml_string(xml)
    configuration = mink.Configuration(model)
    address = [model.joint(name).qposadr[0] for name in robot.joint_names]
    q_full = configuration.q.copy()
    q_full[address] = start
    bodies = ("left_panda_link7", "right_panda_link7")
    hands = [mink.FrameTask(body, "body", position_cost=1.0, orientation_cost=1.0) for body in bodies]
    relative = mink.RelativeFrameTask(bodies[1], "body", bodies[0], "body", position_cost=1.0, orientation_cost=1.0)
    configuration.update(q_full)
    relative.set_target(configuration.get_transform(bodies[1], "body", bodies[0], "body"))
    posture = mink.PostureTask(model, cost=1e-3)
    posture.set_target(q_full)
    state = MovingFrom(start)

    def step(k):
        q_full[address] = state.q
        configuration.update(q_full)
        for task, body in zip(hands, bodies):
            pose = configuration.get_transform_frame_to_world(body, "body")
            moved = target_after(pin.SE3(pose.as_matrix()))
            task.set_target(mink.SE3.from_matrix(moved.homogeneous))
        velocity = mink.solve_ik(configuration, [*hands, relative, posture], DT, solver="daqp")
        state.advance(k, velocity[address])
    return step


def two_tip_rows(ticks: int) -> None:
    """The two-tip rows, each as (median, p99) [us], peers skipped with the reason when they do not import."""
    robot = RobotModel.load("dual_panda")
    start = hands_holding_a_box(robot)
    rows = [("robokin stacked solve, coordinated", "tip kinematics + object/relative rows + VelocityIk.solve_task",
             *robokin_stacked_solve(robot, start, "coordinated")),
            ("robokin stacked solve, independent", "tip kinematics + two tips' rows + VelocityIk.solve_task",
             *robokin_stacked_solve(robot, start, "independent")),
            ("robokin Servo.step, coordinated", "the full servo tick carrying the box",
             *robokin_two_tip_servo(robot, start))]
    try:
        rows.append(("pink solve_ik, 2 tips", "2 FrameTask + RelativeFrameTask + PostureTask, daqp",
                     pink_two_tips(robot, start), None))
    except ImportError as error:
        print(f"pink skipped: {error} (install pin-pink and daqp in a venv of their own)")
    try:
        rows.append(("mink solve_ik, 2 tips", "2 FrameTask + RelativeFrameTask + PostureTask, daqp (MuJoCo)",
                     mink_two_tips(robot, start), None))
    except ImportError as error:
        print(f"mink skipped: {error} (install mink in a venv of their own)")
    print(f"\ndual Panda ({robot.n} joints, 2 tips), {ticks} ticks per row after warm-up; times in microseconds\n")
    print(f"| {'row':38} | {'option':62} | median | p99 |")
    print(f"|{'-' * 40}|{'-' * 64}|--------|-----|")
    results = {}
    for name, how, step, prepare in rows:
        results[name] = timed(step, ticks, prepare=prepare)
        print(f"| {name:38} | {how:62} | {results[name][0]:6.1f} | {results[name][1]:.1f} |", flush=True)
    core = results["robokin stacked solve, coordinated"][0]
    print(f"\nstacked solve (coordinated): median {core:.1f} us (goal <= 20)")
    for peer in ("pink solve_ik, 2 tips", "mink solve_ik, 2 tips"):
        if peer in results:
            print(f"speed-up vs {peer.split()[0]} with two tips: {results[peer][0] / core:.1f}x")


# ---- kernel options --------------------------------------------------------------------------------------
def kernel_options(robot):
    import scipy.linalg as sla
    from scipy.linalg import lapack

    from robokin_ros.core.dls import bounded_dls
    J = np.ascontiguousarray(robot.jacobian(robot.home()))
    M = J @ J.T + 1e-4 * np.eye(6)
    n = robot.n
    z, lo, hi, dq, fixed = np.zeros(n), np.full(n, -10.0), np.full(n, 10.0), np.empty(n), np.zeros(n, np.int8)
    yield "np.linalg.solve 6x6", lambda k: np.linalg.solve(M, TWIST)
    yield "np.linalg.eigh 6x6", lambda k: np.linalg.eigh(M)
    yield "scipy lapack.dposv 6x6 (direct LAPACK call)", lambda k: lapack.dposv(M, TWIST)
    yield "scipy cho_factor + cho_solve 6x6", lambda k: sla.cho_solve(sla.cho_factor(M), TWIST)
    yield "numba bounded_dls kernel (Jacobi eigen + DLS + null space + bounds)", \
        lambda k: bounded_dls(J, TWIST, z, lo, hi, 0.04, 0.05, dq, fixed)
    yield "pin.computeFrameJacobian (for scale)", \
        lambda k: pin.computeFrameJacobian(robot.model, robot.data, robot.home(), robot.tip_frame_id,
                                           pin.LOCAL_WORLD_ALIGNED)


def numba_load_times() -> tuple[float, float]:
    """Seconds to import robokin_ros.core.servo.velocity_ik and run one solve: cold numba cache, then warm."""
    code = ("import time; t=time.perf_counter(); import numpy as np; "
            "from robokin_ros.core.robot import RobotModel; from robokin_ros.core.servo.velocity_ik import VelocityIk; "
            "from robokin_ros.core.servo.config import ServoConfig; "
            "r=RobotModel.from_name('panda'); VelocityIk(r, ServoConfig()).solve(r.home(), np.zeros(6), dt=0.002, "
            "previous_velocities=np.zeros(7)); print(time.perf_counter()-t)")
    times = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for _ in range(2):
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
            times.append(float(out.stdout.strip().splitlines()[-1]))
    return times[0], times[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=20000)
    parser.add_argument("--servo-only", action="store_true", help="only the robokin rows (before/after checks)")
    parser.add_argument("--two-tips", action="store_true", help="only the two-tip rows (dual Panda, with peers)")
    args = parser.parse_args()
    robot = RobotModel.from_name("panda")
    if args.servo_only:
        servo_rows(robot, args.ticks)
        return
    if args.two_tips:
        two_tip_rows(args.ticks)
        return
    rows = [("robokin VelocityIk.solve, check=False", "numba kernels, fused DLS+null space+limits",
             robokin_solve(robot, False), None),
            ("robokin VelocityIk.solve, check=True", "same + input validation", robokin_solve(robot, True), None),
            ("robokin Servo.step (full tick)", "twist conversion + IK + integrate + look-ahead window",
             *robokin_servo(robot)),
            ("robokin Servo.step, pose target", "pose error -> braking twist + feed-forward, then the same tick",
             *robokin_pose_servo(robot)),
            ("robokin Servo.step, separation limited", "tool speed judged, command scaled, IK solved again",
             *robokin_guarded_servo(robot)),
            ("numpy DLS step (baseline)", "pin J + np.linalg.solve + null space", numpy_dls(robot, False), None),
            ("numpy servo tick (baseline)", "baseline + velocity scaling + position clamp",
             numpy_dls(robot, True), None),
            ("pink solve_ik", "FrameTask + PostureTask, daqp", pink_step(robot), None)]
    step, how = oink_step(robot)
    rows.append(("RoboPlan OInK step", how, step, None))
    results = {}
    print(f"Panda, {args.ticks} ticks per row after warm-up; times in microseconds\n")
    print(f"| {'row':38} | {'option':58} | median | p99 |")
    print(f"|{'-' * 40}|{'-' * 60}|--------|-----|")
    for name, how, step, prepare in rows:
        results[name] = timed(step, args.ticks, prepare=prepare)
        print(f"| {name:38} | {how:58} | {results[name][0]:6.1f} | {results[name][1]:.1f} |", flush=True)
    print("\nkernel options (6x6 / 6x7, same process)")
    for name, fn in kernel_options(robot):
        med, p99 = timed(fn, min(args.ticks, 10000), 500)
        print(f"| {name:64} | {med:6.2f} | {p99:6.2f} |", flush=True)
    core = results["robokin VelocityIk.solve, check=False"][0]
    print(f"\ncore tick: median {core:.1f} us (target <= 10), p99 "
          f"{results['robokin VelocityIk.solve, check=False'][1]:.1f} us (target <= 40)")
    for peer, target in (("pink solve_ik", 8), ("RoboPlan OInK step", 2)):
        print(f"speed-up vs {peer}: {results[peer][0] / core:.1f}x (target >= {target}x)")
    cold, warm = numba_load_times()
    print(f"numba: import + first solve {cold:.1f} s with an empty cache (compile), {warm:.2f} s cached")
    two_tip_rows(args.ticks)


# the Panda's published joint jerk limits (Franka, control parameters) [rad/s^3] and the demo's acceleration limits
PANDA_JERK = [7500.0, 3750.0, 5000.0, 6250.0, 7500.0, 10000.0, 10000.0]
PANDA_ACCELERATION = [15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0]


def jerk_kernel(robot):
    """The jerk-limited window alone (core/servo/jerk_window.py): from a moving state toward a velocity that
    changes every tick, the first period, the carried motion and the stop, points and peak share."""
    from robokin_ros.core.servo.jerk_window import JerkWindows
    from robokin_ros.core.servo.window import WindowBuilder
    config = servo_config(publish_period=DT, max_joint_acceleration=PANDA_ACCELERATION)
    windows = WindowBuilder.for_config(robot, config, np.array(PANDA_ACCELERATION))
    jerk = JerkWindows(DT, float(windows.grid[-1]), 1.0, windows.limits, np.array(PANDA_JERK))
    state = [robot.home(), np.zeros(robot.n), np.zeros(robot.n)]

    def step(k):
        target = 0.5 * np.sin(0.01 * k + np.arange(robot.n))
        _, at_dt = jerk.build(state[0], state[1], state[2], target)
        state[:] = [robot.home(), at_dt[1], at_dt[2]]
    return step


def ruckig_update(robot):
    """Ruckig's per-tick update, velocity interface, 7 joints, toward the same changing velocity (the peer for a
    state-to-target step; `ruckig` in a venv of its own, e.g. /tmp/peers-venv). Raises ImportError without it."""
    from ruckig import ControlInterface, InputParameter, OutputParameter, Ruckig
    otg, inp, out = Ruckig(robot.n, DT), InputParameter(robot.n), OutputParameter(robot.n)
    inp.control_interface = ControlInterface.Velocity
    inp.current_position, inp.current_velocity = robot.home().tolist(), [0.0] * robot.n
    inp.current_acceleration, inp.target_acceleration = [0.0] * robot.n, [0.0] * robot.n
    inp.max_velocity = robot.limits.velocity.tolist()
    inp.max_acceleration, inp.max_jerk = PANDA_ACCELERATION, PANDA_JERK

    def step(k):
        inp.target_velocity = (0.5 * np.sin(0.01 * k + np.arange(robot.n))).tolist()
        otg.update(inp, out)
        out.pass_to_input(inp)
    return step


def servo_rows(robot, ticks: int) -> None:
    """The robokin rows alone, each as (median, p99) [us]; with jerk limits too where the tree has them."""
    rows = [("VelocityIk.solve, check=False", robokin_solve(robot, False), None),
            ("Servo.step (full tick)", *robokin_servo(robot)),
            ("Servo.step, pose target", *robokin_pose_servo(robot)),
            ("Servo.step, separation limited", *robokin_guarded_servo(robot))]
    try:
        rows += [("Servo.step, jerk limits (Panda)",
                  *robokin_servo(robot, max_joint_jerk=PANDA_JERK, max_joint_acceleration=PANDA_ACCELERATION)),
                 ("jerk window kernel alone", jerk_kernel(robot), None)]
    except ImportError:
        print("(this tree has no jerk-limited servo: no jerk rows)")
    try:
        rows.append(("ruckig update, velocity interface", ruckig_update(robot), None))
    except ImportError as error:
        print(f"ruckig skipped: {error} (install ruckig in a venv of its own, e.g. /tmp/peers-venv)")
    for name, step, prepare in rows:
        median, p99 = timed(step, ticks, prepare=prepare)
        print(f"| {name:33} | {median:6.2f} | {p99:6.2f} |", flush=True)


if __name__ == "__main__":
    main()
