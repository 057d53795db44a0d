"""Closed-form IK (classroom toolbox): planar 2R, the UR family and OPW arms, checked against Pinocchio FK of the
URDFs, textbook identities and finite differences."""
import argparse
import math

import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.ik.opw import OpwGeometry
from robokin_ros.core.ik.planar_2r import Planar2R
from robokin_ros.core.ik.ur import UrGeometry, all_solutions, solve_ur
from robokin_ros.core.errors import ConfigError, InvalidInputError, ModelError
from robokin_ros.core.robot import RobotModel
from robokin_ros.tools.robokin_cli import ik as ik_cli

FK_TOLERANCE = 1e-9


def fk_error(robot, q, target):
    """Independent of the solver's own bookkeeping: Pinocchio FK of the URDF, compared here."""
    reached = robot.fk(q)
    return max(np.linalg.norm(reached.translation - target.translation),
               np.linalg.norm(pin.log3(reached.rotation.T @ target.rotation)))


# ---- planar 2R -------------------------------------------------------------------------------------------
def test_2r_both_branches_reach_the_target_with_the_documented_elbow_sides():
    arm, rng = Planar2R(0.7, 0.4), np.random.default_rng(3)
    for _ in range(200):
        r, angle = rng.uniform(0.31, 1.09), rng.uniform(-np.pi, np.pi)
        target = r * np.array([np.cos(angle), np.sin(angle)])
        sol = arm.ik(target)
        assert sol.reachable and sol.outside == 0.0
        for q in (sol.elbow_up, sol.elbow_down):
            np.testing.assert_allclose(arm.fk(q), target, atol=1e-12)
        assert sol.elbow_up[1] < 0 < sol.elbow_down[1]
        # "up": the elbow is left of the base -> target ray (z of target x elbow > 0), "down": right of it
        for q, side in ((sol.elbow_up, 1.0), (sol.elbow_down, -1.0)):
            elbow = 0.7 * np.array([np.cos(q[0]), np.sin(q[0])])
            assert side * (target[0] * elbow[1] - target[1] * elbow[0]) > 0


@pytest.mark.parametrize("target, outside, clamped", [((3.0, 4.0), 5.0 - 1.1, (0.66, 0.88)),
                                                      ((0.1, 0.0), 0.3 - 0.1, (0.3, 0.0))])
def test_2r_unreachable_targets_are_flagged_and_clamped_on_their_ray(target, outside, clamped):
    arm = Planar2R(0.7, 0.4)                           # annulus 0.3 m <= r <= 1.1 m
    sol = arm.ik(target)
    assert not sol.reachable and sol.outside == pytest.approx(outside, abs=1e-12)
    np.testing.assert_allclose(sol.target, clamped, atol=1e-12)
    np.testing.assert_allclose(arm.fk(sol.elbow_up), clamped, atol=1e-12)
    result = arm.solve(target)
    assert not result.reachable and "outside the reachable annulus" in result.reason


def test_2r_jacobian_matches_finite_differences_and_det_is_l1_l2_sin_q2():
    arm, rng, h = Planar2R(0.7, 0.4), np.random.default_rng(4), 1e-6
    for q in rng.uniform(-np.pi, np.pi, (50, 2)):
        J = arm.jacobian(q)
        fd = np.column_stack([(arm.fk(q + h * e) - arm.fk(q - h * e)) / (2 * h) for e in np.eye(2)])
        np.testing.assert_allclose(J, fd, atol=1e-9)
        assert np.linalg.det(J) == pytest.approx(0.7 * 0.4 * np.sin(q[1]), abs=1e-12)


def test_2r_manipulability_ellipse_golden_ratio_textbook_case():
    """L1 = L2 = 1, q = (0, pi/2): J J^T = [[2, -1], [-1, 1]], singular values phi and 1/phi, w = 1."""
    ellipse = Planar2R(1.0, 1.0).manipulability([0.0, np.pi / 2])
    golden = (1 + math.sqrt(5)) / 2
    np.testing.assert_allclose(ellipse.lengths, [golden, 1 / golden], atol=1e-12)
    assert ellipse.yoshikawa == pytest.approx(1.0, abs=1e-12)
    JJt = np.array([[2.0, -1.0], [-1.0, 1.0]])
    for axis, length in zip(ellipse.axes.T, ellipse.lengths):
        np.testing.assert_allclose(JJt @ axis, length ** 2 * axis, atol=1e-12)


