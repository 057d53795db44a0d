"""How the studio draws: two presets, because a browser without a GPU pays per shaded pixel.

"standard" (the default) is for a browser with a GPU: physically based materials lit by an environment map, with
shadows. "light" is for software WebGL (SwiftShader in a VM, CI, remote desktops) and old laptops: toon materials,
no environment map and no shadows, a smaller mesh budget, the 3D view drawn at 0.6 of the screen's pixel density
(software rendering pays per pixel), and the panels' numbers (tool pose, sliders, measures) refreshed 3 times a
second instead of 10 while the arm moves: on a software-rendered page each text change repaints the panel over the
3D view, and at 10 Hz that halved the frame rate (bench/bench_studio.py measures both presets). Every overlay
stays available in both: with all six on they cost the light page about 2 fps.

The pixel density is viser's own page setting, the `fixedDpr` URL parameter (without it viser adapts the density
between 0.75 and 1 by the frame rate): the studio's URL carries it in the light preset, and a page opened without
it, or open while the preset changes, reloads itself with the right one (browser_js.pixel_ratio_script).
Choose it with `robokin studio --render light` or the "Rendering" dropdown (Help and performance folder).
"""
from __future__ import annotations

from typing import NamedTuple

import viser


class RenderStyle(NamedTuple):
    material: str               # viser mesh material: "standard" or "toon3"
    shadows: bool
    environment: str | None     # viser environment map (HDRI name), None = lights only
    triangles: int              # robot mesh triangle budget when a robot is loaded in this style
    panel_rate: float           # [Hz] how often the panels' numbers follow a moving arm
    pixel_ratio: float | None   # the 3D view's pixels per screen pixel (viser's fixedDpr); None: viser adapts it


RENDER_STYLES = {
    "standard": RenderStyle("standard", True, "warehouse", 30000, 10.0, None),
    "light": RenderStyle("toon3", False, None, 10000, 3.0, 0.6),
}


def apply_to_server(server: viser.ViserServer, style: RenderStyle) -> None:
    """The scene-wide part: environment map and the default lights' shadows."""
    server.scene.configure_environment_map(style.environment)
    server.scene.configure_default_lights(True, cast_shadow=style.shadows)


def apply_to_meshes(meshes, style: RenderStyle) -> None:
    """The per-mesh part (links and overlays): material and shadows."""
    for mesh in meshes:
        mesh.material = style.material
        mesh.cast_shadow = mesh.receive_shadow = style.shadows


def page_query(style: RenderStyle) -> str:
    """The URL query that opens the studio's page in this style ("" when viser's defaults do)."""
    return f"/?fixedDpr={style.pixel_ratio:g}" if style.pixel_ratio else ""
