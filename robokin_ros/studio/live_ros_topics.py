"""What the studio's live ROS mode puts on servo_node's topics: pose targets, and twists from a proportional law.

Twist convention (servo_node's, core/servo/commands.py): a TwistStamped in the base frame is read in the base axes;
with `apply_twist_about_tool` (the default) it is the tool origin's velocity, otherwise a spatial twist about the
base origin. With `command_in_type: unitless` (the default) each component is clipped to [-1, 1] and multiplied by
`scale.linear` / `scale.rotational`. The law below works in SI on the tool origin; `servo_twist` converts it to what
the servo reads, which is why the bridge asks the servo for those parameters before it sends a twist.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pinocchio as pin
from geometry_msgs.msg import PoseStamped, TwistStamped
from rclpy.parameter import parameter_value_to_python

from robokin_ros.core.errors import ConfigError, InvalidInputError

COMMANDS = ("pose", "twist")
POSE_TOPIC = "pose_target_cmds"
TWIST_TOPIC = "delta_twist_cmds"
# servo_node's parameter names (robokin's; MoveIt's aliases resolve to the same values)
TWIST_PARAMETERS = ("command_in_type", "scale.linear", "scale.rotational", "apply_twist_about_tool")


@dataclass(frozen=True)
class TwistLaw:
    """Proportional tool twist toward a target, capped: v = min(k_v |e_p|, v_max) along e_p, likewise for w."""

    linear_gain: float = 2.0           # [1/s] tool speed per metre of position error
    angular_gain: float = 2.0          # [1/s] angular speed per radian of orientation error
    max_linear_speed: float = 0.25     # [m/s]
    max_angular_speed: float = 1.0     # [rad/s]

    def __post_init__(self) -> None:
        problems = [f"{name}={value!r} must be a finite number > 0" for name, value in vars(self).items()
                    if not (isinstance(value, (int, float)) and np.isfinite(value) and value > 0)]
        if problems:
            raise ConfigError(problems, "live ROS twist law")

    def twist_toward(self, base_T_tool: pin.SE3, base_T_target: pin.SE3) -> np.ndarray:
        """(6,) [v; w] [m/s, rad/s]: the tool origin's velocity in base axes that closes the pose error.

        The errors are decoupled (position difference, rotation log in base axes) rather than one SE(3) log:
        the tool origin then heads straight for the target's, as a person dragging a gizmo expects, instead of
        along the screw motion's arc.
        """
        e_p = base_T_target.translation - base_T_tool.translation                     # (3,) [m]
        e_w = pin.log3(base_T_target.rotation @ base_T_tool.rotation.T)                # (3,) [rad] base axes
        return np.concatenate([_capped(self.linear_gain * e_p, self.max_linear_speed),
                               _capped(self.angular_gain * e_w, self.max_angular_speed)])


def _capped(vector: np.ndarray, limit: float) -> np.ndarray:
    """`vector` shortened to norm `limit` if longer (its direction kept)."""
    norm = float(np.linalg.norm(vector))
    return vector * (limit / norm) if norm > limit else vector


class ServoTwistUnits(NamedTuple):
    """How servo_node reads a twist (its parameters TWIST_PARAMETERS)."""

    unitless: bool
    scale_linear: float        # [m/s] for a unitless 1
    scale_rotational: float    # [rad/s] for a unitless 1
    about_tool: bool

    @classmethod
    def from_values(cls, values: list[Any]) -> ServoTwistUnits:
        """From rcl_interfaces/ParameterValue messages in TWIST_PARAMETERS order.

        Raises:
            InvalidInputError: a parameter is unset or of the wrong type (not servo_node, or a renamed one).
        """
        python = [parameter_value_to_python(v) if v is not None else None for v in values]
        kinds = (str, float, float, bool)
        wrong = [f"{name}={value!r}" for name, value, kind in zip(TWIST_PARAMETERS, python, kinds)
                 if not isinstance(value, kind)]
        if len(python) != len(TWIST_PARAMETERS) or wrong:
            raise InvalidInputError(f"the servo's twist parameters are unusable ({', '.join(wrong) or python}); "
                                    f"expected {list(TWIST_PARAMETERS)} of servo_node")
        command_in_type, scale_linear, scale_rotational, about_tool = python
        return cls(command_in_type == "unitless", scale_linear, scale_rotational, about_tool)


def servo_twist(twist_tool: np.ndarray, base_T_tool: pin.SE3, units: ServoTwistUnits) -> np.ndarray:
    """(6,) the values to publish for tool-origin twist `twist_tool` [m/s, rad/s] (base axes), in the servo's units.

    A unitless twist is scaled down as a whole when a component would exceed 1: the servo clips per component,
    which would turn the motion off its direction.
    """
    v, w = twist_tool[:3], twist_tool[3:]
    if not units.about_tool:
        v = v - np.cross(w, base_T_tool.translation)     # the base origin's velocity: v_tool = v + w x p_tool
    if not units.unitless:
        return np.concatenate([v, w])
    values = np.concatenate([v / units.scale_linear, w / units.scale_rotational])
    return values / max(1.0, float(np.max(np.abs(values))))


def pose_target_msg(base_T_target: pin.SE3, frame: str, stamp) -> PoseStamped:
    """PoseStamped of the tip frame's target in `frame` (the inverse of conversions.pose_target_from_msg)."""
    x, y, z, qx, qy, qz, qw = (float(v) for v in pin.SE3ToXYZQUAT(base_T_target))
    msg = PoseStamped()
    msg.header.frame_id, msg.header.stamp = frame, stamp
    p, o = msg.pose.position, msg.pose.orientation
    p.x, p.y, p.z = x, y, z
    o.x, o.y, o.z, o.w = qx, qy, qz, qw
    return msg


def twist_msg(values: np.ndarray, frame: str, stamp) -> TwistStamped:
    """TwistStamped [v; w] in `frame` (the inverse of conversions.twist_command_from_msg)."""
    msg = TwistStamped()
    msg.header.frame_id, msg.header.stamp = frame, stamp
    linear, angular = msg.twist.linear, msg.twist.angular
    linear.x, linear.y, linear.z = (float(v) for v in values[:3])
    angular.x, angular.y, angular.z = (float(v) for v in values[3:])
    return msg
