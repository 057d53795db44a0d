"""The "Robot" folder: pick an embedded robot or a URDF file, and the info panel of the loaded one."""
from __future__ import annotations

from collections.abc import Callable

import viser

from robokin_ros.core.embedded import EMBEDDED_ROBOTS

URDF_FILE = "URDF file…"


class RobotPicker:
    """GUI to choose a robot; `load(source, base_frame, tip_frame)` is the app's loader (returns success)."""

    def __init__(self, server: viser.ViserServer, load: Callable[[str, str, str], bool]) -> None:
        gui = server.gui
        self._load = load
        self.message = ""
        self.folder = gui.add_folder("Robot")
        with self.folder:
            self.choice = gui.add_dropdown("Robot", (*EMBEDDED_ROBOTS, URDF_FILE), initial_value="panda")
            self.path = gui.add_text("URDF path", "", visible=False)
            self.base_frame = gui.add_text("Base frame", "", visible=False)
            self.tip_frame = gui.add_text("Tip frame", "", visible=False)
            self.button = gui.add_button("Load robot")
            self.error = gui.add_markdown("", visible=False)
            self.info = gui.add_markdown("")
        self.choice.on_update(lambda _: self._choice_changed())
        self.button.on_click(lambda _: self._load_clicked())

    def _choice_changed(self) -> None:
        custom = self.choice.value == URDF_FILE
        for handle in (self.path, self.base_frame, self.tip_frame):
            handle.visible = custom

    def _load_clicked(self) -> None:
        self.button.disabled = True
        try:
            if self.choice.value == URDF_FILE:
                self._load(self.path.value.strip(), self.base_frame.value.strip(), self.tip_frame.value.strip())
            else:
                self._load(self.choice.value, "", "")
        finally:
            self.button.disabled = False

    def show_info(self, markdown: str) -> None:
        self.message = ""
        self.error.visible = False
        self.info.content = markdown

    def show_error(self, message: str) -> None:
        self.message = message
        self.error.content = f"**Not loaded:** {message}"
        self.error.visible = True
