"""07 - Collision speed scaling without ROS: the Panda's hand jogged down onto a box slows, then halts short of it.

Shows the servo's collision guard (`collision.check_collisions`): a box is added to the scene at run time (as a
`SceneObject` message would add it), a twist pushes the hand down at 10 cm/s, and the servo scales the motion so
that the braking distance (times `collision_distance_safety_factor`) always fits in the clearance: it slows,
then halts at `min_allowable_collision_distance` (checked at `collision_check_rate`, braking within the
acceleration limits, it stops within a micrometre of it). Backing away is never blocked. Time is an argument
(now = k * dt) and the "controller" is perfect. Prints the speed scaling (the tool's speed over the commanded
10 cm/s, by FK) and the clearance between the robot and the box, measured by a checker of its own (core/collision/).
    .venv/bin/python examples/07_collision_scaling.py
"""
import numpy as np

from robokin_ros import (ClearanceChecker, CollisionConfig, JointMeasurement, RobotModel, SceneChange, SceneObject,
                         SceneOperation, Servo, ServoConfig, TwistCommand)

SPEED = 0.1           # [m/s] commanded tool speed, straight down
BOX = (0.2, 0.2, 0.04)   # [m] box size; its top is 0.17 m above the base, some 30 cm under the hand


def main() -> None:
    robot = RobotModel.from_name("panda")
    config = ServoConfig(command_in_type="speed_units", publish_period=0.002,
                         collision=CollisionConfig(check_collisions=True))
    servo, dt = Servo(robot, config), config.publish_period
    servo.set_measurement(JointMeasurement(robot.home(), 0.0))
    hand = robot.fk(robot.home()).translation
    centre = np.array([hand[0] + 0.05, hand[1], 0.15])
    print(servo.update_scene(SceneChange(SceneOperation.ADD, "box", "", centre, np.array([0.0, 0.0, 0.0, 1.0]),
                                         primitive_type=1, dimensions=BOX)))    # 1: SolidPrimitive.BOX
    referee = ClearanceChecker(robot, objects=(SceneObject("box", "box", BOX, tuple(centre)),))
    minimum = config.collision.min_allowable_collision_distance
    print(f"min_allowable_collision_distance {minimum * 1e3:.1f} mm, safety factor "
          f"{config.collision.collision_distance_safety_factor}")
    print(f"{'t [s]':>6} {'tool speed [mm/s]':>17} {'scaling':>8} {'clearance [mm]':>14}  "
          "status (the link nearest to the box)")
    previous, closest, last_status = hand, np.inf, None
    for k in range(1, 2501):                    # 5 s: 4.5 s down, then 0.5 s up
        now = k * dt
        up = k > 2250
        servo.set_command(TwistCommand(np.array([0.0, 0.0, SPEED if up else -SPEED]), np.zeros(3), "", now))
        out = servo.step(now)
        servo.set_measurement(JointMeasurement(out.positions, now))
        tool = robot.fk(out.positions).translation
        speed, previous = np.linalg.norm(tool - previous) / dt, tool
        pairs = referee.pair_distances(out.positions)
        to_box = [i for i, names in enumerate(pairs.names) if "box" in names]
        nearest = to_box[int(np.argmin(pairs.distances[to_box]))]
        distance, names = float(pairs.distances[nearest]), pairs.names[nearest]
        closest = min(closest, distance)
        if k % 250 == 0 or out.status != last_status:
            print(f"{now:6.3f} {speed * 1e3:17.2f} {speed / SPEED:8.3f} {distance * 1e3:14.4f}  "
                  f"{out.status.name} ({names[0]})")
            last_status = out.status
        if k == 2250:
            halted = (speed, distance, out.status.name)
    print(f"halted: tool speed {halted[0]:.1e} m/s at {halted[1] * 1e3:.4f} mm clearance ({halted[2]}); closest "
          f"clearance of the run {closest * 1e3:.5f} mm (minimum {minimum * 1e3:.1f} mm)")
    print(f"backing away: tool speed {speed:.4f} m/s, clearance {distance * 1e3:.1f} mm ({out.status.name})")


if __name__ == "__main__":
    main()
