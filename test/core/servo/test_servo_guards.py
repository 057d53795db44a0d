"""Separation monitoring and hand guiding through the servo core (ideal arm: the measurement is the command). The
tool's speed is judged by FK differences of consecutive commanded positions, not by what the servo reports."""
import numpy as np
import pytest
from servo_arm import DT, IdealArm

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.servo.config import CollisionConfig, SeparationConfig, ServoConfig
from robokin_ros.core.servo.status import ServoStatus


def accelerations(outputs):
    v = np.array([o.velocities for o in outputs])
    return np.abs(np.diff(v, axis=0)).max(axis=0) / DT


SEPARATION = dict(command_in_type="speed_units", separation=SeparationConfig(enabled=True))


def test_tool_speed_follows_v_safe_times_d_over_d_safety(panda):
    arm = IdealArm(panda, **SEPARATION)
    for _ in range(int(1.0 / DT)):
        out = arm.tick(twist=(0.0, 0.2, 0.0), distance=0.5)
    cfg = arm.servo.config
    expected = cfg.separation.safe_speed * 0.5 / cfg.separation.safety_distance          # 0.125 m/s
    np.testing.assert_allclose(np.median(arm.tool_speed()), expected, rtol=0.01)
    assert out.status == ServoStatus.SEPARATION_LIMITED and "500 mm" in out.message
    # far away: the full command (0.2 m/s is below v_safe 0.25) passes untouched, status from the IK
    for _ in range(int(0.5 / DT)):
        out = arm.tick(twist=(0.0, 0.2, 0.0), distance=2.0)
    np.testing.assert_allclose(np.median(arm.tool_speed()), 0.2, rtol=0.01)
    assert out.status == ServoStatus.OK


def test_inside_the_protective_distance_the_arm_stops_within_the_acceleration_limits(panda):
    arm = IdealArm(panda, **SEPARATION)
    for _ in range(int(0.5 / DT)):
        arm.tick(twist=(0.0, 0.2, 0.0), distance=2.0)
    before = len(arm.outputs)
    for _ in range(int(1.0 / DT)):
        out = arm.tick(twist=(0.0, 0.2, 0.0), distance=0.2)
    assert out.status == ServoStatus.PROTECTIVE_STOP and not out.velocities.any()
    assert np.all(accelerations(arm.outputs[before - 1:]) <= arm.servo.config.default_joint_acceleration * (1 + 1e-6))
    assert arm.tool_speed(10).max() < 1e-9


def test_a_missing_or_stale_distance_means_the_slowest_speed(panda):
    cfg = ServoConfig(**SEPARATION)
    slowest = cfg.separation.safe_speed * cfg.separation.protective_distance / cfg.separation.safety_distance
    arm = IdealArm(panda, **SEPARATION)
    for _ in range(int(1.0 / DT)):                      # never a reading
        out = arm.tick(twist=(0.0, 0.2, 0.0))
    np.testing.assert_allclose(np.median(arm.tool_speed()), slowest, rtol=0.01)
    assert out.status == ServoStatus.SEPARATION_LIMITED and "no separation distance" in out.message
    arm.tick(twist=(0.0, 0.2, 0.0), distance=5.0)       # one far reading, then silence: stale after 0.2 s
    for _ in range(int(1.0 / DT)):
        out = arm.tick(twist=(0.0, 0.2, 0.0))
    np.testing.assert_allclose(np.median(arm.tool_speed()), slowest, rtol=0.01)
    assert "stale" in out.message
    with pytest.raises(InvalidInputError):
        arm.servo.set_separation_distance(float("nan"), arm.now)


def test_a_constant_push_settles_at_force_over_damping_in_its_direction(panda):
    arm = IdealArm(panda)
    arm.tick(wrench=(1.0, -0.5, 3.0, 0, 0, 0))          # the sensor's no-push reading (an offset)
    arm.servo.start_guiding(arm.now)
    push = np.array([6.0, 8.0, 0.0])                     # 10 N on top of the offset
    for _ in range(int(1.5 / DT)):
        out = arm.tick(wrench=np.concatenate(((1.0, -0.5, 3.0) + push, np.zeros(3))))
    cfg = arm.servo.config
    expected = (10.0 - cfg.hand_guiding.force_deadband) / cfg.hand_guiding.damping                 # 0.16 m/s
    p = np.array([panda.fk(o.positions).translation for o in arm.outputs[-50:]])
    velocity = (p[-1] - p[0]) / (49 * DT)
    np.testing.assert_allclose(np.linalg.norm(velocity), expected, rtol=0.01)
    assert velocity @ push / (np.linalg.norm(velocity) * 10.0) > 0.999
    assert out.status == ServoStatus.HAND_GUIDING


