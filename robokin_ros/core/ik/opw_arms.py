"""OPW parameter sets of common industrial arms, for `robokin ik --robot kr6_r700 | irb2400` (opw.py solves them).

Sources of the numbers (facts, not code):
* KUKA KR6 R700 sixx: ROS-Industrial `kuka_experimental`, kuka_kr6_support/config/opw_kinematics_kr6r700sixx.yaml
  (a1 0.025, a2 -0.035, b 0, c1 0.400, c2 0.315, c3 0.365, c4 0.080 m; offsets [0, -pi/2, 0, 0, 0, 0]; signs
  [-1, 1, 1, -1, 1, -1]); joint limits from the same package's urdf/kr6r700sixx_macro.xacro.
* ABB IRB 2400/10: `opw_kinematics` (Jmeyer1292), opw_parameters_examples.h `makeIrb2400_10`, the example of
  Brandstoetter, Angerer, Hofbaur (2014) (a1 0.100, a2 -0.135, b 0, c1 0.615, c2 0.705, c3 0.755, c4 0.085 m;
  offsets [0, 0, -pi/2, 0, 0, 0]); joint limits from ROS-Industrial `abb`, abb_irb2400_support/urdf/irb2400_macro.xacro.

Offsets: opw_kinematics (and the ROS-Industrial YAML files written for it) compute the OPW angle as
sign * q - offset; opw.py uses sign * q + offset, so the offsets below are theirs negated. Checked: the OPW
forward kinematics equals the FK of those URDFs' joint origins and axes (test_ik_opw_arms.py: 1e-15 m; the
pose is the flange with z out of it, ROS-Industrial's tool0 on the KR6; the IRB 2400 URDF's tool0 has x out of the
flange instead), and the reach of the wrist centre within the joint limits equals the datasheets' (706.7 mm,
1.55 m).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from robokin_ros.core.errors import ModelError
from robokin_ros.core.ik.opw import OpwGeometry


@dataclass(frozen=True)
class OpwArm:
    """An industrial arm's OPW geometry with its name, the published source and its datasheet reach."""

    name: str
    title: str
    geometry: OpwGeometry
    source: str
    datasheet_reach: float      # [m] the maker's maximum reach (wrist centre, as both makers state it)
    joint_names: tuple[str, ...]     # as the ROS-Industrial URDF names them


def _limits(degrees: tuple[tuple[float, float], ...]) -> tuple[np.ndarray, np.ndarray]:
    lower, upper = zip(*degrees)
    return np.radians(lower), np.radians(upper)


def _kr6_r700() -> OpwArm:
    lower, upper = _limits(((-170, 170), (-190, 45), (-120, 156), (-185, 185), (-120, 120), (-350, 350)))
    geometry = OpwGeometry(a1=0.025, a2=-0.035, b=0.0, c1=0.400, c2=0.315, c3=0.365, c4=0.080,
                           offsets=(0.0, math.pi / 2, 0.0, 0.0, 0.0, 0.0), signs=(-1, 1, 1, -1, 1, -1),
                           lower=lower, upper=upper)
    return OpwArm("kr6_r700", "KUKA KR6 R700 sixx", geometry,
                  "ROS-Industrial kuka_experimental kuka_kr6_support (opw_kinematics_kr6r700sixx.yaml, URDF limits)",
                  0.7067, tuple(f"joint_a{i}" for i in range(1, 7)))


def _irb2400() -> OpwArm:
    lower, upper = _limits(((-180, 180), (-100, 110), (-60, 65), (-200, 200), (-120, 120), (-400, 400)))
    geometry = OpwGeometry(a1=0.100, a2=-0.135, b=0.0, c1=0.615, c2=0.705, c3=0.755, c4=0.085,
                           offsets=(0.0, 0.0, math.pi / 2, 0.0, 0.0, 0.0), lower=lower, upper=upper)
    return OpwArm("irb2400", "ABB IRB 2400/10", geometry,
                  "opw_kinematics makeIrb2400_10 (Brandstoetter et al. 2014); limits: ROS-Industrial "
                  "abb_irb2400_support",
                  1.55, tuple(f"joint_{i}" for i in range(1, 7)))


OPW_ARMS = {"kr6_r700": _kr6_r700, "irb2400": _irb2400}


def opw_arm(name: str) -> OpwArm:
    """The OPW arm of that name.

    Raises:
        ModelError: an unknown name, listing the known ones.
    """
    try:
        return OPW_ARMS[name]()
    except KeyError:
        raise ModelError(f"no OPW arm named '{name}'; known: {sorted(OPW_ARMS)}") from None
