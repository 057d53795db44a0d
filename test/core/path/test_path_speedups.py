"""The planner's fast paths against the general code they replace: the refinement spline against scipy's
CubicSpline, the compiled FK against ChainFk and Pinocchio, the compiled projections against a brute-force
search, and stretch reports from the verification's samples against reports that evaluate their own."""
import numpy as np
import pytest
from scipy.interpolate import CubicSpline

from robokin_ros.core.path.chain import ChainFk, chain_fk
from robokin_ros.core.path.deviation import AxisSelection, pose_deviations, pose_errors, project_onto_path
from robokin_ros.core.path.downsample import refinement_spline
from robokin_ros.core.path.geometry import DensePath
from robokin_ros.core.path.limit_schedule import LimitSchedule, stretch_reports
from robokin_ros.core.path.timing import ToolSpeedLimit, time_optimal
from robokin_ros.core.so3 import exp3_scaled

PANDA_ACC = np.array((15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0))


@pytest.mark.parametrize("count", [2, 3, 4, 5, 9, 40])
def test_refinement_spline_is_scipys_not_a_knot_spline(count):
    rng = np.random.default_rng(count)
    ss = np.cumsum(rng.uniform(0.001, 0.2, count))
    Y = rng.normal(size=(count, 7))
    x = np.linspace(ss[0] - 0.01, ss[-1] + 0.01, 500)
    ours, scipys = refinement_spline(ss, Y), CubicSpline(ss, Y, bc_type="not-a-knot")
    for order in range(3):
        np.testing.assert_allclose(ours(x, order), scipys(x, order), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(ours(ss), Y, atol=1e-12)


@pytest.mark.parametrize("arm", ["panda", "ur5"])
def test_compiled_fk_is_chain_fk_and_pinocchio(arm, request):
    robot = request.getfixturevalue(arm)
    fk = ChainFk(robot)
    Q = np.random.default_rng(1).uniform(-2.5, 2.5, (200, robot.n))
    R, p = chain_fk(fk)(Q)
    R_ref, p_ref = fk(Q)
    np.testing.assert_allclose(R, R_ref, atol=1e-14)
    np.testing.assert_allclose(p, p_ref, atol=1e-14)
    for k in range(0, 200, 37):
        pose = robot.fk(Q[k])
        np.testing.assert_allclose(p[k], pose.translation, atol=1e-12)
        np.testing.assert_allclose(R[k], pose.rotation, atol=1e-12)


def _helix(count=400):
    """A rotating helix as a DensePath: each interval's midpoint on the curve, rotation about z with the angle."""
    u = np.linspace(0.0, 1.0, count)
    mid = 0.5 * (u[1:] + u[:-1])
    curve = lambda t: np.column_stack([0.1 * np.cos(3 * t), 0.1 * np.sin(3 * t), 0.05 * t])   # noqa: E731
    rot = lambda t: exp3_scaled(np.array([0.0, 0.0, 1.0]), 1.5 * t)                          # noqa: E731
    return DensePath(positions=curve(u), rotations=rot(u), mid_positions=curve(mid), mid_rotations=rot(mid),
                     **{f: v for f, v in _other_fields(count).items()})


def _other_fields(count):
    import dataclasses
    return {f.name: np.zeros(count, dtype=int) for f in dataclasses.fields(DensePath)
            if f.name not in ("positions", "rotations", "mid_positions", "mid_rotations")}


@pytest.mark.parametrize("tool_axes", [False, True])
def test_projections_find_the_brute_force_nearest_points(tool_axes):
    """Poses 0.2 mm / 1 mrad off a rotating helix: the combined projection's metric value and the position-only
    distance are the minima over a fine brute-force sampling of the whole path (within its sampling error)."""
    path = _helix()
    rng = np.random.default_rng(2)
    pick = rng.integers(0, path.size - 1, 60)
    p = path.positions[pick] + rng.normal(scale=2e-4, size=(60, 3))
    R = path.rotations[pick] @ exp3_scaled(rng.normal(size=3) / np.sqrt(3), np.full(60, 1e-3))
    axes = AxisSelection(np.arange(6), tool_axes)
    pos, rot = pose_deviations(path, R, p, axes, 0.1)
    fine = np.linspace(0.0, 1.0, 200001)
    brute = np.column_stack([0.1 * np.cos(3 * fine), 0.1 * np.sin(3 * fine), 0.05 * fine])
    nearest = np.array([np.linalg.norm(brute - q, axis=1).min() for q in p])
    np.testing.assert_allclose(pos, nearest, atol=2e-8)
    # the combined metric at the projection is no worse than at any dense sample
    ref = project_onto_path(path, R, p, axes, 0.1)
    e_pos, e_rot = pose_errors(R, p, ref.rotations, ref.positions, axes)
    at_projection = e_pos ** 2 + (0.1 * e_rot) ** 2
    for k in range(len(p)):
        s_pos, s_rot = pose_errors(np.repeat(R[k:k + 1], path.size, 0), np.repeat(p[k:k + 1], path.size, 0),
                                   path.rotations, path.positions, axes)
        assert at_projection[k] <= (s_pos ** 2 + (0.1 * s_rot) ** 2).min() + 1e-14
    np.testing.assert_allclose(rot, pose_errors(R, p, ref.rotations, ref.positions, axes).orientation)


def test_stretch_reports_from_the_verification_are_the_evaluated_ones(panda):
    """The reports that reuse time_optimal's control samples equal those that evaluate every sample again."""
    from robokin_ros.core.path.chain import ChainFk as Fk
    chain = Fk(panda).arrays()
    q0 = panda.home()
    waypoints = q0 + np.outer(np.linspace(0.0, 1.0, 30), np.array([0.3, -0.2, 0.25, 0.3, -0.4, 0.3, 0.5]))
    ss = np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(waypoints, axis=0), axis=1))]
    schedule = LimitSchedule([ss[0], ss[10], ss[20], ss[-1]], [1.0, 0.5, 0.8], [1.0, 0.6, 1.0], [0.0, 0.2, 0.0],
                             [0.0, 0.0, 0.5])
    tool = ToolSpeedLimit(chain)
    timed = time_optimal(ss, waypoints, panda.joint_names, panda.limits.velocity, PANDA_ACC, tool=tool,
                         schedule=schedule)
    assert timed.trajectory.verified is not None
    shared = stretch_reports(timed, schedule, panda.limits.velocity, PANDA_ACC, tool, panda.joint_names, 500.0)
    timed.trajectory.verified = None
    fresh = stretch_reports(timed, schedule, panda.limits.velocity, PANDA_ACC, tool, panda.joint_names, 500.0)
    assert shared == fresh
