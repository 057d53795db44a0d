"""An ideal arm around the servo core for tests: synthetic time k * DT, the measurement is the command (a perfect
controller), and the inputs of each tick are given to `tick`."""
import numpy as np

from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.servo import Servo
from robokin_ros.core.servo.types import JointMeasurement, TwistCommand

DT = 0.002


class IdealArm:
    def __init__(self, robot, **config):
        self.robot, self.k = robot, 0
        self.servo = Servo(robot, ServoConfig(publish_period=DT, **config))
        self.servo.set_measurement(JointMeasurement(robot.home(), 0.0))
        self.outputs = []

    @property
    def now(self):
        return self.k * DT

    def tick(self, twist=None, distance=None, wrench=None, wrench_frame="panda_link0"):
        """One tick; `twist` (linear, base frame), `distance` and `wrench` arrive just before it."""
        self.k += 1
        if twist is not None:
            self.servo.set_command(TwistCommand(np.asarray(twist, float), np.zeros(3), "", self.now))
        if distance is not None:
            self.servo.set_separation_distance(distance, self.now)
        if wrench is not None:
            self.servo.set_wrench(np.asarray(wrench, float), wrench_frame, self.now)
        out = self.servo.step(self.now)
        self.servo.set_measurement(JointMeasurement(out.positions, self.now))
        self.outputs.append(out)
        return out

    def tool(self):
        """The tool pose of the last commanded positions (FK)."""
        return self.robot.fk(self.outputs[-1].positions)

    def tool_speed(self, last=50):
        """(last - 1,) tool speeds [m/s] from FK differences of the last commanded positions."""
        p = np.array([self.robot.fk(o.positions).translation for o in self.outputs[-last:]])
        return np.linalg.norm(np.diff(p, axis=0), axis=1) / DT
