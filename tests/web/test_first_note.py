"""The first note, before an account (spec, Getting started › Your first note; issue 30, item 6).

Signed out, ``/`` is the editor on a note that lives only in this browser (IndexedDB); a reload
loses nothing; signing in adopts it into the workspace once, with its block ids, as the person's
own typing; a second sign-in from another tab adopts nothing more. A browser whose site data is
blocked (a real Chromium profile with cookies and site data refused) is told so before typing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from tests.api.conftest import Server
from tests.web.conftest import ACTION_TIMEOUT_MS, CHROMIUM, CHROMIUM_ARGS, VIEWPORT, screenshot, sign_in, signin_url
from tests.web.helpers import screen_ids

LINES = ["Groceries for the week", "eggs", "coffee", "Call the plumber about the leak", "Plan: start on Monday"]
TITLE = "Written before an account"


def wait_kept(page: Any) -> None:
    """Until the top bar says the note is in this browser's storage, with no write outstanding."""
    page.wait_for_function("() => document.querySelector('.sync-status')?.dataset.state === 'saved'"
                           " && window.fastpad?.notes?.writing === false")


def local_texts(page: Any) -> list[str]:
    return page.evaluate("() => window.fastpad.model.blocks().map((block) => block.text)")


def workspace_copies(api: httpx.Client, title: str) -> list[dict]:
    items, cursor = [], None
    while True:
        page = api.get("/v1/notes", params={"limit": 200, **({"cursor": cursor} if cursor else {})}).json()
        items += page["items"]
        if not (cursor := page["next_cursor"]):
            return [note for note in items if note["title"] == title]


def test_signed_out_a_note_kept_in_this_browser_survives_a_reload_and_is_adopted_once(
        context: Any, web_server: Server, api: httpx.Client) -> None:
    page = context.new_page()
    page.goto(f"{web_server.base_url}/")
    assert page.url == f"{web_server.base_url}/", "signed out, / is the first note, not the sign-in page"
    page.wait_for_selector(".editor .block .text")
    notice = page.locator(".local-notice")
    assert "lives only in this browser until you sign in" in notice.inner_text()
    assert notice.get_by_role("link", name="Sign in to keep it").get_attribute("href") == "/signin?next=/"
    assert page.locator(".local-warning").count() == 0, "this browser keeps storage: no warning"

    page.locator(".note-title").click()
    page.keyboard.type(TITLE)
    page.keyboard.press("Enter")  # to the first block
    for index, line in enumerate(LINES):
        if index:
            page.keyboard.press("Enter")
        page.keyboard.type(line)
    wait_kept(page)
    ids = screen_ids(page)
    assert len(ids) == 5 and local_texts(page) == LINES
    screenshot(page, "first-note-signed-out")

    # A second signed-out tab shows the same note, and sees what the first one types.
    other = context.new_page()
    other.goto(f"{web_server.base_url}/")
    other.wait_for_selector(".editor .block .text")
    assert screen_ids(other) == ids
    page.locator(".editor .block .text").nth(4).click()
    page.keyboard.press("End")
    page.keyboard.type("!")
    wait_kept(page)
    other.wait_for_function("() => window.fastpad.model.blocks().at(-1).text.endsWith('!')")
    lines = [*LINES[:4], LINES[4] + "!"]

    page.reload()
    page.wait_for_selector(".editor .block .text")
    assert screen_ids(page) == ids and local_texts(page) == lines
    assert page.locator(".note-title").inner_text() == TITLE
    assert workspace_copies(api, TITLE) == [], "nothing was sent anywhere before the sign-in"

    page.locator(".topbar").get_by_role("link", name="Sign in to keep it").click()
    page.wait_for_url("**/signin?next=/")
    sign_in(page, web_server)
    page.wait_for_url("**/notes/*")
    note_id = page.url.rsplit("/", 1)[1]
    page.wait_for_selector(".editor .block .text")
    page.locator(".toast", has_text="in your workspace now").wait_for()
    # The other tab learns that its note left this browser, and reloads into the signed-in app.
    other.wait_for_selector(".sidebar")
    screenshot(page, "first-note-adopted")

    copies = workspace_copies(api, TITLE)
    assert [note["id"] for note in copies] == [note_id]
    blocks = api.get(f"/v1/notes/{note_id}").json()["blocks"]
    assert [b["id"] for b in blocks] == ids and [b["text"] for b in blocks] == lines
    assert {b["origin"] for b in blocks} == {"human_typed"}
    assert api.get(f"/v1/notes/{note_id}/blocks/{ids[0]}").json()["author"]["kind"] == "person"

    # Signing in again from another tab adopts nothing more: the note left this browser — and had
    # its copy here survived (put back from the workspace's own snapshot, as a removal lost to a
    # crash would leave it), the second adoption would meet the note's id and create nothing.
    other.evaluate("""async (id) => {
        const bytes = new Uint8Array(await (await fetch(`/v1/notes/${id}/snapshot`)).arrayBuffer());
        const notes = await window.fastpad.localNotes;
        await notes.create(id);
        await notes.append(id, bytes, "Written before an account");
    }""", note_id)
    third = context.new_page()
    third.goto(f"{web_server.base_url}/")
    third.wait_for_selector(".sidebar")
    third.get_by_role("button", name="Sign out").click()
    third.wait_for_url("**/signin*")
    sign_in(third, web_server)
    third.wait_for_selector(".sidebar")
    third.wait_for_function("() => (window.fastpad?.routing ?? 0) >= 1")  # adoption runs before the first route
    assert third.url == f"{web_server.base_url}/"
    assert third.evaluate("async () => (await window.fastpad.localNotes).list()") == []
    assert [note["id"] for note in workspace_copies(api, TITLE)] == [note_id]
    assert [b["id"] for b in api.get(f"/v1/notes/{note_id}").json()["blocks"]] == ids


def test_a_browser_that_keeps_no_site_data_says_so_before_anything_is_typed(
        browser: Any, web_server: Server, tmp_path: Path) -> None:
    # A real Chromium profile whose content settings refuse cookies and site data to every site:
    # what a person gets who blocked them. IndexedDB then refuses to open.
    profile = tmp_path / "profile"
    (profile / "Default").mkdir(parents=True)
    (profile / "Default" / "Preferences").write_text(
        json.dumps({"profile": {"default_content_setting_values": {"cookies": 2}}}))
    context = browser.browser_type.launch_persistent_context(
        str(profile), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS, viewport=VIEWPORT)
    try:
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        page = context.new_page()
        page.goto(f"{web_server.base_url}/")
        warning = page.locator(".local-warning")
        warning.wait_for()
        assert "keeps no local storage" in warning.inner_text() and "lost when you leave, reload or close" in warning.inner_text()
        assert page.locator(".local-notice").count() == 0, "it does not claim the browser keeps the note"
        assert page.locator(".sync-status").get_attribute("data-state") == "volatile"
        assert page.evaluate("() => window.fastpad.model.blocks().every((block) => !block.text)"), "shown before typing"
        # The warning sits above the editor, where it is read before the first keystroke.
        assert warning.bounding_box()["y"] < page.locator(".editor").bounding_box()["y"]
        page.locator(".editor .block .text").first.click()
        page.keyboard.type("Still written, in this tab only")
        page.wait_for_function("() => window.fastpad.model.blocks()[0].text === 'Still written, in this tab only'")
        assert page.locator(".sync-status .label").inner_text() == "Not kept"
        screenshot(page, "first-note-no-storage")
    finally:
        context.close()
