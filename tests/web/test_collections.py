"""Collections in a real browser: a view created from the page, its six layouts over the saved
query, a board card dragged to another column (the property changes on the server), a calendar
and a timeline that read only their window, and a view embedded in a note that is the same
object as the one opened from the sidebar. The server is the judge: every gesture is checked
through the HTTP API, and each layout is written as a screenshot."""

from __future__ import annotations

import re
import secrets
import struct
import zlib
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.api.conftest import Server
from tests.web.conftest import screenshot
from tests.web.helpers import create_note

PHONE = {"viewport": {"width": 390, "height": 844}, "color_scheme": "dark", "is_mobile": True, "has_touch": True}


@pytest.fixture(scope="module")
def schemer(web_server: Server) -> Iterator[httpx.Client]:
    """The owner's CLI credential with schema:write, to define the types the views are over."""
    token = web_server.mint("notes:read,notes:write,schema:write", "--person", web_server.owner_email,
                            "--label", "tests: collections")["token"]
    with web_server.client(token) as client:
        yield client


def define(schemer: httpx.Client, base: str, properties: list[dict]) -> str:
    """A type of this test's own (the server lives for the whole session)."""
    name = f"{base}{secrets.token_hex(3)}"
    response = schemer.post("/v1/types", json={"name": name, "properties": properties})
    assert response.status_code == 201, response.text
    return name


def typed_note(schemer: httpx.Client, type_name: str, title: str, properties: dict, markdown: str = "") -> str:
    note_id = create_note(schemer, markdown, title=title)
    response = schemer.patch(f"/v1/notes/{note_id}/types", json={
        "add": [type_name], "properties": {f"{type_name}.{k}": v for k, v in properties.items()}})
    assert response.status_code == 200, response.text
    return note_id


def collection(schemer: httpx.Client, name: str, layout: str, query: dict, options: dict | None = None) -> dict:
    response = schemer.post("/v1/collections", json={"name": name, "layout": layout, "query": query,
                                                     "layout_options": options})
    assert response.status_code == 201, response.text
    return response.json()


def shown_notes(page: Any, selector: str) -> set[str]:
    return set(page.eval_on_selector_all(selector, "els => els.map(e => e.dataset.note)"))


def rows_response(page: Any, collection_id: str) -> Any:
    return page.expect_response(lambda r: f"/v1/collections/{collection_id}/rows" in r.url and r.status == 200)


def wait_layout(page: Any, layout: str, scope: str = "") -> None:
    page.wait_for_selector(f"{scope} .collection[data-layout='{layout}'][data-rows]")


