"""The servo's windows with joint jerk limits (issue 27): each joint piecewise constant jerk, the acceleration
continuous within every window and from one window to the next.

Used only when the configuration sets a jerk limit (`max_joint_jerk` / `default_joint_jerk`); without one the
servo builds its windows in window.py, unchanged.

Each tick, from the commanded state (q, v, a) at time 0 (the previous window's state where this one takes over),
toward the velocities the IK wants, vt (each within A tau of the velocity limits: see `velocity_cap`; with jerk
limits the IK applies no acceleration window of its own, commands.py `acceleration_window_time`: this window is the
limiter):
- [0, dt], per joint: a constant-jerk plan from (v, a) to (vt, 0) (`_plan`: jerk +-J to a peak acceleration of at
  most A, held, then jerk -+J to zero, arriving without overshoot), played on a grid of GRID_STEP
  (`_append_on_grid`), cut at dt; the state at dt is where the next tick starts. A target that moves every tick is
  met by a new plan every tick, from the state reached, acceleration included;
- the plans are synchronized (`_synchronizing_scales`): the slowest joint's time-optimal plan sets the length T,
  and every other joint plans with its limits scaled, c (A, J), c in (0, 1], so that its plan takes T too. Why:
  each joint on its own time-optimal plan reaches its new velocity at its own time, so during a change the joint
  velocity vector leaves the line from v0 to vt and the tool leaves its direction (the demo's square through the
  Servo, the IK's window off: 0.31 mm off the commanded square unsynchronized, 0.18 synchronized, 0.17
  acceleration-limited; test_jerk_takeover.py). From rest in acceleration, with the same A / J on every joint (the
  Panda's and the UR presets' 2 ms), the scaled plans are one profile times each joint's change: the velocity moves
  on the straight line (test/core/servo/test_jerk_takeover.py: within 1e-3 of the change, the grid's rounding;
  17 to 22 % off it unsynchronized). From a state with an acceleration c is found numerically. The rest of a
  synchronized plan is the synchronized plan from the state it reaches, so windows made one after the other toward
  a wanted velocity that holds find the same scales;
- the position condition, per joint: from the state at dt the joint must still be able to stop (the plan to
  velocity 0, an S-curve, at its real limits) without passing its limit margin; if it cannot, it starts that stop
  now, at 0 (a jerk-aware `braking_speed`: the room is judged on the jerk-limited stop, longer than a_max's);
- after dt, as without jerk limits, the motion is carried on up to `max_expected_latency` (a late next window
  finds the arm still moving, not braking), as the next windows will move it while vt holds: the joints go on with
  their plans toward vt, made again and synchronized again at every period's end as the next window makes them
  (`_continue_together`), to the cruise end, holding vt once there (a joint whose vt is 0 comes to rest so). A
  controller takes a window over when it arrives, after its stamp; a window whose carried motion disagreed with the
  next one stepped the acceleration there, by up to J times the delay (bench/jerk_takeover.py,
  test/core/servo/test_jerk_takeover.py). Then, if the plan has not arrived by the cruise end, its acceleration
  back to 0 (at the plan's scaled J: the joints still together), and one S-curve stop all these joints share
  (`_shared_stop_steps`: every velocity scaled by the same s(t) from 1 to 0, so the tool keeps its direction while
  it stops, and the joints share their switching times); a joint that would so pass its margin makes its own stop
  from dt instead. The stops of the ticks that track nothing (stale command, pause, no joint state, a refused
  window) are made together from the state now too (`_stop_together`, `JerkWindows.stopping`): the tool stops
  along its line. Stops, margin braking and the velocity cap keep the real limits;
- then the hold.
The points are at every switching time (all on the grid), and a cubic Hermite through the ends of a constant-jerk
interval is that interval: a controller playing the window (JTC's spline for positions and velocities) follows each
joint's profile exactly, acceleration continuous at the points and from one window to the next.

Where the IK's wanted velocity itself moves from tick to tick (a held twist near a singularity, where the joint
velocities change fast), a window taken over late still meets a plan toward another target than its own carried
one: up to ~2.3 J seen at 1 kHz with windows half a period late (the demo's stretch).

numba kernels on plain float64 arrays (`cache=True`), one call per tick.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from robokin_ros.core.errors import ConfigError
from robokin_ros.core.schema import per_joint_values
from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.types import TrajectoryWindow, frozen
from robokin_ros.core.trajectory.jerk_check import CONTROLLER_PERIOD, window_jerk_violation
from robokin_ros.core.trajectory.outgoing_check import JERK_TOLERANCE, LIMIT_TOLERANCE, WINDOW_OK, window_violation

# [s] the grid every switching time is on (the period split into whole steps near this). A cubic through points
# microseconds apart amplifies the rounding of the positions into jerks (12 eps |q| / h^3: 0.4 % of a Panda's limit
# at 10 us, far less at 100 us), and a switching time left out of the points breaks the cubic's match (J * 10 us of
# acceleration missed for one 10 us off: 1 % of J seen at 1 kHz); a coarser grid means fewer points per window
# (the outgoing check's cost) and a later arrival (a plan's phases end up to a step late).
GRID_STEP = 1e-4
# A plan this many grid steps long or shorter is closed exactly (`_closing_jerks`), in at most CLOSING_TRIES more.
# (Compared with half a step of room: on the grid a plan's length is often a whole number of steps, and a rounding
# either side of CLOSING_STEPS would choose differently for two windows planning from the same state.)
CLOSING_STEPS = 3
CLOSING_TRIES = 4
# Plans made per profile (`_append_on_grid`): each consumes a phase or a grid step.
MAX_REPLANS = 12
# The synchronized plans (`_synchronizing_scale`): a joint's limits are scaled by c in [MIN_SYNC_SCALE, 1] so that
# its plan takes as long as the slowest joint's, found to SYNC_TOLERANCE of that length (relative) in at most
# SYNC_ITERATIONS steps. (A window and the next, made from its state at dt, then find the same c to ~1e-13: the
# takeover agreement.) A joint whose own plan is shorter than SYNC_NEGLIGIBLE [s] is not scaled: its change is
# nothing the tool's direction could show, and a scale toward 0 would only make its plan degenerate.
MIN_SYNC_SCALE = 1e-6
SYNC_TOLERANCE = 1e-9
SYNC_ITERATIONS = 60
SYNC_NEGLIGIBLE = 1e-9
# The secant's step past a guess that is still too fast, stretched by this so that one step usually brackets the root
SYNC_OVERSHOOT = 1.1
SYNC_SECANT_TRIES = 3
# Segments a joint can have: the profile within the first period and its cruise to dt, then its own stop, or in
# its place its plan on to the cruise end (made again each period while room is left, then a profile uncut:
# `_continue_plan`), the acceleration back to 0, the cruise and the shared stop (3). A profile (`_append_on_grid`)
# has at most MAX_REPLANS - 1 segments and a closing of CLOSING_STEPS + CLOSING_TRIES - 1.
PROFILE_SEGMENTS = MAX_REPLANS + CLOSING_STEPS + CLOSING_TRIES
MAX_SEGMENTS = 4 * PROFILE_SEGMENTS + 5
# A stopping state counts as in proportion (a = kappa v, `_stop_together`) within this share of each joint's A: the
# rounding of the shared S-curve's sums (1e-15 of it), with room
PROPORTION_TOLERANCE = 1e-9
# [rad/s] a joint this far from the IK's velocity at dt is still ramping: the status says the jerk limits shape it
SHAPING_THRESHOLD = 1e-6
JERK_SHAPING = "jerk limits shape the ramp toward the command"
# |value| under which a sum of a few thousand values cannot overflow (`_plainly_finite`)
PLAINLY_FINITE = 1e300
# Point counts `JerkWindows.point_counts` names for a node to prepare its messages for
PREPARED_POINTS = 48
_NS = 1e9
# Rows of the `limits` table of `jerk_window_arrays`, (8, n): window.py's six (W_*), the jerk limits, the velocity cap.
J_LOWER, J_UPPER, J_INNER_LOWER, J_INNER_UPPER, J_AMAX, J_VMAX, J_JMAX, J_CAP = range(8)


@njit(cache=True)
def _plan(v0, a0, vt, amax, jmax):
    """The time-optimal constant-jerk phases that take a joint from velocity v0 and acceleration a0 to velocity vt
    at rest in acceleration, |jerk| <= jmax, |a| <= amax: (total [s], durations (3,) [s], jerks (3,)) as tuples
    (values on the stack: this runs several times per joint and tick, an array each time cost more than the plan).

    Direction: the velocity the joint reaches by bringing its acceleration to 0 at once is v0 + a0 |a0| / (2 J); the
    plan raises the acceleration when vt is above it, lowers it otherwise (mirrored below), to a peak p with
    (p^2 - a0^2) / (2 J) + p^2 / (2 J) = vt - v0, at most amax (then a constant-acceleration phase between): it
    arrives without overshoot."""
    flat = v0 + a0 * abs(a0) / (2.0 * jmax)
    d = 1.0 if vt >= flat else -1.0
    dv, a = d * (vt - v0), d * a0                   # mirrored: the velocity rises by dv
    peak = min(math.sqrt(max(jmax * dv + 0.5 * a * a, 0.0)), amax)
    d0, j0 = abs(peak - a) / jmax, d * (jmax if peak >= a else -jmax)
    d1 = 0.0
    if peak > 1e-12:
        d1 = max(0.0, (dv - 0.5 * (a + peak) * d0 - 0.5 * peak * peak / jmax) / peak)
    d2, j2 = peak / jmax, -d * jmax
    return d0 + d1 + d2, (d0, d1, d2), (j0, 0.0, j2)


@njit(cache=True)
def _planned_acceleration(a0, durations, jerks, t):
    """The acceleration t [s] into a plan of `_plan` (its durations and jerks) that starts at acceleration a0."""
    start = 0.0
    for i in range(3):
        h = min(t, start + durations[i]) - start
        if h <= 0.0:
            break
        a0 += jerks[i] * h
        start += durations[i]
    return a0


@njit(cache=True)
def _rest_scale(v0, vt, amax, jmax, total):
    """The scale c of (amax, jmax) whose plan from (v0, 0) to (vt, 0) takes `total` [s]: a plan from rest in
    acceleration takes dv / (c A) + A / J with a constant-acceleration phase (total >= 2 A / J), else
    2 sqrt(dv / (c J)). (From a state with an acceleration, the first guess of `_synchronizing_scale`.)"""
    dv = abs(vt - v0)
    if total <= 2.0 * amax / jmax:
        return 4.0 * dv / (jmax * total * total)
    return dv / (amax * (total - amax / jmax))


@njit(cache=True)
def _scaled_miss(v0, a0, vt, amax, jmax, u, total):
    """[s] how much longer than `total` the plan with the limits (amax, jmax) / u takes."""
    return _plan(v0, a0, vt, amax / u, jmax / u)[0] - total


@njit(cache=True)
def _synchronizing_scale(v0, a0, vt, amax, jmax, own, total, guess):
    """c in [MIN_SYNC_SCALE, 1]: the joint's plan (`_plan`) with the limits c (amax, jmax) takes `total` [s] (at
    least its own time-optimal length `own`), so that every joint arrives together. 1 when its own plan is already
    that long or negligible; MIN_SYNC_SCALE when even that is too fast. `guess`: a scale near the answer (the one
    this joint's plan had a period before), else 0.

    With u = 1 / c a plan's length is nearly linear in u (from rest in acceleration exactly dv / (c A) + A / J, or
    2 sqrt(dv / (c J)) without a constant-acceleration phase: `_rest_scale`), so the root is bracketed in u near
    the guess and found by regula falsi (Illinois)."""
    if own <= SYNC_NEGLIGIBLE or own >= total * (1.0 - SYNC_TOLERANCE):
        return 1.0
    top = 1.0 / MIN_SYNC_SCALE
    if not 0.0 < guess < 1.0:
        guess = min(max(_rest_scale(v0, vt, amax, jmax, total), MIN_SYNC_SCALE), 1.0)
    lo, f_lo = 1.0, own - total                         # f(1) < 0
    hi = min(max(1.0 / guess, 1.0), top)
    f_hi = _scaled_miss(v0, a0, vt, amax, jmax, hi, total)
    tries = 0
    while f_hi < 0.0:                                   # both short: on along the secant (a little past) to a bracket
        if hi >= top:
            return MIN_SYNC_SCALE
        tries += 1                                      # (then doubling: at most ~20 more to the top)
        step = -f_hi * (hi - lo) / (f_hi - f_lo) if f_hi > f_lo and tries <= SYNC_SECANT_TRIES else hi
        lo, f_lo = hi, f_hi
        hi = min(hi + max(SYNC_OVERSHOOT * step, SYNC_TOLERANCE * hi), top)
        f_hi = _scaled_miss(v0, a0, vt, amax, jmax, hi, total)
    side = 0
    for _ in range(SYNC_ITERATIONS):
        u = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
        f = _scaled_miss(v0, a0, vt, amax, jmax, u, total)
        if abs(f) <= SYNC_TOLERANCE * total or hi - lo <= SYNC_TOLERANCE * hi:
            return 1.0 / u
        if f < 0.0:
            lo, f_lo = u, f
            if side == -1:
                f_hi *= 0.5
            side = -1
        else:
            hi, f_hi = u, f
            if side == 1:
                f_lo *= 0.5
            side = 1
    return 1.0 / (0.5 * (lo + hi))


@njit(cache=True)
def _synchronizing_scales(v, a, vt, amax, jmax, active, guesses, scales):
    """scales (n,): each active joint's `_synchronizing_scale` toward vt from (v, a), so that every active joint's
    plan takes the longest time-optimal length among them (1 for the others); guesses (n,): see there."""
    n = v.shape[0]
    own = np.zeros(n)
    total = 0.0
    for j in range(n):
        if active[j]:
            own[j] = _plan(v[j], a[j], vt[j], amax[j], jmax[j])[0]
            total = max(total, own[j])
    for j in range(n):
        scales[j] = 1.0
        if active[j]:
            scales[j] = _synchronizing_scale(v[j], a[j], vt[j], amax[j], jmax[j], own[j], total, guesses[j])


@njit(cache=True)
def _closing_jerks(v, a, vt, tau, m):
    """(l1, l2): the least-norm jerks x_i = l1 + l2 c_i, c_i = m - i - 1/2, of m grid steps of `tau` [s] that take
    (v, a) to (vt, 0) exactly: sum x_i tau = -a and tau^2 sum x_i c_i = vt - v - a m tau."""
    b1 = -a / tau
    b2 = (vt - v - a * m * tau) / (tau * tau)
    s1, s2 = 0.5 * m * m, m * (4.0 * m * m - 1.0) / 12.0       # sum c_i, sum c_i^2
    det = m * s2 - s1 * s1
    return (s2 * b1 - s1 * b2) / det, (m * b2 - s1 * b1) / det


@njit(cache=True)
def _closing_steps(v, a, vt, jmax, tau, total):
    """The fewest grid steps (from the plan's `total` [s] up, a few more at most) whose least-norm closing
    (`_closing_jerks`) keeps |jerk| <= jmax; 0 when none does (then the plan goes on step by step)."""
    first = max(2, math.ceil(total / tau - 1e-9))      # one step cannot meet both conditions
    for m in range(first, first + CLOSING_TRIES):
        l1, l2 = _closing_jerks(v, a, vt, tau, m)
        if max(abs(l1 + l2 * (m - 0.5)), abs(l1 + 0.5 * l2)) <= jmax:
            return m
    return 0


@njit(cache=True)
def _append_on_grid(v, a, vt, amax, jmax, step, tau, cut, ends, jerks, count):
    """Append to ends/jerks[count:] segments from grid step `step` (time step * tau) that take a joint from (v, a)
    to (vt, 0), every segment ending on the grid of `tau` [s]; none past step `cut` (-1: no cut). Returns the new count
    and the step reached.

    The time-optimal plan (`_plan`) switches anywhere; on the grid each whole step of a phase is played as it is,
    and the step in which a switch falls plays the plan's mean jerk over it (the plan's acceleration at its end,
    reached exactly: within the jerk and acceleration limits), after which the plan is made again from the state
    reached. The last few steps (a plan of at most CLOSING_STEPS steps) close exactly on the grid with the least-norm
    jerks (`_closing_jerks`). On the grid the points of a window are at least tau apart, and never between two
    switching times: a cubic through the ends of each interval is the motion exactly."""
    for _ in range(MAX_REPLANS):
        if cut >= 0 and step >= cut:
            break
        total, durations, phase_jerks = _plan(v, a, vt, amax, jmax)
        if total <= 0.0:
            break
        if total < (CLOSING_STEPS + 0.5) * tau:
            m = _closing_steps(v, a, vt, jmax, tau, total)
            if m > 0:
                # the jerk of step i is l1 + l2 c_i, c_i = m - i - 1/2 (see `_closing_steps`)
                l1, l2 = _closing_jerks(v, a, vt, tau, m)
                for i in range(m):
                    if cut >= 0 and step >= cut:
                        break
                    x = l1 + l2 * (m - i - 0.5)
                    v, a = v + tau * (a + 0.5 * tau * x), a + tau * x
                    step += 1
                    ends[count], jerks[count] = step * tau, x
                    count += 1
                break
        i = 0
        while durations[i] <= 1e-9 and i < 2:        # a phase under a nanosecond is none
            i += 1
        steps = int(durations[i] / tau + 1e-9)
        if steps >= 1:
            jerk = phase_jerks[i]
        else:
            steps, jerk = 1, (_planned_acceleration(a, durations, phase_jerks, tau) - a) / tau
        if cut >= 0:
            steps = min(steps, cut - step)
        h = steps * tau
        v, a = v + h * (a + 0.5 * h * jerk), a + h * jerk
        step += steps
        ends[count], jerks[count] = step * tau, jerk
        count += 1
    return count, step


@njit(cache=True)
def _advance(q, v, a, jerk, h):
    """The state (q, v, a) after h [s] at constant jerk."""
    return (q + h * (v + h * (0.5 * a + h * jerk / 6.0)), v + h * (a + 0.5 * h * jerk), a + h * jerk)


@njit(cache=True)
def _state_at(q, v, a, ends, jerks, count, t):
    """The state at time t <= ends[count - 1] of a joint in state (q, v, a) at 0 moving through segments
    ends/jerks[:count] (later: the state at the last segment's end)."""
    return _state_at_from(q, v, a, ends, jerks, 0, count, 0.0, t)


@njit(cache=True)
def _state_at_from(q, v, a, ends, jerks, first, count, start, t):
    """`_state_at` from segment `first` on: (q, v, a) the state at `start` [s] = ends[first - 1], where the
    segments before end (the same sums as `_state_at` from 0 once they are walked)."""
    for s in range(first, count):
        if t <= start:
            break
        q, v, a = _advance(q, v, a, jerks[s], min(t, ends[s]) - start)
        start = ends[s]
    return q, v, a


@njit(cache=True)
def _continue_together(v_dt, a_dt, vt, amax, jmax, carried, period_steps, tau, cruise_steps, ends, jerks, counts,
                       reached, v_out, a_out, scales):
    """The carried joints' plans toward vt after dt, as the next windows make them while vt holds: made again from
    the state at every period's end (where each next window starts: a plan cut there and made again, a closing
    above all, is not the plan left uncut), synchronized there as the next window synchronizes them
    (`_synchronizing_scales` over the joints still on their way), to step `cruise_steps`. Each joint's segments of
    one jerk are merged, so a long ramp adds none at a period's end; should a joint's segments run short of room all
    the same, its plan goes on uncut. Appends to ends/jerks[j, counts[j]:] of the `carried` (n,) joints from their
    state at dt (v_dt, a_dt); counts (n,) updated, reached (n,) the step each reached, v_out / a_out (n,) its state
    there, scales (n,) the scale of its last plan (in: the first period's; its acceleration goes back to 0 with
    it)."""
    n = v_dt.shape[0]
    floors = counts.copy()      # (the segments to dt stay as they are: a stop from dt may replace these)
    planning = carried.copy()   # still on its way at the current period's end
    now = np.empty(n)           # the scales of the plans made at the current period's end
    for j in range(n):
        v_out[j], a_out[j], reached[j] = v_dt[j], a_dt[j], period_steps
    # a period's plan, the rest uncut, the level-off, the hold and the shared stop must still fit
    room = MAX_SEGMENTS - 3 * PROFILE_SEGMENTS - 4
    step = period_steps
    left = 0                    # joints still planning: once none is, the periods to the cruise end add nothing
    for j in range(n):
        left += 1 if planning[j] else 0
    while step < cruise_steps and left > 0:
        _synchronizing_scales(v_out, a_out, vt, amax, jmax, planning, scales, now)
        next_step = min(step + period_steps, cruise_steps)
        for j in range(n):
            if not planning[j]:
                continue
            scales[j] = now[j]
            count = counts[j]
            cut = cruise_steps if count > room else next_step
            first = count
            v, a = v_out[j], a_out[j]
            new_count, to = _append_on_grid(v, a, vt[j], scales[j] * amax[j], scales[j] * jmax[j], step, tau, cut,
                                            ends[j], jerks[j], count)
            for s in range(first, new_count):
                h = ends[j, s] - (ends[j, s - 1] if s > 0 else 0.0)
                v, a = v + h * (a + 0.5 * h * jerks[j, s]), a + h * jerks[j, s]
                if count > floors[j] and jerks[j, s] == jerks[j, count - 1]:
                    ends[j, count - 1] = ends[j, s]           # the same jerk on: one segment
                else:
                    ends[j, count], jerks[j, count] = ends[j, s], jerks[j, s]
                    count += 1
            counts[j], reached[j], v_out[j], a_out[j] = count, to, v, a
            if to < cut or to == step or to >= cruise_steps:  # arrived (or nothing left to plan, or uncut)
                planning[j] = False
                left -= 1
        step = next_step


@njit(cache=True)
def _stays_inside(q_end, q_start, inner_lower, inner_upper):
    """Whether a joint that starts the tick at q_start and ends at rest at q_end keeps its limit margins: q_end
    within them, or (a joint already beyond a margin) no further out than it started."""
    return min(inner_lower, q_start) <= q_end <= max(inner_upper, q_start)


@njit(cache=True)
def _first_period(q0, v0, a0, vt, amax, jmax, scale, inner_lower, inner_upper, period_steps, tau, ends, jerks):
    """One joint's segments up to dt toward vt (its limits times `scale`: the synchronized plan), then its own stop
    from dt; or, when that stop would pass the limit margin, its stop from now (both at its real limits). Returns
    (count, count up to dt (-1 when stopping now), velocity and acceleration at dt on the way to vt (which the
    carried motion starts from))."""
    count, step = _append_on_grid(v0, a0, vt, scale * amax, scale * jmax, 0, tau, period_steps, ends, jerks, 0)
    if step < period_steps:             # arrived: the wanted velocity held to dt
        ends[count], jerks[count] = period_steps * tau, 0.0
        count += 1
    q1, v1, a1 = _state_at(q0, v0, a0, ends, jerks, count, period_steps * tau)
    mark = count
    count, step = _append_on_grid(v1, a1, 0.0, amax, jmax, period_steps, tau, -1, ends, jerks, count)
    # the stop's end walked on from the state at dt: the segments to dt end there (ends[mark - 1] is dt), so
    # `_state_at` from 0 would repeat the very sums that gave (q1, v1, a1)
    q_end = _state_at_from(q1, v1, a1, ends, jerks, mark, count, period_steps * tau, step * tau)[0]
    if not _stays_inside(q_end, q0, inner_lower, inner_upper):
        count, _ = _append_on_grid(v0, a0, 0.0, amax, jmax, 0, tau, -1, ends, jerks, 0)
        return count, -1, v1, a1
    return count, mark, v1, a1


@njit(cache=True)
def _stop_together(q0, v0, a0, amax, jmax, inner_lower, inner_upper, tau, ends, jerks, counts):
    """Every joint's stop from (v0, a0) now, made together so that the tool keeps its direction (a stale command, a
    pause, a missing joint state, a refused window): each joint's segments into ends/jerks (n, .), their counts into
    counts (n,); returns the number of joints that stop on their own for their limit margin.

    A state in which the accelerations are in proportion to the velocities (a = kappa v: at rest in acceleration,
    or on a stop made together) stops along one S-curve s(t) from (1, kappa) to (0, 0), v(t) = v0 s(t), the limits
    of s being min A_j / |v0_j| on its second derivative and min J_j / |v0_j| on its third: the joints share every
    switching time. Any other state (a change of velocity under way) first brings each joint's acceleration back
    to 0 at its J, then stops together from there. A joint that would so pass its limit margin makes its own stop.
    (Each joint stopping on its own took the tool 1.8 mm off its line in a stale stop from 0.2 m/s.)"""
    n = v0.shape[0]
    ratio, weight = 0.0, 0.0
    for j in range(n):
        ratio += a0[j] * v0[j]
        weight += v0[j] * v0[j]
    kappa = ratio / weight if weight > 0.0 else 0.0
    proportional = True
    for j in range(n):
        proportional = proportional and abs(a0[j] - kappa * v0[j]) <= PROPORTION_TOLERANCE * amax[j]
    u = np.empty(n)
    start = 0
    if proportional:
        for j in range(n):
            u[j], counts[j] = v0[j], 0
    else:
        kappa = 0.0
        for j in range(n):
            counts[j], step = _append_on_grid(v0[j], a0[j], v0[j] + a0[j] * abs(a0[j]) / (2.0 * jmax[j]), amax[j],
                                              jmax[j], 0, tau, -1, ends[j], jerks[j], 0)
            u[j] = _state_at(0.0, v0[j], a0[j], ends[j], jerks[j], counts[j], step * tau)[1]
            start = max(start, step)
    share_a, share_j = np.inf, np.inf
    for j in range(n):
        if u[j] != 0.0:
            share_a, share_j = min(share_a, amax[j] / abs(u[j])), min(share_j, jmax[j] / abs(u[j]))
    size = MAX_REPLANS + CLOSING_STEPS + CLOSING_TRIES
    shared_ends, shared_jerks = np.empty(size), np.empty(size)
    m = 0
    if share_a < np.inf:
        m, _ = _append_on_grid(1.0, kappa, 0.0, share_a, share_j, start, tau, -1, shared_ends, shared_jerks, 0)
    braking = 0
    for j in range(n):
        if u[j] == 0.0:
            continue
        c = counts[j]
        if start * tau > (ends[j, c - 1] if c > 0 else 0.0):
            ends[j, c], jerks[j, c] = start * tau, 0.0      # its velocity held until the others' are back to 0
            c += 1
        for i in range(m):
            ends[j, c], jerks[j, c] = shared_ends[i], u[j] * shared_jerks[i]
            c += 1
        if c > 0 and _stays_inside(_state_at(q0[j], v0[j], a0[j], ends[j], jerks[j], c, ends[j, c - 1])[0], q0[j],
                                   inner_lower[j], inner_upper[j]):
            counts[j] = c
        else:
            counts[j], _ = _append_on_grid(v0[j], a0[j], 0.0, amax[j], jmax[j], 0, tau, -1, ends[j], jerks[j], 0)
            braking += 1
    return braking


@njit(cache=True)
def _shared_stop_steps(speeds, amax, jmax, tau):
    """(ramp, total) grid steps of the stop every carried joint makes together from its cruise speed speeds (n,)
    (0 = not carried): the velocities all scaled by one S-curve s(t) from 1 to 0, so the joints keep their ratio
    (the tool its direction) and share their switching times. The deceleration of joint j is |v_j| / T, its jerk
    |v_j| / (T T1): T >= max |v_j| / A_j and T1 T >= P = max |v_j| / J_j; T + T1 is least at T = max(that,
    sqrt(P)), T1 = P / T; both rounded up to the grid (which only lowers the deceleration and the jerk)."""
    slowest, p = 0.0, 0.0
    for j in range(speeds.shape[0]):
        slowest = max(slowest, speeds[j] / amax[j])
        p = max(p, speeds[j] / jmax[j])
    if p <= 0.0:
        return 0, 0
    total = max(slowest, math.sqrt(p))
    ramp = max(1, math.ceil(p / total / tau - 1e-9))
    return ramp, max(ramp, math.ceil(total / tau - 1e-9))


@njit(cache=True)
def _floor_ns(x):
    """x [s] rounded down to whole nanoseconds (what a message carries)."""
    return math.floor(x * _NS + 1e-3) / _NS


def jerk_window_capacity(joints: int) -> int:
    """Rows the output arrays of `jerk_window_arrays` need: 0, each joint's switching times (dt and the end among
    them), the hold."""
    return 2 + joints * MAX_SEGMENTS


def grid_step(dt: float) -> float:
    """[s] the switching-time grid of the windows: the period `dt` [s] split into whole steps near GRID_STEP."""
    return dt / max(1, round(dt / GRID_STEP))


@njit(cache=True)
def jerk_window_arrays(q0, v0, a0, wanted, carry, limits, checked_jerk, period_steps, tau, cruise_steps, hold_until,
                       times, positions, velocities, state_out):
    """Fill the window from the state (q0, v0, a0) (n,) toward the wanted velocities (n,), each within +-the cap
    (see the module docstring), every switching time on the grid of `tau` [s], the period `period_steps` steps of
    it; `carry`: whether the joints that move on are carried on to step `cruise_steps` before their stop (else
    every joint stops from dt). `limits` (8, n): position limits, the margins' inner edges, acceleration, velocity
    and jerk limits, velocity cap (J_* rows); `checked_jerk` (n,) the jerk limits the outgoing check holds the
    window to (`JerkWindows.jerk`). Returns (k, index of the point at dt, joints braking now for their
    limit margin, largest |velocity at dt - wanted velocity|, whether state_out is `_plainly_finite`, the window's
    `window_jerk_share` from a0, its outgoing check's WINDOW_* code); state_out (3, n) gets the exact state
    (q, v, a) at dt. The arrays (number of arguments: each costs the call ~0.1 us) are the caller's, reused."""
    n = q0.shape[0]
    vt = np.empty(n)
    cap = limits[J_CAP]
    for j in range(n):
        vt[j] = min(max(wanted[j], -cap[j]), cap[j])
    ends, jerks = np.empty((n, MAX_SEGMENTS)), np.empty((n, MAX_SEGMENTS))
    counts, marks = np.empty(n, np.int64), np.empty(n, np.int64)
    v_dt, a_dt = np.empty(n), np.empty(n)          # carried joints: the state at dt `_first_period` reached
    amax, jmax, inner_lower, inner_upper = limits[J_AMAX], limits[J_JMAX], limits[J_INNER_LOWER], limits[J_INNER_UPPER]
    braking = 0
    halting = True                  # every wanted velocity 0 (a halt, a zero command): a stop like the others
    for j in range(n):
        halting = halting and vt[j] == 0.0
    carry = carry and not halting
    if not carry:
        braking = _stop_together(q0, v0, a0, amax, jmax, inner_lower, inner_upper, tau, ends, jerks, counts)
    # every joint's plan toward its wanted velocity synchronized: its limits scaled so that all arrive together,
    # the velocities moving along (near) the line from v0 to vt, so the tool keeps its direction during a change
    scales = np.ones(n)
    if carry:
        _synchronizing_scales(v0, a0, vt, amax, jmax, np.ones(n, np.bool_), np.zeros(n), scales)
    for j in range(n if carry else 0):
        counts[j], marks[j], v_dt[j], a_dt[j] = _first_period(q0[j], v0[j], a0[j], vt[j], amax[j], jmax[j],
                                                              scales[j], inner_lower[j], inner_upper[j],
                                                              period_steps, tau, ends[j], jerks[j])
        braking += 1 if marks[j] < 0 else 0
    # the carried joints (those a wanted velocity of 0 brings to rest among them, synchronized with the others): the
    # plan toward the wanted velocity that the first period started, on to the cruise end (what the next windows
    # will do while the command holds: a window taken over late then agrees with this one), the acceleration back
    # to 0 at its plan's scaled J from there if it has not arrived, the velocity held, then the shared stop
    carried = np.zeros(n, np.bool_)
    for j in range(n if carry else 0):
        carried[j] = marks[j] >= 0                          # (marks are set only when carried)
        if carried[j]:
            counts[j] = marks[j]
    speeds, started = np.zeros(n), cruise_steps
    reached, v2, a2 = np.empty(n, np.int64), np.empty(n), np.empty(n)
    if carry:
        _continue_together(v_dt, a_dt, vt, amax, jmax, carried, period_steps, tau, cruise_steps, ends, jerks, counts,
                           reached, v2, a2, scales)
    carried_ends = np.full(n, -1, np.int64)         # the count after the acceleration back to 0, -1: not carried
    for j in range(n):
        if not carried[j]:
            continue
        c, step = _append_on_grid(v2[j], a2[j], v2[j] + a2[j] * abs(a2[j]) / (2.0 * scales[j] * jmax[j]),
                                  scales[j] * amax[j], scales[j] * jmax[j], reached[j], tau, -1, ends[j], jerks[j],
                                  counts[j])
        carried_ends[j] = c
        speeds[j] = abs(_state_at(q0[j], v0[j], a0[j], ends[j], jerks[j], c, step * tau)[1])
        started = max(started, step)
    ramp, total = _shared_stop_steps(speeds, amax, jmax, tau)
    for j in range(n):
        c = carried_ends[j]
        if c < 0:
            continue
        if speeds[j] == 0.0:            # at rest once its acceleration is back to 0 (its plan toward 0 included)
            if _stays_inside(_state_at(q0[j], v0[j], a0[j], ends[j], jerks[j], c, ends[j, c - 1] if c > 0 else 0.0)[0],
                             q0[j], inner_lower[j], inner_upper[j]):
                counts[j] = c
            else:                       # its own stop from dt, as `_first_period` made it
                counts[j], _ = _append_on_grid(v_dt[j], a_dt[j], 0.0, amax[j], jmax[j], period_steps, tau, -1,
                                               ends[j], jerks[j], marks[j])
            continue
        if started * tau > ends[j, c - 1]:
            ends[j, c], jerks[j, c] = started * tau, 0.0
            c += 1
        v = _state_at(q0[j], v0[j], a0[j], ends[j], jerks[j], c, started * tau)[1]
        jerk = v / (total * tau * ramp * tau)
        for end, x in ((started + ramp, -jerk), (started + total, 0.0), (started + total + ramp, jerk)):
            if end > round(ends[j, c - 1] / tau):
                ends[j, c], jerks[j, c] = end * tau, x
                c += 1
        if _stays_inside(_state_at(q0[j], v0[j], a0[j], ends[j], jerks[j], c, ends[j, c - 1])[0], q0[j],
                         inner_lower[j], inner_upper[j]):
            counts[j] = c
        else:                           # its own stop from dt, as `_first_period` made it
            counts[j], _ = _append_on_grid(v_dt[j], a_dt[j], 0.0, amax[j], jmax[j], period_steps, tau, -1, ends[j],
                                           jerks[j], marks[j])
    # the points: 0, dt and every switching time, all on the grid (at least tau apart), each once, in order. Each
    # joint's switching times are in order already: merged with (0, dt) as list n (sorting them all cost more than
    # the rest of the points)
    on_grid = np.empty((n + 1, MAX_SEGMENTS), np.int64)
    lengths = np.empty(n + 1, np.int64)
    for j in range(n):
        lengths[j] = counts[j]
        for s in range(counts[j]):
            on_grid[j, s] = round(ends[j, s] / tau)
    on_grid[n, 0], on_grid[n, 1], lengths[n] = 0, period_steps, 2
    heads = np.zeros(n + 1, np.int64)
    steps = np.empty(2 + n * MAX_SEGMENTS, np.int64)
    k = 0
    while True:
        low = -1
        for j in range(n + 1):
            if heads[j] < lengths[j] and (low < 0 or on_grid[j, heads[j]] < low):
                low = on_grid[j, heads[j]]
        if low < 0:
            break
        steps[k] = low
        k += 1
        for j in range(n + 1):
            while heads[j] < lengths[j] and on_grid[j, heads[j]] == low:
                heads[j] += 1
    first_period = 0
    lower, upper = limits[J_LOWER], limits[J_UPPER]
    for i in range(k):
        times[i] = _floor_ns(steps[i] * tau)
        if steps[i] == period_steps:
            first_period = i
    gap = 0.0
    for j in range(n):
        # each joint walked through its segments and the points together (the same sums as `_state_at`), the
        # exact state at dt taken on the way (the point at dt is always one)
        q, v, a, start, s, c = q0[j], v0[j], a0[j], 0.0, 0, counts[j]
        for i in range(k):
            t = steps[i] * tau
            while s < c and ends[j, s] <= t:
                q, v, a = _advance(q, v, a, jerks[j, s], ends[j, s] - start)
                start = ends[j, s]
                s += 1
            qi, vi, ai = q, v, a
            if s < c and t > start:
                qi, vi, ai = _advance(q, v, a, jerks[j, s], t - start)
            positions[i, j] = min(max(qi, lower[j]), upper[j])
            # at rest after its stop (the plan's end velocity is 0 up to rounding)
            at_rest = c == 0 or t >= ends[j, c - 1]
            velocities[i, j] = 0.0 if at_rest else vi
            if i == first_period:
                if at_rest:
                    vi, ai = 0.0, 0.0   # exactly: the ticks that follow hold, not creep
                state_out[0, j], state_out[1, j], state_out[2, j] = positions[i, j], vi, ai
                gap = max(gap, abs(vi - vt[j]))
    times[k] = max(hold_until, times[k - 1] + 1e-3)
    for j in range(n):
        positions[k, j], velocities[k, j] = positions[k - 1, j], 0.0
    # the peak share and the outgoing check here rather than in calls of their own from Python (a dispatch each
    # less a tick): the check is `WindowBuilder.check`'s, then `window_jerk_violation`'s, as Servo.step makes them
    t, p, v = times[:k + 1], positions[:k + 1], velocities[:k + 1]
    share = window_jerk_share(t, p, v, jmax, a0, CONTROLLER_PERIOD)
    verdict = window_violation(t, p, v, lower, upper, limits[J_VMAX], limits[J_AMAX], LIMIT_TOLERANCE)[0]
    if verdict == WINDOW_OK:
        verdict = window_jerk_violation(t, p, v, checked_jerk, JERK_TOLERANCE, CONTROLLER_PERIOD)
    return k + 1, first_period, braking, gap, _plainly_finite(state_out), share, verdict


@njit(cache=True)
def _plainly_finite(values):
    """Whether every value is finite and small enough (< PLAINLY_FINITE in magnitude) that no sum of a few thousand
    of them, in any order, can overflow: then a sum of them is finite, which the caller would otherwise ask numpy
    (a reduction per array costs ~1 us a tick)."""
    for x in values.ravel():
        if not abs(x) < PLAINLY_FINITE:
            return False
    return True


@njit(cache=True)
def sample_window_state(times, positions, velocities, t, q_out, v_out, a_out):
    """Where a controller following the window is `t` [s] after its time 0 (JTC's cubic Hermite through positions
    and velocities): positions, velocities and accelerations into q_out, v_out, a_out (n,); after the last point
    that point at rest."""
    k = times.shape[0]
    if t >= times[k - 1]:
        for j in range(q_out.shape[0]):
            q_out[j], v_out[j], a_out[j] = positions[k - 1, j], velocities[k - 1, j], 0.0
        return
    i = 0
    while i + 2 < k and times[i + 1] <= t:
        i += 1
    h = times[i + 1] - times[i]
    s = max(0.0, (t - times[i]) / h)
    s2, s3 = s * s, s * s * s
    for j in range(q_out.shape[0]):
        p0, p1 = positions[i, j], positions[i + 1, j]
        m0, m1 = velocities[i, j] * h, velocities[i + 1, j] * h
        q_out[j] = (2 * s3 - 3 * s2 + 1) * p0 + (s3 - 2 * s2 + s) * m0 + (-2 * s3 + 3 * s2) * p1 + (s3 - s2) * m1
        v_out[j] = ((6 * s2 - 6 * s) * p0 + (3 * s2 - 4 * s + 1) * m0 + (-6 * s2 + 6 * s) * p1
                    + (3 * s2 - 2 * s) * m1) / h
        a_out[j] = ((12 * s - 6) * p0 + (6 * s - 4) * m0 + (6 - 12 * s) * p1 + (6 * s - 2) * m1) / (h * h)


@njit(cache=True)
def window_jerk_share(times, positions, velocities, jmax, start_acceleration, period):
    """Peak |jerk| / limit over the joints of the cubic Hermite a controller plays through the window, acceleration
    steps counted over `period` [s] (the worst sampling phase: step / period plus the jerk on either side); the
    step into the first point from `start_acceleration` (n,) (where the previous window had the arm) counts too."""
    k, n = times.shape[0], positions.shape[1]
    share = 0.0
    for j in range(n):
        a_prev, j_prev = start_acceleration[j], 0.0
        for i in range(k):
            if i + 1 < k:
                h = times[i + 1] - times[i]
                p0, p1 = positions[i, j], positions[i + 1, j]
                m0, m1 = velocities[i, j] * h, velocities[i + 1, j] * h
                jerk = (12.0 * (p0 - p1) + 6.0 * (m0 + m1)) / (h * h * h)
                a_start = (6.0 * (p1 - p0) - 4.0 * m0 - 2.0 * m1) / (h * h)
                a_end = (6.0 * (p0 - p1) + 2.0 * m0 + 4.0 * m1) / (h * h)
            else:
                jerk, a_start, a_end = 0.0, 0.0, 0.0         # held after the last point
            step = (a_start - a_prev) / period
            peak = max(abs(step + j_prev), abs(step + jerk), abs(jerk))
            share = max(share, peak / jmax[j])
            a_prev, j_prev = a_end, jerk
    return share


def servo_jerk_limits(config: ServoConfig, n: int) -> np.ndarray | None:
    """(n,) [rad/s^3] the joint jerk limits of a servo configuration, None when it sets none (jerk limiting off).

    Raises:
        ConfigError: a limit that is not a finite positive number.
    """
    if config.max_joint_jerk:
        jerk = np.array(per_joint_values(config.max_joint_jerk, n), dtype=float)
    elif config.default_joint_jerk > 0.0:
        jerk = np.full(n, float(config.default_joint_jerk))
    else:
        return None
    bad = [f"{x}" for x in jerk if not (math.isfinite(x) and x > 0.0)]
    if bad:
        raise ConfigError(f"max_joint_jerk must be finite and positive [rad/s^3], got {', '.join(bad)}")
    return jerk


class JerkWindows:
    """The jerk-limited windows of one configuration (window.py's `WindowBuilder` limits plus the jerk limits)."""

    def __init__(self, dt: float, cruise_until: float, hold_until: float, window_limits: np.ndarray,
                 jerk: np.ndarray) -> None:
        """`window_limits` (6, n): window.py's table (position limits, inner edges, acceleration, velocity);
        `jerk` (n,) [rad/s^3]."""
        self.dt, self.cruise_until, self.hold_until = dt, cruise_until, hold_until
        self.tau = grid_step(dt)
        self.period_steps = round(dt / self.tau)
        # the velocity cap: headroom under the velocity limits for the arrival on the grid (a closing may pass the
        # wanted velocity by up to A tau / 2 before settling on it)
        self.velocity_cap = np.maximum(window_limits[J_VMAX] - window_limits[J_AMAX] * self.tau, 0.0)   # (n,)
        self.cruise_steps = math.ceil(cruise_until / self.tau - 1e-9)
        self.limits = np.vstack((window_limits, jerk, self.velocity_cap))
        # the stops are planned again each tick from a state on the grid: they may end a rounding of the grid
        # (~ a tau^2) beyond the plan of the tick before; a through-the-node jog ended 1.8e-7 rad past the margin.
        # The margins' inner edges move in by twice that, so that no window passes them.
        with np.errstate(invalid="ignore"):
            allowance = np.where(np.isfinite(window_limits[J_AMAX]), 2.0 * window_limits[J_AMAX] * self.tau ** 2, 0.0)
        self.limits[J_INNER_LOWER] += allowance
        self.limits[J_INNER_UPPER] -= allowance
        self.jerk = jerk                # the limits the outgoing check holds the windows to (in `build`)
        self.rows = jerk_window_capacity(len(jerk))
        # the kernel's output arrays, sized for the longest window, reused: a window copies out its k rows. (Fresh
        # ones each tick, kept alive by the window's views, cost more than the copies: memory not in cache, and
        # where windows are kept (a bench's record) new pages, ~70 kB a tick.)
        n = len(jerk)
        self._times, self._positions, self._velocities = np.empty(self.rows), np.empty((self.rows, n)), \
            np.empty((self.rows, n))
        self._state_shape = (3, n)
        self.window = None              # the last window built, and its outgoing check's WINDOW_* code
        self.verdict = WINDOW_OK - 1
        self.peak_share = 0.0           # the last window's peak jerk / limit (`window_jerk_share`)
        self.braking = 0                # joints of the last window braking now for their limit margin
        self.start = None               # (q, v, a) the last window started from (the replacement of a refused one)
        self.shaping = False            # the last tracking window is still ramping toward the IK's velocity
        self.plainly_finite = True      # the last state at dt is finite, and so is any sum of its values

    @property
    def point_counts(self) -> tuple[int, ...]:
        """The numbers of points a jerk-limited window usually has, which a node lays its messages out for ahead
        (~3 ms each): up to PREPARED_POINTS (the Panda's windows: median 13, 99th percentile 28 tracking a moving
        twist); a rarer longer one (every joint ramping and braking for a limit at once, up to `rows`) is laid out
        when first met."""
        return tuple(range(3, min(self.rows, PREPARED_POINTS) + 1))

    def build(self, q: np.ndarray, v: np.ndarray, a: np.ndarray, target: np.ndarray, carry: bool = True,
              cruise_until: float | None = None) -> tuple[TrajectoryWindow, np.ndarray]:
        """The window from the state (q, v, a) (n,) toward the wanted velocities `target` (n,); `carry`: the motion
        is carried on to `cruise_until` (default `max_expected_latency`'s grid end) before the stop (tracking), else
        every joint stops from dt. Returns the window and the state (3, n) at dt."""
        state = np.empty(self._state_shape)
        cruise = self.cruise_steps if cruise_until is None or cruise_until == self.cruise_until else \
            math.ceil(cruise_until / self.tau - 1e-9)
        t, positions, velocities = self._times, self._positions, self._velocities
        k, _, self.braking, gap, self.plainly_finite, self.peak_share, self.verdict = jerk_window_arrays(
            q, v, a, target, carry, self.limits, self.jerk, self.period_steps, self.tau, cruise, self.hold_until, t,
            positions, velocities, state)
        self.window = window = frozen(TrajectoryWindow, {"times": t[:k].copy(), "positions": positions[:k].copy(),
                                                         "velocities": velocities[:k].copy()})
        self.start = (q, v, a)
        self.shaping = carry and gap > SHAPING_THRESHOLD
        return window, state

    def stopping(self, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> tuple[TrajectoryWindow, np.ndarray]:
        """The joints' jerk-limited stop from (q, v, a) now, made together (`_stop_together`), then the hold."""
        return self.build(q, v, a, np.zeros(len(q)), carry=False)
