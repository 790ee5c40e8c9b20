"""Collections in the browser app, measured in a real browser: Debian's chromium (headless,
driven by Playwright's sync API) against a real `fp serve` on SQLite.

Figures and targets (issue 16):

1. a table view over 10,000 typed notes (eight properties each: a column per property),
   from the app being asked for the view's page until its first page of rows (100) is in
   the DOM and the next frame has been produced, p50 < 300 ms (warm: the app is open, as
   when a person clicks the view in the sidebar; a cold load of the whole page, shell and
   bundle included, is reported beside it);
2. a board of 2,000 cards (grouped by a select of four options), from the same moment until
   every card is in its column and the next frame is produced, p50 < 500 ms.

The notes are created through `POST /v1/notes:batch` (100 at a time, each with its type and
properties, an empty body so the embedding worker has nothing to do), and the server is left
to go quiet before anything is timed. It is a benchmark, not a test: every figure is reported
with its target and whether it met it, and nothing is asserted. Run with
`.venv/bin/python bench/web_views.py`.
"""

from __future__ import annotations

import argparse
import random
import secrets
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # noqa: E402
from playwright.sync_api import Page, sync_playwright  # noqa: E402

from bench.common import percentiles  # noqa: E402
from bench.web import CHROMIUM, CHROMIUM_ARGS, Console, judged, new_context, report, wait_until_quiet  # noqa: E402
from tests.api.conftest import OWNER_EMAIL, start_server, stop  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TABLE_NOTES = 10_000
BOARD_CARDS = 2_000
BATCH = 100
STATUSES = ["backlog", "todo", "doing", "done"]
TARGETS = {"table_10000_first_page_p50_ms": 300, "board_2000_cards_p50_ms": 500}
BLANK, BLANK_READY = "/no-such-page", "#page > p"  # the app's own Not found page

# In the page: ask the app's router for `path`, then wait (frame by frame) until `ready` holds
# and one more frame has been produced; milliseconds from the ask.
SHOW = """async ([path, ready]) => {
  const started = performance.now();
  window.fastpad.go(path);
  await new Promise((resolve) => {
    const check = () => (document.querySelector(ready) ? resolve() : requestAnimationFrame(check));
    check();
  });
  await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  return performance.now() - started;
}"""


def define_types(client: httpx.Client) -> tuple[str, str]:
    suffix = secrets.token_hex(2)
    ticket, card = f"Ticket{suffix}", f"Card{suffix}"
    properties = [
        {"name": "status", "kind": "select", "options": STATUSES}, {"name": "points", "kind": "number"},
        {"name": "due", "kind": "date"}, {"name": "owner", "kind": "text"}, {"name": "url", "kind": "url"},
        {"name": "urgent", "kind": "checkbox"}, {"name": "tags", "kind": "multi_select", "options": ["a", "b", "c"]},
        {"name": "summary", "kind": "text"},
    ]
    for name in (ticket, card):
        client.post("/v1/types", json={"name": name, "properties": properties}).raise_for_status()
    return ticket, card


def create_notes(client: httpx.Client, type_name: str, count: int, rng: random.Random) -> None:
    for start in range(0, count, BATCH):
        items = []
        for i in range(start, min(count, start + BATCH)):
            items.append({"title": f"{type_name} {i:05d}: a task with an ordinary name", "markdown": "",
                          "types": [type_name], "properties": {
                              f"{type_name}.status": rng.choice(STATUSES), f"{type_name}.points": rng.randint(1, 13),
                              f"{type_name}.due": f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                              f"{type_name}.owner": rng.choice(["Ana", "Bo", "Chen", "Dee"]),
                              f"{type_name}.url": f"https://example.com/t/{i}", f"{type_name}.urgent": rng.random() < 0.2,
                              f"{type_name}.tags": rng.sample(["a", "b", "c"], rng.randint(0, 2)),
                              f"{type_name}.summary": "Something to be done, in a sentence or so."}})
        response = client.post("/v1/notes:batch", json={"items": items}, timeout=300)
        response.raise_for_status()
        if response.json()["created"] != len(items):
            raise RuntimeError(f"a batch was refused in part: {response.text[:500]}")


