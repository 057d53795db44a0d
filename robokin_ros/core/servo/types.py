"""Plain data going into and out of the servo core (`core/servo.py`); no behaviour here."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robokin_ros.core.servo.status import ServoStatus


@dataclass(frozen=True)
class TwistCommand:
    """A twist as received, before scaling: unitless in [-1, 1] or SI, per `command_in_type`."""

    linear: np.ndarray       # (3,) in `frame` axes
    angular: np.ndarray      # (3,) in `frame` axes
    frame: str               # any frame of the model; "" = base frame
    received_at: float       # [s] receive time on the caller's clock (never the message stamp)


@dataclass(frozen=True)
class JointMeasurement:
    """Measured joint positions in chain order (see RobotModel.joint_names)."""

    positions: np.ndarray    # (n,) [rad | m]
    received_at: float       # [s] receive time on the caller's clock


@dataclass(frozen=True)
class TrajectoryWindow:
    """A short look-ahead of the commanded motion for JointTrajectoryController (starts at dt)."""

    times: np.ndarray        # (k,) [s] strictly increasing, > 0
    positions: np.ndarray    # (k, n)
    velocities: np.ndarray   # (k, n)


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
