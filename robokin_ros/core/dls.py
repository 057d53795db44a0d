"""Low-level kernel of the velocity IK: bounded damped least squares with a null-space term.

Compiled with numba (`cache=True`: the machine code is stored next to this file, so only the very first
import on a machine pays the compile time). Everything here works on plain float64 arrays, never on robot
objects, so the path-IK solver can call `bounded_dls` directly in its own loop.

Maths, for a task Jacobian A (m, n) and task velocity b (m,):
- eigen-decomposition A A^T = U diag(e) U^T gives the singular values s_i = sqrt(e_i) of A, so one small
  symmetric eigen-problem yields sigma_min, the condition number, the damped solve and the null space;
- damped least squares dq = A^T (A A^T + lambda^2 I)^-1 b, with lambda^2 = max_damping^2 (1 - (s_min /
  sigma_threshold)^2) below the threshold and 0 above it (continuous, zero far from singularities), so
  the step is exact far away and bounded near a singularity;
- null-space term N z with N = I - sum_i v_i v_i^T over the non-negligible directions v_i = A^T u_i / s_i:
  an orthogonal projector onto the null space of A, so A N z = 0 even while the task itself is damped;
- bounds dq_lo <= dq <= dq_hi (joint position limits turned into velocities by the caller): a joint whose
  total velocity leaves its bound is fixed at that bound, its column removed from A, its contribution
  subtracted from b, and the rest solved again (an active set that grows by the worst joint per pass);
  a joint fixed at a zero bound is the "locked" joint of the servo.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

# Eigenvalues of A A^T below this share of the largest are treated as zero for the null-space projector
# (singular-value ratio 1e-5): their eigenvectors are accurate to ~1e-6 there, so the projector stays
# orthogonal while the dropped directions change the task by at most 1e-5 * sigma_max * |z|.
_RANK_RTOL = 1e-10
# Relative slack before a joint counts as outside its bound (rounding of dq_lo/dq_hi themselves).
_BOUND_RTOL = 1e-12
# Absolute slack [rad/s]: a push of this size is rounding noise (1e-12 rad/s for 1 s moves 1e-12 rad), and
# locking a joint for it would report a spurious JOINT_BOUND; the final clip removes it exactly.
_BOUND_ATOL = 1e-12


class DlsOutcome(NamedTuple):
    """What a bounded DLS solve reports besides the velocity (a NamedTuple: free inside compiled code)."""

    sigma_min: float            # smallest singular value of the full task Jacobian
    condition_number: float     # sigma_max / sigma_min, inf at an exact singularity
    damping: float              # lambda used in the final pass


@njit(cache=True)
def damping_factor(sigma_min: float, sigma_threshold: float, max_damping: float) -> float:
    """Damping lambda [-] for a smallest singular value: 0 above `sigma_threshold`, `max_damping` at 0."""
    if sigma_min >= sigma_threshold:
        return 0.0
    ratio = sigma_min / sigma_threshold
    return max_damping * np.sqrt(1.0 - ratio * ratio)


@njit(cache=True)
def symmetric_eigen(M, evals, V):
    """Eigen-decomposition of a small symmetric matrix by cyclic Jacobi rotations (M is overwritten).

    For the <= 6x6 Gram matrices here this beats a LAPACK call through numpy or numba (no dispatch, no
    allocation), and Jacobi is accurate to rounding in every eigenvalue relative to the matrix norm.

    Args:
        M: (m, m) symmetric, destroyed. evals: (m,) output eigenvalues (any order).
        V: (m, m) output, column i is the unit eigenvector of evals[i].
    """
    m = M.shape[0]
    for i in range(m):
        for j in range(m):
            V[i, j] = 1.0 if i == j else 0.0
    for _sweep in range(50):
        rotated = False
        for p in range(m - 1):
            for r in range(p + 1, m):
                apr = M[p, r]
                # converged pair: rotating would change nothing representable in the diagonal
                if abs(apr) <= 1e-18 * np.sqrt(abs(M[p, p] * M[r, r])) or apr == 0.0:
                    continue
                rotated = True
                theta = (M[r, r] - M[p, p]) / (2.0 * apr)
                t = 1.0 / (abs(theta) + np.sqrt(theta * theta + 1.0))
                if theta < 0.0:
                    t = -t
                c = 1.0 / np.sqrt(t * t + 1.0)
                s = t * c
                # M <- G^T M G touching only rows/columns p, r (M stays exactly symmetric and the
                # annihilated pair exactly zero, so no sweep is spent re-rotating rounding residue)
                M[p, p] -= t * apr
                M[r, r] += t * apr
                M[p, r] = 0.0
                M[r, p] = 0.0
                for k in range(m):
                    if k != p and k != r:
                        mkp, mkr = M[k, p], M[k, r]
                        M[k, p] = M[p, k] = c * mkp - s * mkr
                        M[k, r] = M[r, k] = s * mkp + c * mkr
                    vkp, vkr = V[k, p], V[k, r]                 # V <- V G
                    V[k, p] = c * vkp - s * vkr
                    V[k, r] = s * vkp + c * vkr
        if not rotated:
            break
    for i in range(m):
        evals[i] = M[i, i]


@njit(cache=True)
def scratch_size(n, rows=6):
    """Length of the float64 scratch vector of `bounded_dls_into` for n joints and up to `rows` task rows (at
    least 6; more for a stacked task of several tips).

    Layout (R = max(rows, 6)): W (R n), fixed values, unlimited velocity, null-space part (3n), G and U (2 R^2),
    six m-vectors of `_solve_pass` (6 R), the remaining task r (R). With R = 6 this is the one-tip layout.
    """
    rows = max(rows, 6)
    return rows * n + 3 * n + 2 * rows * rows + 7 * rows


@njit(cache=True)
def _solve_pass(W, r, z, sigma_threshold, max_damping, dq, nz, G, U, v6):
    """One DLS + null-space solve for the working Jacobian W (m, n); returns (s_min, s_max, lambda).

    G, U: (m, m) scratch; v6: (6, m) scratch rows (eigenvalues, W z, c, y, U c, U y). No allocation.
    """
    m, n = W.shape
    for i in range(m):                                      # G = W W^T
        for j in range(i, m):
            acc = 0.0
            for k in range(n):
                acc += W[i, k] * W[j, k]
            G[i, j] = acc
            G[j, i] = acc
    evals, Wz, c, y, Uc, Uy = v6[0], v6[1], v6[2], v6[3], v6[4], v6[5]
    symmetric_eigen(G, evals, U)
    e_min, e_max = evals.min(), max(evals.max(), 0.0)
    s_min = np.sqrt(max(e_min, 0.0))
    lam = damping_factor(s_min, sigma_threshold, max_damping)
    lam2 = lam * lam
    for i in range(m):                                      # W z
        acc = 0.0
        for k in range(n):
            acc += W[i, k] * z[k]
        Wz[i] = acc
    rank_tol = max(_RANK_RTOL * e_max, 1e-300)
    for i in range(m):
        ci, yi = 0.0, 0.0
        for k in range(m):
            ci += U[k, i] * r[k]
            yi += U[k, i] * Wz[k]
        denom = evals[i] + lam2
        c[i] = ci / denom if denom > rank_tol else 0.0
        y[i] = yi / evals[i] if evals[i] > rank_tol else 0.0
    for i in range(m):                                      # U c, U y
        a1, a2 = 0.0, 0.0
        for k in range(m):
            a1 += U[i, k] * c[k]
            a2 += U[i, k] * y[k]
        Uc[i] = a1
        Uy[i] = a2
    # The exact null space turns quickly near a singularity (its projector divides by sigma^2), so a
    # secondary task pushing there makes the arm dither against the primary task; it fades out as the
    # damping rises (full strength while undamped, none at sigma = 0), which keeps everything continuous.
    fade = 1.0 - lam / max_damping if max_damping > 0.0 else 1.0
    fade *= fade
    for j in range(n):
        task, back = 0.0, 0.0
        for k in range(m):
            task += W[k, j] * Uc[k]
            back += W[k, j] * Uy[k]
        dq[j] = task
        nz[j] = fade * (z[j] - back)                        # z minus its row-space part, faded
    return s_min, np.sqrt(e_max), lam


@njit(cache=True)
def bounded_dls(A, b, z, dq_lo, dq_hi, sigma_threshold, max_damping, dq_out, fixed_out):
    """Bounded damped least squares with a null-space term; writes the joint velocity into `dq_out`.

    Stable signature (the path-IK solver calls it directly):

    Args:
        A: (m, n) float64 task Jacobian, m >= 1 (rows = constrained task axes; more than 6 for a stacked
            task of several tips). Not modified.
        b: (m,) float64 task velocity [m/s, rad/s] (or a pose error per step, with dt = 1).
        z: (n,) float64 desired secondary joint velocity; only its null-space part N z is applied.
        dq_lo: (n,) float64 lower velocity bounds, each <= 0 (position limits turned into velocities).
        dq_hi: (n,) float64 upper velocity bounds, each >= 0; use -inf / inf for no bound.
        sigma_threshold: smallest singular value below which damping starts (> 0).
        max_damping: damping lambda reached at sigma_min = 0 (>= 0).
        dq_out: (n,) float64 output: joint velocity, always inside [dq_lo, dq_hi].
        fixed_out: (n,) int8 output: 1 where the joint was fixed at a bound (0 there = locked), else 0.

    Returns:
        DlsOutcome: sigma_min and sigma_max / sigma_min (inf at an exact singularity) of the full task
        Jacobian A, and the lambda used in the final pass.
    """
    scratch = np.empty(scratch_size(A.shape[1], A.shape[0]))
    return bounded_dls_into(A, b, z, dq_lo, dq_hi, sigma_threshold, max_damping, dq_out, fixed_out, scratch)


@njit(cache=True)
def _active_set_views(A, b, scratch):
    """Work arrays of the active-set loop inside `scratch`, initialised: W = A (fixed joints' columns get
    zeroed), r = b (the task left for the free joints), nothing fixed yet."""
    m, n = A.shape
    W = scratch[:m * n].reshape((m, n))                     # (m, n)
    rows = max(m, 6)                                        # the layout of scratch_size(n, rows)
    at = rows * n
    fixed_val, dq, nz = scratch[at:at + n], scratch[at + n:at + 2 * n], scratch[at + 2 * n:at + 3 * n]
    at += 3 * n
    G = scratch[at:at + m * m].reshape((m, m))
    U = scratch[at + rows * rows:at + rows * rows + m * m].reshape((m, m))
    at += 2 * rows * rows
    v6 = scratch[at:at + 6 * m].reshape((6, m))
    r = scratch[at + 6 * m:at + 7 * m]                      # (m,)
    for i in range(m):
        r[i] = b[i]
        for j in range(n):
            W[i, j] = A[i, j]
    for j in range(n):
        fixed_val[j] = 0.0
    return W, r, fixed_val, dq, nz, G, U, v6


@njit(cache=True)
def _fix_worst_violator(dq, dq_lo, dq_hi, W, r, fixed_out, fixed_val, dq_out):
    """Copy the candidate `dq` (fixed joints keep their value) into `dq_out`; fix the joint that leaves its
    bound by the most at that bound and move its contribution to the task side. False when none leaves."""
    m, n = W.shape
    worst = -1
    worst_excess = 0.0
    for j in range(n):
        if fixed_out[j] == 1:
            dq_out[j] = fixed_val[j]
            continue
        v = dq[j]
        dq_out[j] = v
        # excess = how far past the bound, relative to the bound (a zero bound is always worst)
        if v > dq_hi[j] * (1.0 + _BOUND_RTOL) + _BOUND_ATOL:
            excess = np.inf if dq_hi[j] <= 0.0 else v / dq_hi[j]
        elif v < dq_lo[j] * (1.0 + _BOUND_RTOL) - _BOUND_ATOL:
            excess = np.inf if dq_lo[j] >= 0.0 else v / dq_lo[j]
        else:
            continue
        if worst < 0 or excess > worst_excess:
            worst = j
            worst_excess = excess
    if worst < 0:
        return False
    bound = dq_hi[worst] if dq_out[worst] > 0.0 else dq_lo[worst]
    fixed_out[worst] = 1
    fixed_val[worst] = bound
    for i in range(m):
        r[i] -= W[i, worst] * bound
        W[i, worst] = 0.0
    return True


@njit(cache=True)
def _clip_into_bounds(dq_out, dq_lo, dq_hi):
    for j in range(dq_out.shape[0]):                        # remove rounding-level excess
        dq_out[j] = min(max(dq_out[j], dq_lo[j]), dq_hi[j])


@njit(cache=True)
def bounded_dls_into(A, b, z, dq_lo, dq_hi, sigma_threshold, max_damping, dq_out, fixed_out, scratch):
    """`bounded_dls` working in a caller-owned float64 scratch vector (>= scratch_size(n, m)): no allocation."""
    n = A.shape[1]
    W, r, fixed_val, dq, nz, G, U, v6 = _active_set_views(A, b, scratch)
    for j in range(n):
        fixed_out[j] = 0
    s_min0 = 0.0
    cond0 = np.inf
    lam = 0.0
    for it in range(n + 1):
        s_min, s_max, lam = _solve_pass(W, r, z, sigma_threshold, max_damping, dq, nz, G, U, v6)
        if it == 0:
            s_min0 = s_min
            cond0 = s_max / s_min if s_min > 0.0 else np.inf
        for j in range(n):
            dq[j] += nz[j]
        if not _fix_worst_violator(dq, dq_lo, dq_hi, W, r, fixed_out, fixed_val, dq_out):
            break
    _clip_into_bounds(dq_out, dq_lo, dq_hi)
    return DlsOutcome(s_min0, cond0, lam)


# ---- Cholesky fast path (the path IK's sample steps, far from singularities) ----------------------------
# Certification slack: a pass takes the Cholesky route only when the certified bound clears the damping
# threshold by this relative margin, far above the rounding of the factorization (~m eps ||G||).
_CHOL_MARGIN = 1e-6


@njit(cache=True)
def _cholesky_pass(W, r, z, sigma_threshold, out, G, v6):
    """Undamped pass by Cholesky when sigma_min(W) >= sigma_threshold is certified; returns the bound or -1.

    Bound: with G = W W^T = L L^T, G^-1 = L^-T L^-1, so 1 / lambda_min(G) = ||G^-1||_2 = ||L^-1||_2^2
    <= ||L^-1||_F^2, hence sigma_min(W) = sqrt(lambda_min(G)) >= 1 / ||L^-1||_F (loose by at most sqrt(m)).
    When it clears the threshold, `_solve_pass` would use lambda = 0 and keep every eigen-direction
    (evals > _RANK_RTOL * e_max is also certified, with e_max <= trace G), so its dq + N z equals
    z + W^T G^-1 (r - W z), which is what is computed here: the same result up to rounding, without the
    Jacobi eigen-decomposition. Otherwise (-1) the caller runs the exact `_solve_pass`.

    out: (n,) dq + N z. G: (m, m) scratch (overwritten by L). v6: (6, m) scratch rows.
    """
    m, n = W.shape
    trace = 0.0
    for i in range(m):
        for j in range(i + 1):
            acc = 0.0
            for k in range(n):
                acc += W[i, k] * W[j, k]
            G[i, j] = acc
        trace += G[i, i]
    for j in range(m):                                      # L in the lower triangle of G
        d = G[j, j]
        for k in range(j):
            d -= G[j, k] * G[j, k]
        if not d > 0.0:
            return -1.0
        d = np.sqrt(d)
        G[j, j] = d
        for i in range(j + 1, m):
            acc = G[i, j]
            for k in range(j):
                acc -= G[i, k] * G[j, k]
            G[i, j] = acc / d
    x, u = v6[0], v6[1]
    frob = 0.0                                              # ||L^-1||_F^2, column by column
    for c in range(m):
        for i in range(m):
            acc = 1.0 if i == c else 0.0
            for k in range(c, i):
                acc -= G[i, k] * x[k]
            x[i] = acc / G[i, i] if i >= c else 0.0
            frob += x[i] * x[i]
    bound2 = 1.0 / frob
    limit = sigma_threshold * (1.0 + _CHOL_MARGIN)
    if bound2 < limit * limit or bound2 <= _RANK_RTOL * trace * (1.0 + _CHOL_MARGIN):
        return -1.0
    for i in range(m):                                      # u = r - W z
        acc = r[i]
        for k in range(n):
            acc -= W[i, k] * z[k]
        u[i] = acc
    for i in range(m):                                      # L L^T u' = u
        acc = u[i]
        for k in range(i):
            acc -= G[i, k] * u[k]
        u[i] = acc / G[i, i]
    for i in range(m - 1, -1, -1):
        acc = u[i]
        for k in range(i + 1, m):
            acc -= G[k, i] * u[k]
        u[i] = acc / G[i, i]
    for j in range(n):
        acc = z[j]
        for k in range(m):
            acc += W[k, j] * u[k]
        out[j] = acc
    return np.sqrt(bound2)


@njit(cache=True)
def bounded_dls_fast_into(A, b, z, dq_lo, dq_hi, sigma_threshold, max_damping, dq_out, fixed_out, scratch):
    """`bounded_dls_into` with the Cholesky pass where it is certified; returns sigma_min only.

    Same active set, bounds and result (up to rounding) as `bounded_dls_into`. The returned value is the
    first pass's sigma_min when it is below sigma_threshold (exact, from the eigen-decomposition), else a
    certified lower bound >= sigma_threshold (enough to decide damping and singularity reporting).
    """
    n = A.shape[1]
    W, r, fixed_val, dq, nz, G, U, v6 = _active_set_views(A, b, scratch)
    for j in range(n):
        fixed_out[j] = 0
    s_min0 = 0.0
    for it in range(n + 1):
        s_min = _cholesky_pass(W, r, z, sigma_threshold, dq, G, v6)
        if s_min < 0.0:
            s_min, _, _ = _solve_pass(W, r, z, sigma_threshold, max_damping, dq, nz, G, U, v6)
            for j in range(n):
                dq[j] += nz[j]
        if it == 0:
            s_min0 = s_min
        if not _fix_worst_violator(dq, dq_lo, dq_hi, W, r, fixed_out, fixed_val, dq_out):
            break
    _clip_into_bounds(dq_out, dq_lo, dq_hi)
    return s_min0


# ---- two priority levels (a held object: the grasp rows first, the object's in their null space) --------------
@njit(cache=True)
def prioritized_scratch_size(n, rows):
    """Length of the float64 scratch vector of `prioritized_dls_into` for n joints and `rows` task rows: the
    `bounded_dls_into` layout, then the secondary rows projected into the primary's null space (rows n), the
    primary velocity and the secondary null-space part (2 n), the secondary's remaining task (rows), and a second
    set of eigen buffers (2 rows^2 + 6 rows)."""
    rows = max(rows, 6)
    return scratch_size(n, rows) + rows * n + 2 * n + rows + 2 * rows * rows + 6 * rows


@njit(cache=True)
def _project_rows_into(W1, U1, e1, rank_tol, W2, P, t, c):
    """P = W2 N1, with N1 = I - W1^T (W1 W1^T)^+ W1 the orthogonal projector onto W1's null space, from the
    eigen-decomposition (U1, e1) of W1 W1^T (eigenvalues at or below rank_tol dropped, as `_solve_pass` does).
    t, c: (p,) scratch."""
    p, n = W1.shape
    for i in range(W2.shape[0]):
        for k in range(p):                                  # t = W1 w_i
            acc = 0.0
            for j in range(n):
                acc += W1[k, j] * W2[i, j]
            t[k] = acc
        for k in range(p):                                  # c = diag(1/e) U1^T t
            acc = 0.0
            for q in range(p):
                acc += U1[q, k] * t[q]
            c[k] = acc / e1[k] if e1[k] > rank_tol else 0.0
        for k in range(p):                                  # t = U1 c
            acc = 0.0
            for q in range(p):
                acc += U1[k, q] * c[q]
            t[k] = acc
        for j in range(n):
            acc = W2[i, j]
            for k in range(p):
                acc -= W1[k, j] * t[k]
            P[i, j] = acc


@njit(cache=True)
def _prioritized_pass(W, r, p, z, sigma_threshold, max_damping, out, nz1, G, U, v6, P, dq1, nz2, r2, G2, U2, v62):
    """One two-level pass on the working Jacobian W (m, n): rows [0, p) first (damped only by their own
    sigma_min), rows [p, m) projected into their null space (P = W2 N1, damped by sigma_min(P)), the null-space
    term z last (in the null space of both, faded by each level's damping). out = the whole velocity.
    Returns (s_min, s_max, lambda): the smaller sigma_min, the larger sigma_max and lambda of the two levels."""
    m, n = W.shape
    W1, W2 = W[:p], W[p:]
    # nz1 = fade1 * N1 z: the posture already in the primary's null space, handed down to the secondary level
    s1, smax1, lam1 = _solve_pass(W1, r[:p], z, sigma_threshold, max_damping, dq1, nz1, G, U, v6)
    e1 = v6[0]
    e_max = 0.0
    for i in range(p):
        e_max = max(e_max, e1[i])
    _project_rows_into(W1, U, e1, max(_RANK_RTOL * e_max, 1e-300), W2, P, v6[1], v6[2])
    for i in range(m - p):                                  # the secondary rows' task left by the primary velocity
        acc = r[p + i]
        for j in range(n):
            acc -= W2[i, j] * dq1[j]
        r2[i] = acc
    s2, smax2, lam2 = _solve_pass(P, r2, nz1, sigma_threshold, max_damping, out, nz2, G2, U2, v62)
    for j in range(n):
        out[j] += dq1[j] + nz2[j]
    return min(s1, s2), max(smax1, smax2), max(lam1, lam2)


@njit(cache=True)
def prioritized_dls_into(A, b, primary, z, dq_lo, dq_hi, sigma_threshold, max_damping, dq_out, fixed_out, scratch):
    """`bounded_dls_into` with two priority levels: the first `primary` rows of A (0 < primary < m) are solved
    first, the other rows in their null space, z in the null space of both. Near a singularity of the secondary
    rows their damping slows or deflects only their motion; the primary rows keep their velocity (unless they are
    near a singularity themselves, where they are damped by their own sigma_min).

    Bounds: the same active set as `bounded_dls_into` (a hierarchical bounded DLS): each pass solves both levels
    on the free joints' columns; the joint that leaves its bound by the most is fixed there, its contribution
    moved to the task side of both levels, and the pass repeated. When the stacked A is certified well
    conditioned (sigma_min(A) >= sigma_threshold) both levels are undamped and the result equals the plain solve's
    (the minimum-norm solution of the whole task), since sigma_min(A) <= sigma_min of each level.

    scratch: >= prioritized_scratch_size(n, m). Returns DlsOutcome: sigma_min = the smaller of the two levels'
    (sigma_min(A1), sigma_min(A2 N1)) in the first pass; condition_number = the larger sigma_max over that
    sigma_min; damping = the larger lambda of the last pass.
    """
    m, n = A.shape
    W, r, fixed_val, dq, nz, _, _, _ = _active_set_views(A, b, scratch)
    rows, p, m2 = max(m, 6), primary, m - primary
    at = rows * n + 3 * n                                   # the eigen buffers of the base layout, for level 1
    G1 = scratch[at:at + p * p].reshape((p, p))
    U1 = scratch[at + rows * rows:at + rows * rows + p * p].reshape((p, p))
    at += 2 * rows * rows
    v61 = scratch[at:at + 6 * p].reshape((6, p))            # (r follows at 6 m: p < m keeps them apart)
    at = scratch_size(n, rows)                              # the additions, for level 2
    P = scratch[at:at + m2 * n].reshape((m2, n))
    at += rows * n
    dq1, nz2 = scratch[at:at + n], scratch[at + n:at + 2 * n]
    at += 2 * n
    r2 = scratch[at:at + m2]
    at += rows
    G2 = scratch[at:at + m2 * m2].reshape((m2, m2))
    U2 = scratch[at + rows * rows:at + rows * rows + m2 * m2].reshape((m2, m2))
    at += 2 * rows * rows
    v62 = scratch[at:at + 6 * m2].reshape((6, m2))
    for j in range(n):
        fixed_out[j] = 0
    s_min0 = 0.0
    cond0 = np.inf
    lam = 0.0
    for it in range(n + 1):
        s_min, s_max, lam = _prioritized_pass(W, r, primary, z, sigma_threshold, max_damping, dq, nz, G1, U1, v61,
                                              P, dq1, nz2, r2, G2, U2, v62)
        if it == 0:
            s_min0 = s_min
            cond0 = s_max / s_min if s_min > 0.0 else np.inf
        if not _fix_worst_violator(dq, dq_lo, dq_hi, W, r, fixed_out, fixed_val, dq_out):
            break
    _clip_into_bounds(dq_out, dq_lo, dq_hi)
    return DlsOutcome(s_min0, cond0, lam)
