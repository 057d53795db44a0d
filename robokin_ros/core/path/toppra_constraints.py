"""toppra as the timing uses it: imported without matplotlib, and the extra constraints of core/path/timing.py.

Import: toppra imports matplotlib.pyplot when it is imported (`toppra.algorithm` unconditionally), for plotting
helpers robokin never calls. That cost every path-planning process ~28 MB of resident memory and 0.3-0.8 s of
start-up (bench/node_footprint.py). `import_toppra` imports toppra while `matplotlib` and `matplotlib.pyplot` are
stand-ins that import the real pyplot on their first attribute access, so toppra's plotting still works if
someone calls it, and takes the stand-ins out of `sys.modules` again right after: whoever imports matplotlib later
gets the real package.

Constraints: the tool speed limit, the joint acceleration bound inside every grid interval (toppra bounds its grid
points only), and joint limits that change along the path (a `LimitSchedule`). Each is a toppra LinearConstraint
whose docstring derives its rows.
"""
from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable
from typing import NamedTuple, Protocol

import numpy as np
from numba import njit

from robokin_ros.core.path.chain import ChainArrays, chain_pose_jacobian

_STAND_INS = ("matplotlib", "matplotlib.pyplot")


class _DeferredModule(types.ModuleType):
    """Holds the place of a module; the first attribute read imports the real one and reads from it."""

    def __getattr__(self, attribute: str):
        # introspection (copy, pickle, inspect) must not load it; nor can anything while it stands in
        if attribute.startswith("__") or sys.modules.get(self.__name__) is self:
            raise AttributeError(f"module {self.__name__!r} has no attribute {attribute!r} (not loaded yet)")
        return getattr(importlib.import_module(self.__name__), attribute)


def import_toppra() -> types.ModuleType:
    """toppra, with `toppra.algorithm` and `toppra.constraint`; matplotlib only if it was imported before."""
    stand_ins: dict[str, _DeferredModule] = {}
    if "toppra" not in sys.modules and "matplotlib.pyplot" not in sys.modules:
        stand_ins = {name: _DeferredModule(name) for name in _STAND_INS if name not in sys.modules}
        if "matplotlib" in stand_ins:
            # a package holding its submodule, as `import matplotlib.pyplot as plt` reads it
            stand_ins["matplotlib"].__path__ = []
            stand_ins["matplotlib"].pyplot = stand_ins["matplotlib.pyplot"]
        sys.modules.update(stand_ins)
    try:
        import toppra
        import toppra.algorithm
        import toppra.constraint  # noqa: F401 - an attribute of toppra from here on
    finally:
        for name, stand_in in stand_ins.items():
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]
    _answer_solvers_once(toppra)
    return toppra


def _answer_solvers_once(toppra: types.ModuleType) -> None:
    """Every toppra instance asks `toppra.solverwrapper.available_solvers` which optional solver packages are
    installed, and that searches the import path each time (~0.1 ms, a tenth of a small section's toppra run, paid
    by every section of a path); the answer cannot change in a process, so the first one is kept."""
    wrapper = toppra.solverwrapper
    if getattr(wrapper.available_solvers, "answered_once", False):
        return
    answer = wrapper.available_solvers(output_msg=False)

    def available_solvers(output_msg: bool = True):
        if output_msg:
            print(answer)
        return answer
    available_solvers.answered_once = True
    wrapper.available_solvers = available_solvers


constraint = import_toppra().constraint
X_CAP = 1e16             # toppra's own bound on sd^2 where nothing limits the speed (q' = 0)
_INNER = np.array([0.25, 0.5, 0.75])   # where the tool speed is also bounded inside a grid interval


