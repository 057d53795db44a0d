"""Cartesian LIN move: the tool origin on a straight line, the orientation by SLERP, each on a trapezoidal profile.

The translation (distance D [m], limits v_max, a_max) and the rotation (angle theta [rad] of start_R^T end_R,
limits w_max, alpha_max) each get the rest-to-rest trapezoid (LSPB of `core/trajectory/profiles.py`). The move lasts the
longer of the two, T = max(T_trans, T_rot); the faster part is stretched to T by keeping its acceleration and
lowering its cruise speed to the smaller root of 1/v + v/a = T (unit move), so both start and finish together
and neither breaks a limit. Sharing one s(t) for both instead would need T above both times whenever speed and
acceleration bind on different parts; stretching each keeps T exactly the larger trapezoid time.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.trajectory.profiles import lspb_eval, lspb_profile
from robokin_ros.core.trajectory.arrays import sample_times
from robokin_ros.core.so3 import exp3_scaled


@dataclass(frozen=True)
class LinProfile:
    """A sampled LIN move, base frame."""

    times: np.ndarray               # (K,) [s]
    translations: np.ndarray        # (K, 3) [m] tool origin
    rotations: np.ndarray           # (K, 3, 3) base_R_tool
    speed: np.ndarray               # (K,) [m/s] tool origin speed (analytic)
    angular_speed: np.ndarray       # (K,) [rad/s] (analytic)
    duration: float                 # [s] max(translation_time, rotation_time)
    translation_time: float         # [s] the translational trapezoid alone
    rotation_time: float            # [s] the rotational trapezoid alone
    peak_speed: float               # [m/s] cruise speed of the translation
    peak_angular_speed: float       # [rad/s]
    peak_acceleration: float        # [m/s^2]
    peak_angular_acceleration: float  # [rad/s^2]


class _Part:
    """One trapezoid of a unit move s: 0 -> 1 scaled by `length` (a distance or an angle)."""

    def __init__(self, length: float, v_max: float, a_max: float) -> None:
        self.length = length
        self.a = a_max / length if length > 0 else 0.0        # [1/s^2] on s
        self.time = lspb_profile(v_max / length, self.a)[1] if length > 0 else 0.0

    def stretched(self, total: float) -> tuple[float, float]:
        """(blend time, cruise speed on s) of the trapezoid with this acceleration lasting `total`."""
        disc = max((self.a * total) ** 2 - 4.0 * self.a, 0.0)
        v = 0.5 * (self.a * total - np.sqrt(disc))            # smaller root of 1/v + v/a = total
        return v / self.a, v


def _pose(value, name: str) -> pin.SE3:
    if isinstance(value, pin.SE3):
        return value
    M = np.asarray(value, float)
    if M.shape != (4, 4) or not np.isfinite(M).all():
        raise InvalidInputError(f"{name} must be a pin.SE3 or a finite (4, 4) matrix, got shape {M.shape}")
    if not np.allclose(M[:3, :3].T @ M[:3, :3], np.eye(3), atol=1e-9):
        raise InvalidInputError(f"{name} has a rotation block that is not orthonormal")
    return pin.SE3(M[:3, :3].copy(), M[:3, 3].copy())


def _check_limits(**limits: float) -> None:
    bad = [f"{k}={v!r}" for k, v in limits.items() if not (np.isfinite(v) and v > 0)]
    if bad:
        raise InvalidInputError("LIN limits must be finite and > 0: " + ", ".join(bad))


def lin_move(start: pin.SE3 | npt.ArrayLike, end: pin.SE3 | npt.ArrayLike, v_max: float, a_max: float,
             w_max: float, alpha_max: float, rate_hz: float = 100.0) -> LinProfile:
    """LIN from `start` to `end` (base_T_tool) with tool speed v_max [m/s], a_max [m/s^2] and angular
    speed w_max [rad/s], alpha_max [rad/s^2], sampled at `rate_hz` [Hz] (the last sample at the end)."""
    _check_limits(v_max=v_max, a_max=a_max, w_max=w_max, alpha_max=alpha_max, rate_hz=rate_hz)
    start, end = _pose(start, "start"), _pose(end, "end")
    delta = end.translation - start.translation                              # (3,) [m]
    rot = pin.log3(start.rotation.T @ end.rotation)                          # (3,) [rad] in start axes
    trans = _Part(float(np.linalg.norm(delta)), v_max, a_max)
    turn = _Part(float(np.linalg.norm(rot)), w_max, alpha_max)
    total = max(trans.time, turn.time)
    times = sample_times(total, rate_hz) if total > 0 else np.zeros(1)
    curves, peaks = [], []
    for part in (trans, turn):
        if part.length == 0:
            curves.append((np.zeros_like(times), np.zeros_like(times)))
            peaks.append((0.0, 0.0))
            continue
        tb, v = part.stretched(total)
        s, sd, _ = lspb_eval(times, tb, total)
        curves.append((s, sd * part.length))
        peaks.append((v * part.length, part.a * part.length))
    translations = start.translation + np.outer(curves[0][0], delta)
    rotations = start.rotation @ exp3_scaled(rot, curves[1][0])              # (K, 3, 3) SLERP
    return LinProfile(times, translations, rotations, curves[0][1], curves[1][1], total, trans.time, turn.time,
                      peaks[0][0], peaks[1][0], peaks[0][1], peaks[1][1])
