"""Force polytope of the tool origin: convex hull, volume, largest force in a direction, binary STL.

Two mappings from the joint-torque box B = {τ : |τ_i| <= τ_max,i} to tool forces F [N] (base axes):

- `pinv` (default; the usual construction in the literature): map each of the 2^n vertices of B through the minimum-norm
  force mapping G = pinv(J_vᵀ) = (J_v J_vᵀ)⁻¹ J_v (3, n) and take the convex hull: P_pinv = G·B.
  G τ is the force whose joint torques J_vᵀ F are closest to τ (least squares): J_vᵀ G τ is the orthogonal
  projection of τ onto range(J_vᵀ). So the true statement for every vertex F of P_pinv is
  "J_vᵀ F = projection of a box vertex onto range(J_vᵀ)", NOT "|J_vᵀ F| <= τ_max": for a redundant arm
  (n > 3) the projection may exceed a limit, since torques in the null space of J_v (which move the
  arm, not the tool) are counted as if they could be dropped.
- `exact`: the static-equilibrium set P_exact = {F : |J_vᵀ F| <= τ_max}, the intersection of n slabs
  (2n half-spaces). Every F in it is held with torques τ = J_vᵀ F inside the limits.

Relation: P_exact ⊆ P_pinv always (F in P_exact -> τ = J_vᵀ F in B and G τ = F), with equality when
J_v is square and invertible (3 joints). So the torque-weighted force ellipsoid, inscribed in P_exact,
is inscribed in P_pinv too.

Singular or near-singular J_v makes the sets unbounded (exact) or huge (pinv); both are clipped to the cube
|F_i| <= cap [N] (base axes; principal axes for a flat pinv polytope) and flagged `clipped`. An exactly
rank-deficient J_v gives a flat pinv polytope (`dimension` 2, or 1 for a single joint: a segment).
"""
from __future__ import annotations

import functools
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from scipy.spatial import ConvexHull, HalfspaceIntersection

from robokin_ros.core.capability.analysis import CapabilityAnalysis, force_cap
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.validation import check_vector

Array = npt.NDArray[np.float64]
METHODS = ("pinv", "exact")
DEFAULT_CAP_SIGMA = 1e-3    # [m/rad] the default cap is rms(torque_limits) / this, as the ellipsoids' default


@dataclass(frozen=True)
class ForcePolytope:
    """A convex polytope of tool forces; `equations` describe it in its own span coordinates."""

    vertices: Array        # (k, 3) hull vertices [N], base axes
    triangles: npt.NDArray[np.int64]  # (m, 3) indices into vertices, counter-clockwise seen from outside
    basis: Array           # (3, d) orthonormal basis of the polytope's span; y = basisᵀ F
    equations: Array       # (h, d + 1) half-spaces a·y + b <= 0 (a unit) in span coordinates
    dimension: int         # 0..3 (3 = solid)
    volume: float          # [N^3], 0 unless dimension == 3
    method: str            # "pinv" or "exact"
    clipped: bool          # some extent was cut at `cap`
    cap: float             # [N]


@functools.lru_cache(maxsize=16)
def _box_signs(n: int) -> Array:
    """All 2^n sign vectors (2^n, n), cached: the vertex pattern of the torque box."""
    grid = np.array(np.meshgrid(*[[-1.0, 1.0]] * n, indexing="ij"))  # (n, 2, ..., 2)
    return grid.reshape(n, -1).T.copy()


def force_polytope(J: npt.ArrayLike, torque_limits: npt.ArrayLike, method: str = "pinv",
                   cap: float | None = None) -> ForcePolytope:
    """Force polytope of a translational Jacobian block; see the module docstring for both methods.

    Args:
        J: (3, n) translational Jacobian [m/rad | -].
        torque_limits: (n,) positive limits [N m | N].
        method: "pinv" or "exact".
        cap: clip extents at |F_i| <= cap [N]; default rms(torque_limits) / DEFAULT_CAP_SIGMA.

    Raises:
        InvalidInputError: wrong shapes, non-finite or non-positive limits, unknown method.
    """
    J = np.asarray(J, float)
    if J.ndim != 2 or J.shape[0] != 3 or not np.isfinite(J).all():
        raise InvalidInputError(f"J must be a finite (3, n) matrix, got shape {J.shape}")
    tau = check_vector("torque_limits", torque_limits, J.shape[1])
    if (tau <= 0).any():
        raise InvalidInputError(f"torque_limits must be > 0 (missing limits are not zero), got {tau.tolist()}")
    if method not in METHODS:
        raise InvalidInputError(f"unknown polytope method '{method}'; use one of {list(METHODS)}")
    cap = float(cap) if cap is not None else force_cap(tau, DEFAULT_CAP_SIGMA)
    if method == "exact":
        halfspaces = np.vstack([np.hstack([J.T, -tau[:, None]]), np.hstack([-J.T, -tau[:, None]])])
        return _clipped_hull(halfspaces, np.eye(3), cap, "exact")
    points = (_box_signs(J.shape[1]) * tau) @ np.linalg.pinv(J.T).T  # (2^n, 3) = G τ_v
    return _hull_of_points(points, cap)


def tool_force_polytope(analysis: CapabilityAnalysis, method: str, singular_sigma: float) -> ForcePolytope | None:
    """The force polytope at an analysed configuration, clipped where the force ellipsoids are capped.

    Args:
        analysis: the result of `analyze`; its translational Jacobian and torque limits are used.
        method: "pinv" or "exact".
        singular_sigma: the threshold [m/rad] the analysis used; the cap is rms(torque_limits) / it [N].

    Returns:
        The polytope, or None when the analysis has no torque limits (its `unavailable_reason` says why).
    """
    tau = analysis.torque_limits
    if tau is None:
        return None
    return force_polytope(analysis.jacobian[:3], tau, method, force_cap(tau, singular_sigma))


