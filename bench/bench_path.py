"""Cartesian path IK benchmark: robokin_ros vs peers on the same paths, in the same process.

Peers: (a) a plain per-sample numpy DLS loop (one step per 1 mm sample), (b) robotics-toolbox `ETS.ik_LM`
per sample seeded from the previous one (ETS built from the same Pinocchio chain; FK checked equal),
(c) RoboPlan's CartesianPathPlanner (TimeOptimal mode, same URDF, same acceleration limits).
Deviations of every method are measured the same way: FK (Pinocchio) of its joint output against the dense
geometric path (point-to-polyline distance). Run: .venv/bin/python bench/bench_path.py  (< 3 min)

Huge goals (issue 9): `--huge [--before REV]` plans thousands of unblended waypoints with this tree and, in a
subprocess, with the tree of git revision REV (default: the commit before near-collinear corners stopped being
stops), and prints both in one table. The full run prints that table too.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
import warnings
from pathlib import Path

from other_tree import archived_tree, run_python

import numpy as np
import pinocchio as pin
from scipy.spatial import cKDTree

from robokin_ros.core.embedded import embedded_robot, example_robot_data_dir
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.robot import RobotModel

warnings.filterwarnings("ignore")
ACC = {"panda": (15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0), "ur5": (5.0, 5.0, 5.0, 8.0, 8.0, 8.0)}


# ---- path suite ----------------------------------------------------------------------------------------
def suite(robot: RobotModel):
    """(name, waypoints, blend radius) relative to the home tool pose."""
    T0 = robot.fk(robot.home())
    R0, p0 = T0.rotation, T0.translation

    def at(d, R=None):
        return pin.SE3(R0 if R is None else R, p0 + np.asarray(d, float))
    lateral = np.array([0, 1, 0]) if robot.name == "panda" else np.array([1, 0, 0])
    out = np.array([1, 0, 0]) if robot.name == "panda" else np.array([0, -1, 0])
    up = np.array([0, 0, 1.0])
    circle = [at(0.1 * (np.cos(a) - 1) * out + 0.1 * np.sin(a) * lateral) for a in np.linspace(0, 2 * np.pi, 73)[1:]]
    raster = []
    for i in range(5):
        y = (-1) ** i * 0.1
        raster += [at(0.04 * i * out + y * lateral), at(0.04 * (i + 1) * out + y * lateral)]
    rect = [at(0.1 * out), at(0.1 * out + 0.15 * lateral), at(-0.1 * out + 0.15 * lateral),
            at(-0.1 * out - 0.15 * lateral), at(0.1 * out - 0.15 * lateral), at(0.1 * out), at([0, 0, 0])]
    paths = [("line 0.3 m", [at(0.3 * lateral)], 0.0),
             ("line diag 0.4 m", [at(0.4 * (out + lateral - up) / np.sqrt(3))], 0.0),
             ("rectangle r=30mm", rect, 0.03),
             ("circle d=0.2 m", circle, 0.004),
             ("raster r=10mm", raster, 0.01)]
    if robot.name == "panda":
        paths += [("near elbow sing.", [at([0.385, 0, 0])], 0.0),
                  ("near shoulder sing.", [at([-0.25, 0, 0.1])], 0.0),
                  ("near wrist sing.", [at([0.1, 0, 0], R0 @ pin.rpy.rpyToMatrix(0, -1.45, 0))], 0.0),
                  ("into joint limit", [at([-0.5, 0, 0])], 0.0),
                  ("beyond reach", [at([0.8, 0, 0])], 0.0)]
    else:
        paths += [("near elbow sing.", [at(0.33 * out)], 0.0),
                  ("near wrist sing.", [at([0, 0, 0], R0 @ pin.rpy.rpyToMatrix(1.5, 0, 0))], 0.0),
                  ("into joint limit", [at([0, 0, 0], R0 @ pin.rpy.rpyToMatrix(0, 0, a)) for a in (2, 4, 6, 8)], 0.0),
                  ("beyond reach", [at(1.0 * out)], 0.0)]
    return paths


# ---- shared measurement ----------------------------------------------------------------------------------
def polyline_distance(points: np.ndarray, dense: np.ndarray) -> np.ndarray:
    """Distance of each point to the polyline through the dense path positions [m]."""
    _, i = cKDTree(dense).query(points)
    best = np.full(len(points), np.inf)
    for a in (np.clip(i - 1, 0, len(dense) - 2), np.clip(i, 0, len(dense) - 2)):
        seg = dense[a + 1] - dense[a]
        f = np.clip(np.einsum("kj,kj->k", points - dense[a], seg) / np.maximum((seg * seg).sum(1), 1e-30), 0, 1)
        best = np.minimum(best, np.linalg.norm(points - dense[a] - f[:, None] * seg, axis=1))
    return best


def tool_points(robot, Q):
    return np.array([robot.fk(q).translation for q in Q])


# ---- peers -----------------------------------------------------------------------------------------------
def numpy_dls(robot, path, q0, damping=1e-3):
    """(a) one plain DLS step per dense sample; returns (positions, seconds)."""
    model, data, fid = robot.model, robot.model.createData(), robot.tip_frame_id
    Q = np.empty((path.size, robot.n))
    Q[0] = q = q0.copy()
    t0 = time.perf_counter()
    for k in range(1, path.size):
        J = pin.computeFrameJacobian(model, data, q, fid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        M = data.oMf[fid]
        e = np.concatenate([path.positions[k] - M.translation, pin.log3(path.rotations[k] @ M.rotation.T)])
        q = q + J.T @ np.linalg.solve(J @ J.T + damping ** 2 * np.eye(6), e)
        Q[k] = q
    return Q, time.perf_counter() - t0


def rtb_ets(robot):
    """robotics-toolbox ETS of the same chain (fixed placements + elementary joint rotations)."""
    from roboticstoolbox import ET, ETS
    from spatialmath import SE3
    model = robot.model
    ets = ETS()
    for j in range(1, model.njoints):
        ets *= ET.SE3(SE3(model.jointPlacements[j].homogeneous, check=False))
        kind = model.joints[j].shortname()[-1].lower()
        ets *= {"x": ET.Rx, "y": ET.Ry, "z": ET.Rz}[kind]()
    ets *= ET.SE3(SE3(model.frames[robot.tip_frame_id].placement.homogeneous, check=False))
    q = robot.home()
    if np.abs(ets.fkine(q).A - robot.fk(q).homogeneous).max() > 1e-9:
        raise RuntimeError("rtb ETS does not match Pinocchio FK")
    return ets


def rtb_lm(ets, path, q0):
    """(b) ik_LM per sample, seeded from the previous solution; returns (positions, seconds, failures)."""
    Q = np.empty((path.size, len(q0)))
    Q[0] = q = q0.copy()
    failures = 0
    t0 = time.perf_counter()
    for k in range(1, path.size):
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = path.rotations[k], path.positions[k]
        sol = ets.ik_LM(T, q0=q, ilimit=30, slimit=1, tol=1e-10, joint_limits=True)
        if not sol.success:
            failures += 1
            Q = Q[:k]
            break
        q = sol.q
        Q[k] = q
    return Q, time.perf_counter() - t0, failures


class RoboPlanPeer:
    """(c) RoboPlan's Cartesian planner on the same URDF with the same acceleration limits."""

    def __init__(self, robot_name: str, robot: RobotModel) -> None:
        import roboplan.cartesian_planning as cp
        import roboplan.core as rc
        self.rc = rc
        _, urdf = embedded_robot(robot_name)
        scene = rc.Scene(robot_name, rc.loadUrdfSceneDescription(str(urdf),
                                                                 [str(example_robot_data_dir().parent.parent)]))
        scene.addGroupFromChain("arm", robot.base_frame, robot.tip_frame)
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write("joint_limits:\n" + "".join(f"  {n}:\n    max_acceleration: [{a}]\n"
                                                for n, a in zip(robot.joint_names, ACC[robot_name])))
        scene.importJointLimitsFromConfig(rc.loadJointLimitsConfig(f.name))
        self.names = list(scene.getJointNames())
        self.extra = len(self.names) - robot.n
        self.robot = robot
        self.planner = cp.CartesianPathPlanner(scene, cp.CartesianPlannerOptions(
            group_name="arm", speed_mode=cp.CartesianSpeedMode.TimeOptimal))

    def plan(self, waypoints, q0):
        T0 = self.robot.fk(q0)
        path = self.rc.CartesianPath([self.robot.base_frame], [self.robot.tip_frame],
                                     [[T0.homogeneous] + [w.homogeneous for w in waypoints]])
        start = self.rc.JointConfiguration(self.names, np.r_[q0, np.zeros(self.extra)])
        t0 = time.perf_counter()
        try:
            traj = self.planner.plan(path, start)
        except Exception as err:  # noqa: BLE001 - report the peer's refusal in the table
            return None, time.perf_counter() - t0, str(err).split("\n")[0][:40]
        elapsed = time.perf_counter() - t0
        return traj, elapsed, self.planner.computePeakLimitRatios(traj)


