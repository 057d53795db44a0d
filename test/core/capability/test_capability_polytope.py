"""Force polytope: mapping statements, inscribed ellipsoid, closed-form sizes, max force, STL."""
import struct

import numpy as np
import pytest
from capability_arms import L1, L2, PANDA_SINGULAR, one_joint, support, three_r, two_link

from robokin_ros.core.capability import analysis as cap
from robokin_ros.core.capability import polytope as poly
from robokin_ros.core.errors import InvalidInputError

Q3 = [0.3, 0.4, -0.9]


@pytest.fixture(scope="module")
def panda_case(panda):
    q = panda.random_positions(np.random.default_rng(7), 0.2)
    return panda.jacobian(q)[:3], panda.limits.effort


def _exact_max_force(J, tau, d):
    """Largest t with |Jᵀ (t d)| <= tau: the first slab the ray leaves, min_i tau_i / |(Jᵀ d)_i|."""
    rates = np.abs(J.T @ d)
    return np.min(tau[rates > 0] / rates[rates > 0])


def _inscribed_ratio(ellipsoid, polytope):
    """max over faces of support_E(n) / offset; <= 1 means inscribed, == 1 means touching."""
    normals, offsets = polytope.equations[:, :3], -polytope.equations[:, 3]
    return max(support(ellipsoid, n) / b for n, b in zip(normals, offsets))


def test_one_joint_polytope_is_a_segment_of_length_2_tau_over_r():
    radius, tau = 0.4, 6.0
    arm = one_joint(radius, tau)
    p = poly.force_polytope(arm.jacobian([0.0])[:3], [tau])
    assert p.dimension == 1 and p.volume == 0.0
    length = np.linalg.norm(p.vertices[1] - p.vertices[0])
    assert length == pytest.approx(2 * tau / radius)
    assert abs(p.vertices[1] @ [0, 1, 0]) == pytest.approx(tau / radius)     # tangent to the circle
    assert poly.max_force(p, [0, 1, 0]) == pytest.approx(tau / radius)
    assert poly.max_force(p, [1, 0, 0]) == 0.0                              # the bearing takes radial loads


def test_two_link_pinv_polytope_is_the_planar_parallelogram():
    arm, q = two_link((20.0, 10.0)), [0.2, 1.0]
    p = poly.force_polytope(arm.jacobian(q)[:3], [20.0, 10.0])
    assert p.dimension == 2
    np.testing.assert_allclose(p.vertices[:, 2], 0.0, atol=1e-9)
    x, y = p.vertices[:, 0], p.vertices[:, 1]
    area = 0.5 * abs(np.dot(x, np.roll(y, 1)) - np.dot(y, np.roll(x, 1)))
    assert area == pytest.approx(4 * 20.0 * 10.0 / (L1 * L2 * abs(np.sin(1.0))), rel=1e-9)
    assert poly.max_force(p, [0, 0, 1]) == 0.0


def test_three_r_pinv_equals_exact_and_matches_closed_forms():
    arm = three_r()
    tau = arm.limits.effort
    J = arm.jacobian(Q3)[:3]
    pinv, exact = poly.force_polytope(J, tau, "pinv"), poly.force_polytope(J, tau, "exact")
    # A linear image of the box: volume = 2³ ∏tau / |det J|.
    for p in (pinv, exact):
        assert p.volume == pytest.approx(8 * np.prod(tau) / abs(np.linalg.det(J)), rel=1e-9)
    # Square Jᵀ: every vertex is held by torques exactly at the limits.
    np.testing.assert_allclose(np.abs(J.T @ pinv.vertices.T), np.repeat(tau[:, None], 8, 1), rtol=1e-9)
    for d in np.random.default_rng(0).standard_normal((20, 3)):
        d /= np.linalg.norm(d)
        expected = _exact_max_force(J, tau, d)
        assert poly.max_force(pinv, d) == pytest.approx(expected, rel=1e-9)
        assert poly.max_force(exact, d) == pytest.approx(expected, rel=1e-9)


def test_torque_weighted_ellipsoid_inscribed_and_touching_for_a_square_jacobian():
    arm = three_r()
    tau = arm.limits.effort
    J = arm.jacobian(Q3)[:3]
    ellipsoid = cap.force_ellipsoid(J, tau)
    for method in poly.METHODS:
        assert _inscribed_ratio(ellipsoid, poly.force_polytope(J, tau, method)) == pytest.approx(1.0, abs=1e-9)


def test_redundant_arm_ellipsoid_is_inscribed_but_does_not_touch(panda_case):
    J, tau = panda_case
    ellipsoid = cap.force_ellipsoid(J, tau)
    exact, pinv = poly.force_polytope(J, tau, "exact"), poly.force_polytope(J, tau, "pinv")
    ratio_exact = _inscribed_ratio(ellipsoid, exact)
    assert _inscribed_ratio(ellipsoid, pinv) <= ratio_exact + 1e-12 and ratio_exact <= 1.0
    # Slab i is reached at ||P e_i|| (P projects onto range(W⁻¹ Jᵀ)); < 1 since e_i is not in that range.
    Q, _ = np.linalg.qr((J / tau).T)                                 # (7, 3) orthonormal basis
    reach = np.linalg.norm(Q.T, axis=0)                              # ||P e_i||
    assert ratio_exact <= reach.max() + 1e-12 and reach.max() < 1.0


