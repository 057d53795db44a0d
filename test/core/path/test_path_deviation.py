"""True deviation (issue 12 §5): controller playback (cubic Hermite / quintic) and projection onto the requested
geometry, checked against analytic polynomials, known offsets, the old joint-space matching as a control, and a
brute-force distance on the bench rectangles."""
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial import cKDTree

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.path.deviation import AxisSelection, pose_errors
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.deviation import controller_positions, project_onto_path, trajectory_deviation
from robokin_ros.core.path.geometry import build_path
from robokin_ros.core.program.moves import waypoint_program
from robokin_ros.core.program.planner import MotionPlanner
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays, sample_times
from robokin_ros.core.so3 import slerp_batch

ALL_AXES = AxisSelection(np.arange(6), False)
RATE = 500.0


def old_timed_deviation(control_positions, dense_positions, path, solver, axes):
    """The measure planner.timed_deviation used before issue 12 §5 (kept verbatim as the control): nearest dense
    joint solution, then its geometric pose."""
    tree = cKDTree(dense_positions)
    _, nearest = tree.query(control_positions)
    last = len(dense_positions) - 1
    lo = np.clip(nearest - 1, 0, last - 1)
    best_i, best_f, best_d = lo.copy(), np.zeros(len(lo)), np.full(len(lo), np.inf)
    for i in (lo, np.clip(nearest, 0, last - 1)):
        seg = dense_positions[i + 1] - dense_positions[i]
        f = np.clip(np.einsum("kj,kj->k", control_positions - dense_positions[i], seg)
                    / np.maximum(np.einsum("kj,kj->k", seg, seg), 1e-30), 0.0, 1.0)
        d = np.linalg.norm(control_positions - dense_positions[i] - f[:, None] * seg, axis=1)
        better = d < best_d
        best_i, best_f, best_d = (np.where(better, i, best_i), np.where(better, f, best_f),
                                  np.where(better, d, best_d))
    p_ref = (1 - best_f)[:, None] * path.positions[best_i] + best_f[:, None] * path.positions[best_i + 1]
    R_ref = slerp_batch(path.rotations[best_i], path.rotations[best_i + 1], best_f)
    R, p = solver.fk(control_positions)
    pos, rot = pose_errors(R, p, R_ref, p_ref, axes)
    return float(pos.max()), float(rot.max())


def point_fk(R0=np.eye(3)):
    """FK of a 'Cartesian robot': the tool point is q[:3], the orientation R0 rotated by the rotation vector q[3:6]
    (when given)."""
    def fk(Q):
        Q = np.atleast_2d(Q)
        R = np.array([R0 @ pin.exp3(q[3:6]) if Q.shape[1] >= 6 else R0 for q in Q])
        return R, Q[:, :3].copy()
    return fk


def sampled(fn, t_knots):
    """Trajectory points at t_knots from fn(t) -> (positions, velocities, accelerations), each (K, n)."""
    q, qd, qdd = fn(t_knots)
    return JointTrajectoryArrays(tuple(f"j{i}" for i in range(q.shape[1])), t_knots, q, qd, qdd)


# ---- (1) running ahead of / behind schedule is no deviation ---------------------------------------------------
def test_running_ahead_and_behind_on_a_line_is_no_deviation():
    """Two prismatic joints in series along x (tool x = q0 + q1): the solved path uses q0 only; the played one
    shares the motion (q1 = +-2 mm, ahead then behind) and keeps the tool exactly on the line. The old joint-space
    matching calls the 2 mm shift a deviation; the new measure sees the line."""
    start, end = pin.SE3(np.eye(3), np.zeros(3)), pin.SE3(np.eye(3), np.array([0.1, 0.0, 0.0]))
    path = build_path(start, [end])

    def fk(Q):
        Q = np.atleast_2d(Q)
        x = Q[:, 0] + Q[:, 1]
        return np.repeat(np.eye(3)[None], len(Q), axis=0), np.stack([x, 0 * x, 0 * x], axis=1)

    dense = np.stack([path.positions[:, 0], np.zeros(path.size)], axis=1)       # the solved joint samples
    T, shift = 2.0, 2e-3

    def played(t):
        # tool x(t) = 0.1 s(t), s a quintic rest-to-rest; the split between the joints drifts by shift sin(2 pi t/T)
        s, sd, sdd = (10 * (t / T) ** 3 - 15 * (t / T) ** 4 + 6 * (t / T) ** 5,
                      (30 * (t / T) ** 2 - 60 * (t / T) ** 3 + 30 * (t / T) ** 4) / T,
                      (60 * (t / T) - 180 * (t / T) ** 2 + 120 * (t / T) ** 3) / T ** 2)
        w = 2 * np.pi / T
        d, dd, ddd = shift * np.sin(w * t), shift * w * np.cos(w * t), -shift * w * w * np.sin(w * t)
        x, xd, xdd = 0.1 * s, 0.1 * sd, 0.1 * sdd
        return (np.stack([x - d, d], 1), np.stack([xd - dd, dd], 1), np.stack([xdd - ddd, ddd], 1))

    trajectory = sampled(played, np.linspace(0.0, T, 201))
    new = trajectory_deviation(trajectory, path, fk, ALL_AXES, RATE)
    control = controller_positions(trajectory, sample_times(T, RATE))
    old_position, _ = old_timed_deviation(control, dense, path, SimpleNamespace(fk=fk), ALL_AXES)
    assert new.position < 1e-12 and new.orientation < 1e-12
    assert old_position == pytest.approx(shift, rel=0.01)          # the control: the old measure reports the shift


