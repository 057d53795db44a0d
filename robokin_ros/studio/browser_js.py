"""The studio's only JavaScript: keyboard shortcuts, a frame-time probe and the render preset's pixel density.

Why our own script: viser 1.1 has no keyboard events (its GUI and scene send clicks, drags and values, not key
presses), and the frame time the browser sees is only known inside the page. The script does no work of its own:
a shortcut clicks the GUI button whose label ends in "(<key>)", so every action still runs on the server exactly
as a click would; the probe records requestAnimationFrame intervals and when each server update (the
"studio update #N" line of the Performance folder) reached the page. It is sent with viser's RunJavascriptMessage,
which viser itself uses to load Plotly, and replayed to every client that connects.
"""
from __future__ import annotations

import viser
from viser import _messages

UPDATE_LINE = "studio update #"      # the Performance folder's line the probe watches: "studio update #N @ <ms>"
SHORTCUTS = {                         # key -> the end of the GUI button label it clicks
    "t": "(T)", "r": "(R)", "q": "(Q)", "k": "(K)", "p": "(P)", "c": "(C)", "x": "(X)", "?": "(?)",
}

_SCRIPT = """
(() => {
  if (window.__robokin) return;
  const shortcuts = %(shortcuts)s;
  const probe = {frames: [], updates: [], lastUpdate: -1, keys: 0};
  window.__robokin = probe;
  const typing = (el) => el && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.isContentEditable);
  document.addEventListener('keydown', (event) => {
    const el = document.activeElement;
    if (event.key === 'Enter' && el && el.tagName === 'INPUT' && el.inputMode === 'decimal') {
      el.blur();          // Enter commits a number box as leaving it does (the box clamps its value on blur)
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || typing(document.activeElement)) return;
    const suffix = shortcuts[event.key.toLowerCase()] || shortcuts[event.key];
    if (!suffix) return;
    const button = [...document.querySelectorAll('button')].find((b) => b.innerText.trim().endsWith(suffix));
    if (!button) return;
    probe.keys += 1;
    event.preventDefault();
    button.click();
  });
  let line = null;
  const findLine = () => {
    const hit = document.evaluate("//*[starts-with(normalize-space(text()), '%(update_line)s')]", document.body,
                                  null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue;
    return hit;
  };
  let previous = null;
  const frame = (now) => {
    if (previous !== null) { probe.frames.push(now - previous); if (probe.frames.length > 2000) probe.frames.shift(); }
    previous = now;
    if (!line || !line.isConnected) line = findLine();
    if (line) {
      const match = /#(\\d+) @ (\\d+)/.exec(line.textContent);
      if (match && Number(match[1]) !== probe.lastUpdate) {
        probe.lastUpdate = Number(match[1]);
        probe.updates.push([performance.now(), Date.now() - Number(match[2])]);
        if (probe.updates.length > 2000) probe.updates.shift();
      }
    }
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
})();
"""


def script() -> str:
    """The JavaScript source sent to every client."""
    pairs = ", ".join(f"'{key}': '{suffix}'" for key, suffix in SHORTCUTS.items())
    return _SCRIPT % {"shortcuts": "{" + pairs + "}", "update_line": UPDATE_LINE}


def install(server: viser.ViserServer) -> None:
    """Send the script to current and future clients (viser keeps it in the scene state it replays)."""
    server.scene._websock_interface.queue_message(_messages.RunJavascriptMessage(source=script()))


def pixel_ratio_script(ratio: float | None, leave_default: bool) -> str:
    """JavaScript that reloads the page when its `fixedDpr` URL parameter (viser's 3D view pixel density) is not
    `ratio`; with ratio None it removes the parameter, unless `leave_default` (a person's own URL is kept)."""
    want = "null" if ratio is None else f"'{ratio:g}'"
    keep = "true" if leave_default else "false"
    return f"""
(() => {{
  const url = new URL(window.location.href);
  const want = {want}, have = url.searchParams.get('fixedDpr');
  if (have === want || (want === null && {keep})) return;
  if (want === null) url.searchParams.delete('fixedDpr'); else url.searchParams.set('fixedDpr', want);
  window.location.replace(url.toString());
}})();
"""


def send_pixel_ratio(client: viser.ClientHandle, ratio: float | None, leave_default: bool) -> None:
    """Run `pixel_ratio_script` in one client's page (not replayed to others: each page answers for itself)."""
    client.scene._websock_interface.queue_message(
        _messages.RunJavascriptMessage(source=pixel_ratio_script(ratio, leave_default)))
