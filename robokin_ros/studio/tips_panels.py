"""The panels of a robot with several tips: the hands' mode (independent / coordinated / relative) in the tool
folder, every tip's pose (the first tip's on the usual tool line), the held object's pose, and the measures per tip.
"""
from __future__ import annotations

from typing import Protocol

import numpy as np
import viser

from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.config import TIP_MODES
from robokin_ros.studio.joint_colours import JointShade
from robokin_ros.studio.panels import ArmPanels, StudioActions, tool_pose_text

MODE_HELP = {
    "independent": "each hand's gizmo drives that hand; the other holds still",
    "coordinated": "the object gizmo (between the hands) moves both hands rigidly",
    "relative": "the first hand's gizmo carries the other along; the other's moves it relative to the first",
}


class TipsActions(StudioActions, Protocol):
    def set_tips_mode(self, mode: str) -> None: ...


class TipsPanels(ArmPanels):
    """ArmPanels plus the hands' mode and per-tip text."""

    def __init__(self, server: viser.ViserServer, robot: RobotModel, actions: TipsActions,
                 render: str = "standard") -> None:
        super().__init__(server, robot, actions, render)
        self.mode.on_update(lambda event: actions.set_tips_mode(self.mode.value) if event.client is not None
                            else None)

    def _add_tool_extras(self) -> None:
        gui = self.server.gui
        self.mode = gui.add_dropdown("Hands", TIP_MODES, initial_value=TIP_MODES[0])
        self.mode_help = gui.add_markdown(MODE_HELP[TIP_MODES[0]])
        self.tips_text = gui.add_markdown("")

    def show_mode(self, mode: str) -> None:
        self.mode.value = mode
        self.mode_help.content = MODE_HELP[mode]

    def show_arm(self, positions: np.ndarray, shades: list[JointShade], status: str) -> None:
        super().show_arm(positions, shades, status)
        robot = self.robot
        lines = [f"**{robot.tip_frame}** (the tool line above)"]
        for tip in robot.tip_frames[1:]:
            lines += [f"**{tip}**", tool_pose_text(robot.fk(positions, tip))]
        self.tips_text.content = "  \n".join(lines)
