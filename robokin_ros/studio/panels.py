"""The arm view's GUI in viser: joint sliders, the tool and gizmo controls, overlays, measures, keyframes.

The panels hold no state of their own: every user action calls one method of the app (`StudioActions`), and the
app pushes what to show through `show_*`. Values the server assigns (sliders following the servo) fire viser's
callbacks with no client; those are ignored, so only a person's change moves the arm.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import pinocchio as pin
import viser

from robokin_ros.core.robot import RobotModel
from robokin_ros.studio.browser_js import UPDATE_LINE
from robokin_ros.studio.joint_colours import JointShade
from robokin_ros.studio.overlays import LABELS, OVERLAY_ITEMS, OverlayFrame
from robokin_ros.studio.render_style import RENDER_STYLES

DEFAULT_OVERLAYS = ("velocity", "force_weighted")
HELP = """| key | action |
|---|---|
| T | gizmo: translate |
| R | gizmo: rotate |
| Q | gizmo axes: tool (local) / base (world) |
| K | record a keyframe |
| P | play the keyframes (MoveL, MoveJ where a line fails) |
| C | clear the keyframes |
| X | export the force polytope as STL |
| ? | this help |"""


class StudioActions(Protocol):
    """What the panels ask the app to do."""

    def set_joint(self, index: int, value: float) -> None: ...
    def set_gizmo_mode(self, rotate: bool) -> None: ...
    def toggle_gizmo_frame(self) -> None: ...
    def set_overlays(self, shown: frozenset[str], direction: np.ndarray, show_direction: bool) -> None: ...
    def export_stl(self, client: viser.ClientHandle | None) -> None: ...
    def screenshot(self, client: viser.ClientHandle | None) -> None: ...
    def record_keyframe(self) -> None: ...
    def play_keyframes(self) -> None: ...
    def clear_keyframes(self) -> None: ...
    def set_render(self, name: str) -> None: ...


def is_prismatic(robot: RobotModel, index: int) -> bool:
    return "P" in robot.model.joints[index + 1].shortname().replace("JointModel", "")


def slider_value(robot: RobotModel, index: int, value: float) -> float:
    """A joint value [rad | m] as its slider shows it [deg | mm]."""
    return value * 1e3 if is_prismatic(robot, index) else math.degrees(value)


def joint_value(robot: RobotModel, index: int, shown: float) -> float:
    """A slider's value [deg | mm] as the joint value [rad | m]."""
    return shown * 1e-3 if is_prismatic(robot, index) else math.radians(shown)


def tool_pose_text(pose: pin.SE3) -> str:
    """The tool pose line the panel shows (and the browser tests read)."""
    x, y, z = pose.translation
    roll, pitch, yaw = np.degrees(pin.rpy.matrixToRpy(pose.rotation))
    return (f"tool x = {x:.4f} m, y = {y:.4f} m, z = {z:.4f} m  \n"
            f"roll = {roll:.2f} deg, pitch = {pitch:.2f} deg, yaw = {yaw:.2f} deg")


def measures_table(frame: OverlayFrame) -> str:
    """The measures panel's markdown: the table, then why an overlay switched on is not drawn."""
    rows = frame.measures()
    unavailable = [f"{LABELS[item]}: {why}" for item, why in frame.unavailable.items()]
    table = "\n".join(f"| {r.name} | {r.value} |" for r in rows)
    notes = "\n\n" + "  \n".join(unavailable) if unavailable else ""
    return "| measure | value |\n|---|---|\n" + table + notes