# ---- huge goals: this tree vs an older revision ------------------------------------------------------------
BEFORE_REV = "235b883"     # the last commit where every unblended waypoint was a stop (issue 9, item 5)
HUGE_CASES = ("circle 3 cm, 5000 wp", "line 10 cm, 1000 collinear wp", "square loops 1 mm, 400 sharp corners")

# run by this tree and by the old tree alike: MotionPlanner where the tree has it, the former CartesianPathPlanner
# (the same request, the same PathPlan) before issue 25
HUGE_SCRIPT = """
import json, sys, time
import numpy as np, pinocchio as pin
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.robot import RobotModel
try:
    from robokin_ros.core.program.moves import waypoint_program
    from robokin_ros.core.program.planner import MotionPlanner
except ImportError:
    from robokin_ros.core.path.planner import CartesianPathPlanner
    MotionPlanner = None


def plan_path(planner, q0, waypoints, blend):
    if MotionPlanner is None:
        return planner.plan(q0, waypoints, blend)
    return planner.plan(waypoint_program(waypoints, blend), q0, solved_part=False).path_plan()


robot = RobotModel.from_name("panda")
config = PathConfig(max_joint_acceleration=(15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0))
planner = CartesianPathPlanner(robot, config) if MotionPlanner is None else MotionPlanner(robot, config)
planner.warm_up()
q0 = robot.home()
T0 = robot.fk(q0)
a = np.linspace(0.0, 2 * np.pi, 5001)[1:]
square = 1e-3 * np.array([[1.0, 0, 0], [1.0, 1.0, 0], [0, 1.0, 0], [0, 0, 0]])
cases = [0.015 * np.column_stack([np.cos(a) - 1, np.sin(a), 0 * a]),
         np.column_stack([np.linspace(1e-4, 0.1, 1000), np.zeros(1000), np.zeros(1000)]),
         np.resize(square, (400, 3))]
out = []
for offsets in cases:
    waypoints = [pin.SE3(T0.rotation, T0.translation + d) for d in offsets]
    t0 = time.perf_counter()
    plan = plan_path(planner, q0, waypoints, 0.0)
    out.append(dict(seconds=time.perf_counter() - t0, ok=plan.success, stops=len(plan.ik.path.stops),
                    duration=plan.timing.duration if plan.timing else float("nan"),
                    timings={k: float(v) for k, v in plan.timings.items()}))
print(json.dumps(out))
"""


