"""Circular arcs (MoveC), cubic blends next to them and per-corner blend radii, each checked against geometry
computed here from the circle's definition (centre, radius, plane), not from core/path/segments.py."""
import math

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial import cKDTree

from robokin_ros.core.errors import PathInputError
from robokin_ros.core.path.geometry import build_path
from robokin_ros.core.so3 import relative_angles

Z = 0.5


def at(x, y, z=Z, R=np.eye(3)):
    return pin.SE3(R, np.array([x, y, z], dtype=float))


def fine(path):
    """Samples and midpoints interleaved: (2N-1, 3)."""
    out = np.empty((2 * path.size - 1, 3))
    out[::2], out[1::2] = path.positions, path.mid_positions
    return out


def circle_frame(normal):
    n = np.asarray(normal, float) / np.linalg.norm(normal)
    u = np.cross(n, [0.3, -0.2, 0.9])
    u /= np.linalg.norm(u)
    return n, u, np.cross(n, u)


def test_arc_samples_lie_on_the_analytic_circle_and_pass_the_via():
    centre, rho = np.array([0.4, -0.1, 0.6]), 0.08
    n, u, v = circle_frame([0.2, 0.5, 1.0])
    point = lambda phi: centre + rho * (math.cos(phi) * u + math.sin(phi) * v)      # noqa: E731
    phi_via, phi_end = math.radians(70), math.radians(160)
    R0, R1 = pin.rpy.rpyToMatrix(0.1, 0.2, 0.3), pin.rpy.rpyToMatrix(0.1, 0.2, 0.3) @ pin.exp3(np.array([0, 0.4, 0]))
    path = build_path(pin.SE3(R0, point(0.0)), [pin.SE3(R1, point(phi_end))], arc_vias=[point(phi_via)])
    pts = fine(path) - centre
    np.testing.assert_allclose(np.linalg.norm(pts, axis=1), rho, atol=1e-9)
    np.testing.assert_allclose(pts @ n, 0.0, atol=1e-9)
    # travelled counter-clockwise about n from 0 to 160 degrees, so through the via at 70
    phi = np.unwrap(np.arctan2(pts @ v, pts @ u))
    assert np.all(np.diff(phi) > 0) and phi[0] == pytest.approx(0.0, abs=1e-12)
    assert phi[-1] == pytest.approx(phi_end, abs=1e-12)
    k = np.searchsorted(phi, phi_via)
    assert 0 < k < len(phi) and phi[k] - phi[k - 1] <= 1e-3 / rho * 1.001
    # ends exactly at the waypoint; spacing rules
    np.testing.assert_allclose(path.positions[-1], point(phi_end), atol=1e-12)
    assert relative_angles(path.rotations[-1:], R1[None])[0] < 1e-12
    assert np.linalg.norm(np.diff(path.positions, axis=0), axis=1).max() <= 1e-3 + 1e-12
    assert relative_angles(path.rotations[:-1], path.rotations[1:]).max() <= 1e-3 + 1e-12
    # orientation: SLERP in proportion to arc length (0.4 rad over the arc)
    np.testing.assert_allclose(relative_angles(np.repeat(R0[None], path.size, 0), path.rotations),
                               0.4 * (rho * phi[::2]) / (rho * phi_end), atol=1e-9)


def test_quarter_circle_length():
    rho = 0.1
    path = build_path(at(rho, 0), [at(0, rho)], arc_vias=[np.array([rho, rho, 0]) / math.sqrt(2) + [0, 0, Z]])
    assert path.length == pytest.approx(math.pi * rho / 2, abs=1e-6)
    assert path.size == math.ceil(math.pi * rho / 2 / 1e-3) + 1          # <= 1 mm of arc per interval
    assert path.stops == () and path.segment.tolist() == [0] * path.size


