"""Tiny serial arms as URDF strings for the capability tests (textbook values are known for them), and the
two ellipsoid formulas the tests check the core's ellipsoids with."""
from __future__ import annotations

import numpy as np

from robokin_ros.core.capability.analysis import Ellipsoid
from robokin_ros.core.robot import RobotModel

L1, L2 = 0.3, 0.2       # two-link planar arm [m]
# Found by minimizing the smallest translational singular value of the Panda (sigma_min ~ 7e-8 m/rad).
PANDA_SINGULAR = [1.309653, 1.364333, 0.06813, -0.741997, -1.570796, -0.39614, -0.426073]


def chain_urdf(joints: list[tuple[str, tuple[float, float, float]]], tip: tuple[float, float, float],
               efforts: list[float]) -> str:
    """A serial chain base -> link1 ... linkN -> tip; joint i has (axis "x y z", origin xyz in its parent).

    Each link carries 1 kg at half way to the next joint so M(q) is not trivial; effort 0 = missing.
    """
    parts = ['<robot name="arm"><link name="base"/>']
    parent = "base"
    for i, ((axis, xyz), effort) in enumerate(zip(joints, efforts), start=1):
        nxt = joints[i][1] if i < len(joints) else tip
        com = " ".join(str(0.5 * v) for v in nxt)
        parts.append(
            f'<link name="link{i}"><inertial><origin xyz="{com}"/><mass value="1.0"/>'
            '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>'
            f'<joint name="j{i}" type="revolute"><parent link="{parent}"/><child link="link{i}"/>'
            f'<origin xyz="{" ".join(map(str, xyz))}"/><axis xyz="{axis}"/>'
            f'<limit lower="-3" upper="3" effort="{effort}" velocity="2"/></joint>')
        parent = f"link{i}"
    parts.append(f'<link name="tip"/><joint name="tip_joint" type="fixed"><parent link="{parent}"/>'
                 f'<child link="tip"/><origin xyz="{" ".join(map(str, tip))}"/></joint></robot>')
    return "".join(parts)


def two_link(efforts=(20.0, 10.0)) -> RobotModel:
    """Planar arm in the x-y plane, both joints about z, links L1 and L2 along x."""
    urdf = chain_urdf([("0 0 1", (0, 0, 0)), ("0 0 1", (L1, 0, 0))], (L2, 0, 0), list(efforts))
    return RobotModel.from_urdf_string(urdf, "base", "tip")


def one_joint(radius: float, effort: float) -> RobotModel:
    """One revolute joint about z with the tool at `radius` [m] along x."""
    return RobotModel.from_urdf_string(chain_urdf([("0 0 1", (0, 0, 0))], (radius, 0, 0), [effort]),
                                       "base", "tip")


def three_r(efforts=(30.0, 20.0, 10.0)) -> RobotModel:
    """Spatial elbow arm (yaw, pitch, pitch): a square translational Jacobian away from singularities."""
    urdf = chain_urdf([("0 0 1", (0, 0, 0.1)), ("0 1 0", (0, 0, 0.2)), ("0 1 0", (0.3, 0, 0))],
                      (0.25, 0, 0), list(efforts))
    return RobotModel.from_urdf_string(urdf, "base", "tip")


def support(ellipsoid: Ellipsoid, direction) -> float:
    """Largest projection max{dᵀ x : x in ellipsoid} onto the unit-normalised `direction`."""
    d = np.asarray(direction, float) / np.linalg.norm(direction)
    return float(np.linalg.norm(ellipsoid.semi_axes * (ellipsoid.axes.T @ d)))


def shape_matrix(ellipsoid: Ellipsoid) -> np.ndarray:
    """Q = A diag(s²) Aᵀ (3, 3): the ellipsoid is {x : xᵀ Q⁻¹ x <= 1}."""
    return (ellipsoid.axes * ellipsoid.semi_axes**2) @ ellipsoid.axes.T
