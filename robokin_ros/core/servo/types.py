"""Plain data going into and out of the servo core, and the one fast way to build its frozen results."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from robokin_ros.core.servo.status import ServoStatus

T = TypeVar("T")
_new = object.__new__


def frozen(cls: type[T], values: dict[str, Any]) -> T:
    """`cls(**values)` for a frozen dataclass, without its generated __init__.

    That __init__ sets each field through object.__setattr__ (~1 us for ten fields), which a 1 kHz loop
    pays several times a tick; filling __dict__ builds the same object. Callers pass every field.
    """
    obj = _new(cls)
    obj.__dict__.update(values)
    return obj


@dataclass(frozen=True)
class TwistCommand:
    """A twist as received, before scaling: unitless in [-1, 1] or SI, per `command_in_type`."""

    linear: np.ndarray       # (3,) in `frame` axes
    angular: np.ndarray      # (3,) in `frame` axes
    frame: str               # any frame of the model; "" = base frame
    received_at: float       # [s] receive time on the caller's clock (never the message stamp)
    tip: str = ""            # the tip it moves, on a robot with several (robot.tip_frames); "" = the first tip


@dataclass(frozen=True)
class JointMeasurement:
    """Measured joint positions in chain order (see RobotModel.joint_names)."""

    positions: np.ndarray    # (n,) [rad | m]
    received_at: float       # [s] receive time on the caller's clock


@dataclass(frozen=True)
class TrajectoryWindow:
    """A short look-ahead of the commanded motion for JointTrajectoryController: the state now (time 0), the
    commanded velocity extrapolated up to the expected latency, then a deceleration tail ending at rest (the last
    point's velocities are exactly 0, as a controller's default settings require)."""

    times: np.ndarray        # (k,) [s] strictly increasing, from 0
    positions: np.ndarray    # (k, n)
    velocities: np.ndarray   # (k, n)


@dataclass(frozen=True)
class VelocityIkResult:
    """Outcome of one velocity-IK step.

    `VelocityIk` builds it with `frozen`, storing the start of the message as `_prefix`: the full message
    "<prefix> (<numbers>)" is formatted on first read, since float formatting costs ~0.5 us a tick and a
    servo loop rarely reads it.
    """

    velocities: np.ndarray          # (n,) [rad/s | m/s]
    status: ServoStatus             # OK / DECELERATE_* / HALT_FOR_SINGULARITY / JOINT_BOUND / VELOCITY_LIMITED
    message: str                    # full sentence: locked joints, sigma_min / condition number
    locked_joints: tuple[str, ...]
    sigma_min: float                # smallest singular value of the task Jacobian (before locking)
    condition_number: float         # sigma_max / sigma_min of the task Jacobian (inf when singular; NaN: not
    #                                 computed, a stacked task's fast solve, and sigma_min is a lower bound)
    velocity_scale: float           # uniform scale applied (1 = none)
    damping: float                  # lambda used in the final solve

    def __getattr__(self, name: str) -> str:
        values = self.__dict__
        if name != "message" or "_prefix" not in values:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        if values["condition_number"] != values["condition_number"]:
            # NaN: a stacked task's fast solve, whose sigma_min is a certified lower bound and computes no sigma_max
            message = (f"{values['_prefix']} (sigma_min at least {values['sigma_min']:.3g}, damping "
                       f"{values['damping']:.3g})")
        else:
            message = (f"{values['_prefix']} (sigma_min {values['sigma_min']:.3g}, condition number "
                       f"{values['condition_number']:.3g}, damping {values['damping']:.3g})")
        values["message"] = message
        return message


@dataclass(frozen=True)
class ServoOutput:
    """One servo tick's result: the command to send (if `publish`) and the status to report."""

    positions: np.ndarray            # (n,) commanded positions [rad | m]
    velocities: np.ndarray           # (n,) commanded velocities [rad/s | m/s]
    window: TrajectoryWindow
    status: ServoStatus
    message: str                     # full sentence for a person, with details (joint names, numbers)
    locked_joints: tuple[str, ...]
    sigma_min: float
    condition_number: float
    velocity_scale: float            # uniform factor applied by limits and singularity slowing
    publish: bool                    # False once the configured number of halt messages has been sent
    # with joint jerk limits: the window's peak |jerk| / limit on the spline a controller plays (acceleration steps
    # over 1 ms, the step from the previous window included); NaN without jerk limits (no limit to share)
    peak_jerk_share: float = float("nan")
