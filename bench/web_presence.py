"""Presence in the browser, measured in Chromium against a real `fp serve` on SQLite (loopback):
two contexts (two devices of one person) in one small note.

1. a caret moving in tab A (an arrow key, no text changed: presence alone) until tab B has drawn
   it in its new place, p50 < 100 ms: from the key event's timestamp in A to the mutation of B's
   caret layer that puts it there, both on the machine's one clock (`performance.timeOrigin`);
2. opening the note in B until A shows B's initials (reported; the acceptance line is "within
   1 s"), from the navigation's start;
3. B's tab closing until A no longer shows B, < 30 s at most: the closing tab says it leaves
   (one request and a long poll's answer); when that leave is lost, the 25 s expiry.

A benchmark, not a test: figures are reported with their targets, nothing is asserted. Run with
`.venv/bin/python bench/web_presence.py`; results in bench/results/web_presence.json.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playwright.sync_api import Page, sync_playwright  # noqa: E402

from bench.common import percentiles  # noqa: E402
from bench.web import (CHROMIUM, CHROMIUM_ARGS, VIEWPORT, Console, create_note, focus_block, judged,  # noqa: E402
                       new_context, open_note, report)
from tests.api.conftest import OWNER_EMAIL, start_server, stop  # noqa: E402

TARGETS = {"presence_update_p50_ms": 100, "presence_shown_on_open_ms": 1_000, "presence_gone_on_close_ms": 30_000}

# In A: when the last key went down, on the machine's clock.
KEY_CLOCK = """() => document.addEventListener('keydown', (event) => {
  window.__pressed = performance.timeOrigin + event.timeStamp; }, true)"""
# In B: when the caret layer next draws the other tab's caret somewhere other than `left`.
CARET_WATCH = """(left) => {
  window.__moved = null;
  const layer = document.querySelector('.presence-layer');
  const observer = new MutationObserver(() => {
    const caret = layer.querySelector('.remote-caret');
    if (caret && caret.style.left !== left && window.__moved === null) {
      window.__moved = performance.timeOrigin + performance.now();
      observer.disconnect();
    }
  });
  observer.observe(layer, { childList: true, subtree: true, attributes: true });
}"""
# In A: when the presence bar first shows someone / next shows no one.
AVATAR_WATCH = """(present) => {
  window.__avatar = null;
  const bar = document.querySelector('.presence');
  const seen = () => (bar.querySelector('.avatar') !== null) === present;
  if (seen()) return void (window.__avatar = performance.timeOrigin + performance.now());
  const observer = new MutationObserver(() => {
    if (seen()) { window.__avatar = performance.timeOrigin + performance.now(); observer.disconnect(); }
  });
  observer.observe(bar, { childList: true, subtree: true });
}"""


def caret_left(page: Page) -> str:
    return page.evaluate("() => document.querySelector('.presence-layer .remote-caret')?.style.left ?? ''")


def caret_moves(mover: Page, watcher: Page, samples: int) -> dict:
    mover.evaluate(KEY_CLOCK)
    focus_block(mover, 0)
    mover.keyboard.press("Home")
    watcher.wait_for_selector(".presence-layer .remote-caret")
    delays = []
    for i in range(samples):
        watcher.evaluate(CARET_WATCH, caret_left(watcher))
        mover.keyboard.press("End" if i % 2 == 0 else "Home")
        watcher.wait_for_function("() => window.__moved !== null")
        delays.append(watcher.evaluate("window.__moved") - mover.evaluate("window.__pressed"))
        mover.wait_for_timeout(250)  # past the tab's 200 ms gap between posts: each move goes out at once
    return percentiles(delays)


def avatar_change(watcher: Page, present: bool, act) -> float:
    watcher.evaluate(AVATAR_WATCH, present)
    started = time.time() * 1000
    act()
    watcher.wait_for_function("() => window.__avatar !== null")
    return watcher.evaluate("window.__avatar") - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--moves", type=int, default=40)
    parser.add_argument("--visits", type=int, default=5)
    args = parser.parse_args()
    console = Console()
    with tempfile.TemporaryDirectory(prefix="fastpad-bench-presence-") as tmp:
        server = start_server(Path(tmp), "sqlite")
        playwright = sync_playwright().start()
        try:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            token = server.mint("notes:read,notes:write", "--person", OWNER_EMAIL, "--label", "bench: presence")["token"]
            note = create_note(server.base_url, token, "Together", 5)
            context = new_context(browser, server.base_url, server.owner_email, server.owner_password)
            other = browser.new_context(viewport=VIEWPORT, storage_state=context.storage_state())
            a = console.attach(context.new_page())
            open_note(a, server.base_url, note)
            shown, gone = [], []
            for _ in range(args.visits):
                b = console.attach(other.new_page())
                shown.append(avatar_change(a, True, lambda: b.goto(f"{server.base_url}/notes/{note}")))
                gone.append(avatar_change(a, False, b.close))
            b = console.attach(other.new_page())
            open_note(b, server.base_url, note)
            moves = caret_moves(b, a, args.moves)
            version = browser.version
            browser.close()
        finally:
            playwright.stop()
            stop(server.process)
    figures = {
        "chromium": version,
        "presence_update": moves,
        "presence_shown_on_open": {**percentiles(shown), "samples_ms": [round(ms, 1) for ms in shown]},
        "presence_gone_on_close": {**percentiles(gone), "samples_ms": [round(ms, 1) for ms in gone]},
        "judged": {
            "presence_update_p50_ms": judged(moves["p50_ms"], TARGETS["presence_update_p50_ms"]),
            "presence_shown_on_open_ms": judged(max(shown), TARGETS["presence_shown_on_open_ms"]),
            "presence_gone_on_close_ms": judged(max(gone), TARGETS["presence_gone_on_close_ms"]),
        },
    }
    report("web_presence", figures, TARGETS, console)


if __name__ == "__main__":
    main()
