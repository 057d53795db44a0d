"""The demo's other servo inputs, before the twist script: a joint jog, a pose target, a guided push, a table-top
obstacle the arm slows and stops at, and a pose target back to where the arm started (so the twist script starts
where it always did).

Each phase is judged by what the simulated arm did (FK of /joint_states), against what was asked:
- joint jog: the jogged joint's speed and the others' stillness;
- pose target: a 10 cm step, its settling time and final error, and the servo's "target reached";
- guided push: a synthetic force sensor pushes 6 N (on top of a sensor offset); the tool settles at the speed
  (F - dead band) / damping in the force's direction, and stops when the sensor goes silent;
- obstacle: a table top added on ~/scene_objects under the tool, a twist down onto it: the arm decelerates and halts
  at min_allowable_collision_distance (judged by FK of the halted arm against the table's top face), then the table
  is removed.
"""
from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.config import CollisionConfig, ServoConfig
from robokin_ros.demo.driver import spin_for, spin_until
from robokin_ros.demo.script import Recording

RATE_S = 0.01                  # [s] inputs are streamed at 100 Hz, as a client would
JOG_JOINT, JOG_UNITLESS, JOG_S = 0, 0.4, 1.5
POSE_STEP = np.array([0.0, -0.06, 0.08])       # [m] 10 cm, base axes
POSE_WAIT_S = 2.5
SENSOR_OFFSET = np.array([1.5, -0.5, 4.0])     # [N] what the sensor reads with nobody pushing
PUSH = np.array([0.0, 6.0, 0.0])               # [N] base axes (the sensor frame here is the base)
PUSH_S, SETTLE_S = 1.5, 0.8
TABLE_BELOW = 0.12             # [m] the table top's distance below the tool's origin
TABLE_SIZE = (0.4, 0.4, 0.03)  # [m]
DOWN_SPEED, DOWN_S = 0.08, 2.5  # [m/s] the twist toward the table, [s]


class InputReport(NamedTuple):
    """One input phase: what was asked, what the arm did, and whether that is right."""

    name: str
    asked: str
    measured: str
    ok: bool


def run_input_phases(executor, driver, robot: RobotModel, recording: Recording) -> list[InputReport]:
    """Publish the three phases through `driver` (the demo node) and judge each from the recording."""
    from control_msgs.msg import JointJog
    from geometry_msgs.msg import PoseStamped, TwistStamped, WrenchStamped
    from std_srvs.srv import SetBool

    from robokin_interfaces.msg import SceneObject

    jogs = driver.create_publisher(JointJog, "/servo_node/delta_joint_cmds", 10)
    poses = driver.create_publisher(PoseStamped, "/servo_node/pose_target_cmds", 10)
    wrenches = driver.create_publisher(WrenchStamped, "/servo_node/wrench", 10)
    guiding = driver.create_client(SetBool, "/servo_node/enable_hand_guiding")
    scene = driver.create_publisher(SceneObject, "/servo_node/scene_objects", 10)
    spin_until(executor, lambda: min(p.get_subscription_count() for p in (jogs, poses, wrenches)) > 0, 10.0)
    config = ServoConfig()
    home = robot.fk(recording.positions[-1])
    reports = [_joint_jog(executor, robot, recording, jogs, JointJog, config)]
    here = robot.fk(recording.positions[-1])
    reports.append(_pose_target(executor, robot, recording, poses, PoseStamped, config, "pose target",
                                pin.SE3(here.rotation, here.translation + POSE_STEP), "10 cm step"))
    reports.append(_guided_push(executor, robot, recording, wrenches, WrenchStamped, guiding, SetBool, config))
    reports.append(_obstacle(executor, robot, recording, scene, SceneObject, driver.twist_pub, TwistStamped))
    reports.append(_pose_target(executor, robot, recording, poses, PoseStamped, config, "pose return", home,
                                "back to the start pose"))
    return reports


def _stream(executor, seconds: float, publish) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        publish()
        spin_for(executor, RATE_S)


