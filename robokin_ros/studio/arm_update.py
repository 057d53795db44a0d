"""One update of the arm view: let time pass, then push the arm, the overlays and the panels to the browser.

Nothing is sent when nothing changed (same positions, same overlay settings), so an idle studio is silent; when
something did, the scene goes out in one viser batch, so the browser never draws a half update. The panels' text
(tool pose, sliders, measures) follows at most `panel_rate` times a second while the arm moves (the render
preset's, render_style.py), and once more when it stops: re-rendering text costs the page as much as a frame, and
nobody reads numbers at 60 Hz.
The update counter and its send time go to the Performance folder, where the page's probe (browser_js) reads
them to measure what the browser sees.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import viser

from robokin_ros.studio.joint_colours import joint_shades
from robokin_ros.studio.overlays import OverlayBuilder, OverlayFrame
from robokin_ros.studio.panels import DEFAULT_OVERLAYS, ArmPanels
from robokin_ros.studio.scene import ArmScene
from robokin_ros.studio.session import ArmSession

PANEL_RATE = 10.0          # [Hz] the default; the render preset sets its own


@dataclass
class ViewSettings:
    """What the person chose to see."""

    shown: frozenset[str] = frozenset(DEFAULT_OVERLAYS)
    direction: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    show_direction: bool = True


@dataclass
class ArmView:
    """Everything that belongs to one loaded robot."""

    session: ArmSession
    overlays: OverlayBuilder
    scene: ArmScene
    panels: ArmPanels


class ArmUpdater:
    """Pushes the arm view when it changed; counts updates and their server time."""

    def __init__(self, panel_rate: float = PANEL_RATE) -> None:
        self.panel_rate = panel_rate    # [Hz]
        self.updates = 0
        self.server_ms = 0.0            # [ms] the last update's time on the server
        self.frame: OverlayFrame | None = None
        self.other_tips: list[OverlayFrame] = []       # a robot with several tips: the overlays of the others
        self._positions: np.ndarray | None = None
        self._panels_at = -np.inf          # [s] monotonic time the panels were last sent
        self._panels_stale = False
        self.dirty = True

    def run(self, server: viser.ViserServer, arm: ArmView, settings: ViewSettings, status: str) -> bool:
        """Send the view if the positions or settings changed since the last run; True when the scene was sent."""
        started = time.perf_counter()
        session = arm.session
        q = session.positions
        if not self.dirty and self._positions is not None and np.array_equal(q, self._positions):
            if self._panels_stale:                  # the arm stopped: the panels show where it stopped
                with server.atomic():
                    self._send_panels(arm, status)
            return False
        self.dirty, self._positions = False, q.copy()
        shades = joint_shades(session.robot, q, session.locked_joints)
        self.frame = arm.overlays.build(q, settings.shown, settings.direction)
        self.other_tips = arm.overlays.build_other_tips(q, settings.shown, settings.direction)
        with server.atomic():
            arm.scene.update_arm(q, shades, session.target())
            arm.scene.update_overlays(self.frame, settings.show_direction)
            if self.other_tips:
                arm.scene.update_tip_overlays(self.other_tips, settings.show_direction)
            arm.scene.update_tips(session)
            self._shades, self._panels_stale = shades, True
            if time.monotonic() - self._panels_at >= 1.0 / self.panel_rate:
                self._send_panels(arm, status)
            self.updates += 1
            arm.panels.show_performance(self.updates, int(time.time() * 1e3), self.server_ms)
        self.server_ms = (time.perf_counter() - started) * 1e3
        return True

    def _send_panels(self, arm: ArmView, status: str) -> None:
        arm.panels.show_arm(self._positions, self._shades, status)
        if self.other_tips:
            arm.panels.show_measures(self.frame, self.other_tips)
        else:
            arm.panels.show_measures(self.frame)
        self._panels_at, self._panels_stale = time.monotonic(), False
