"""Workspace sampling: batched FK/Jacobians against Pinocchio, the planar 2R against the textbook annulus and
manipulability, the reach envelope against brute force, the picture and the CLI."""
import argparse

import numpy as np
import pytest

from robokin_ros.core.classroom import workspace as ws
from robokin_ros.core.classroom.workspace_plot import plot_workspace
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.tools.robokin_cli import workspace as cli

L1, L2 = 0.5, 0.3


@pytest.fixture(scope="module")
def arm2r():
    return ws.planar_2r(L1, L2)


@pytest.mark.parametrize("name", ["panda", "ur5", "2r"])
def test_batched_points_and_jacobians_match_pinocchio(name, panda, ur5, arm2r):
    robot = {"panda": panda, "ur5": ur5, "2r": arm2r}[name]
    q = ws.sample_positions(robot, 40, seed=3)
    tip, J = ws.batch_points_jacobians(robot, q)
    for k in range(len(q)):
        np.testing.assert_allclose(tip[k], robot.fk(q[k]).translation, atol=1e-12)
        np.testing.assert_allclose(J[k], robot.jacobian(q[k]), atol=1e-12)


def test_planar_2r_helper_is_the_textbook_arm(arm2r):
    q = np.random.default_rng(1).uniform(-np.pi, np.pi, (30, 2))
    tip, _ = ws.batch_points_jacobians(arm2r, q)
    x = L1 * np.cos(q[:, 0]) + L2 * np.cos(q[:, 0] + q[:, 1])
    y = L1 * np.sin(q[:, 0]) + L2 * np.sin(q[:, 0] + q[:, 1])
    np.testing.assert_allclose(tip, np.column_stack([x, y, np.zeros(30)]), atol=1e-12)


def test_2r_manipulability_is_l1_l2_sin_q2(arm2r):
    samples = ws.sample_workspace(arm2r, 2000, seed=4)
    np.testing.assert_allclose(samples.manipulability, L1 * L2 * np.abs(np.sin(samples.positions[:, 1])), atol=1e-12)
    # sigma_min * sigma_max = w, sigma_min^2 + sigma_max^2 = trace(J J^T) = L1^2 + 2 L2^2 + 2 L1 L2 cos q2
    trace = L1 ** 2 + 2 * L2 ** 2 + 2 * L1 * L2 * np.cos(samples.positions[:, 1])
    w = samples.manipulability
    expected = np.sqrt(0.5 * (trace - np.sqrt(np.maximum(trace ** 2 - 4 * w ** 2, 0))))
    np.testing.assert_allclose(samples.sigma_min, expected, atol=1e-7)


def test_panda_measures_match_pinocchio_jacobian(panda):
    samples = ws.sample_workspace(panda, 30, seed=5, jacobian="full")
    for q, w, smin in zip(samples.positions, samples.manipulability, samples.sigma_min):
        J = panda.jacobian(q)
        assert w == pytest.approx(np.sqrt(np.linalg.det(J @ J.T)), rel=1e-9)
        assert smin == pytest.approx(np.linalg.svd(J, compute_uv=False)[-1], rel=1e-9)
    trans = ws.sample_workspace(panda, 30, seed=5)
    Jv = panda.jacobian(trans.positions[0])[:3]
    assert trans.manipulability[0] == pytest.approx(np.sqrt(np.linalg.det(Jv @ Jv.T)), rel=1e-9)


def test_2r_annulus_exact_on_a_grid_through_zero_and_pi(arm2r):
    samples = ws.sample_workspace(arm2r, 41 ** 2, grid=True)          # 41 values per joint: 0 and +/-pi included
    envelope = ws.reach_envelope(samples.points, 1)
    assert envelope.r_min[0] == pytest.approx(abs(L1 - L2), abs=1e-12)
    assert envelope.r_max[0] == pytest.approx(L1 + L2, abs=1e-12)
    assert envelope.max_reach == pytest.approx(L1 + L2, abs=1e-12)


def _annulus_errors(samples):
    envelope = ws.reach_envelope(samples.points, 1)
    return L1 + L2 - envelope.r_max[0], envelope.r_min[0] - abs(L1 - L2)


