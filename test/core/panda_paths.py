"""Shared by the path tests: the Panda's datasheet accelerations and tool poses offset from its home pose
(importable: `from panda_paths import PANDA_ACC, offsets`)."""
import numpy as np
import pinocchio as pin

PANDA_ACC = (15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0)      # [rad/s^2] config/panda_servo.yaml


def offsets(panda, points):
    """Tool poses at the home orientation, each displaced from the home position by one of `points` [m]."""
    T0 = panda.fk(panda.home())
    return [pin.SE3(T0.rotation, T0.translation + np.asarray(d, float)) for d in points]