def test_a_view_made_on_the_page_shows_six_layouts_and_a_board_drag_writes_the_property(
        device: Any, web_server: Server, schemer: httpx.Client) -> None:
    task = define(schemer, "Task", [
        {"name": "status", "kind": "select", "options": ["todo", "doing", "done"]},
        {"name": "points", "kind": "number"}, {"name": "due", "kind": "date"}, {"name": "end", "kind": "date"}])
    month = datetime.now(timezone.utc).strftime("%Y-%m")  # the calendar opens on this month
    cover = schemer.post("/v1/attachments", content=png(64, 40, (210, 140, 90)), headers={"content-type": "image/png"},
                         params={"name": "sketch.png"})
    assert cover.status_code == 201, cover.text
    notes = {
        "Write the brief": typed_note(schemer, task, "Write the brief", {"status": "todo", "points": 3, "due": f"{month}-03",
                                                                        "end": f"{month}-09"},
                                      f"![sketch](/v1/attachments/{cover.json()['id']})\n\nThe first draft.\n"),
        "Review the plan": typed_note(schemer, task, "Review the plan", {"status": "doing", "points": 5, "due": f"{month}-12"}),
        "Ship it": typed_note(schemer, task, "Ship it", {"status": "done", "points": 1, "due": f"{month}-20",
                                                         "end": f"{month}-25"}),
    }
    page = device().new_page()
    page.goto(f"{web_server.base_url}/")
    page.get_by_role("link", name="New view…").click()
    page.get_by_label("Name").fill(f"Sprint {task}")
    page.get_by_label("Type").select_option(task)
    page.get_by_label("Layout").select_option("board")
    page.get_by_role("button", name="Create view").click()
    page.wait_for_url(re.compile(r"/collections/[0-9A-Z]{26}$"))
    view_id = page.url.rsplit("/", 1)[1]
    wait_layout(page, "board")
    assert schemer.get(f"/v1/collections/{view_id}").json()["query"]["group_by"] == f"{task}.status"
    assert page.locator(f".sidebar a[href='/collections/{view_id}']").text_content() == f"Sprint {task}"
    todo = page.locator(".board-column[data-group='todo']")
    assert todo.locator(".board-card").count() == 1
    screenshot(page, "collection-board")

    # Dragging a card to another column writes the property through the typed-properties API.
    card = page.locator(f".board-card[data-note='{notes['Write the brief']}']")
    with page.expect_response(lambda r: f"/v1/notes/{notes['Write the brief']}/types" in r.url) as moved:
        card.drag_to(page.locator(".board-column[data-group='done'] .cards"))
    assert moved.value.status == 200
    assert schemer.get(f"/v1/notes/{notes['Write the brief']}").json()["properties"][f"{task}.status"] == "done"
    assert page.locator(".board-column[data-group='done'] .board-card").count() == 2
    assert page.locator(".board-column[data-group='done'] h4 .count").text_content() == "2"

    # Every other layout, from the page's own control, over the same saved query.
    for layout, item in (("table", "tbody tr"), ("list", ".collection-list li"), ("gallery", ".gallery-card"),
                         ("calendar", ".event"), ("timeline", ".lanes .lane")):
        page.get_by_label("Layout").select_option(layout)
        wait_layout(page, layout)
        assert shown_notes(page, f".collection-body {item}") == set(notes.values()), layout
        assert schemer.get(f"/v1/collections/{view_id}").json()["layout"] == layout
        if layout == "gallery":
            page.wait_for_selector(f".gallery-card[data-note='{notes['Write the brief']}'] .cover img")
            page.wait_for_function("() => [...document.querySelectorAll('.cover img')].every(i => i.complete && i.naturalWidth)")
        screenshot(page, f"collection-{layout}")
    assert schemer.get(f"/v1/collections/{view_id}").json()["layout_options"] == {"start": f"{task}.due", "end": f"{task}.end"}

    # The table sorts by a column (the saved view's sort), and a filter added on the page narrows it.
    page.get_by_label("Layout").select_option("table")
    wait_layout(page, "table")
    with rows_response(page, view_id):
        page.get_by_role("button", name="points").click()
    page.wait_for_selector("th[aria-sort='ascending']")
    assert [t.strip() for t in page.locator("tbody tr td:first-child").all_text_contents()] == [
        "Ship it", "Write the brief", "Review the plan"]
    page.locator(".collection-filters summary").click()
    page.get_by_label("Filter property").select_option(f"{task}.points")
    page.get_by_label("Filter condition").select_option("gt")
    page.get_by_label("Filter value").fill("2")
    with rows_response(page, view_id):
        page.get_by_role("button", name="Add filter").click()
    page.wait_for_function("() => document.querySelectorAll('.collection-body tbody tr').length === 2")
    saved = schemer.get(f"/v1/collections/{view_id}").json()["query"]
    assert saved["filters"] == [{"property": f"{task}.points", "op": "gt", "value": 2}]
    assert saved["sort"] == [{"property": f"{task}.points", "direction": "asc"}]
    screenshot(page, "collection-table-filtered")


