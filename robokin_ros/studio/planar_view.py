"""The studio's "Planar 2R" view: a thin viser adapter over `planar_2r.Planar2rTeacher`.

The arm is drawn in a vertical plane under the scene frame "/planar_2r", 1.5 m to the side (+y) of the 3D arm,
and faces a camera on the +y side (`camera_view()`), so the planar x axis points right and y points up on screen.
viser runs GUI callbacks on its thread pool while the app's loop calls `tick`, hence one re-entrant lock: a
`.value` written from Python runs the callbacks synchronously on the writing thread, which already holds it.
"""
from __future__ import annotations

import math
import threading
from typing import Any, NamedTuple

import numpy as np
import viser

from robokin_ros.core.ik.planar_2r import Planar2R
from robokin_ros.studio.planar_2r import AnimationConfig, Planar2rNumbers, Planar2rTeacher, format_numbers

ORIGIN = (0.0, 1.5, 0.0)                       # the 2R base in the world [m]
# planar x -> world -x, planar y -> world z, planar z -> world y: a half turn about (0, 1, 1)/sqrt(2)
PLANE_WXYZ = (0.0, 0.0, math.sqrt(0.5), math.sqrt(0.5))
CAMERA_DISTANCE = 2.2                          # [m]: the 1 m reach circle fills ~2/3 of viser's default view
MAX_TICK = 0.1                                 # [s]: a stalled loop resumes the animation instead of jumping it
PLOT_EVERY = 3                                 # ticks per plot update: ~10 Hz is smooth enough for a plot
ARM, GHOST, RING, TARGET, TRACE = (40, 90, 200), (150, 150, 160), (120, 200, 140), (220, 50, 50), (240, 150, 0)


def _xyz(points: np.ndarray, z: float = 0.0) -> np.ndarray:
    """Planar points (..., 2) [m] -> frame points (..., 3) at height z [m]."""
    points = np.asarray(points, dtype=float)
    return np.concatenate([points, np.full(points.shape[:-1] + (1,), z)], axis=-1)


def _chain(points: np.ndarray) -> np.ndarray:
    """Consecutive points (N, 2) -> line segments (max(N-1, 1), 2, 3)."""
    p = _xyz(points if len(points) > 1 else np.repeat(points.reshape(-1, 2)[:1], 2, axis=0))
    return np.stack([p[:-1], p[1:]], axis=1)


def _ring(r_in: float, r_out: float, n: int = 96) -> tuple[np.ndarray, np.ndarray]:
    """A flat annulus mesh: vertices (2n, 3) [m], faces (2n, 3)."""
    a = np.linspace(0.0, 2.0 * math.pi, n, endpoint=False)
    unit = np.stack([np.cos(a), np.sin(a)], axis=1)                                   # (n, 2)
    vertices = _xyz(np.vstack([r_in * unit, r_out * unit]), z=-0.01)
    i, j = np.arange(n), (np.arange(n) + 1) % n
    faces = np.vstack([np.stack([i, j, n + i], 1), np.stack([j, n + j, n + i], 1)])
    return vertices, faces.astype(np.uint32)


def _ribbon(points: np.ndarray, half_width: float = 0.02) -> np.ndarray:
    """Flat quads (4 per link) along the chain base-elbow-tool (3, 2): vertices (8, 3) [m]."""
    quads = []
    for a, b in zip(points[:-1], points[1:]):
        d = b - a
        n = np.array([-d[1], d[0]]) / max(float(np.linalg.norm(d)), 1e-9) * half_width
        quads.append([a - n, b - n, b + n, a + n])
    return _xyz(np.reshape(quads, (-1, 2)), z=-0.005)


class PlanarGui(NamedTuple):
    """The view's widgets, for the app (layout) and for tests that set an input the way a user would."""

    mode: Any                  # dropdown "FK" / "IK"
    elbow: Any                 # dropdown "up" / "down"
    q_sliders: tuple           # "q1 [deg]", "q2 [deg]"
    target_sliders: tuple      # "target x [m]", "target y [m]"
    show_ghost: Any
    show_trace: Any
    run: Any                   # labelled "Run" while paused, "Pause" while running
    step: Any
    reset: Any
    clear_trace: Any
    warning: Any               # markdown, visible only while the target is clamped
    numbers: Any               # markdown in the `format_numbers` format
    plots: tuple               # uPlot: joint velocities, tool velocities


RIBBON_FACES = np.array([[0, 1, 2], [0, 2, 3], [4, 5, 6], [4, 6, 7]], dtype=np.uint32)


