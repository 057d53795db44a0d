"""Reachable workspace of a serial arm: sampled tool positions, manipulability per sample, the reach envelope.

Joint positions are drawn at random (seeded) or on a grid over the joint ranges (limits respected; a joint
without limits spans [-pi, pi]). Poses and Jacobians of all samples come from one batched product of
exponentials over the chain that `ChainFk` reads from the Pinocchio model (numpy over all samples instead of one
Pinocchio call per sample); tests compare both with Pinocchio.

Per sample: Yoshikawa's manipulability w = product of the singular values of J, which is sqrt(det(J J^T)) for
n >= m rows and sqrt(det(J^T J)) for fewer joints than rows (a planar 2R in space, where J J^T is singular),
and sigma_min, the smallest of those singular values. J is the translational (3, n) or the full (6, n)
Jacobian, base axes at the tool origin.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robokin_ros.core.classroom import dh_examples
from robokin_ros.core.classroom.dh_urdf import dh_robot_model
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.path.surface import ChainFk
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.so3 import exp3_axis_batch

JACOBIANS = ("translation", "full")
CHUNK = 20000            # samples per batch: bounds the (K, 6, n) Jacobian stack to a few ten MB


@dataclass(frozen=True)
class WorkspaceSamples:
    """Sampled configurations, their tool positions and dexterity measures."""

    positions: np.ndarray        # (K, n) [rad | m] joint positions
    points: np.ndarray           # (K, 3) [m] tool origin, base frame
    manipulability: np.ndarray   # (K,) Yoshikawa w [m^k] (product of singular values)
    sigma_min: np.ndarray        # (K,) smallest singular value [m/rad]
    jacobian: str                # "translation" or "full"


@dataclass(frozen=True)
class ReachEnvelope:
    """Radius from the base z axis per height bin, and the overall reach."""

    z_edges: np.ndarray          # (B + 1,) [m] bin edges along base z
    r_min: np.ndarray            # (B,) [m] smallest radius in the bin (nan when empty)
    r_max: np.ndarray            # (B,) [m] largest radius in the bin (nan when empty)
    counts: np.ndarray           # (B,) samples per bin
    max_radius: float            # [m] largest distance from the base z axis
    max_reach: float             # [m] largest distance from the base origin


def planar_2r(l1: float, l2: float) -> RobotModel:
    """RobotModel of the planar 2R DH table (`dh_examples.planar_2r`): two continuous joints about z, links l1, l2 [m]
    along x."""
    if not (l1 > 0 and l2 > 0 and np.isfinite(l1) and np.isfinite(l2)):
        raise InvalidInputError(f"planar 2R link lengths must be finite and > 0, got L1={l1!r}, L2={l2!r}")
    return dh_robot_model(dh_examples.planar_2r(l1, l2))


def joint_ranges(robot: RobotModel) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) [rad | m] sampled per joint: the URDF limits, [-pi, pi] where a joint has none."""
    lo = np.where(np.isfinite(robot.limits.lower), robot.limits.lower, -np.pi)
    hi = np.where(np.isfinite(robot.limits.upper), robot.limits.upper, np.pi)
    return lo, hi


def sample_positions(robot: RobotModel, samples: int, grid: bool = False, seed: int = 0) -> np.ndarray:
    """Joint positions (K, n): `samples` uniform random draws, or a grid of floor(samples^(1/n)) values per
    joint (endpoints included; at least 2), so K <= samples unless that floor is below 2."""
    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 1:
        raise InvalidInputError(f"samples must be a positive integer, got {samples!r}")
    lo, hi = joint_ranges(robot)
    if not grid:
        return np.random.default_rng(seed).uniform(lo, hi, size=(int(samples), robot.n))
    per_joint = max(2, int(np.floor(samples ** (1.0 / robot.n) + 1e-9)))
    axes = [np.linspace(a, b, per_joint) for a, b in zip(lo, hi)]
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, robot.n)