def test_pure_rotation_played_off_schedule_is_no_deviation():
    """A pure rotation has no position to project by; the rotation term of the metric finds the reference, so
    a played rotation that leads the geometry's schedule still reads ~0."""
    start = pin.SE3(np.eye(3), np.zeros(3))
    path = build_path(start, [pin.SE3(pin.exp3(np.array([0.0, 0.0, 0.5])), np.zeros(3))])
    T = 1.0

    def played(t):
        s = np.sin(0.5 * np.pi * t / T)          # ahead of a linear schedule, then slows to the end
        sd = 0.5 * np.pi / T * np.cos(0.5 * np.pi * t / T)
        sdd = -(0.5 * np.pi / T) ** 2 * s
        z = np.zeros_like(t)
        return (np.stack([z, z, z, z, z, 0.5 * s], 1), np.stack([z, z, z, z, z, 0.5 * sd], 1),
                np.stack([z, z, z, z, z, 0.5 * sdd], 1))

    result = trajectory_deviation(sampled(played, np.linspace(0.0, T, 101)), path, point_fk(), ALL_AXES, RATE)
    assert result.position < 1e-12 and result.orientation < 1e-9


# ---- (2) a known offset reads as itself ----------------------------------------------------------------------
@pytest.mark.parametrize("offset", [1e-5, 5e-5, 2e-4])
def test_known_offset_from_line_and_blend_reads_exactly(offset):
    """Points of the exact blended geometry (quadratic Bezier corner, evaluated analytically, not from the dense
    samples) moved `offset` along the in-plane normal read `offset` to ~1e-10 m. A chord-polyline reference would be
    off by the sagitta (~6 um here), far beyond the assertion."""
    r, corner = 0.03, np.array([0.1, 0.0, 0.0])
    start = pin.SE3(np.eye(3), np.zeros(3))
    path = build_path(start, [pin.SE3(np.eye(3), corner), pin.SE3(np.eye(3), np.array([0.1, 0.1, 0.0]))], r)
    B0, B2 = corner - [r, 0, 0], corner + [0, r, 0]
    u = np.linspace(0.0, 1.0, 997)[:, None]
    bezier = (1 - u) ** 2 * B0 + 2 * u * (1 - u) * corner + u ** 2 * B2                        # (K, 3)
    tangent = 2 * (1 - u) * (corner - B0) + 2 * u * (B2 - corner)
    normal = np.cross([0, 0, 1.0], tangent / np.linalg.norm(tangent, axis=1)[:, None])
    line = np.stack([np.linspace(0.001, 0.069, 50), np.zeros(50), np.zeros(50)], 1)
    points = np.vstack([bezier + offset * normal, line + offset * np.array([0, -1.0, 0]),
                        line + offset * np.array([0, 0, 1.0])])
    R = np.repeat(np.eye(3)[None], len(points), axis=0)
    ref = project_onto_path(path, R, points, ALL_AXES, 1.0)
    np.testing.assert_allclose(np.linalg.norm(points - ref.positions, axis=1), offset, atol=1e-10)


def test_known_rotation_offset_and_axis_mask():
    """A played pose rotated 3 mrad about the tool x axis and shifted 0.2 mm along base z, on a segment that both
    moves and turns: 3 mrad / 0.2 mm with every axis, 0 mm when z is free, 0 mrad when the rotation is free."""
    start = pin.SE3(np.eye(3), np.zeros(3))
    path = build_path(start, [pin.SE3(pin.exp3(np.array([0.0, 0.0, 0.1])), np.array([0.1, 0.0, 0.0]))])
    s = np.linspace(0.05, 0.95, 40)
    Rg = np.array([pin.exp3(np.array([0.0, 0.0, 0.1 * f])) for f in s])
    R = Rg @ pin.exp3(np.array([3e-3, 0.0, 0.0]))
    p = np.stack([0.1 * s, 0 * s, 0 * s + 2e-4], 1)

    def errors(rows):
        axes = AxisSelection(np.array(rows), False)
        ref = project_onto_path(path, R, p, axes, 1.0)
        return pose_errors(R, p, ref.rotations, ref.positions, axes)

    pos, rot = errors([0, 1, 2, 3, 4, 5])
    np.testing.assert_allclose(pos, 2e-4, atol=1e-9)
    np.testing.assert_allclose(rot, 3e-3, atol=1e-9)
    pos, rot = errors([0, 1, 3, 4, 5])
    np.testing.assert_allclose(pos, 0.0, atol=1e-9)
    pos, rot = errors([0, 1, 2])
    np.testing.assert_allclose(pos, 2e-4, atol=1e-9)
    assert np.all(rot == 0.0)


