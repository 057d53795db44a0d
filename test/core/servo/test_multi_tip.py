"""The servo with several tips (issue 26): one stacked velocity-IK solve per tick for two hands, driven through
`Servo.step` with an ideal follower (the measurement is the command). Figures measured on the commanded state's
forward kinematics at every tick: the held box's relative pose, the object frame's travel, the still hand's drift,
every published window against the acceleration limits (the outgoing check's own peaks)."""
from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.errors import ConfigError, InvalidInputError
from robokin_ros.core.ik.pose_ik import solve_pose
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.schema import config_from_mapping
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.joint_jog import JointJogCommand
from robokin_ros.core.servo.pose_tracking import PoseTarget
from robokin_ros.core.servo.servo import Servo
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.types import JointMeasurement, TwistCommand
from robokin_ros.core.trajectory.outgoing_check import interval_peaks

DT = 0.002
# config/panda_servo.yaml's acceleration limits (the demo's), per arm
PANDA_ACCELERATION = (15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0)
LEFT, RIGHT = "left_panda_hand_tcp", "right_panda_hand_tcp"


def facing(z_axis, centre):
    """A hand pose with its approach axis (z) along `z_axis` and its x axis down."""
    z, x = np.asarray(z_axis, float), np.array([0.0, 0.0, -1.0])
    return pin.SE3(np.column_stack((x, np.cross(z, x), z)), np.asarray(centre, float))


def hands_facing(robot, gap=0.3, ahead=0.4, height=0.6):
    """Positions with the hands facing each other `gap` apart, `ahead` in front of the robot at `height` (found by pose
    IK; the default branch is well clear of singularities: sigma_min 0.21 per arm, 0.13 for the held box's rows)."""
    q = robot.home()
    for tip, side in ((LEFT, 1.0), (RIGHT, -1.0)):
        target = facing([0.0, -side, 0.0], [ahead, side * gap / 2, height])
        result = solve_pose(robot, target, q, robot.frame_id(tip), margin=0.2)
        assert result.success
        q = result.positions
    return q


@pytest.fixture(scope="module")
def dual():
    return RobotModel.load("dual_panda")


@pytest.fixture(scope="module")
def holding(dual):
    return hands_facing(dual)


def servo_config(**params):
    """A ServoConfig from parameter names (dotted ones as `**{"tips.mode": ...}`)."""
    return config_from_mapping(ServoConfig, params)


class TwoHands:
    """Servo + ideal follower on a two-tip robot; `tick(**commands)` sends each tip's twist (linear, angular)."""

    def __init__(self, robot, start, **config):
        self.robot, self.k, self.outputs = robot, 0, []
        self.servo = Servo(robot, servo_config(publish_period=DT, command_in_type="speed_units", **config))
        self.servo.set_measurement(JointMeasurement(start, 0.0))
        self.start = start

    @property
    def now(self):
        return self.k * DT

    def tick(self, twists=(), frame=""):
        self.k += 1
        for tip, linear, angular in twists:
            self.servo.set_command(TwistCommand(np.asarray(linear, float), np.asarray(angular, float), frame,
                                                self.now, tip=tip))
        out = self.servo.step(self.now)
        self.servo.set_measurement(JointMeasurement(out.positions, self.now))
        self.outputs.append(out)
        return out

    def pose(self, tip, k=-1):
        return self.robot.fk(self.start if k is None else self.outputs[k].positions, tip)

    def worst_acceleration_share(self):
        amax = self.servo.acceleration_limits
        return max(float((interval_peaks(o.window.times, o.window.positions, o.window.velocities).acceleration
                          / amax).max()) for o in self.outputs if o.publish)


def relative_drift(a_T_b, a_T_b0):
    """([m], [rad]) how far b moved in a's frame."""
    return (float(np.linalg.norm(a_T_b.translation - a_T_b0.translation)),
            float(np.linalg.norm(pin.log3(a_T_b.rotation @ a_T_b0.rotation.T))))