class ToolSpeedLimit(NamedTuple):
    """Peak tool speeds a timing must respect, and the chain that turns joint velocities into them."""

    chain: ChainArrays                 # the tool's serial chain (`ChainFk.arrays()`), base frame, or several tips
    #                                    (`tips_chain.TipsSpeeds`: every tip under the same limits)
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
    Python loop over Pinocchio Jacobians would cost ~3 us per control sample). Several tips
    (`tips_chain.TipsSpeeds` instead of a chain): the largest speeds of any tip."""
    if not isinstance(chain, tuple):          # ChainArrays is a NamedTuple; several tips are not
        return chain.tool_speeds(positions, velocities, tool_speeds)
    out = np.empty((len(positions), 2))
    _tool_speeds_into(np.ascontiguousarray(positions, float), np.ascontiguousarray(velocities, float), chain, out)
    return out


def limit_vector(tool: ToolSpeedLimit) -> np.ndarray:
    """(2,) limits with inf for "no limit"."""
    return np.array([tool.linear if tool.linear > 0 else np.inf, tool.angular if tool.angular > 0 else np.inf])


LimitsAt = Callable[[np.ndarray], np.ndarray]     # path parameters (M,) -> limits (M, .) there


class SharedSamples:
    """path(s, order) and limits at s, computed once for all the constraints of one toppra problem: toppra hands
    each constraint the same path and grid array, and three of them need q'(s), two q''(s) and two the joint
    limits at the grid points. Keyed by identity: a new path or grid starts afresh."""

    def __init__(self) -> None:
        self._key: tuple = ()
        self._values: dict = {}

    def get(self, name, path, s, compute: Callable[[], np.ndarray]) -> np.ndarray:
        """The value `name` at (path, s), from `compute()` the first time."""
        if len(self._key) != 2 or self._key[0] is not path or self._key[1] is not s:
            self._key, self._values = (path, s), {}
        if name not in self._values:
            self._values[name] = compute()
        return self._values[name]

    def path(self, path, s, order: int) -> np.ndarray:
        """path(s, order), shared."""
        return self.get(order, path, s, lambda: path(s, order))


def _path_at(shared: SharedSamples | None, path, s, order: int) -> np.ndarray:
    return path(s, order) if shared is None else shared.path(path, s, order)


class LimitLookup(Protocol):
    """Limits along the path as the timing reads them. `LimitSchedule` (core/path/limit_schedule.py) is the
    implementation; it is not imported here or in timing.py because its stretch reports import the timing."""

    bounds: np.ndarray                 # (K + 1,) stretch boundaries, joined into toppra's grid

    @property
    def tolerance(self) -> float: ...  # path parameter distance within which s is on a boundary

    @property
    def has_tool_limits(self) -> bool: ...

    def velocity_limits(self, s, v_max: np.ndarray) -> np.ndarray: ...      # (M, n)

    def acceleration_limits(self, s, a_max: np.ndarray) -> np.ndarray: ...  # (M, n)

    def tool_limits(self, s) -> np.ndarray: ...                              # (M, 2), inf = none

    def limits_at(self, s, v_max: np.ndarray, a_max: np.ndarray) -> tuple: ...   # the three above at once

    def check_covers(self, first: float, last: float) -> None: ...


class ToolSpeedBound(constraint.LinearConstraint):
    """|J q'(s)| sd <= limit at every grid point and at `_INNER` points inside every grid interval, for toppra.

    At grid point i the bound is on x = sd^2. Inside interval i, at s_i + f ds_i, sd^2 = x_i + 2 f ds_i u_i
    (sd^2 is linear in s there): a linear constraint in (u_i, x_i), m^2 (2 f ds_i u_i + x_i) <= 1 with
    m = |J q'| / limit at that point. Bounding the grid points only let the blended rectangle's tool
    overshoot by 1.2 % between them, which the uniform stretch then took off the whole path; bounding each
    interval by its largest |J q'| instead undershot a straight line's cruise by 0.8 %.
    `limits_at` (s (M,) -> (M, 2) [m/s, rad/s], inf = none) makes the limits vary along the path; None = the
    tool's own. The limits only scale m, so each point gets its own.
    """

    def __init__(self, tool: ToolSpeedLimit, dof: int, limits_at: LimitsAt | None = None) -> None:
        super().__init__()
        self.tool, self.dof, self.limits_at = tool, dof, limits_at
        self.identical = True                      # F and g are the same at every grid point
        self.grid_speeds: tuple | None = None      # (gridpoints, (N, 2) |J q'|) of the last call, for reports

    def compute_constraint_params(self, path, gridpoints):
        N, k = len(gridpoints), len(_INNER)
        ds = np.diff(gridpoints)
        s = np.concatenate([gridpoints, (gridpoints[:-1, None] + ds[:, None] * _INNER).ravel()])
        limits = limit_vector(self.tool) if self.limits_at is None else self.limits_at(s)         # (2,) | (., 2)
        speeds = tool_speeds(self.tool.chain, path(s), path(s, 1))                                # (., 2)
        self.grid_speeds = (np.asarray(gridpoints), speeds[:N])
        per_s = (speeds / limits).max(axis=1)
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
    `limits_at` (s (M,) -> (M, n)) makes the limits vary along the path: each interval takes the limits at its
    midpoint (the grid holds every stretch boundary of a `LimitSchedule`, so those are its stretch's).
    """

    def __init__(self, a_lim: np.ndarray, limits_at: LimitsAt | None = None,
                 shared: SharedSamples | None = None) -> None:
        super().__init__()
        self.a_lim, self.dof, self.limits_at, self.shared = a_lim, len(a_lim), limits_at, shared
        self.identical = True                      # F and g are the same at every grid point

    def compute_constraint_params(self, path, gridpoints):
        N, n = len(gridpoints), self.dof
        ds = np.diff(gridpoints)[:, None]                                                  # (N - 1, 1)
        d1, d2 = _path_at(self.shared, path, gridpoints, 1), _path_at(self.shared, path, gridpoints, 2)  # (N, n)
        if self.limits_at is None:
            d1, d2 = d1 / self.a_lim, d2 / self.a_lim
            d10, d11, d20, d21 = d1[:-1], d1[1:], d2[:-1], d2[1:]                          # (N - 1, n)
        else:
            a_lim = self.limits_at(gridpoints[:-1] + 0.5 * ds[:, 0])                       # (N - 1, n)
            d10, d11, d20, d21 = d1[:-1] / a_lim, d1[1:] / a_lim, d2[:-1] / a_lim, d2[1:] / a_lim
        c4 = 0.625 * (d21 - d20) * ds                 # c / 4 per unit u, as q''' ds = q''(s1) - q''(s0)
        a, b = np.zeros((N, 2 * n)), np.zeros((N, 2 * n))                                  # last row: none
        a[:-1, :n], b[:-1, :n] = d10 - c4, d20                                             # p0 - c / 4
        a[:-1, n:], b[:-1, n:] = d11 + 2.0 * ds * d21 - c4, d21                            # p1 - c / 4
        eye = np.eye(2 * n)
        return a, b, np.zeros((N, 2 * n)), np.vstack([eye, -eye]), np.ones(4 * n), None, None


