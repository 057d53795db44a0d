"""A robot described by a Denavit-Hartenberg table, and its forward kinematics frame by frame.

Two conventions, both products of four elementary transforms per row (the joint variable is theta for a
revolute joint, d for a prismatic one):

* "standard" (Denavit-Hartenberg 1955, Spong, Siciliano): i-1_T_i = Rz(theta) Tz(d) Tx(a) Rx(alpha);
  joint i moves about z_{i-1}, the frame at the *end* of link i.
* "modified" (Craig): i-1_T_i = Rx(alpha) Tx(a) Rz(theta) Tz(d); joint i moves about z_i.

theta = offset + q_i for a revolute joint (d fixed), d = d + q_i for a prismatic one (theta = offset).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from robokin_ros.core.classroom.transforms import rot_x, rot_z, trans
from robokin_ros.core.errors import ConfigError
from robokin_ros.core.validation import check_vector, is_real_number

Array = npt.NDArray[np.float64]
CONVENTIONS = ("standard", "modified")
JOINT_TYPES = ("revolute", "prismatic")


@dataclass(frozen=True)
class DhRow:
    """One row of a DH table: link geometry [m, rad] and the joint it carries.

    `lower`/`upper` bound the joint variable q_i [rad | m] (+/-inf: a continuous revolute joint);
    `velocity` [rad/s | m/s] and `effort` [N m | N] go to the URDF (effort 0 = unknown).
    """

    a: float
    alpha: float
    d: float
    offset: float = 0.0
    joint: str = "revolute"
    lower: float = -math.pi
    upper: float = math.pi
    velocity: float = 1.0
    effort: float = 0.0

    def problems(self, row: int) -> list[str]:
        """Every invalid field of this row, each sentence naming the row and the field."""
        out = []
        for name in ("a", "alpha", "d", "offset", "velocity", "effort"):
            value = getattr(self, name)
            if not (is_real_number(value) and math.isfinite(value)):
                out.append(f"row {row}: {name} must be a finite number, got {value!r}")
        if self.joint not in JOINT_TYPES:
            out.append(f"row {row}: type must be one of {list(JOINT_TYPES)}, got {self.joint!r}")
        for name in ("lower", "upper"):
            value = getattr(self, name)
            if not is_real_number(value) or math.isnan(value):
                out.append(f"row {row}: {name} must be a number (+/-inf allowed), got {value!r}")
        if not out:
            if self.lower > self.upper:
                out.append(f"row {row}: lower {self.lower} is above upper {self.upper}")
            if self.joint == "prismatic" and not (math.isfinite(self.lower) and math.isfinite(self.upper)):
                out.append(f"row {row}: a prismatic joint needs finite lower and upper limits [m]")
            if self.velocity <= 0.0 or self.effort < 0.0:
                out.append(f"row {row}: velocity must be > 0 and effort >= 0, got {self.velocity}, {self.effort}")
        return out

    def transform(self, q: float, convention: str) -> Array:
        """i-1_T_i (4, 4) at joint value q [rad | m]."""
        theta = self.offset + (q if self.joint == "revolute" else 0.0)
        d = self.d + (q if self.joint == "prismatic" else 0.0)
        if convention == "standard":
            return rot_z(theta) @ trans(0.0, 0.0, d) @ trans(self.a, 0.0, 0.0) @ rot_x(self.alpha)
        return rot_x(self.alpha) @ trans(self.a, 0.0, 0.0) @ rot_z(theta) @ trans(0.0, 0.0, d)


def _check_transform(name: str, T: npt.ArrayLike) -> list[str]:
    M = np.asarray(T, dtype=float)
    if M.shape != (4, 4) or not np.isfinite(M).all():
        return [f"{name} must be a finite (4, 4) transform, got shape {M.shape}"]
    R = M[:3, :3]
    if not np.allclose(R.T @ R, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0 or \
            not np.allclose(M[3], [0.0, 0.0, 0.0, 1.0]):
        return [f"{name} is not a rigid transform (rotation block not orthonormal or bottom row not 0 0 0 1)"]
    return []


@dataclass(frozen=True, eq=False)    # eq on numpy fields would raise; compare rows and transforms
class DhRobot:
    """A serial arm from a DH table, with fixed `base` (base_T_frame0) and `tool` (frame_n_T_tool) transforms.

    Raises:
        ConfigError: listing every invalid row field (by row index, from 0), convention or transform.
    """

    rows: tuple[DhRow, ...]
    convention: str = "standard"
    base: Array = field(default_factory=lambda: np.eye(4))
    tool: Array = field(default_factory=lambda: np.eye(4))
    name: str = "dh_robot"

    def __post_init__(self) -> None:
        problems = [] if self.rows else ["the table has no rows"]
        if self.convention not in CONVENTIONS:
            problems.append(f"convention must be one of {list(CONVENTIONS)}, got {self.convention!r}")
        for i, row in enumerate(self.rows):
            problems += row.problems(i) if isinstance(row, DhRow) else [f"row {i}: not a DhRow: {row!r}"]
        problems += _check_transform("base", self.base) + _check_transform("tool", self.tool)
        if problems:
            raise ConfigError(problems, "DH table")
        object.__setattr__(self, "rows", tuple(self.rows))
        object.__setattr__(self, "base", np.array(self.base, dtype=float))
        object.__setattr__(self, "tool", np.array(self.tool, dtype=float))

    @property
    def n(self) -> int:
        """Number of joints."""
        return len(self.rows)

    @property
    def lower(self) -> Array:
        """Lower joint limits (n,) [rad | m]."""
        return np.array([r.lower for r in self.rows])

    @property
    def upper(self) -> Array:
        """Upper joint limits (n,) [rad | m]."""
        return np.array([r.upper for r in self.rows])

    def frame_names(self) -> tuple[str, ...]:
        """Names of the frames `fk` returns: frame0 ... frame{n}, tool."""
        return tuple(f"frame{i}" for i in range(self.n + 1)) + ("tool",)

    def fk(self, q: npt.ArrayLike) -> Array:
        """Every DH frame in the base frame: (n + 2, 4, 4) = [base_T_frame0, base_T_frame1, ..., base_T_tool].

        Args:
            q: (n,) joint values [rad | m]; limits are not enforced (FK is defined everywhere).
        """
        q = check_vector("q", q, self.n)
        frames = np.empty((self.n + 2, 4, 4))
        frames[0] = self.base
        for i, (row, qi) in enumerate(zip(self.rows, q)):
            frames[i + 1] = frames[i] @ row.transform(qi, self.convention)
        frames[-1] = frames[-2] @ self.tool
        return frames

    def tool_pose(self, q: npt.ArrayLike) -> Array:
        """base_T_tool (4, 4) at q."""
        return self.fk(q)[-1]

    def random_q(self, rng: np.random.Generator) -> Array:
        """Uniform random joint values inside the limits (+/-pi where a revolute joint has none)."""
        lo = np.where(np.isfinite(self.lower), self.lower, -np.pi)
        hi = np.where(np.isfinite(self.upper), self.upper, np.pi)
        return rng.uniform(lo, hi)