# ---- coordinated ------------------------------------------------------------------------------------------------
def test_a_held_box_moved_5_cm_s_along_x_for_2_s_keeps_the_grasp_and_travels_100_mm(dual, holding):
    """The issue's figure: the servo follows an object twist of 5 cm/s along x for 2 s (the stream stops
    `incoming_command_timeout` before: the last twist is followed until it is stale, as in MoveIt Servo). The hands'
    relative pose stays within 0.1 mm / 1 mrad at every tick, ramps included; at rest the object frame has moved
    100 mm +- 1 mm (the ramps up and down within the Panda's acceleration limits cancel), at 5 cm/s in between; every
    window within the acceleration limits."""
    arm = TwoHands(dual, holding, max_joint_acceleration=PANDA_ACCELERATION * 2, **{"tips.mode": "coordinated"})
    left0, right0 = arm.pose(LEFT, None), arm.pose(RIGHT, None)
    held = left0.actInv(right0)
    centre0 = 0.5 * (left0.translation + right0.translation)
    object_T_left = pin.SE3(np.eye(3), centre0).actInv(left0)

    def object_position():
        return (arm.pose(LEFT) * object_T_left.inverse()).translation

    worst, path = (0.0, 0.0), []
    streamed = int(round((2.0 - arm.servo.config.incoming_command_timeout) / DT))
    for k in range(streamed + 300):
        out = arm.tick([("", (0.05, 0.0, 0.0), (0.0, 0.0, 0.0))] if k < streamed else [])
        drift = relative_drift(arm.pose(LEFT).actInv(arm.pose(RIGHT)), held)
        worst = (max(worst[0], drift[0]), max(worst[1], drift[1]))
        path.append(object_position())
        if k < streamed:
            assert out.status == ServoStatus.OK, out.message
    assert worst[0] <= 1e-4 and worst[1] <= 1e-3, worst
    assert arm.outputs[-1].status == ServoStatus.STOPPED
    travel = path[-1] - centre0
    assert abs(travel[0] - 0.1) <= 1e-3, travel
    assert np.linalg.norm(travel[1:]) <= 1e-3, travel
    cruise = (path[600][0] - path[400][0]) / (200 * DT)
    assert cruise == pytest.approx(0.05, rel=1e-3)
    assert arm.worst_acceleration_share() <= 1.0 + 1e-6


def test_a_stacked_solve_s_sentence_gives_its_sigma_min_as_a_bound_and_prints_no_nan(dual, holding):
    """The stacked task's fast solve computes a certified lower bound of sigma_min and no condition number (NaN):
    the status sentence says "at least" and leaves the condition number out rather than print "nan"."""
    arm = TwoHands(dual, holding, **{"tips.mode": "coordinated"})
    out = arm.tick([("", (0.05, 0.0, 0.0), (0.0, 0.0, 0.0))])
    assert np.isnan(out.condition_number) and out.sigma_min > 0.0
    assert "nan" not in out.message and f"sigma_min at least {out.sigma_min:.3g}" in out.message, out.message


def test_a_held_box_turned_about_its_own_origin_keeps_the_grasp(dual, holding):
    """An object rotation (about the object origin, between the hands) moves both hands around it."""
    arm = TwoHands(dual, holding, **{"tips.mode": "coordinated"})
    left0, right0 = arm.pose(LEFT, None), arm.pose(RIGHT, None)
    held, centre = left0.actInv(right0), 0.5 * (left0.translation + right0.translation)
    for _ in range(250):
        arm.tick([("", (0.0, 0.0, 0.0), (0.0, 0.0, 0.2))])
        drift = relative_drift(arm.pose(LEFT).actInv(arm.pose(RIGHT)), held)
        assert drift[0] <= 1e-4 and drift[1] <= 1e-3, drift
    centre_now = 0.5 * (arm.pose(LEFT).translation + arm.pose(RIGHT).translation)
    assert np.linalg.norm(centre_now - centre) <= 1e-3                  # turned in place
    turned = pin.log3(arm.pose(LEFT).rotation @ left0.rotation.T)
    assert turned[2] > 0.05 and np.linalg.norm(turned[:2]) < 1e-3


