"""The studio on one arm, this tree against another revision (issue 26: single-arm behaviour unchanged, bit for bit).

The same script runs in both trees: a Panda studio (not started: the script runs its ticks) follows a gizmo move and
a rotation, shows every overlay, takes a joint slider value and a new direction; after each step it records the
arm's positions and what the scene and panels hold (every link's pose, the tool, gizmo and target frames, each
ellipsoid's pose, scale and colour, the polytope's vertices, the direction arrow, the panels' text). The records
must be equal to the last bit (floats as hex).

    .venv/bin/python bench/studio_single_arm_identity.py --rev e8740e2
"""
from __future__ import annotations

import argparse
import sys

from other_tree import REPO, archived_tree, run_python

RECORD = r'''
import json, socket
import numpy as np
from robokin_ros.studio.app import StudioApp
from robokin_ros.studio.overlays import OVERLAY_ITEMS

def hexed(values):
    return [float(v).hex() for v in np.ravel(np.asarray(values, float))]

with socket.socket() as s:
    s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
app = StudioApp("panda", port=port, render="light")
records = []

def record(step):
    scene, panels = app.arm.scene, app.arm.panels
    nodes = getattr(scene, "overlays", scene)
    state = {"step": step, "positions": hexed(app.session.positions), "status": app.status_text(),
             "tool_text": panels.tool_text.content, "measures": panels.measures.content,
             "links": [hexed([*l.position, *l.wxyz]) + [str(l.color)] for l in scene.links]}
    for name in ("tool", "target", "gizmo"):
        h = getattr(scene, name)
        state[name] = hexed([*h.position, *h.wxyz]) + [h.visible]
    state["ellipsoids"] = {k: hexed([*h.position, *h.wxyz, *np.ravel(h.scale)]) + [str(h.color), h.opacity, h.visible]
                           for k, h in nodes.ellipsoids.items()}
    poly = nodes.polytope
    state["polytope"] = None if poly is None else [hexed(poly.vertices), poly.visible]
    state["direction"] = [hexed(nodes.direction.points), nodes.direction.visible]
    records.append(state)

try:
    app.tick(0.0); record("start")
    tool = app.session.tool_pose()
    app.move_gizmo(tool.translation + np.array([0.05, -0.06, 0.04]))
    for k in range(90):
        app.tick(1 / 60)
    record("moved")
    app.set_gizmo_mode(True)
    app.move_gizmo(app.gizmo.handle.position, (np.cos(0.2), 0.0, np.sin(0.2), 0.0))
    for k in range(90):
        app.tick(1 / 60)
    record("turned")
    app.set_overlays(frozenset(OVERLAY_ITEMS), np.array([1.0, 0.5, 0.2]), True)
    app.tick(1 / 60); record("overlays")
    app.set_joint(3, -1.9)
    app.tick(1 / 60); app.updater.panel_rate = 1e9; app.tick(0.0); record("slider")
finally:
    app.server.stop()
print(json.dumps(records))
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="e8740e2", help="the other revision (default: end of issue 25)")
    rev = parser.parse_args().rev
    here = run_python(REPO, RECORD, what="this tree")
    with archived_tree(rev) as tree:
        there = run_python(tree, RECORD, what=f"revision {rev}")
    same = here.strip().splitlines()[-1] == there.strip().splitlines()[-1]
    print(f"studio, one arm: this tree {'==' if same else '!='} {rev} ({len(here)} characters of records)")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
