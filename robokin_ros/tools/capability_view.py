"""capability_view: robot + configuration -> PNG of the arm with its ellipsoids and force polytope.

    capability_view --robot panda --q 0,-0.785,0,-2.356,0,1.571,0.785 --out out/cap.png \
        [--views iso,front,top] [--stl out/polytope.stl] [--pose home|mid_range]

Prints the table of measures. The arm is drawn as a polyline through the chain's joint origins; the
ellipsoids and the polytope sit at the tool origin with the node's default display scales (see
CapabilityConfig): velocity [m per m/s], acceleration normalized to the velocity one, force [m/N].
`render` is importable (the ROS demo uses it). No ROS needed.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from robokin_ros.core.capability.analysis import CapabilityAnalysis, Ellipsoid, analyze, torque_limits_of
from robokin_ros.core.capability.config import POLYTOPE_METHODS, CapabilityConfig
from robokin_ros.core.capability.polytope import ForcePolytope, tool_force_polytope, write_stl
from robokin_ros.core.capability.report import format_table, measure_rows, shown_ellipsoids
from robokin_ros.core.errors import RobokinError
from robokin_ros.core.robot import RobotModel
from robokin_ros.tools.cli_errors import OneLineParser, report

VIEWS = {"iso": (25.0, -60.0), "front": (0.0, -90.0), "side": (0.0, 0.0), "top": (90.0, -90.0)}
_DEPTH_AXIS = {"front": "y", "side": "x", "top": "z"}     # hidden in the orthographic views
PANEL_SIZE_IN = (5.5, 6.0)    # [in] width and height of one view's panel
DPI = 110
TICKS = 5                     # at most this many ticks per axis: more overlap in a 3-D panel
VIEW_MARGIN = 1.1             # the view spans the drawing's largest extent times this
# the ellipsoids drawn (show items) and their legend labels
_LABELS = {"velocity": "velocity", "acceleration": "acceleration (normalized)",
           "force_weighted": "force, torque-weighted"}


def _sphere_mesh(ellipsoid: Ellipsoid, centre: np.ndarray, scale: float, count: int = 24):
    u, v = np.meshgrid(np.linspace(0, 2 * np.pi, count), np.linspace(0, np.pi, count // 2))
    unit = np.stack([np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v)])      # (3, a, b)
    points = np.einsum("ij,jab->iab", ellipsoid.axes * (scale * ellipsoid.semi_axes), unit)
    return [centre[i] + points[i] for i in range(3)]


def arm_points(robot: RobotModel, positions: np.ndarray) -> np.ndarray:
    """(k, 3) base origin, then every chain link origin and the tool [m], base frame. A robot with several tips:
    one such branch per tip, the line going back down each branch to the base before the next (one polyline)."""
    branches = []
    for tip_index in range(len(robot.tip_frames)):
        ids = [robot.frame_id(name) for name in robot.tip_link_frames(tip_index)]
        branches.append([np.zeros(3)] + [pose.translation for pose in robot.frame_poses(positions, ids)])
    walked_back = [point for branch in branches[:-1] for point in branch + branch[-2::-1]]
    return np.vstack(walked_back + branches[-1])


def _items(analysis: CapabilityAnalysis, cfg: CapabilityConfig):
    shown = shown_ellipsoids(analysis, cfg)
    return [(label, shown[item].ellipsoid, shown[item].scale, shown[item].rgba) for item, label in _LABELS.items()
            if shown[item].ellipsoid is not None]


def _draw(ax, arm: np.ndarray, analysis: CapabilityAnalysis, polytope: ForcePolytope | None,
          cfg: CapabilityConfig) -> None:
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection
    ax.plot(*arm.T, "-o", color="0.2", lw=3, ms=4, label="arm (joint origins)")
    tool = analysis.tool_position
    for name, ellipsoid, scale, colour in _items(analysis, cfg):
        ax.plot_surface(*_sphere_mesh(ellipsoid, tool, scale), color=colour[:3], alpha=0.35, linewidth=0,
                        shade=False)
        ax.plot([], [], color=colour[:3], lw=6, alpha=0.5, label=name)       # legend proxy
    if polytope is not None and polytope.dimension >= 2:
        faces = tool + cfg.force_scale * polytope.vertices[polytope.triangles]
        ax.add_collection3d(Poly3DCollection(faces, facecolor=cfg.color_polytope[:3], alpha=0.15,
                                             edgecolor=(0.5, 0.1, 0.4, 0.4), linewidth=0.4))
        ax.plot([], [], color=cfg.color_polytope[:3], lw=6, alpha=0.4, label=f"force polytope ({polytope.method})")
    extent = np.vstack([arm, tool + cfg.force_scale * polytope.vertices if polytope is not None else arm])
    centre, half = extent.mean(axis=0), 0.5 * VIEW_MARGIN * np.ptp(extent, axis=0).max()
    ax.set(xlim=(centre[0] - half, centre[0] + half), ylim=(centre[1] - half, centre[1] + half),
           zlim=(centre[2] - half, centre[2] + half), xlabel="x [m]", ylabel="y [m]", zlabel="z [m]")
    ax.set_box_aspect((1, 1, 1))


def render(robot: RobotModel, positions: Sequence[float], out: str | Path, views: Sequence[str] = ("iso",),
           cfg: CapabilityConfig | None = None, stl: str | Path | None = None) -> str:
    """Write the picture (one panel per view) and optionally the STL; returns the measures table.

    Raises:
        RobokinError: bad positions, unknown view, or an STL asked for without torque limits.
    """
    unknown = [v for v in views if v not in VIEWS]
    if unknown:
        raise RobokinError(f"unknown views {unknown}; choose from {sorted(VIEWS)}")
    cfg = cfg or CapabilityConfig()
    torque = torque_limits_of(robot, cfg.torque_limits)
    analysis = analyze(robot, positions, torque.limits, torque.reason, cfg.singular_sigma)
    polytope = tool_force_polytope(analysis, cfg.polytope_method, cfg.singular_sigma)
    if stl is not None:
        if polytope is None:
            raise RobokinError(f"no STL: {torque.reason}")
        write_stl(stl, polytope)
    _picture(robot, analysis, polytope, views, cfg, Path(out))
    return format_table(measure_rows(analysis, polytope, torque.reason))


def _picture(robot: RobotModel, analysis: CapabilityAnalysis, polytope: ForcePolytope | None, views: Sequence[str],
             cfg: CapabilityConfig, out: Path) -> None:
    """One 3-D panel per view of the arm, its ellipsoids and polytope, titled with the measures."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator
    arm = arm_points(robot, analysis.positions)
    fig = plt.figure(figsize=(PANEL_SIZE_IN[0] * len(views), PANEL_SIZE_IN[1]))
    for i, view in enumerate(views, start=1):
        ax = fig.add_subplot(1, len(views), i, projection="3d")
        _draw(ax, arm, analysis, polytope, cfg)
        ax.view_init(*VIEWS[view])
        ax.set_title(view)
        for axis in (ax.xaxis, ax.yaxis, ax.zaxis):
            axis.set_major_locator(MaxNLocator(TICKS))
        if view in _DEPTH_AXIS:
            ax.set_proj_type("ortho")
            getattr(ax, f"set_{_DEPTH_AXIS[view]}ticks")([])
            getattr(ax, f"set_{_DEPTH_AXIS[view]}label")("")
    fig.axes[0].legend(loc="upper left", fontsize=8)
    m = analysis.manipulability
    fig.suptitle(f"{robot.name}: {robot.base_frame} -> {robot.tip_frame}   yoshikawa {m.yoshikawa:.3g} m^3, "
                 f"cond {m.condition:.3g}, sigma_min {m.sigma_min:.3g} m/rad, isotropy {m.isotropy:.2f}"
                 + ("  SINGULAR" if m.singular else "")
                 + f"\nscales: velocity {cfg.velocity_scale} m per m/s, force {cfg.force_scale * 1e3:g} mm/N",
                 fontsize=10)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=DPI, bbox_inches="tight")
    plt.close(fig)


