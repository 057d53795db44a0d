"""robokin studio: the app that wires the viser server, the arm session, overlays, keyframes and the 2R view.

One lock guards the state: viser runs GUI callbacks on its thread pool, and the update loop (a thread of its own,
`rate` Hz) advances the servo or playback, computes the overlays, and pushes the scene and panels in one atomic
batch. The loop only sends when something changed, so an idle studio costs nothing.

The methods without a leading underscore are the app's own API: the panels call them, keyboard shortcuts reach
them through the panels' buttons, and tests and scripts may call them too (a gizmo drag cannot be scripted in a
browser without knowing where the gizmo is drawn, so `move_gizmo` does what a drag does).

A robot with several tips (dual_panda, dual_panda_torso, baxter) gets a gizmo per tip and one for the held object
(tips_session.py, tips_scene.py, tips_gizmos.py, tips_panels.py); `move_tip_gizmo`, `move_object_gizmo` and
`set_tips_mode` script them. A one-tip robot has none of these: its scene, panels and session are as before.
"""
from __future__ import annotations

import math
import threading
import time

import imageio.v3 as iio
import numpy as np
import pinocchio as pin
import viser

from robokin_ros.core.capability.polytope import stl_bytes
from robokin_ros.core.ik.planar_2r import Planar2R
from robokin_ros.core.errors import RobokinError
from robokin_ros.core.robot import RobotModel
from robokin_ros.studio import browser_js
from robokin_ros.studio.arm_update import ArmUpdater, ArmView, ViewSettings
from robokin_ros.studio.gizmo import Gizmo
from robokin_ros.studio.overlays import OverlayBuilder
from robokin_ros.studio.panels import ArmPanels
from robokin_ros.studio.planar_view import PlanarView
from robokin_ros.studio.robot_info import robot_info
from robokin_ros.studio.robot_picker import RobotPicker
from robokin_ros.studio.render_style import RENDER_STYLES, apply_to_server, page_query
from robokin_ros.studio.robot_visuals import RobotVisuals
from robokin_ros.studio.scene import ArmScene
from robokin_ros.studio.session import TRACKING, ArmSession
from robokin_ros.studio.tips_gizmos import TipsGizmos
from robokin_ros.studio.tips_panels import TipsPanels
from robokin_ros.studio.tips_scene import TipsScene
from robokin_ros.studio.tips_session import OBJECT, TipsSession

ARM_VIEW, PLANAR_VIEW = "Arm", "Planar 2R"
ARM_FOV_DEG, PLANAR_FOV_DEG = 45.0, 75.0    # viser's default 75 degrees make a 1 m arm look distant
LIVE_STALE_AFTER = 0.5    # [s] an older joint state is called out in the status line (live mode)
LIVE_GIZMO_HOLD = 2.0     # [s] in live mode the gizmo stays where it was put this long before resting on the tool
ARM_CAMERA = ((1.7, -1.45, 1.05), (0.2, 0.0, 0.4))      # [m] position, look-at: a Panda-sized arm fills the view
TIPS_CAMERA_OFFSET = (1.8, -0.9, 0.75)    # [m] from the hands' centroid: two arms 0.6 m apart fill the view