def _hull_of_points(points: Array, cap: float) -> ForcePolytope:
    """Hull of points symmetric about 0, in the subspace they span."""
    scale = np.abs(points).max()
    if scale == 0.0:
        return ForcePolytope(np.zeros((1, 3)), np.zeros((0, 3), np.int64), np.zeros((3, 0)),
                             np.zeros((0, 1)), 0, 0.0, "pinv", False, cap)
    _, s, vt = np.linalg.svd(points, full_matrices=False)
    dim = int((s > 1e-9 * s[0]).sum())
    basis = np.eye(3) if dim == 3 else vt[:dim].T                    # (3, d)
    y = points @ basis                                               # (N, d)
    if dim == 1:
        hi = float(y.max())
        clipped = hi > cap
        hi = min(hi, cap)
        return ForcePolytope(np.array([-hi, hi])[:, None] @ basis.T, np.zeros((0, 3), np.int64), basis,
                             np.array([[1.0, -hi], [-1.0, -hi]]), 1, 0.0, "pinv", clipped, cap)
    if np.abs(y).max() > cap:
        return _clipped_hull(ConvexHull(y).equations, basis, cap, "pinv")
    return _polytope(ConvexHull(y), basis, "pinv", False, cap)


def _clipped_hull(halfspaces: Array, basis: Array, cap: float, method: str) -> ForcePolytope:
    """Intersection of half-spaces (h, d + 1) with the cube |y_j| <= cap; 0 is strictly inside both."""
    d = basis.shape[1]
    cube = np.hstack([np.vstack([np.eye(d), -np.eye(d)]), np.full((2 * d, 1), -cap)])
    meeting = HalfspaceIntersection(np.vstack([halfspaces, cube]), np.zeros(d))
    hull = ConvexHull(meeting.intersections)
    clipped = bool(np.abs(hull.points[hull.vertices]).max() > cap * (1 - 1e-9))
    return _polytope(hull, basis, method, clipped, cap)


def _polytope(hull: ConvexHull, basis: Array, method: str, clipped: bool, cap: float) -> ForcePolytope:
    """Compact vertices and consistently oriented triangles from a 2-D or 3-D scipy hull."""
    index = np.full(len(hull.points), -1)
    index[hull.vertices] = np.arange(len(hull.vertices))
    vertices = hull.points[hull.vertices] @ basis.T                  # (k, 3)
    if basis.shape[1] == 2:                                          # flat: a polygon, both faces
        ring = np.arange(len(vertices))                              # scipy lists 2-D hulls in order
        fan = np.column_stack([np.zeros(len(ring) - 2, int), ring[1:-1], ring[2:]])
        triangles = np.vstack([fan, fan[:, ::-1]])
        return ForcePolytope(vertices, triangles, basis, hull.equations, 2, 0.0, method, clipped, cap)
    triangles = index[hull.simplices]                                # (m, 3)
    v0, v1, v2 = (vertices[triangles[:, i]] for i in range(3))
    inward = np.einsum("ij,ij->i", np.cross(v1 - v0, v2 - v0), hull.equations[:, :3]) < 0
    triangles[inward] = triangles[inward][:, ::-1]
    return ForcePolytope(vertices, triangles, basis, hull.equations, 3, float(hull.volume), method,
                         clipped, cap)


def max_force(polytope: ForcePolytope, direction: npt.ArrayLike) -> float:
    """Largest t [N] with t·d inside the polytope, d = `direction` normalised; 0 outside its span.

    Raises:
        InvalidInputError: a zero or non-finite direction.
    """
    d = check_vector("direction", direction, 3)
    norm = np.linalg.norm(d)
    if norm == 0.0:
        raise InvalidInputError("direction must not be the zero vector")
    d = d / norm
    if polytope.dimension == 0:
        return 0.0
    y = polytope.basis.T @ d                                         # (d,)
    if np.linalg.norm(d - polytope.basis @ y) > 1e-9:
        return 0.0
    rates = polytope.equations[:, :-1] @ y                           # (h,)
    ahead = rates > 1e-15
    return float(np.min(-polytope.equations[ahead, -1] / rates[ahead]))


def stl_bytes(polytope: ForcePolytope, scale: float = 1.0, origin: npt.ArrayLike = (0.0, 0.0, 0.0)) -> bytes:
    """Binary STL of the hull triangles, coordinates origin + scale * F (default: newtons)."""
    tri = np.asarray(origin, float) + scale * polytope.vertices[polytope.triangles]   # (m, 3, 3)
    normals = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    lengths = np.linalg.norm(normals, axis=1, keepdims=True)
    normals = np.divide(normals, lengths, out=np.zeros_like(normals), where=lengths > 0)
    record = np.dtype([("normal", "<f4", 3), ("vertices", "<f4", (3, 3)), ("attribute", "<u2")])
    records = np.zeros(len(tri), record)
    records["normal"], records["vertices"] = normals, tri
    header = f"robokin_ros force polytope ({polytope.method}) [N]".encode()[:80].ljust(80, b" ")
    return header + struct.pack("<I", len(tri)) + records.tobytes()


def write_stl(path: str | Path, polytope: ForcePolytope, scale: float = 1.0,
              origin: npt.ArrayLike = (0.0, 0.0, 0.0)) -> Path:
    """Write `stl_bytes` to `path` (parent folders are created); returns the absolute path."""
    path = Path(path).expanduser().absolute()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(stl_bytes(polytope, scale, origin))
    return path