@pytest.mark.parametrize("grid, coarse, fine", [(False, 200, 50000), (True, 10 ** 2, 100 ** 2)])
def test_2r_annulus_within_resolution_and_tightens(arm2r, grid, coarse, fine):
    errors = []
    for count in (coarse, fine):
        samples = ws.sample_workspace(arm2r, count, grid=grid, seed=6)
        outer, inner = _annulus_errors(samples)
        q2 = samples.positions[:, 1]
        gap0, gap_pi = np.abs(q2).min(), (np.pi - np.abs(q2)).min()   # the samples closest to stretched / folded
        assert -1e-12 <= outer <= min(L1, L2) * gap0 ** 2 / 2 + 1e-12    # (L1+L2) - r <= L1 L2 q^2 / (2 max(L1, L2))
        assert -1e-12 <= inner <= np.sqrt(L1 * L2) * gap_pi + 1e-12      # r - |L1-L2| <= sqrt(r^2 - (L1-L2)^2)
        errors.append((outer, inner))
    assert errors[1][0] < errors[0][0]
    assert errors[1][1] < errors[0][1] or errors[0][1] < 1e-12     # a grid has q2 = +/-pi: folded exactly


def test_sampling_respects_limits(panda, arm2r):
    q = ws.sample_positions(panda, 5000, seed=7)
    assert np.all(q >= panda.limits.lower) and np.all(q <= panda.limits.upper)
    grid = ws.sample_positions(panda, 3 ** 7 + 100, grid=True)
    assert grid.shape == (3 ** 7, 7)
    np.testing.assert_allclose(grid.min(axis=0), panda.limits.lower)
    np.testing.assert_allclose(grid.max(axis=0), panda.limits.upper)
    free = ws.sample_positions(arm2r, 25, grid=True)                 # continuous joints: [-pi, pi]
    np.testing.assert_allclose([free.min(), free.max()], [-np.pi, np.pi])


def test_envelope_matches_brute_force(panda):
    samples = ws.sample_workspace(panda, 20000, seed=8)
    envelope = ws.reach_envelope(samples.points, 7)
    p = samples.points
    r, z = np.hypot(p[:, 0], p[:, 1]), p[:, 2]
    for k in range(7):
        lo, hi = envelope.z_edges[k], envelope.z_edges[k + 1]
        inside = (z >= lo) & ((z < hi) if k < 6 else (z <= hi))
        assert envelope.counts[k] == inside.sum()
        assert envelope.r_min[k] == r[inside].min() and envelope.r_max[k] == r[inside].max()
    best = int(np.argmax(np.linalg.norm(p, axis=1)))
    assert envelope.max_reach == pytest.approx(np.linalg.norm(panda.fk(samples.positions[best]).translation), abs=1e-12)
    assert envelope.max_radius == pytest.approx(r.max())
    assert envelope.counts.sum() == len(p)


def test_bad_inputs_are_named(arm2r):
    with pytest.raises(InvalidInputError, match="samples"):
        ws.sample_positions(arm2r, 0)
    with pytest.raises(InvalidInputError, match="jacobian"):
        ws.sample_workspace(arm2r, 10, jacobian="angular")
    with pytest.raises(InvalidInputError, match="bins"):
        ws.reach_envelope(np.zeros((3, 3)), 0)
    with pytest.raises(InvalidInputError, match="L1"):
        ws.planar_2r(-0.1, 0.3)
    with pytest.raises(InvalidInputError, match="colour"):
        plot_workspace(ws.sample_workspace(arm2r, 10), "unused.png", colour="hue")


def test_pictures_are_written(tmp_path, panda, arm2r):
    flat = plot_workspace(ws.sample_workspace(arm2r, 400), tmp_path / "2r.png", annulus=(abs(L1 - L2), L1 + L2))
    spatial = plot_workspace(ws.sample_workspace(panda, 3000, seed=9), tmp_path / "panda.png", colour="sigma_min")
    for path in (flat, spatial):
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _cli(argv):
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    return cli.run(parser.parse_args(argv))


def test_cli_prints_the_2r_annulus_and_draws(tmp_path, capsys):
    out = tmp_path / "ws.png"
    assert _cli(["--planar-2r", str(L1), str(L2), "--samples", "1681", "--grid", "--bins", "1",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    rows = [line.split() for line in text.splitlines() if len(line.split()) == 5 and line.split()[0][-1].isdigit()]
    assert len(rows) == 1
    assert [float(v) for v in rows[0][2:4]] == [pytest.approx(200.0), pytest.approx(800.0)]
    assert out.is_file()


def test_cli_rejects_bad_counts_and_runs_an_embedded_robot(capsys):
    assert _cli(["--planar-2r", "0.5", "0.3", "--samples", "0"]) == 2
    assert _cli(["--robot", "ur5", "--samples", "500", "--bins", "3", "--colour", "sigma_min"]) == 0
    assert "max reach from the base origin" in capsys.readouterr().out
