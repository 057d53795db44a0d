"""Compiled core of `deviation.project_onto_path`: the best point of each pose's candidate intervals.

For every pose and candidate interval i it forms the weighted error E(u) = e0 + u e1 + u^2 e2 (6,) of
`deviation.project_onto_path` (position: the quadratic through sample, midpoint and next sample; orientation:
log(R_i R^T) + u R_i w_i to first order), minimises |E(u)|^2 over u in [0, 1] from the chord's minimiser with
Newton steps, and keeps the interval with the smallest error. In numpy this took a dozen (K * 4, 6) temporaries
and two batched logs per call: most of a program's verification time.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from robokin_ros.core.so3 import log3_into


@njit(cache=True)
def _dot(x, y):
    total = 0.0
    for j in range(x.shape[0]):
        total += x[j] * y[j]
    return total


@njit(cache=True)
def _best_fraction(e0, e1, e2, newton_steps):
    """(u, |E(u)|^2) minimising |e0 + u e1 + u^2 e2|^2 on [0, 1]: chord minimiser, then Newton steps."""
    chord = e1 + e2
    u = min(max(-_dot(e0, chord) / max(_dot(chord, chord), 1e-300), 0.0), 1.0)
    for _ in range(newton_steps):
        E, dE = e0 + u * (e1 + u * e2), e1 + 2.0 * u * e2
        curvature = _dot(dE, dE) + 2.0 * _dot(E, e2)
        if curvature > 0.0:
            u = min(max(u - _dot(E, dE) / max(curvature, 1e-300), 0.0), 1.0)
    E = e0 + u * (e1 + u * e2)
    return u, _dot(E, E)


@njit(cache=True)
def _to_tool_axes(R, e):
    """Both 3-vectors of e (6,) in the axes of R (R^T v), in place."""
    for half in range(2):
        x, y, z = e[3 * half], e[3 * half + 1], e[3 * half + 2]
        for r in range(3):
            e[3 * half + r] = R[0, r] * x + R[1, r] * y + R[2, r] * z


@njit(cache=True)
def nearest_on_intervals(positions, mids, rotations, w_body, candidates, R, p, weights, tool_axes, newton_steps,
                         interval, fraction):
    """interval[k], fraction[k] = the best of candidates[k] (K, C) for the pose R[k], p[k], in the weighted
    metric `weights` (6,); positions (N, 3), mids (N - 1, 3), rotations (N, 3, 3) of the path, w_body (N - 1, 3)
    the body rotation of each interval. Ties go to the first candidate."""
    e0, e1, e2, g, D = np.empty(6), np.empty(6), np.empty(6), np.empty(3), np.empty((3, 3))
    for k in range(candidates.shape[0]):
        best = np.inf
        for c in range(candidates.shape[1]):
            i = candidates[k, c]
            Ra = rotations[i]
            for r in range(3):
                for s in range(3):
                    D[r, s] = Ra[r, 0] * R[k, s, 0] + Ra[r, 1] * R[k, s, 1] + Ra[r, 2] * R[k, s, 2]   # Ra R^T
            log3_into(D, g)
            for r in range(3):
                a, m, b = positions[i, r], mids[i, r], positions[i + 1, r]
                e0[r], e1[r], e2[r] = a - p[k, r], 4.0 * m - 3.0 * a - b, 2.0 * a + 2.0 * b - 4.0 * m
                e0[3 + r] = g[r]
                e1[3 + r] = Ra[r, 0] * w_body[i, 0] + Ra[r, 1] * w_body[i, 1] + Ra[r, 2] * w_body[i, 2]
                e2[3 + r] = 0.0
            if tool_axes:
                _to_tool_axes(R[k], e0)
                _to_tool_axes(R[k], e1)
                _to_tool_axes(R[k], e2)
            u, cost = _best_fraction(e0 * weights, e1 * weights, e2 * weights, newton_steps)
            if cost < best or c == 0:
                best, interval[k], fraction[k] = cost, i, u


@njit(cache=True)
def nearest_distances(positions, mids, candidates, p, newton_steps, distance):
    """distance[k] = the smallest distance of the point p[k] from the path's position curve over candidates[k]
    (K, C): the position-only form of `nearest_on_intervals`, in 3-D."""
    e0, e1, e2 = np.empty(3), np.empty(3), np.empty(3)
    for k in range(candidates.shape[0]):
        best = np.inf
        for c in range(candidates.shape[1]):
            i = candidates[k, c]
            for r in range(3):
                a, m, b = positions[i, r], mids[i, r], positions[i + 1, r]
                e0[r], e1[r], e2[r] = a - p[k, r], 4.0 * m - 3.0 * a - b, 2.0 * a + 2.0 * b - 4.0 * m
            cost = _best_fraction(e0, e1, e2, newton_steps)[1]
            if cost < best or c == 0:
                best = cost
        distance[k] = np.sqrt(best)
