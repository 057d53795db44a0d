"""Pictures of a sampled workspace: slices through the base and a 3D cloud, coloured by a dexterity measure.

A spatial arm gets three panels: the vertical x-z slice (|y| below half the thickness), a horizontal slice at
the height where the arm reaches furthest, and the whole cloud in 3D; all share one colour scale and bar. A
planar arm (all points at one height) gets its x-y plane, with the exact annulus r_min = |L1 - L2|,
r_max = L1 + L2 drawn over it when `annulus` is given. matplotlib (Agg) is imported only when drawing.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from robokin_ros.core.classroom.workspace import WorkspaceSamples, reach_envelope
from robokin_ros.core.errors import InvalidInputError

COLOURS = ("manipulability", "sigma_min")
CLOUD_POINTS = 20000        # the 3D panel shows at most this many points (more only blur the picture)
DPI = 110


def _values(samples: WorkspaceSamples, colour: str) -> np.ndarray:
    if colour not in COLOURS:
        raise InvalidInputError(f"colour '{colour}' must be one of {COLOURS}")
    return samples.manipulability if colour == "manipulability" else samples.sigma_min


def _label(samples: WorkspaceSamples, colour: str) -> str:
    which = "translational" if samples.jacobian == "translation" else "full"
    return f"{colour.replace('_', ' ')} of the {which} Jacobian"


def _slice(ax, x, y, values, norm, title: str, xlabel: str, ylabel: str):
    order = np.argsort(values)                 # the best points drawn last, on top
    art = ax.scatter(x[order], y[order], c=values[order], s=2, cmap="viridis", norm=norm, linewidths=0)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel, aspect="equal")
    ax.grid(True, lw=0.3)
    return art


def _annulus(ax, annulus: tuple[float, float]) -> None:
    angle = np.linspace(0.0, 2.0 * np.pi, 721)
    for radius, name in zip(annulus, ("r min", "r max")):
        ax.plot(radius * np.cos(angle), radius * np.sin(angle), "r-", lw=1.2,
                label=f"exact {name} = {radius * 1e3:.0f} mm")
    ax.legend(loc="upper right", fontsize=8)


def plot_workspace(samples: WorkspaceSamples, out: str | Path, colour: str = "manipulability",
                   thickness: float = 0.05, annulus: tuple[float, float] | None = None, title: str = "") -> Path:
    """Write the workspace picture to `out` (PNG) and return its path; `thickness` [m] of the slices."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import Normalize

    values, p = _values(samples, colour), samples.points
    norm = Normalize(vmin=float(values.min()), vmax=float(values.max()))
    planar = np.ptp(p[:, 2]) < 1e-9
    fig = plt.figure(figsize=(6.5, 5.5) if planar else (16.0, 5.2), dpi=DPI, layout="constrained")
    if planar:
        ax = fig.add_subplot(1, 1, 1)
        art = _slice(ax, p[:, 0], p[:, 1], values, norm, "x-y plane (the arm's plane)", "x [m]", "y [m]")
        if annulus is not None:
            _annulus(ax, annulus)
        axes = [ax]
    else:
        axes = _spatial_panels(fig, samples, values, norm, thickness)
        art = axes[0].collections[0]
    fig.colorbar(art, ax=axes, shrink=0.85, label=_label(samples, colour))
    fig.suptitle(title or f"reachable tool positions, {len(p)} samples")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out


def _spatial_panels(fig, samples: WorkspaceSamples, values: np.ndarray, norm, thickness: float) -> list:
    p = samples.points
    half = 0.5 * thickness
    side = np.abs(p[:, 1]) <= half
    ax1 = fig.add_subplot(1, 3, 1)
    _slice(ax1, p[side, 0], p[side, 2], values[side], norm, f"x-z slice, |y| <= {half * 1e3:.0f} mm",
           "x [m]", "z [m]")
    envelope = reach_envelope(p, 10)
    widest = int(np.nanargmax(envelope.r_max))
    z0 = 0.5 * (envelope.z_edges[widest] + envelope.z_edges[widest + 1])
    level = np.abs(p[:, 2] - z0) <= half
    ax2 = fig.add_subplot(1, 3, 2)
    _slice(ax2, p[level, 0], p[level, 1], values[level], norm,
           f"horizontal slice, |z - {z0:.2f} m| <= {half * 1e3:.0f} mm", "x [m]", "y [m]")
    ax3 = fig.add_subplot(1, 3, 3, projection="3d")
    shown = np.random.default_rng(0).permutation(len(p))[:CLOUD_POINTS]     # an unbiased subset
    ax3.scatter(*p[shown].T, c=values[shown], s=1, cmap="viridis", norm=norm, linewidths=0)
    ax3.set(title="3D cloud", xlabel="x [m]", ylabel="y [m]", zlabel="z [m]")
    ax3.set_box_aspect(np.ptp(p[shown], axis=0))
    ax3.locator_params(nbins=5)        # denser ticks overlap in a 3-D panel
    return [ax1, ax2, ax3]
