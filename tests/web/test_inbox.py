"""The review inbox, clicked in a real browser: an agent's proposals (an edit, and a new note)
raise the Inbox count and list who proposed what; accepting one from its review page lands it,
and the inbox drops it without a reload."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.api.conftest import Server
SESSION = "x-fastpad-session"  # the agent-session header
from tests.web.conftest import screenshot
from tests.web.helpers import create_note


def inbox_count(page: Any) -> int:
    badge = page.locator("a[href='/inbox'] .count")
    return int(badge.text_content()) if badge.count() else 0


def test_proposals_wait_in_the_inbox_and_leave_it_once_accepted(device: Any, web_server: Server,
                                                                 api: httpx.Client) -> None:
    note_id = create_note(api, "Packing list.\n", title="Trip to Porto")
    page = device().new_page()
    page.goto(f"{web_server.base_url}/inbox")
    page.wait_for_selector(".proposals")
    before = inbox_count(page)

    minted = web_server.mint("notes:read,notes:propose", "--label", "Travel agent")
    with web_server.client(minted["token"]) as agent:
        session = agent.post("/v1/agent-sessions").json()["session"]
        read = agent.get(f"/v1/notes/{note_id}/handles", headers={SESSION: session}).json()
        edit = agent.post(f"/v1/notes/{note_id}/proposals", headers={SESSION: session}, json={
            "ops": [{"op": "insert_after", "handle": read["blocks"][0]["handle"], "text": "Passport and charger."}],
            "expected_frontier": read["frontier"], "idempotency_key": str(uuid.uuid4())}).json()
        created = agent.post("/v1/notes", json={"title": "Porto restaurants", "markdown": "Try the francesinha.\n"})
        assert created.status_code == 202, created.text

    page.wait_for_function(f"() => document.querySelectorAll('.proposal[data-turn]').length >= 2"
                           f" && Number(document.querySelector(\"a[href='/inbox'] .count\")?.textContent) >= {before + 2}")
    row = page.locator(f".proposal[data-turn='{edit['id']}']")
    assert "Trip to Porto" in row.text_content() and "Travel agent" in row.text_content()
    assert "1 block" in row.text_content()
    assert "New note: Porto restaurants" in page.locator(f".proposal[data-turn='{created.json()['id']}']").text_content()
    screenshot(page, "inbox")

    # The note itself says a proposal waits, where the person reads it.
    note_page = page.context.new_page()
    note_page.goto(f"{web_server.base_url}/notes/{note_id}")
    waiting = note_page.locator(f".proposal-here[data-turn='{edit['id']}']")
    waiting.wait_for()
    assert "Travel agent proposes 1 change to this note" in waiting.text_content()
    note_page.close()

    row.locator("a").click()
    page.wait_for_url(f"**/review/{edit['id']}")
    page.get_by_role("button", name="Accept all").click()
    page.wait_for_load_state()
    assert [b["text"] for b in api.get(f"/v1/notes/{note_id}").json()["blocks"]] == [
        "Packing list.", "Passport and charger."]
    assert api.get(f"/v1/turns/{edit['id']}").json()["status"] == "accepted"
    page.goto(f"{web_server.base_url}/inbox")
    page.wait_for_selector(".proposals")
    # The list has loaded once the other proposal shows; the accepted one is then gone.
    page.locator(f".proposal[data-turn='{created.json()['id']}']").wait_for()
    assert page.locator(f".proposal[data-turn='{edit['id']}']").count() == 0
