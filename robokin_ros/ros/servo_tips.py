"""servo_node on a robot with several tips (issue 26): the per-tip topic names, and which tips a status concerns.

Topic names: each tip gets `~/<token>/delta_twist_cmds` and `~/<token>/pose_target_cmds`, where the token is the tip
frame's name made a valid ROS name token: every character other than a letter, a digit or `_` becomes `_`, runs of
`_` shrink to one (ROS refuses `__`), and a token starting with a digit gets the prefix `tip_`. Two tips whose tokens
coincide are refused at start (the topics would be shared).

Which tips a status concerns: the tip nearest a singularity when the stacked solve was damped, the tips it could not
give their twist (core/servo/tips_motion.py's `TipsReport`), and for a collision status the tips whose arms hold the
nearest pair (a link belongs to every tip whose chain moves it; a base or table link to none).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from robokin_ros.core.errors import ConfigError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.servo import Servo
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.tips_motion import TipsReport
from robokin_ros.core.servo.types import JointMeasurement, TwistCommand

TIP_TWIST_TOPIC = "delta_twist_cmds"
TIP_POSE_TOPIC = "pose_target_cmds"
_COLLISION = (ServoStatus.DECELERATE_FOR_COLLISION, ServoStatus.HALT_FOR_COLLISION)
WARM_UP_MODES = ("coordinated", "relative")
WARM_UP_TICKS = 3


def tip_token(tip: str) -> str:
    """`tip` as one ROS name token (see the module docstring for the rule)."""
    token = re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_]", "_", tip))
    return f"tip_{token}" if not token or token[0].isdigit() else token


def tip_topics(tips: Sequence[str]) -> dict[str, tuple[str, str]]:
    """{tip: (twist topic, pose topic)} under the node's private namespace; ConfigError when two tips share a token."""
    by_token: dict[str, str] = {}
    for tip in tips:
        token = tip_token(tip)
        if token in by_token:
            raise ConfigError([f"tips '{by_token[token]}' and '{tip}' give the same topic token '{token}' (every "
                               "character other than a letter, digit or '_' becomes '_'): rename one"],
                              "tip topics")
        by_token[token] = tip
    return {tip: (f"~/{token}/{TIP_TWIST_TOPIC}", f"~/{token}/{TIP_POSE_TOPIC}") for token, tip in by_token.items()}


class TipsOfLinks:
    """Which tips a robot geometry (collision body) moves with: the tips whose chains hold its parent joint."""

    def __init__(self, robot: RobotModel, geometry_objects=()) -> None:
        chains = [set(int(i) for i in indices) for indices in robot.tip_joint_indices]
        self._tips: dict[str, tuple[str, ...]] = {}
        for geometry in geometry_objects:
            index = int(geometry.parentJoint) - 1          # joint id 0 is the universe: fixed to the base
            self._tips[geometry.name] = tuple(tip for tip, chain in zip(robot.tip_frames, chains) if index in chain)

    def __call__(self, name: str) -> tuple[str, ...]:
        """The tips geometry `name` moves with (empty for a fixed link or a scene object)."""
        return self._tips.get(name, ())


def limiting_tips(code: ServoStatus, report: TipsReport | None, pair: tuple[str, str] | None,
                  tips_of: TipsOfLinks | None) -> tuple[str, ...]:
    """The tips that limited the motion this tick (see the module docstring), first the most limiting; () on a
    robot with one tip or when none did."""
    if report is None:
        return ()
    tips: list[str] = []
    if code in _COLLISION and pair is not None and tips_of is not None:
        for name in pair:
            tips += [tip for tip in tips_of(name) if tip not in tips]
    if report.singular_tip and report.singular_tip not in tips:
        tips.append(report.singular_tip)
    tips += [tip for tip in report.conflicting_tips if tip not in tips]
    return tuple(tips)


def warm_up_tip_modes(robot: RobotModel, config: ServoConfig) -> None:
    """A few ticks of a throwaway servo in each mode that `servo.warm_up` does not run (it runs a robot with several
    tips in independent mode): the coordinated and relative tasks' compiled kernels load here, not on the first tick
    after `tips.mode` changes (measured: a first coordinated tick of 16 ms, four periods of a 250 Hz loop, which a
    held box then lacks of its travel)."""
    for mode in WARM_UP_MODES:
        servo = Servo(robot, replace(config, tips=replace(config.tips, mode=mode)))
        servo.set_measurement(JointMeasurement(robot.home(), 0.0))
        for k in range(1, WARM_UP_TICKS + 1):
            now = k * config.publish_period
            servo.set_command(TwistCommand(np.full(3, 0.01), np.full(3, 0.01), "", now, robot.tip_frames[-1]
                                           if mode == "relative" else ""))
            servo.step(now)
