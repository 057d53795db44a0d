"""Planar 2R arm: both IK branches, reach clamping, the Jacobian and the manipulability ellipse.

Conventions: the base joint is at the origin of the x-y plane; q1 [rad] is link 1's angle from +x, q2 [rad] is
link 2's angle from link 1 (counter-clockwise positive); zero position: both links along +x.
  FK: x = L1 cos q1 + L2 cos(q1 + q2),  y = L1 sin q1 + L2 sin(q1 + q2).
Elbow "up" is q2 < 0 and elbow "down" is q2 > 0: with q2 < 0 the elbow lies to the left of the base -> target
ray (above it when reaching along +x), whatever the target's direction. Singular (q2 = 0 or pi) both are one.
The reachable set is the annulus |L1 - L2| <= r <= L1 + L2; a target outside it is reported (`reachable`
False, `outside` = its distance to the annulus [m]) and clamped to the nearest reachable point on the same ray.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from robokin_ros.core.errors import ConfigError
from robokin_ros.core.ik.solutions import (SINGULARITY_TOLERANCE, IkResult, IkSolution, branch_labels, rank)
from robokin_ros.core.validation import check_vector, is_real_number

LABELS = branch_labels(("elbow", ("up", "down")))


class Planar2rIk(NamedTuple):
    """Both branches for one target; `target` is the point actually solved for (clamped when unreachable)."""

    elbow_up: np.ndarray       # (2,) [rad], q2 <= 0
    elbow_down: np.ndarray     # (2,) [rad], q2 >= 0
    reachable: bool
    outside: float             # distance of the requested target to the annulus [m]; 0 when reachable
    target: np.ndarray         # (2,) [m]
    singular: bool             # arm stretched or folded (sin q2 ~ 0): the two branches coincide


class Ellipse(NamedTuple):
    """Velocity manipulability ellipse {J qdot : |qdot| <= 1}: principal axes and semi-axis lengths."""

    axes: np.ndarray           # (2, 2) unit axes as columns, major first
    lengths: np.ndarray        # (2,) singular values of J [m/rad], major first
    yoshikawa: float           # sqrt(det(J J^T)) = |det J| = L1 L2 |sin q2| [m^2/rad^2]


@dataclass(frozen=True)
class Planar2R:
    """A planar 2R arm with link lengths l1, l2 [m]."""

    l1: float
    l2: float

    def __post_init__(self) -> None:
        bad = [f"{n}={v!r} must be a finite length > 0 [m]" for n, v in (("l1", self.l1), ("l2", self.l2))
               if not (is_real_number(v) and math.isfinite(v) and v > 0)]
        if bad:
            raise ConfigError(bad, "planar 2R arm")

    def fk(self, q: npt.ArrayLike) -> np.ndarray:
        """Tool point (x, y) [m] of q = (q1, q2) [rad]."""
        q1, q2 = check_vector("q", q, 2)
        return np.array([self.l1 * math.cos(q1) + self.l2 * math.cos(q1 + q2),
                         self.l1 * math.sin(q1) + self.l2 * math.sin(q1 + q2)])

    def ik(self, target: npt.ArrayLike) -> Planar2rIk:
        """Both elbow branches reaching `target` (x, y) [m], or the clamped target's when out of reach."""
        x, y = check_vector("target", target, 2)
        r = math.hypot(x, y)
        r_min, r_max = abs(self.l1 - self.l2), self.l1 + self.l2
        r_used = min(max(r, r_min), r_max)
        outside = max(r - r_max, r_min - r, 0.0)
        if r_used != r:
            # same ray; from the origin (r = 0, l1 != l2) every direction is as near: take +x
            ux, uy = (x / r, y / r) if r > 0 else (1.0, 0.0)
            x, y = r_used * ux, r_used * uy
        cos2 = min(1.0, max(-1.0, (r_used ** 2 - self.l1 ** 2 - self.l2 ** 2) / (2.0 * self.l1 * self.l2)))
        sin2 = math.sqrt(1.0 - cos2 * cos2)
        branches = []
        for s2 in (-sin2, sin2):                                  # elbow up (q2 <= 0), then down
            q2 = math.atan2(s2, cos2)
            q1 = math.atan2(y, x) - math.atan2(self.l2 * s2, self.l1 + self.l2 * cos2)
            branches.append(np.array([math.atan2(math.sin(q1), math.cos(q1)), q2]))
        return Planar2rIk(branches[0], branches[1], outside == 0.0, outside, np.array([x, y]),
                          sin2 < SINGULARITY_TOLERANCE)

    def jacobian(self, q: npt.ArrayLike) -> np.ndarray:
        """d(x, y)/d(q1, q2), (2, 2) [m/rad]."""
        q1, q2 = check_vector("q", q, 2)
        s1, c1, s12, c12 = math.sin(q1), math.cos(q1), math.sin(q1 + q2), math.cos(q1 + q2)
        return np.array([[-self.l1 * s1 - self.l2 * s12, -self.l2 * s12],
                         [self.l1 * c1 + self.l2 * c12, self.l2 * c12]])

    def manipulability(self, q: npt.ArrayLike) -> Ellipse:
        """The velocity ellipse at q from the SVD of J (Yoshikawa 1985)."""
        U, sigma, _ = np.linalg.svd(self.jacobian(q))
        return Ellipse(U, sigma, float(sigma[0] * sigma[1]))

    def solve(self, pose, seed=None, verify: bool = True) -> IkResult:
        """Both branches as an IkResult (the interface of the UR and OPW solvers); pose = (x, y) [m].

        Unreachable targets give no solution and the reason (use `ik` for the clamped branches).
        """
        branches = self.ik(pose)
        if not branches.reachable:
            return IkResult((), f"target is {branches.outside:.6g} m outside the reachable annulus "
                                f"{abs(self.l1 - self.l2):.6g} m <= r <= {self.l1 + self.l2:.6g} m")
        if seed is not None:
            seed = check_vector("seed", seed, 2)
        Q = np.array([branches.elbow_up, branches.elbow_down])
        flags = np.full(2, 4 if branches.singular else 0, dtype=np.int64)
        result = rank(Q, np.ones(2, dtype=np.bool_), flags, LABELS, seed, np.full(2, -np.pi), np.full(2, np.pi))
        if not verify:
            return result
        target = branches.target
        return IkResult(tuple(IkSolution(s.positions, s.distance, float(np.linalg.norm(self.fk(s.positions) - target)),
                                         s.singular, s.branch) for s in result.solutions), result.reason,
                        result.dropped_by_limits)
