"""The trajectory toppra's grid solution describes, evaluated at any time: constant path acceleration on each grid
interval, optionally stretched uniformly in time; and the control samples its verification kept."""
from __future__ import annotations

import copy
from typing import NamedTuple

import numpy as np

from robokin_ros.core.errors import InvalidInputError


class ConstAccelTrajectory:
    """q(t / c) for toppra's grid solution: constant path acceleration on each grid interval.

    The same trajectory as toppra's `ParametrizeConstAccel` (tested against it), evaluated without its
    per-sample Python loop (which cost ~1.5 ms per 1000 samples, most of the timing budget). On interval
    i, s'' = u_i = (sd_{i+1}^2 - sd_i^2) / (2 ds_i), reached in dt_i = 2 ds_i / (sd_i + sd_{i+1}).
    `stretch` c >= 1 slows the whole trajectory uniformly: velocities / c, accelerations / c^2.
    """

    def __init__(self, path, gridpoints: np.ndarray, sd: np.ndarray, stretch: float = 1.0) -> None:
        self.path = path
        self.ss = np.asarray(gridpoints, float)
        self.sd = np.asarray(sd, float)
        ds = np.diff(self.ss)
        self.us = 0.5 * np.diff(self.sd ** 2) / ds
        self.ts = np.concatenate([[0.0], np.cumsum(2.0 * ds / (self.sd[:-1] + self.sd[1:]))])
        self.stretch = stretch
        self.verified: ControlSamples | None = None    # set by `time_optimal` on the trajectory it returns
        self.grid_tool_speeds: tuple | None = None      # (chain, (N, 2) tool speeds per unit s) from `_toppra`

    def stretched(self, factor: float) -> ConstAccelTrajectory:
        """The same path, `factor` times slower again."""
        out = copy.copy(self)            # shares the grid arrays: only the stretch differs
        out.stretch = self.stretch * factor
        out.verified = None              # other times, other samples
        return out

    @property
    def duration(self) -> float:
        """[s]"""
        return float(self.ts[-1]) * self.stretch

    def _state(self, times):
        """Time into the grid interval, s'' there, s' and s at `times` [s], all unstretched."""
        local = np.asarray(times, float) / self.stretch
        i = np.clip(np.searchsorted(self.ts, local, side="right") - 1, 0, len(self.us) - 1)
        dt = local - self.ts[i]
        u = self.us[i]
        return dt, u, self.sd[i] + dt * u, self.ss[i] + dt * self.sd[i] + 0.5 * dt * dt * u

    def path_parameter(self, times) -> np.ndarray:
        """s at `times` [s], shape (K,)."""
        return self._state(times)[3]

    def time_at(self, s) -> np.ndarray:
        """[s] when the path parameter reaches `s` (K,), within [ss[0], ss[-1]]. On interval i it solves
        s - s_i = sd_i dt + u_i dt^2 / 2 in the form that stays exact when sd_i or u_i vanish."""
        s = np.asarray(s, float)
        i = np.clip(np.searchsorted(self.ss, s, side="right") - 1, 0, len(self.us) - 1)
        gone = s - self.ss[i]
        root = np.sqrt(np.maximum(self.sd[i] ** 2 + 2.0 * self.us[i] * gone, 0.0)) + self.sd[i]
        with np.errstate(invalid="ignore", divide="ignore"):
            dt = np.where(gone > 0.0, 2.0 * gone / root, 0.0)
        return (self.ts[i] + dt) * self.stretch

    def states(self, times) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """s (K,), positions, velocities and accelerations (K, n) at `times` [s]: `__call__` of each order with
        the shared parts evaluated once."""
        dt, u, sd, s = self._state(times)
        d1 = self.path(s, 1)
        return (s, self.path(s), d1 * (sd / self.stretch)[:, None],
                (self.path(s, 2) * sd[:, None] ** 2 + d1 * u[:, None]) / self.stretch ** 2)

    def __call__(self, times, order: int = 0) -> np.ndarray:
        """Positions (order 0), velocities (1) or accelerations (2) at `times` [s], shape (K, n)."""
        dt, u, sd, s = self._state(times)
        if order == 0:
            return self.path(s)
        if order == 1:
            return self.path(s, 1) * (sd / self.stretch)[:, None]
        if order == 2:
            return (self.path(s, 2) * sd[:, None] ** 2 + self.path(s, 1) * u[:, None]) / self.stretch ** 2
        raise InvalidInputError(f"order {order} must be 0, 1 or 2")


class ControlSamples(NamedTuple):
    """What the verification evaluated on the trajectory it accepted, kept for reports that measure the same
    samples (`limit_schedule.stretch_reports`) so they need not evaluate them again."""

    times: np.ndarray                  # (K,) [s] control samples
    velocities: np.ndarray             # (K, n)
    accelerations: np.ndarray          # (K, n)
    tool_speeds: np.ndarray | None     # (K, 2) [m/s, rad/s], None without a tool chain
    binding: np.ndarray                # (N - 1,) `binding_limits` of the grid intervals
    v_max: np.ndarray                  # (n,) the limits (scalings applied) they were measured against
    a_max: np.ndarray
    schedule: object                   # the LimitLookup timed under (None = none)
    chain: object                      # the tool chain of `tool_speeds` (None = none)
