"""Capability analysis speed: ellipsoids + measures, force polytope with hull, marker building at 30 Hz.

Run: .venv/bin/python bench/bench_capability.py   (prints a table; medians and p99 over many calls)
Targets: all ellipsoids + measures <= 200 us (table row) and a median <= 100 us (own line,
ANALYZE_TARGET_US), polytope with hull (7 joints, 128 vertices) <= 5 ms, marker building well inside the
33 ms period of 30 Hz. Peer in the same process: the Robotics Toolbox's Yoshikawa manipulability for its
own Panda model (one measure only, for scale).
"""
from __future__ import annotations

import time

import numpy as np

from robokin_ros.core.capability.analysis import analyze, force_cap, torque_limits_of
from robokin_ros.core.capability.config import SHOW_ITEMS, CapabilityConfig
from robokin_ros.core.capability.polytope import force_polytope
from robokin_ros.core.robot import RobotModel

Q = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
ANALYZE_TARGET_US = 100.0   # median of `analyze` (all ellipsoids + measures) on the Panda


def timed(fn, repeat: int) -> tuple[float, float]:
    """(median, p99) of one call [us], after a warm-up."""
    for _ in range(min(50, repeat)):
        fn()
    samples = np.empty(repeat)
    for i in range(repeat):
        start = time.perf_counter_ns()
        fn()
        samples[i] = time.perf_counter_ns() - start
    return float(np.median(samples)) / 1e3, float(np.percentile(samples, 99)) / 1e3


def main() -> None:
    robot = RobotModel.from_name("panda")
    tau = torque_limits_of(robot).limits
    cfg = CapabilityConfig()
    analysis = analyze(robot, Q, tau)
    J = analysis.jacobian[:3]
    cap = force_cap(tau, cfg.singular_sigma)
    rows = [
        ("Jacobian + M(q) only (RobotModel, checked)", timed(lambda: (robot.jacobian(Q), robot.inertia(Q)), 3000),
         None),
        ("analyze: 6 ellipsoids + 2x measures", timed(lambda: analyze(robot, Q, tau), 3000), 200.0),
        ("force polytope pinv (128 vertices + hull)", timed(lambda: force_polytope(J, tau, "pinv", cap), 1000),
         5000.0),
        ("force polytope exact (14 slabs + hull)", timed(lambda: force_polytope(J, tau, "exact", cap), 1000),
         5000.0),
    ]
    try:
        from builtin_interfaces.msg import Time

        from robokin_ros.ros.capability_markers import capability_markers
        polytope = force_polytope(J, tau, "pinv", cap)
        rows.append(("MarkerArray build (all 7 items)",
                     timed(lambda: capability_markers(analysis, polytope, SHOW_ITEMS, cfg, "panda_link0", Time()),
                           1000), None))

        def tick():
            a = analyze(robot, Q, tau)
            p = force_polytope(a.jacobian[:3], tau, "pinv", cap)
            return capability_markers(a, p, SHOW_ITEMS, cfg, "panda_link0", Time())
        rows.append(("full 30 Hz tick: analyze + polytope + markers", timed(tick, 1000), 1e6 / 30))
    except ImportError as err:
        print(f"(marker rows skipped: {err})")
    try:
        import roboticstoolbox as rtb
        peer = rtb.models.Panda()
        rows.append(("peer: roboticstoolbox Panda.manipulability (yoshikawa)",
                     timed(lambda: peer.manipulability(Q), 2000), None))
    except Exception as err:  # the peer is optional
        print(f"(peer skipped: {err})")
    print(f"{'operation (Panda, home pose)':<56} {'median us':>10} {'p99 us':>10} {'target us':>10}")
    for name, (median, p99), target in rows:
        verdict = "" if target is None else ("  ok" if median <= target else "  OVER")
        shown = f"{target:.0f}" if target else ""
        print(f"{name:<56} {median:>10.1f} {p99:>10.1f} {shown:>10}{verdict}")
    (median, p99), = [timing for name, timing, _ in rows if name.startswith("analyze:")]
    print(f"analyze (all ellipsoids + measures): median {median:.1f} us, p99 {p99:.1f} us; target median <= "
          f"{ANALYZE_TARGET_US:.0f} us: {'ok' if median <= ANALYZE_TARGET_US else 'OVER'}")
    tick_row = [r for r in rows if r[0].startswith("full 30 Hz")]
    if tick_row:
        print(f"one 30 Hz tick uses {tick_row[0][1][0] / (1e6 / 30) * 100:.2f} % of the 33.3 ms period")


if __name__ == "__main__":
    main()
