"""robokin_ros: real-time velocity IK (a twist servo), Cartesian path IK and capability analysis on Pinocchio.

The public Python API is the ROS-free core; importing it never imports rclpy or a message package:

- `RobotModel`: one base -> tip chain of a URDF or an embedded robot, with limits, FK and Jacobians.
- `ServoConfig`, `Servo`: the twist servo state machine (time is an argument; it never reads a clock), fed with
  `TwistCommand` and `JointMeasurement`, one `ServoOutput` per `step`; `ServoStatus` says why.
- `VelocityIk`: one velocity-IK step (damped least squares, null-space tasks, joint limits, singularities).
- `PathConfig`, `MotionPlanner`: the one planner of motion programs (`MotionProgram`) and waypoint paths
  (`waypoint_program`: blended polylines, 1 mm incremental IK, checks, toppra timing) into a `MotionPlan`;
  `PathStatus` names the outcome; `path_report` prints a waypoint path's plan (`MotionPlan.path_plan()`).
- `analyze`, `CapabilityAnalysis`, `torque_limits_of`, `force_polytope`, `tool_force_polytope`, `max_force`,
  `write_stl`, `measure_rows`, `format_table`: velocity / acceleration / force ellipsoids, measures and the
  force polytope at one configuration, and their text table.
- `RobokinError`: the base of every error the core raises on purpose.
- What the numbered examples use beyond these: `Move`, `MoveKind` (a program's moves) and `program_report` (its
  cycle-time table); `PoseTarget` (the servo's pose target); `CollisionConfig`, `SceneChange`, `SceneOperation`
  (collision scaling and its scene), `SceneObject`, `ClearanceChecker` (the clearance of a robot to its scene);
  from the classroom toolbox `ur_dh_robot` (a UR e-series DH table), `all_solutions` (every closed-form IK
  branch), `sample_workspace` and `joint_torques` (statics, tau = J^T F).

Names are loaded on first use, so `import robokin_ros` stays cheap for the nodes, which import only what they
need.
"""
from __future__ import annotations

import importlib

_HOMES = {
    "RobotModel": "robokin_ros.core.robot",
    "ServoConfig": "robokin_ros.core.servo.config",
    "Servo": "robokin_ros.core.servo.servo",
    "ServoStatus": "robokin_ros.core.servo.status",
    "TwistCommand": "robokin_ros.core.servo.types",
    "JointMeasurement": "robokin_ros.core.servo.types",
    "ServoOutput": "robokin_ros.core.servo.types",
    "VelocityIk": "robokin_ros.core.servo.velocity_ik",
    "PathConfig": "robokin_ros.core.path.config",
    "MotionPlanner": "robokin_ros.core.program.planner",
    "MotionPlan": "robokin_ros.core.program.result",
    "MotionProgram": "robokin_ros.core.program.moves",
    "waypoint_program": "robokin_ros.core.program.moves",
    "PathPlan": "robokin_ros.core.path.result",
    "PathStatus": "robokin_ros.core.path.result",
    "path_report": "robokin_ros.core.path.report:report_text",
    "analyze": "robokin_ros.core.capability.analysis",
    "CapabilityAnalysis": "robokin_ros.core.capability.analysis",
    "torque_limits_of": "robokin_ros.core.capability.analysis",
    "force_polytope": "robokin_ros.core.capability.polytope",
    "tool_force_polytope": "robokin_ros.core.capability.polytope",
    "max_force": "robokin_ros.core.capability.polytope",
    "write_stl": "robokin_ros.core.capability.polytope",
    "measure_rows": "robokin_ros.core.capability.report",
    "format_table": "robokin_ros.core.capability.report",
    "RobokinError": "robokin_ros.core.errors",
    # what the numbered examples (examples/05_* to 08_*) use
    "Move": "robokin_ros.core.program.moves",
    "MoveKind": "robokin_ros.core.program.moves",
    "program_report": "robokin_ros.core.program.result:cycle_report_text",
    "PoseTarget": "robokin_ros.core.servo.pose_tracking",
    "CollisionConfig": "robokin_ros.core.servo.config",
    "SceneChange": "robokin_ros.core.collision.scene_change",
    "SceneOperation": "robokin_ros.core.collision.scene_change",
    "SceneObject": "robokin_ros.core.collision.scene",
    "ClearanceChecker": "robokin_ros.core.collision.clearance",
    "ur_dh_robot": "robokin_ros.core.classroom.ur_eseries",
    "all_solutions": "robokin_ros.core.ik.ur",
    "sample_workspace": "robokin_ros.core.classroom.workspace",
    "joint_torques": "robokin_ros.core.classroom.wrench",
    # several tips (examples/09_two_arms.py): the held object, bimanual targets, pose IK, a trajectory as JTC plays it
    "take_grasp": "robokin_ros.core.tips.held_object",
    "relative_pose_error": "robokin_ros.core.tips.held_object",
    "Grasp": "robokin_ros.core.tips.held_object",
    "TipTarget": "robokin_ros.core.program.moves",
    "solve_pose": "robokin_ros.core.ik.pose_ik",
    "controller_positions": "robokin_ros.core.path.deviation",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    try:
        home = _HOMES[name]
    except KeyError:
        raise AttributeError(f"module 'robokin_ros' has no attribute '{name}'; the public API is {__all__}") from None
    module, _, attribute = home.partition(":")
    value = getattr(importlib.import_module(module), attribute or name)
    globals()[name] = value          # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
