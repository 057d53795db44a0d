"""Textbook DH tables: a planar 2R arm, a SCARA (RRPR) and the UR5 from Universal Robots' published table.

UR5 (standard DH, Universal Robots' "DH parameters for calculations of kinematics and dynamics"):
d1 0.089159, a2 -0.425, a3 -0.39225, d4 0.10915, d5 0.09465, d6 0.0823 [m], alpha (pi/2, 0, 0, pi/2, -pi/2, 0),
theta offsets all 0.

Base and tool transforms, found by comparing the zero-configuration frames of the DH chain with the
example-robot-data / ROS-Industrial `ur5.urdf` (`RobotModel.from_name("ur5")`, base_link -> tool0):

* base = Rz(pi): at q = 0 the DH tool sits at x = -0.81725 m, the URDF's tool0 at x = +0.81725 m, with the same
  z and with x and y flipped. ROS-Industrial's `base_link` faces the other way than the controller's base frame
  (the URDF's own `base` link is `base_link` * Rz(-pi), the fixed joint `base_link-base_fixed_joint`), and DH
  frame 0 is that controller `base` frame. So base_link_T_frame0 = Rz(pi).
* tool = identity: DH frame 6 is the tool flange, which is exactly the URDF's `tool0`.

Geometry check against the URDF: the URDF splits d4 into three y offsets along the arm, 0.13585 (shoulder)
- 0.1197 (elbow) + 0.093 (wrist 2) = 0.10915 m = d4, and its other lengths equal the datasheet's, so the
datasheet values are used unchanged. The only difference is the URDF's rounded pi/2 (1.57079632679, 4.9e-12
rad short), which moves the tool by about 1e-11 m: far inside the 1e-9 m agreement the tests check.
Joint limits and velocity/effort limits are copied from the same URDF.
"""
from __future__ import annotations

import math

import numpy as np

from robokin_ros.core.classroom.dh import DhRobot, DhRow
from robokin_ros.core.classroom.transforms import rot_z

#: UR5 datasheet lengths [m]
UR5_D = (0.089159, 0.0, 0.0, 0.10915, 0.09465, 0.0823)
UR5_A = (0.0, -0.425, -0.39225, 0.0, 0.0, 0.0)
UR5_ALPHA = (math.pi / 2, 0.0, 0.0, math.pi / 2, -math.pi / 2, 0.0)
# URDF limits: (lower = -upper) [rad], velocity [rad/s], effort [N m]
UR5_LIMITS = ((2 * math.pi, 3.15, 150.0), (2 * math.pi, 3.15, 150.0), (math.pi, 3.15, 150.0),
              (2 * math.pi, 3.2, 28.0), (2 * math.pi, 3.2, 28.0), (2 * math.pi, 3.2, 28.0))


def planar_2r(l1: float = 1.0, l2: float = 1.0) -> DhRobot:
    """Two revolute joints about parallel z axes, links l1, l2 [m] along x: x = l1 c1 + l2 c12, y = l1 s1 + l2 s12."""
    rows = (DhRow(a=l1, alpha=0.0, d=0.0), DhRow(a=l2, alpha=0.0, d=0.0))
    return DhRobot(rows, "standard", name="planar_2r")


def scara(a1: float = 0.325, a2: float = 0.275, d1: float = 0.4, d4: float = 0.05,
          stroke: float = 0.2) -> DhRobot:
    """SCARA RRPR (Spong, Hutchinson, Vidyasagar, Table 3.3, with a base height d1) [m].

    Tool position: x = a1 c1 + a2 c12, y = a1 s1 + a2 s12, z = d1 - q3 - d4 (the tool points down: alpha2 = pi);
    q3 in [0, stroke] is the quill's travel.
    """
    rows = (DhRow(a=a1, alpha=0.0, d=d1, lower=-2.5, upper=2.5),
            DhRow(a=a2, alpha=math.pi, d=0.0, lower=-2.5, upper=2.5),
            DhRow(a=0.0, alpha=0.0, d=0.0, joint="prismatic", lower=0.0, upper=stroke, velocity=0.5),
            DhRow(a=0.0, alpha=0.0, d=d4, lower=-math.pi, upper=math.pi))
    return DhRobot(rows, "standard", name="scara")


def ur5() -> DhRobot:
    """The UR5 of Universal Robots' DH table, framed like `RobotModel.from_name("ur5")` (see the module doc)."""
    rows = tuple(DhRow(a=a, alpha=alpha, d=d, lower=-lim, upper=lim, velocity=vel, effort=eff)
                 for a, alpha, d, (lim, vel, eff) in zip(UR5_A, UR5_ALPHA, UR5_D, UR5_LIMITS))
    return DhRobot(rows, "standard", base=rot_z(math.pi), tool=np.eye(4), name="ur5_dh")


EXAMPLES = {"2r": planar_2r, "scara": scara, "ur5": ur5}