def test_2r_yoshikawa_is_l1_l2_abs_sin_q2_and_largest_at_right_angle_elbow():
    arm = Planar2R(0.7, 0.4)
    q2s = np.linspace(-np.pi, np.pi, 181)
    w = [arm.manipulability([0.3, q2]).yoshikawa for q2 in q2s]
    np.testing.assert_allclose(w, 0.7 * 0.4 * np.abs(np.sin(q2s)), atol=1e-12)
    assert abs(abs(q2s[int(np.argmax(w))]) - np.pi / 2) < 1e-12
    with pytest.raises(ConfigError, match="l2"):
        Planar2R(1.0, -0.5)


# ---- UR family -----------------------------------------------------------------------------------------------
UR_DH = {"ur3": (0.24365, 0.21325, 0.11235), "ur5": (0.425, 0.39225, 0.10915), "ur10": (0.612, 0.5723, 0.163941)}


@pytest.fixture(scope="module", params=sorted(UR_DH))
def ur(request):
    robot = RobotModel.from_name(request.param)
    return robot, UrGeometry.from_robot(robot)


def test_ur_geometry_read_from_the_urdf_matches_the_published_dh_lengths(ur):
    robot, geometry = ur
    np.testing.assert_allclose((geometry.a2, geometry.a3, geometry.d4), UR_DH[robot.name], atol=1e-9)


def test_ur_500_random_configurations_seed_is_the_nearest_and_every_solution_reaches(ur):
    robot, geometry = ur
    rng, counts = np.random.default_rng(11), []
    for _ in range(500):
        q = robot.random_positions(rng)
        target = robot.fk(q)
        result = solve_ur(geometry, target, seed=q)
        assert result.reachable and 1 <= len(result.solutions) <= 8
        np.testing.assert_allclose(result.solutions[0].positions, q, atol=1e-7)
        distances = [s.distance for s in result.solutions]
        assert distances == sorted(distances)
        for s in result.solutions:
            assert fk_error(robot, s.positions, target) <= FK_TOLERANCE
            assert s.fk_error <= FK_TOLERANCE
            assert np.all(s.positions >= robot.limits.lower) and np.all(s.positions <= robot.limits.upper)
            assert s.distance == pytest.approx(np.linalg.norm(s.positions - q), abs=1e-12)
        counts.append(len(result.solutions))
    # the 8 branches are distinct configurations, not 2 pi aliases
    assert max(counts) == 8 and np.mean(counts) > 6


def test_ur_geometry_follows_the_model_a_tool_offset_is_part_of_the_tip():
    tool = pin.SE3(pin.rpy.rpyToMatrix(0.3, -0.2, 0.5), np.array([0.02, -0.01, 0.15]))
    robot = RobotModel.from_name("ur5", tool_offset=tool)
    rng = np.random.default_rng(21)
    for _ in range(100):
        q = robot.random_positions(rng)
        solutions = all_solutions(robot, robot.fk(q), seed=q)
        np.testing.assert_allclose(solutions[0].positions, q, atol=1e-7)
        assert max(fk_error(robot, s.positions, robot.fk(q)) for s in solutions) <= FK_TOLERANCE


def test_ur_without_seed_wraps_every_angle_next_to_zero():
    robot = RobotModel.from_name("ur5")
    q = np.array([5.5, -4.0, 2.5, 4.0, -5.0, 6.0])
    for s in all_solutions(robot, robot.fk(q)):
        assert np.all(np.abs(s.positions) <= np.pi + 1e-12)


@pytest.mark.parametrize("q, expected", [([0.3, -1.2, 1.0, -0.5, 0.0, 0.7], "wrist"),
                                         ([0.3, -1.2, 0.0, -0.5, 1.1, 0.7], "elbow"),
                                         ([0.3, -1.2, 1.0, -0.5, np.pi, 0.7], "wrist")])
def test_ur_singular_configurations_are_named_and_still_solved(q, expected):
    robot = RobotModel.from_name("ur5")
    target = robot.fk(q)
    result = solve_ur(UrGeometry.from_robot(robot), target, seed=q)
    assert result.reachable
    assert expected in result.solutions[0].singular
    # the free wrist angle keeps the seed's value, so the seed's branch is the seed itself
    np.testing.assert_allclose(result.solutions[0].positions, q, atol=1e-7)
    for s in result.solutions:
        assert fk_error(robot, s.positions, target) <= FK_TOLERANCE


