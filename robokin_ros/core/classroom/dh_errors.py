"""DH-parameter error model for kinematic calibration: the errors are small deltas of the DH table itself.

Each row i (1-based, like joint{i} and the textbook's a2, d4) gets four parameters `row{i}.da`, `row{i}.dalpha`,
`row{i}.dd`, `row{i}.doffset` ([m], [rad], [m], [rad]) added to the row's a, alpha, d and theta offset. The same
four apply to both joint types because they are deltas of the row's fields: for a prismatic row the joint variable
is d, so `dd` is that joint's zero offset and `doffset` tilts its fixed theta; for a revolute row `doffset` is the
joint's zero offset and `dd` its fixed d. Base and tool transforms are not calibrated (rows only): with a fixed
tracker frame the base is the frame the measurements are taken in.

`apply` rebuilds the Pinocchio model through `dh_robot_model` of the perturbed table (~1 ms on a 6-row table), so
the calibrated chain is exactly what `robokin dh2urdf` would write, every DH frame included; the calibration
driver then uses the finite-difference identification Jacobian. A known DH limitation shows up in the
identifiability report rather than being hidden: consecutive parallel axes (UR5 joints 2-3-4) have no unique
common normal, so their d's slide along the same direction and only their sum is identifiable.
"""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robokin_ros.core.classroom.dh import DhRobot
from robokin_ros.core.classroom.dh_urdf import BASE_LINK, TOOL_LINK, dh_robot_model
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.validation import check_vector

SUFFIXES = ("da", "dalpha", "dd", "doffset")
FIELDS = ("a", "alpha", "d", "offset")


def perturbed_table(dh_robot: DhRobot, parameters: npt.ArrayLike) -> DhRobot:
    """`dh_robot` with (n, 4) deltas [da, dalpha, dd, doffset] ([m, rad, m, rad]) added row by row."""
    deltas = check_vector("DH parameter deltas", parameters, 4 * dh_robot.n).reshape(-1, 4)
    rows = tuple(dataclasses.replace(row, **{f: getattr(row, f) + float(v) for f, v in zip(FIELDS, delta)})
                 for row, delta in zip(dh_robot.rows, deltas))
    return DhRobot(rows, dh_robot.convention, dh_robot.base.copy(), dh_robot.tool.copy(), dh_robot.name)


def _check_same_robot(dh_robot: DhRobot, robot: RobotModel) -> None:
    """The measurement model must be this table's chain: same joints in order, base and tip, same FK."""
    names = tuple(f"joint{i}" for i in range(1, dh_robot.n + 1))
    if tuple(robot.joint_names) != names or robot.base_frame != BASE_LINK or robot.tip_frame != TOOL_LINK:
        raise InvalidInputError(f"robot must be dh_robot_model of the DH table (joints {list(names)}, base "
                                f"'{BASE_LINK}', tip '{TOOL_LINK}'), got joints {list(robot.joint_names)}, "
                                f"base '{robot.base_frame}', tip '{robot.tip_frame}'")
    rng = np.random.default_rng(0)
    for q in [np.zeros(dh_robot.n)] + [dh_robot.random_q(rng) for _ in range(3)]:
        gap = np.abs(robot.fk(q).homogeneous - dh_robot.tool_pose(q)).max()
        if gap > 1e-9:
            raise InvalidInputError(f"robot's forward kinematics differs from the DH table '{dh_robot.name}' by "
                                    f"{gap:.3g} at q = {np.round(q, 4).tolist()}: not the same robot")