def _joint_jog(executor, robot, recording, publisher, JointJog, config) -> InputReport:
    name = robot.joint_names[JOG_JOINT]
    msg = JointJog(joint_names=[name], velocities=[JOG_UNITLESS])
    print(f"  - {'joint jog ' + name:<31s} {JOG_S:4.1f} s", flush=True)
    start = time.monotonic()
    _stream(executor, JOG_S, lambda: publisher.publish(msg))
    t, q, _ = recording.stamped(start + 0.4, time.monotonic())         # after the acceleration ramp
    speed = float(np.median(np.diff(q[:, JOG_JOINT]) / np.diff(t)))
    others = float(np.abs(q[-1] - q[0])[np.arange(robot.n) != JOG_JOINT].max())
    asked = JOG_UNITLESS * config.scale.joint
    spin_for(executor, 0.5)
    return InputReport("joint jog", f"{name} at {asked:.3f} rad/s, the others still",
                       f"{speed:.3f} rad/s, others moved {others:.1e} rad",
                       abs(speed - asked) <= 0.03 * asked and others < 1e-6)


def _pose_target(executor, robot, recording, publisher, PoseStamped, config, name, goal, what) -> InputReport:
    msg = PoseStamped()
    msg.header.frame_id = robot.base_frame
    msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = (float(v) for v in goal.translation)
    quaternion = pin.Quaternion(goal.rotation)
    msg.pose.orientation.x, msg.pose.orientation.y = float(quaternion.x), float(quaternion.y)
    msg.pose.orientation.z, msg.pose.orientation.w = float(quaternion.z), float(quaternion.w)
    print(f"  - {name + ': ' + what:<31s} {POSE_WAIT_S:4.1f} s", flush=True)
    sent = time.monotonic()
    publisher.publish(msg)                           # one message: the target holds until reached
    spin_for(executor, POSE_WAIT_S)
    t, q, _ = recording.arrays(sent, time.monotonic())
    errors = np.array([np.linalg.norm(robot.fk(qi).translation - goal.translation) for qi in q])
    angle = float(np.linalg.norm(pin.log3(goal.rotation @ robot.fk(q[-1]).rotation.T)))
    tolerance = config.pose_tracking
    inside = np.flatnonzero(errors > tolerance.linear_tolerance)
    settle = float(t[inside[-1] + 1] - sent) if len(inside) and inside[-1] + 1 < len(t) else float("nan")
    reached = [s.message for s in recording.status if s.time >= sent and s.code == 16]
    return InputReport(name, f"{what}, within {tolerance.linear_tolerance * 1e3:.1f} mm and "
                             f"{tolerance.angular_tolerance * 1e3:.0f} mrad",
                       f"settled in {settle:.2f} s, final error {errors[-1] * 1e3:.3f} mm, {angle * 1e3:.2f} mrad; "
                       f"status: {reached[-1] if reached else 'no TARGET_REACHED'}",
                       errors[-1] <= tolerance.linear_tolerance and angle <= tolerance.angular_tolerance
                       and bool(reached))


