"""The planar 2R teaching model behind the studio's "Planar 2R" view: pure Python, no viser.

`Planar2rTeacher` holds what the view shows: the mode (FK: joint angles in; IK: a target in), the elbow branch
(the core's convention, up = q2 < 0), the other branch as a ghost, the clamping of unreachable targets, a trace of
tool points, an animation (FK: the joints sweep sinusoids around the pose set by hand; IK: the target runs a
figure-eight around the target set by hand) and the velocities: q̇ of the animation, J q̇, and the tool velocity
measured from successive tool points. All kinematics come from `robokin_ros.core.ik.planar_2r`.
Time only enters through `tick(dt)` / `step()`: the model never reads a clock.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from robokin_ros.core.ik.planar_2r import Planar2R, Planar2rIk
from robokin_ros.core.errors import ConfigError

MODES = ("fk", "ik")
ELBOWS = ("up", "down")
# q̇ of the animation is the central difference of its own joint trajectory: in IK mode q(t) has no closed-form
# derivative short of J⁻¹ ṗ, which would make "J q̇ = ṗ" true by construction instead of a check.
_DERIVATIVE_STEP = 1e-5          # [s]


@dataclass(frozen=True)
class AnimationConfig:
    """Animation and buffer settings of the teaching view."""

    period: float = field(default=8.0, metadata={"doc": "period of the sweep / figure-eight [s]"})
    joint_amplitude: tuple[float, float] = field(default=(math.radians(40.0), math.radians(60.0)),
                                                 metadata={"doc": "FK sweep amplitudes of q1, q2 [rad]"})
    target_radius: float = field(default=0.15, metadata={"doc": "half-width of the IK figure-eight [m]"})
    step_dt: float = field(default=1.0 / 30.0, metadata={"doc": "animation time of one Step [s]"})
    trace_length: int = field(default=600, metadata={"doc": "tool points kept in the trace [-]"})
    history_length: int = field(default=300, metadata={"doc": "samples kept per rolling plot [-]"})

    def __post_init__(self) -> None:
        problems = [f"{name}={getattr(self, name)!r} must be > 0" for name in
                    ("period", "target_radius", "step_dt", "trace_length", "history_length")
                    if not getattr(self, name) > 0]
        if problems:
            raise ConfigError(problems, "planar 2R animation")


class Histories(NamedTuple):
    """Rolling samples for the plots, oldest first; all (N,)."""

    time: np.ndarray           # time since the last reset [s]
    q1dot: np.ndarray          # [rad/s]
    q2dot: np.ndarray          # [rad/s]
    xdot: np.ndarray           # measured [m/s]
    ydot: np.ndarray           # measured [m/s]


@dataclass(frozen=True)
class Planar2rNumbers:
    """Everything the view displays at one instant (copies: safe to keep)."""

    mode: str                  # "fk" or "ik"
    elbow: str                 # branch of q: "up" (q2 < 0) or "down"
    q: np.ndarray              # (2,) [rad], wrapped to [-pi, pi)
    tool: np.ndarray           # (2,) tool point (x, y) [m]
    elbow_point: np.ndarray    # (2,) elbow joint position [m]
    jacobian: np.ndarray       # (2, 2) d(x, y)/d(q1, q2) [m/rad]
    qdot: np.ndarray           # (2,) joint velocity of the animation [rad/s]; 0 when paused
    xdot_jacobian: np.ndarray  # (2,) J q̇ [m/s]
    xdot_measured: np.ndarray  # (2,) (tool now - tool one tick ago) / dt [m/s]
    target: np.ndarray         # (2,) requested target [m] (IK); the tool point in FK mode
    clamped: bool              # the requested target lies outside the reachable annulus
    outside: float             # its distance to the annulus [m]; 0 when reachable
    ghost_q: np.ndarray        # (2,) the other branch reaching the same tool point [rad]
    ghost_elbow_point: np.ndarray  # (2,) [m]
    singular: bool             # stretched or folded: both branches coincide
    running: bool
    time: float                # animation time since the anchor pose [s]


def wrap_angle(angle: npt.ArrayLike) -> np.ndarray:
    """Angles [rad] wrapped to [-pi, pi)."""
    return (np.asarray(angle, dtype=float) + math.pi) % (2.0 * math.pi) - math.pi


def elbow_point(arm: Planar2R, q: npt.ArrayLike) -> np.ndarray:
    """Position (2,) [m] of the elbow joint: the end of link 1."""
    return arm.l1 * np.array([math.cos(q[0]), math.sin(q[0])])


def elbow_of(q: npt.ArrayLike) -> str:
    """The branch label of q in the core's convention (up = q2 < 0)."""
    return "up" if wrap_angle(q[1]) < 0.0 else "down"