class ArmPanels:
    """The GUI of one robot (rebuilt when the robot changes)."""

    def __init__(self, server: viser.ViserServer, robot: RobotModel, actions: StudioActions,
                 render: str = "standard") -> None:
        self.server, self.robot, self.actions = server, robot, actions
        gui = server.gui
        self.folders = []
        # per slider, the value [deg | mm] the arm was last given from it or shown on it: while the slider holds
        # another value, a person's entry is in flight (being typed, or not yet applied) and is not overwritten
        self._settled: list[float] = []
        with self._folder("Tool and gizmo"):
            self.tool_text = gui.add_markdown(tool_pose_text(robot.fk(robot.home())))
            self.translate = gui.add_button("Translate (T)")
            self.rotate = gui.add_button("Rotate (R)")
            self.frame = gui.add_button("Gizmo axes: tool (Q)")
            self._add_tool_extras()
            self.status = gui.add_markdown("ready")
        with self._folder("Joints"):
            self.sliders = [self._slider(j) for j in range(robot.n)]
            self.shares = gui.add_markdown("")
        with self._folder("Capability"):
            self.overlay_boxes = {item: gui.add_checkbox(LABELS[item], item in DEFAULT_OVERLAYS)
                                  for item in OVERLAY_ITEMS}
            self.direction = gui.add_vector3("Direction", (0.0, 0.0, 1.0), step=0.1)
            self.show_direction = gui.add_checkbox("Show direction", True)
            self.measures = gui.add_markdown("")
            self.export = gui.add_button("Export STL (X)")
            self.shot = gui.add_button("Screenshot")
        with self._folder("Keyframes"):
            self.record = gui.add_button("Record keyframe (K)")
            self.play = gui.add_button("Play (P)")
            self.clear = gui.add_button("Clear keyframes (C)")
            self.keyframe_text = gui.add_markdown("no keyframes")
        with self._folder("Help and performance"):
            self.help = gui.add_button("Shortcuts (?)")
            self.render = gui.add_dropdown("Rendering", tuple(RENDER_STYLES), initial_value=render)
            self.performance = gui.add_markdown(f"{UPDATE_LINE}0 @ 0")
        self._wire()

    def _add_tool_extras(self) -> None:
        """More controls in the tool folder (a robot with several tips: tips_panels.py); one tip: none."""

    def _folder(self, label: str, expand: bool = True):
        folder = self.server.gui.add_folder(label, expand_by_default=expand)
        self.folders.append(folder)
        return folder

    def _slider(self, j: int) -> viser.GuiSliderHandle:
        robot = self.robot
        lower, upper = robot.limits.lower[j], robot.limits.upper[j]
        if not (np.isfinite(lower) and np.isfinite(upper)):
            lower, upper = -math.pi, math.pi
        unit = "mm" if is_prismatic(robot, j) else "deg"
        low, high = slider_value(robot, j, lower), slider_value(robot, j, upper)
        slider = self.server.gui.add_slider(f"{robot.joint_names[j]} [{unit}]", min=round(low, 1), max=round(high, 1),
                                            step=0.1, initial_value=round(slider_value(robot, j, robot.home()[j]), 1))
        self._settled.append(slider.value)

        @slider.on_update
        def _(event: viser.GuiEvent) -> None:
            if event.client is None:
                return
            typed = slider.value
            # the number box sends every keystroke: an out-of-range value is a prefix still being typed ("-3" of
            # "-39" when the range ends at -4); it is not applied, and the box clamps it itself when it loses
            # the focus (Enter blurs it, browser_js), which sends the clamped value here
            if slider.min <= typed <= slider.max:
                self._settled[j] = typed
                self.actions.set_joint(j, joint_value(robot, j, typed))
        return slider

    def _wire(self) -> None:
        a = self.actions
        self.translate.on_click(lambda _: a.set_gizmo_mode(rotate=False))
        self.rotate.on_click(lambda _: a.set_gizmo_mode(rotate=True))
        self.frame.on_click(lambda _: a.toggle_gizmo_frame())
        self.export.on_click(lambda event: a.export_stl(event.client))
        self.shot.on_click(lambda event: a.screenshot(event.client))
        self.record.on_click(lambda _: a.record_keyframe())
        self.play.on_click(lambda _: a.play_keyframes())
        self.clear.on_click(lambda _: a.clear_keyframes())
        self.help.on_click(lambda event: self._show_help(event.client))
        self.render.on_update(lambda event: a.set_render(self.render.value) if event.client is not None else None)
        for handle in [*self.overlay_boxes.values(), self.direction, self.show_direction]:
            handle.on_update(lambda _: self.overlays_changed())

    def overlays_changed(self) -> None:
        shown = frozenset(item for item, box in self.overlay_boxes.items() if box.value)
        self.actions.set_overlays(shown, np.array(self.direction.value, float), self.show_direction.value)

    def _show_help(self, client: viser.ClientHandle | None) -> None:
        targets = [client] if client is not None else list(self.server.get_clients().values())
        for target in targets:
            with target.gui.add_modal("Keyboard shortcuts") as modal:
                target.gui.add_markdown(HELP)
                target.gui.add_button("Close").on_click(lambda _: modal.close())

    # ---- what the app shows ----------------------------------------------------------------------------
    def show_arm(self, positions: np.ndarray, shades: list[JointShade], status: str) -> None:
        robot = self.robot
        self.tool_text.content = tool_pose_text(robot.fk(positions))
        for j, slider in enumerate(self.sliders):
            if slider.value != self._settled[j]:
                continue            # rewriting a box mid-entry turned "-39" into -49 (issue 24 item 11)
            slider.value = self._settled[j] = float(np.clip(round(slider_value(robot, j, positions[j]), 1),
                                                            slider.min, slider.max))
        self.shares.content = "  \n".join(
            f"{s.name}: " + ("continuous" if math.isnan(s.share) else f"{100 * s.share:.0f} % of range")
            + (" — LOCKED" if s.locked else "") for s in shades)
        self.status.content = status

    def show_frame_mode(self, local_axes: bool) -> None:
        self.frame.label = f"Gizmo axes: {'tool' if local_axes else 'base'} (Q)"

    def show_measures(self, frame: OverlayFrame, others: Sequence[OverlayFrame] = ()) -> None:
        """The measures of the first tip, and of the `others` (a robot with several tips) each under its name."""
        if not others:
            self.measures.content = measures_table(frame)
            return
        self.measures.content = "\n\n".join(f"**{f.analysis.tip}**\n\n{measures_table(f)}" for f in (frame, *others))

    def show_keyframes(self, text: str) -> None:
        self.keyframe_text.content = text

    def show_performance(self, update: int, sent_ms: int, server_ms: float) -> None:
        self.performance.content = f"{UPDATE_LINE}{update} @ {sent_ms}  \nserver {server_ms:.1f} ms per update"

    def remove(self) -> None:
        for folder in self.folders:
            folder.remove()