def test_a_calendar_and_a_timeline_read_and_show_only_their_window(device: Any, web_server: Server,
                                                                   schemer: httpx.Client) -> None:
    event = define(schemer, "Event", [{"name": "start", "kind": "date"}, {"name": "end", "kind": "date"}])
    feb = typed_note(schemer, event, "February offsite", {"start": "2025-02-10", "end": "2025-02-12"})
    into = typed_note(schemer, event, "Hiring week", {"start": "2025-02-26", "end": "2025-03-04"})
    standup = typed_note(schemer, event, "Planning day", {"start": "2025-03-14"})
    launch = typed_note(schemer, event, "Launch", {"start": "2025-03-28", "end": "2025-04-02"})
    april = typed_note(schemer, event, "Conference", {"start": "2025-04-15", "end": "2025-04-17"})
    june = typed_note(schemer, event, "Summer break", {"start": "2025-06-02", "end": "2025-06-20"})
    query = {"type": event, "sort": [{"property": f"{event}.start"}]}
    options = {"start": f"{event}.start", "end": f"{event}.end"}
    calendar = collection(schemer, f"Calendar {event}", "calendar", query, options)
    timeline = collection(schemer, f"Timeline {event}", "timeline", query, options)

    page = device().new_page()
    with rows_response(page, calendar["id"]) as answered:
        page.goto(f"{web_server.base_url}/collections/{calendar['id']}?month=2025-03")
    # The server was asked for March alone and sent March alone.
    asked = parse_qs(urlsplit(answered.value.url).query)
    assert (asked["window_start"], asked["window_end"]) == (["2025-03-01"], ["2025-04-01"])
    assert {row["id"] for row in answered.value.json()["items"]} == {into, standup, launch}
    wait_layout(page, "calendar")
    assert shown_notes(page, ".month-grid .event") == {into, standup, launch}
    assert page.locator(f".day[data-date='2025-03-14'] .event[data-note='{standup}']").count() == 1
    assert page.locator(f".day[data-date='2025-03-01'] .event[data-note='{into}']").count() == 1  # began in February
    assert page.locator(".window-label").text_content() == "March 2025"
    screenshot(page, "collection-calendar-window")
    with rows_response(page, calendar["id"]) as answered:
        page.get_by_role("button", name="Later").click()
    assert {row["id"] for row in answered.value.json()["items"]} == {launch, april}
    page.wait_for_function("() => document.querySelector('.window-label').textContent === 'April 2025'")
    assert shown_notes(page, ".month-grid .event") == {launch, april}

    with rows_response(page, timeline["id"]) as answered:
        page.goto(f"{web_server.base_url}/collections/{timeline['id']}?month=2025-03")
    asked = parse_qs(urlsplit(answered.value.url).query)
    assert (asked["window_start"], asked["window_end"]) == (["2025-03-01"], ["2025-06-01"])
    assert {row["id"] for row in answered.value.json()["items"]} == {into, standup, launch, april}
    wait_layout(page, "timeline")
    assert shown_notes(page, ".lanes .lane") == {into, standup, launch, april}
    assert {feb, june}.isdisjoint(shown_notes(page, ".lane"))
    # A span that began before the window is cut at its left edge and says so.
    assert "before" in page.locator(f".lane[data-note='{into}'] .bar").get_attribute("class")
    bars = {note: page.locator(f".lane[data-note='{note}'] .bar").bounding_box() for note in (standup, launch, april)}
    assert bars[standup]["x"] < bars[launch]["x"] < bars[april]["x"]
    assert bars[april]["width"] > bars[standup]["width"]
    screenshot(page, "collection-timeline-window")