@pytest.mark.parametrize("rho", [0.004, 0.005, 0.02, 0.1])
def test_quadratic_through_sample_midpoint_sample_fits_the_circle(rho):
    """deviation.py takes the quadratic through sample, midpoint, sample as the path within an interval. A 1 mm
    interval on a 5 mm circle would leave it by 1.56e-8 m (h^4 / (512 rho^3)); arcs that tight are sampled finer,
    so the fit holds for every radius."""
    path = build_path(at(rho, 0), [at(-rho, 0)], arc_vias=[np.array([0, rho, Z])])
    a, m, b = path.positions[:-1], path.mid_positions, path.positions[1:]
    f = np.linspace(0, 1, 41)[:, None, None]
    q = a + f * (4 * m - 3 * a - b) + f * f * (2 * a + 2 * b - 4 * m)              # (41, N-1, 3)
    centre = np.array([0, 0, Z])
    off = np.hypot(np.linalg.norm((q - centre)[..., :2], axis=-1) - rho, (q - centre)[..., 2])
    assert off.max() <= 1e-8
    # the same fit on a 1 mm interval at 5 mm radius, computed directly: why tight arcs need finer samples
    alpha = 1e-3 / (2 * 5e-3)
    ends = 5e-3 * np.array([[-math.sin(alpha), math.cos(alpha)], [0, 1], [math.sin(alpha), math.cos(alpha)]])
    g = np.linspace(0, 1, 401)[:, None]
    parabola = ends[0] + g * (4 * ends[1] - 3 * ends[0] - ends[2]) + g * g * (2 * ends[0] + 2 * ends[2] - 4 * ends[1])
    assert np.abs(np.linalg.norm(parabola, axis=1) - 5e-3).max() > 1.5e-8


def distance_to_geometry(points, lines, circle):
    """Distance of points to the unblended geometry: line segments (a, b) and the full circle (centre, rho)
    in the plane z = Z."""
    d = [np.linalg.norm(points - (a + np.clip((points - a) @ (b - a) / ((b - a) @ (b - a)), 0, 1)[:, None] * (b - a)),
                        axis=1) for a, b in lines]
    centre, rho = circle
    d.append(np.hypot(np.linalg.norm((points - centre)[:, :2], axis=1) - rho, points[:, 2] - Z))
    return np.min(d, axis=0)


def test_line_arc_line_zones_are_tangent_continuous_and_stay_near_the_corners():
    # +x line to A, clockwise half circle about (0.45, 0) (leaves A along +y, reaches B along -y), +x line
    S, A, B, E = (np.array([x, 0.0, Z]) for x in (0.3, 0.4, 0.5, 0.6))
    centre, rho, r, step = np.array([0.45, 0.0, Z]), 0.05, 0.01, 2e-4
    waypoints, vias = [at(*A), at(*B), at(*E)], [None, np.array([0.45, 0.05, Z]), None]
    path = build_path(at(*S), waypoints, r, arc_vias=vias, max_step=step)
    assert path.blend_radii == (r, r) and path.stops == ()
    pts = fine(path)
    steps = np.diff(pts, axis=0)
    steps /= np.linalg.norm(steps, axis=1)[:, None]
    turn = np.arccos(np.clip(np.einsum("ij,ij->i", steps[1:], steps[:-1]), -1, 1))
    # no kink (a kink would turn 90 degrees at once): curvature below 1/rho on the arc and ~1.4/r in the blends
    assert turn.max() <= 3 * step / min(rho, r)
    off = distance_to_geometry(pts, [(S, A), (B, E)], (centre, rho)) > 1e-9
    near = np.minimum(np.linalg.norm(pts - A, axis=1), np.linalg.norm(pts - B, axis=1))
    assert off.any() and near[off].max() <= r
    assert np.linalg.norm(pts[off] - A, axis=1).min() < r and np.linalg.norm(pts[off] - B, axis=1).min() < r
    np.testing.assert_allclose(path.positions[-1], E, atol=1e-12)
    # zone 0: both corners are stops, exactly at A and B
    sharp = build_path(at(*S), waypoints, 0.0, arc_vias=vias)
    assert len(sharp.stops) == 2
    np.testing.assert_allclose(sharp.positions[list(sharp.stops)], [A, B], atol=1e-12)


def test_line_tangent_to_an_arc_is_not_a_stop():
    # +x line to A, counter-clockwise quarter circle about (0.4, 0.05) (tangent to the line at A) ending along -x,
    # then a +y line: only that last corner turns
    A, centre, rho = np.array([0.4, 0.0, Z]), np.array([0.4, 0.05, Z]), 0.05
    end = centre + [0, rho, 0]
    waypoints = [at(*A), at(*end), at(0.4, 0.2)]
    vias = [None, centre + rho * np.array([math.sqrt(0.5), -math.sqrt(0.5), 0]), None]
    for radius in (0.0, 0.01):
        path = build_path(at(0.3, 0), waypoints, radius, arc_vias=vias)
        assert path.blend_radii[0] == 0.0                 # tangent-continuous: nothing to blend
        assert all(np.linalg.norm(path.positions[k] - A) > 1e-6 for k in path.stops)
    sharp = build_path(at(0.3, 0), waypoints, 0.0, arc_vias=vias)
    assert len(sharp.stops) == 1
    np.testing.assert_allclose(sharp.positions[sharp.stops[0]], end, atol=1e-12)


