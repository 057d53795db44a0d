"""The gizmos of a robot with several tips: one per tip (the first is the app's own `gizmo`, as on a one-tip robot)
and one for the held object. A gizmo not being dragged and not driving the arm rests on what it stands for, so a
hand carried along (coordinated or relative mode) keeps its gizmo on it.
"""
from __future__ import annotations

from collections.abc import Callable

from robokin_ros.studio.gizmo import Gizmo
from robokin_ros.studio.session import TRACKING
from robokin_ros.studio.tips_scene import TipsScene
from robokin_ros.studio.tips_session import OBJECT, TipsSession


class TipsGizmos:
    """name (a tip frame, or "object") -> Gizmo; `first` is the app's gizmo of the first tip."""

    def __init__(self, scene: TipsScene, tips: tuple[str, ...], first: Gizmo, local_axes: bool, rotate: bool,
                 moved: Callable[[str, object], None]) -> None:
        self.gizmos: dict[str, Gizmo] = {tips[0]: first}
        for tip, handle in zip(tips[1:], scene.tip_gizmos[1:]):
            self.gizmos[tip] = Gizmo(handle, local_axes, rotate)
        self.gizmos[OBJECT] = Gizmo(scene.object_gizmo, local_axes, rotate)
        for name, gizmo in self.gizmos.items():
            if gizmo is not first:
                gizmo.handle.on_update(lambda event, name=name: moved(name, event))

    def others(self) -> list[Gizmo]:
        """Every gizmo but the first tip's."""
        return list(self.gizmos.values())[1:]

    def rest(self, session: TipsSession, everything: bool = False) -> None:
        """Rest the gizmos that are neither dragged nor driving the servo (all of them when `everything`)."""
        driving = {name for name, target in zip(session.robot.tip_frames, session.tip_targets()) if target is not None}
        if session.object_target() is not None:
            driving.add(OBJECT)
        tracking = session.mode == TRACKING and not everything
        for name, gizmo in self.gizmos.items():
            if gizmo.dragging or (tracking and name in driving):
                continue
            if everything:
                gizmo.moved()             # placed again even if the arm did not move (a new grasp, say)
            pose = session.object_pose() if name == OBJECT else session.robot.fk(session.positions, name)
            if pose is not None:
                gizmo.rest_on(pose, session.positions)
