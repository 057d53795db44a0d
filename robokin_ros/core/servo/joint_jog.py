"""Joint jog commands: per-joint velocities by name, as control_msgs/JointJog carries them, in chain order and SI.

MoveIt Servo's semantics: the named joints move at the given velocities and the others stay still; a `unitless`
command is clipped to [-1, 1] and scaled by `scale.joint`; an unknown name refuses the whole command. robokin
also takes displacements (JointJog's other field) with a `duration`: each joint moves displacement / duration,
so a client streaming one such message per period moves the joints by the displacements per duration.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robokin_ros.core.errors import InvalidInputError, UnknownJointError
from robokin_ros.core.servo.config import SCALING_OVERRIDE_THRESHOLD, ServoConfig

# A speed_units joint velocity above this is a unit mistake (degrees, or a position sent as a velocity), not a
# command: no arm joint turns at 100 rad/s (about 950 rpm).
MAX_JOINT_SPEED = 100.0       # [rad/s | m/s]


@dataclass(frozen=True)
class JointJogCommand:
    """A joint jog as received: names with velocities, or with displacements over `duration`."""

    joint_names: tuple[str, ...]
    velocities: tuple[float, ...]        # one per name, or empty when displacements are given
    displacements: tuple[float, ...]     # one per name, or empty
    duration: float                      # [s] the time to cover the displacements (unused for velocities)
    received_at: float                   # [s] receive time on the caller's clock


def chain_velocities(command: JointJogCommand, joint_names: Sequence[str], config: ServoConfig) -> np.ndarray:
    """(n,) joint velocities [rad/s | m/s] in chain order for a joint jog; joints it does not name get 0.

    Raises:
        UnknownJointError: a name that is not a chain joint (the first such name; the message lists the chain).
        InvalidInputError: a name given twice, sizes that do not match the names, neither velocities nor
            displacements, displacements without a positive duration, NaN/inf, or a speed_units velocity above
            MAX_JOINT_SPEED.
    """
    names = command.joint_names
    unknown = [name for name in names if name not in joint_names]
    if unknown:
        raise UnknownJointError(unknown[0], tuple(joint_names))
    if len(set(names)) != len(names):
        raise InvalidInputError(f"joint jog names a joint twice: {list(names)}")
    values = _values_per_name(command)
    if not np.all(np.isfinite(values)):
        bad = [name for name, v in zip(names, values) if not math.isfinite(v)]
        raise InvalidInputError(f"joint jog has non-finite values for {bad}")
    if config.command_in_type == "unitless":
        values = np.clip(values, -1.0, 1.0) * config.scale.joint
    elif values.size and np.abs(values).max() > MAX_JOINT_SPEED:
        raise InvalidInputError(f"speed_units joint jog of {np.abs(values).max():.3g} rad/s exceeds what any joint "
                                f"can do ({MAX_JOINT_SPEED} rad/s): is command_in_type right?")
    velocities = np.zeros(len(joint_names))
    index = {name: i for i, name in enumerate(joint_names)}
    for name, value in zip(names, values):
        velocities[index[name]] = value
    if config.override_velocity_scaling_factor >= SCALING_OVERRIDE_THRESHOLD:
        velocities *= config.override_velocity_scaling_factor
    return velocities


def _values_per_name(command: JointJogCommand) -> np.ndarray:
    """The velocity per name: the velocities, else displacement / duration."""
    n = len(command.joint_names)
    if command.velocities:
        if len(command.velocities) != n:
            raise InvalidInputError(f"joint jog has {n} names but {len(command.velocities)} velocities")
        return np.array(command.velocities, dtype=float)
    if command.displacements:
        if len(command.displacements) != n:
            raise InvalidInputError(f"joint jog has {n} names but {len(command.displacements)} displacements")
        if not (math.isfinite(command.duration) and command.duration > 0.0):
            raise InvalidInputError(f"joint jog displacements need a duration > 0 [s] to cover them in, got "
                                    f"{command.duration!r}")
        return np.array(command.displacements, dtype=float) / command.duration
    raise InvalidInputError(f"joint jog for {list(command.joint_names)} has neither velocities nor displacements")
