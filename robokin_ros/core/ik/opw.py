"""Closed-form IK of 6R industrial arms with an ortho-parallel base and a spherical wrist (OPW): 8 solutions.

Parameterisation (Brandstoetter, Angerer, Hofbaur, "An analytical solution of the inverse kinematics problem of
industrial serial manipulators with an ortho-parallel basis and a spherical wrist", 2014), lengths [m]:
  c1  height of axis 2 above the base          a1  forward offset of axis 2 from axis 1
  c2  upper arm (axis 2 -> axis 3)             a2  elbow offset (forearm sideways step, perpendicular to c3)
  c3  forearm (axis 3 -> wrist centre)         b   lateral offset (along axis 2)
  c4  wrist centre -> flange
OPW zero position: base z up, upper arm vertical (c2 along z), forearm continuing up (wrist centre at
(a1 + a2, b, c1 + c2 + c3)), flange z up. Axis 1 is z; axes 2 and 3 are y of the rotated frames; the wrist is
z-y-z: base_R_flange = Rz(t1) Ry(t2 + t3) Rz(t4) Ry(t5) Rz(t6), flange = wrist centre + c4 z_flange.
Joint convention: OPW angle t_i = sign_i q_i + offset_i, q_i the robot's joint position (KUKA KR6 R700 sixx:
signs (-1, 1, 1, -1, 1, -1), offsets (0, pi/2, 0, 0, 0, 0); opw_kinematics and ROS-Industrial's opw YAML files
subtract their offsets, so theirs carry the opposite sign: see opw_arms.py for published arms).

Branches: shoulder front/back (t1), elbow a/b (the law of cosines for t3), wrist a/b (sign of t5). Singular
cases (solutions.py names): wrist (sin t5 ~ 0: t4 keeps the seed's value, t6 takes the rest), shoulder (wrist
centre on axis 1, when b = 0), elbow (upper arm and forearm aligned).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import ConfigError, InvalidInputError
from robokin_ros.core.ik.solutions import (REACH_TOLERANCE, SINGULARITY_TOLERANCE, IkResult, as_homogeneous,
                                           branch_labels, rank)

LABELS = branch_labels(("shoulder", ("front", "back")), ("elbow", ("a", "b")), ("wrist", ("a", "b")))


def _rz(t: float) -> np.ndarray:
    c, s = math.cos(t), math.sin(t)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _ry(t: float) -> np.ndarray:
    c, s = math.cos(t), math.sin(t)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


@dataclass(frozen=True, eq=False)     # array fields: identity comparison, not element-wise
class OpwGeometry:
    """OPW parameters [m], joint signs and offsets [rad], joint limits [rad], optional FK for verification."""

    a1: float
    a2: float
    b: float
    c1: float
    c2: float
    c3: float
    c4: float
    offsets: tuple[float, ...] = (0.0,) * 6
    signs: tuple[int, ...] = (1,) * 6
    lower: np.ndarray = field(default_factory=lambda: np.full(6, -np.inf))
    upper: np.ndarray = field(default_factory=lambda: np.full(6, np.inf))
    verify_fk: object = None      # q -> pin.SE3, e.g. RobotModel.fk of the arm's URDF; else the OPW FK below

    def __post_init__(self) -> None:
        problems = [f"{name}={getattr(self, name)!r} must be a finite number"
                    for name in ("a1", "a2", "b", "c1", "c2", "c3", "c4") if not math.isfinite(getattr(self, name))]
        if self.c2 <= 0.0 or math.hypot(self.a2, self.c3) <= 0.0:
            problems.append(f"c2={self.c2} must be > 0 and (a2, c3)=({self.a2}, {self.c3}) not both 0")
        if len(self.offsets) != 6 or len(self.signs) != 6 or any(s not in (1, -1) for s in self.signs):
            problems.append(f"offsets {self.offsets} need 6 entries and signs {self.signs} 6 entries of +-1")
        if np.shape(self.lower) != (6,) or np.shape(self.upper) != (6,):
            problems.append("lower and upper limits need 6 entries each")
        if problems:
            raise ConfigError(problems, "OPW geometry")

    def to_opw(self, q: np.ndarray) -> np.ndarray:
        """Joint positions -> OPW angles t = sign q + offset [rad]."""
        return np.asarray(self.signs, float) * q + np.asarray(self.offsets, float)

    def from_opw(self, t: np.ndarray) -> np.ndarray:
        """OPW angles -> joint positions [rad]."""
        return np.asarray(self.signs, float) * (t - np.asarray(self.offsets, float))

    def fk(self, q) -> pin.SE3:
        """base_T_flange of joint positions q (the OPW model's own forward kinematics)."""
        t = self.to_opw(np.asarray(q, float))
        psi3, k = math.atan2(self.a2, self.c3), math.hypot(self.a2, self.c3)
        x1 = self.c2 * math.sin(t[1]) + k * math.sin(t[1] + t[2] + psi3) + self.a1
        z1 = self.c2 * math.cos(t[1]) + k * math.cos(t[1] + t[2] + psi3) + self.c1
        centre = _rz(t[0]) @ np.array([x1, self.b, z1])
        R = _rz(t[0]) @ _ry(t[1] + t[2]) @ _rz(t[3]) @ _ry(t[4]) @ _rz(t[5])
        return pin.SE3(R, centre + self.c4 * R[:, 2])

    def solve(self, pose, seed=None, verify: bool = True) -> IkResult:
        """All solutions for `pose` (base_T_flange); see `solve_opw`."""
        return solve_opw(self, pose, seed, verify)


def _arm(g: OpwGeometry, centre: np.ndarray) -> list[tuple[float, float, float, int] | None]:
    """(t1, t2, t3, flags) of the 4 arm branches (None when out of reach); [] when the shoulder cannot turn."""
    cx, cy, cz = centre
    radial2 = cx * cx + cy * cy - g.b * g.b
    if radial2 < -SINGULARITY_TOLERANCE ** 2:
        return []
    radial = math.sqrt(max(radial2, 0.0))
    shoulder = 2 if radial < SINGULARITY_TOLERANCE else 0
    k, psi3 = math.hypot(g.a2, g.c3), math.atan2(g.a2, g.c3)
    branches: list[tuple[float, float, float, int] | None] = []
    for cx1 in (radial, -radial):                                   # front, back: the arm plane's two sides
        t1 = math.atan2(cy, cx) - math.atan2(g.b, cx1)
        X, Z = cx1 - g.a1, cz - g.c1
        cos_phi = (X * X + Z * Z - g.c2 * g.c2 - k * k) / (2.0 * g.c2 * k)
        if abs(cos_phi) > 1.0 + REACH_TOLERANCE:
            branches += [None, None]
            continue
        cos_phi = min(1.0, max(-1.0, cos_phi))
        sin_abs = math.sqrt(1.0 - cos_phi * cos_phi)
        for sin_phi in (sin_abs, -sin_abs):
            # phi: angle of the forearm (to the wrist centre) from the upper arm, so t3 = phi - psi3
            t2 = math.atan2(X, Z) - math.atan2(k * sin_phi, g.c2 + k * cos_phi)
            t3 = math.atan2(sin_phi, cos_phi) - psi3
            branches.append((t1, t2, t3, shoulder | (4 if sin_abs < SINGULARITY_TOLERANCE else 0)))
    return branches


def _wrist(R_ce: np.ndarray, t4_seed: float) -> list[tuple[float, float, float, int]]:
    """Both z-y-z decompositions R_ce = Rz(t4) Ry(t5) Rz(t6); t4 = seed's at a wrist singularity."""
    m = min(1.0, max(-1.0, R_ce[2, 2]))
    sin5 = math.hypot(R_ce[0, 2], R_ce[1, 2])     # not sqrt(1 - m^2): that has 1e-8 noise where t5 = 0
    if sin5 < 1e-12:                       # axes 4 and 6 aligned: only t4 + t6 (or t6 - t4) is defined
        t5 = 0.0 if m > 0 else math.pi
        rest = math.atan2(R_ce[1, 0], R_ce[0, 0]) if m > 0 else math.atan2(R_ce[1, 0], -R_ce[0, 0])
        t6 = rest - t4_seed if m > 0 else rest + t4_seed
        return [(t4_seed, t5, t6, 1), (t4_seed, t5, t6, 1)]
    t4 = math.atan2(R_ce[1, 2], R_ce[0, 2])
    t6 = math.atan2(R_ce[2, 1], -R_ce[2, 0])
    flag = 1 if sin5 < SINGULARITY_TOLERANCE else 0
    t5 = math.atan2(sin5, m)
    return [(t4, t5, t6, flag), (t4 + math.pi, -t5, t6 + math.pi, flag)]


def solve_opw(g: OpwGeometry, pose, seed=None, verify: bool = True) -> IkResult:
    """All (up to 8) joint solutions reaching `pose` [base_T_flange], sorted by distance to `seed` [rad].

    Never raises on an unreachable or singular pose. `verify`: FK error of each solution by `g.verify_fk`
    (independent, e.g. Pinocchio on the URDF) or else by the OPW FK.
    """
    T = as_homogeneous(pose)
    if seed is not None:
        seed = np.asarray(seed, dtype=np.float64)
        if seed.shape != (6,) or not np.isfinite(seed).all():
            raise InvalidInputError(f"seed must be 6 finite joint positions [rad], got {seed.tolist()}")
    R = T[:3, :3]
    centre = T[:3, 3] - g.c4 * R[:, 2]
    t4_seed = float(g.to_opw(seed)[3]) if seed is not None else 0.0
    Q, valid, flags = np.zeros((8, 6)), np.zeros(8, dtype=np.bool_), np.zeros(8, dtype=np.int64)
    arm = _arm(g, centre)
    for i, branch in enumerate(arm):
        if branch is None:
            continue
        t1, t2, t3, arm_flags = branch
        R_ce = (_rz(t1) @ _ry(t2 + t3)).T @ R
        for j, (t4, t5, t6, wrist_flags) in enumerate(_wrist(R_ce, t4_seed)):
            Q[2 * i + j] = g.from_opw(np.array([t1, t2, t3, t4, t5, t6]))
            valid[2 * i + j], flags[2 * i + j] = True, arm_flags | wrist_flags
    Q = np.arctan2(np.sin(Q), np.cos(Q))                          # principal values; rank wraps to the seed
    reason = ("the wrist centre is closer to axis 1 than the lateral offset b" if not arm else
              "the wrist centre is out of the arm's reach (too far, or too close to the shoulder)")
    fk = (g.verify_fk or g.fk) if verify else None
    return rank(Q, valid, flags, LABELS, seed, np.asarray(g.lower, float), np.asarray(g.upper, float),
                reason if not valid.any() else "", fk, pin.SE3(T) if fk is not None else None)