def batch_points_jacobians(robot: RobotModel, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tool origins (K, 3) [m] and Jacobians (K, 6, n) [linear; angular] in base axes at the tool origin
    (Pinocchio's LOCAL_WORLD_ALIGNED, expressed in the base) for positions (K, n)."""
    chain = ChainFk(robot).arrays()
    K, c = len(positions), len(chain.axes)
    R = np.broadcast_to(chain.base_R, (K, 3, 3)).copy()
    p = np.broadcast_to(chain.base_t, (K, 3)).copy()
    axes_base, origins = np.empty((c, K, 3)), np.empty((c, K, 3))
    for j in range(c):
        p = p + R @ chain.place_t[j]                                           # (K, 3) joint origin
        R = R @ chain.place_R[j]                                               # (K, 3, 3) joint frame
        axes_base[j], origins[j] = R @ chain.axes[j], p
        if chain.prismatic[j]:
            p = p + axes_base[j] * positions[:, j, None]
        else:
            R = R @ exp3_axis_batch(chain.axes[j], positions[:, j])
    tip = p + R @ chain.tip_t                                                  # (K, 3)
    J = np.zeros((K, 6, robot.n))
    for j in range(c):
        if chain.prismatic[j]:
            J[:, :3, j] = axes_base[j]
        else:
            J[:, :3, j] = np.cross(axes_base[j], tip - origins[j])             # w x (p_tip - o_j)
            J[:, 3:, j] = axes_base[j]
    return tip, J


def dexterity(J: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(manipulability, sigma_min) of a stack of Jacobians (K, m, n): product and minimum of the min(m, n)
    singular values."""
    sigma = np.linalg.svd(J, compute_uv=False)                                 # (K, min(m, n))
    return np.prod(sigma, axis=1), sigma[:, -1]


def sample_workspace(robot: RobotModel, samples: int = 20000, grid: bool = False, seed: int = 0,
                     jacobian: str = "translation") -> WorkspaceSamples:
    """Sample the reachable tool positions of `robot` with manipulability and sigma_min of each sample."""
    if jacobian not in JACOBIANS:
        raise InvalidInputError(f"jacobian '{jacobian}' must be one of {JACOBIANS}")
    positions = sample_positions(robot, samples, grid, seed)
    rows = slice(0, 3) if jacobian == "translation" else slice(0, 6)
    points, w, smin = [], [], []
    for start in range(0, len(positions), CHUNK):
        tip, J = batch_points_jacobians(robot, positions[start:start + CHUNK])
        measures = dexterity(J[:, rows])
        points.append(tip)
        w.append(measures[0])
        smin.append(measures[1])
    return WorkspaceSamples(positions, np.concatenate(points), np.concatenate(w), np.concatenate(smin), jacobian)


def reach_envelope(points: np.ndarray, bins: int = 10) -> ReachEnvelope:
    """Min and max radius from the base z axis per height bin (equal bins over the sampled z range)."""
    points = np.asarray(points, float)
    if points.ndim != 2 or points.shape[1] != 3 or len(points) == 0:
        raise InvalidInputError(f"points must be a non-empty (K, 3) array, got shape {points.shape}")
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise InvalidInputError(f"bins must be a positive integer, got {bins!r}")
    radius = np.hypot(points[:, 0], points[:, 1])
    z = points[:, 2]
    z_lo, z_hi = float(z.min()), float(z.max())
    if z_hi - z_lo < 1e-9:                     # a planar arm: one bin around its plane
        z_lo, z_hi = z_lo - 1e-9, z_hi + 1e-9
    edges = np.linspace(z_lo, z_hi, bins + 1)
    index = np.clip(np.searchsorted(edges, z, side="right") - 1, 0, bins - 1)
    r_min, r_max = np.full(bins, np.inf), np.full(bins, -np.inf)
    np.minimum.at(r_min, index, radius)
    np.maximum.at(r_max, index, radius)
    counts = np.bincount(index, minlength=bins)
    empty = counts == 0
    r_min[empty], r_max[empty] = np.nan, np.nan
    return ReachEnvelope(edges, r_min, r_max, counts, float(radius.max()), float(np.linalg.norm(points, axis=1).max()))


def format_envelope(envelope: ReachEnvelope) -> str:
    """The envelope as a text table, millimetres."""
    lines = ["  z from [mm]   z to [mm]   r min [mm]   r max [mm]   samples"]
    for k, count in enumerate(envelope.counts):
        lines.append(f"  {envelope.z_edges[k] * 1e3:11.1f} {envelope.z_edges[k + 1] * 1e3:11.1f} "
                     f"{envelope.r_min[k] * 1e3:12.1f} {envelope.r_max[k] * 1e3:12.1f} {count:9d}")
    lines.append(f"  max radius from the base z axis {envelope.max_radius * 1e3:.1f} mm, "
                 f"max reach from the base origin {envelope.max_reach * 1e3:.1f} mm")
    return "\n".join(lines)