class VaryingAccelBound(constraint.LinearConstraint):
    """|q'(s) sdd + q''(s) sd^2| <= a_lim(s) at every grid point, the limits varying along the path, for toppra.

    toppra's JointAccelerationConstraint takes one limit vector for the whole path; here each grid point's rows are
    normalised by its own limits instead (a = q' / a_lim, b = q'' / a_lim, |a u + b x| <= 1), and toppra's
    interpolation discretization then bounds every interval at both of its ends, each end against its point's
    limits (on a stretch boundary the stricter stretch's, see `LimitSchedule`).
    """

    def __init__(self, limits_at: LimitsAt, dof: int, shared: SharedSamples | None = None) -> None:
        super().__init__()
        self.limits_at, self.dof, self.shared = limits_at, dof, shared
        self.identical = True                      # F and g are the same at every grid point
        self.discretization_type = constraint.DiscretizationType.Interpolation      # done here, as toppra's own

    def compute_constraint_params(self, path, gridpoints):
        a_lim = self.limits_at(gridpoints)                                                 # (N, n)
        a = _path_at(self.shared, path, gridpoints, 1) / a_lim
        b = _path_at(self.shared, path, gridpoints, 2) / a_lim
        eye = np.eye(self.dof)
        F, g = np.vstack([eye, -eye]), np.ones(2 * self.dof)                               # |a u + b x| <= 1
        return constraint.canlinear_colloc_to_interpolate(a, b, np.zeros_like(a), F, g, None, None, gridpoints,
                                                          identical=True)


class VaryingVelocityBound(constraint.LinearConstraint):
    """|q'(s)| sd <= v_lim(s) at every grid point, the limits varying along the path, for toppra: the bound
    x = sd^2 <= min_j (v_lim_j / |q'_j|)^2 that toppra's JointVelocityConstraint sets for constant limits."""

    def __init__(self, limits_at: LimitsAt, dof: int, shared: SharedSamples | None = None) -> None:
        super().__init__()
        self.limits_at, self.dof, self.shared = limits_at, dof, shared

    def compute_constraint_params(self, path, gridpoints):
        per_s = (np.abs(_path_at(self.shared, path, gridpoints, 1)) / self.limits_at(gridpoints)).max(axis=1)  # (N,)
        with np.errstate(divide="ignore"):
            xbound = np.column_stack([np.zeros(len(gridpoints)), np.minimum(per_s ** -2.0, X_CAP)])
        return None, None, None, None, None, None, xbound


class SpeedCap(constraint.LinearConstraint):
    """x = sd^2 <= cap at each grid point, the caps given at path parameters `s` (M,) and interpolated linearly
    (inf = none): the jerk-limited timing lowers toppra's speed only where its averaged profile overshot a speed
    limit (core/path/jerk_timing.py), so a cruise elsewhere keeps its speed."""

    def __init__(self, s: np.ndarray, caps: np.ndarray, dof: int) -> None:
        super().__init__()
        self.s, self.caps, self.dof = np.asarray(s, float), np.asarray(caps, float), dof

    def compute_constraint_params(self, path, gridpoints):
        finite = np.where(np.isfinite(self.caps), self.caps, X_CAP)
        xbound = np.column_stack([np.zeros(len(gridpoints)), np.minimum(np.interp(gridpoints, self.s, finite), X_CAP)])
        return None, None, None, None, None, None, xbound


def scheduled_constraints(v_lim, a_lim, tool: ToolSpeedLimit | None, within: bool, schedule: LimitLookup) -> list:
    """toppra constraints for the joint limits v_lim, a_lim (n,) scaled along the path by `schedule` (a
    `LimitSchedule`) and its tool limits (`tool` then only gives the chain). Built per call: without the
    per-joint description strings of toppra's own classes they are cheap, and a schedule rarely repeats.
    `within` adds `IntervalAccelBound`."""
    n, shared = len(v_lim), SharedSamples()
    constraints = [VaryingVelocityBound(lambda s: schedule.velocity_limits(s, v_lim), n, shared),
                   VaryingAccelBound(lambda s: schedule.acceleration_limits(s, a_lim), n, shared)]
    if within:
        constraints.append(IntervalAccelBound(a_lim, lambda s: schedule.acceleration_limits(s, a_lim), shared))
    if tool is not None:
        constraints.append(ToolSpeedBound(tool, n, schedule.tool_limits))
    return constraints
