"""Twist commands -> the tool origin's twist in base axes (units, frame rotation, reference point).

Convention (stated once here: frames and reference points are where twist commands most often go wrong):
- the command's vectors are expressed in the axes of its `frame` ("" = the base frame);
- `apply_twist_about_tool=True`: the command is the tool origin's velocity: linear = how fast the tool
  origin moves, angular = rotation about the tool origin. Only the axes change;
- `apply_twist_about_tool=False`: the command is a spatial twist about the origin of `frame`: linear is
  the velocity of the rigidly attached point at that origin, so the tool origin moves with
  v_tool = v + w x (p_tool - p_frame) (all in base axes). With frame = base this is the classic spatial
  twist; with frame = tool it equals the first convention.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.config import ServoConfig

# No arm's tool moves faster than this; a speed_units command beyond it is a unit or sign-up error, and
# accepting it would only overflow the arithmetic downstream.
MAX_LINEAR_SPEED = 10.0      # [m/s]
MAX_ANGULAR_SPEED = 20.0     # [rad/s]
# override_velocity_scaling_factor below this means "no override" (MoveIt Servo's SCALING_OVERRIDE_THRESHOLD)
SCALING_OVERRIDE_THRESHOLD = 0.01


def command_to_si(linear: np.ndarray, angular: np.ndarray, config: ServoConfig) -> np.ndarray:
    """(6,) [v; w] in SI units [m/s, rad/s], still in the command frame's axes.

    `unitless` commands are clipped to [-1, 1] per component, then scaled by `scale.linear` and
    `scale.rotational`; `speed_units` commands are taken as SI.
    """
    twist = np.empty(6)
    if config.command_in_type == "unitless":
        twist[:3] = np.clip(linear, -1.0, 1.0) * config.scale.linear
        twist[3:] = np.clip(angular, -1.0, 1.0) * config.scale.rotational
    else:
        twist[:3] = linear
        twist[3:] = angular
        # components first: squaring a 1e308 entry inside a norm would overflow
        v = float(np.linalg.norm(twist[:3])) if np.abs(twist[:3]).max() <= MAX_LINEAR_SPEED else np.inf
        w = float(np.linalg.norm(twist[3:])) if np.abs(twist[3:]).max() <= MAX_ANGULAR_SPEED else np.inf
        if v > MAX_LINEAR_SPEED or w > MAX_ANGULAR_SPEED:
            raise InvalidInputError(f"speed_units twist of {v:.3g} m/s, {w:.3g} rad/s exceeds what any arm can "
                                    f"do ({MAX_LINEAR_SPEED} m/s, {MAX_ANGULAR_SPEED} rad/s): is command_in_type "
                                    "right?")
    override = config.override_velocity_scaling_factor
    if override >= SCALING_OVERRIDE_THRESHOLD:
        # MoveIt Servo multiplies its joint velocities by the override; scaling the twist before the IK does the
        # same (velocity limits then scale the rest uniformly, as MoveIt takes the smaller of the two factors)
        twist *= override
    return twist


class TwistConverter:
    """Converts SI twists given in any model frame into the tool origin's twist in base axes."""

    def __init__(self, robot: RobotModel) -> None:
        self.robot = robot
        self._data = robot.model.createData()        # own data: never disturbs the IK's Jacobian cache
        self._base_T_world = robot.world_T_base.inverse()

    def to_tool_twist_base(self, positions: np.ndarray, twist: np.ndarray, frame_id: int | pin.SE3 | None,
                           about_tool: bool) -> np.ndarray:
        """The tool origin's twist (6,) in base axes [m/s, rad/s].

        Args:
            positions: (n,) joint positions where the frames are evaluated.
            twist: (6,) [v; w] in the axes of `frame_id` (None = the base frame) [m/s, rad/s].
            frame_id: the command frame (None or the base frame id = base), or `base_T_frame` of a frame
                outside the model (looked up in TF): it is then treated exactly as a model frame at that pose.
            about_tool: True = `twist` is the tool origin's velocity; False = spatial twist about the frame's
                origin (see the module docstring).
        """
        robot = self.robot
        external = isinstance(frame_id, pin.SE3)
        is_base = not external and (frame_id is None or frame_id == robot.base_frame_id)
        if is_base and about_tool:
            return twist
        model, data = robot.model, self._data
        pin.forwardKinematics(model, data, robot.to_pinocchio_q(positions))
        if is_base:
            base_R_frame, base_p_frame = np.eye(3), np.zeros(3)
        elif external:
            base_R_frame, base_p_frame = frame_id.rotation, frame_id.translation
        else:
            base_T_frame = self._base_T_world * pin.updateFramePlacement(model, data, frame_id)
            base_R_frame, base_p_frame = base_T_frame.rotation, base_T_frame.translation
        v = base_R_frame @ twist[:3]                     # (3,) base axes
        w = base_R_frame @ twist[3:]                     # (3,) base axes
        if not about_tool:
            base_p_tool = self._base_T_world.act(pin.updateFramePlacement(model, data, robot.tip_frame_id)
                                                 .translation)
            v = v + np.cross(w, base_p_tool - base_p_frame)
        return np.concatenate((v, w))
