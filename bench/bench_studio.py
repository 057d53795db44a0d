"""robokin studio: gizmo update -> servo IK -> every overlay -> browser, on the Panda. Target: >= 30 Hz.

Part 1, the server (no browser connected, one process): one update as the studio's loop runs it, while a gizmo
target circles the tool: the servo ticks for 1/30 s (ArmSession.advance), the overlays (all six: five ellipsoids and
the force polytope, measures, largest force and speed along a direction), the scene push (link poses and colours,
overlay shapes) and the panels' text, each timed. Peer: viser's own URDF view (viser.extras.ViserUrdf on yourdfpy,
the usual way to show a robot in viser) moving the same Panda, against the studio's link update (Pinocchio
placements) in the same process.

Part 2, the browser: headless Chromium (Debian's, software WebGL through SwiftShader: no GPU here) shows the studio
while the gizmo circles at 30 Hz. The page's probe (studio/browser_js.py) records requestAnimationFrame intervals
(the frame time the browser sees) and when each server update reached the page; DevTools' Performance metrics give
the page's main-thread time (JS, layout, style; the rest of a frame is SwiftShader drawing in the GPU process).
Rows: the studio in both render presets with every overlay and with the default two (`--small`: the light one in a
640x400 window too, software rendering pays per pixel), repeated `--repeat` times interleaved and reported as
medians (the machine is shared and noisy), the peer scene (ViserUrdf Panda, all meshes, no overlays), and the
floor: one box moved the same way (the page, the websocket and the probe with nothing to draw). The server and the
browser share the machine's cores. `--light-before` gives the light preset as it was before issue 24 item 15
(panel text at 10 Hz, viser's adaptive pixel density instead of 0.6).

Run: .venv/bin/python bench/bench_studio.py [--updates 300] [--seconds 8] [--repeat 3] [--small] [--no-browser]
(needs `bash scripts/setup.sh --bench` for the peer and `bash scripts/browser.sh` for Chromium)
"""
from __future__ import annotations

import argparse
import os
import socket
import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

from robokin_ros.core.collision.geometry import default_package_dirs
from robokin_ros.core.embedded import embedded_robot
from robokin_ros.studio.arm_update import ArmUpdater, ViewSettings
from robokin_ros.studio.joint_colours import joint_shades
from robokin_ros.studio.overlays import OVERLAY_ITEMS

ALL = frozenset(OVERLAY_ITEMS)
RADIUS = 0.08           # [m] of the gizmo's circle around the start tool position
PERIOD = 1.0 / 30.0     # [s] gizmo updates


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def circle(start: np.ndarray, t: float) -> np.ndarray:
    return start + RADIUS * np.array([np.sin(t), np.cos(t) - 1.0, 0.4 * np.sin(2.0 * t)])


def stats(values_ms) -> str:
    values = np.asarray(values_ms, float)
    return f"{np.median(values):8.2f} {np.percentile(values, 95):8.2f}"


def yourdfpy_panda():
    """The Panda's URDF as yourdfpy loads it, package:// meshes resolved like Pinocchio's."""
    import yourdfpy
    dirs = default_package_dirs()

    def resolve(fname: str) -> str:
        relative = fname.removeprefix("package://")
        return next((str(Path(d) / relative) for d in dirs if (Path(d) / relative).exists()), fname)
    return yourdfpy.URDF.load(str(embedded_robot("panda").urdf), filename_handler=resolve)


