"""Input checks shared by the core: wrong sizes and non-finite numbers get distinct, named errors."""
from __future__ import annotations

import math
import numbers

import numpy as np
import numpy.typing as npt

from robokin_ros.core.errors import InvalidInputError


def check_vector(name: str, value: npt.ArrayLike, size: int) -> np.ndarray:
    """Return `value` as a float64 vector of `size` entries, or raise InvalidInputError naming `name`."""
    array = np.asarray(value, dtype=np.float64)
    if array.shape != (size,):
        raise InvalidInputError(f"{name} must have {size} entries, got shape {array.shape}")
    if not np.isfinite(array).all():
        bad = np.flatnonzero(~np.isfinite(array)).tolist()
        raise InvalidInputError(f"{name} has non-finite entries at indices {bad}: {array[bad].tolist()}")
    return array


def is_real_number(value: object) -> bool:
    """True for a real scalar (Python or numpy); bool is a Real too, but `True` as a time or a distance is a wiring
    mistake, not 1."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def check_time(name: str, value: float) -> None:
    """Raise InvalidInputError naming `name` unless `value` is a finite time [s]."""
    if not (is_real_number(value) and math.isfinite(value)):
        raise InvalidInputError(f"{name} must be a finite time [s], got {value!r}")
