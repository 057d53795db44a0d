"""OverlayBuilder: what is shown, display sizes from the Jacobian's singular values, and the directional figures
checked by brute force (convex combinations of the 2^n torque-box images) and closed forms."""
import re

import numpy as np
import pytest
from scipy.optimize import linprog

from robokin_ros.core.capability.config import CapabilityConfig
from robokin_ros.core.capability.report import MIN_EXTENT
from robokin_ros.core.robot import RobotModel
from robokin_ros.studio.overlays import ELLIPSOID_ITEMS, OVERLAY_ITEMS, OverlayBuilder

ALL = frozenset(OVERLAY_ITEMS)


@pytest.fixture(scope="module")
def builder(panda):
    return OverlayBuilder(panda)


@pytest.fixture(scope="module")
def no_effort(panda):
    xml = re.sub(r'effort="[^"]*"', 'effort="0"', panda.urdf_xml)
    return RobotModel.from_urdf_string(xml, panda.base_frame, panda.tip_frame, name="panda_no_effort")


def configurations(robot, count=3, seed=11):
    rng = np.random.default_rng(seed)
    return [robot.home()] + [robot.random_positions(rng, margin=0.3) for _ in range(count)]


def box_images(J_v, tau):
    """Every vertex of the torque box mapped through pinv(J_vᵀ): the points whose hull is the pinv polytope."""
    n = len(tau)
    signs = np.array([[1.0 if (k >> i) & 1 else -1.0 for i in range(n)] for k in range(2 ** n)])   # (2^n, n)
    return (signs * tau) @ np.linalg.pinv(J_v.T).T                                                  # (2^n, 3)


def hull_support_along(points, d):
    """Largest t with t·d a convex combination of `points`: an LP over the weights, not over hull facets."""
    k = len(points)
    cost = np.zeros(k + 1)
    cost[-1] = -1.0
    equalities = np.vstack([np.hstack([points.T, -d[:, None]]), np.hstack([np.ones(k), 0.0])])   # (4, k + 1)
    result = linprog(cost, A_eq=equalities, b_eq=[0, 0, 0, 1], bounds=[(0, None)] * (k + 1), method="highs")
    assert result.status == 0
    return result.x[-1]


def test_only_shown_items_are_drawn(builder, panda):
    q = panda.home()
    nothing = builder.build(q, frozenset())
    assert nothing.ellipsoids == {} and nothing.polytope_shown is None and nothing.unavailable == {}
    assert nothing.polytope is not None                           # still computed: the STL export needs it
    one = builder.build(q, {"velocity"})
    assert set(one.ellipsoids) == {"velocity"} and one.polytope_shown is None
    every = builder.build(q, ALL)
    assert set(every.ellipsoids) == set(ELLIPSOID_ITEMS) and every.polytope_shown is not None


def test_diameters_are_twice_scaled_singular_values(builder, panda):
    cfg = builder.config
    tau = panda.limits.effort
    for q in configurations(panda):
        frame = builder.build(q, ALL)
        J_v = panda.jacobian(q)[:3]                               # (3, 7), Pinocchio through RobotModel
        sigma = np.linalg.svd(J_v, compute_uv=False)              # descending
        weighted = np.sort(1.0 / np.linalg.svd(J_v / tau, compute_uv=False))[::-1]
        rms = np.sqrt(np.mean(tau ** 2))
        expected = {
            "velocity": 2 * cfg.velocity_scale * sigma,
            "force_unweighted": 2 * cfg.unit_force_scale / sigma[::-1],
            "force_rms": 2 * cfg.force_scale * rms / sigma[::-1],
            "force_weighted": 2 * cfg.force_scale * weighted,
        }
        for item, raw in expected.items():
            np.testing.assert_allclose(frame.ellipsoids[item].diameters, np.clip(raw, MIN_EXTENT, cfg.max_marker_size),
                                       rtol=1e-7, err_msg=item)
        accel = frame.ellipsoids["acceleration"].diameters
        # normalised: the largest axis equals the velocity ellipsoid's largest one
        assert accel.max() == pytest.approx(min(2 * cfg.acceleration_scale * sigma[0], cfg.max_marker_size))


def test_diameters_are_clamped_to_the_display_cap(panda):
    cfg = CapabilityConfig(robot="panda", velocity_scale=50.0, max_marker_size=0.5)
    frame = OverlayBuilder(panda, cfg).build(panda.home(), {"velocity"})
    shown = frame.ellipsoids["velocity"]
    assert np.all(shown.diameters <= 0.5) and shown.diameters.max() == 0.5 and shown.flagged


