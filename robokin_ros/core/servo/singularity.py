"""Optional MoveIt-Servo-style slowing by condition number, applied only to motion toward a singularity.

Damped least squares already keeps the step bounded near singularities; these thresholds are for users
who want the arm to slow down and stop before one, as MoveIt Servo does. Unlike MoveIt Servo, the direction
is judged by the motion actually commanded: the condition number is evaluated a small joint step along
that motion, and only when it grows is the motion "toward" the singularity. A motion away from it is
never halted (an arm started in a singular pose must be able to leave it): it is slowed between the
thresholds times `leaving_singularity_threshold_multiplier`, down to a floor.

Leaving is helped as well (`escape_velocity`): deep in a boundary singularity damping alone barely moves the tool
back (the way out is second order, e.g. bending a stretched elbow), so a joint motion along the direction of
strongest favourable curvature is added while the command leaves.

The probes need the task Jacobian at other positions: callers pass it as a function, `jacobian_at(q)`.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numba import njit

from robokin_ros.core.dls import symmetric_eigen
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.status import ServoStatus

JacobianAt = Callable[[np.ndarray], np.ndarray]     # (n,) positions -> (m, n) task Jacobian there

# Largest joint displacement [rad | m] of the probe step: small enough to be first order, large enough
# that the condition number change is far above rounding.
PROBE_STEP = 1e-4
# Speed factor never undercut while leaving a singularity: slow, but always moving out.
MIN_LEAVING_SCALE = 0.1


def condition_number(A: np.ndarray) -> float:
    """sigma_max / sigma_min of a task Jacobian (m, n); inf when rank deficient."""
    s = np.linalg.svd(A, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0.0 and A.shape[0] <= A.shape[1] else float("inf")


class SingularityScale(NamedTuple):
    """How much of the commanded motion a nearby singularity lets through, and why."""

    scale: float             # uniform velocity factor in [0, 1]
    status: ServoStatus      # OK, HALT_FOR_SINGULARITY or DECELERATE_FOR_{APPROACHING,LEAVING}_SINGULARITY


def singularity_scale(config: ServoConfig, jacobian_at: JacobianAt, positions: np.ndarray, A: np.ndarray,
                      dq: np.ndarray) -> SingularityScale:
    """Uniform velocity factor and status from the condition number of the task Jacobian.

    Args:
        config: its `*_singularity_threshold*` fields are used.
        jacobian_at: the task Jacobian (m, n) at given positions (n,).
        positions: (n,) current positions [rad | m]. A: (m, n) task Jacobian there.
        dq: (n,) the velocity about to be commanded [rad/s | m/s].
    """
    largest = float(np.max(np.abs(dq)))
    cond = condition_number(A)      # SVD here and at the probe: same rounding on both sides
    lower, hard = config.lower_singularity_threshold, config.hard_stop_singularity_threshold
    if largest == 0.0 or cond <= lower:
        return SingularityScale(1.0, ServoStatus.OK)
    if condition_number(jacobian_at(positions + (PROBE_STEP / largest) * dq)) > cond:
        if cond >= hard:
            return SingularityScale(0.0, ServoStatus.HALT_FOR_SINGULARITY)
        return SingularityScale(1.0 - (cond - lower) / (hard - lower),
                                ServoStatus.DECELERATE_FOR_APPROACHING_SINGULARITY)
    lower *= config.leaving_singularity_threshold_multiplier
    hard *= config.leaving_singularity_threshold_multiplier
    if cond <= lower:
        return SingularityScale(1.0, ServoStatus.OK)
    return SingularityScale(max(MIN_LEAVING_SCALE, 1.0 - (cond - lower) / (hard - lower)),
                            ServoStatus.DECELERATE_FOR_LEAVING_SINGULARITY)


def damping_status(jacobian_at: JacobianAt, positions: np.ndarray, A: np.ndarray, b: np.ndarray) -> ServoStatus:
    """While damping is active (sigma_min below its threshold), say whether the command drives the arm toward
    the singularity or away from it. The probe follows the motion the command asks for (the undamped
    least-squares solution of A x = b), not the damped motion the arm makes: pushed into the workspace
    boundary, the damped motion drifts sideways and would read as "leaving" while the user keeps pushing."""
    intent = np.linalg.lstsq(A, b, rcond=None)[0]
    largest = float(np.max(np.abs(intent)))
    if not largest > 0.0:
        return ServoStatus.DECELERATE_FOR_APPROACHING_SINGULARITY
    if condition_number(jacobian_at(positions + (PROBE_STEP / largest) * intent)) > condition_number(A):
        return ServoStatus.DECELERATE_FOR_APPROACHING_SINGULARITY
    return ServoStatus.DECELERATE_FOR_LEAVING_SINGULARITY


# Rotation is compared with travel through a lever of this length [m]: 1 rad/s of tool rotation counts like
# 0.1 m/s, so a pure rotation command that drags the tool origin at 5 cm/s is 50 % off its direction.
DIRECTION_LEVER = 0.1


class DirectionGuard(NamedTuple):
    """Speed factor that keeps the tool on the commanded direction, and how far off it would go."""

    factor: float            # in [0, 1]
    off: float               # sine of the angle between achieved and commanded motion, in [0, 1]


def direction_guard(A: np.ndarray, b: np.ndarray, dq: np.ndarray, tolerance: float,
                    angular_rows: np.ndarray | None = None) -> DirectionGuard:
    """Speed factor in [0, 1] that keeps the commanded twist's direction when joints are held at limits.

    The achieved task velocity a = A dq splits into a part along the command b and a part across it; the
    share of the part across, |a - alpha b| / |a| (the sine of the angle between achieved and commanded
    motion), is how far the tool leaves the commanded direction, whatever the command's size. Below
    tolerance / 2 nothing changes; from there the factor falls linearly to 0 at `tolerance` (Drake's
    DiffIK keeps the direction exactly; this is the servo's softer version).

    Args:
        A: (m, n) task Jacobian. b: (m,) commanded task velocity. dq: (n,) candidate velocity.
        tolerance: relative error at which the factor reaches 0 (> 0).
        angular_rows: (m,) bool, rows that are angular velocities (scaled by DIRECTION_LEVER); None = the
            six rows [v; w].
    """
    if angular_rows is None:
        angular_rows = np.arange(len(b)) >= 3
    weights = np.where(angular_rows, DIRECTION_LEVER, 1.0)              # (m,) [m per rad]
    b = weights * b
    bb = float(b @ b)
    if bb <= 1e-18:
        return DirectionGuard(1.0, 0.0)
    achieved = weights * (A @ dq)                                        # (m,)
    aa = float(achieved @ achieved)
    if aa <= 1e-24:
        return DirectionGuard(1.0, 0.0)                                  # not moving: nothing to guard
    alpha = float(achieved @ b) / bb
    off = float(np.linalg.norm(achieved - alpha * b)) / np.sqrt(aa)
    if alpha <= 0.0:
        return DirectionGuard(0.0, 1.0)
    return DirectionGuard(float(np.clip((tolerance - off) / (0.5 * tolerance), 0.0, 1.0)), off)


# ---- leaving a singularity along its curvature ------------------------------------------------------------
# Finite-difference step [rad | m] for the Jacobian's derivative along a joint direction: the Jacobian is smooth
# (unlike its singular vectors), so the truncation error is ~1e-6 of the curvature and rounding ~1e-10.
ESCAPE_DIFFERENCE_STEP = 1e-6
# Curvature [task units / rad^2] from which the escape runs at full strength. Weaker curvature scales it down
# linearly to nothing at 0, so the escape fades in and out with the geometry instead of switching.
ESCAPE_FULL_CURVATURE = 0.01
# Share of each joint's acceleration budget per tick the escape may add: the rest stays for the damped solve,
# so that the whole velocity still fits the acceleration window as one uniform factor (a per-joint clip would
# bend its direction and undo the first-order cancellation with the other task rows).
ESCAPE_ACCELERATION_SHARE = 0.5
# The curvature is measured where the arm is; as it moves, u turns and the curvature changes. A way out counts
# as open only with this many times the travel the local model needs before a joint limit.
ESCAPE_ROOM_FACTOR = 2.0


class Escape(NamedTuple):
    """Joint velocity that leaves a singularity toward the commanded side, and the direction it follows."""

    velocity: np.ndarray     # (n,) [rad/s | m/s], along `direction`
    direction: np.ndarray    # (n,) unit joint direction, signed: pass it back next step to keep the sign


def escape_velocity(jacobian_at: JacobianAt, positions: np.ndarray, A: np.ndarray, b: np.ndarray,
                    previous: np.ndarray, last_direction: np.ndarray | None, *, sigma_min: float,
                    sigma_threshold: float, max_damping: float, lower: np.ndarray, upper: np.ndarray,
                    acceleration: np.ndarray, dt: float) -> Escape | None:
    """Joint motion that makes the damped direction of the task reachable when the command leaves it.

    Damped least squares reaches the singular task direction u only through v_min, at the gain
    sigma / (sigma^2 + lambda^2), and leaves the singularity only as fast as that motion itself raises sigma.
    Deep in a workspace-boundary singularity (the stretched arm) both are ~0: the way back is second order
    (bending the elbow moves the tool inward by ~angle^2), and it often lies along the self-motion, which the
    first-order solve never picks. Here the slope g(e) = u^T A e of a joint direction e grows, per radian moved
    along e, by u^T (d_e A) e. Among the directions that move no other task row to first order,
    S = span(v_min, null space of A), e maximises that growth toward the commanded side: the top eigenvector
    of sym(sign(c) Q), Q_ij = u^T (d_{s_i} A) s_j, c = u^T b. Moving along e at speed alpha gives the command
    alpha g of its u-component; alpha = min(cap, |c| / g) never overshoots it, and the caller solves the rest,
    b - A alpha e, by damped least squares as usual. The cap fades with the damping (none at the threshold),
    with weak curvature, and grows from the previous velocity along e by a share of the acceleration limits;
    while the slope still has the wrong sign it is small enough that the tool never moves against the command.

    Nothing is returned (the damped solve alone acts) when the task has more rows than joints (a permanent
    rank loss, not a singularity), sigma_min is above the threshold, the command has no u-component, or no
    direction curves toward the commanded side: pushing into the boundary stays damped exactly as before.

    Args:
        jacobian_at: the task Jacobian (m, n) at given positions (n,). positions: (n,) [rad | m].
        A: (m, n) task Jacobian at `positions`. b: (m,) commanded task velocity.
        previous: (n,) the velocity commanded last step [rad/s | m/s].
        last_direction: the `direction` of the previous step's escape, None if there was none.
        sigma_min: smallest singular value of A. sigma_threshold, max_damping: the damping's settings.
        lower, upper: (n,) positions the escape should not run into (the limits less their margins).
        acceleration: (n,) joint acceleration limits [rad/s^2], inf allowed. dt: time to the next step [s].
    """
    m, n = A.shape
    if m > n or not sigma_min < sigma_threshold:
        return None
    u, S = np.empty(m), np.empty((n, n - m + 1))
    _singular_directions(A, u, S)
    dA = np.empty((S.shape[1], m, n))                                   # derivatives of A along S's columns
    for i in range(S.shape[1]):
        dA[i] = jacobian_at(positions + ESCAPE_DIFFERENCE_STEP * S[:, i])
        dA[i] -= A
        dA[i] /= ESCAPE_DIFFERENCE_STEP
    velocity, direction = np.empty(n), np.empty(n)
    has_last = last_direction is not None
    if not _escape_kernel(A, b, u, S, dA, previous, last_direction if has_last else previous, has_last, positions,
                          lower, upper, acceleration, dt, sigma_min, sigma_threshold, max_damping, velocity, direction):
        return None
    return Escape(velocity, direction)


def warm_up_escape(n: int) -> None:
    """Run the escape's compiled kernels once on dummy arrays of the types a solve passes (C-ordered float64),
    so that the first escape in a control loop does not stall it loading them (~40 ms, measured)."""
    A, u, S = np.ones((1, n)), np.empty(1), np.empty((n, n))
    _singular_directions(A, u, S)
    _escape_kernel(A, np.ones(1), u, S, np.zeros((n, 1, n)), np.zeros(n), np.zeros(n), False, np.zeros(n),
                   -np.ones(n), np.ones(n), np.ones(n), 1e-3, 0.5, 1.0, 1.0, np.empty(n), np.empty(n))


@njit(cache=True)
def _singular_directions(A, u, S):
    """u: (m,) unit task direction of the smallest singular value of A (m, n), m <= n; S: (n, n - m + 1) unit
    joint directions v_min and the null space. Eigen-decompositions of A A^T and A^T A (Jacobi): the smallest
    eigenvalue of A A^T is well apart from the others near a single singularity, so u is accurate; those of
    A^T A that make up S are clustered (sigma_min^2 and zeros), so each vector alone is not, but their span is,
    and only the span matters (the caller's quadratic form is basis-free)."""
    m, n = A.shape
    G, H = A @ A.T, A.T @ A                                                   # (m, m), (n, n)
    eu, U, ev, V = np.empty(m), np.empty((m, m)), np.empty(n), np.empty((n, n))
    symmetric_eigen(G, eu, U)
    symmetric_eigen(H, ev, V)
    u[:] = U[:, np.argmin(eu)]
    order = np.argsort(ev)
    for j in range(S.shape[1]):
        S[:, j] = V[:, order[j]]


@njit(cache=True)
def _escape_kernel(A, b, u, S, dA, previous, last, has_last, positions, lower, upper, acceleration, dt, sigma_min,
                   sigma_threshold, max_damping, velocity, direction):
    """The arithmetic of `escape_velocity` once the derivatives dA (k, m, n) of A along S's columns are known.
    Writes `velocity` and `direction`; False when there is no escape."""
    m, n = A.shape
    k = S.shape[1]
    c = 0.0
    for r in range(m):
        c += u[r] * b[r]
    if c == 0.0:
        return False
    side = 1.0 if c > 0.0 else -1.0
    M = np.empty((k, k))                                    # sym(side * Q), Q_ij = u^T (d_i A) s_j
    for i in range(k):
        for j in range(k):
            acc = 0.0
            for r in range(m):
                for col in range(n):
                    acc += u[r] * (dA[i, r, col] * S[col, j] + dA[j, r, col] * S[col, i])
            M[i, j] = 0.5 * side * acc
    w, W = np.empty(k), np.empty((k, k))
    symmetric_eigen(M, w, W)
    top = np.argmax(w)
    curvature = w[top]                                      # [task units / rad^2], toward the commanded side
    if not curvature > 0.0:
        return False
    for j in range(n):
        acc = 0.0
        for i in range(k):
            acc += S[j, i] * W[i, top]
        direction[j] = acc
    slope = 0.0                                             # commanded-side slope of +direction [task units / rad]
    for r in range(m):
        acc = 0.0
        for j in range(n):
            acc += A[r, j] * direction[j]
        slope += side * u[r] * acc
    sign = _escape_sign(direction, slope, curvature, sigma_threshold, positions, lower, upper, last, has_last)
    slope *= sign
    along, reach = 0.0, np.inf
    for j in range(n):
        direction[j] *= sign
        along += previous[j] * direction[j]
        if direction[j] != 0.0:
            reach = min(reach, acceleration[j] / abs(direction[j]))
    ratio = sigma_min / sigma_threshold
    cap = (1.0 - ratio * ratio) * min(1.0, curvature / ESCAPE_FULL_CURVATURE) * abs(c) / sigma_threshold
    cap = min(cap, max(0.0, along) + ESCAPE_ACCELERATION_SHARE * dt * reach)
    if slope < 0.0:
        # Still on the far side of the curve: the first-order effect runs against the command until the curvature
        # has turned the slope. The damped solve passes gamma = sigma^2 / (sigma^2 + lambda^2) of the command's
        # u-component and of what the escape takes from it; this speed keeps their sum from reversing.
        lam2 = max_damping * max_damping * (1.0 - ratio * ratio)
        cap = min(cap, abs(c) * sigma_min * sigma_min / (-slope * lam2))
    speed = abs(c) / slope if slope * cap > abs(c) else cap
    for j in range(n):
        velocity[j] = speed * direction[j]
    return True


@njit(cache=True)
def _escape_sign(e, slope, curvature, sigma_threshold, positions, lower, upper, last, has_last):
    """+1 or -1: which way along e to go (slope: that of +e).

    Keep the way taken last step. At the start, a way is open when a joint limit leaves it ESCAPE_ROOM_FACTOR
    times the travel after which the local model, slope + curvature * travel, reaches the damping threshold
    (the Panda's elbow, bent back from the stretch, could straighten only into its limit). Of two open ways take
    the one whose slope already helps (the other crosses the singularity first); of two closed ones the longer.
    """
    if has_last:
        dot = 0.0
        for j in range(e.shape[0]):
            dot += e[j] * last[j]
        if dot != 0.0:
            return 1.0 if dot > 0.0 else -1.0
    forward = backward = np.inf                              # [rad along e] before a joint limit
    for j in range(e.shape[0]):
        if e[j] > 0.0:
            forward = min(forward, max(0.0, upper[j] - positions[j]) / e[j])
            backward = min(backward, max(0.0, positions[j] - lower[j]) / e[j])
        elif e[j] < 0.0:
            forward = min(forward, max(0.0, positions[j] - lower[j]) / -e[j])
            backward = min(backward, max(0.0, upper[j] - positions[j]) / -e[j])
    open_forward = forward >= ESCAPE_ROOM_FACTOR * (sigma_threshold - slope) / curvature
    open_backward = backward >= ESCAPE_ROOM_FACTOR * (sigma_threshold + slope) / curvature
    if open_forward == open_backward:
        if open_forward:
            return 1.0 if slope >= 0.0 else -1.0
        return 1.0 if forward >= backward else -1.0
    return 1.0 if open_forward else -1.0
