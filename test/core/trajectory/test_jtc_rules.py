"""joint_trajectory_controller's acceptance rules and tolerance decisions (core/trajectory/controller_*), one trigger
per rule.

Expected texts are the RCLCPP_ERROR format strings of ros2_controllers' joint_trajectory_controller.cpp and
tolerances.hpp (jazzy and kilted are identical here) with the values printf would fill in.
"""
import numpy as np
import pytest

from robokin_ros.core.sim.trajectory_follower import chain_points
from robokin_ros.core.trajectory.controller_rules import (
    FLOAT_EPSILON,
    JtcSwitches,
    PointFacts,
    TrajectoryFacts,
    jtc_rejection,
    robokin_rejection,
)
from robokin_ros.core.trajectory.controller_tolerances import (
    FollowCode,
    JointToleranceRequest,
    SegmentTolerances,
    TrackingSample,
    goal_tolerances,
    judge,
    resolve_tolerance,
)

JOINTS = ("a", "b", "c")
LOWER, UPPER = np.full(3, -2.0), np.full(3, 2.0)


def point(t, positions=(0.0, 0.0, 0.0), velocities=(), accelerations=(), effort=()):
    return PointFacts(list(positions), list(velocities), list(accelerations), list(effort), t)


def trajectory(*points, names=JOINTS, stamp=0.0):
    """Facts of a trajectory stamped `stamp` [s] (carried as the message carries it: int ns)."""
    return TrajectoryFacts(list(names), list(points), round(stamp * 1e9))


VALID = trajectory(point(0.5, velocities=(0.1, 0.2, 0.3)), point(1.0, velocities=(0.0, 0.0, 0.0)))


def rejection(traj, now=100.0, **switches):
    """The rejection at controller clock time `now` [s] (read as the ROS clock gives it: int ns)."""
    return jtc_rejection(traj, JOINTS, round(now * 1e9), JtcSwitches(**switches))


def test_a_valid_trajectory_passes_every_rule():
    assert rejection(VALID) is None
    assert robokin_rejection(VALID, JOINTS, LOWER, UPPER) is None


@pytest.mark.parametrize("traj, rule, text", [
    (trajectory(point(1.0, (0, 0)), names=("a", "b")), "allow_partial_joints_goal",
     "Joints on incoming trajectory don't match the controller joints."),
    (trajectory(names=JOINTS), "points", "Empty trajectory received."),
    (trajectory(point(1.0), names=("a", "b", "x")), "joints",
     "Incoming joint x doesn't match the controller's joints."),
    (trajectory(point(1.0, velocities=(0.0, 0.25, 0.0))), "allow_nonzero_velocity_at_trajectory_end",
     "Velocity of last trajectory point of joint b is not zero: 0.250000000000000"),
    (trajectory(point(0.5), point(0.5)), "time_from_start",
     "Time between points 0 and 1 is not strictly increasing, it is 0.500000 and 0.500000 respectively"),
    (trajectory(point(0.5), point(0.4)), "time_from_start",
     "Time between points 0 and 1 is not strictly increasing, it is 0.500000 and 0.400000 respectively"),
    (trajectory(point(0.5, positions=(0.0, 0.0))), "positions",
     "Mismatch between joint_names size (3) and positions (2) at point #0."),
    (trajectory(point(0.5, positions=())), "positions",
     "Mismatch between joint_names size (3) and positions (0) at point #0."),
    (trajectory(point(0.5, velocities=(0.0,))), "velocities",
     "Mismatch between joint_names size (3) and velocities (1) at point #0."),
    (trajectory(point(0.5, accelerations=(0.0, 0.0, 0.0, 0.0))), "accelerations",
     "Mismatch between joint_names size (3) and accelerations (4) at point #0."),
    (trajectory(point(0.5, effort=(1.0, 1.0, 1.0))), "effort",
     "Trajectories with effort fields are only supported for controllers using the 'effort' command interface."),
    (trajectory(point(0.5), stamp=90.0), "header.stamp",
     "Received trajectory with non-zero start time (90.000000) that ends in the past (90.500000)"),
])
def test_each_default_rule_rejects_in_the_controllers_words(traj, rule, text):
    found = rejection(traj)
    assert found is not None and found.by_jtc
    assert (found.rule, found.message) == (rule, text)
    assert str(found) == text


def test_empty_joint_names_are_their_own_rule_when_partial_goals_are_allowed():
    # with the default switch the size rule fires first, as in the controller
    assert rejection(trajectory(point(1.0, ()), names=())).rule == "allow_partial_joints_goal"
    found = rejection(trajectory(point(1.0, ()), names=()), allow_partial_joints_goal=True)
    assert found.message == "Empty joint names on incoming trajectory."


