"""Single-tip capability results of this tree against another revision, bit for bit.

For seeded configurations of single-tip robots, the script hashes every array of `analyze` (ellipsoids, measures,
Jacobian), both force polytopes, the measures table and the RViz MarkerArray of `capability_markers` (its full repr),
in this tree and in `--rev` (default e8740e2, the end of issue 25), and compares the digests.

    source scripts/ros_env.sh && .venv/bin/python bench/capability_identical.py [--rev e8740e2]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from other_tree import REPO, archived_tree, run_python  # noqa: E402

DIGEST = r'''
import hashlib, dataclasses, sys
import numpy as np
from builtin_interfaces.msg import Time
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.capability.analysis import analyze, torque_limits_of
from robokin_ros.core.capability.config import CapabilityConfig, SHOW_ITEMS
from robokin_ros.core.capability.polytope import tool_force_polytope
from robokin_ros.core.capability.report import format_table, measure_rows
from robokin_ros.ros.capability_markers import capability_markers

def feed(h, value):
    if dataclasses.is_dataclass(value):
        for f in dataclasses.fields(value):
            if f.name in ("tip", "joint_indices"):        # fields added for several tips (default values)
                continue
            feed(h, getattr(value, f.name))
    elif isinstance(value, tuple) and hasattr(value, "_fields"):
        for item in value:
            feed(h, item)
    elif isinstance(value, np.ndarray):
        h.update(np.ascontiguousarray(value).tobytes())
    else:
        h.update(repr(value).encode())

cfg = CapabilityConfig()
for name in ("panda", "ur5e", "ur5"):
    robot = RobotModel.from_name(name)
    tau = torque_limits_of(robot)
    rng = np.random.default_rng(7)
    h = hashlib.sha256()
    for _ in range(40):
        q = robot.random_positions(rng, 0.05)
        a = analyze(robot, q, tau.limits, tau.reason, cfg.singular_sigma)
        feed(h, a)
        polytope = None
        for method in ("pinv", "exact"):
            polytope = tool_force_polytope(a, method, cfg.singular_sigma)
            feed(h, polytope)
        h.update(format_table(measure_rows(a, polytope)).encode())
        # repr, not serialize_message: CDR alignment padding carries uninitialised bytes; float repr round-trips
        h.update(repr(capability_markers(a, polytope, SHOW_ITEMS, cfg, robot.base_frame, Time())).encode())
    print(name, h.hexdigest())
'''


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="e8740e2")
    args = parser.parse_args()
    new = run_python(REPO, DIGEST, what="this tree")
    with archived_tree(args.rev) as old_dir:
        old = run_python(old_dir, DIGEST, what=args.rev)
    print(f"this tree:\n{new}{args.rev}:\n{old}")
    same = new == old
    print("IDENTICAL" if same else "DIFFERENT")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