def server_part(updates: int) -> None:
    from robokin_ros.studio.app import StudioApp
    app = StudioApp("panda", port=free_port())            # not started: this loop is the update loop
    arm, session = app.arm, app.session
    settings = ViewSettings(shown=ALL, direction=np.array([0.0, 0.0, 1.0]))
    start = session.tool_pose().translation.copy()
    phases = {name: [] for name in ("servo IK, 1/30 s of ticks", "overlays (all six)", "scene push",
                                    "panels push (10 Hz; speed LP)", "whole update (ArmUpdater.run)")}
    updater = ArmUpdater()
    clock = time.perf_counter
    for k in range(updates):
        target = pin.SE3(session.tool_pose().rotation, circle(start, k * PERIOD))
        session.set_target(target)
        t0 = clock()
        session.advance(PERIOD)
        t1 = clock()
        frame = arm.overlays.build(session.positions, ALL, settings.direction)
        t2 = clock()
        shades = joint_shades(session.robot, session.positions, session.locked_joints)
        with app.server.atomic():
            arm.scene.update_arm(session.positions, shades, session.target())
            arm.scene.update_overlays(frame, True)
        t3 = clock()
        with app.server.atomic():
            arm.panels.show_arm(session.positions, shades, "bench")
            arm.panels.show_measures(frame)
        t4 = clock()
        session.advance(PERIOD)
        t5 = clock()
        updater.run(app.server, arm, settings, "bench")
        t6 = clock()
        for name, seconds in zip(phases, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, (t6 - t5) + (t1 - t0))):
            phases[name].append(seconds * 1e3)
    print(f"\nPart 1: server, Panda, every overlay, {updates} updates (median / p95 [ms])")
    print(f"{'phase':38s} {'median':>8s} {'p95':>8s}")
    for name, values in phases.items():
        print(f"{name:38s} {stats(values)}")
    from robokin_ros.studio.render_style import RENDER_STYLES
    scene_ms = np.median(phases["overlays (all six)"]) + np.median(phases["scene push"])
    panels_ms = np.median(phases["panels push (10 Hz; speed LP)"])
    for name, style in RENDER_STYLES.items():
        print(f"  {name} preset at 30 updates/s: overlays + scene {30 * scene_ms:.0f} ms/s, panel text "
              f"{style.panel_rate:g}/s x {panels_ms:.2f} ms = {style.panel_rate * panels_ms:.0f} ms/s")
    whole = np.median(phases["whole update (ArmUpdater.run)"])
    print(f"-> the server sustains {1000.0 / whole:.0f} updates/s (target >= 30); the studio's loop runs at "
          f"{app.rate:.0f} Hz and sends only when something changed")
    peer_rows(app, updates)
    app.server.stop()


def peer_rows(app, updates: int) -> None:
    try:
        from viser.extras import ViserUrdf
        urdf = yourdfpy_panda()
    except ImportError as err:
        print(f"(peer skipped: {err}; `bash scripts/setup.sh --bench` installs yourdfpy)")
        return
    peer = ViserUrdf(app.server, urdf, root_node_name="/peer")
    rng = np.random.default_rng(0)
    robot = app.robot
    qs = [robot.random_positions(rng) for _ in range(updates)]
    names = list(peer.get_actuated_joint_names())
    order = [robot.joint_names.index(n) if n in robot.joint_names else None for n in names]

    def peer_update(q):
        peer.update_cfg(np.array([q[i] if i is not None else 0.0 for i in order]))
    shades = joint_shades(robot, robot.home())
    rows = {"studio: link poses + colours (Pinocchio)": lambda q: app.arm.scene.update_arm(q, shades, None),
            "viser.extras.ViserUrdf.update_cfg (yourdfpy)": peer_update}
    times = {}
    for name, call in rows.items():
        for q in qs[:20]:
            call(q)
        samples = []
        for q in qs:
            t0 = time.perf_counter()
            with app.server.atomic():
                call(q)
            samples.append((time.perf_counter() - t0) * 1e3)
        times[name] = samples
    ours = np.median(times["studio: link poses + colours (Pinocchio)"])
    print(f"\nrobot pose update only, {updates} random configurations (median / p95 [ms], ratio to the studio)")
    for name, samples in times.items():
        print(f"{name:46s} {stats(samples)}   x{np.median(samples) / ours:5.2f}")


MAIN_THREAD = (("ScriptDuration", "JS"), ("LayoutDuration", "layout"), ("RecalcStyleDuration", "style"))