def test_a_view_embedded_in_a_note_is_the_view_the_sidebar_opens(device: Any, web_server: Server,
                                                                  schemer: httpx.Client) -> None:
    book = define(schemer, "Book", [{"name": "status", "kind": "select", "options": ["to read", "reading", "read"]},
                                    {"name": "pages", "kind": "number"}])
    books = {typed_note(schemer, book, title, {"status": status, "pages": pages})
             for title, status, pages in (("Middlemarch", "reading", 880), ("Piranesi", "read", 272),
                                          ("The Waves", "to read", 230))}
    view = collection(schemer, f"Shelf {book}", "table", {"type": book})
    host = create_note(schemer, f"# Reading\n\nWhat is on the shelf:\n\n{view['embed_markdown']}\n\nMore later.\n",
                       title=f"Reading {book}")
    stored = schemer.get(f"/v1/notes/{host}").json()["blocks"]

    context = device()
    note = context.new_page()
    note.goto(f"{web_server.base_url}/notes/{host}")
    embed = ".block-embed"
    wait_layout(note, "table", embed)
    assert shown_notes(note, f"{embed} tbody tr") == books
    screenshot(note, "collection-embedded")

    # Edited in the note: a layout and a filter, from the embed's own controls.
    note.locator(embed).get_by_label("Layout").select_option("list")
    wait_layout(note, "list", embed)
    note.locator(f"{embed} .collection-filters summary").click()
    note.locator(embed).get_by_label("Filter property").select_option(f"{book}.pages")
    note.locator(embed).get_by_label("Filter condition").select_option("lt")
    note.locator(embed).get_by_label("Filter value").fill("500")
    with rows_response(note, view["id"]):
        note.locator(embed).get_by_role("button", name="Add filter").click()
    note.wait_for_function(f"() => document.querySelectorAll('{embed} .collection-list li').length === 2")
    # The note still holds the view's id, never its rows.
    assert schemer.get(f"/v1/notes/{host}").json()["blocks"] == stored

    # The sidebar opens the same object, changed.
    sidebar = context.new_page()
    sidebar.goto(f"{web_server.base_url}/")
    sidebar.locator(f".sidebar a[href='/collections/{view['id']}']").click()
    wait_layout(sidebar, "list")
    assert len(shown_notes(sidebar, ".collection-list li")) == 2
    assert "pages under 500" in sidebar.locator(".collection-filters").text_content()

    # And an edit there shows in the open note, without a reload.
    sidebar.get_by_label("Layout").select_option("board")
    wait_layout(sidebar, "board")
    wait_layout(note, "board", embed)
    assert shown_notes(note, f"{embed} .board-card") == shown_notes(sidebar, ".board-card")
    saved = schemer.get(f"/v1/collections/{view['id']}").json()
    assert (saved["layout"], saved["query"]["group_by"], saved["query"]["filters"]) == (
        "board", f"{book}.status", [{"property": f"{book}.pages", "op": "lt", "value": 500}])

    # Copied from its page and pasted into another note, it is the same view there too.
    sidebar.get_by_role("button", name="Copy embed").click()
    other = create_note(schemer, "", title=f"Another {book}")
    pasted = context.new_page()
    pasted.goto(f"{web_server.base_url}/notes/{other}")
    pasted.locator(".editor .block .text").first.click()
    pasted.keyboard.press("Control+V")
    wait_layout(pasted, "board", embed)
    pasted.wait_for_function("() => window.fastpad.page.sync.hasUnsent === false"
                             " && document.querySelector('.sync-status').dataset.state === 'saved'")
    assert [(b["type"], b["attrs"].get("language"), b["text"]) for b in schemer.get(f"/v1/notes/{other}").json()[
        "blocks"]] == [("code", "fastpad-collection", view["id"])]


def test_on_a_phone_in_dark_mode_a_board_and_a_calendar_fit(device: Any, web_server: Server,
                                                            schemer: httpx.Client) -> None:
    chore = define(schemer, "Chore", [{"name": "state", "kind": "select", "options": ["open", "doing", "closed"]},
                                      {"name": "on", "kind": "date"}])
    first = typed_note(schemer, chore, "Water the plants", {"state": "open", "on": "2025-03-04"})
    typed_note(schemer, chore, "Fix the bike", {"state": "doing", "on": "2025-03-11"})
    board = collection(schemer, f"Chores {chore}", "board", {"type": chore, "group_by": f"{chore}.state"})
    page = device(**PHONE).new_page()
    page.goto(f"{web_server.base_url}/collections/{board['id']}")
    wait_layout(page, "board")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    # No dragging on a touch screen: the card's own picker moves it.
    with page.expect_response(lambda r: f"/v1/notes/{first}/types" in r.url):
        page.locator(f".board-card[data-note='{first}']").get_by_label("Move to").select_option(label="closed")
    assert schemer.get(f"/v1/notes/{first}").json()["properties"][f"{chore}.state"] == "closed"
    screenshot(page, "collection-board-phone-dark")
    page.get_by_label("Layout").select_option("calendar")
    page.goto(f"{web_server.base_url}/collections/{board['id']}?month=2025-03")
    wait_layout(page, "calendar")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    assert len(shown_notes(page, ".event")) == 2
    screenshot(page, "collection-calendar-phone-dark")


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A one-colour PNG (the gallery's cover, uploaded as an attachment)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
