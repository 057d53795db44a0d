"""Joint-origin error model for kinematic calibration, and writing the identified offsets back into a URDF.

Each chain joint i gets 6 parameters, a small twist `delta_i = [dx, dy, dz, droll, dpitch, dyaw]` ([m] and
[rad], the rotation as a rotation vector) applied on the right of its fixed placement in the parent:
`placement_i' = placement_i * exp6(delta_i)`. Right multiplication matters twice: the offset lives in the joint's
own frame (so "droll about the joint axis" reads as a joint zero offset), and Pinocchio's placement is
`parent_joint_T_parent_link * urdf_origin_i`, so the corrected URDF origin is simply `urdf_origin_i * exp6(delta_i)`
whatever fixed links sit in between. An optional tool offset (3: translation, 6: full twist) moves the tip frame.

Other error models (DH parameters, ...) plug into `identification` and `calibration` by providing the small
`ErrorModel` interface: `parameter_names`, `robot`, and `apply(parameters) -> pin.Model`.
"""
from __future__ import annotations

import re
from typing import Protocol

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robokin_ros.core.errors import InvalidInputError, ModelError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.validation import check_vector

SUFFIXES = ("dx", "dy", "dz", "droll", "dpitch", "dyaw")


class ErrorModel(Protocol):
    """What calibration needs from an error model: named parameters -> a copy of the model with the errors."""

    robot: RobotModel
    parameter_names: tuple[str, ...]

    def apply(self, parameters: npt.ArrayLike) -> pin.Model:
        """A copy of `robot.model` with the errors `parameters` applied (the robot's model is not touched)."""


