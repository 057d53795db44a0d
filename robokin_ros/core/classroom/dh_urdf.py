"""A DH table as a URDF document, so everything built on RobotModel (servo, path IK, capability) runs on it.

URDF puts a joint's fixed origin *before* its motion (child = parent * origin * motion(q)), DH puts it in
between. Each row is therefore split into pre-motion P, motion M(q) about/along z, and post-motion Q:

* standard: A(q) = M(q) Q with Q = Rz(offset) Tz(d) Tx(a) Rx(alpha)  (Rz and Tz commute with M(q))
* modified: A(q) = P M(q) with P = Rx(alpha) Tx(a) Rz(offset) Tz(d)

Links: base --fixed(base transform)--> frame0 --joint1(origin P, axis z)--> link1 --fixed(Q)--> frame1 ...
--> frame{n} --fixed(tool transform)--> tool. So every DH frame is a URDF link of the same name, and the
moving body `link{i}` sits on joint i's axis. Revolute joints without finite limits become `continuous`.

Each moving link gets a placeholder inertia (`link_mass` at its origin, `link_mass * 0.01` kg m^2 about each
axis) only so that M(q) is invertible for the capability analysis: a DH table carries no mass data.
"""
from __future__ import annotations

import math
from xml.sax.saxutils import quoteattr

import numpy as np

from robokin_ros.core.classroom.dh import DhRobot, DhRow
from robokin_ros.core.classroom.transforms import rot_x, rot_z, rotation_to_rpy, trans
from robokin_ros.core.robot import RobotModel

BASE_LINK, TOOL_LINK = "base", "tool"


def split_row(row: DhRow, convention: str) -> tuple[np.ndarray, np.ndarray]:
    """(P, Q) (4, 4) each with row.transform(q) == P @ M(q) @ Q, M(q) the pure joint motion along/about z."""
    fixed_theta = rot_z(row.offset)
    if convention == "standard":
        return np.eye(4), fixed_theta @ trans(0.0, 0.0, row.d) @ trans(row.a, 0.0, 0.0) @ rot_x(row.alpha)
    return rot_x(row.alpha) @ trans(row.a, 0.0, 0.0) @ fixed_theta @ trans(0.0, 0.0, row.d), np.eye(4)


def _origin(T: np.ndarray) -> str:
    # repr keeps all 17 significant digits: rounding here would cost the 1e-9 agreement with the DH FK
    xyz = " ".join(repr(float(v)) for v in T[:3, 3])
    rpy = " ".join(repr(float(v)) for v in rotation_to_rpy(T))
    return f'<origin xyz="{xyz}" rpy="{rpy}"/>'


def _fixed(name: str, parent: str, child: str, T: np.ndarray) -> str:
    return (f'  <joint name="{name}" type="fixed"><parent link="{parent}"/><child link="{child}"/>'
            f'{_origin(T)}</joint>')


def _moving(i: int, row: DhRow, parent: str, P: np.ndarray) -> str:
    kind = row.joint
    limited = math.isfinite(row.lower) and math.isfinite(row.upper)
    if kind == "revolute" and not limited:
        kind = "continuous"
    bounds = f'lower="{row.lower!r}" upper="{row.upper!r}" ' if limited else ""
    return (f'  <joint name="joint{i}" type="{kind}"><parent link="{parent}"/><child link="link{i}"/>'
            f'{_origin(P)}<axis xyz="0 0 1"/>'
            f'<limit {bounds}effort="{row.effort!r}" velocity="{row.velocity!r}"/></joint>')


def _inertial_link(name: str, mass: float) -> str:
    if mass <= 0.0:
        return f'  <link name="{name}"/>'
    inertia = 0.01 * mass
    return (f'  <link name="{name}"><inertial><origin xyz="0 0 0"/><mass value="{mass!r}"/>'
            f'<inertia ixx="{inertia!r}" iyy="{inertia!r}" izz="{inertia!r}" ixy="0" ixz="0" iyz="0"/>'
            '</inertial></link>')


def dh_to_urdf(robot: DhRobot, link_mass: float = 1.0) -> str:
    """URDF XML of `robot`: links base, frame0..frame{n}, link1..link{n}, tool; joints joint1..joint{n}.

    Args:
        robot: the DH table.
        link_mass: placeholder mass [kg] of each moving link (0: no inertial elements).
    """
    parts = [f'<?xml version="1.0"?>\n<robot name={quoteattr(robot.name)}>',
             f'  <link name="{BASE_LINK}"/>', '  <link name="frame0"/>',
             _fixed("base_fixed", BASE_LINK, "frame0", robot.base)]
    for i, row in enumerate(robot.rows, start=1):
        P, Q = split_row(row, robot.convention)
        parts += [_inertial_link(f"link{i}", link_mass), f'  <link name="frame{i}"/>',
                  _moving(i, row, f"frame{i - 1}", P), _fixed(f"frame{i}_fixed", f"link{i}", f"frame{i}", Q)]
    parts += [f'  <link name="{TOOL_LINK}"/>', _fixed("tool_fixed", f"frame{robot.n}", TOOL_LINK, robot.tool),
              "</robot>\n"]
    return "\n".join(parts)


def dh_robot_model(robot: DhRobot, link_mass: float = 1.0) -> RobotModel:
    """RobotModel (base -> tool chain) of `robot` through its URDF; joint names joint1..joint{n}."""
    return RobotModel.from_urdf_string(dh_to_urdf(robot, link_mass), BASE_LINK, TOOL_LINK, name=robot.name)