def test_cubic_blend_quadratic_fit_against_a_fine_reference():
    """The cubic blend's sample/midpoint/sample quadratic against the same path sampled every 10 um (nearest point
    on that polyline; its chords sit within ~1e-9 m of the curve)."""
    waypoints, vias = [at(0.4, 0), at(0.5, 0), at(0.6, 0)], [None, np.array([0.45, 0.05, Z]), None]
    path = build_path(at(0.3, 0), waypoints, 0.02, arc_vias=vias)
    ref = build_path(at(0.3, 0), waypoints, 0.02, arc_vias=vias, max_step=1e-5).positions
    a, m, b = path.positions[:-1], path.mid_positions, path.positions[1:]
    f = np.linspace(0, 1, 9)[:, None, None]
    q = (a + f * (4 * m - 3 * a - b) + f * f * (2 * a + 2 * b - 4 * m)).reshape(-1, 3)
    _, k = cKDTree(ref).query(q)
    dist = np.full(len(q), np.inf)
    for lo in (np.clip(k - 1, 0, len(ref) - 2), np.clip(k, 0, len(ref) - 2)):
        seg = ref[lo + 1] - ref[lo]
        s = np.clip(np.einsum("ij,ij->i", q - ref[lo], seg) / np.einsum("ij,ij->i", seg, seg), 0, 1)
        dist = np.minimum(dist, np.linalg.norm(q - ref[lo] - s[:, None] * seg, axis=1))
    assert dist.max() <= 1e-8 + 3e-9


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31))
def test_random_line_arc_programs_keep_the_spacing_rules(seed):
    """Random MoveL / MoveC programs (arcs bulging up to 1.5x the half chord, up to 0.6 rad per move) with random
    per-corner zones, clamped: spacing, monotone progress, segment order and the end pose hold everywhere."""
    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, 6))
    p, wps, vias = np.array([0.3, 0.0, Z]), [], []
    for _ in range(count):
        q = p + rng.uniform(-0.1, 0.1, 3)
        side = np.cross(q - p, rng.normal(size=3))
        bulge = rng.uniform(0.2, 1.5) * 0.5 * np.linalg.norm(q - p) * side / np.linalg.norm(side)
        vias.append(0.5 * (p + q) + bulge if rng.random() < 0.6 else None)
        wps.append(pin.SE3(pin.exp3(rng.normal(size=3) * 0.3), q))
        p = q
    path = build_path(at(0.3, 0), wps, rng.uniform(0, 0.04, count), arc_vias=vias, clamp_blend=True)
    assert np.linalg.norm(np.diff(path.positions, axis=0), axis=1).max() <= 1e-3 + 1e-12
    assert relative_angles(path.rotations[:-1], path.rotations[1:]).max() <= 1e-3 + 1e-12
    # >= 0: a move whose both zones clamp to its half keeps a zero-length piece (one repeated sample), as lines
    # always have
    assert np.all(np.diff(path.arc_length) >= 0) and np.all(np.diff(path.progress) >= 0)
    assert np.all(np.diff(path.segment) >= 0) and path.segment[-1] == count - 1
    np.testing.assert_allclose(path.positions[-1], wps[-1].translation, atol=1e-12)
    assert relative_angles(path.rotations[-1:], wps[-1].rotation[None])[0] < 1e-9
    # every sample and midpoint lies within the bulge-sized box around the moves (nothing flies off)
    corners = np.array([w.translation for w in wps] + [[0.3, 0.0, Z]])
    assert np.all(fine(path) >= corners.min(0) - 0.16) and np.all(fine(path) <= corners.max(0) + 0.16)


def rectangle():
    return [at(0.5, 0), at(0.5, 0.2), at(0.3, 0.2), at(0.3, 0)]


def test_per_corner_radii():
    start, wps = at(0.3, 0), rectangle()
    path = build_path(start, wps, [0.02, 0.0, 0.05, 0.0])
    assert path.blend_radii == (0.02, 0.0, 0.05)
    assert len(path.stops) == 1
    np.testing.assert_allclose(path.positions[path.stops[0]], wps[1].translation, atol=1e-12)
    # blended corners: the Bezier passes r sqrt(2) / 4 from a right-angle corner (textbook value)
    for corner, r in ((0, 0.02), (2, 0.05)):
        closest = np.linalg.norm(fine(path) - wps[corner].translation, axis=1).min()
        assert closest == pytest.approx(r * math.sqrt(2) / 4, abs=2e-4)
    # the last entry is unused (the path ends at rest): any valid value gives the same path
    other = build_path(start, wps, [0.02, 0.0, 0.05, 7.0])
    assert np.array_equal(other.positions, path.positions) and other.blend_radii == path.blend_radii


