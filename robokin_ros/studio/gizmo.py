"""The tool gizmo's modes and the pose target it stands for.

viser's gizmo always turns about its own axes. To offer the base's axes too ("world" mode) the gizmo is shown
unrotated and the target's orientation is kept as an offset: target rotation = gizmo rotation @ offset, so a turn
of the gizmo is a turn about base axes. With the tool's axes ("local" mode) the gizmo carries the target's
orientation and the offset is the identity.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import viser

from robokin_ros.studio.scene import rotation_of, wxyz

IDENTITY_WXYZ = np.array([1.0, 0.0, 0.0, 0.0])


class Gizmo:
    """State of one gizmo handle: axes (tool or base), translate or rotate, dragged or at rest."""

    def __init__(self, handle: viser.TransformControlsHandle, local_axes: bool = True, rotate: bool = False) -> None:
        self.handle = handle
        self.local_axes = local_axes
        self.dragging = False
        self._offset = np.eye(3)                  # (3, 3) see the module docstring
        self._resting_on: np.ndarray | None = None
        self.set_rotate(rotate)

    @property
    def rotate(self) -> bool:
        return not self.handle.disable_rotations

    def set_rotate(self, rotate: bool) -> None:
        """Rotate mode shows only the rings; translate mode only the arrows and planes."""
        self.handle.disable_rotations = not rotate
        self.handle.disable_axes = self.handle.disable_sliders = rotate

    def target(self) -> pin.SE3:
        """The pose the gizmo stands for (base frame)."""
        return pin.SE3(rotation_of(self.handle.wxyz) @ self._offset, np.array(self.handle.position, float))

    def place(self, pose: pin.SE3) -> None:
        """Put the gizmo on `pose`, with the tool's or the base's axes."""
        self.handle.position = pose.translation
        self.handle.wxyz = wxyz(pose.rotation) if self.local_axes else IDENTITY_WXYZ
        self._offset = np.eye(3) if self.local_axes else pose.rotation.copy()

    def rest_on(self, tool: pin.SE3, positions: np.ndarray) -> None:
        """Place the gizmo on the tool unless it already rests there for these joint positions (nothing is sent for
        an arm that did not move)."""
        if self._resting_on is None or not np.array_equal(self._resting_on, positions):
            self.place(tool)
            self._resting_on = positions.copy()

    def moved(self) -> None:
        """The gizmo was dragged or set: it no longer rests on the tool."""
        self._resting_on = None

    def toggle_axes(self) -> None:
        target = self.target()
        self.local_axes = not self.local_axes
        self.place(target)