class JointOriginErrorModel:
    """Offsets of every chain joint's URDF origin (6 each), then an optional tool offset (0, 3 or 6)."""

    def __init__(self, robot: RobotModel, tool_dofs: int = 0) -> None:
        if tool_dofs not in (0, 3, 6):
            raise InvalidInputError(f"tool_dofs must be 0, 3 or 6, got {tool_dofs!r}")
        self.robot = robot
        self.tool_dofs = tool_dofs
        self.joint_ids = tuple(range(1, robot.model.njoints))
        names = [f"{robot.model.names[j]}.{s}" for j in self.joint_ids for s in SUFFIXES]
        self.parameter_names = tuple(names + [f"tool.{s}" for s in SUFFIXES[:tool_dofs]])

    @property
    def size(self) -> int:
        """Number of parameters."""
        return len(self.parameter_names)

    def split(self, parameters: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """(joint twists (n_joints, 6), tool twist (6,)) from the flat parameter vector."""
        p = check_vector("calibration parameters", parameters, self.size)
        n_joint = 6 * len(self.joint_ids)
        tool = np.zeros(6)
        tool[:self.tool_dofs] = p[n_joint:]
        return p[:n_joint].reshape(-1, 6), tool

    def apply(self, parameters: npt.ArrayLike) -> pin.Model:
        """A copy of the robot's Pinocchio model with the joint-origin and tool offsets applied."""
        joints, tool = self.split(parameters)
        nominal = self.robot.model
        model = nominal.copy()
        for k, j in enumerate(self.joint_ids):
            model.jointPlacements[j] = nominal.jointPlacements[j] * pin.exp6(joints[k])
        if self.tool_dofs:
            # Frames come back by value from some bindings: write the whole frame back.
            frame = model.frames[self.robot.tip_frame_id]
            frame.placement = nominal.frames[self.robot.tip_frame_id].placement * pin.exp6(tool)
            model.frames[self.robot.tip_frame_id] = frame
        return model

    def offsets(self, parameters: npt.ArrayLike) -> dict[str, np.ndarray]:
        """Joint name (or "tool") -> its 6-vector twist [m, rad]."""
        joints, tool = self.split(parameters)
        out = {self.robot.model.names[j]: joints[k].copy() for k, j in enumerate(self.joint_ids)}
        if self.tool_dofs:
            out["tool"] = tool
        return out


def corrected_robot(error_model: ErrorModel, parameters: npt.ArrayLike) -> RobotModel:
    """A RobotModel on the corrected chain (same base and tip frames, same name so `home()` still works)."""
    robot = error_model.robot
    corrected = RobotModel(error_model.apply(parameters), robot.base_frame, robot.tip_frame, name=robot.name)
    corrected.acceleration_limits = robot.acceleration_limits.copy()
    return corrected


# ---- URDF writing ------------------------------------------------------------------------------------------------
_JOINT = re.compile(r"<joint\b(?P<attrs>[^>]*?)(?P<body>/>|>.*?</joint\s*>)", re.DOTALL)
_ORIGIN = re.compile(r"<origin\b[^>]*?/>|<origin\b[^>]*?>\s*</origin\s*>", re.DOTALL)


def _attribute(attrs: str, name: str) -> str | None:
    found = re.search(rf"\b{name}\s*=\s*(['\"])(.*?)\1", attrs, re.DOTALL)
    return found.group(2) if found else None


def _kinematic_joint_spans(xml: str) -> dict[str, tuple[int, int, str]]:
    """Joint name -> (start, end, child link) of each kinematic <joint> element.

    A <joint> inside <transmission> carries no type attribute; only typed joints are kinematic.
    """
    spans = {}
    for match in _JOINT.finditer(xml):
        attrs = match.group("attrs")
        name, kind = _attribute(attrs, "name"), _attribute(attrs, "type")
        if name is None or kind is None:
            continue
        child = re.search(r"<child\b([^>]*)>", match.group("body"))
        spans[name] = (match.start(), match.end(), _attribute(child.group(1), "link") if child else "")
    return spans


def _format(values: np.ndarray) -> str:
    # repr-precision numbers: the written URDF must reproduce the corrected FK to ~1e-15, not to 6 digits.
    return " ".join(repr(float(v)) for v in values)


def _replace_origin(element: str, delta: np.ndarray) -> str:
    found = _ORIGIN.search(element)
    xyz = np.zeros(3) if found is None else np.array((_attribute(found.group(0), "xyz") or "0 0 0").split(), float)
    rpy = np.zeros(3) if found is None else np.array((_attribute(found.group(0), "rpy") or "0 0 0").split(), float)
    origin = pin.SE3(pin.rpy.rpyToMatrix(rpy), xyz) * pin.exp6(delta)
    tag = (f'<origin xyz="{_format(origin.translation)}" '
           f'rpy="{_format(pin.rpy.matrixToRpy(origin.rotation))}"/>')
    if found is None:       # URDF default origin is identity; insert one right after the opening tag
        head_end = element.index(">") + 1
        return element[:head_end] + tag + element[head_end:]
    return element[:found.start()] + tag + element[found.end():]


def write_corrected_urdf(xml: str, error_model: JointOriginErrorModel, parameters: npt.ArrayLike) -> str:
    """The URDF text `xml` with the <origin> of every chain joint (and of the tip link's fixed joint when a tool
    offset is identified) replaced by `origin * exp6(delta)`; everything else is left byte for byte."""
    joints, tool = error_model.split(parameters)
    spans = _kinematic_joint_spans(xml)
    edits = {}
    for k, j in enumerate(error_model.joint_ids):
        name = error_model.robot.model.names[j]
        if name not in spans:
            raise ModelError(f"joint '{name}' of the calibrated chain is not a <joint> of the URDF")
        edits[name] = joints[k]
    if error_model.tool_dofs:
        tip = error_model.robot.tip_frame
        owners = [name for name, (_, _, child) in spans.items() if child == tip]
        if not owners:
            raise ModelError(f"tip frame '{tip}' is not the child link of a URDF joint; the tool offset cannot "
                             "be written into the URDF (calibrate with tool_dofs=0 or add a fixed tool link)")
        edits[owners[0]] = tool
    out, cursor = [], 0
    for name, (start, end, _) in sorted(spans.items(), key=lambda item: item[1][0]):
        if name in edits:
            out += [xml[cursor:start], _replace_origin(xml[start:end], edits[name])]
            cursor = end
    return "".join(out) + xml[cursor:]