def test_pinv_vertices_are_projected_box_vertices_and_contain_exact(panda_case):
    J, tau = panda_case
    pinv, exact = poly.force_polytope(J, tau, "pinv"), poly.force_polytope(J, tau, "exact")
    Q, _ = np.linalg.qr(J.T)                                         # range(Jᵀ), independent of pinv
    signs = np.array(np.meshgrid(*[[-1, 1]] * 7)).reshape(7, -1).T
    projected = (signs * tau) @ Q @ Q.T                              # (128, 7)
    for F in pinv.vertices:
        assert np.min(np.linalg.norm(projected - J.T @ F, axis=1)) < 1e-9 * np.linalg.norm(tau)
    # The honest caveat: for 7 joints some pinv vertex needs a torque beyond its limit.
    assert (np.abs(J.T @ pinv.vertices.T) > tau[:, None] * (1 + 1e-6)).any()
    # Every exact vertex is held within limits, lies inside the pinv hull, and round-trips through pinv.
    assert (np.abs(J.T @ exact.vertices.T) <= tau[:, None] * (1 + 1e-9)).all()
    inside = pinv.equations[:, :3] @ exact.vertices.T + pinv.equations[:, 3:]
    assert inside.max() <= 1e-9 * np.abs(pinv.equations[:, 3]).max()
    np.testing.assert_allclose(np.linalg.pinv(J.T) @ (J.T @ exact.vertices.T), exact.vertices.T, atol=1e-8)
    assert exact.volume < pinv.volume


def test_max_force_round_trip_tau_equals_jt_f(panda_case):
    J, tau = panda_case
    exact = poly.force_polytope(J, tau, "exact")
    for d in np.random.default_rng(1).standard_normal((30, 3)):
        d /= np.linalg.norm(d)
        t = poly.max_force(exact, d)
        assert t == pytest.approx(_exact_max_force(J, tau, d), rel=1e-9)
        torques = J.T @ (t * d)
        assert np.max(np.abs(torques) / tau) == pytest.approx(1.0, abs=1e-9)   # on the boundary
        assert poly.max_force(poly.force_polytope(J, tau), d) >= t * (1 - 1e-9)


def _read_stl(data: bytes):
    (count,) = struct.unpack("<I", data[80:84])
    record = np.dtype([("normal", "<f4", 3), ("vertices", "<f4", (3, 3)), ("attribute", "<u2")])
    assert len(data) == 84 + 50 * count
    return np.frombuffer(data[84:], record)


def test_stl_is_closed_outward_and_has_the_hull_volume(tmp_path, panda_case):
    J, tau = panda_case
    p = poly.force_polytope(J, tau)
    path = poly.write_stl(tmp_path / "sub" / "hull.stl", p)
    records = _read_stl(path.read_bytes())
    assert len(records) == len(p.triangles)
    tri = records["vertices"].astype(float)
    # Divergence theorem: sum of signed tetrahedra from the origin = enclosed volume.
    volume = np.einsum("ij,ij->i", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])).sum() / 6
    assert volume == pytest.approx(p.volume, rel=1e-5)
    centroids = tri.mean(axis=1)
    assert (np.einsum("ij,ij->i", records["normal"], centroids) > 0).all()   # 0 is inside: outward
    edges = {}
    for a, b, c in p.triangles:
        for e in ((a, b), (b, c), (c, a)):
            edges[e] = edges.get(e, 0) + 1
    assert all(edges.get((b, a)) == 1 and n == 1 for (a, b), n in edges.items())  # closed, consistent


def test_singular_polytopes_are_finite_and_clipped(panda):
    J, tau = panda.jacobian(PANDA_SINGULAR)[:3], panda.limits.effort
    for method in poly.METHODS:
        p = poly.force_polytope(J, tau, method, cap=5000.0)
        assert p.clipped and np.isfinite(p.vertices).all() and np.abs(p.vertices).max() <= 5000.0 * (1 + 1e-9)
    assert not poly.force_polytope(panda.jacobian(panda.home())[:3], tau).clipped


@pytest.mark.parametrize(("args", "text"), [((np.ones((3, 2)), [1.0]), "2 entries"),
                                            ((np.ones((3, 2)), [1.0, 0.0]), "must be > 0"),
                                            ((np.ones((2, 2)), [1.0, 1.0]), "(3, n)"),
                                            ((np.ones((3, 2)), [1.0, 1.0], "hull"), "'hull'.*pinv")])
def test_bad_polytope_input_is_named(args, text):
    with pytest.raises(InvalidInputError, match=text):
        poly.force_polytope(*args)


def test_tool_force_polytope_is_capped_like_the_ellipsoids_and_needs_limits(panda):
    tau, sigma = panda.limits.effort, 2e-3
    analysis = cap.analyze(panda, PANDA_SINGULAR, tau, singular_sigma=sigma)
    p = poly.tool_force_polytope(analysis, "exact", sigma)
    assert p.method == "exact" and p.clipped and p.cap == pytest.approx(np.sqrt(np.mean(tau**2)) / sigma)
    np.testing.assert_allclose(p.vertices, poly.force_polytope(analysis.jacobian[:3], tau, "exact", p.cap).vertices)
    arm = two_link((20.0, 0.0))                          # one joint without a torque limit
    limits = cap.torque_limits_of(arm)
    assert poly.tool_force_polytope(cap.analyze(arm, [0.2, 1.0], *limits), "pinv", sigma) is None