def run_huge(source_dir: Path) -> list[dict]:
    """HUGE_SCRIPT's results with `robokin_ros` imported from `source_dir`."""
    return json.loads(run_python(source_dir, HUGE_SCRIPT, what="huge goals").strip().splitlines()[-1])


def huge_goals(before_rev: str) -> None:
    """Print the huge-goal table: planning time, stops and trajectory duration, before (REV) and now."""
    root = Path(__file__).resolve().parents[1]
    now = run_huge(root)
    with archived_tree(before_rev) as old_tree:
        before = run_huge(old_tree)
    print(f"\n## huge goals, Panda, blend 0 (before = {before_rev}, now = this tree; plan = one call, warm)\n")
    print("| goal | stops before / now | plan [s] before / now | now: geometry / IK / downsample / timing [s] "
          "| trajectory [s] before / now |")
    print("|---|---|---|---|---|")
    for name, b, n in zip(HUGE_CASES, before, now):
        stages = " / ".join(f"{n['timings'].get(k, float('nan')):.3f}"
                            for k in ("geometry", "ik", "downsample", "timing"))
        print(f"| {name} | {b['stops']} / {n['stops']} | {b['seconds']:.2f} / {n['seconds']:.2f} | {stages} "
              f"| {b['duration']:.2f} / {n['duration']:.2f} |")


# ---- run -------------------------------------------------------------------------------------------------
REPEATS = 3          # timings are the best of REPEATS runs (the machine is shared)


def best(run):
    """Run `run()` REPEATS times; the result of the fastest run (its [1] element is the time)."""
    return min((run() for _ in range(REPEATS)), key=lambda r: r[1])