def test_end_velocity_bound_is_float_epsilon_and_the_switch_lifts_it():
    assert rejection(trajectory(point(1.0, velocities=(FLOAT_EPSILON, 0.0, -FLOAT_EPSILON)))) is None
    assert rejection(trajectory(point(1.0, velocities=(0.0, 0.0, 2 * FLOAT_EPSILON)))) is not None
    moving = trajectory(point(1.0, velocities=(0.6, 0.0, 0.0)))
    assert rejection(moving, allow_nonzero_velocity_at_trajectory_end=True) is None


def test_partial_goals_pass_with_the_switch_and_hold_the_missing_joints():
    partial = trajectory(point(1.0, (0.5, -0.5), velocities=(0.0, 0.0)), names=("c", "a"))
    assert rejection(partial, allow_partial_joints_goal=True) is None
    points = chain_points(partial, JOINTS, np.array([0.1, 0.2, 0.3]))
    np.testing.assert_array_equal(points.positions, [[-0.5, 0.2, 0.5]])
    np.testing.assert_array_equal(points.velocities, [[0.0, 0.0, 0.0]])


def test_stamp_rule_reads_the_end_not_the_start_and_ignores_a_zero_stamp():
    assert rejection(trajectory(point(0.5), point(20.0), stamp=90.0)) is None        # ends at 110 > now 100
    assert rejection(trajectory(point(0.5), stamp=0.0)) is None


def test_integration_switch_takes_points_without_positions_but_not_empty_points():
    velocity_only = trajectory(point(0.5, positions=(), velocities=(0.0, 0.0, 0.0)))
    assert rejection(velocity_only, allow_integration_in_goal_trajectories=True) is None
    empty = rejection(trajectory(point(0.5, positions=())), allow_integration_in_goal_trajectories=True)
    assert empty.message == "The given trajectory has no position, velocity, or acceleration points."
    with pytest.raises(ValueError, match="no positions"):             # the sim does not integrate
        chain_points(velocity_only, JOINTS, np.zeros(3))


@pytest.mark.parametrize("traj, words", [
    (trajectory(point(1.0), names=("a", "a", "b")), "names a joint twice"),
    (trajectory(point(1.0, (0.0, float("nan"), 0.0))), "non-finite position nan for joint 'b'"),
    (trajectory(point(float("inf"))), "non-finite time_from_start"),
    (trajectory(point(1.0, (0.0, 0.0, 2.5))), "puts joint 'c' at 2.500000, outside its limits"),
])
def test_robokins_own_checks_say_so(traj, words):
    found = robokin_rejection(traj, JOINTS, LOWER, UPPER)
    assert found is not None and not found.by_jtc and words in found.message
    assert str(found).endswith("(robokin's own check; a JTC would accept it)")