def _guided_push(executor, robot, recording, publisher, WrenchStamped, client, SetBool, config) -> InputReport:
    def wrench(force):
        msg = WrenchStamped()
        msg.header.frame_id = robot.base_frame
        msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = (float(v) for v in force)
        return msg

    print(f"  - {f'guided push {np.linalg.norm(PUSH):.0f} N':<31s} {PUSH_S:4.1f} s", flush=True)
    _stream(executor, 0.3, lambda: publisher.publish(wrench(SENSOR_OFFSET)))
    future = client.call_async(SetBool.Request(data=True))
    if not spin_until(executor, future.done, 5.0) or not future.result().success:
        why = future.result().message if future.done() else "no answer from ~/enable_hand_guiding"
        return InputReport("guided push", "guiding enabled", why, False)
    start = time.monotonic()
    _stream(executor, PUSH_S, lambda: publisher.publish(wrench(SENSOR_OFFSET + PUSH)))
    t, q, _ = recording.stamped(start + SETTLE_S, time.monotonic())
    p = np.array([robot.fk(qi).translation for qi in q])
    velocity = (p[-1] - p[0]) / (t[-1] - t[0])
    expected = (np.linalg.norm(PUSH) - config.hand_guiding.force_deadband) / config.hand_guiding.damping
    direction = float(velocity @ PUSH / (np.linalg.norm(velocity) * np.linalg.norm(PUSH)))
    spin_for(executor, 0.8)                          # the sensor goes silent: guiding stops
    still = recording.positions[-1]
    spin_for(executor, 0.3)
    stopped = float(np.abs(recording.positions[-1] - still).max())
    return InputReport("guided push", f"{expected * 1e3:.0f} mm/s along the push, then a stop",
                       f"{np.linalg.norm(velocity) * 1e3:.0f} mm/s, direction cosine {direction:.4f}; "
                       f"moved {stopped:.1e} rad after the sensor went silent",
                       abs(np.linalg.norm(velocity) - expected) <= 0.05 * expected and direction > 0.99
                       and stopped < 1e-6)


def _obstacle(executor, robot, recording, scene, SceneObject, twists, TwistStamped) -> InputReport:
    from shape_msgs.msg import SolidPrimitive

    from robokin_ros.core.collision.clearance import ClearanceChecker
    from robokin_ros.core.collision.scene import SceneObject as CoreObject

    minimum = CollisionConfig(min_allowable_collision_distance=0.01).min_allowable_collision_distance
    tool = robot.fk(recording.positions[-1]).translation
    centre = (float(tool[0]), float(tool[1]), float(tool[2] - TABLE_BELOW - TABLE_SIZE[2] / 2))
    table = SceneObject(operation=SceneObject.ADD, id="table_top")
    table.header.frame_id = robot.base_frame
    table.pose.position.x, table.pose.position.y, table.pose.position.z = centre
    table.pose.orientation.w = 1.0
    table.primitive = SolidPrimitive(type=SolidPrimitive.BOX, dimensions=list(TABLE_SIZE))
    print(f"  - {'obstacle: down onto a table top':<31s} {DOWN_S:4.1f} s", flush=True)
    scene.publish(table)
    spin_for(executor, 0.2)
    down = TwistStamped()
    down.header.frame_id = robot.base_frame
    down.twist.linear.z = -DOWN_SPEED / ServoConfig().scale.linear          # unitless
    start = time.monotonic()
    _stream(executor, DOWN_S, lambda: twists.publish(down))
    halted = recording.positions[-1]
    statuses = [s for s in recording.status if s.time >= start]
    names = {s.code for s in statuses}
    scene.publish(SceneObject(operation=SceneObject.REMOVE, id="table_top"))
    spin_for(executor, 0.5)
    # an independent distance: coal's, from the halted arm's FK to the same box, with a checker of its own
    checker = ClearanceChecker(robot, objects=(CoreObject("table_top", "box", TABLE_SIZE, centre),))
    distance = checker.check(halted).distance
    t, q, _ = recording.arrays(start + DOWN_S - 0.5, start + DOWN_S)
    moving = float(np.abs(np.diff(q, axis=0)).max()) if len(q) > 1 else float("nan")
    last = [s.message for s in statuses if s.code == 5]
    return InputReport("obstacle", f"slow down, then halt {minimum * 1e3:.0f} mm above the table",
                       f"halted {distance * 1e3:.1f} mm above it (joint motion in the last 0.5 s {moving:.1e} rad); "
                       f"status: {last[-1] if last else 'no HALT_FOR_COLLISION'}",
                       abs(distance - minimum) <= 0.002 and 4 in names and 5 in names and moving < 1e-4)


def print_input_report(reports: list[InputReport]) -> None:
    print("\nServo inputs report (judged from /joint_states)")
    for r in reports:
        print(f"  {'ok  ' if r.ok else 'FAIL'} {r.name:<12s} asked: {r.asked}\n       {'':12s} measured: {r.measured}")