def test_scalar_radius_equals_the_repeated_sequence_bit_for_bit():
    wps = rectangle()
    wps[1] = pin.SE3(pin.exp3(np.array([0.0, 0.0, 0.3])), wps[1].translation)
    a, b = build_path(at(0.3, 0), wps, 0.03), build_path(at(0.3, 0), wps, (0.03,) * 4)
    for name in ("positions", "rotations", "mid_positions", "mid_rotations", "arc_length", "progress", "segment"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert (a.blend_radii, a.stops) == (b.blend_radii, b.stops)


def test_dropped_waypoint_drops_its_radius():
    wps = [at(0.5, 0), at(0.5, 0), at(0.5, 0.2)]
    path = build_path(at(0.3, 0), wps, [0.01, 5.0, 0.0])      # 5 m would not fit anywhere
    assert path.dropped_waypoints == (1,) and path.blend_radii == (0.01,)


def test_arc_radius_limit_uses_arc_length():
    # the half circle is pi * 0.05 = 157 mm long (chord 100 mm); the line before it is 100 mm: limit 50 mm
    vias = [None, np.array([0.45, 0.05, Z])]
    path = build_path(at(0.3, 0), [at(0.4, 0), at(0.5, 0)], 0.06, arc_vias=vias, clamp_blend=True)
    assert path.blend_radii == (pytest.approx(0.05),)
    vias = [np.array([0.35, 0.05, Z]), None]                  # arc first (157 mm), then a 200 mm line: limit 78.5
    path = build_path(at(0.3, 0), [at(0.4, 0), at(0.6, 0.05)], 0.1, arc_vias=vias, clamp_blend=True)
    assert path.blend_radii == (pytest.approx(math.pi * 0.05 / 2),)


@pytest.mark.parametrize("via, end, message", [
    ([0.4, 0.0, Z], [0.5, 0.0, Z], "coincides with an end"),
    ([0.5, 0.0, Z + 5e-7], [0.5, 0.0, Z], "coincides with an end"),
    ([0.45, 5e-7, Z], [0.5, 0.0, Z], "collinear"),
    ([0.6, 0.0, Z], [0.5, 0.0, Z], "collinear"),
    ([0.45, 0.05, Z], [0.4, 0.0, Z], "ends where it starts"),
    ([0.45, math.nan, Z], [0.5, 0.0, Z], "3 finite"),
    ([0.45, 0.05], [0.5, 0.0, Z], "3 finite"),
])
def test_undefined_arcs_are_refused_naming_the_waypoint(via, end, message):
    wps = [at(0.4, 0), at(*end)]
    with pytest.raises(PathInputError, match=f"waypoint 1: .*{message}") as err:
        build_path(at(0.3, 0), wps, arc_vias=[None, np.array(via)])
    assert err.value.waypoint == 1


def test_bad_radii_and_via_lists_are_refused():
    wps = rectangle()
    with pytest.raises(PathInputError, match="waypoint 2: blend radius nan") as err:
        build_path(at(0.3, 0), wps, [0.01, 0.01, math.nan, 0.0])
    assert err.value.waypoint == 2
    with pytest.raises(PathInputError, match="waypoint 0: blend radius -0.01"):
        build_path(at(0.3, 0), wps, [-0.01, 0.0, 0.0, 0.0])
    with pytest.raises(PathInputError, match="3 entries.*one per waypoint \\(4\\)"):
        build_path(at(0.3, 0), wps, [0.01, 0.0, 0.0])
    with pytest.raises(PathInputError, match="arc_vias has 1 entries"):
        build_path(at(0.3, 0), wps, arc_vias=[None])
    # an arc to a dropped duplicate waypoint or a pure rotation ends where it starts
    with pytest.raises(PathInputError, match="waypoint 1: the arc ends where it starts") as err:
        build_path(at(0.3, 0), [at(0.4, 0), at(0.4, 0)], arc_vias=[None, np.array([0.45, 0.05, Z])])
    assert err.value.waypoint == 1
    turned = at(0.4, 0, Z, pin.exp3(np.array([0.0, 0.0, 0.5])))
    with pytest.raises(PathInputError, match="waypoint 1: the arc ends where it starts"):
        build_path(at(0.3, 0), [at(0.4, 0), turned], arc_vias=[None, np.array([0.45, 0.05, Z])])