def test_chain_points_reorder_and_use_velocities_only_when_every_point_has_them():
    traj = trajectory(point(0.5, (1.0, 2.0, 3.0), velocities=(0.1, 0.2, 0.3)), point(1.0, (3.0, 2.0, 1.0)),
                      names=("c", "b", "a"))
    points = chain_points(traj, JOINTS, np.zeros(3))
    np.testing.assert_array_equal(points.positions, [[3.0, 2.0, 1.0], [1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(points.times, [0.5, 1.0])
    assert points.velocities is None


# ---- tolerances --------------------------------------------------------------------------------------
DEFAULTS = SegmentTolerances(np.array([0.1, 0.1, 0.1]), np.array([0.0, 0.02, 0.0]), goal_time=0.5)


def test_resolve_tolerance_follows_joint_tolerance_msg():
    assert resolve_tolerance(0.1, 0.0) == 0.1       # 0: keep the default
    assert resolve_tolerance(0.1, 0.3) == 0.3
    assert resolve_tolerance(0.1, -1.0) == 0.0      # -1: erase
    with pytest.raises(ValueError, match="Illegal tolerance value."):
        resolve_tolerance(0.1, -0.5)


def test_goal_tolerances_override_defaults_per_joint():
    tolerances, problem = goal_tolerances(DEFAULTS, JOINTS, [JointToleranceRequest("b", 0.3)],
                                          [JointToleranceRequest("a", -1.0)], 2.0)
    assert problem == ""
    np.testing.assert_array_equal(tolerances.path, [0.1, 0.3, 0.1])
    np.testing.assert_array_equal(tolerances.goal, [0.0, 0.02, 0.0])
    assert tolerances.goal_time == 2.0
    assert goal_tolerances(DEFAULTS, JOINTS, [], [], 0.0)[0].goal_time == 0.5


@pytest.mark.parametrize("path, goal, goal_time, text", [
    ([JointToleranceRequest("x", 0.1)], [], 0.0,
     "joint 'x' specified in goal.path_tolerance does not exist. Using default tolerances."),
    ([], [JointToleranceRequest("a", 0.1, velocity=-3.0)], 0.0,
     "joint 'a' specified in goal.goal_tolerance has a invalid velocity tolerance. Using default tolerances."),
    ([], [], -2.0, "Specified illegal goal_time_tolerance: -2.000000. Using default tolerances"),
])
def test_illegal_goal_tolerances_fall_back_to_the_defaults(path, goal, goal_time, text):
    tolerances, problem = goal_tolerances(DEFAULTS, JOINTS, path, goal, goal_time)
    assert tolerances is DEFAULTS and problem == text


def sample(error, before_last=True, first=False, late=-1.0):
    desired = np.array([1.0, 1.0, 1.0])
    return TrackingSample(desired, desired - np.asarray(error), before_last, first, late)


def test_path_tolerance_aborts_while_moving_and_names_the_joint():
    verdict = judge(sample([0.0, 0.15, 0.0]), DEFAULTS, JOINTS)
    assert verdict.code == FollowCode.PATH_TOLERANCE_VIOLATED
    assert verdict.message == "Aborted due to path tolerance violation"
    assert "joint 1 (b): Position Error: 0.150000, Position Tolerance: 0.100000" in verdict.detail
    assert judge(sample([0.0, 0.05, 0.0]), DEFAULTS, JOINTS).code is None
    # past the last point only the goal tolerance counts (except on a trajectory's first sample)
    assert judge(sample([0.15, 0.0, 0.0], before_last=False), DEFAULTS, JOINTS).code == FollowCode.SUCCESSFUL
    first = judge(sample([0.15, 0.0, 0.0], before_last=False, first=True), DEFAULTS, JOINTS)
    assert first.code == FollowCode.PATH_TOLERANCE_VIOLATED


def test_goal_tolerance_waits_goal_time_then_aborts_and_zero_waits_forever():
    outside = [0.0, 0.03, 0.0]
    assert judge(sample(outside, before_last=False, late=0.4), DEFAULTS, JOINTS).code is None
    verdict = judge(sample(outside, before_last=False, late=0.6), DEFAULTS, JOINTS)
    assert verdict.code == FollowCode.GOAL_TOLERANCE_VIOLATED
    assert verdict.message == "Aborted due to goal_time_tolerance exceeding by 0.600000 seconds"
    forever = SegmentTolerances(DEFAULTS.path, DEFAULTS.goal, goal_time=0.0)
    assert judge(sample(outside, before_last=False, late=1e6), forever, JOINTS).code is None
    assert judge(sample([0.0, 0.01, 0.0], before_last=False, late=0.6), DEFAULTS, JOINTS).code == FollowCode.SUCCESSFUL


def test_zero_tolerances_are_not_enforced():
    none = SegmentTolerances(np.zeros(3), np.zeros(3))
    assert judge(sample([5.0, 5.0, 5.0]), none, JOINTS).code is None
    assert judge(sample([5.0, 5.0, 5.0], before_last=False), none, JOINTS).code == FollowCode.SUCCESSFUL


# ---- the shipped controller configuration ------------------------------------------------------------
@pytest.mark.parametrize("robot", ["panda", "ur5"])
def test_ros2_controllers_yaml_names_the_chain_joints_and_keeps_the_jtc_defaults(robot):
    """config/<robot>_ros2_controllers.yaml: every controller drives exactly the model's chain joints, and the
    JTC switches are the controller's defaults (what robokin's output is checked against)."""
    from dataclasses import fields
    from pathlib import Path

    import yaml

    from robokin_ros.core.robot import RobotModel
    from robokin_ros.core.sim.config import SimRobotConfig

    config = yaml.safe_load((Path(__file__).resolve().parents[3] / "config" / f"{robot}_ros2_controllers.yaml")
                            .read_text())
    chain = list(RobotModel.from_name(robot).joint_names)
    types = {name: spec["type"] for name, spec in config["controller_manager"]["ros__parameters"].items()
             if isinstance(spec, dict)}
    assert types == {"joint_state_broadcaster": "joint_state_broadcaster/JointStateBroadcaster",
                     "joint_trajectory_controller": "joint_trajectory_controller/JointTrajectoryController",
                     "forward_position_controller": "forward_command_controller/ForwardCommandController",
                     "forward_velocity_controller": "forward_command_controller/ForwardCommandController"}
    jtc = config["joint_trajectory_controller"]["ros__parameters"]
    assert jtc["joints"] == chain
    assert jtc["command_interfaces"] == ["position"] and jtc["state_interfaces"] == ["position", "velocity"]
    for f in fields(JtcSwitches):
        if f.name != "has_effort_command_interface":
            assert jtc[f.name] is f.default is False, f.name
            assert getattr(SimRobotConfig(), f.name) is f.default, f"sim_robot default of {f.name}"
    assert jtc["constraints"]["goal_time"] == SimRobotConfig().goal_time == 0.0
    assert not any(isinstance(v, dict) for k, v in jtc["constraints"].items()), "per-joint tolerances set"
    for name, interface in (("forward_position_controller", "position"), ("forward_velocity_controller", "velocity")):
        assert config[name]["ros__parameters"] == {"joints": chain, "interface_name": interface}