def test_a_wrench_gap_pauses_guiding_a_fresh_wrench_resumes_it_and_a_long_gap_ends_it(panda):
    arm = IdealArm(panda)
    with pytest.raises(InvalidInputError, match="none received yet"):
        arm.servo.start_guiding(arm.now)
    arm.tick(wrench=np.zeros(6))
    arm.servo.start_guiding(arm.now)
    for _ in range(int(0.5 / DT)):
        arm.tick(wrench=(10.0, 0, 0, 0, 0, 0))
    assert arm.servo.guiding
    before = len(arm.outputs)
    for _ in range(int(0.5 / DT)):                      # the sensor goes silent for less than resume_timeout
        out = arm.tick()
    assert arm.servo.guiding and out.message.startswith("hand guiding paused: no wrench for")
    assert "resumes when wrenches return" in out.message
    assert not out.velocities.any()
    assert np.all(accelerations(arm.outputs[before - 1:]) <= arm.servo.config.default_joint_acceleration * (1 + 1e-6))
    out = arm.tick(wrench=(10.0, 0, 0, 0, 0, 0))        # wrenches return: guiding goes on by itself
    assert out.status == ServoStatus.HAND_GUIDING and "resumed after a 0.5" in out.message, out.message
    for _ in range(int(0.2 / DT)):
        out = arm.tick(wrench=(10.0, 0, 0, 0, 0, 0))
    assert out.velocities.any()
    for _ in range(int(1.2 / DT)):                      # silent beyond resume_timeout: guiding ends
        out = arm.tick()
    assert not arm.servo.guiding and "hand guiding stopped: no wrench for" in out.message, out.message
    arm.tick(wrench=(10.0, 0, 0, 0, 0, 0))
    assert not arm.servo.guiding                         # ended for good: it takes a new enable


def test_motion_toward_an_obstacle_decelerates_then_halts_at_the_minimum_distance_and_backing_out_is_free(
        panda, tmp_path):
    tool = panda.fk(panda.home()).translation
    scene = tmp_path / "scene.yaml"
    scene.write_text("objects:\n  - id: block\n    shape: box\n    dimensions: [0.2, 0.2, 0.04]\n"
                     f"    position: [{tool[0] + 0.05}, {tool[1]}, 0.15]\n")
    arm = IdealArm(panda, command_in_type="speed_units",
                   collision=CollisionConfig(check_collisions=True, scene_objects_file=str(scene)))
    statuses = []
    for _ in range(int(4.5 / DT)):
        statuses.append(arm.tick(twist=(0.0, 0.0, -0.1)).status)
    clearance = arm.servo.clearance
    minimum = arm.servo.config.collision.min_allowable_collision_distance
    # halted at the minimum distance (the check is exact there: coal's distance of the nearest pair)
    assert clearance.names[1] == "block" and abs(clearance.distance - minimum) < 2e-4, clearance
    assert statuses[-1] == ServoStatus.HALT_FOR_COLLISION and ServoStatus.DECELERATE_FOR_COLLISION in statuses
    assert "block" in arm.outputs[-1].message and "mm apart" in arm.outputs[-1].message
    assert arm.tool_speed(10).max() < 1e-6
    assert np.all(accelerations(arm.outputs) <= arm.servo.config.default_joint_acceleration * (1 + 1e-6))
    # an independent look: coal's distance from the block's top face to the fingers, by the arm's FK, is the minimum
    from robokin_ros.core.collision.clearance import ClearanceChecker
    fresh = ClearanceChecker(panda, objects=arm.servo.collision_guard.checker.objects).check(arm.outputs[-1].positions)
    assert abs(fresh.distance - clearance.distance) < 1e-3
    # backing out is never blocked
    z = panda.fk(arm.outputs[-1].positions).translation[2]
    for _ in range(int(0.5 / DT)):
        out = arm.tick(twist=(0.0, 0.0, 0.1))
    assert panda.fk(out.positions).translation[2] > z + 0.02 and out.status == ServoStatus.OK


def test_with_both_guards_the_smaller_factor_wins(panda, tmp_path):
    """Separation allows 0.125 m/s; near the block the collision factor is smaller and must still win: the arm halts
    at the minimum distance, never pushed on by the separation factor."""
    tool = panda.fk(panda.home()).translation
    scene = tmp_path / "scene.yaml"
    scene.write_text("objects:\n  - id: block\n    shape: box\n    dimensions: [0.2, 0.2, 0.04]\n"
                     f"    position: [{tool[0] + 0.05}, {tool[1]}, 0.15]\n")
    arm = IdealArm(panda, command_in_type="speed_units",
                   collision=CollisionConfig(check_collisions=True, scene_objects_file=str(scene)),
                   separation=SeparationConfig(enabled=True))
    statuses = [arm.tick(twist=(0.0, 0.0, -0.2), distance=0.5).status for _ in range(int(4.0 / DT))]
    assert ServoStatus.SEPARATION_LIMITED in statuses and statuses[-1] == ServoStatus.HALT_FOR_COLLISION
    assert abs(arm.servo.clearance.distance - arm.servo.config.collision.min_allowable_collision_distance) < 2e-4
    assert arm.tool_speed(10).max() < 1e-6