class PlanarView:
    """The planar 2R teaching view: GUI in `folder`, scene under "/planar_2r"."""

    def __init__(self, server: viser.ViserServer, folder, arm: Planar2R | None = None,
                 config: AnimationConfig | None = None) -> None:
        self._server, self._folder = server, folder
        self._lock = threading.RLock()
        self._syncing = False          # True while this view writes widget values: ignore the echoed callbacks
        self._model = Planar2rTeacher(arm, config)
        self._last_now: float | None = None
        self._ticks = 0
        self._sent: dict[tuple[int, str], object] = {}
        self._build_scene()
        with folder:
            self._build_gui()
        with self._lock:
            self._refresh(plots=True)

    # ---- construction ----------------------------------------------------------------------------------------
    def _build_scene(self) -> None:
        scene, arm = self._server.scene, self._model.arm
        self._root = scene.add_frame("/planar_2r", show_axes=False, position=ORIGIN, wxyz=PLANE_WXYZ)
        r_in, r_out = abs(arm.l1 - arm.l2), arm.l1 + arm.l2
        vertices, faces = _ring(r_in, r_out)
        scene.add_mesh_simple("/planar_2r/annulus", vertices, faces, color=RING, opacity=0.25, side="double")
        a = np.linspace(0.0, 2.0 * math.pi, 129)
        circles = [_chain(r * np.stack([np.cos(a), np.sin(a)], 1)) for r in (r_in, r_out) if r > 0]
        scene.add_line_segments("/planar_2r/annulus_edges", np.concatenate(circles), RING, thickness=0.006)
        self._links = scene.add_line_segments("/planar_2r/links", np.zeros((2, 2, 3)), ARM, thickness=0.035)
        self._joints = [scene.add_icosphere(f"/planar_2r/joint_{i}", 0.035, c)
                        for i, c in enumerate((ARM, ARM, TRACE))]
        self._ghost = scene.add_mesh_simple("/planar_2r/ghost/links", np.zeros((8, 3)), RIBBON_FACES, color=GHOST,
                                            opacity=0.35, side="double")
        self._ghost_elbow = scene.add_icosphere("/planar_2r/ghost/elbow", 0.03, GHOST, opacity=0.35)
        self._target = scene.add_icosphere("/planar_2r/target", 0.025, TARGET, opacity=0.6)
        self._clamp_line = scene.add_line_segments("/planar_2r/clamp", np.zeros((1, 2, 3)), TARGET, thickness=0.006)
        self._trace = scene.add_line_segments("/planar_2r/trace", np.zeros((1, 2, 3)), TRACE, thickness=0.008)

    def _build_gui(self) -> None:
        gui = self._server.gui
        self._mode = gui.add_dropdown("Mode", ("FK", "IK"), initial_value="FK")
        self._elbow = gui.add_dropdown("Elbow", ("up", "down"), initial_value=self._model.numbers().elbow,
                                       hint="up: q2 < 0; the other branch is the ghost")
        self._q_sliders = [gui.add_slider(f"q{i + 1} [deg]", -180.0, 180.0, 1.0, 0.0) for i in range(2)]
        self._target_sliders = [gui.add_slider(f"target {c} [m]", -1.5, 1.5, 0.01, 0.0, visible=False)
                                for c in "xy"]
        self._show_ghost = gui.add_checkbox("Show ghost", True)
        self._show_trace = gui.add_checkbox("Show trace", True)
        self._run = gui.add_button("Run")
        self._step, self._reset, self._clear = (gui.add_button(label) for label in ("Step", "Reset", "Clear trace"))
        self._warning = gui.add_markdown("", visible=False)
        self._numbers = gui.add_markdown("")
        x = np.zeros(2)
        joint_series = ({"label": "t [s]"}, {"label": "q1dot [rad/s]", "stroke": "blue"},
                        {"label": "q2dot [rad/s]", "stroke": "orange"})
        tool_series = ({"label": "t [s]"}, {"label": "xdot [m/s]", "stroke": "green"},
                       {"label": "ydot [m/s]", "stroke": "red"})
        seconds = {"x": {"time": False}}         # the x data are seconds of animation, not dates
        self._joint_plot = gui.add_uplot((x, x, x), joint_series, title="joint velocities", aspect=2.0, scales=seconds)
        self._tool_plot = gui.add_uplot((x, x, x), tool_series, title="tool velocities (measured)", aspect=2.0,
                                        scales=seconds)
        self.gui = PlanarGui(self._mode, self._elbow, tuple(self._q_sliders), tuple(self._target_sliders),
                             self._show_ghost, self._show_trace, self._run, self._step, self._reset, self._clear,
                             self._warning, self._numbers, (self._joint_plot, self._tool_plot))
        self._connect()

    def _connect(self) -> None:
        """Route every widget to the model; each handler runs under the lock and ends with a redraw."""
        m = self._model
        set_q = lambda: m.set_q(np.radians([s.value for s in self._q_sliders]))                  # noqa: E731
        set_target = lambda: m.set_target([s.value for s in self._target_sliders])              # noqa: E731
        handlers = [(self._mode, lambda: m.set_mode(self._mode.value.lower())),
                    (self._elbow, lambda: m.set_elbow(self._elbow.value)),
                    *((slider, set_q) for slider in self._q_sliders),
                    *((slider, set_target) for slider in self._target_sliders),
                    (self._show_ghost, lambda: None), (self._show_trace, lambda: None),   # redraw only
                    (self._run, lambda: m.run(not m.running)), (self._step, m.step), (self._reset, m.reset),
                    (self._clear, m.clear_trace)]
        for handle, action in handlers:
            register = handle.on_click if isinstance(handle, viser.GuiButtonHandle) else handle.on_update
            register(self._handler(action))

    def _handler(self, action):
        def on_event(_event) -> None:
            with self._lock:
                if self._syncing:
                    return
                action()
                self._refresh(plots=True)
        return on_event

    # ---- drawing ---------------------------------------------------------------------------------------------
    def _refresh(self, plots: bool) -> None:
        """Redraw the scene, write the widgets and (when asked) the plots from one model snapshot."""
        n = self._model.numbers()
        with self._server.atomic():
            self._draw_arm(n)
            self._sync_widgets(n)
            if plots:
                self._draw_plots()

    def _set(self, handle, attr: str, value) -> None:
        """Assign a scene property only when it differs from what was last sent (each assignment is a message)."""
        key = (id(handle), attr)
        old = self._sent.get(key)
        if old is None or np.shape(old) != np.shape(value) or not np.array_equal(old, value):
            self._sent[key] = value
            setattr(handle, attr, value)

    def _draw_arm(self, n: Planar2rNumbers) -> None:
        chain = np.array([[0.0, 0.0], n.elbow_point, n.tool])                          # (3, 2)
        self._set(self._links, "points", _chain(chain))
        for joint, p in zip(self._joints, chain):
            self._set(joint, "position", tuple(_xyz(p)))
        ghost = np.array([[0.0, 0.0], n.ghost_elbow_point, n.tool])
        self._set(self._ghost, "vertices", _ribbon(ghost).astype(np.float32))
        self._set(self._ghost_elbow, "position", tuple(_xyz(n.ghost_elbow_point, z=-0.005)))
        show_ghost = bool(self._show_ghost.value) and not n.singular
        self._set(self._ghost, "visible", show_ghost)
        self._set(self._ghost_elbow, "visible", show_ghost)
        self._set(self._target, "position", tuple(_xyz(n.target)))
        self._set(self._target, "visible", n.mode == "ik")
        self._set(self._clamp_line, "points", _chain(np.array([n.tool, n.target])))
        self._set(self._clamp_line, "visible", n.clamped)
        self._set(self._trace, "points", _chain(self._model.trace()))
        self._set(self._trace, "visible", bool(self._show_trace.value))

    def _sync_widgets(self, n: Planar2rNumbers) -> None:
        self._syncing = True
        try:
            ik = n.mode == "ik"
            self._mode.value = "IK" if ik else "FK"
            self._elbow.value = n.elbow
            for slider, v in zip(self._q_sliders, np.degrees(n.q)):
                slider.value = round(float(v), 2)
                slider.visible = not ik
            for slider, v in zip(self._target_sliders, n.target):
                slider.value = round(float(v), 3)
                slider.visible = ik
            self._run.label = "Pause" if n.running else "Run"
            self._warning.content = (f"**Target clamped:** {n.outside * 1e3:.1f} mm outside the reachable annulus"
                                     if n.clamped else "")
            self._warning.visible = n.clamped
            # two trailing spaces make a markdown line break, so innerText keeps one line per value (a fenced
            # block would keep the spacing too, but it scrolls sideways in the narrow panel)
            self._numbers.content = "  \n".join(format_numbers(n).splitlines())
        finally:
            self._syncing = False

    def _draw_plots(self) -> None:
        h = self._model.histories()
        if len(h.time) < 2:                   # uPlot needs two samples for an axis range
            h = type(h)(*(np.zeros(2) for _ in h))
        self._joint_plot.data = (h.time, h.q1dot, h.q2dot)
        self._tool_plot.data = (h.time, h.xdot, h.ydot)

    # ---- the app's interface ---------------------------------------------------------------------------------
    def tick(self, now: float) -> None:
        """Advance the animation by the real time [s] since the last tick (the app calls this at ~30 Hz)."""
        with self._lock:
            dt = 0.0 if self._last_now is None else min(max(now - self._last_now, 0.0), MAX_TICK)
            self._last_now = now
            if dt > 0.0 and self._model.tick(dt):
                self._ticks += 1
                self._refresh(plots=self._ticks % PLOT_EVERY == 0)

    def set_visible(self, visible: bool) -> None:
        """Show or hide the scene group and the GUI folder."""
        with self._lock:
            self._root.visible = visible
            self._folder.visible = visible
            self._last_now = None             # the time spent hidden is not animation time

    def camera_view(self) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        """(camera position, look-at point) [m] in the world that frame the whole annulus face-on."""
        x, y, z = ORIGIN
        return (x, y + CAMERA_DISTANCE, z), (x, y, z)

    @property
    def model(self) -> Planar2rTeacher:
        """The model (hold `lock` while using it from another thread)."""
        return self._model

    @property
    def lock(self) -> threading.RLock:
        return self._lock

    def close(self) -> None:
        """Remove this view's widgets and scene nodes (the folder belongs to the app)."""
        with self._lock:
            for widget in (*self.gui.q_sliders, *self.gui.target_sliders, *self.gui.plots,
                           *(w for w in self.gui if not isinstance(w, tuple))):
                widget.remove()
            self._root.remove()