def main_thread_ms(driver) -> dict[str, float]:
    """Chromium's cumulative main-thread times [ms] (DevTools Performance.getMetrics)."""
    metrics = {m["name"]: m["value"] for m in driver.execute_cdp_cmd("Performance.getMetrics", {})["metrics"]}
    return {label: 1e3 * metrics.get(name, 0.0) for name, label in MAIN_THREAD}


def browser_row(url: str, move, seconds: float, size: tuple[int, int] = (1280, 800)) -> dict[str, float]:
    """One measurement: frame interval [ms] (median, p95), fps, updates/s seen, lag [ms], and the main thread's
    time per second of it [ms/s] in JS, layout and style (the rest of a frame's time is drawing: SwiftShader
    rasterises in Chromium's GPU process)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "studio"))
    from browser import Browser
    window = Browser(size)
    try:
        window.open(url, "studio update", timeout=60)
        time.sleep(2.0)
        window.driver.execute_cdp_cmd("Performance.enable", {})
        window.driver.execute_script("window.__robokin.frames.length = 0; window.__robokin.updates.length = 0;")
        before = main_thread_ms(window.driver)
        started = time.monotonic()
        while (now := time.monotonic() - started) < seconds:
            move(now)
            time.sleep(max(0.0, PERIOD - (time.monotonic() - started - now)))
        elapsed = time.monotonic() - started
        after = main_thread_ms(window.driver)
        frames = window.driver.execute_script("return window.__robokin.frames")
        seen = np.array(window.driver.execute_script("return window.__robokin.updates") or [[0.0, 0.0]])
    finally:
        window.close()
    row = {"frame": float(np.median(frames)), "p95": float(np.percentile(frames, 95)),
           "fps": 1000.0 / float(np.median(frames)), "updates/s": len(seen) / elapsed,
           "lag": float(np.median(seen[:, 1]))}
    row.update({f"{label} ms/s": (after[label] - before[label]) / elapsed for _, label in MAIN_THREAD})
    return row


COLUMNS = ("frame", "p95", "fps", "updates/s", "lag", "JS ms/s", "layout ms/s", "style ms/s")


def print_row(label: str, rows: list[dict[str, float]]) -> None:
    """The median over repeats of each column (and the spread of updates/s when repeated)."""
    medians = [float(np.median([r[c] for r in rows])) for c in COLUMNS]
    spread = (f"  (updates/s {min(r['updates/s'] for r in rows):.1f}-{max(r['updates/s'] for r in rows):.1f})"
              if len(rows) > 1 else "")
    print(f"{label:44s} " + " ".join(f"{v:8.1f}" for v in medians) + spread, flush=True)


def studio_rows(seconds: float, repeat: int, small: bool, light_only: bool = False) -> None:
    """Each render preset with every overlay and with the default two, gizmo circling at 30 Hz."""
    from robokin_ros.studio.app import StudioApp
    from robokin_ros.studio.panels import DEFAULT_OVERLAYS
    cases = [(render, shown, (1280, 800)) for render in ("light", "standard")
             for shown in (ALL, frozenset(DEFAULT_OVERLAYS))][:1 if light_only else None]
    if small:
        cases.append(("light", ALL, (640, 400)))
    results: dict[tuple, list] = {case: [] for case in cases}
    for _ in range(repeat):                 # interleaved, so a burst of load on the machine hits every row
        for case in cases:
            render, shown, size = case
            app = StudioApp("panda", port=free_port(), render=render)
            app.settings.shown = shown
            app.start()
            start = app.session.tool_pose().translation.copy()
            try:
                results[case].append(browser_row(app.url, lambda t: app.move_gizmo(circle(start, t)), seconds,
                                                 size))
            finally:
                app.stop()
    for (render, shown, size), rows in results.items():
        overlays = "every overlay" if shown == ALL else "default overlays"
        print_row(f"studio {render}, {overlays}, {size[0]}x{size[1]}", rows)


def browser_part(seconds: float, repeat: int, small: bool, light_only: bool = False) -> None:
    print(f"\nPart 2: headless Chromium (SwiftShader software WebGL), gizmo at 30 Hz for {seconds:.0f} s, "
          f"median of {repeat}")
    print(f"{'scene (window 1280x800 unless named)':44s} " + " ".join(f"{c.split()[0]:>8s}" for c in COLUMNS))
    studio_rows(seconds, repeat, small, light_only)
    if not light_only:
        peer_browser_row(seconds)
        floor_browser_row(seconds)
    print("(frame: requestAnimationFrame interval [ms], median and p95; updates/s: server updates that reached the "
          "page; lag: send to arrival [ms]; JS/layout/style: the page's main thread [ms per s]; the rest of a "
          "frame is drawing, in the GPU process)")


def peer_browser_row(seconds: float) -> None:
    try:
        import viser
        from viser.extras import ViserUrdf
        urdf = yourdfpy_panda()
    except ImportError as err:
        print(f"(peer scene skipped: {err})")
        return
    from robokin_ros.studio import browser_js
    from robokin_ros.core.robot import RobotModel
    server = viser.ViserServer(host="127.0.0.1", port=free_port(), verbose=False)
    browser_js.install(server)
    line = server.gui.add_markdown(f"{browser_js.UPDATE_LINE}0 @ 0")
    peer = ViserUrdf(server, urdf, root_node_name="/peer")
    home = RobotModel.from_name("panda").home()
    count = [0]

    def move(t: float) -> None:
        q = home + 0.3 * np.sin(t) * np.ones(len(home))
        with server.atomic():
            peer.update_cfg(np.concatenate([q, np.zeros(len(peer.get_actuated_joint_names()) - len(q))]))
            count[0] += 1
            line.content = f"{browser_js.UPDATE_LINE}{count[0]} @ {int(time.time() * 1e3)}"
    try:
        print_row("peer: ViserUrdf Panda, no overlays",
                  [browser_row(f"http://127.0.0.1:{server.get_port()}", move, seconds)])
    finally:
        server.stop()


def floor_browser_row(seconds: float) -> None:
    """The page and transport alone: one box moved at 30 Hz (what the browser does when drawing costs nothing)."""
    import viser
    from robokin_ros.studio import browser_js
    server = viser.ViserServer(host="127.0.0.1", port=free_port(), verbose=False)
    browser_js.install(server)
    line = server.gui.add_markdown(f"{browser_js.UPDATE_LINE}0 @ 0")
    box = server.scene.add_box("/box", color=(200, 60, 60), dimensions=(0.2, 0.2, 0.2))
    count = [0]

    def move(t: float) -> None:
        with server.atomic():
            box.position = (0.3 * np.sin(t), 0.0, 0.0)
            count[0] += 1
            line.content = f"{browser_js.UPDATE_LINE}{count[0]} @ {int(time.time() * 1e3)}"
    try:
        print_row("floor: one box, same page and transport",
                  [browser_row(f"http://127.0.0.1:{server.get_port()}", move, seconds)])
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--updates", type=int, default=300, help="server updates to time")
    parser.add_argument("--seconds", type=float, default=8.0, help="browser measurement per scene [s]")
    parser.add_argument("--no-browser", action="store_true", help="only the server part")
    parser.add_argument("--repeat", type=int, default=1, help="browser measurements per studio row (medians)")
    parser.add_argument("--small", action="store_true", help="also the light preset in a 640x400 window")
    parser.add_argument("--light-only", action="store_true", help="the browser part's light, every-overlay row only")
    parser.add_argument("--light-before", action="store_true",
                        help="the light preset as it was before issue 24 item 15 (panel text at 10 Hz, viser's "
                        "adaptive pixel density), for before/after figures from one machine")
    args = parser.parse_args()
    if args.light_before:
        from robokin_ros.studio.render_style import RENDER_STYLES
        RENDER_STYLES["light"] = RENDER_STYLES["light"]._replace(panel_rate=10.0, pixel_ratio=None)
    print(f"robokin studio bench, {os.cpu_count()} cores")
    server_part(args.updates)
    if not args.no_browser:
        browser_part(args.seconds, args.repeat, args.small, args.light_only)


if __name__ == "__main__":
    main()
