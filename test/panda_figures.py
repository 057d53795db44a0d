"""The Franka Panda's figures the jerk tests share (chain order, panda_joint1..7)."""
import numpy as np

# Franka, "Robot and interface specifications", control parameters (libfranka's kMaxJointJerk / kMaxJointAcceleration)
JERK = np.array([7500.0, 3750.0, 5000.0, 6250.0, 7500.0, 10000.0, 10000.0])      # [rad/s^3]
AMAX = np.array([15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0])                       # [rad/s^2], config/panda_servo.yaml
# the Panda's URDF (example-robot-data)
VMAX = np.array([2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61])                  # [rad/s]
LOWER = np.array([-2.8973, -1.7628, -2.8973, -3.0718, -2.8973, -0.0175, -2.8973])  # [rad]
UPPER = np.array([2.8973, 1.7628, 2.8973, -0.0698, 2.8973, 3.7525, 2.8973])        # [rad]
