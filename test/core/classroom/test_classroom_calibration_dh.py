"""Calibration of DH parameter deltas (issue 13 section 4, "the errors are DH parameter deltas"): the error model
against the DH table's own FK, the acceptance test on a synthetic UR5 tracker data set, the DH-specific
unidentifiable combinations, the corrected table, and bad input."""
import numpy as np
import pytest
from scipy.stats import chi2

from robokin_ros.core.classroom import calibration as cal
from robokin_ros.core.classroom.dh_errors import DhErrorModel, format_table, perturbed_table, synthetic_dh_data
from robokin_ros.core.classroom.dh_examples import scara, ur5
from robokin_ros.core.classroom.dh_urdf import dh_robot_model
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.robot import RobotModel

NOISE = 5e-5                       # [m] per axis, the tracker of the issue
NOISE_RMS = np.sqrt(3) * NOISE     # [m] RMS of the 3-D noise vector: what a perfect model leaves


@pytest.fixture(scope="module")
def ur5_dh():
    table = ur5()
    robot = dh_robot_model(table)
    return table, robot, DhErrorModel(table, robot)


def test_apply_matches_the_tables_own_fk(ur5_dh):
    """apply() goes through the URDF generator; DhRobot.fk multiplies the four elementary transforms directly."""
    table, robot, model = ur5_dh
    rng = np.random.default_rng(1)
    deltas = rng.uniform(-1, 1, model.size) * np.tile([1e-3, 1e-2, 1e-3, 1e-2], table.n)
    truth = perturbed_table(table, deltas)
    qs = np.array([table.random_q(rng) for _ in range(10)])
    positions, rotations = cal.tip_poses(model, deltas, cal.pinocchio_configurations(robot, qs))
    for q, p, R in zip(qs, positions, rotations):
        np.testing.assert_allclose(p, truth.tool_pose(q)[:3, 3], atol=1e-12)
        np.testing.assert_allclose(R, truth.tool_pose(q)[:3, :3], atol=1e-12)
        assert np.linalg.norm(p - table.tool_pose(q)[:3, 3]) > 1e-4       # the deltas do move the tool
    assert model.parameter_names[:5] == ("row1.da", "row1.dalpha", "row1.dd", "row1.doffset", "row2.da")
    assert model.corrected_table(deltas).rows[1].a == pytest.approx(table.rows[1].a + deltas[4], abs=1e-15)


def test_ur5_dh_calibration_recovers_identifiable_deltas(ur5_dh):
    table, robot, model = ur5_dh
    data = synthetic_dh_data(table, 50, NOISE, seed=11)
    # the true table is the datasheet's with +/-0.5 mm on a, d and +/-0.5 deg on alpha, offset
    assert np.abs(data.true_parameters).reshape(-1, 4).max(axis=0) == pytest.approx(
        [5e-4, np.deg2rad(0.5), 5e-4, np.deg2rad(0.5)], rel=0.5)
    result = cal.calibrate(robot, data.configurations, data.measured, error_model=model)
    assert result.success
    ident = result.identifiability
    # Nonlinear ground truth of "the identifiable part": the noise-free fit. Unlike joint-origin offsets, two DH
    # null directions are null only to first order (row 5 trades a rotation for a translation at the d6 lever,
    # see the next test), so with the true row-5/6 deltas in them the minimum-norm fit in the nominal identifiable
    # subspace leaves ~0.8 um, 1 % of the noise (1e-16 m once those and the alpha2/3 deltas are zeroed).
    exact = cal.calibrate(robot, data.configurations, data.exact, error_model=model)
    assert exact.after.position_rms < 0.02 * NOISE_RMS
    truth = ident.coordinates(data.true_parameters)
    second_order = np.abs(ident.coordinates(exact.parameters) - truth)     # what a linear projection misses
    assert second_order.max() < 0.05 * np.abs(truth).max()
    std = ident.coordinate_std(NOISE)                                      # sigma / s_i per coordinate
    assert np.all(np.abs(ident.coordinates(result.parameters) - truth) <= 4.5 * std + second_order)
    noise_part = ident.coordinates(result.parameters - exact.parameters)
    assert np.sum((noise_part / std) ** 2) < chi2.ppf(0.999, ident.rank)
    assert result.before.position_rms > 30 * NOISE_RMS
    assert result.after.position_rms <= 1.5 * NOISE_RMS
    # the corrected table predicts the true robot at fresh configurations to within the noise level
    corrected = model.corrected_table(result.parameters)
    fresh = synthetic_dh_data(table, 100, 0.0, seed=12).configurations
    gaps = [np.linalg.norm(corrected.tool_pose(q)[:3, 3] - data.true_table.tool_pose(q)[:3, 3]) for q in fresh]
    assert np.sqrt(np.mean(np.square(gaps))) < NOISE_RMS
    nominal = [np.linalg.norm(table.tool_pose(q)[:3, 3] - data.true_table.tool_pose(q)[:3, 3]) for q in fresh]
    assert np.sqrt(np.mean(np.square(nominal))) > 30 * NOISE_RMS


