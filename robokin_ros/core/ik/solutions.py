"""Shared result types of the closed-form IK solvers (planar 2R, UR family, OPW arms) and how solutions are ranked.

Every closed-form solver produces a fixed number of *branches* (2R: 2, UR and OPW: 8), each a joint vector in
(-pi, pi] plus singularity flags. `rank` then turns them into the solutions a MoveJ planner wants:

* wrapping: each angle is moved by a multiple of 2 pi to the representative inside [lower, upper] closest to the
  seed (without a seed: closest to 0). A +/-2 pi joint (UR) thus never shows the same branch twice, and the seed's
  own branch comes back as the seed itself. A branch with a joint that has no representative inside its limits
  is dropped (counted in `IkResult.dropped_by_limits`).
* ranking: by the Euclidean distance to the seed [rad] (without a seed: to the zero configuration).

Singularity names (`IkSolution.singular`): "wrist" (the wrist axes line up, e.g. sin(q5) ~ 0 on a UR: one
wrist angle is free, the solver keeps the seed's value), "shoulder" (the wrist point on the base axis, in the
arm plane: q1 is free or its two branches merge), "elbow" (arm fully stretched or folded: the elbow branches
merge). A flag is raised within SINGULARITY_TOLERANCE [m | -] of the exact singularity.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import pinocchio as pin
from numba import njit

from robokin_ros.core.errors import InvalidInputError

SINGULARITY_NAMES = ("wrist", "shoulder", "elbow")     # bit 0, 1, 2 of the kernels' flag words
SINGULARITY_TOLERANCE = 1e-6
# [-] a law-of-cosines ratio up to 1 + this counts as reachable (rounding at full stretch): FK error <~ 1e-10 m
REACH_TOLERANCE = 1e-10
DUPLICATE_TOLERANCE = 1e-9      # [rad] branches closer than this (max abs) are one solution
TWO_PI = 2.0 * np.pi


class IkSolution(NamedTuple):
    """One joint configuration reaching the target pose."""

    positions: np.ndarray          # (n,) [rad]
    distance: float                # Euclidean distance to the seed (or to zero without a seed) [rad]
    fk_error: float                # max(position error [m], rotation error [rad]) by FK; nan when not verified
    singular: tuple[str, ...]      # names from SINGULARITY_NAMES
    branch: str                    # e.g. "shoulder=a wrist=b elbow=a": which root of each closed-form step


@dataclass(frozen=True)
class IkResult:
    """All solutions sorted by distance to the seed; `reason` says why there is none."""

    solutions: tuple[IkSolution, ...]
    reason: str = ""
    dropped_by_limits: int = 0

    @property
    def reachable(self) -> bool:
        return bool(self.solutions)


def flag_names(flags: int) -> tuple[str, ...]:
    """Singularity names of a kernel flag word."""
    return _FLAG_NAMES[flags & 7]


_FLAG_NAMES = tuple(tuple(name for bit, name in enumerate(SINGULARITY_NAMES) if word >> bit & 1) for word in range(8))


@njit(cache=True)
def _rigid_problem(T):
    """0: T is a finite rigid transform; 1: non-finite entries; 2: the rotation block is no rotation."""
    for i in range(4):
        for j in range(4):
            if not np.isfinite(T[i, j]):
                return 1
    worst = 0.0
    for i in range(3):
        for j in range(3):
            gram = T[0, i] * T[0, j] + T[1, i] * T[1, j] + T[2, i] * T[2, j]
            worst = max(worst, abs(gram - (1.0 if i == j else 0.0)))
    det = (T[0, 0] * (T[1, 1] * T[2, 2] - T[1, 2] * T[2, 1]) - T[0, 1] * (T[1, 0] * T[2, 2] - T[1, 2] * T[2, 0])
           + T[0, 2] * (T[1, 0] * T[2, 1] - T[1, 1] * T[2, 0]))
    return 2 if worst > 1e-9 or det < 0.0 else 0


def as_homogeneous(pose: pin.SE3 | npt.ArrayLike, name: str = "target pose") -> np.ndarray:
    """A pose (pin.SE3 or (4, 4) homogeneous matrix) as a checked (4, 4) float array."""
    T = pose.homogeneous if isinstance(pose, pin.SE3) else np.ascontiguousarray(pose, dtype=np.float64)
    if T.shape != (4, 4):
        raise InvalidInputError(f"{name} must be a pin.SE3 or a (4, 4) matrix, got shape {T.shape}")
    problem = _rigid_problem(T)
    if problem == 1:
        raise InvalidInputError(f"{name} has non-finite entries")
    if problem == 2:
        raise InvalidInputError(f"{name}: the rotation block is not a rotation matrix (R^T R != I or det < 0)")
    return T


def pose_error(reached: pin.SE3, target: pin.SE3) -> float:
    """max(position error [m], rotation angle of reached^-1 target [rad])."""
    return max(float(np.linalg.norm(reached.translation - target.translation)),
               float(np.linalg.norm(pin.log3(reached.rotation.T @ target.rotation))))


@njit(cache=True)
def wrap_rank(Q, valid, seed, lower, upper, distance):
    """Wrap each branch of Q (k, n) next to `seed` inside [lower, upper]; drop the unfit and the duplicates.

    Writes `distance` (k,); clears `valid` for branches outside the limits or duplicated. Returns (how many
    branches the limits dropped, the valid branches' indices nearest first).
    """
    k, n = Q.shape
    dropped = 0
    for i in range(k):
        if not valid[i]:
            continue
        for j in range(n):
            # the representative closest to the seed, then pushed inside the limits if a 2 pi shift can do it
            q = Q[i, j] + TWO_PI * np.round((seed[j] - Q[i, j]) / TWO_PI)
            while q > upper[j] + 1e-12 and q - TWO_PI >= lower[j] - 1e-12:
                q -= TWO_PI
            while q < lower[j] - 1e-12 and q + TWO_PI <= upper[j] + 1e-12:
                q += TWO_PI
            if q > upper[j] + 1e-12 or q < lower[j] - 1e-12:
                valid[i] = False
                dropped += 1
                break
            Q[i, j] = min(max(q, lower[j]), upper[j])
        if not valid[i]:
            continue
        distance[i] = np.sqrt(np.sum((Q[i] - seed) ** 2))
        for m in range(i):
            if valid[m] and np.max(np.abs(Q[m] - Q[i])) < DUPLICATE_TOLERANCE:
                valid[i] = False
                break
    order = np.argsort(np.where(valid, distance, np.inf), kind="mergesort")
    return dropped, order[:np.sum(valid)]


def rank(Q: np.ndarray, valid: np.ndarray, flags: np.ndarray, labels: tuple[str, ...], seed: np.ndarray | None,
         lower: np.ndarray, upper: np.ndarray, reason: str = "", fk=None, target: pin.SE3 | None = None) -> IkResult:
    """IkResult from kernel branches Q (k, n) [rad]; `fk(q) -> pin.SE3` verifies each solution when given."""
    seed_used = np.zeros(Q.shape[1]) if seed is None else np.asarray(seed, dtype=np.float64)
    distance = np.empty(Q.shape[0])
    had_branches = bool(valid.any())
    dropped, order = wrap_rank(Q, valid, seed_used, lower, upper, distance)
    return collect(Q, order, distance, flags, labels, dropped, had_branches, reason, fk, target)


def collect(Q: np.ndarray, order: np.ndarray, distance: np.ndarray, flags: np.ndarray, labels: tuple[str, ...],
            dropped: int, had_branches: bool, reason: str = "", fk=None, target: pin.SE3 | None = None) -> IkResult:
    """IkResult from ranked branches (`order` from `wrap_rank`)."""
    rows, dist, words, nan = list(Q), distance.tolist(), flags.tolist(), float("nan")
    solutions = tuple(IkSolution(rows[i], dist[i], pose_error(fk(rows[i]), target) if fk is not None else nan,
                                 _FLAG_NAMES[words[i] & 7], labels[i]) for i in order.tolist())
    if not solutions and had_branches:
        reason = reason or f"all {dropped} closed-form solutions violate the joint limits"
    return IkResult(solutions, reason, int(dropped))


def branch_labels(*steps: tuple[str, tuple[str, str]]) -> tuple[str, ...]:
    """Labels of the 2^len(steps) branches, first step slowest: ("shoulder", ("left", "right")), ..."""
    labels = [""]
    for name, (first, second) in steps:
        labels = [f"{label} {name}={root}".strip() for label in labels for root in (first, second)]
    return tuple(labels)