def test_ur_wrist_point_on_the_base_axis_is_a_shoulder_singularity():
    robot = RobotModel.from_name("ur5")
    g = UrGeometry.from_robot(robot)
    offset = (g.wrist_point - g.points[0]) @ g.axes[1]               # signed d4
    wrist = g.points[0] + offset * g.axes[1] + 0.3 * g.axes[0]     # in-plane distance to axis 1: zero
    R = pin.rpy.rpyToMatrix(0.4, -0.2, 1.0)
    c_tool = np.linalg.inv(g.M)[:3, :3] @ g.wrist_point + np.linalg.inv(g.M)[:3, 3]
    target = pin.SE3(R, wrist - R @ c_tool)
    result = solve_ur(g, target)
    assert result.reachable
    for s in result.solutions:
        assert "shoulder" in s.singular
        assert fk_error(robot, s.positions, target) <= FK_TOLERANCE


def test_ur_unreachable_poses_give_a_reason_not_an_exception():
    robot = RobotModel.from_name("ur5")
    g = UrGeometry.from_robot(robot)
    far = solve_ur(g, pin.SE3(np.eye(3), np.array([2.0, 0.0, 0.3])))
    assert not far.reachable and "reach" in far.reason
    c_tool = np.linalg.inv(g.M)[:3, :3] @ g.wrist_point + np.linalg.inv(g.M)[:3, 3]
    inside = solve_ur(g, pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.5]) - c_tool))   # wrist point on the base axis
    assert not inside.reachable and "d4" in inside.reason
    assert all_solutions(robot, pin.SE3(np.eye(3), np.array([2.0, 0.0, 0.3]))) == []


def test_ur_bad_inputs_and_non_ur_models_raise_named_errors(panda):
    robot = RobotModel.from_name("ur5")
    bad = robot.fk(np.zeros(6)).homogeneous
    bad[0, 3] = np.nan
    with pytest.raises(InvalidInputError, match="non-finite"):
        all_solutions(robot, bad)
    with pytest.raises(InvalidInputError, match="rotation"):
        all_solutions(robot, np.diag([1.0, 1.0, 2.0, 1.0]))
    with pytest.raises(InvalidInputError, match="seed"):
        all_solutions(robot, robot.fk(np.zeros(6)), seed=[0.0] * 5)
    with pytest.raises(ModelError, match="6 joints"):
        UrGeometry.from_robot(panda)
    with pytest.raises(ModelError, match="axis 4 parallel to axis 2"):
        UrGeometry.from_robot(kr6_robot())


# ---- OPW (KUKA KR6-like) --------------------------------------------------------------------------------------
KR6 = dict(a1=0.025, a2=-0.035, b=0.0, c1=0.400, c2=0.315, c3=0.365, c4=0.080,
           offsets=(0.0, -np.pi / 2, 0.0, 0.0, 0.0, 0.0), signs=(-1, 1, 1, -1, 1, -1))
KR6_LIMITS_DEG = ((-170, 170), (-190, 45), (-120, 156), (-185, 185), (-120, 120), (-350, 350))


def opw_urdf(p: dict) -> str:
    """A URDF of the OPW arm: each joint origin carries its OPW offset (rpy) and its sign (axis direction)."""
    s, o = p["signs"], p["offsets"]
    joints = [((0, 0, 0), (0, 0, o[0]), (0, 0, s[0])),
              ((p["a1"], p["b"], p["c1"]), (0, o[1], 0), (0, s[1], 0)),
              ((0, 0, p["c2"]), (0, o[2], 0), (0, s[2], 0)),
              ((p["a2"], 0, p["c3"] / 2), (0, 0, o[3]), (0, 0, s[3])),      # axis 4 along the forearm
              ((0, 0, p["c3"] / 2), (0, o[4], 0), (0, s[4], 0)),             # at the wrist centre
              ((0, 0, 0), (0, 0, o[5]), (0, 0, s[5]))]
    links = "".join(f'<link name="link_{i}"/>' for i in range(7))
    body = ""
    for i, (xyz, rpy, axis) in enumerate(joints):
        lo, hi = (math.radians(v) for v in KR6_LIMITS_DEG[i])
        body += (f'<joint name="joint_{i + 1}" type="revolute"><parent link="link_{i}"/><child link="link_{i + 1}"/>'
                 f'<origin xyz="{" ".join(map(repr, xyz))}" rpy="{" ".join(map(repr, rpy))}"/>'
                 f'<axis xyz="{" ".join(map(repr, axis))}"/>'
                 f'<limit lower="{lo!r}" upper="{hi!r}" effort="100" velocity="5"/></joint>')
    body += (f'<link name="tool0"/><joint name="flange" type="fixed"><parent link="link_6"/><child link="tool0"/>'
             f'<origin xyz="0 0 {p["c4"]!r}" rpy="0 0 0"/></joint>')
    return f'<robot name="kr6_like">{links}{body}</robot>'