# ---- (3) playback equals the controller's polynomials ---------------------------------------------------------
def polynomial(coefficients):
    """(q, qd, qdd)(t) of per-joint polynomials, coefficients (degree + 1, n), lowest first."""
    c = np.asarray(coefficients, float)
    powers = np.arange(len(c))

    def fn(t):
        t = np.asarray(t, float)[:, None]
        q = sum(c[k] * t ** k for k in powers)
        qd = sum(k * c[k] * t ** (k - 1) for k in powers[1:])
        qdd = sum(k * (k - 1) * c[k] * t ** (k - 2) for k in powers[2:])
        return q, qd, qdd
    return fn


@pytest.mark.parametrize("interpolation, degree", [("cubic", 3), ("quintic", 5)])
def test_playback_reproduces_an_analytic_polynomial(interpolation, degree):
    """Between unevenly spaced points, the cubic Hermite (positions + velocities) reproduces any cubic and the quintic
    (+ accelerations) any quintic exactly: the controller's interpolants. Linear interpolation, the control, does
    not."""
    rng = np.random.default_rng(7)
    fn = polynomial(rng.uniform(-1.0, 1.0, (degree + 1, 3)))
    knots = np.unique(np.r_[0.0, np.sort(rng.uniform(0.0, 2.0, 12)), 2.0])
    trajectory = sampled(fn, knots)
    t = np.sort(rng.uniform(0.0, 2.0, 500))
    np.testing.assert_allclose(controller_positions(trajectory, t, interpolation), fn(t)[0], atol=1e-12)
    linear = np.stack([np.interp(t, knots, trajectory.positions[:, j]) for j in range(3)], 1)
    assert np.abs(linear - fn(t)[0]).max() > 1e-4
    if interpolation == "cubic":               # a quintic is beyond the cubic: the test can fail
        quintic = sampled(polynomial(rng.uniform(-1.0, 1.0, (6, 3))), knots)
        assert np.abs(controller_positions(quintic, t, "cubic") - controller_positions(quintic, t)).max() > 1e-6


def test_playback_rejects_bad_requests():
    trajectory = sampled(polynomial([[0.0], [1.0]]), np.array([0.0, 1.0]))
    with pytest.raises(InvalidInputError, match="linear.*quintic"):
        controller_positions(trajectory, np.array([0.5]), "linear")
    with pytest.raises(InvalidInputError, match="outside the trajectory"):
        controller_positions(trajectory, np.array([1.5]))


# ---- (4) the bench rectangles ---------------------------------------------------------------------------------
def bench_rectangle(robot):
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
    from bench_path import ACC, suite            # the rectangles issue 12 quotes (1.13 m, 30 mm blends)
    waypoints, blend = next((w, b) for title, w, b in suite(robot) if title.startswith("rectangle"))
    return PathConfig(max_joint_acceleration=ACC[robot.name]), waypoints, blend


@pytest.mark.parametrize("arm", ["ur5", "panda"])
def test_bench_rectangle_true_deviation(arm, request):
    """The reported figure equals an independent brute force (FK of the played samples against the geometry
    sampled every 10 um, nearest point by KD-tree) and stays inside the 0.1 mm tolerance."""
    robot = request.getfixturevalue(arm)
    cfg, waypoints, blend = bench_rectangle(robot)
    plan = MotionPlanner(robot, cfg).plan(waypoint_program(waypoints, blend), robot.home())
    assert plan.success, plan.path_ik.message
    assert plan.path_ik.path.length == pytest.approx(1.13, abs=0.01)
    reported = plan.timing.max_position_deviation
    start = robot.fk(robot.home())
    fine = build_path(start, waypoints, blend, max_step=1e-5)
    played = controller_positions(plan.trajectory, sample_times(plan.trajectory.duration, cfg.control_rate_hz))
    tool = np.array([robot.fk(q).translation for q in played])
    # nearest 10 um vertex: at most sqrt(d^2 + (5 um)^2), i.e. < 0.3 um above the true distance at d ~ 0.04 mm
    brute = cKDTree(fine.positions).query(tool)[0].max()
    assert reported < cfg.max_position_deviation
    assert brute - 3e-7 <= reported <= brute + 1e-9


def test_closed_path_start_is_matched_on_its_own_branch():
    """A loop whose last side runs 0.2 mm past the start, collinear with the first side: points 0.3-0.9 mm after
    the start lie on the first side (distance 0), though the nearest dense sample is the end of the last side."""
    start = pin.SE3(np.eye(3), np.zeros(3))
    corners = [[0.1, 0, 0], [0.1, 0.1, 0], [-0.1, 0.1, 0], [-0.1, 0, 0], [2e-4, 0, 0]]
    path = build_path(start, [pin.SE3(np.eye(3), np.array(c, float)) for c in corners])
    points = np.stack([np.linspace(3e-4, 9e-4, 9), np.zeros(9), np.zeros(9)], 1)
    ref = project_onto_path(path, np.repeat(np.eye(3)[None], 9, axis=0), points, ALL_AXES, 1.0)
    np.testing.assert_allclose(np.linalg.norm(points - ref.positions, axis=1), 0.0, atol=1e-12)
