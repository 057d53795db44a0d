"""06 - A pose target without ROS: the servo core brings the Panda's tool to a pose 15 cm away, turned 0.4 rad.

Shows the servo's pose-target command: one `set_pose_target` is enough, the target stays the goal until reached
(`pose_tracking.linear_tolerance` / `angular_tolerance`), then the servo ramps to rest and goes silent. Time is an
argument (synthetic, now = k * dt) and the "controller" is perfect (the measurement is the command). Prints the
remaining error over time, by Pinocchio FK of the commanded positions, and checks every published window (the
JointTrajectory a controller receives) against the joint acceleration limits: the cubic a controller plays
through a window's points is exactly the window's motion, so its acceleration at the points is what the arm does.
    .venv/bin/python examples/06_pose_target.py
"""
import numpy as np
import pinocchio as pin

from robokin_ros import JointMeasurement, PoseTarget, RobotModel, Servo, ServoConfig, ServoStatus


def window_peak_acceleration(window) -> np.ndarray:
    """(n,) the largest |acceleration| of the cubic Hermite through the window's points, per joint; the
    acceleration of a cubic is linear in time, so its peaks are at the points."""
    h = np.diff(window.times)[:, None]
    dp = np.diff(window.positions, axis=0)
    v0, v1 = window.velocities[:-1], window.velocities[1:]
    at_start = (6.0 * dp - h * (4.0 * v0 + 2.0 * v1)) / h ** 2
    at_end = (-6.0 * dp + h * (2.0 * v0 + 4.0 * v1)) / h ** 2
    return np.maximum(np.abs(at_start), np.abs(at_end)).max(axis=0)


def main() -> None:
    robot = RobotModel.from_name("panda")
    config = ServoConfig(publish_period=0.002)
    servo, dt = Servo(robot, config), config.publish_period
    servo.set_measurement(JointMeasurement(robot.home(), 0.0))
    start = robot.fk(robot.home())
    goal = pin.SE3(pin.exp3(np.array([0.0, 0.0, 0.4])) @ start.rotation,
                   start.translation + np.array([0.1, -0.08, -0.08]))
    x, y, z, w = pin.Quaternion(goal.rotation).coeffs()
    servo.set_pose_target(PoseTarget(goal.translation, np.array([x, y, z, w]), "", 0, 0.0))     # unstamped, at t=0
    print(f"target {np.linalg.norm(goal.translation - start.translation) * 1e3:.1f} mm and "
          f"{np.linalg.norm(pin.log3(goal.rotation @ start.rotation.T)):.3f} rad from the start; tolerances "
          f"{config.pose_tracking.linear_tolerance * 1e3:.1f} mm / {config.pose_tracking.angular_tolerance} rad")
    print(f"{'t [s]':>6} {'position error [mm]':>19} {'orientation error [mrad]':>24}  status")
    amax = servo.acceleration_limits
    worst_window = np.zeros(robot.n)            # peak acceleration / limit over all published windows, per joint
    previous_v, worst_step, reached_at = np.zeros(robot.n), 0.0, None
    for k in range(1, 1501):                    # 3 s
        now = k * dt
        out = servo.step(now)
        servo.set_measurement(JointMeasurement(out.positions, now))
        if out.publish:
            worst_window = np.maximum(worst_window, window_peak_acceleration(out.window) / amax)
        worst_step = max(worst_step, float((np.abs(out.velocities - previous_v) / dt / amax).max()))
        previous_v = out.velocities
        tool = robot.fk(out.positions)
        linear = np.linalg.norm(goal.translation - tool.translation)
        angular = np.linalg.norm(pin.log3(goal.rotation @ tool.rotation.T))
        if reached_at is None and out.status == ServoStatus.TARGET_REACHED:
            reached_at = now
        if k == 1 or (k % 50 == 0 and now <= 1.2):
            print(f"{now:6.3f} {linear * 1e3:19.4f} {angular * 1e3:24.4f}  {out.status.name}")
    print(f"final error {linear * 1e3:.4f} mm / {angular * 1e3:.4f} mrad; target reached at t={reached_at:.3f} s; "
          f"last tick published={out.publish}, joint speeds {np.abs(out.velocities).max():.1e} rad/s")
    print(f"peak acceleration / limit: {worst_window.max():.7f} in the published windows, "
          f"{worst_step:.7f} from tick to tick")


if __name__ == "__main__":
    main()
