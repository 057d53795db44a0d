"""Twist servo without ROS: a Panda jogged along base x, then the command stops, then the arm is paused.

Shows the servo core's loop: callbacks store the latest command and joint state, one `step(now)` per tick
does the work, and time is an argument (here synthetic: now = k * dt). The "controller" is perfect: the
measured positions follow the commanded ones. Prints one line whenever the status changes.
Run: .venv/bin/python examples/02_twist_servo_loop.py
"""
import numpy as np

from robokin_ros import JointMeasurement, RobotModel, Servo, ServoConfig, TwistCommand


def main() -> None:
    robot = RobotModel.from_name("panda")
    config = ServoConfig(command_in_type="speed_units", publish_period=0.002, incoming_command_timeout=0.1)
    servo, dt = Servo(robot, config), config.publish_period
    servo.set_measurement(JointMeasurement(robot.home(), 0.0))
    start = robot.fk(robot.home()).translation
    last_status, published = None, 0
    for k in range(1, 1001):
        now = k * dt
        if k <= 400:                                       # 0.8 s of 5 cm/s along base x, then silence
            servo.set_command(TwistCommand(np.array([0.05, 0.0, 0.0]), np.zeros(3), "", now))
        if k == 800:
            servo.pause()
        out = servo.step(now)
        servo.set_measurement(JointMeasurement(out.positions, now))
        published += out.publish
        if out.status != last_status:
            moved = robot.fk(out.positions).translation - start
            print(f"t={now:5.3f} s  {out.status.name:22} publish={out.publish!s:5}  tool moved "
                  f"{np.round(moved * 1000, 2)} mm  |v|max={np.max(np.abs(out.velocities)):.3f} rad/s\n"
                  f"           {out.message}")
            last_status = out.status
    moved = robot.fk(out.positions).translation - start
    print(f"\nfinal tool displacement {np.round(moved * 1000, 3)} mm (5 cm/s along x for 0.8 s plus the 0.1 s "
          f"timeout: about 45 mm); {published} of 1000 ticks published; window of {len(out.window.times)} points")


if __name__ == "__main__":
    main()
