"""The chains of a robot with several tips (a tree: two arms, maybe a shared torso), one serial chain per tip.

The single-tip path code batches FK over a serial chain whose joints are the first columns of the positions vector
(`chain.ChainFk`). On a tree, a tip's joints are some of the columns (`RobotModel.tip_joint_indices`) and its chain is
the path of joints from the root to the tip. `TipChain` is that chain as the same `ChainArrays` the compiled kernels
take, plus the columns it reads, so every kernel of `chain.py` works per tip on `positions[:, columns]`.

`TipFk` is a tip's batched FK of full positions (K, n); it has no `arrays()` on purpose: `chain.chain_fk` would then
call the compiled loop with full positions, which are not that chain's columns. `TipsSpeeds` is what the timing's
tool-speed limit reads for several tips at once (the larger speed of any tip: every tip under the same limit).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import ModelError
from robokin_ros.core.path.chain import ChainArrays, chain_pose_jacobian, chain_poses
from robokin_ros.core.robot import RobotModel


class TipChain(NamedTuple):
    """A tip's serial chain on the robot's positions vector."""

    name: str                    # the tip frame
    frame_id: int
    arrays: ChainArrays          # its joints, root first
    columns: np.ndarray          # (c,) int: the positions columns of those joints, in chain order


def tip_chain(robot: RobotModel, frame: str) -> TipChain:
    """The chain from the robot's root to `frame` (UnknownFrameError if absent)."""
    model = robot.model
    frame_id = robot.frame_id(frame)
    placed = model.frames[frame_id]
    joints = [j for j in model.supports[placed.parentJoint] if j != 0]
    if any(model.nqs[j] != 1 or model.nvs[j] != 1 for j in joints):
        raise ModelError(f"the chain of '{frame}' has a joint with several coordinates; tip chains need "
                         "revolute or prismatic joints")
    data = model.createData()
    pin.computeJointJacobians(model, data, pin.neutral(model))
    place_R, place_t, axes, prismatic = [], [], [], []
    for j in joints:
        S = pin.getJointJacobian(model, data, j, pin.ReferenceFrame.LOCAL)[:, model.joints[j].idx_v]
        slides = np.linalg.norm(S[3:]) < 1e-12
        axis = S[:3] if slides else S[3:]
        axes.append(axis / np.linalg.norm(axis))
        prismatic.append(slides)
        M = model.jointPlacements[j]
        place_R.append(M.rotation.copy())
        place_t.append(M.translation.copy())
    base_T_world = robot.world_T_base.inverse()
    c = len(joints)
    arrays = ChainArrays(np.array(place_R).reshape(c, 3, 3), np.array(place_t).reshape(c, 3),
                         np.array(axes).reshape(c, 3), np.array(prismatic, dtype=np.bool_),
                         *(np.ascontiguousarray(a) for a in (placed.placement.rotation, placed.placement.translation,
                                                             base_T_world.rotation, base_T_world.translation)))
    columns = np.array([model.joints[j].idx_v for j in joints], dtype=np.int64)
    return TipChain(frame, frame_id, arrays, columns)


class TipFk:
    """Batched FK of one tip: positions (K, n) -> rotations (K, 3, 3), positions (K, 3), base frame."""

    def __init__(self, chain: TipChain) -> None:
        self.chain = chain

    def __call__(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return chain_poses(self.chain.arrays, np.atleast_2d(positions)[:, self.chain.columns])

    def pose_jacobian(self, q: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(R (3, 3), p (3,), J (6, n)) at positions q (n,): the tip's LOCAL_WORLD_ALIGNED Jacobian in base axes,
        zero in the columns of the joints it does not depend on."""
        c = self.chain.columns
        R, p, J_chain = np.empty((3, 3)), np.empty(3), np.empty((6, len(c)))
        chain_pose_jacobian(np.ascontiguousarray(q[c]), self.chain.arrays, R, p, J_chain)
        J = np.zeros((6, n))
        J[:, c] = J_chain
        return R, p, J


class TipsSpeeds:
    """The tool speeds of several tips as the timing reads one tool's: (K, 2) the largest |v| [m/s] and |w|
    [rad/s] of any tip, so that one limit on them bounds every tip (`toppra_constraints.tool_speeds` calls
    `tool_speeds` of a chain that has it)."""

    def __init__(self, chains: tuple[TipChain, ...]) -> None:
        self.chains = chains

    def tool_speeds(self, positions: np.ndarray, velocities: np.ndarray, speeds_of) -> np.ndarray:
        """`speeds_of(chain_arrays, positions, velocities) -> (K, 2)` is the one-chain function."""
        out = None
        for chain in self.chains:
            speeds = speeds_of(chain.arrays, np.ascontiguousarray(positions[:, chain.columns]),
                               np.ascontiguousarray(velocities[:, chain.columns]))
            out = speeds if out is None else np.maximum(out, speeds)
        return out
