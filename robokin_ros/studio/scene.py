"""The arm's 3D scene in viser: link meshes, the tool gizmo, the target, capability overlays and keyframes.

Every node lives under "/arm", so switching robots or views removes or hides one subtree. Meshes are sent once;
an update moves them (pose per link) and recolours only the links whose colour changed, so the traffic per update
is a few hundred bytes per link however heavy the meshes are.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import viser

from robokin_ros.studio.joint_colours import JointShade
from robokin_ros.studio.overlays import ELLIPSOID_ITEMS, OverlayFrame
from robokin_ros.studio.render_style import RENDER_STYLES, RenderStyle, apply_to_meshes
from robokin_ros.studio.robot_visuals import RobotVisuals

ROOT = "/arm"
GIZMO = f"{ROOT}/gizmo"
ARROW_LENGTH = 0.15          # [m] the direction arrow of the measures panel


def wxyz(rotation: np.ndarray) -> np.ndarray:
    """(4,) w, x, y, z of a rotation matrix (viser's order)."""
    x, y, z, w = pin.Quaternion(rotation).coeffs()
    return np.array([w, x, y, z])


def rotation_of(quaternion_wxyz) -> np.ndarray:
    w, x, y, z = (float(c) for c in quaternion_wxyz)
    return pin.Quaternion(w, x, y, z).normalized().toRotationMatrix()


def _rgb(rgba) -> tuple[int, int, int]:
    return tuple(int(round(255 * c)) for c in rgba[:3])


class ArmScene:
    """Scene nodes of one robot; `update` is called with the lock held by the app's loop."""

    def __init__(self, server: viser.ViserServer, visuals: RobotVisuals, style: RenderStyle = RENDER_STYLES["standard"],
                 gizmo_scale: float = 0.18) -> None:
        self.server, self.visuals, self.style = server, visuals, style
        scene = server.scene
        self.links = [scene.add_mesh_simple(f"{ROOT}/links/{i}_{mesh.name}", mesh.vertices, mesh.faces,
                                            color=_rgb(mesh.rgba), flat_shading=False)
                      for i, mesh in enumerate(visuals.meshes)]
        self._link_colours: list[tuple[int, int, int] | None] = [None] * len(self.links)
        self.tool = scene.add_frame(f"{ROOT}/tool", axes_length=0.08, axes_radius=0.004)
        self.target = scene.add_frame(f"{ROOT}/target", axes_length=0.05, axes_radius=0.002, visible=False)
        self.gizmo = scene.add_transform_controls(GIZMO, scale=gizmo_scale, depth_test=False, disable_rotations=True)
        self.overlays = OverlayNodes(server, f"{ROOT}/overlays")
        self.set_style(style)
        self.keyframes: list[viser.FrameHandle] = []
        self.grid = scene.add_grid(f"{ROOT}/grid", width=2.0, height=2.0, cell_size=0.1, section_size=0.5)

    def set_style(self, style: RenderStyle) -> None:
        self.style = style
        apply_to_meshes(self.links, style)
        self.overlays.set_style(style)

    def set_visible(self, visible: bool) -> None:
        for handle in [*self.links, self.tool, self.gizmo, self.grid]:
            handle.visible = visible
        if not visible:
            self.target.visible = False
            self.overlays.hide()
        for frame in self.keyframes:
            frame.visible = visible

    def update_arm(self, positions: np.ndarray, shades: list[JointShade], target: pin.SE3 | None) -> None:
        translations, quaternions = self.visuals.poses(positions)
        for i, link in enumerate(self.links):
            link.position, link.wxyz = translations[i], quaternions[i]
            joint = self.visuals.meshes[i].joint_index
            colour = shades[joint].rgb if joint >= 0 else None
            if colour is not None and colour != self._link_colours[i]:
                link.color = colour
                self._link_colours[i] = colour
        tool = self.visuals.robot.fk(positions)
        self.tool.position, self.tool.wxyz = tool.translation, wxyz(tool.rotation)
        self.target.visible = target is not None
        if target is not None:
            self.target.position, self.target.wxyz = target.translation, wxyz(target.rotation)

    def update_overlays(self, frame: OverlayFrame | None, show_direction: bool) -> None:
        self.overlays.update(frame, show_direction)

    def update_tips(self, session) -> None:
        """What a robot with several tips draws besides the first tip (tips_scene.py); one tip: nothing."""

    def show_keyframes(self, poses: list[pin.SE3]) -> None:
        for frame in self.keyframes[len(poses):]:
            frame.remove()
        del self.keyframes[len(poses):]
        for k in range(len(self.keyframes), len(poses)):
            pose = poses[k]
            self.keyframes.append(self.server.scene.add_frame(
                f"{ROOT}/keyframes/{k}", axes_length=0.04, axes_radius=0.003, position=pose.translation,
                wxyz=wxyz(pose.rotation)))

    def remove(self) -> None:
        """Take every node of this robot out of the scene (before another robot is loaded)."""
        for handle in [*self.links, self.tool, self.target, self.gizmo, self.grid, *self.keyframes]:
            handle.remove()
        self.overlays.remove()


class OverlayNodes:
    """The capability overlays of one tip: an ellipsoid per item, the force polytope and the direction arrow, all
    under `prefix` and drawn at the tip."""

    def __init__(self, server: viser.ViserServer, prefix: str) -> None:
        self.server, self.prefix = server, prefix
        scene = server.scene
        self.style = RENDER_STYLES["standard"]
        self.ellipsoids = {item: scene.add_icosphere(f"{prefix}/{item}", radius=0.5, subdivisions=3,
                                                     color=(255, 255, 255), opacity=0.35, visible=False)
                           for item in ELLIPSOID_ITEMS}
        self.polytope: viser.MeshHandle | None = None
        self.direction = scene.add_arrows(f"{prefix}/direction", points=np.zeros((1, 2, 3)),
                                          colors=(30, 30, 30), shaft_radius=0.003, head_radius=0.008,
                                          head_length=0.02, visible=False)

    def set_style(self, style: RenderStyle) -> None:
        self.style = style
        apply_to_meshes([*self.ellipsoids.values()] + ([self.polytope] if self.polytope else []), style)

    def hide(self) -> None:
        for handle in self.ellipsoids.values():
            handle.visible = False
        if self.polytope is not None:
            self.polytope.visible = False
        self.direction.visible = False

    def update(self, frame: OverlayFrame | None, show_direction: bool) -> None:
        at = frame.analysis.tool_position if frame is not None else np.zeros(3)
        for item, handle in self.ellipsoids.items():
            drawn = frame.ellipsoids.get(item) if frame is not None else None
            handle.visible = drawn is not None
            if drawn is not None:
                handle.position, handle.wxyz = at, wxyz(drawn.rotation)
                handle.scale = tuple(float(d) for d in drawn.diameters)
                handle.color, handle.opacity = _rgb(drawn.rgba), float(drawn.rgba[3])
        self._update_polytope(frame, at)
        self.direction.visible = frame is not None and show_direction
        if frame is not None and show_direction:
            self.direction.points = np.array([[at, at + ARROW_LENGTH * frame.direction]])

    def _update_polytope(self, frame: OverlayFrame | None, at: np.ndarray) -> None:
        shown = frame.polytope_shown if frame is not None else None
        if shown is None or len(shown.triangles) == 0:
            if self.polytope is not None:
                self.polytope.visible = False
            return
        # the hull's vertex count changes with the configuration: a new mesh under the same name replaces it
        self.polytope = self.server.scene.add_mesh_simple(
            f"{self.prefix}/polytope", (shown.points + at).astype(np.float32), shown.triangles.astype(np.uint32),
            color=_rgb(shown.rgba), opacity=float(shown.rgba[3]), side="double", flat_shading=True,
            material=self.style.material, cast_shadow=False, receive_shadow=False)

    def remove(self) -> None:
        for handle in [*self.ellipsoids.values(), self.direction] + ([self.polytope] if self.polytope else []):
            handle.remove()