def test_an_object_twist_in_a_hand_s_frame_moves_the_object_along_that_hand_s_axes(dual, holding):
    """The command's frame gives the axes (about the object origin, as apply_twist_about_tool says for a tool): 5 cm/s
    along the left hand's approach axis (its z, pointing at the right hand: world -y)."""
    arm = TwoHands(dual, holding, **{"tips.mode": "coordinated"})
    left0, right0 = arm.pose(LEFT, None), arm.pose(RIGHT, None)
    held, centre0 = left0.actInv(right0), 0.5 * (left0.translation + right0.translation)
    for _ in range(250):
        arm.tick([("", (0.0, 0.0, 0.05), (0.0, 0.0, 0.0))], frame=LEFT)
        drift = relative_drift(arm.pose(LEFT).actInv(arm.pose(RIGHT)), held)
        assert drift[0] <= 1e-4 and drift[1] <= 1e-3, drift
    moved = 0.5 * (arm.pose(LEFT).translation + arm.pose(RIGHT).translation) - centre0
    direction = left0.rotation[:, 2]
    assert float(moved @ direction) > 0.01
    assert np.linalg.norm(moved - (moved @ direction) * direction) <= 1e-4


# ---- relative -----------------------------------------------------------------------------------------------------
def test_relative_mode_moves_one_hand_relative_to_the_other_which_drifts_at_most_0_1_mm(dual, holding):
    """The right hand moves 5 cm/s along the left hand's x axis for 1 s; the left hand holds still in the world."""
    arm = TwoHands(dual, holding, **{"tips.mode": "relative", "tips.reference_tip": LEFT})
    left0, right0 = arm.pose(LEFT, None), arm.pose(RIGHT, None)
    worst = 0.0
    for _ in range(500):
        arm.tick([(RIGHT, (0.05, 0.0, 0.0), (0.0, 0.0, 0.0))])
        worst = max(worst, float(np.linalg.norm(arm.pose(LEFT).translation - left0.translation)))
    for _ in range(150):
        arm.tick()
        worst = max(worst, float(np.linalg.norm(arm.pose(LEFT).translation - left0.translation)))
    assert worst <= 1e-4, worst
    moved = left0.actInv(arm.pose(RIGHT)).translation - left0.actInv(right0).translation     # left's axes
    assert moved[0] == pytest.approx(0.05 * (1.0 + 0.1), abs=1e-3)       # 1 s plus the command timeout
    assert np.linalg.norm(moved[1:]) <= 1e-3
    assert arm.worst_acceleration_share() <= 1.0 + 1e-6


def test_relative_mode_reference_hand_with_its_own_twist_carries_the_other_along(dual, holding):
    arm = TwoHands(dual, holding, **{"tips.mode": "relative"})
    left0, right0 = arm.pose(LEFT, None), arm.pose(RIGHT, None)
    held = left0.actInv(right0)
    for _ in range(300):
        arm.tick([(LEFT, (0.0, 0.0, 0.05), (0.0, 0.0, 0.0))])
    assert arm.pose(LEFT).translation[2] - left0.translation[2] > 0.01
    drift = relative_drift(arm.pose(LEFT).actInv(arm.pose(RIGHT)), held)
    assert drift[0] <= 1e-4 and drift[1] <= 1e-3, drift


