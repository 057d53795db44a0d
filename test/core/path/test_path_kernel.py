"""Compiled path-IK kernels against independent evidence: chain pose/Jacobian against Pinocchio, the Cholesky
DLS against the eigen-decomposition DLS (and its sigma_min bound against an SVD), and the whole compiled block
loop against a Python loop built from Pinocchio and `bounded_dls` (the log3 kernel: test_so3.py)."""
import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.dls import _cholesky_pass, bounded_dls, bounded_dls_fast_into, bounded_dls_into, scratch_size
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.geometry import build_path
from robokin_ros.core.path.chain import chain_pose_jacobian
from robokin_ros.core.path.solver import PathIkSolver
from robokin_ros.core.robot import RobotModel


@pytest.mark.parametrize("name", ["panda", "ur5", "kinova"])
def test_chain_pose_and_jacobian_match_pinocchio(name):
    robot = RobotModel.from_name(name)
    chain = PathIkSolver(robot).fk.arrays()
    rng = np.random.default_rng(5)
    R, p, J = np.empty((3, 3)), np.empty(3), np.empty((6, robot.n))
    for _ in range(20):
        q = robot.random_positions(rng)
        chain_pose_jacobian(q, chain, R, p, J)
        T = robot.fk(q)
        np.testing.assert_allclose(R, T.rotation, atol=1e-12)
        np.testing.assert_allclose(p, T.translation, atol=1e-12)
        np.testing.assert_allclose(J, robot.jacobian(q, reference="local_world_aligned"), atol=1e-12)


def _dls_pair(A, b, z, lo, hi, thr, damp):
    n = A.shape[1]
    ref, fixed_ref = np.empty(n), np.zeros(n, np.int8)
    fast, fixed_fast = np.empty(n), np.zeros(n, np.int8)
    s_ref, _, _ = bounded_dls_into(A, b, z, lo, hi, thr, damp, ref, fixed_ref, np.empty(scratch_size(n)))
    s_fast = bounded_dls_fast_into(A, b, z, lo, hi, thr, damp, fast, fixed_fast, np.empty(scratch_size(n)))
    return ref, fixed_ref, s_ref, fast, fixed_fast, s_fast


@pytest.mark.parametrize("m", [6, 5, 3, 1])
def test_cholesky_dls_equals_eigen_dls(m):
    """Well conditioned, near singular (damped), exactly singular, with bounds and a null-space push."""
    rng = np.random.default_rng(m)
    n, thr, damp = 7, 0.01, 0.02
    for trial in range(300):
        A = rng.normal(size=(m, n))
        kind = trial % 3
        if kind > 0:                       # shrink one singular value around / below the threshold
            U, S, Vt = np.linalg.svd(A, full_matrices=False)
            S[-1] = 0.0 if kind == 2 and trial % 2 else rng.uniform(0.0, 0.03)
            A = (U * S) @ Vt
        b = rng.normal(scale=1e-3, size=m)
        z = rng.normal(scale=1e-3, size=n) if trial % 4 else np.zeros(n)
        tight = trial % 5 == 0
        lo = -rng.uniform(0.0, 1e-3 if tight else 1.0, n)
        hi = rng.uniform(0.0, 1e-3 if tight else 1.0, n)
        ref, fixed_ref, s_ref, fast, fixed_fast, s_fast = _dls_pair(A, b, z, lo, hi, thr, damp)
        np.testing.assert_allclose(fast, ref, atol=1e-9, rtol=0)
        np.testing.assert_array_equal(fixed_fast, fixed_ref)
        if s_ref < thr:
            assert s_fast == pytest.approx(s_ref, abs=1e-12)      # damped: exact sigma from the eigen path
        else:
            assert thr <= s_fast <= s_ref * (1 + 1e-12)


def test_cholesky_sigma_bound_is_a_lower_bound_and_refuses_below_threshold():
    rng = np.random.default_rng(9)
    for m in (6, 4, 2):
        for _ in range(300):
            W = rng.normal(scale=rng.uniform(0.01, 2.0), size=(m, 7))
            smin = np.linalg.svd(W, compute_uv=False).min()
            out, G, v6 = np.empty(7), np.empty((m, m)), np.empty((6, m))
            for thr in (1e-3, 0.5 * smin, 0.99 * smin, smin, 1.01 * smin):
                bound = _cholesky_pass(W, np.ones(m), np.zeros(7), thr, out, G, v6)
                if bound >= 0:
                    assert thr <= bound <= smin * (1 + 1e-12)
                    assert bound >= smin / np.sqrt(m) * (1 - 1e-12)          # loose by at most sqrt(m)
                    np.testing.assert_allclose(W @ out, np.ones(m), atol=1e-9)
                else:
                    assert thr * np.sqrt(m) > smin * (1 - 1e-9) or thr >= smin


def _null_space_push(q, robot, cfg):
    """Per-sample secondary motion, written out independently of `limits.nullspace_velocity`: away from the
    outer zone share of each full range (margin-shrunk limits), toward the posture."""
    lower = robot.limits.lower + cfg.joint_limit_margin
    upper = robot.limits.upper - cfg.joint_limit_margin
    span = robot.limits.upper - robot.limits.lower
    band = cfg.joint_limit_avoidance_zone * np.where(np.isfinite(span), span, 2 * np.pi)   # no push without limits
    home = np.asarray(cfg.home_positions, float) if cfg.home_positions else robot.home()
    into_low = np.clip(lower + band - q, 0.0, None)
    into_high = np.clip(q - (upper - band), 0.0, None)
    return cfg.joint_limit_avoidance_gain_per_sample * (into_low - into_high) + cfg.posture_gain_per_sample * (home - q)