def show_times(page: Page, view_path: str, ready: str, samples: int) -> list[float]:
    """A blank page, then the view, `samples` times: each a click's worth of routing to a fresh
    view. (Not Home: it lists all 12,000 notes, and taking that down would be timed too.)"""
    times = []
    for _ in range(samples):
        page.evaluate(SHOW, [BLANK, BLANK_READY])
        times.append(page.evaluate(SHOW, [view_path, ready]))
    return times


def cold_loads(page: Page, base_url: str, view_path: str, ready: str, samples: int) -> list[float]:
    """The whole page loaded afresh (shell, bundle from the cache, the app's start) until ready."""
    times = []
    for _ in range(samples):
        page.goto(f"{base_url}{view_path}")
        page.wait_for_selector(ready)
        times.append(page.evaluate("() => performance.now()"))  # from the navigation's start
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=15)
    parser.add_argument("--cold", type=int, default=5)
    args = parser.parse_args()

    console = Console()
    rng = random.Random(16)
    with tempfile.TemporaryDirectory(prefix="fastpad-bench-web-views-") as tmp:
        server = start_server(Path(tmp), "sqlite")
        playwright = sync_playwright().start()
        try:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            token = server.mint("notes:read,notes:write,schema:write", "--person", OWNER_EMAIL,
                                "--label", "bench: web views")["token"]
            with httpx.Client(base_url=server.base_url, headers={"authorization": f"Bearer {token}"},
                              timeout=60) as client:
                ticket, card = define_types(client)
                create_notes(client, ticket, TABLE_NOTES, rng)
                create_notes(client, card, BOARD_CARDS, rng)
                table = client.post("/v1/collections", json={"name": "All tickets", "layout": "table", "query": {
                    "type": ticket, "sort": [{"property": f"{ticket}.due", "direction": "desc"}]}}).json()
                board = client.post("/v1/collections", json={"name": "Card board", "layout": "board", "query": {
                    "type": card, "group_by": f"{card}.status"}}).json()
            quiet = {"after_creating_notes_s": wait_until_quiet(server.process.pid)}

            context = new_context(browser, server.base_url, server.owner_email, server.owner_password)
            page = console.attach(context.new_page())
            page.goto(f"{server.base_url}/")
            page.wait_for_selector(".page .list")
            table_ready = ".collection[data-layout='table'][data-rows] tbody tr"
            board_ready = f".collection[data-layout='board'][data-rows='{BOARD_CARDS}']"
            show_times(page, f"/collections/{table['id']}", table_ready, 2)  # the bundle's code warmed, as in use
            quiet["before_timing_s"] = wait_until_quiet(server.process.pid)
            table_warm = show_times(page, f"/collections/{table['id']}", table_ready, args.samples)
            rows_shown = page.locator(".collection-table tbody tr").count()
            columns = page.locator(".collection-table thead th").count()
            board_warm = show_times(page, f"/collections/{board['id']}", board_ready, args.samples)
            cards_shown = page.locator(".board-card").count()
            table_cold = cold_loads(page, server.base_url, f"/collections/{table['id']}", table_ready, args.cold)
            version = browser.version
            context.close()
            browser.close()
        finally:
            playwright.stop()
            stop(server.process)

    table_figures = percentiles(table_warm)
    board_figures = percentiles(board_warm)
    figures = {
        "chromium": version,
        "table_10000_notes_first_page": {**table_figures, "rows_on_screen": rows_shown, "columns": columns},
        "table_10000_notes_cold_page_load": percentiles(table_cold),
        "board_2000_cards": {**board_figures, "cards_on_screen": cards_shown},
        "waits_for_an_idle_server": quiet,
        "judged": {
            "table_10000_first_page_p50_ms": judged(table_figures["p50_ms"], TARGETS["table_10000_first_page_p50_ms"]),
            "board_2000_cards_p50_ms": judged(board_figures["p50_ms"], TARGETS["board_2000_cards_p50_ms"]),
        },
    }
    speed = report("web_views", figures, TARGETS, console)
    print(f"cold page load of the table p50 {figures['table_10000_notes_cold_page_load']['p50_ms']:.1f} ms; "
          f"machine speed {speed} ms")


if __name__ == "__main__":
    main()