# ---- independent --------------------------------------------------------------------------------------------------
def test_two_tips_follow_two_twists_and_a_stale_tip_holds_still(dual, holding):
    arm = TwoHands(dual, holding)
    left0, right0 = arm.pose(LEFT, None), arm.pose(RIGHT, None)
    for _ in range(250):
        arm.tick([(LEFT, (0.05, 0.0, 0.0), (0, 0, 0)), (RIGHT, (0.0, 0.0, 0.05), (0, 0, 0))])
    left_move = arm.pose(LEFT).translation - left0.translation
    right_move = arm.pose(RIGHT).translation - right0.translation
    for move, axis in ((left_move, 0), (right_move, 2)):
        assert move[axis] > 0.02
        assert np.linalg.norm(np.delete(move, axis)) <= 1e-4 * 5, move
    assert set(arm.servo.tips_report.moving) == {LEFT, RIGHT}
    # the right tip's command stops; the left one carries on: the right hand comes to rest and stays there
    for _ in range(100):
        arm.tick([(LEFT, (0.05, 0.0, 0.0), (0, 0, 0))])
    assert arm.servo.tips_report.moving == (LEFT,)
    rested = arm.pose(RIGHT).translation
    for _ in range(250):
        arm.tick([(LEFT, (0.05, 0.0, 0.0), (0, 0, 0))])
    assert np.linalg.norm(arm.pose(RIGHT).translation - rested) <= 1e-5
    assert arm.pose(LEFT).translation[0] - left0.translation[0] > 0.05
    assert arm.worst_acceleration_share() <= 1.0 + 1e-6


def test_a_torso_shared_by_both_arms_is_named_and_the_still_hand_compensates_it():
    robot = RobotModel.load("dual_panda_torso")
    start = hands_facing(robot)
    arm = TwoHands(robot, start)
    right0 = arm.pose(RIGHT, None)
    messages = []
    for _ in range(300):
        out = arm.tick([(LEFT, (0.0, 0.05, 0.0), (0.0, 0.0, 0.3))])
        messages.append(out.message)
    report = arm.servo.tips_report
    assert "torso_joint" in report.shared_joints
    assert abs(arm.outputs[-1].positions[robot.joint_index("torso_joint")] - start[robot.joint_index("torso_joint")]) \
        > 1e-3
    assert any("shared joint torso_joint" in m for m in messages)
    assert np.linalg.norm(arm.pose(RIGHT).translation - right0.translation) <= 1e-4
    assert report.residuals[1] <= 1e-6


def test_a_torso_conflict_is_resolved_by_the_stacked_solve_and_the_status_names_the_tips_and_the_joint():
    """The right hand stretched forward past what its arm can give: near the singularity the damped solve leans on
    the torso, which the still left hand cannot fully compensate: the status names the tips that miss their twists
    and the shared joint."""
    robot = RobotModel.load("dual_panda_torso")
    arm = TwoHands(robot, hands_facing(robot), halt_all_joints_in_cartesian_mode=False)
    conflicts = []
    for _ in range(1500):
        out = arm.tick([(RIGHT, (0.2, 0.0, 0.0), (0, 0, 0))])
        report = arm.servo.tips_report
        if LEFT in report.conflicting_tips:
            conflicts.append((out.message, report))
    assert conflicts
    message, report = conflicts[0]
    assert "torso_joint" in report.shared_joints and report.residuals[0] > 1e-3
    assert f"misses {LEFT}'s twist" in message and "shared joints moving: torso_joint" in message


def test_the_status_names_the_tip_nearest_a_singularity_and_the_arm_of_a_joint_at_its_limit(dual, holding):
    """The right hand stretched forward until its arm is near singular: the status names the right tip (its rows),
    the tip that misses its twist, and the right arm's joint held at its limit; the left hand holds."""
    arm = TwoHands(dual, holding, halt_all_joints_in_cartesian_mode=False)
    left0 = arm.pose(LEFT, None)
    seen = {}
    for _ in range(1000):
        out = arm.tick([(RIGHT, (0.2, 0.0, 0.0), (0, 0, 0))])
        seen.setdefault(out.status, (out.message, arm.servo.tips_report))
    message, report = seen[ServoStatus.DECELERATE_FOR_APPROACHING_SINGULARITY]
    assert report.singular_tip == RIGHT and f"nearest the singularity: {RIGHT}" in message
    assert report.conflicting_tips == (RIGHT,) and f"misses {RIGHT}'s twist" in message
    message, _ = seen[ServoStatus.JOINT_BOUND]
    assert "right_panda_joint" in message and "left_panda_joint" not in message
    assert np.linalg.norm(arm.pose(LEFT).translation - left0.translation) <= 1e-4