def _python_reference_loop(robot, path, q0, cfg, axes):
    """A per-sample Python loop: Pinocchio Jacobian and pose, pin.log3, `bounded_dls`, limits from `cfg`."""
    model, data, fid = robot.model, robot.model.createData(), robot.tip_frame_id
    base = robot.world_T_base
    rows = None if len(axes.rows) == 6 else axes.rows
    tool_axes = axes.tool_axes and rows is not None
    lower, upper = robot.limits.lower + cfg.joint_limit_margin, robot.limits.upper - cfg.joint_limit_margin
    base_rot = None if (tool_axes or robot.world_T_base.isIdentity(1e-12) or rows is None) else base.rotation
    Q, sig = np.empty((path.size, robot.n)), np.full(path.size, np.inf)
    Q[0] = q = q0.copy()
    dq, fixed = np.empty(robot.n), np.zeros(robot.n, np.int8)
    b = np.empty(6)
    for k in range(1, path.size):
        p_t = base.rotation @ path.positions[k] + base.translation
        R_t = base.rotation @ path.rotations[k]
        for it in range(cfg.max_optimizer_iterations):
            J = pin.computeFrameJacobian(model, data, robot.to_pinocchio_q(q), fid,
                                         pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
            M = data.oMf[fid]
            R = M.rotation
            if tool_axes:
                J = (R.T @ J.reshape(2, 3, -1)).reshape(6, -1)
                b[:3], b[3:] = R.T @ (p_t - M.translation), pin.log3(R.T @ R_t)
            else:
                b[:3], b[3:] = p_t - M.translation, pin.log3(R_t @ R.T)
            if it > 0 and abs(b).max() < cfg.convergence_tolerance:
                break
            if base_rot is not None:
                J = np.vstack([base_rot.T @ J[:3], base_rot.T @ J[3:]])
                b[:3], b[3:] = base_rot.T @ b[:3], base_rot.T @ b[3:]
            z = _null_space_push(q, robot, cfg)
            A, bb = (J, b) if rows is None else (J[rows], b[rows])
            sg, _, _ = bounded_dls(A, bb, z, lower - q, upper - q, cfg.singularity_sigma_threshold, cfg.max_damping,
                                   dq, fixed)
            q = q + dq
            if it == 0:
                sig[k] = sg
        Q[k] = q
    return Q, sig


CASES = [  # robot, base frame, displacement, tool rotation rpy, mask, mask frame, config overrides
    ("panda", "", [0.15, 0.1, -0.1], [0, 0, 0.3], "111111", "tool", {}),
    ("panda", "", [0.1, -0.05, 0.05], [0.2, 0, 0.5], "111110", "tool", {"max_optimizer_iterations": 3}),
    ("panda", "", [0.1, 0.05, 0.0], [0, 0, 1.0], "110111", "base",
     {"posture_gain_per_sample": 0.05, "joint_limit_avoidance_gain_per_sample": 0.1}),
    ("panda", "panda_link1", [0.05, 0.1, 0.05], [0, 0.3, 0], "101011", "base", {"max_optimizer_iterations": 2}),
    ("panda", "", [0.42, 0, 0], [0, 0, 0], "111111", "tool", {}),        # past full stretch
    ("panda", "", [0.1, 0.1, -0.1], [0, 0, 0.3], "111111", "tool",       # damping on every sample
     {"singularity_sigma_threshold": 0.5, "max_damping": 0.01}),
    ("panda", "", [-0.5, 0, 0], [0, 0, 0], "111111", "tool", {}),        # into panda_joint2's limit
    ("ur5", "", [0.0, 0.15, 0.1], [0.3, 0, 0], "111111", "tool", {}),
    ("kinova", "", [0.05, 0.05, -0.05], [0, 0, 0.4], "111000", "tool", {}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[4]}-{c[5]}-{c[2][0]}")
def test_compiled_loop_equals_python_loop(case):
    name, base_frame, delta, rpy, mask, frame, overrides = case
    robot = RobotModel.load(name, base_frame=base_frame) if base_frame else RobotModel.from_name(name)
    q0 = robot.home()
    T0 = robot.fk(q0)
    target = pin.SE3(T0.rotation @ pin.rpy.rpyToMatrix(*rpy), T0.translation + np.asarray(delta, float))
    path = build_path(T0, [target])
    cfg = PathConfig(**overrides)
    solver = PathIkSolver(robot, cfg)
    mask = np.array([ch == "1" for ch in mask])
    s = solver._settings(mask, frame)
    Q, sigma = np.empty((path.size, robot.n)), np.full(path.size, np.inf)
    Q[0] = q0
    solver._solve_block(path, Q, sigma, 1, path.size, s)
    Q_ref, sigma_ref = _python_reference_loop(robot, path, q0, cfg, s.axes)
    # past a failure the loop runs on blindly (a fixed joint, a lost task) and amplifies rounding; the
    # checked result ends at the failed sample, so that is the part that has to agree
    res = solver.solve(path, q0, mask, frame)
    end = path.size if res.success else res.failed_sample + 1
    Q, Q_ref, sigma, sigma_ref = Q[:end], Q_ref[:end], sigma[:end], sigma_ref[:end]
    np.testing.assert_allclose(Q, Q_ref, atol=1e-9, rtol=0)
    damped = sigma_ref < cfg.singularity_sigma_threshold
    # sigma = sqrt(eigenvalue): rounding of ~1e-16 in an eigenvalue near 0 becomes ~1e-8 in sigma
    np.testing.assert_allclose(sigma[damped], sigma_ref[damped], atol=1e-8)
    assert np.all(sigma[~damped] >= cfg.singularity_sigma_threshold)
    assert np.all(sigma[~damped] <= sigma_ref[~damped] * (1 + 1e-9))
    if "max_damping" in overrides:
        assert damped[1:].all()          # the damping branch really ran (sample 0 is the start)
