"""05 - A motion program without ROS: MoveJ / MoveL / MoveC on the Panda, each with its own speed and zone.

Shows the one planner, `MotionPlanner.plan(program, start)`: a pick and place written as robot languages write it
("MoveJ above v1000 z50; MoveL pick v100 fine; ..."), planned into one timed joint trajectory with its cycle-time
report (per move: start, duration, peak tool speed, zone used, the limit that bound it). Then the plan is checked
from the outside, by Pinocchio FK of the trajectory: the exact stops are at their targets, the fine-to-fine MoveL
is a straight line at no more than its programmed speed.
The same program as a YAML file: examples/programs/ (`plan_path` plans and plots those).
    .venv/bin/python examples/05_motion_program.py
"""
import numpy as np
import pinocchio as pin

from robokin_ros import MotionPlanner, MotionProgram, Move, MoveKind, PathConfig, RobotModel, program_report

robot = RobotModel.from_name("panda")
q0 = robot.home()
start = robot.fk(q0)
turned = pin.exp3(np.array([0.0, 0.0, 0.5])) @ start.rotation       # the gripper (pointing down) turned 0.5 rad


def at(dx, dy, dz, rotation=start.rotation):
    """A tool pose offset from the start position [m], base axes."""
    return pin.SE3(rotation, start.translation + np.array([dx, dy, dz]))


pick, place = at(0.15, -0.2, -0.3), at(0.15, 0.2, -0.3, turned)
FINE = 0.0            # the zone of an exact stop ("fine")
program = MotionProgram((
    Move(MoveKind.JOINT, pose=at(0.15, -0.2, -0.2), zone=0.05, name="above_pick"),
    Move(MoveKind.LINEAR, pose=pick, speed=0.1, zone=FINE, name="pick"),
    Move(MoveKind.LINEAR, pose=at(0.15, -0.2, -0.2), speed=0.25, zone=FINE, name="lift"),
    Move(MoveKind.CIRCULAR, pose=at(0.15, 0.2, -0.2, turned), via=start.translation + [0.3, 0.0, -0.15], speed=0.5,
         zone=0.03, name="transfer"),
    Move(MoveKind.LINEAR, pose=place, speed=0.1, zone=FINE, name="place"),
    Move(MoveKind.JOINT, joints=q0, joint_speed=0.5, zone=FINE, name="home"),
), name="pick_and_place")

planner = MotionPlanner(robot, PathConfig())
plan = planner.plan(program, q0)
print(program_report(plan))
assert plan.success, plan.message
print(f"dense IK samples {plan.dense_samples}, trajectory {len(plan.trajectory.times)} points; planning "
      f"{plan.timings['total'] * 1e3:.0f} ms")

# the outside view: Pinocchio FK of the trajectory, sampled on a 1 ms grid (linear interpolation of the joints)
traj = plan.trajectory
grid = np.arange(0.0, traj.duration, 1e-3)
q_grid = np.array([np.interp(grid, traj.times, traj.positions[:, j]) for j in range(robot.n)]).T
tool = np.array([robot.fk(q).translation for q in q_grid])
reports = {m.label.split()[-1]: m for m in plan.moves}
for name, target in (("pick", pick), ("place", place)):
    end = np.searchsorted(traj.times, reports[name].end_time - 1e-9)
    error = np.linalg.norm(robot.fk(traj.positions[end]).translation - target.translation)
    speed = np.abs(traj.velocities[end]).max()
    print(f"exact stop at {name}: {error * 1e3:.4f} mm from its target, max joint speed there {speed:.1e} rad/s")
lift = reports["lift"]
inside = (grid >= lift.start_time) & (grid <= lift.end_time)
a, b = pick.translation, at(0.15, -0.2, -0.2).translation
off_line = np.linalg.norm(np.cross(tool[inside] - a, (b - a) / np.linalg.norm(b - a)), axis=1).max()
points = (traj.times >= lift.start_time) & (traj.times <= lift.end_time)
lift_speed = max(np.linalg.norm(robot.jacobian(q)[:3] @ v) for q, v in zip(traj.positions[points],
                                                                           traj.velocities[points]))
print(f"MoveL lift (fine to fine): {off_line * 1e3:.4f} mm off its line at most, peak tool speed "
      f"{lift_speed:.4f} m/s (J(q) qdot at the trajectory points; programmed {lift.programmed_speed} m/s)")