def _numbers(option: str, text: str) -> np.ndarray:
    """Comma-separated numbers of an option ("pi/2" style allowed)."""
    from robokin_ros.tools.robokin_cli.dh2urdf import parse_number
    try:
        return np.array([parse_number(v) for v in text.split(",")])
    except ValueError:
        raise RobokinError(f"{option} must be comma-separated numbers, got '{text}'") from None


def _positions(robot: RobotModel, q: str | None, pose: str) -> np.ndarray:
    if q:
        return _numbers("--q", q)
    poses = {"home": robot.home, "mid_range": robot.mid_range, "zero": lambda: np.zeros(robot.n)}
    if pose not in poses:
        raise RobokinError(f"unknown pose '{pose}'; choose from {sorted(poses)}")
    return poses[pose]()


def main(argv: list[str] | None = None) -> int:
    """Console script `capability_view`."""
    parser = OneLineParser(prog="capability_view", description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", default="panda", help="embedded name (panda, ur5, ...) or URDF file")
    parser.add_argument("--base-frame", default="", help="required for a URDF file")
    parser.add_argument("--tip-frame", default="", help="required for a URDF file")
    parser.add_argument("--q", help="joint positions [rad | m], comma-separated, chain order")
    parser.add_argument("--pose", default="home", help="named pose when --q is not given: home, mid_range, zero")
    parser.add_argument("--out", default="out/capability.png", help="PNG path")
    parser.add_argument("--views", default="iso,front,top", help=f"comma-separated: {','.join(VIEWS)}")
    parser.add_argument("--stl", help="also write the force polytope as binary STL [N]")
    parser.add_argument("--polytope-method", default="pinv", choices=POLYTOPE_METHODS)
    parser.add_argument("--torque-limits", help="comma-separated [N m], overrides the URDF")
    args = parser.parse_args(argv)
    try:
        robot = RobotModel.load(args.robot, args.base_frame, args.tip_frame)
        limits = tuple(_numbers("--torque-limits", args.torque_limits)) if args.torque_limits else ()
        cfg = CapabilityConfig(polytope_method=args.polytope_method, torque_limits=limits)
        cfg.check_joint_lists(robot.joint_names)
        table = render(robot, _positions(robot, args.q, args.pose), args.out,
                       [v.strip() for v in args.views.split(",") if v.strip()], cfg, args.stl)
    except (RobokinError, ValueError, OSError) as err:
        return report("capability_view", err)
    print(table)
    print(f"wrote {Path(args.out).absolute()}" + (f" and {Path(args.stl).absolute()}" if args.stl else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
