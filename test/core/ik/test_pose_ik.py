"""Pose IK from a seed: FK round trips, the seed's branch, limits, and unreachable targets reported."""
import numpy as np
import pinocchio as pin

from robokin_ros.core.ik.pose_ik import solve_pose


def test_round_trip_from_nearby_seeds(panda):
    rng = np.random.default_rng(3)
    for _ in range(20):
        q = panda.random_positions(rng, 0.2)
        target = panda.fk(q)
        found = solve_pose(panda, target, q + rng.normal(0.0, 0.1, panda.n))
        assert found.success
        reached = panda.fk(found.positions)
        assert np.linalg.norm(reached.translation - target.translation) < 1e-9
        assert np.linalg.norm(pin.log3(reached.rotation.T @ target.rotation)) < 1e-9
        assert np.all(found.positions >= panda.limits.lower) and np.all(found.positions <= panda.limits.upper)


def test_stays_on_the_seed_branch(ur5):
    # a UR5 pose has up to 8 solutions; from a seed near one of them, that one is found (elbow sign kept)
    rng = np.random.default_rng(4)
    for _ in range(10):
        q = ur5.random_positions(rng, 0.3)
        q[2] = np.sign(q[2] or 1.0) * max(abs(q[2]), 0.5)          # clearly elbow up or down
        found = solve_pose(ur5, ur5.fk(q), q + rng.normal(0.0, 0.05, ur5.n))
        assert found.success and np.sign(found.positions[2]) == np.sign(q[2])
        assert np.abs(found.positions - q).max() < 0.3


def test_unreachable_target_is_reported_not_raised(panda):
    far = pin.SE3(np.eye(3), np.array([3.0, 0.0, 0.5]))
    found = solve_pose(panda, far, panda.home())
    assert not found.success and found.position_error > 1.5
    assert np.all(found.positions >= panda.limits.lower) and np.all(found.positions <= panda.limits.upper)
