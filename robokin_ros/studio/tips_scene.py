"""The scene of a robot with several tips: besides what the first tip has in ArmScene (its tool frame, target and
gizmo under the same names as a one-tip robot's), every other tip gets its own under "/arm/tips/<k>", with its
capability overlays, and the held object gets a frame and a gizmo under "/arm/object" (shown in coordinated mode).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import viser

from robokin_ros.studio.overlays import OverlayFrame
from robokin_ros.studio.render_style import RENDER_STYLES, RenderStyle
from robokin_ros.studio.robot_visuals import RobotVisuals
from robokin_ros.studio.scene import ROOT, ArmScene, OverlayNodes, wxyz
from robokin_ros.studio.tips_session import TipsSession

TIPS, OBJECT = f"{ROOT}/tips", f"{ROOT}/object"


def _place(handle, pose: pin.SE3 | None) -> None:
    handle.visible = pose is not None
    if pose is not None:
        handle.position, handle.wxyz = pose.translation, wxyz(pose.rotation)


class TipNodes:
    """A tip's tool frame, target frame, gizmo and overlays (the tips after the first)."""

    def __init__(self, server: viser.ViserServer, prefix: str, gizmo_scale: float) -> None:
        scene = server.scene
        self.tool = scene.add_frame(f"{prefix}/tool", axes_length=0.08, axes_radius=0.004)
        self.target = scene.add_frame(f"{prefix}/target", axes_length=0.05, axes_radius=0.002, visible=False)
        self.gizmo = scene.add_transform_controls(f"{prefix}/gizmo", scale=gizmo_scale, depth_test=False,
                                                  disable_rotations=True)
        self.overlays = OverlayNodes(server, f"{prefix}/overlays")

    def handles(self) -> list:
        return [self.tool, self.target, self.gizmo]


class TipsScene(ArmScene):
    """ArmScene plus the other tips' nodes and the held object's; `update_tips` places them."""

    def __init__(self, server: viser.ViserServer, visuals: RobotVisuals, style: RenderStyle = RENDER_STYLES["standard"],
                 gizmo_scale: float = 0.18) -> None:
        tips = visuals.robot.tip_frames
        self.others = [TipNodes(server, f"{TIPS}/{k}", gizmo_scale) for k in range(1, len(tips))]
        super().__init__(server, visuals, style, gizmo_scale)
        scene = server.scene
        self.object_frame = scene.add_frame(f"{OBJECT}/frame", axes_length=0.1, axes_radius=0.005, visible=False)
        self.object_target = scene.add_frame(f"{OBJECT}/target", axes_length=0.06, axes_radius=0.002, visible=False)
        self.object_gizmo = scene.add_transform_controls(f"{OBJECT}/gizmo", scale=gizmo_scale * 1.3,
                                                         depth_test=False, disable_rotations=True, visible=False)
        # the grasp bar: a line from the object origin to each hand, so which frame the hands hold is visible
        self.grasp_lines = scene.add_line_segments(f"{OBJECT}/grasp", points=np.zeros((len(tips), 2, 3)),
                                                   colors=(200, 120, 20), thickness=0.004, visible=False)
        self._coordinated = False

    @property
    def tip_gizmos(self) -> list[viser.TransformControlsHandle]:
        """Every tip's gizmo, in robot.tip_frames order."""
        return [self.gizmo, *(nodes.gizmo for nodes in self.others)]

    def set_style(self, style: RenderStyle) -> None:
        super().set_style(style)
        for nodes in self.others:
            nodes.overlays.set_style(style)

    def set_visible(self, visible: bool) -> None:
        super().set_visible(visible)
        for nodes in self.others:
            nodes.tool.visible = visible
            if not visible:
                nodes.target.visible = False
                nodes.overlays.hide()
        self.show_mode(self._coordinated, visible)

    def show_mode(self, coordinated: bool, visible: bool = True) -> None:
        """Coordinated mode: the object gizmo replaces the tips' gizmos."""
        self._coordinated = coordinated
        for gizmo in self.tip_gizmos:
            gizmo.visible = visible and not coordinated
        for handle in (self.object_gizmo, self.object_frame, self.grasp_lines):
            handle.visible = visible and coordinated

    def update_tips(self, session: TipsSession) -> None:
        poses, targets = session.tip_poses(), session.tip_targets()
        for nodes, pose, target in zip(self.others, poses[1:], targets[1:]):
            _place(nodes.tool, pose)
            _place(nodes.target, target)
        base_T_object = session.object_pose()
        if base_T_object is not None:
            _place(self.object_frame, base_T_object)
            self.grasp_lines.points = np.array([[base_T_object.translation, pose.translation] for pose in poses])
        _place(self.object_target, session.object_target())

    def update_tip_overlays(self, frames: list[OverlayFrame], show_direction: bool) -> None:
        for nodes, frame in zip(self.others, frames):
            nodes.overlays.update(frame, show_direction)

    def remove(self) -> None:
        super().remove()
        for nodes in self.others:
            for handle in nodes.handles():
                handle.remove()
            nodes.overlays.remove()
        for handle in (self.object_frame, self.object_target, self.object_gizmo, self.grasp_lines):
            handle.remove()
