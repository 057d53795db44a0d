"""Poses from a position and a quaternion (x, y, z, w, as geometry_msgs holds them), with one acceptance rule.

Every entry that takes a quaternion (servo pose targets, path waypoints and program poses, transforms from TF,
scene objects from a file or a message, calibration measurements) asks this module whether it is a rotation, so a
quaternion is accepted or refused the same way wherever it comes from.

The rule is tf2's (BufferCore refuses such a transform as TF_DENORMALIZED_QUATERNION; RViz checks the same):
- finite, with a squared norm within `SQUARED_NORM_TOLERANCE` (0.01) of 1, i.e. a norm between about 0.995 and
  1.005: accepted and normalised, so values rounded to a few digits in a text file still work;
- anything else is refused, naming the field and giving the norm: all zeros (an unset orientation, not the
  identity, which is w=1; its message says so) and a norm such as 2 or 1.01 are more likely a mistake than a
  rotation.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robokin_ros.core.errors import InvalidInputError

SQUARED_NORM_TOLERANCE = 10e-3      # tf2's QUATERNION_NORMALIZATION_TOLERANCE, on |q|^2


def quaternion_problem(xyzw: npt.ArrayLike) -> str | None:
    """Why `xyzw` is not accepted as a rotation, starting with its values; None when it is accepted."""
    return _checked(np.asarray(xyzw, dtype=float))[1]


def _checked(q: np.ndarray) -> tuple[float, str | None]:
    """(squared norm, why `q` is refused or None); the accepted case costs one dot product (a servo takes a target
    stream at its own rate)."""
    if q.shape != (4,):
        return math.nan, f"{q.tolist()} must have 4 entries (x, y, z, w), got shape {q.shape}"
    squared_norm = float(q.dot(q))           # as np.linalg.norm sums it: the normalised values stay the same bits
    if abs(squared_norm - 1.0) < SQUARED_NORM_TOLERANCE:         # False for NaN
        return squared_norm, None
    if not np.isfinite(q).all():
        return squared_norm, f"{q.tolist()} has NaN/inf entries (x, y, z, w)"
    if squared_norm == 0.0:                 # the usual mistake, so it gets its own words
        return squared_norm, (f"{q.tolist()} (x, y, z, w) has norm 0: not a rotation (an unset orientation is all "
                              "zeros; identity is w=1)")
    return squared_norm, (f"{q.tolist()} has norm {math.sqrt(squared_norm):.6g}, not 1: not a unit quaternion, so "
                          f"not a rotation (its squared norm must be within {SQUARED_NORM_TOLERANCE:g} of 1, as tf2 "
                          "requires; identity is w=1)")


def unit_xyzw(xyzw: npt.ArrayLike, what: str = "quaternion",
              error: Callable[[str], Exception] = InvalidInputError) -> np.ndarray:
    """`xyzw` normalised, (4,) x, y, z, w; refused unless `quaternion_problem` accepts it.

    Raises:
        `error` (InvalidInputError by default) with "<what> <values> has norm ...".
    """
    q = np.asarray(xyzw, dtype=float)
    squared_norm, problem = _checked(q)
    if problem is not None:
        raise error(f"{what} {problem}")
    return q / math.sqrt(squared_norm)


def pose_from_xyzw(position: npt.ArrayLike, xyzw: npt.ArrayLike, what: str = "quaternion",
                   error: Callable[[str], Exception] = InvalidInputError) -> pin.SE3:
    """The pose at `position` [m] (3,) rotated by `xyzw`, normalised; the caller has checked the position.

    Raises:
        `error` (InvalidInputError by default): a quaternion that `quaternion_problem` refuses, naming `what`.
    """
    x, y, z, w = unit_xyzw(xyzw, what, error)
    return pin.SE3(pin.Quaternion(w, x, y, z).toRotationMatrix(), np.asarray(position, dtype=float))
