"""A note's history in a real browser: the owner types, a second person edits over HTTP as their
editor would; the History page lists both sessions by name, shows the note as it was with each
block marked against now, restores one block, then the whole version — each a new change by
the owner at the top of the timeline."""

from __future__ import annotations

import httpx
from playwright.sync_api import expect

from tests.api.conftest import Server
from tests.api.helpers import new_person
from tests.api.test_note_history import save
from tests.web.conftest import screenshot
from tests.web.helpers import click_end_of_block, open_note, server_blocks, server_markdown, wait_saved


def test_history_lists_sessions_shows_a_version_and_restores_a_block_and_a_version(
        device, web_server: Server, api: httpx.Client) -> None:
    created = api.post("/v1/notes", json={"title": "Trip plan", "blocks": [
        {"text": "Fly out Monday"}, {"text": "Museum on Tuesday"}, {"text": "Fly back Wednesday"}]})
    assert created.status_code == 201, created.text
    note = created.json()["id"]
    monday, tuesday, wednesday = (b["id"] for b in created.json()["blocks"])

    page = open_note(device(), web_server, note)
    click_end_of_block(page, 0)
    page.keyboard.type(" at nine")
    wait_saved(page)
    typed = api.get(f"/v1/notes/{note}/history").json()["sessions"][0]["frontier"]
    before_the_other = server_markdown(api, note)

    email, password = new_person(web_server)
    with web_server.client() as other:
        answer = other.post("/v1/session", json={"email": email, "password": password})
        other.headers["x-csrf-token"] = answer.json()["csrf_token"]
        save(other, note, lambda doc: doc.replace_text(tuesday, "Gallery on Tuesday"))
        save(other, note, lambda doc: doc.delete(wednesday))

    page.get_by_role("link", name="History").click()
    page.wait_for_url(f"**/notes/{note}/history")
    sessions = page.locator(".history-session")
    expect(sessions).to_have_count(2)
    expect(sessions.nth(0)).to_contain_text(email)
    expect(sessions.nth(0)).to_contain_text("2 changes to 2 blocks")
    expect(sessions.nth(1)).to_contain_text("Created the note")  # the owner's create and typing: one session
    # The newest version is the note as it is now: nothing to restore.
    expect(page.locator(".history-version")).to_contain_text("This is the note as it is now.")
    screenshot(page, "history-sessions")

    sessions.nth(1).locator("button").click()
    version = page.locator(".history-version")
    expect(version).to_contain_text("2 blocks differ from now")
    expect(version.locator(f'[data-id="{tuesday}"]')).to_contain_text("Changed since")
    expect(version.locator(f'[data-id="{tuesday}"]')).to_contain_text("Now: Gallery on Tuesday")
    expect(version.locator(f'[data-id="{wednesday}"]')).to_contain_text("Deleted since")
    expect(version.locator(f'[data-id="{monday}"]')).to_have_attribute("data-status", "same")
    screenshot(page, "history-version")

    # Restore one block: the deleted one comes back under its id; the rest stays as it is.
    version.locator(f'[data-id="{wednesday}"]').get_by_role("button", name="Restore this block").click()
    page.wait_for_url(f"**/notes/{note}")
    assert [(b["id"], b["text"]) for b in server_blocks(api, note)] == [
        (monday, "Fly out Monday at nine"), (tuesday, "Gallery on Tuesday"), (wednesday, "Fly back Wednesday")]
    expect(page.locator(f'.editor .block[data-id="{wednesday}"] .text')).to_have_text("Fly back Wednesday")

    # Restore the whole version: the note reads as it did after the owner's typing.
    page.get_by_role("link", name="History").click()
    expect(sessions).to_have_count(3)
    expect(sessions.nth(0)).to_contain_text("Restored an earlier version")
    sessions.locator(f'button[data-frontier="{typed}"]').click()
    page.get_by_role("button", name="Restore this version").click()
    page.wait_for_url(f"**/notes/{note}")
    assert server_markdown(api, note) == before_the_other
    expect(page.locator(f'.editor .block[data-id="{tuesday}"] .text')).to_have_text("Museum on Tuesday")
    page.get_by_role("link", name="History").click()
    expect(sessions).to_have_count(4)
    expect(sessions.nth(0)).to_contain_text("Restored an earlier version")
    expect(sessions.nth(1)).to_contain_text("Restored an earlier version")
    screenshot(page, "history-after-restore")
