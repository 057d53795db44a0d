"""08 - The classroom toolbox on a UR5e: DH table -> FK -> every closed-form IK branch -> workspace -> statics.

Shows the toolbox (robokin_ros/core/classroom/) from one DH table to the numbers a course asks for, each checked
against Pinocchio on the robot's URDF (the embedded `ur5e`, whose joints and frames are ur_description's):
1. Universal Robots' DH table of the UR5e, and its FK frame by frame;
2. the DH FK of the flange against Pinocchio's FK of the URDF;
3. all closed-form IK solutions of one pose (up to 8: shoulder left/right, wrist up/down, elbow up/down), nearest
   to the seed first, each put back through Pinocchio's FK;
4. the reachable workspace, sampled with a batched FK of its own (checked against Pinocchio's);
5. statics: the joint torques that hold a 50 N push at the tool, tau = J^T F, against Pinocchio's inverse dynamics.
    .venv/bin/python examples/08_toolbox.py
"""
import numpy as np
import pinocchio as pin

from robokin_ros import RobotModel, all_solutions, joint_torques, sample_workspace, ur_dh_robot

table = ur_dh_robot("ur5e")                          # base_link -> flange, standard DH
robot = RobotModel.from_name("ur5e")                 # the URDF (base_link -> tool0), on Pinocchio
print(f"UR5e DH table ({table.convention}):\n   {'a [m]':>8} {'alpha [rad]':>11} {'d [m]':>8}")
for i, row in enumerate(table.rows, start=1):
    print(f"{i:2} {row.a:8.4f} {row.alpha:11.4f} {row.d:8.4f}")

q = np.array([0.3, -1.2, 1.5, -0.9, 1.1, 0.4])
frames = table.fk(q)                                 # base, frame0 ... frame6, flange
tool0 = frames[-2]                                   # DH frame 6 is ur_description's tool0
print(f"\nDH frame origins at q = {q.tolist()} [m]:")
for name, T in zip(table.frame_names(), frames[1:]):
    print(f"  {name:7} {np.round(T[:3, 3], 4)}")
fk_gap = np.abs(tool0 - robot.fk(q).homogeneous).max()
print(f"DH FK vs Pinocchio FK of tool0: max difference {fk_gap:.1e}")

target = robot.fk(q)
solutions = all_solutions(robot, target, seed=q)
print(f"\nclosed-form IK of that pose: {len(solutions)} solutions, nearest to the seed first")
worst = 0.0
for s in solutions:
    reached = robot.fk(s.positions)                  # Pinocchio, not the solver's own FK
    position = np.linalg.norm(reached.translation - target.translation)
    rotation = np.linalg.norm(pin.log3(reached.rotation.T @ target.rotation))
    worst = max(worst, position, rotation)
    flags = f" singular: {', '.join(s.singular)}" if s.singular else ""
    print(f"  {s.branch:30} q = {np.round(s.positions, 3)}  |q - seed| {s.distance:6.3f}  "
          f"FK error {position:.1e} m / {rotation:.1e} rad{flags}")
print(f"every branch reproduces the pose by Pinocchio FK: worst error {worst:.1e}; seed found again: "
      f"{np.abs(solutions[0].positions - q).max():.1e} rad")

samples = sample_workspace(robot, 20000, seed=1)       # batched FK of its own (product of exponentials)
x, y, z = samples.points.T
print(f"\nworkspace of tool0, 20000 random configurations within the joint limits: z from {z.min() * 1e3:.0f} to "
      f"{z.max() * 1e3:.0f} mm, at most {np.hypot(x, y).max() * 1e3:.0f} mm from the base axis")
batch_gap = max(np.abs(robot.fk(p).translation - x).max() for p, x in zip(samples.positions[:200], samples.points))
best = int(np.argmax(samples.manipulability))
print(f"the batched FK vs Pinocchio's on 200 samples: max difference {batch_gap:.1e} m; most dexterous sample "
      f"w = {samples.manipulability[best]:.4f} m^3 at {np.round(samples.points[best], 3)} m")

F = np.array([0.0, 0.0, -50.0, 0.0, 0.0, 0.0])      # [N, N m] a 50 N push down at the tool origin, base axes
tau = joint_torques(robot, q, F)
model, data = robot.model, robot.model.createData()
q_pin = robot.to_pinocchio_q(q)
pin.framesForwardKinematics(model, data, q_pin)
tool = data.oMf[robot.tip_frame_id]
joint = model.frames[robot.tip_frame_id].parentJoint
world_force = pin.Force(F[:3], F[3:] + np.cross(tool.translation, F[:3]))      # the same wrench about the origin
fext = [pin.Force.Zero() for _ in range(model.njoints)]
fext[joint] = data.oMi[joint].actInv(-world_force)   # the arm pushes: the environment's force on it is -F
zero = np.zeros(model.nv)
rnea = pin.rnea(model, data, q_pin, zero, zero, fext) - pin.rnea(model, data, q_pin, zero, zero)
print(f"statics: tau = J^T F = {np.round(tau, 3)} N m; Pinocchio's rnea with the push applied differs by "
      f"{np.abs(rnea - tau).max():.1e} N m")
