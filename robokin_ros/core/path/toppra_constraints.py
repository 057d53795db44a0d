"""The extra toppra constraints of core/path/timing.py: the tool speed limit, and the joint acceleration bound
inside every grid interval (toppra bounds its grid points only). Each is a toppra LinearConstraint whose
docstring derives its rows."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from robokin_ros.core.path.chain import ChainArrays
from robokin_ros.core.path.ik_kernel import chain_pose_jacobian
from robokin_ros.core.path.toppra_import import import_toppra

constraint = import_toppra().constraint
X_CAP = 1e16             # toppra's own bound on sd^2 where nothing limits the speed (q' = 0)
_INNER = np.array([0.25, 0.5, 0.75])   # where the tool speed is also bounded inside a grid interval


class ToolSpeedLimit(NamedTuple):
    """Peak tool speeds a timing must respect, and the chain that turns joint velocities into them."""

    chain: ChainArrays                 # the tool's serial chain (`ChainFk.arrays()`), base frame
    linear: float = 0.0                # [m/s] speed of the tool frame origin, 0 = no limit
    angular: float = 0.0               # [rad/s] 0 = no limit


@njit(cache=True)
def _tool_speeds_into(Q, Qd, chain, out):
    n = Q.shape[1]
    R, p, J = np.empty((3, 3)), np.empty(3), np.empty((6, n))
    for k in range(Q.shape[0]):
        chain_pose_jacobian(Q[k], chain, R, p, J)
        for half in range(2):
            total = 0.0
            for i in range(3 * half, 3 * half + 3):
                v = 0.0
                for j in range(n):
                    v += J[i, j] * Qd[k, j]
                total += v * v
            out[k, half] = np.sqrt(total)


def tool_speeds(chain: ChainArrays, positions: np.ndarray, velocities: np.ndarray) -> np.ndarray:
    """(K, 2) |J_lin qd| [m/s] and |J_ang qd| [rad/s] of the tool for joint states (K, n) (compiled: a
    Python loop over Pinocchio Jacobians would cost ~3 us per control sample)."""
    out = np.empty((len(positions), 2))
    _tool_speeds_into(np.ascontiguousarray(positions, float), np.ascontiguousarray(velocities, float), chain, out)
    return out


def limit_vector(tool: ToolSpeedLimit) -> np.ndarray:
    """(2,) limits with inf for "no limit"."""
    return np.array([tool.linear if tool.linear > 0 else np.inf, tool.angular if tool.angular > 0 else np.inf])


class ToolSpeedBound(constraint.LinearConstraint):
    """|J q'(s)| sd <= limit at every grid point and at `_INNER` points inside every grid interval, for toppra.

    At grid point i the bound is on x = sd^2. Inside interval i, at s_i + f ds_i, sd^2 = x_i + 2 f ds_i u_i
    (sd^2 is linear in s there): a linear constraint in (u_i, x_i), m^2 (2 f ds_i u_i + x_i) <= 1 with
    m = |J q'| / limit at that point. Bounding the grid points only let the blended rectangle's tool
    overshoot by 1.2 % between them, which the uniform stretch then took off the whole path; bounding each
    interval by its largest |J q'| instead undershot a straight line's cruise by 0.8 %.
    """

    def __init__(self, tool: ToolSpeedLimit, dof: int) -> None:
        super().__init__()
        self.tool, self.dof = tool, dof
        self.identical = True                      # F and g are the same at every grid point

    def compute_constraint_params(self, path, gridpoints):
        N, k = len(gridpoints), len(_INNER)
        ds = np.diff(gridpoints)
        s = np.concatenate([gridpoints, (gridpoints[:-1, None] + ds[:, None] * _INNER).ravel()])
        per_s = (tool_speeds(self.tool.chain, path(s), path(s, 1)) / limit_vector(self.tool)).max(axis=1)
        inner2 = np.vstack([(per_s[N:] ** 2).reshape(N - 1, k), np.zeros((1, k))])     # (N, k), none at the end
        a = inner2 * (2.0 * np.r_[ds, 0.0][:, None] * _INNER)
        with np.errstate(divide="ignore"):
            xbound = np.column_stack([np.zeros(N), np.minimum(per_s[:N] ** -2.0, X_CAP)])
        return a, inner2, np.zeros((N, k)), np.eye(k), np.ones(k), None, xbound


class IntervalAccelBound(constraint.LinearConstraint):
    """|q''(s) sd^2 + q'(s) sdd| <= a_max inside every grid interval, not only at its ends, for toppra.

    The grid holds every spline knot, so on interval i (tau in [0, 1]) q'' is linear and sd^2 linear: each
    joint's acceleration is the quadratic p(tau) = (1 - tau) p0 + tau p1 - c tau (1 - tau), c = 2.5 q''' u ds^2.
    Its peak is at most max(p0, p1) + max(-c, 0) / 4 (its trough at least min(p0, p1) - max(c, 0) / 4), so with
    the ends already bounded (interpolation discretization), |p0 - c / 4| <= a and |p1 - c / 4| <= a bound the
    whole interval: 2n rows, linear in (u_i, x_i). Exact to rounding, unlike interior sample points (three per
    interval still left 1.002x / 1.006x) and cheaper than refining the grid (a second toppra run: ~6 ms). The
    bound is tight where the peak is mid-interval; on the bench rectangles it costs 0.4-0.7 % of the duration
    against toppra's unbounded solution, less than the uniform stretch that bounded the peaks before (1-5 %).
    """

    def __init__(self, a_lim: np.ndarray) -> None:
        super().__init__()
        self.a_lim, self.dof = a_lim, len(a_lim)
        self.identical = True                      # F and g are the same at every grid point

    def compute_constraint_params(self, path, gridpoints):
        N, n = len(gridpoints), self.dof
        ds = np.diff(gridpoints)[:, None]                                                  # (N - 1, 1)
        d1, d2 = path(gridpoints, 1) / self.a_lim, path(gridpoints, 2) / self.a_lim        # (N, n)
        c4 = 0.625 * (d2[1:] - d2[:-1]) * ds          # c / 4 per unit u, as q''' ds = q''(s1) - q''(s0)
        a, b = np.zeros((N, 2 * n)), np.zeros((N, 2 * n))                                  # last row: none
        a[:-1, :n], b[:-1, :n] = d1[:-1] - c4, d2[:-1]                                     # p0 - c / 4
        a[:-1, n:], b[:-1, n:] = d1[1:] + 2.0 * ds * d2[1:] - c4, d2[1:]                   # p1 - c / 4
        eye = np.eye(2 * n)
        return a, b, np.zeros((N, 2 * n)), np.vstack([eye, -eye]), np.ones(4 * n), None, None
