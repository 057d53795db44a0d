"""FK, Jacobian and inertia of the embedded Panda, with a finite-difference check you can read.

    .venv/bin/python examples/01_fk_jacobian.py
"""
import numpy as np
import pinocchio as pin

from robokin_ros import RobotModel

robot = RobotModel.from_name("panda")
q = robot.home()
base_T_tool = robot.fk(q)
print(f"{robot.name}: {robot.n} joints {robot.joint_names}")
print(f"locked outside the {robot.base_frame} -> {robot.tip_frame} chain: {robot.locked_joint_names}")
print(f"tool position at home [m]: {np.round(base_T_tool.translation, 4)}")

J = robot.jacobian(q)                                   # (6, 7) tool origin, base axes
dq = 1e-6 * np.ones(robot.n)
moved = robot.fk(pin.integrate(robot.model, q, dq))     # q has nq entries, dq nv: never q + dq
predicted = J @ dq
actual = np.hstack([moved.translation - base_T_tool.translation, pin.log3(moved.rotation @ base_T_tool.rotation.T)])
print(f"J.dq vs FK change: max difference {np.abs(predicted - actual).max():.2e} (step 1e-6 rad per joint)")
sigma = np.linalg.svd(J, compute_uv=False)
print(f"singular values of J: {np.round(sigma, 4)}; condition number {sigma[0] / sigma[-1]:.1f}")
print(f"joint-space inertia diagonal [kg m^2]: {np.round(np.diag(robot.inertia(q)), 4)}")
