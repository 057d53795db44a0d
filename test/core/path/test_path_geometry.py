"""Path geometry: spacing bounds, Bezier corner deviation (textbook value), SLERP consistency, bad input."""
import math

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robokin_ros.core.errors import BlendRadiusError, EmptyPathError, PathInputError
from robokin_ros.core.path.geometry import build_path, pose_from_position_quaternion
from robokin_ros.core.so3 import relative_angles

START = pin.SE3(np.eye(3), np.array([0.3, 0.0, 0.5]))


def at(x, y, z, R=np.eye(3)):
    return pin.SE3(R, np.array([x, y, z]))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), radius=st.floats(0.0, 0.04))
def test_dense_spacing_is_within_1mm_and_1mrad(seed, radius):
    rng = np.random.default_rng(seed)
    wps = [pin.SE3(pin.exp3(rng.normal(size=3) * 0.5), START.translation + rng.uniform(-0.3, 0.3, 3))
           for _ in range(3)]
    try:
        path = build_path(START, wps, radius)
    except BlendRadiusError:
        return
    fine_p = np.empty((2 * path.size - 1, 3))
    fine_p[::2], fine_p[1::2] = path.positions, path.mid_positions
    assert np.linalg.norm(np.diff(path.positions, axis=0), axis=1).max() <= 1e-3 + 1e-12
    assert relative_angles(path.rotations[:-1], path.rotations[1:]).max() <= 1e-3 + 1e-12
    assert np.all(np.diff(path.arc_length) >= 0) and np.all(np.diff(path.progress) >= 0)
    assert path.progress[0] == 0.0 and path.progress[-1] == pytest.approx(1.0)
    np.testing.assert_allclose(path.positions[-1], wps[-1].translation, atol=1e-12)
    assert relative_angles(path.rotations[-1:], wps[-1].rotation[None])[0] < 1e-9


def test_quadratic_bezier_corner_deviation_matches_textbook():
    # 90 degree corner: B(1/2) lies r*sqrt(2)/4 from the corner; no sample comes closer
    r = 0.05
    path = build_path(START, [at(0.5, 0, 0.5), at(0.5, 0.2, 0.5)], r)
    closest = np.linalg.norm(path.positions - [0.5, 0, 0.5], axis=1).min()
    assert closest == pytest.approx(r * math.sqrt(2) / 4, abs=2e-4)
    assert path.blend_radii == (r,)
    # the blend starts r before and ends r after the corner, tangent to both segments
    on_first = path.positions[np.abs(path.positions[:, 1]) < 1e-12]
    assert on_first[:, 0].max() == pytest.approx(0.5 - r, abs=1e-3)


def test_orientation_is_continuous_through_a_blend():
    R1 = pin.rpy.rpyToMatrix(0, 0, 0.6)
    path = build_path(START, [at(0.5, 0, 0.5, R1), at(0.5, 0.2, 0.5, R1)], 0.05)
    steps = relative_angles(path.rotations[:-1], path.rotations[1:])
    assert steps.max() <= 1e-3 + 1e-12
    # midpoints lie between their neighbours on the same rotation path
    a = relative_angles(path.rotations[:-1], path.mid_rotations)
    b = relative_angles(path.mid_rotations, path.rotations[1:])
    np.testing.assert_allclose(a + b, steps, atol=1e-9)


def test_radius_too_large_is_refused_or_clamped():
    wps = [at(0.5, 0, 0.5), at(0.5, 0.06, 0.5)]
    with pytest.raises(BlendRadiusError, match="waypoint 0") as err:
        build_path(START, wps, 0.04)
    assert err.value.limit == pytest.approx(0.03)
    path = build_path(START, wps, 0.04, clamp_blend=True)
    assert path.blend_radii == (pytest.approx(0.03),) and path.clamped_corners == (0,)


def test_bad_input_errors_name_the_waypoint():
    with pytest.raises(EmptyPathError, match="no waypoints"):
        build_path(START, [], 0.0)
    with pytest.raises(EmptyPathError, match="no motion"):
        build_path(START, [START], 0.0)
    with pytest.raises(PathInputError, match="waypoint 1 has non-finite"):
        build_path(START, [at(0.4, 0, 0.5), at(math.nan, 0, 0.5)])
    with pytest.raises(PathInputError, match="unit quaternion"):
        pose_from_position_quaternion([0, 0, 0], [0, 0, 0, 0.5], 3)
    with pytest.raises(PathInputError, match="must be a finite number"):
        build_path(START, [at(0.4, 0, 0.5)], -0.1)
    with pytest.raises(PathInputError, match="coarser spacing"):
        build_path(START, [at(0.4, 0, 0.5)], max_step=0.002)
    # a tiny norm error is renormalized (documented)
    pose = pose_from_position_quaternion([0, 0, 0], [0, 0, 0, 1.0004])
    np.testing.assert_allclose(pose.rotation, np.eye(3), atol=1e-12)


def test_duplicates_are_dropped_and_pure_rotation_segments_work():
    R1 = pin.rpy.rpyToMatrix(0.3, 0, 0)
    path = build_path(START, [at(0.4, 0, 0.5), at(0.4, 0, 0.5), at(0.4, 0, 0.5, R1)], 0.01)
    assert path.dropped_waypoints == (1,)
    assert path.size == 101 + 300                        # 100 mm then 0.3 rad at 1 mrad
    assert path.stops == (100,)                          # the arm stops before rotating in place
    assert path.arc_length[-1] == pytest.approx(0.1)
    assert path.progress[100] == pytest.approx(0.1 / 0.4)


def test_sample_budget_counts_exactly_and_refuses_before_allocating():
    # 100 mm at 1 mm = 101 samples: the budget compares against the real count
    assert build_path(START, [at(0.4, 0, 0.5)], max_samples=101).size == 101
    with pytest.raises(PathInputError, match=r"needs 101 dense samples .* budget of 100; waypoint 0"):
        build_path(START, [at(0.4, 0, 0.5)], max_samples=100)
    # the biggest contributor is named; 1e5 m would need 1e8 samples (GBs) and 1e300 used to overflow
    with pytest.raises(PathInputError, match=r"budget of 2000000; waypoint 1 contributes 3e\+06") as err:
        build_path(START, [at(0.4, 0, 0.5), at(0.4, 3000.0, 0.5)])
    assert err.value.waypoint == 1
    for far in (1e5, 1e300):
        with pytest.raises(PathInputError, match="dense samples"):
            build_path(START, [at(far, 0, 0.5)])