def ours(planner, robot, waypoints, blend):
    # imported here: bench/identical_plans.py imports this module's cases with older trees too
    from robokin_ros.core.program.moves import waypoint_program
    q0 = robot.home()
    program = waypoint_program(waypoints, blend)
    plan = min((planner.plan(program, q0, solved_part=False).path_plan() for _ in range(REPEATS)),
               key=lambda p: p.ik.compute_time)
    ik = plan.ik
    steps = np.abs(np.diff(ik.positions, axis=0)).max(axis=1)
    seg = np.linalg.norm(np.diff(ik.path.positions[:len(ik.positions)], axis=0), axis=1)
    per_mm = float((steps / np.maximum(seg, 1e-4)).max() * 1e-3) if len(steps) else 0.0
    return plan, per_mm


def main() -> None:
    from robokin_ros.core.program.planner import MotionPlanner
    print(__doc__.split("\n")[0])
    print("ms/m = nan on pure-rotation paths (no translation); us/sample is comparable there")
    for name in ("panda", "ur5"):
        robot = RobotModel.from_name(name)
        planner = MotionPlanner(robot, PathConfig(max_joint_acceleration=ACC[name]))
        ets, peer = rtb_ets(robot), RoboPlanPeer(name, robot)
        q0 = robot.home()
        planner.warm_up()
        print(f"\n## {name}  (ours: 1 mm / 1 mrad samples, checks on, tolerance 0.1 mm / 1 mrad)\n")
        print("| path | L [m] | ours: result | dev sample / mid / timed [mm] | dev [mrad] | max step "
              "[rad/mm] | IK [ms/m] | us/sample | timing [ms] | T [s] | v/a ratio | (a) numpy DLS ms/m, dev mm "
              "| (b) rtb ik_LM ms/m, step rad/mm | (c) RoboPlan ms, dev mm, v/a ratio |")
        print("|" + "---|" * 14)
        for title, waypoints, blend in suite(robot):
            plan, per_mm = ours(planner, robot, waypoints, blend)
            ik, t = plan.ik, plan.timing
            path = ik.path
            length = max(path.length, 1e-9)
            solved_len = max(ik.arc_length, 1e-9)
            d = ik.deviations
            result = "ok" if ik.success else f"{ik.status.name} @{ik.failed_sample} ({ik.arc_length * 1e3:.0f} mm)"
            timed = f"{t.max_position_deviation * 1e3:.3f}" if t else "-"
            timing = (f"{t.compute_time * 1e3:.1f} | {t.duration:.2f} | {t.peak_velocity_ratio:.3f}/"
                      f"{t.peak_acceleration_ratio:.3f}") if t else "- | - | -"
            Qa, ta = best(lambda: numpy_dls(robot, path, q0))
            dev_a = polyline_distance(tool_points(robot, Qa), path.positions).max() * 1e3
            Qb, tb, fb = best(lambda: rtb_lm(ets, path, q0))
            sb = np.abs(np.diff(Qb, axis=0)).max() if len(Qb) > 1 else 0.0
            b_len = path.arc_length[len(Qb) - 1]
            b_text = ((f"{tb / b_len * 1e3:.1f}" if b_len > 1e-3 else "-") + f", {sb:.4f}"
                      + (f", fails @{len(Qb)}" if fb else ""))
            traj, tc, info = best(lambda: peer.plan(waypoints, q0))
            if traj is None:
                c_text = f"{tc * 1e3:.1f}, refused: {info}"
            else:
                Qc = np.asarray(traj.positions)[:, :robot.n]
                dev_c = polyline_distance(tool_points(robot, Qc), path.positions).max() * 1e3
                c_text = f"{tc * 1e3:.1f}, {dev_c:.2f}, {info[0]:.2f}/{info[1]:.2f}"
            ms_per_m = ik.compute_time / solved_len * 1e3 if solved_len > 1e-3 else np.nan
            us_per_sample = ik.compute_time / max(len(ik.positions) - 1, 1) * 1e6
            a_ms_per_m = ta / length * 1e3 if length > 1e-3 else np.nan
            print(f"| {title} | {path.length:.3f} | {result} | {d.position * 1e3:.4f} / {d.mid_position * 1e3:.4f}"
                  f" / {timed} | {d.orientation * 1e3:.4f} | {per_mm:.4f} | {ms_per_m:.1f} | {us_per_sample:.1f}"
                  f" | {timing} | {a_ms_per_m:.1f}, {dev_a:.4f} | {b_text} | {c_text} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--huge", action="store_true", help="only the huge-goal table (before vs now)")
    parser.add_argument("--before", default=BEFORE_REV, help="git revision of the 'before' tree")
    args = parser.parse_args()
    if not args.huge:
        main()
    huge_goals(args.before)