def kr6_robot():
    return RobotModel.from_urdf_string(opw_urdf(KR6), "link_0", "tool0")


@pytest.fixture(scope="module")
def kr6():
    robot = kr6_robot()
    return robot, OpwGeometry(**KR6, lower=robot.limits.lower, upper=robot.limits.upper, verify_fk=robot.fk)


def test_opw_model_fk_equals_pinocchio_fk_of_the_urdf(kr6):
    robot, g = kr6
    for q in np.random.default_rng(5).uniform(-np.pi, np.pi, (100, 6)):
        assert fk_error(robot, q, g.fk(q)) < 1e-12


def test_opw_500_random_configurations_seed_is_the_nearest_and_every_solution_reaches(kr6):
    robot, g = kr6
    rng = np.random.default_rng(12)
    for _ in range(500):
        q = robot.random_positions(rng, margin=1e-3)
        target = robot.fk(q)
        result = g.solve(target, seed=q)
        np.testing.assert_allclose(result.solutions[0].positions, q, atol=1e-7)
        for s in result.solutions:
            assert fk_error(robot, s.positions, target) <= FK_TOLERANCE
            assert np.all(s.positions >= robot.limits.lower) and np.all(s.positions <= robot.limits.upper)


def test_opw_gives_8_distinct_solutions_without_joint_limits(kr6):
    robot, _ = kr6
    g = OpwGeometry(**KR6)
    rng, eights = np.random.default_rng(13), 0
    for _ in range(200):
        target = robot.fk(rng.uniform(-np.pi, np.pi, 6))
        solutions = g.solve(target).solutions
        eights += len(solutions) == 8
        assert len({s.branch for s in solutions}) == len(solutions)
        for s in solutions:
            assert fk_error(robot, s.positions, target) <= FK_TOLERANCE
    assert eights >= 150


def test_opw_wrist_singularity_keeps_the_seed_wrist_angle(kr6):
    robot, g = kr6
    q = np.array([0.2, -1.2, 0.8, 0.6, 0.0, -0.3])            # t5 = q5 = 0: axes 4 and 6 aligned
    result = g.solve(robot.fk(q), seed=q)
    assert "wrist" in result.solutions[0].singular
    np.testing.assert_allclose(result.solutions[0].positions, q, atol=1e-9)
    far = g.solve(pin.SE3(np.eye(3), np.array([3.0, 0.0, 0.5])))
    assert not far.reachable and "reach" in far.reason


# ---- CLI -------------------------------------------------------------------------------------------------------
def run_cli(argv):
    parser = argparse.ArgumentParser()
    ik_cli.add_arguments(parser)
    return ik_cli.run(parser.parse_args(argv))


def test_cli_lists_every_solution_with_fk_error_and_seed_distance(capsys):
    q = ["0.1", "-1.2", "1.4", "-0.3", "1.2", "0.5"]
    assert run_cli(["--robot", "ur5", "--from-q", *q, "--seed", *q]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if "shoulder=" in line]
    assert len(rows) == 8
    first = rows[0].split()
    np.testing.assert_allclose([float(v) for v in first[4:10]], [float(v) for v in q], atol=1e-4)
    assert float(first[10]) < 1e-9 and float(first[11]) == 0.0


def test_cli_unreachable_exits_1_with_the_reason_and_bad_input_exits_2(capsys):
    assert run_cli(["--robot", "2r", "--l1", "1", "--l2", "0.5", "--pose", "3", "0"]) == 1
    assert "1.5 m outside the reachable annulus" in capsys.readouterr().out
    assert run_cli(["--robot", "ur10", "--pose", "3", "0", "0.2", "0", "0", "0"]) == 1
    assert run_cli(["--robot", "2r", "--pose", "1", "0"]) == 2
    assert run_cli(["--robot", "ur3", "--pose", "0.3", "0.1"]) == 2
    assert run_cli(["--robot", "2r", "--l1", "1", "--l2", "0.5", "--pose", "0.3", "1.0"]) == 0
    out = capsys.readouterr().out
    assert "elbow=up" in out and "elbow=down" in out
