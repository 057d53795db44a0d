"""Median `Servo.step` [us] on the Panda in three cases: a twist far from the limits, panda_joint7 jogged at 2 rad/s
into its upper limit (windows that brake for it), and pose targets 5 cm apart (each case 3000 ticks, 5 runs, the
median of the runs' medians; the first 500 ticks of a run are not timed).
Run: .venv/bin/python bench/bench_servo_step_cases.py [label]
"""
import sys
import time

import numpy as np
import pinocchio as pin

from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.joint_jog import JointJogCommand
from robokin_ros.core.servo.pose_tracking import PoseTarget
from robokin_ros.core.servo.servo import Servo
from robokin_ros.core.servo.types import JointMeasurement, TwistCommand

AMAX = (15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0)        # config/panda_servo.yaml
DT = 0.002


def run(panda: RobotModel, kind: str, ticks: int = 3000) -> float:
    servo = Servo(panda, ServoConfig(publish_period=DT, command_in_type="speed_units", max_joint_acceleration=AMAX))
    q0 = panda.home()
    if kind == "jog":
        q0[6] = panda.limits.upper[6] - 0.5
    servo.set_measurement(JointMeasurement(q0, 0.0))
    start = panda.fk(q0)
    quaternion = pin.Quaternion(start.rotation).coeffs()
    spent, now = np.empty(ticks), 0.0
    for k in range(ticks):
        now += DT
        if kind == "twist":
            servo.set_command(TwistCommand(np.array([0.02, 0.01, 0.0]), np.zeros(3), "", now))
        elif kind == "jog":
            servo.set_joint_command(JointJogCommand(("panda_joint7",), (2.0,), (), 0.0, now))
        elif k % 400 == 0:
            goal = start.translation + [0.05 * (-1) ** (k // 400), 0.0, 0.0]
            servo.set_pose_target(PoseTarget(goal, np.array(quaternion), "", 0.0, now))
        t0 = time.perf_counter_ns()
        out = servo.step(now)
        spent[k] = time.perf_counter_ns() - t0
        servo.set_measurement(JointMeasurement(out.positions, now))
    return float(np.median(spent[500:])) / 1e3


def main() -> None:
    panda = RobotModel.from_source("panda")
    runs = {kind: [run(panda, kind) for _ in range(5)] for kind in ("twist", "jog", "pose")}
    label = sys.argv[1] if len(sys.argv) > 1 else "Servo.step median"
    print(label, {kind: f"{np.median(times):.1f} us" for kind, times in runs.items()})


if __name__ == "__main__":
    main()