def test_separation_monitoring_judges_the_fastest_tip(dual, holding, panda):
    """A person at 0.5 m limits the tool speed: with two tips, the fastest tip is held to the speed a single Panda's
    tool gets under the same reading, and the slower tip keeps its share (one uniform factor)."""
    arm = TwoHands(dual, holding, **{"separation.enabled": True})
    single = TwoHands(panda, panda.home(), **{"separation.enabled": True})
    for _ in range(300):
        for servo, now in ((arm.servo, arm.now), (single.servo, single.now)):
            servo.set_separation_distance(0.5, now)
        out = arm.tick([(LEFT, (0.02, 0.0, 0.0), (0, 0, 0)), (RIGHT, (0.0, 0.0, 0.2), (0, 0, 0))])
        single.tick([("", (0.0, 0.0, 0.2), (0, 0, 0))])
    assert out.status == ServoStatus.SEPARATION_LIMITED, out.message

    def speed(hands, tip):
        step = hands.pose(tip).translation - hands.robot.fk(hands.outputs[-2].positions, tip).translation
        return float(np.linalg.norm(step)) / DT
    assert speed(single, panda.tip_frame) < 0.2 * 0.9
    assert speed(arm, RIGHT) == pytest.approx(speed(single, panda.tip_frame), rel=1e-3)
    assert speed(arm, LEFT) == pytest.approx(0.1 * speed(arm, RIGHT), rel=1e-3)


# ---- arm against arm -------------------------------------------------------------------------------------------
def test_hands_driven_toward_each_other_halt_at_the_minimum_distance_and_the_status_names_the_pair(dual, holding):
    arm = TwoHands(dual, holding, check_collisions=True, min_allowable_collision_distance=0.02)
    statuses, messages = [], []
    for _ in range(2000):
        out = arm.tick([(LEFT, (0.0, -0.1, 0.0), (0, 0, 0)), (RIGHT, (0.0, 0.1, 0.0), (0, 0, 0))])
        statuses.append(out.status)
        messages.append(out.message)
    clearance = arm.servo.clearance
    assert ServoStatus.DECELERATE_FOR_COLLISION in statuses
    assert statuses[-1] == ServoStatus.HALT_FOR_COLLISION, messages[-1]
    assert clearance.distance >= 0.02 - 1e-3, clearance
    # the pair: one link of each arm, named in the status
    pair = clearance.names
    assert {name.split("_")[0] for name in pair} == {"left", "right"}, pair
    assert pair[0] in messages[-1] and pair[1] in messages[-1]
    speeds = np.linalg.norm(np.diff([arm.robot.fk(o.positions, LEFT).translation for o in arm.outputs[-50:]],
                                    axis=0), axis=1) / DT
    assert speeds.max() <= 1e-6
    assert arm.worst_acceleration_share() <= 1.0 + 1e-6


# ---- pose targets and joint jog per tip -----------------------------------------------------------------------
def test_a_pose_target_for_one_tip_is_reached_while_the_other_holds(dual, holding):
    arm = TwoHands(dual, holding)
    left0, right0 = arm.pose(LEFT, None), arm.pose(RIGHT, None)
    goal = pin.SE3(right0.rotation, right0.translation + np.array([0.03, 0.0, 0.02]))
    x, y, z, w = pin.Quaternion(goal.rotation).coeffs()
    arm.servo.set_pose_target(PoseTarget(goal.translation, np.array([x, y, z, w]), "", 0, 0.0, tip=RIGHT))
    for _ in range(1000):
        out = arm.tick()
    assert np.linalg.norm(arm.pose(RIGHT).translation - goal.translation) <= 1e-3
    assert np.linalg.norm(arm.pose(LEFT).translation - left0.translation) <= 1e-5
    assert out.status == ServoStatus.TARGET_REACHED and RIGHT in out.message


