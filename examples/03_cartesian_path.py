"""03 - Cartesian path IK without ROS: a blended rectangle on the Panda, then a path beyond reach.

Shows the pipeline (geometry -> incremental DLS -> downsampling -> toppra timing -> verification) and how a
refusal reads: reason, sample, arc length reached and the solved prefix.
    .venv/bin/python examples/03_cartesian_path.py
"""
import numpy as np
import pinocchio as pin

from robokin_ros import MotionPlanner, PathConfig, RobotModel, path_report, waypoint_program

robot = RobotModel.from_name("panda")
config = PathConfig(max_joint_acceleration=(15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0), velocity_scaling=0.5)
planner = MotionPlanner(robot, config)
q0 = robot.home()
start = robot.fk(q0)


def offset(dx, dy, dz):
    return pin.SE3(start.rotation, start.translation + np.array([dx, dy, dz]))


# a waypoint path is a program of MoveL moves; the first call loads the compiled DLS kernel (numba cache)
planner.plan(waypoint_program([offset(0, 0, -0.002)], config.blend_radius), q0)
rectangle = [offset(0.1, 0, 0), offset(0.1, 0.15, 0), offset(-0.1, 0.15, 0), offset(-0.1, -0.15, 0),
             offset(0.1, -0.15, 0), offset(0.1, 0, 0), offset(0, 0, 0)]
print("== blended rectangle (30 mm corners)")
plan = planner.plan(waypoint_program(rectangle, blend_radius=0.03), q0)
print(path_report(plan.path_plan()))
traj = plan.trajectory
print(f"trajectory: {len(traj.times)} points at {config.trajectory_rate_hz:.0f} Hz, first point = start: "
      f"{np.array_equal(traj.positions[0], q0)}")

print("\n== straight out of the workspace")
plan = planner.plan(waypoint_program([offset(0.8, 0, 0)], config.blend_radius), q0)
ik = plan.path_ik
print(path_report(plan.path_plan()))
print(f"solved prefix: {len(ik.positions)} samples, failure pose at {np.round(ik.failure_pose.translation, 4)}")
