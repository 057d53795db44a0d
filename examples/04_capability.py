"""Capability analysis without ROS: ellipsoids, manipulability, force polytope and STL.

Run: .venv/bin/python examples/04_capability.py [out_dir]
Walks the Panda in joint space from its home pose to a configuration where the translational Jacobian is
singular (found by minimizing sigma_min) and prints how the measures fall and the force capacity along
the singular direction grows, then prints every measure at home and writes the force polytope as STL.
For a picture of the same, run the `capability_view` command-line tool.
"""
import sys
from pathlib import Path

import numpy as np

from robokin_ros import (RobotModel, analyze, format_table, max_force, measure_rows, tool_force_polytope,
                         torque_limits_of, write_stl)

SINGULAR_SIGMA = 1e-3       # [m/rad] below this sigma_min the arm counts as singular; force extents are capped

robot = RobotModel.from_name("panda")
torque = torque_limits_of(robot)        # URDF effort limits [N m]; limits None and a reason if some are missing
home = robot.home()
singular = np.array([1.309653, 1.364333, 0.06813, -0.741997, -1.570796, -0.39614, -0.426073])
J_end = robot.jacobian(singular)[:3]
direction = np.linalg.svd(J_end)[0][:, 2]     # the direction the arm cannot move in at the end

print(f"singular direction (base axes): {np.round(direction, 3)}")
print(f"{'path s':>7} {'yoshikawa':>10} {'cond':>9} {'sigma_min':>9} {'max force along it [N]':>23}")
for s in (0.0, 0.5, 0.9, 0.99, 0.999, 1.0):
    q = (1 - s) * home + s * singular
    a = analyze(robot, q, torque.limits, torque.reason, SINGULAR_SIGMA)
    poly = tool_force_polytope(a, "exact", SINGULAR_SIGMA)
    m = a.manipulability
    flag = "  (clipped at the display cap)" if poly.clipped else ""
    print(f"{s:>7.3f} {m.yoshikawa:>10.4f} {m.condition:>9.3g} {m.sigma_min:>9.4f} "
          f"{max_force(poly, direction):>23.1f}{flag}")

a = analyze(robot, home, torque.limits, torque.reason, SINGULAR_SIGMA)
w = a.force_weighted
print(f"\ntorque-weighted force ellipsoid at home: semi-axes {np.round(w.semi_axes, 1)} N")
print(f"largest along {np.round(w.axes[:, 0], 3)} (base axes)\n")
polytope = tool_force_polytope(a, "pinv", SINGULAR_SIGMA)
print(format_table(measure_rows(a, polytope)))
out = Path(sys.argv[1] if len(sys.argv) > 1 else "out")
print(f"wrote {write_stl(out / 'panda_force_polytope.stl', polytope)}")