def test_a_tip_s_pose_target_runs_as_the_single_panda_s_from_the_same_arm_configuration(dual, holding, panda):
    """The right hand's pose target through the stacked solve (the left hand's rows held) against a one-tip Panda servo
    started at the right arm's joints (the right Panda stands at y = -0.3 with the world's axes): the same tip path,
    and the same window ends, which a stalled servo would leave the arm to follow (PoseMotion.window_grid per tip);
    the left hand holds."""
    arms = (TwoHands(dual, holding), TwoHands(panda, holding[7:]))
    ends, paths = ([], []), ([], [])
    for i, (arm, tip) in enumerate(zip(arms, (RIGHT, ""))):
        frame = tip or panda.tip_frame
        start = arm.pose(frame, None)
        goal = pin.SE3(start.rotation, start.translation + np.array([0.05, 0.0, 0.0]))
        x, y, z, w = pin.Quaternion(goal.rotation).coeffs()
        arm.servo.set_pose_target(PoseTarget(goal.translation, np.array([x, y, z, w]), "", 0, 0.0, tip=tip))
        for _ in range(600):
            out = arm.tick()
            paths[i].append(arm.robot.fk(out.positions, frame).translation - start.translation)
            ends[i].append(arm.robot.fk(out.window.positions[-1], frame).translation - start.translation)
    difference = np.abs(np.array(paths[0]) - np.array(paths[1])).max(axis=1)
    assert difference.max() <= 1e-6
    assert np.abs(np.array(ends[0]) - np.array(ends[1])).max() <= 1e-6
    # the left hand held (its arm may move in its own null space, away from its joint limits)
    assert np.linalg.norm(arms[0].pose(LEFT).translation - arms[0].pose(LEFT, None).translation) <= 1e-6


def test_a_joint_jog_names_one_arm_s_joints_and_moves_only_them(dual, holding):
    arm = TwoHands(dual, holding)
    for k in range(1, 101):
        arm.servo.set_joint_command(JointJogCommand(("right_panda_joint1",), (0.2,), (), 0.0, k * DT))
        arm.k = k - 1
        arm.tick()
    moved = arm.outputs[-1].positions - holding
    index = dual.joint_index("right_panda_joint1")
    assert moved[index] > 0.01
    assert np.abs(np.delete(moved, index)).max() == 0.0


def test_the_mode_changes_at_run_time_and_the_grasp_is_taken_where_the_hands_are_then(dual, holding):
    arm = TwoHands(dual, holding)
    for _ in range(200):
        arm.tick([(LEFT, (0.0, 0.0, 0.05), (0, 0, 0))])             # the hands no longer at their start
    for _ in range(100):
        arm.tick()
    config = arm.servo.config
    arm.servo.update_config(replace(config, tips=replace(config.tips, mode="coordinated")))
    left0, right0 = arm.pose(LEFT), arm.pose(RIGHT)
    held = left0.actInv(right0)
    for _ in range(250):
        arm.tick([("", (0.05, 0.0, 0.0), (0, 0, 0))])
        drift = relative_drift(arm.pose(LEFT).actInv(arm.pose(RIGHT)), held)
        assert drift[0] <= 1e-4 and drift[1] <= 1e-3, drift
    assert arm.pose(LEFT).translation[0] - left0.translation[0] > 0.01