def format_numbers(n: Planar2rNumbers) -> str:
    """The plain-text block the view shows and the browser tests parse (angles in degrees)."""
    q_deg = np.degrees(n.q)
    (j11, j12), (j21, j22) = n.jacobian
    return "\n".join([
        f"q1 = {q_deg[0]:.2f} deg", f"q2 = {q_deg[1]:.2f} deg",
        f"x = {n.tool[0]:.4f} m", f"y = {n.tool[1]:.4f} m",
        f"J11 = {j11:.4f}  J12 = {j12:.4f}", f"J21 = {j21:.4f}  J22 = {j22:.4f}",
        f"xdot (J qdot) = {n.xdot_jacobian[0]:.4f} m/s  ydot (J qdot) = {n.xdot_jacobian[1]:.4f} m/s",
        f"xdot (measured) = {n.xdot_measured[0]:.4f} m/s  ydot (measured) = {n.xdot_measured[1]:.4f} m/s"])


class Planar2rTeacher:
    """The state of the 2R teaching view; not thread-safe (the viser adapter holds a lock).

    The animation is an offset from an anchor that is zero at t = 0: the anchor is q [rad] in FK mode and the
    target [m] in IK mode. Setting q, the target, the mode or the elbow by hand moves the anchor and restarts the
    animation at t = 0, so `reset()` always returns to the last pose set by hand.
    """

    def __init__(self, arm: Planar2R | None = None, config: AnimationConfig | None = None,
                 q: npt.ArrayLike = (math.radians(30.0), math.radians(45.0))) -> None:
        self.arm = arm if arm is not None else Planar2R(0.5, 0.5)
        self.config = config if config is not None else AnimationConfig()
        self._mode, self._elbow = "fk", elbow_of(q)
        self._anchor = wrap_angle(q)
        self._t = self._elapsed = 0.0
        self._running = False
        self._trace: deque[np.ndarray] = deque(maxlen=self.config.trace_length)
        self._history: deque[tuple[float, float, float, float, float]] = deque(maxlen=self.config.history_length)
        self._apply(self._pose_at(0.0), moving=False)
        self._trace.append(self._tool.copy())

    # ---- animation -------------------------------------------------------------------------------------------
    def _pose_at(self, t: float) -> tuple[np.ndarray, np.ndarray, Planar2rIk]:
        """(q [rad], requested target [m], IK of the target) of the animation at time t [s]."""
        w = 2.0 * math.pi / self.config.period
        if self._mode == "fk":
            q = wrap_angle(self._anchor + np.multiply(self.config.joint_amplitude,
                                                      [math.sin(w * t), math.sin(2.0 * w * t)]))
            target = self.arm.fk(q)
            return q, target, self.arm.ik(target)
        # a figure-eight (1:2 Lissajous) through the anchor at t = 0, so Reset lands on the hand-set target
        target = self._anchor + self.config.target_radius * np.array([math.sin(w * t), 0.5 * math.sin(2.0 * w * t)])
        ik = self.arm.ik(target)
        return (ik.elbow_up if self._elbow == "up" else ik.elbow_down), target, ik

    def _apply(self, pose: tuple[np.ndarray, np.ndarray, Planar2rIk], moving: bool, dt: float = 0.0) -> None:
        q, target, ik = pose
        previous_tool = getattr(self, "_tool", None)
        self._q, self._target, self._ik = q, target, ik
        self._tool = self.arm.fk(q)                                                     # (2,)
        if moving:
            h = _DERIVATIVE_STEP
            self._qdot = wrap_angle(self._pose_at(self._t + h)[0] - self._pose_at(self._t - h)[0]) / (2.0 * h)
            self._v_measured = (self._tool - previous_tool) / dt                        # (2,)
        else:
            self._qdot, self._v_measured = np.zeros(2), np.zeros(2)
        if self._mode == "fk":
            self._elbow = elbow_of(q)

    def _advance(self, dt: float) -> None:
        if not (math.isfinite(dt) and dt > 0.0):
            raise ValueError(f"dt={dt!r} must be a finite time step > 0 [s]")
        self._t += dt
        self._elapsed += dt
        self._apply(self._pose_at(self._t), moving=True, dt=dt)
        self._trace.append(self._tool.copy())
        v = self._v_measured
        self._history.append((self._elapsed, float(self._qdot[0]), float(self._qdot[1]), float(v[0]), float(v[1])))

    def tick(self, dt: float) -> bool:
        """Advance the animation by dt [s] when running; True when the pose changed."""
        if self._running:
            self._advance(dt)
        return self._running

    def step(self) -> None:
        """Pause and advance by one `config.step_dt`."""
        self._running = False
        self._advance(self.config.step_dt)

    def run(self, running: bool = True) -> None:
        """Start (True) or pause (False) the animation; pausing zeroes the shown velocities."""
        self._running = bool(running)
        if not self._running:
            self._qdot, self._v_measured = np.zeros(2), np.zeros(2)

    def reset(self) -> None:
        """Pause, return to the anchor pose (t = 0) and clear the trace and the plots."""
        self._running = False
        self._t = self._elapsed = 0.0
        self._apply(self._pose_at(0.0), moving=False)
        self._trace.clear()
        self._history.clear()
        self._trace.append(self._tool.copy())

    # ---- inputs set by hand ----------------------------------------------------------------------------------
    def _reanchor(self, anchor: np.ndarray) -> None:
        self._anchor = anchor
        self._t = 0.0
        self._apply(self._pose_at(0.0), moving=False)
        self._trace.append(self._tool.copy())

    def set_q(self, q: npt.ArrayLike) -> None:
        """Joint angles (q1, q2) [rad] (FK mode; in IK mode the target follows instead)."""
        q = np.asarray(q, dtype=float)
        if q.shape != (2,) or not np.all(np.isfinite(q)):
            raise ValueError(f"q={q!r} must be two finite angles [rad]")
        if self._mode == "ik":
            self._reanchor(self.arm.fk(q))
        else:
            self._reanchor(wrap_angle(q))

    def set_target(self, target: npt.ArrayLike) -> None:
        """IK target (x, y) [m]; an unreachable one is clamped onto the annulus and reported."""
        target = np.asarray(target, dtype=float)
        if target.shape != (2,) or not np.all(np.isfinite(target)):
            raise ValueError(f"target={target!r} must be two finite coordinates [m]")
        if self._mode != "ik":
            raise ValueError("set_target needs IK mode; call set_mode('ik') first (FK mode takes set_q)")
        self._reanchor(target)

    def set_mode(self, mode: str) -> None:
        """'fk' (joint angles in) or 'ik' (target in); the arm keeps its pose across the switch."""
        if mode not in MODES:
            raise ValueError(f"mode={mode!r}; valid modes: {list(MODES)}")
        if mode == self._mode:
            return
        q, tool = self._q.copy(), self._tool.copy()
        self._mode = mode
        self._reanchor(tool if mode == "ik" else q)

    def set_elbow(self, elbow: str) -> None:
        """Choose the branch; the tool point stays where it is and the arm swaps with its ghost."""
        if elbow not in ELBOWS:
            raise ValueError(f"elbow={elbow!r}; valid elbows: {list(ELBOWS)}")
        if elbow == self._elbow:
            return
        self._elbow = elbow
        if self._mode == "fk":
            self._reanchor(self._ik.elbow_up if elbow == "up" else self._ik.elbow_down)
        else:                     # the target path does not depend on the branch: keep the animation's phase
            self._apply(self._pose_at(self._t), moving=False)

    def clear_trace(self) -> None:
        """Forget the trace but the current tool point."""
        self._trace.clear()
        self._trace.append(self._tool.copy())

    # ---- outputs ---------------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._running

    def numbers(self) -> Planar2rNumbers:
        """Everything displayed, as one frozen snapshot."""
        ghost = self._ik.elbow_down if self._elbow == "up" else self._ik.elbow_up
        J = self.arm.jacobian(self._q)                                                   # (2, 2)
        return Planar2rNumbers(
            mode=self._mode, elbow=self._elbow, q=self._q.copy(), tool=self._tool.copy(),
            elbow_point=elbow_point(self.arm, self._q), jacobian=J, qdot=self._qdot.copy(),
            xdot_jacobian=J @ self._qdot, xdot_measured=self._v_measured.copy(),
            target=self._target.copy(), clamped=not self._ik.reachable, outside=float(self._ik.outside),
            ghost_q=ghost.copy(), ghost_elbow_point=elbow_point(self.arm, ghost), singular=bool(self._ik.singular),
            running=self._running, time=self._t)

    def trace(self) -> np.ndarray:
        """Tool points (N, 2) [m], oldest first."""
        return np.array(self._trace).reshape(-1, 2)

    def histories(self) -> Histories:
        """The rolling plot samples since the last reset."""
        data = np.array(self._history, dtype=float).reshape(-1, 5)
        return Histories(*(data[:, i].copy() for i in range(5)))