def arm_camera(robot: RobotModel) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(position, look-at) [m] framing `robot`: ARM_CAMERA for one tip; several tips are framed around the centroid
    of their home poses (two arms side by side are wider than one)."""
    if len(robot.tip_frames) == 1:
        return ARM_CAMERA
    home = robot.home()
    centre = np.mean([robot.fk(home, tip).translation for tip in robot.tip_frames], axis=0)
    centre[2] -= 0.1
    return tuple(float(c) for c in centre + TIPS_CAMERA_OFFSET), tuple(float(c) for c in centre)


class StudioApp:
    """The studio on one viser server. `start` serves it; `stop` ends it."""

    def __init__(self, robot: str = "panda", base_frame: str = "", tip_frame: str = "", *, host: str = "127.0.0.1",
                 port: int = 8080, rate: float = 60.0, render: str = "standard",
                 triangles: int | None = 0, live=None) -> None:
        if render not in RENDER_STYLES:
            raise RobokinError(f"unknown rendering '{render}'; use one of {sorted(RENDER_STYLES)}")
        self._lock = threading.RLock()
        # triangles: 0 = the render style's budget, None = every triangle of the meshes
        self.rate, self.render = rate, render
        self.triangles = RENDER_STYLES[render].triangles if triangles == 0 else triangles
        self.live = live                       # a LiveRosBridge (live_ros.py), or None: the simulated arm
        self.server = viser.ViserServer(host=host, port=port, verbose=False)
        self.server.gui.configure_theme(control_width="large")
        browser_js.install(self.server)
        apply_to_server(self.server, RENDER_STYLES[render])
        self.view = self.server.gui.add_dropdown("View", (ARM_VIEW, PLANAR_VIEW), initial_value=ARM_VIEW)
        self.view.on_update(lambda _: self._switch_view())
        # a page opened without the preset's pixel density (a typed address) reloads itself with it
        self.server.on_client_connect(lambda client: browser_js.send_pixel_ratio(
            client, RENDER_STYLES[self.render].pixel_ratio, leave_default=True))
        self.picker = RobotPicker(self.server, self.load_robot)
        self.arm: ArmView | None = None
        self.settings = ViewSettings()
        self.updater = ArmUpdater(RENDER_STYLES[render].panel_rate)
        self._local_axes, self._rotate = True, False       # kept across robots
        self._live_sent_at = -np.inf          # [s] monotonic time of the last target sent in live mode
        self._live_age, self._live_stale = math.inf, True     # [s] age of the last joint state (live mode)
        self._running = False
        self._thread: threading.Thread | None = None
        self.load_robot(robot, base_frame, tip_frame)
        if self.arm is None:
            self.server.stop()
            raise RobokinError(self.picker.message)
        # unequal links, so the reachable set is a true annulus (a 0.2 m hole) for the clamping lesson
        self.planar = PlanarView(self.server, self.server.gui.add_folder("Planar 2R"), arm=Planar2R(0.6, 0.4))
        self.planar.set_visible(False)
        self.server.initial_camera.position, self.server.initial_camera.look_at = arm_camera(self.robot)
        self.server.initial_camera.fov = math.radians(ARM_FOV_DEG)

    @property
    def url(self) -> str:
        return f"http://{self.server.get_host()}:{self.server.get_port()}{page_query(RENDER_STYLES[self.render])}"

    @property
    def session(self) -> ArmSession:
        return self.arm.session

    @property
    def robot(self) -> RobotModel:
        return self.arm.session.robot

    # ---- lifecycle ----------------------------------------------------------------------------------------
    def start(self) -> StudioApp:
        self._running = True
        self._thread = threading.Thread(target=self._loop, name="robokin-studio", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._running = False
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        if self.live is not None:
            self.live.stop()
        self.server.stop()

    def _loop(self) -> None:
        period, last = 1.0 / self.rate, time.monotonic()
        while self._running:
            started = time.monotonic()
            try:
                self.tick(started - last)
            except Exception as err:        # the loop must survive anything a tick meets; say what it was
                self._say(f"update failed: {err}")
            last = started
            time.sleep(max(0.0, period - (time.monotonic() - started)))

    def tick(self, dt: float) -> None:
        """One update: `dt` [s] passes for the arm (or the 2R view), then what changed is sent."""
        with self._lock:
            if self.view.value == PLANAR_VIEW:
                self.planar.tick(time.monotonic())
                return
            session = self.arm.session
            if self.live is not None:
                positions, age = self.live.latest_positions()
                if positions is not None:
                    session.positions = positions
                stale = age > LIVE_STALE_AFTER
                if stale != self._live_stale:          # the status line changes although the arm does not move
                    self._live_stale, self.updater.dirty = stale, True
                self._live_age = age
                # the gizmo rests on the measured tool, except while it is dragged or the servo still heads for it
                if not self.gizmo.dragging and time.monotonic() - self._live_sent_at > LIVE_GIZMO_HOLD:
                    self._rest_gizmo()
            else:
                session.advance(dt)
                if self.tips is not None:
                    self.tips.rest(session)
                elif session.mode != TRACKING and not self.gizmo.dragging:
                    self._rest_gizmo()
            self.updater.run(self.server, self.arm, self.settings, self.status_text())

    def status_text(self) -> str:
        """The status the panel shows now (markdown): the live link's, or the session's mode and message."""
        session = self.arm.session
        if self.live is not None:
            problem = self.live.problem()
            problem = f"  \n{problem}" if problem else ""
            if self._live_age == math.inf:
                problem += f"  \nno joint state on {self.live.joint_topic} yet: the arm shown is not the robot"
            elif self._live_stale:
                problem += (f"  \nthe last joint state on {self.live.joint_topic} is {self._live_age:.1f} s old: "
                            "the arm shown may not be where the robot is")
            return f"live ROS: {self.live.status_text() or 'no servo status yet'}{problem}"
        locked = f"  \nlocked: {', '.join(session.locked_joints)}" if session.locked_joints else ""
        return f"**{session.mode}**: {session.message}{locked}"

    def _switch_view(self) -> None:
        with self._lock:
            planar = self.view.value == PLANAR_VIEW
            self.arm.scene.set_visible(not planar)
            for folder in [*self.arm.panels.folders, self.picker.folder]:
                folder.visible = not planar
            self.planar.set_visible(planar)
            self.updater.dirty = True
        for client in self.server.get_clients().values():
            self._frame_camera(client)

    def _frame_camera(self, client: viser.ClientHandle) -> None:
        planar = self.view.value == PLANAR_VIEW
        position, look_at = self.planar.camera_view() if planar else arm_camera(self.robot)
        client.camera.position, client.camera.look_at = position, look_at
        # the 2R view is framed for viser's default field of view, the arm for a narrower one
        client.camera.fov = math.radians(PLANAR_FOV_DEG if planar else ARM_FOV_DEG)

    # ---- robots -------------------------------------------------------------------------------------------
    def load_robot(self, source: str, base_frame: str = "", tip_frame: str = "") -> bool:
        """Load an embedded robot or a URDF file; on failure the current robot stays and the picker says why."""
        try:
            robot = RobotModel.load(source, base_frame, tip_frame)
            visuals = RobotVisuals(robot, triangle_budget=self.triangles)
            several = len(robot.tip_frames) > 1
            session = TipsSession(robot) if several else ArmSession(robot)
            overlays, info = OverlayBuilder(robot), robot_info(robot)
        except (RobokinError, OSError, ValueError) as err:
            self.picker.show_error(f"cannot load '{source}': {err}")
            return False
        with self._lock:
            reframe = self.arm is not None and arm_camera(self.robot) != arm_camera(robot)
            if self.arm is not None:
                self.arm.scene.remove()
                self.arm.panels.remove()
            scene = (TipsScene if several else ArmScene)(self.server, visuals, RENDER_STYLES[self.render])
            panels = (TipsPanels if several else ArmPanels)(self.server, robot, self, self.render)
            self.arm = ArmView(session, overlays, scene, panels)
            self.picker.show_info(info.markdown())
            self._after_load()
        if reframe:             # one arm to two or back: the view is framed again
            self.server.initial_camera.position, self.server.initial_camera.look_at = arm_camera(robot)
            for client in self.server.get_clients().values():
                self._frame_camera(client)
        return True

    def _after_load(self) -> None:
        panels, settings = self.arm.panels, self.settings
        for item, box in panels.overlay_boxes.items():
            box.value = item in settings.shown
        panels.direction.value = tuple(settings.direction)
        panels.show_direction.value = settings.show_direction
        panels.show_frame_mode(self._local_axes)
        self.gizmo = Gizmo(self.arm.scene.gizmo, self._local_axes, self._rotate)
        self.gizmo.handle.on_update(self._gizmo_moved)
        self.tips = None              # a robot with several tips: every gizmo but the first tip's
        if isinstance(self.arm.session, TipsSession):
            self.tips = TipsGizmos(self.arm.scene, self.robot.tip_frames, self.gizmo, self._local_axes, self._rotate,
                                   self._named_gizmo_moved)
            self.arm.scene.show_mode(coordinated=False)
        self._rest_gizmo()
        self.updater.dirty = True
        if self.live is not None:             # the bridge maps joint states onto the new robot's chain
            old = self.live
            old.stop()
            self.live = type(old)(self.robot, old.servo_node, old.joint_topic, old.command)
            self.live.start()

    # ---- the gizmo ----------------------------------------------------------------------------------------
    def _rest_gizmo(self) -> None:
        self.gizmo.rest_on(self.arm.session.tool_pose(), self.arm.session.positions)
        if self.tips is not None:
            self.tips.rest(self.arm.session, everything=True)

    def _gizmo_moved(self, event) -> None:
        with self._lock:
            self.gizmo.dragging = event.phase != "end"
            self.gizmo.moved()
            self._drive(self.gizmo.target())

    def _named_gizmo_moved(self, name: str, event) -> None:
        """A drag of another tip's gizmo or of the object's (robots with several tips)."""
        with self._lock:
            gizmo = self.tips.gizmos[name]
            gizmo.dragging = event.phase != "end"
            gizmo.moved()
            self._drive(gizmo.target(), name)

    def move_gizmo(self, position, wxyz=None) -> None:
        """Move the gizmo as a drag would (position [m], quaternion w, x, y, z in the gizmo's parent, the base)."""
        with self._lock:
            handle = self.gizmo.handle
            handle.position = np.asarray(position, float)
            if wxyz is not None:
                handle.wxyz = np.asarray(wxyz, float)
            self.gizmo.moved()
            self._drive(self.gizmo.target())

    def move_tip_gizmo(self, tip: str, position, wxyz=None) -> None:
        """Move tip `tip`'s gizmo as a drag would (robots with several tips; base frame, quaternion w, x, y, z)."""
        self._move_named(tip, position, wxyz)

    def move_object_gizmo(self, position, wxyz=None) -> None:
        """Move the held object's gizmo as a drag would (coordinated mode; base frame, quaternion w, x, y, z)."""
        self._move_named(OBJECT, position, wxyz)

    def _move_named(self, name: str, position, wxyz) -> None:
        with self._lock:
            if self.tips is None or name not in self.tips.gizmos:
                names = [*self.tips.gizmos] if self.tips is not None else []
                raise RobokinError(f"no gizmo '{name}' on {self.robot.name}"
                                   + (f": its gizmos are {names}" if names else ": it has one tip (move_gizmo)"))
            gizmo = self.tips.gizmos[name]
            gizmo.handle.position = np.asarray(position, float)
            if wxyz is not None:
                gizmo.handle.wxyz = np.asarray(wxyz, float)
            gizmo.moved()
            self._drive(gizmo.target(), name)

    def set_tips_mode(self, mode: str) -> None:
        """Robots with several tips: independent, coordinated (the object gizmo moves both hands as one, the grasp
        taken now) or relative (a hand moves relative to the first, which holds)."""
        with self._lock:
            if self.tips is None:
                raise RobokinError(f"{self.robot.name} has one tip: it has no tips mode")
            try:
                self.arm.session.set_tips_mode(mode)
            except RobokinError as err:
                self._say(str(err))
                self.arm.panels.show_mode(self.arm.session.tips_mode)
                raise
            self.arm.scene.show_mode(coordinated=mode == "coordinated")
            self.arm.panels.show_mode(mode)
            self._rest_gizmo()
            self.updater.dirty = True

    def _drive(self, target: pin.SE3, name: str = "") -> None:
        try:
            if name and self.live is not None:
                raise RobokinError("live ROS mode drives the first tip only: its gizmo sends the pose targets")
            if name:
                self.arm.session.drive_target(name, target)
            elif self.live is not None:
                self.live.send_target(target, self.arm.session.tool_pose())
                self._live_sent_at = time.monotonic()
            else:
                self.arm.session.set_target(target)
        except RobokinError as err:
            self._say(str(err))
        self.updater.dirty = True

    def set_gizmo_mode(self, rotate: bool) -> None:
        with self._lock:
            self._rotate = rotate
            self.gizmo.set_rotate(rotate)
            for gizmo in self.tips.others() if self.tips is not None else ():
                gizmo.set_rotate(rotate)

    def toggle_gizmo_frame(self) -> None:
        with self._lock:
            self.gizmo.toggle_axes()
            self._local_axes = self.gizmo.local_axes
            for gizmo in self.tips.others() if self.tips is not None else ():
                gizmo.toggle_axes()
            self.arm.panels.show_frame_mode(self._local_axes)

    # ---- joints, overlays, exports --------------------------------------------------------------------------
    def set_joint(self, index: int, value: float) -> None:
        """Move one joint (a slider) [rad | m]."""
        self._move(lambda session: session.set_joint(index, value))

    def set_positions(self, positions) -> None:
        """Put the arm at `positions` (n,) [rad | m] at once, as the joint sliders do."""
        self._move(lambda session: session.set_positions(positions))

    def _move(self, change) -> None:
        with self._lock:
            try:
                change(self.arm.session)
            except RobokinError as err:
                self._say(str(err))
            self.gizmo.moved()
            self._rest_gizmo()
            self.updater.dirty = True

    def set_overlays(self, shown: frozenset[str], direction: np.ndarray, show_direction: bool) -> None:
        with self._lock:
            settings = self.settings
            if np.isfinite(direction).all() and np.linalg.norm(direction) > 0:
                settings.direction = np.asarray(direction, float)
            else:
                self._say(f"direction {list(direction)} is not a direction: keeping {list(settings.direction)}")
            settings.shown, settings.show_direction = frozenset(shown), show_direction
            self.updater.dirty = True

    def polytope_stl(self) -> bytes:
        """The force polytope at the current configuration as binary STL [N] (raises RobokinError if none)."""
        with self._lock:
            frame = self.arm.overlays.build(self.arm.session.positions, {"polytope"}, self.settings.direction)
        if frame.polytope is None:
            raise RobokinError(f"no force polytope: {frame.analysis.unavailable_reason}")
        return stl_bytes(frame.polytope)

    def export_stl(self, client: viser.ClientHandle | None) -> None:
        try:
            data = self.polytope_stl()
        except RobokinError as err:
            self._say(str(err), client)
            return
        for target in self._clients(client):
            target.send_file_download("force_polytope.stl", data, save_immediately=True)

    def screenshot(self, client: viser.ClientHandle | None) -> None:
        for target in self._clients(client):
            image = target.get_render(height=720, width=1280, transport_format="png")     # (h, w, 4) RGBA
            target.send_file_download("robokin_studio.png", iio.imwrite("<bytes>", image, extension=".png"),
                                      save_immediately=True)

    def set_render(self, name: str) -> None:
        """Switch the rendering preset ("standard" or "light", see render_style.py)."""
        with self._lock:
            self.render = name
            self.updater.panel_rate = RENDER_STYLES[name].panel_rate
            apply_to_server(self.server, RENDER_STYLES[name])
            self.arm.scene.set_style(RENDER_STYLES[name])
        for client in self.server.get_clients().values():      # open pages reload with the preset's density
            browser_js.send_pixel_ratio(client, RENDER_STYLES[name].pixel_ratio, leave_default=False)

    def _clients(self, client: viser.ClientHandle | None) -> list[viser.ClientHandle]:
        return [client] if client is not None else list(self.server.get_clients().values())

    def _say(self, message: str, client: viser.ClientHandle | None = None) -> None:
        """Tell the person (a notification) and keep it in the status line."""
        with self._lock:
            self.arm.session.message = message
            self.updater.dirty = True
        for target in self._clients(client):
            target.add_notification("robokin studio", message, auto_close_seconds=8.0, color="red")

    # ---- keyframes ----------------------------------------------------------------------------------------
    def record_keyframe(self) -> None:
        with self._lock:
            count = self.arm.session.record_keyframe()
            self.arm.scene.show_keyframes([pose for k in self.arm.session.keyframes.frames for pose in k.shown_poses])
            self.arm.panels.show_keyframes(f"{count} keyframes")

    def play_keyframes(self) -> None:
        with self._lock:
            try:
                playback = self.arm.session.play()
            except RobokinError as err:
                self._say(str(err))
                return
            self.arm.panels.show_keyframes(f"{len(self.arm.session.keyframes)} keyframes; playing "
                                           + playback.summary())
            self.updater.dirty = True

    def clear_keyframes(self) -> None:
        with self._lock:
            self.arm.session.clear_keyframes()
            self.arm.scene.show_keyframes([])
            self.arm.panels.show_keyframes("no keyframes")
            self.updater.dirty = True
