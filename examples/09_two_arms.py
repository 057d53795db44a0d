"""09 - Two arms without ROS: two Pandas carry a box through a 20 cm square (a planned program), then move it
with the servo in coordinated mode (one twist of the held object).

The hands start on either side of a box 0.3 m wide in front of the table (pose IK, one arm after the other). The
program's carried MoveL moves give the box's corners; every hand follows the box rigidly as grasped at the start.
The servo then takes one twist of the box (5 cm/s along x for 1 s) and keeps the hands' relative pose. Every figure
is measured by Pinocchio FK of what a controller would play (the timed trajectory's quintic at 1 kHz, the servo's
commanded positions), not taken from the planner or the servo.
    .venv/bin/python examples/09_two_arms.py
"""
from dataclasses import replace

import numpy as np
import pinocchio as pin

from robokin_ros import (JointMeasurement, MotionPlanner, MotionProgram, Move, MoveKind, RobotModel, Servo, ServoConfig,
                         TwistCommand, controller_positions, relative_pose_error, solve_pose, take_grasp)

# the left hand's approach axis (z) points to -y, the right's to +y: they face each other across the box
FACING = {"left_panda_hand_tcp": (np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]]), 0.15),
          "right_panda_hand_tcp": (np.array([[1.0, 0, 0], [0, 0, 1.0], [0, -1.0, 0]]), -0.15)}
SIDE = 0.2           # [m] the square's side
SPEED = 0.05         # [m/s] the box along x in the servo phase


def hands_on_the_box(robot: RobotModel) -> np.ndarray:
    q = robot.home()
    for tip, (rotation, y) in FACING.items():
        found = solve_pose(robot, pin.SE3(rotation, np.array([0.5, y, 0.4])), q, robot.frame_id(tip), 0.01)
        assert found.success, found.message
        q = found.positions
    return q


def drift(robot: RobotModel, q: np.ndarray, held: pin.SE3) -> tuple[float, float]:
    """([m], [rad]) how far the right hand is from its grasp pose in the left hand's frame."""
    left, right = (robot.fk(q, tip) for tip in robot.tip_frames)
    error = relative_pose_error(left, right, held)
    return float(np.linalg.norm(error[:3])), float(np.linalg.norm(error[3:]))


def carry_a_square(robot: RobotModel, start: np.ndarray) -> None:
    base_T_box, _ = take_grasp([robot.fk(start, tip) for tip in robot.tip_frames])
    corners = [base_T_box.translation + np.array(offset) for offset in
               ((SIDE, 0, 0), (SIDE, 0, SIDE), (0, 0, SIDE), (0, 0, 0))]          # a square in the x-z plane
    moves = tuple(Move(MoveKind.LINEAR, pose=pin.SE3(np.eye(3), corner), speed=0.1, carried=True, name=f"corner {k}")
                  for k, corner in enumerate(corners, 1))
    plan = MotionPlanner(robot).plan(MotionProgram(moves), start)
    print(f"carried square: {plan.status.name}, {plan.trajectory.duration:.2f} s, "
          f"{len(plan.trajectory.times)} points for {robot.n} joints")
    trajectory = plan.trajectory
    played = controller_positions(trajectory, np.arange(0.0, trajectory.duration, 0.001))
    held = robot.fk(start, robot.tip_frames[0]).actInv(robot.fk(start, robot.tip_frames[1]))
    grasp_position, grasp_angle = np.max([drift(robot, q, held) for q in played], axis=0)
    box_start = base_T_box.translation
    # the box rides on the left hand: its origin is where the grasp puts it
    object_in_left = robot.fk(start, robot.tip_frames[0]).actInv(base_T_box)
    box = np.array([(robot.fk(q, robot.tip_frames[0]) * object_in_left).translation for q in played])
    off_square = np.abs(box[:, 1] - box_start[1]).max()
    print(f"played at 1 kHz: the hands' relative pose held within {grasp_position * 1e3:.4f} mm / "
          f"{grasp_angle * 1e3:.4f} mrad; the box stays in its plane within {off_square * 1e3:.4f} mm; "
          f"it spans {np.ptp(box[:, 0]) * 1e3:.1f} mm x {np.ptp(box[:, 2]) * 1e3:.1f} mm")
    for name, position, orientation in plan.tip_deviations:
        print(f"  {name}: deviation from its own square {position * 1e3:.4f} mm / {orientation * 1e3:.4f} mrad "
              "(planner's report)")


def move_the_box_with_the_servo(robot: RobotModel, start: np.ndarray) -> None:
    config = ServoConfig(publish_period=0.002, command_in_type="speed_units")
    config = replace(config, tips=replace(config.tips, mode="coordinated"))
    servo, dt = Servo(robot, config), config.publish_period
    servo.set_measurement(JointMeasurement(start, 0.0))
    held = robot.fk(start, robot.tip_frames[0]).actInv(robot.fk(start, robot.tip_frames[1]))
    box_before, _ = take_grasp([robot.fk(start, tip) for tip in robot.tip_frames])
    worst = (0.0, 0.0)
    q = start
    for k in range(1, 1001):          # 2 s: the twist for 1 s, then the ramp to rest
        now = k * dt
        if now <= 1.0 - config.incoming_command_timeout:      # the servo follows a twist this long after the last
            servo.set_command(TwistCommand(np.array([SPEED, 0.0, 0.0]), np.zeros(3), "", now))
        out = servo.step(now)
        q = out.positions
        servo.set_measurement(JointMeasurement(q, now))           # a perfect controller
        worst = tuple(max(a, b) for a, b in zip(worst, drift(robot, q, held)))
    box_after, _ = take_grasp([robot.fk(q, tip) for tip in robot.tip_frames])
    moved = box_after.translation - box_before.translation
    print(f"servo, coordinated: the box moved {moved[0] * 1e3:.2f} mm along x ({np.linalg.norm(moved[1:]) * 1e3:.3f}"
          f" mm across) for {SPEED * 1e3:.0f} mm/s over 1 s; relative pose held within {worst[0] * 1e3:.4f} mm / "
          f"{worst[1] * 1e3:.4f} mrad; last status {out.status.name}")


def main() -> None:
    robot = RobotModel.load("dual_panda")
    print(f"{robot.name}: {robot.n} joints, tips {', '.join(robot.tip_frames)}")
    start = hands_on_the_box(robot)
    carry_a_square(robot, start)
    move_the_box_with_the_servo(robot, start)


if __name__ == "__main__":
    main()