def test_a_hold_gain_changed_while_the_box_is_held_applies_from_the_next_tick(dual, holding):
    """The grasp rows' velocity is -tips.hold_gain times the hands' drift from the grasp (held_object's reference),
    with the gain in force at that tick (the grasp's compiled assembly keeps a copy of it)."""
    from robokin_ros.core.servo.commands import TwistConverter
    from robokin_ros.core.servo.tips_motion import TipsMotion
    from robokin_ros.core.tips.held_object import relative_pose_error
    config = servo_config(publish_period=DT, command_in_type="speed_units", **{"tips.mode": "coordinated"})
    tips = TipsMotion(dual, TwistConverter(dual), config)
    tips.twist(holding, 0.0)                                        # the grasp is taken here
    held = dual.fk(holding, LEFT).actInv(dual.fk(holding, RIGHT))
    drifted = holding + 0.01
    error = relative_pose_error(dual.fk(drifted, LEFT), dual.fk(drifted, RIGHT), held)
    assert np.linalg.norm(error) > 1e-3
    for gain in (config.tips.hold_gain, 5.0):
        tips.update_config(replace(config, tips=replace(config.tips, hold_gain=gain)))
        np.testing.assert_allclose(tips.twist(drifted, 0.0).velocity[:6], -gain * error, rtol=0, atol=1e-12)


# ---- bad input --------------------------------------------------------------------------------------------------
def test_a_twist_for_an_unknown_tip_is_refused_naming_the_tips_and_the_previous_command_stays(dual, holding):
    arm = TwoHands(dual, holding)
    arm.tick([(LEFT, (0.05, 0, 0), (0, 0, 0))])
    kept = arm.servo.command.source
    with pytest.raises(InvalidInputError, match=f"not a tip of the robot.*{LEFT}.*{RIGHT}"):
        arm.servo.set_command(TwistCommand(np.array([0.05, 0, 0]), np.zeros(3), "", arm.now, tip="middle_hand"))
    with pytest.raises(InvalidInputError, match="non-finite|NaN|finite"):
        arm.servo.set_command(TwistCommand(np.array([np.nan, 0, 0]), np.zeros(3), "", arm.now, tip=RIGHT))
    assert arm.servo.command.source is kept


def test_a_tip_on_a_one_tip_robot_and_modes_it_cannot_have_are_refused(panda):
    servo = Servo(panda, ServoConfig(publish_period=DT))
    with pytest.raises(InvalidInputError, match="has one tip"):
        servo.set_command(TwistCommand(np.zeros(3), np.zeros(3), "", 0.0, tip="left_panda_hand_tcp"))
    servo.set_command(TwistCommand(np.zeros(3), np.zeros(3), "", 0.0, tip=panda.tip_frame))     # its own tip: fine
    with pytest.raises(ConfigError, match="tips.mode='coordinated' needs a robot with several tips"):
        Servo(panda, servo_config(publish_period=DT, **{"tips.mode": "coordinated"}))
    with pytest.raises(ConfigError, match="tips.mode"):
        servo_config(**{"tips.mode": "coordinatd"})
    config = servo.config
    with pytest.raises(ConfigError, match="needs a robot with several tips"):
        servo.update_config(replace(config, tips=replace(config.tips, mode="relative")))
    assert servo.config is config                                   # the old configuration stays


def test_coordinated_mode_refuses_a_twist_that_names_a_tip_and_relative_mode_a_frame_it_cannot_use(dual, holding):
    arm = TwoHands(dual, holding, **{"tips.mode": "coordinated"})
    with pytest.raises(InvalidInputError, match="moves the held object"):
        arm.servo.set_command(TwistCommand(np.zeros(3), np.zeros(3), "", 0.0, tip=LEFT))
    arm = TwoHands(dual, holding, **{"tips.mode": "relative"})
    with pytest.raises(InvalidInputError, match="reference tip's axes"):
        arm.servo.set_command(TwistCommand(np.zeros(3), np.zeros(3), "world", 0.0, tip=RIGHT))
    with pytest.raises(ConfigError, match="reference_tip"):
        Servo(dual, servo_config(publish_period=DT, **{"tips.reference_tip": "nose"}))