class DhErrorModel:
    """Deltas (da, dalpha, dd, doffset) of every DH row: the `ErrorModel` interface of `calibration.calibrate`.

    Args:
        dh_robot: the nominal DH table.
        robot: the RobotModel the measurements refer to; default `dh_robot_model(dh_robot)`. Pass the one you
            give `calibrate` (it checks identity); it must be that table's chain (checked by joint names and FK).
    """

    def __init__(self, dh_robot: DhRobot, robot: RobotModel | None = None) -> None:
        if not isinstance(dh_robot, DhRobot):
            raise InvalidInputError(f"dh_robot must be a DhRobot, got {type(dh_robot).__name__}")
        self.dh_robot = dh_robot
        self.robot = dh_robot_model(dh_robot) if robot is None else robot
        _check_same_robot(dh_robot, self.robot)
        self.parameter_names = tuple(f"row{i}.{s}" for i in range(1, dh_robot.n + 1) for s in SUFFIXES)

    @property
    def size(self) -> int:
        """Number of parameters (4 per row)."""
        return len(self.parameter_names)

    def corrected_table(self, parameters: npt.ArrayLike) -> DhRobot:
        """The DH table with the deltas added (limits, joint types, base and tool unchanged)."""
        return perturbed_table(self.dh_robot, parameters)

    def apply(self, parameters: npt.ArrayLike) -> pin.Model:
        """The Pinocchio model of the corrected table (same joint order, base and tip frames as `robot`)."""
        return dh_robot_model(self.corrected_table(parameters)).model

    def deltas(self, parameters: npt.ArrayLike) -> dict[str, np.ndarray]:
        """Row name ("row1", ...) -> its [da, dalpha, dd, doffset] [m, rad, m, rad]."""
        p = check_vector("DH parameter deltas", parameters, self.size).reshape(-1, 4)
        return {f"row{i}": p[i - 1].copy() for i in range(1, self.dh_robot.n + 1)}


def format_table(dh_robot: DhRobot) -> str:
    """One line per row: a [m], alpha [deg], d [m], theta offset [deg], joint type (full precision for a)."""
    lines = [f"{'row':>4} {'a [m]':>12} {'alpha [deg]':>13} {'d [m]':>12} {'offset [deg]':>13}  type"]
    for i, row in enumerate(dh_robot.rows, start=1):
        lines.append(f"{i:>4} {row.a:>12.6f} {np.rad2deg(row.alpha):>13.5f} {row.d:>12.6f} "
                     f"{np.rad2deg(row.offset):>13.5f}  {row.joint}")
    return "\n".join(lines)


class DhSyntheticData(NamedTuple):
    """A simulated tracker data set measured on a "true" DH table with known deltas."""

    configurations: np.ndarray     # (N, n) [rad | m]
    measured: np.ndarray           # (N, 3) noisy tool positions [m]
    exact: np.ndarray              # (N, 3) noise-free true tool positions [m]
    true_parameters: np.ndarray    # (4 n,) deltas of the true table [m, rad, m, rad] per row
    true_table: DhRobot


def synthetic_dh_data(dh_robot: DhRobot, count: int, noise: float = 5e-5, seed: int = 1,
                      true_parameters: npt.ArrayLike | None = None, delta_mm_deg: tuple = (0.5, 0.5),
                      margin: float = 0.1) -> DhSyntheticData:
    """`count` random configurations (`margin` [rad | m] inside finite limits) measured on the true table with
    Gaussian noise `noise` [m] per axis. Deltas are uniform in +/-delta_mm_deg ([mm] on a, d; [deg] on alpha,
    offset) unless `true_parameters` is given. Positions come from the table's own FK (`DhRobot.fk`), not from the
    URDF path the calibration uses."""
    if int(count) < 1 or not (np.isfinite(noise) and noise >= 0):
        raise InvalidInputError(f"count must be >= 1 and noise >= 0 [m], got {count}, {noise}")
    rng = np.random.default_rng(seed)
    scale = np.tile([delta_mm_deg[0] * 1e-3, np.deg2rad(delta_mm_deg[1])] * 2, dh_robot.n)   # a, alpha, d, offset
    drawn = rng.uniform(-1.0, 1.0, 4 * dh_robot.n) * scale
    true = drawn if true_parameters is None else check_vector("true_parameters", true_parameters, 4 * dh_robot.n)
    table = perturbed_table(dh_robot, true)
    lo = np.where(np.isfinite(dh_robot.lower), dh_robot.lower + margin, -np.pi)
    hi = np.where(np.isfinite(dh_robot.upper), dh_robot.upper - margin, np.pi)
    qs = rng.uniform(lo, np.maximum(hi, lo), (int(count), dh_robot.n))
    exact = np.array([table.tool_pose(q)[:3, 3] for q in qs])
    return DhSyntheticData(qs, exact + rng.normal(0.0, noise, exact.shape), exact, true, table)
