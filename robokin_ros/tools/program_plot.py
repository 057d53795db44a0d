"""The PNG report of a motion program: tool path coloured by move, tool speed over time against each move's
programmed speed, and the cycle-time bars of one or more versions of the program side by side."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from robokin_ros.core.path.toppra_constraints import tool_speeds
from robokin_ros.core.program.result import ProgramPlan


def program_png(plans: dict[str, ProgramPlan], chain, fk, out: Path) -> Path:
    """One row per plan (tool path, tool speed), plus the cycle-time comparison when there are several.

    chain: the tool chain arrays (`ChainFk.arrays()`), fk: batched FK (positions -> rotations, positions)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = len(plans)
    fig = plt.figure(figsize=(13, 4.2 * rows + (2.6 if rows > 1 else 0.0)))
    colours = plt.get_cmap("tab20")
    for row, (name, plan) in enumerate(plans.items()):
        traj = plan.trajectory
        ax = fig.add_subplot(rows + (rows > 1), 2, 2 * row + 1, projection="3d")
        speed = fig.add_subplot(rows + (rows > 1), 2, 2 * row + 2)
        if traj is None:
            ax.set_title(f"{name}: nothing planned", fontsize=9)
            continue
        _, p = fk(traj.positions)
        v = tool_speeds(chain, traj.positions, traj.velocities)[:, 0]
        for m in plan.moves:
            inside = (traj.times >= m.start_time - 1e-9) & (traj.times <= m.end_time + 1e-9)
            if not inside.any():
                continue
            colour = colours(m.index % 20)
            ax.plot(p[inside, 0], p[inside, 1], p[inside, 2], color=colour, lw=1.5)
            speed.plot(traj.times[inside], v[inside], color=colour, lw=1.5, label=m.label)
            if m.programmed_speed > 0:
                speed.hlines(m.programmed_speed, m.start_time, m.end_time, colors=[colour], linestyles="dotted")
        ax.set_title(f"{name}: tool path by move", fontsize=9)
        ax.set_xlabel("x [m]"), ax.set_ylabel("y [m]"), ax.set_zlabel("z [m]")
        speed.set_title(f"{name}: tool speed (dotted: programmed), cycle {plan.cycle_time:.2f} s", fontsize=9)
        speed.set_xlabel("time [s]"), speed.set_ylabel("m/s")
        speed.legend(fontsize=6, ncol=2, loc="upper right")
    if rows > 1:
        bars = fig.add_subplot(rows + 1, 1, rows + 1)
        names = list(plans)
        for y, name in enumerate(names):
            for m in plans[name].moves:
                bars.barh(y, m.duration, left=m.start_time, color=colours(m.index % 20), edgecolor="k", lw=0.3)
            bars.text(plans[name].cycle_time, y, f" {plans[name].cycle_time:.2f} s", va="center", fontsize=8)
        bars.set_yticks(np.arange(len(names)), names, fontsize=8)
        bars.set_xlabel("time [s] (one colour per move)")
        bars.set_title("cycle time", fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out