def test_ur5_unidentifiable_combinations_are_the_known_dh_ones(ur5_dh):
    """Position-only data on the UR5's DH table leave 24 - 18 = 6 directions unseen, each with a reason:

    * row2.dd - row4.dd, row3.dd - row4.dd: joints 2, 3, 4 have parallel axes, and d2, d3, d4 all slide along
      them (d_i is along z_{i-1}); only d2 + d3 + d4 moves the tool (the DH common normal of parallel axes is not
      unique). Without a Hayati beta parameter a real tilt between parallel axes would not be representable.
    * row6.dalpha, row6.doffset: the tool point (a6 = 0, identity tool) lies on joint 6's axis; turning about that
      axis or about x6 through the point does not move it (they would with orientation data).
    * row5.da + (1/d6) row5.doffset, row5.dalpha - d6 row5.dd: the tool point sits d6 = 0.0823 m from joint 5
      along z5, so a theta5 offset swings it sideways like a5 does, and tilting alpha5 lifts it along z4 like d5.
    """
    table, robot, model = ur5_dh
    data = synthetic_dh_data(table, 50, NOISE, seed=11)
    result = cal.calibrate(robot, data.configurations, data.measured, error_model=model)
    ident = result.identifiability
    assert ident.rank == 18
    assert ident.singular_values[ident.rank - 1] / ident.singular_values[ident.rank] > 1e8   # a clean gap
    d6 = table.rows[5].d
    assert set(result.unidentifiable) == {"row2.dd - row4.dd", "row3.dd - row4.dd", "row6.dalpha", "row6.doffset",
                                          f"row5.da + {1 / d6:.4g} row5.doffset", f"row5.dalpha - {d6:.4g} row5.dd"}
    # each combination really does not move the tool at fresh configurations (first order zero)
    fresh = cal.pinocchio_configurations(robot, synthetic_dh_data(table, 20, 0.0, seed=5).configurations)
    still = cal.tip_poses(model, np.zeros(model.size), fresh)[0]
    for direction in ident.null_basis.T:
        moved = cal.tip_poses(model, 1e-4 * direction / np.abs(direction).max(), fresh)[0]
        assert np.abs(moved - still).max() < 1e-7       # a real 1e-4 step would move the tool ~1e-4 m


def test_scara_prismatic_row_calibrates():
    """SCARA RRPR: row 3's joint variable is d, so row3.dd is the quill's zero offset; it and the fixed d1, d4
    all act along the vertical, so only d1 - d3 - d4 (tool z = d1 - q3 - d4: z flips at alpha2 = pi) is seen."""
    table = scara()
    model = DhErrorModel(table)
    data = synthetic_dh_data(table, 50, NOISE, seed=3, margin=0.02)
    result = cal.calibrate(model.robot, data.configurations, data.measured, error_model=model)
    assert result.before.position_rms > 10 * NOISE_RMS
    assert result.after.position_rms <= 1.5 * NOISE_RMS
    assert {"row1.dd + row4.dd", "row3.dd - row4.dd"} <= set(result.unidentifiable)
    corrected = model.corrected_table(result.parameters)
    assert corrected.rows[2].joint == "prismatic" and corrected.rows[2].upper == table.rows[2].upper
    text = format_table(corrected)
    assert text.splitlines()[3].split()[-1] == "prismatic" and len(text.splitlines()) == 5


def test_bad_input_gives_clear_errors(ur5_dh):
    table, robot, model = ur5_dh
    with pytest.raises(InvalidInputError, match="must be a DhRobot"):
        DhErrorModel("ur5")
    with pytest.raises(InvalidInputError, match="joints"):
        DhErrorModel(table, RobotModel.from_name("ur5"))             # the URDF UR5: other joint names and frames
    shifted = perturbed_table(table, np.r_[1e-3, np.zeros(model.size - 1)])
    with pytest.raises(InvalidInputError, match="differs from the DH table 'ur5_dh' by"):
        DhErrorModel(table, dh_robot_model(shifted))
    with pytest.raises(InvalidInputError, match="must have 24 entries"):
        model.apply(np.zeros(23))
    with pytest.raises(InvalidInputError, match="count must be >= 1"):
        synthetic_dh_data(table, 0)
    data = synthetic_dh_data(table, 10, NOISE, seed=2)
    with pytest.raises(InvalidInputError, match="different RobotModel"):
        cal.calibrate(dh_robot_model(table), data.configurations, data.measured, error_model=model)
    with pytest.raises(InvalidInputError, match="5 poses give 15 equations for 24 parameters"):
        cal.calibrate(robot, data.configurations[:5], data.measured[:5], error_model=model)
