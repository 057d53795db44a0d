"""How far an arm reaches: the largest distance of its tool from its shoulder, sampled once per model and tool.

Datasheets give an arm's reach as the largest distance of its flange from the shoulder, the point of the first
joint's axis nearest the second joint's axis (the tool sweeps a sphere around it): Panda 855 mm, UR5 850 mm. The
sampled value here is the same measure over the joint ranges: 858 mm for the Panda's flange (`panda_link8`), 947 mm
for its `panda_hand_tcp`; 918 mm for the UR5's `wrist_3_link` (UR quotes 850 mm, without the wrist offsets). It
replaces a sum of link offsets (1.42 m for the Panda's tcp), which let targets 13 m away through to planning.

Two uses: targets several reaches away are refused before planning (`farthest_beyond`: millimetres given as
metres, a wrong frame), and a path that fails where its target lies beyond the reach says so
(`core/path/solver.py`). Sampling costs ~0.1 s; `arm_reach` keeps the answer per model and tool frame.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from robokin_ros.core.path.chain import ChainArrays, ChainFk
from robokin_ros.core.robot import RobotModel

SAMPLES = 20000          # random configurations (seeded): the largest distance is found to within ~1 %
CHUNK = 5000             # configurations per batched FK call (bounds the (K, 3, 3) stacks to a few MB)
# A target farther from the shoulder than this many reaches is refused before planning. Nearer ones are planned
# as far as the arm can follow (MoveIt's computeCartesianPath convention). From 3 reaches on, at most half of a line
# toward the target lies inside the reach sphere (2R / (D + R) <= 1/2 for a start inside it), so a partial plan
# is no longer a useful answer, while every unit mix-up (centimetres or millimetres given as metres: 100x, 1000x)
# lands far beyond it.
ABSURD_REACH_FACTOR = 3.0


class ArmReach(NamedTuple):
    """The sphere an arm's tool frame stays in."""

    shoulder: np.ndarray         # (3,) [m] centre, base frame
    reach: float                 # [m] largest sampled distance of the tool from the shoulder (inf: unbounded travel)

    def distance(self, points: np.ndarray) -> np.ndarray:
        """[m] distances (K,) of points (K, 3) from the shoulder, finite even for coordinates near 1e308."""
        d = np.atleast_2d(np.asarray(points, float)) - self.shoulder
        scale = np.abs(d).max(axis=1)
        with np.errstate(invalid="ignore", over="ignore"):
            return scale * np.linalg.norm(d / np.where(scale > 0, scale, 1.0)[:, None], axis=1)

    def farthest_beyond(self, points: np.ndarray, factor: float = ABSURD_REACH_FACTOR) -> int:
        """Index of the first finite point farther than `factor` reaches from the shoulder, -1 if none."""
        points = np.atleast_2d(np.asarray(points, float))
        if len(points) == 0:
            return -1
        far = np.flatnonzero(np.isfinite(points).all(axis=1) & (self.distance(points) > factor * self.reach))
        return int(far[0]) if len(far) else -1

    def too_far(self, what: str, point: np.ndarray) -> str:
        """The one-line refusal of a target `what` ("waypoint 3", "move 2 (MoveL pick): target") at `point`."""
        distance = float(self.distance(point)[0])
        return (f"{what} is {distance:.4g} m from the arm's shoulder, {distance / self.reach:.3g} times its reach "
                f"of {self.reach:.3f} m (refused beyond {ABSURD_REACH_FACTOR:g}): millimetres given as metres? "
                "(or the wrong frame_id)")


def shoulder_point(chain: ChainArrays) -> np.ndarray:
    """(3,) [m] the point of joint 1's axis nearest joint 2's axis at zero positions, base frame (joint 1's origin
    when the chain has one joint or the two axes are parallel)."""
    R, p = chain.base_R.copy(), chain.base_t.copy()
    origins, axes = [], []
    for j in range(min(2, len(chain.axes))):
        p = p + R @ chain.place_t[j]
        R = R @ chain.place_R[j]
        origins.append(p.copy())
        axes.append(R @ chain.axes[j])
    if not origins:
        return p
    if len(axes) < 2 or abs(axes[0] @ axes[1]) > 1.0 - 1e-9:
        return origins[0]
    a, b, w = axes[0], axes[1], origins[0] - origins[1]
    c = a @ b
    t = (c * (b @ w) - a @ w) / (1.0 - c * c)                       # closest point of line 1 to line 2
    return origins[0] + t * a


_CACHE: dict[tuple[int, int], tuple[RobotModel, ArmReach]] = {}


def arm_reach(robot: RobotModel, frame_id: int) -> ArmReach:
    """The reach sphere of frame `frame_id` (on the robot's chain), sampled once per model and frame."""
    key = (id(robot), int(frame_id))
    if key not in _CACHE or _CACHE[key][0] is not robot:
        _CACHE[key] = (robot, _sample_reach(robot, frame_id))
    return _CACHE[key][1]


def _sample_reach(robot: RobotModel, frame_id: int) -> ArmReach:
    fk = ChainFk(robot, frame_id)
    chain = fk.arrays()
    shoulder = shoulder_point(chain)
    lower, upper = robot.limits.lower, robot.limits.upper
    unbounded = ~(np.isfinite(lower) & np.isfinite(upper))
    if np.any(unbounded[:len(chain.axes)] & chain.prismatic):
        return ArmReach(shoulder, float("inf"))                    # a slide without limits: no bound
    lower = np.where(np.isfinite(lower), lower, -np.pi)
    upper = np.where(np.isfinite(upper), upper, np.pi)
    positions = np.random.default_rng(0).uniform(lower, upper, size=(SAMPLES, robot.n))
    reach = 0.0
    for start in range(0, SAMPLES, CHUNK):
        _, p = fk(positions[start:start + CHUNK])
        reach = max(reach, float(np.linalg.norm(p - shoulder, axis=1).max()))
    return ArmReach(shoulder, reach)