def test_max_force_is_the_support_of_the_box_images(builder, panda):
    rng = np.random.default_rng(5)
    for q in configurations(panda, 2):
        frame = builder.build(q, ALL, direction=rng.normal(size=3))
        assert not frame.polytope.clipped
        points = box_images(panda.jacobian(q)[:3], panda.limits.effort)
        assert frame.max_force == pytest.approx(hull_support_along(points, frame.direction), rel=1e-6)


def test_exact_polytope_force_has_a_closed_form(panda):
    # {F : |J_vᵀ F| <= τ}: along d, t stops when the first joint torque t |J_i·d| reaches τ_i
    builder = OverlayBuilder(panda, CapabilityConfig(robot="panda", polytope_method="exact"))
    q = configurations(panda)[1]
    d = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    frame = builder.build(q, ALL, direction=d)
    rates = np.abs(panda.jacobian(q)[:3].T @ d)                   # (7,)
    assert frame.max_force == pytest.approx(np.min(panda.limits.effort / rates), rel=1e-6)


def test_polytope_points_are_scaled_forces_relative_to_the_tool(builder, panda):
    q = configurations(panda)[2]
    frame = builder.build(q, {"polytope"})
    points = frame.polytope_shown.points
    forces = box_images(panda.jacobian(q)[:3], panda.limits.effort)
    # each drawn point is a force [N] times force_scale, unless pulled in to the display cap
    cap = 0.5 * builder.config.max_marker_size
    for point in points:
        if np.linalg.norm(point) < cap * (1 - 1e-9):
            assert np.min(np.linalg.norm(forces * builder.config.force_scale - point, axis=1)) < 1e-9
    # symmetric about the tool, not about the base origin: the vertices average to zero
    assert np.linalg.norm(points.mean(axis=0)) < 1e-9
    assert np.linalg.norm(points.mean(axis=0) - frame.analysis.tool_position) > 0.1


def test_max_speed_is_reachable_with_the_joint_velocity_limits(builder, panda):
    from scipy.optimize import lsq_linear
    q = configurations(panda)[1]
    frame = builder.build(q, frozenset(), direction=(0.0, 1.0, 1.0))
    J_v = panda.jacobian(q)[:3]
    limits = panda.limits.velocity
    for scale, reachable in ((1.0, True), (1.01, False)):
        target = scale * frame.max_speed * frame.direction
        fit = lsq_linear(J_v, target, bounds=(-limits, limits), method="bvls", tol=1e-12)
        assert (np.linalg.norm(J_v @ fit.x - target) < 1e-7) == reachable


def test_measures_rows_show_the_directional_figures(builder, panda):
    frame = builder.build(panda.home(), ALL, direction=(0.0, 0.0, -2.0))
    rows = dict(frame.measures())
    for prefix in ("yoshikawa", "condition number", "sigma_min / sigma_max", "isotropy", "force polytope"):
        assert any(name.startswith(prefix) for name in rows), prefix
    force = rows["largest force along (+0.00, +0.00, -1.00)"]
    speed = rows["largest speed along (+0.00, +0.00, -1.00)"]
    assert float(force.split()[0]) == pytest.approx(frame.max_force, rel=1e-3) and force.endswith("[N]")
    assert float(speed.split()[0]) == pytest.approx(frame.max_speed, rel=1e-3) and speed.endswith("[m/s]")
    assert not any(name.startswith("velocity semi-axes") for name in rows)     # not a panel row


def test_robot_without_effort_limits_reports_unavailable(no_effort):
    frame = OverlayBuilder(no_effort).build(no_effort.home(), ALL)
    assert set(frame.unavailable) == {"force_rms", "force_weighted", "polytope"}
    assert all("panda_joint1" in why for why in frame.unavailable.values())
    assert frame.polytope is None and frame.polytope_shown is None and np.isnan(frame.max_force)
    assert {"velocity", "acceleration", "force_unweighted"} == set(frame.ellipsoids)
    rows = dict(frame.measures())
    assert rows["largest force along (+1.00, +0.00, +0.00)"] == "unavailable"
    assert rows["largest speed along (+1.00, +0.00, +0.00)"].endswith("[m/s]")
    assert "torque (effort) limits are missing" in rows["note"]


def test_torque_limits_from_the_config_make_force_available(no_effort, panda):
    tau = tuple(panda.limits.effort)
    builder = OverlayBuilder(no_effort, CapabilityConfig(robot="panda", torque_limits=tau))
    q = no_effort.home()
    frame = builder.build(q, ALL, direction=(0.0, 1.0, 0.0))
    assert frame.unavailable == {}
    points = box_images(no_effort.jacobian(q)[:3], np.array(tau))
    assert frame.max_force == pytest.approx(hull_support_along(points, frame.direction), rel=1e-6)
