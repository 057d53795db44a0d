"""Kinematic calibration (issue 13 section 4): error model, identification Jacobian, identifiability, the
acceptance test on synthetic tracker data (UR5 and Panda), robust losses, corrected URDF and the CLI."""
import argparse
import re

import numpy as np
import pytest
from scipy.stats import chi2

from robokin_ros.core.classroom import calibration as cal
from robokin_ros.core.classroom.identification import analyze_identifiability, identification_jacobian
from robokin_ros.core.classroom.urdf_offsets import JointOriginErrorModel, write_corrected_urdf
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.robot import RobotModel
from robokin_ros.tools.robokin_cli import calibrate as cli

NOISE = 5e-5                       # [m] per axis, the tracker of the issue
NOISE_RMS = np.sqrt(3) * NOISE     # [m] RMS of the 3-D noise vector: what a perfect model leaves


@pytest.fixture(params=["ur5", "panda"])
def robot(request, ur5, panda):
    return {"ur5": ur5, "panda": panda}[request.param]


def _random_offsets(model, rng):
    scale = np.tile([5e-4] * 3 + [np.deg2rad(0.5)] * 3, model.size // 6 + 1)[:model.size]
    return rng.uniform(-1, 1, model.size) * scale


# ---- identification Jacobian --------------------------------------------------------------------------------
@pytest.mark.parametrize("tool_dofs", [0, 3, 6])
def test_analytic_jacobian_matches_finite_differences_at_nonzero_offsets(robot, tool_dofs):
    rng = np.random.default_rng(7)
    model = JointOriginErrorModel(robot, tool_dofs)
    qs = np.array([robot.random_positions(rng) for _ in range(6)])
    offsets = _random_offsets(model, rng) * 20        # 1 cm / 10 deg: far from zero, Jexp6 matters
    analytic = identification_jacobian(model, offsets, qs, orientation=True)
    numeric = identification_jacobian(model, offsets, qs, orientation=True, method="finite_difference")
    assert analytic.shape == (6 * 6, model.size)
    # central differences with h = 1e-6 are accurate to ~h^2 * |d3 FK| ~ 1e-11; 1e-8 leaves margin
    np.testing.assert_allclose(analytic, numeric, atol=1e-8)


def test_pose_rank_is_the_minimal_parameter_count(robot):
    """A complete, minimal model of an all-revolute arm measured in full pose has 4R + 6 parameters (Everett,
    Hollerbach): 30 for the UR5, 34 for the Panda; the SVD must find exactly that many."""
    rng = np.random.default_rng(3)
    model = JointOriginErrorModel(robot, tool_dofs=6)
    qs = np.array([robot.random_positions(rng) for _ in range(40)])
    ident = analyze_identifiability(identification_jacobian(model, np.zeros(model.size), qs, orientation=True),
                                    model.parameter_names)
    assert ident.rank == 4 * robot.n + 6
    gap = ident.singular_values[ident.rank - 1] / ident.singular_values[ident.rank]
    assert gap > 1e10                  # a clean gap, not a threshold accident


def test_unidentifiable_directions_do_not_move_the_tip(ur5):
    rng = np.random.default_rng(4)
    model = JointOriginErrorModel(ur5, tool_dofs=3)
    qs = np.array([ur5.random_positions(rng) for _ in range(30)])
    ident = analyze_identifiability(identification_jacobian(model, np.zeros(model.size), qs), model.parameter_names)
    assert len(ident.combinations) == model.size - ident.rank > 0
    # joint 1's origin sliding along its own axis is the same as joint 2's origin sliding along that axis
    assert "shoulder_pan_joint.dz + shoulder_lift_joint.dx" in ident.combinations
    fresh = np.array([ur5.random_positions(rng) for _ in range(10)])
    for direction in ident.null_basis.T:
        step = 1e-4 * direction / np.abs(direction).max()
        moved = cal.tip_poses(model, step, cal.pinocchio_configurations(ur5, fresh))[0]
        still = cal.tip_poses(model, np.zeros(model.size), cal.pinocchio_configurations(ur5, fresh))[0]
        # first order is zero; the second order of a 1e-4 step is ~1e-8 m, not the 1e-4 m a real direction gives
        assert np.abs(moved - still).max() < 1e-7


# ---- the acceptance test of the issue ---------------------------------------------------------------------------
def test_synthetic_tracker_calibration_recovers_identifiable_offsets(robot):
    data = cal.synthetic_tracker_data(robot, 50, NOISE, seed=11)
    result = cal.calibrate(robot, data.configurations, data.measured)
    assert result.success
    ident = result.identifiability
    # Nonlinear ground truth of "the identifiable part": the noise-free fit (it reproduces the true FK exactly).
    exact = cal.calibrate(robot, data.configurations, data.exact)
    assert exact.after.position_rms < 1e-12
    truth = ident.coordinates(data.true_parameters)
    second_order = np.abs(ident.coordinates(exact.parameters) - truth)     # what a linear projection misses
    assert second_order.max() < 0.05 * np.abs(truth).max()
    error = ident.coordinates(result.parameters) - truth
    std = ident.coordinate_std(NOISE)                                      # sigma / s_i per coordinate
    assert np.all(np.abs(error) <= 4.5 * std + second_order)
    # jointly: the noise part is chi-square with r degrees of freedom
    noise_part = ident.coordinates(result.parameters - exact.parameters)
    assert np.sum((noise_part / std) ** 2) < chi2.ppf(0.999, ident.rank)
    assert result.before.position_rms > 30 * NOISE_RMS
    assert result.after.position_rms <= 1.5 * NOISE_RMS
    fresh = cal.synthetic_tracker_data(robot, 50, NOISE, seed=12, true_parameters=data.true_parameters)
    assert cal.evaluate(result.robot, fresh.configurations, fresh.measured).position_rms <= 1.5 * NOISE_RMS
    assert cal.evaluate(robot, fresh.configurations, fresh.measured).position_rms > 30 * NOISE_RMS


def test_full_pose_measurements_fit_orientation_too(ur5):
    data = cal.synthetic_tracker_data(ur5, 50, NOISE, seed=5, orientation_noise=1e-4)
    result = cal.calibrate(ur5, data.configurations, data.measured, tool_dofs=6)
    assert result.identifiability.rank == 30
    assert result.before.orientation_rms > 30 * np.sqrt(3) * 1e-4
    assert result.after.orientation_rms <= 1.5 * np.sqrt(3) * 1e-4
    assert result.after.position_rms <= 1.5 * NOISE_RMS


def test_robust_loss_resists_two_gross_outliers(robot):
    data = cal.synthetic_tracker_data(robot, 50, NOISE, seed=21)
    measured = data.measured.copy()
    measured[[5, 33]] += [[5e-3, 0.0, 0.0], [0.0, 0.0, -5e-3]]             # two 5 mm tracker blunders
    fresh = cal.synthetic_tracker_data(robot, 50, NOISE, seed=22, true_parameters=data.true_parameters)
    validation = {loss: cal.evaluate(cal.calibrate(robot, data.configurations, measured, loss=loss).robot,
                                     fresh.configurations, fresh.measured).position_rms
                  for loss in ("linear", "soft_l1", "huber")}
    assert validation["linear"] > 2 * NOISE_RMS           # the blunders bend plain least squares
    assert validation["soft_l1"] <= 1.5 * NOISE_RMS
    assert validation["huber"] <= 1.5 * NOISE_RMS


class TranslationOnly:
    """A plug-in error model (the ErrorModel interface only): joint-origin translations, no rotations."""

    def __init__(self, robot):
        self.robot, self._full = robot, JointOriginErrorModel(robot)
        self.parameter_names = tuple(n for n in self._full.parameter_names if n.split(".")[1] in ("dx", "dy", "dz"))

    def apply(self, parameters):
        full = np.zeros((len(self._full.joint_ids), 6))
        full[:, :3] = np.reshape(parameters, (-1, 3))
        return self._full.apply(full.ravel())


def test_another_error_model_plugs_in_through_apply(panda):
    plugin = TranslationOnly(panda)
    rng = np.random.default_rng(6)
    true = rng.uniform(-5e-4, 5e-4, len(plugin.parameter_names))
    qs = np.array([panda.random_positions(rng, 0.1) for _ in range(40)])
    exact = cal.tip_poses(plugin, true, cal.pinocchio_configurations(panda, qs))[0]
    result = cal.calibrate(panda, qs, exact, error_model=plugin)          # finite-difference Jacobian path
    assert result.after.position_rms < 1e-10 < 1e-5 < result.before.position_rms
    with pytest.raises(InvalidInputError, match="analytic identification Jacobian needs"):
        identification_jacobian(plugin, true, qs)


# ---- corrected URDF -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("tool_dofs", [0, 6])
def test_corrected_urdf_reproduces_corrected_fk(robot, tool_dofs):
    rng = np.random.default_rng(9)
    model = JointOriginErrorModel(robot, tool_dofs)
    offsets = _random_offsets(model, rng)
    xml = write_corrected_urdf(robot.urdf_xml, model, offsets)
    loaded = RobotModel.from_urdf_string(xml, robot.base_frame, robot.tip_frame)
    expected = cal.tip_poses(model, offsets, cal.pinocchio_configurations(robot, np.zeros((1, robot.n))))
    for q in [robot.random_positions(rng) for _ in range(20)] + [np.zeros(robot.n)]:
        positions, rotations = cal.tip_poses(model, offsets, cal.pinocchio_configurations(robot, q[None]))
        np.testing.assert_allclose(loaded.fk(q).translation, positions[0], atol=1e-9)
        np.testing.assert_allclose(loaded.fk(q).rotation, rotations[0], atol=1e-9)
    assert not np.allclose(expected[0][0], robot.fk(np.zeros(robot.n)).translation, atol=1e-5)
    # only origins changed: without its <origin> tags the document is byte for byte the original
    assert re.sub(r"<origin\b[^>]*/>", "", xml) == re.sub(r"<origin\b[^>]*/>", "", robot.urdf_xml)


def test_calibration_result_carries_a_corrected_urdf(ur5):
    data = cal.synthetic_tracker_data(ur5, 40, NOISE, seed=2)
    result = cal.calibrate(ur5, data.configurations, data.measured)
    loaded = RobotModel.from_urdf_string(result.urdf, ur5.base_frame, ur5.tip_frame)
    for q in data.configurations[:10]:
        np.testing.assert_allclose(loaded.fk(q).homogeneous, result.robot.fk(q).homogeneous, atol=1e-9)
    assert set(result.offsets) == set(ur5.joint_names)


# ---- bad input ----------------------------------------------------------------------------------------------------
def test_bad_input_gives_clear_errors(ur5):
    data = cal.synthetic_tracker_data(ur5, 20, NOISE, seed=1)
    qs, measured = data.configurations, data.measured
    with pytest.raises(InvalidInputError, match="19 measurements for 20 configurations"):
        cal.calibrate(ur5, qs, measured[:-1])
    with pytest.raises(InvalidInputError, match=r"shape \(N, 6\)"):
        cal.calibrate(ur5, qs[:, :5], measured)
    with pytest.raises(InvalidInputError, match=r"shape \(N, 3\)"):
        cal.calibrate(ur5, qs, measured[:, :2])
    bad = measured.copy()
    bad[4, 1] = np.nan
    with pytest.raises(InvalidInputError, match=r"non-finite values in rows \[4\]"):
        cal.calibrate(ur5, qs, bad)
    with pytest.raises(InvalidInputError, match="5 poses give 15 equations for 36 parameters"):
        cal.calibrate(ur5, qs[:5], measured[:5])
    with pytest.raises(InvalidInputError, match="only the linear loss"):
        cal.calibrate(ur5, qs, measured, loss="huber", method="lm")
    with pytest.raises(InvalidInputError, match="unknown loss 'l1'"):
        cal.calibrate(ur5, qs, measured, loss="l1")
    with pytest.raises(InvalidInputError, match="tool_dofs must be 0, 3 or 6"):
        cal.calibrate(ur5, qs, measured, tool_dofs=4)
    quats = np.hstack([measured, np.tile([0.0, 0.0, 0.0, 2.0], (20, 1))])
    with pytest.raises(InvalidInputError, match="not unit length"):
        cal.calibrate(ur5, qs, quats)


# ---- CLI ----------------------------------------------------------------------------------------------------------
def _run(argv):
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    return cli.run(parser.parse_args(argv))


def test_cli_synthetic_round_trip(tmp_path, capsys, ur5):
    csv, out = tmp_path / "tracker.csv", tmp_path / "corrected.urdf"
    assert _run(["--robot", "ur5", "--synthetic", "50", "--noise", "5e-5", "--seed", "1", "--data", str(csv),
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    after = float(printed.split("after: position RMS ")[1].split(" mm")[0]) * 1e-3
    assert after <= 1.5 * NOISE_RMS
    assert "shoulder_pan_joint.dz + shoulder_lift_joint.dx" in printed
    configurations, measured = cli.read_csv(csv, ur5.n)
    corrected = RobotModel.from_urdf_string(out.read_text(), ur5.base_frame, ur5.tip_frame)
    assert cal.evaluate(corrected, configurations, measured).position_rms == pytest.approx(after, rel=1e-3)
    # the same CSV, re-read without --synthetic and with a robust loss, calibrates as well
    assert _run(["--robot", "ur5", "--data", str(csv), "--loss", "soft_l1"]) == 0
    assert "unidentifiable combinations" in capsys.readouterr().out


def test_cli_bad_input_returns_2(tmp_path, capsys):
    csv = tmp_path / "bad.csv"
    csv.write_text("1,2,3\n4,5,6\n")
    assert _run(["--robot", "ur5", "--data", str(csv)]) == 2
    assert "9 or 13 columns" in capsys.readouterr().err
    assert _run(["--robot", "ur5", "--data", str(tmp_path / "missing.csv")]) == 2
    assert "missing.csv" in capsys.readouterr().err
    assert _run(["--robot", "nonexistent_bot", "--data", str(csv)]) == 2


def test_cli_pose_csv_with_quaternions(tmp_path, capsys, panda):
    data = cal.synthetic_tracker_data(panda, 40, NOISE, seed=8, orientation_noise=1e-4)
    csv = tmp_path / "poses.csv"
    np.savetxt(csv, np.hstack([data.configurations, data.measured]), delimiter=",", fmt="%.17g")
    assert _run(["--robot", "panda", "--data", str(csv), "--tool", "6"]) == 0
    printed = capsys.readouterr().out
    assert "orientation RMS" in printed and "identifiable: 34 of 48" in printed
