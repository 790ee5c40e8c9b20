"""People in the app, in two Chromium contexts against a real ``fp serve``: the owner types ``@``
in a note and is offered the new member beside notes, picks them, and the mention is saved as
``[@Name](/people/{id})``; the member's Inbox shows who mentioned them where, unread; opening it
lands on the block and marks it read, and the note names who typed the block the caret is in
(the owner's, then her own reply, seen from both sides). A ``person`` property offers the workspace's members by
name and email and stores the chosen person's id, which a board grouped by it shows by name."""

from __future__ import annotations

import re

import uuid
from typing import Any

from playwright.sync_api import expect

from tests.api.conftest import Server
from tests.web.conftest import ACTION_TIMEOUT_MS, VIEWPORT, screenshot
from tests.web.helpers import click_end_of_block, create_note, join_through, open_note, server_markdown, wait_saved

MEMBER_NAME = "Mona Mentioned"
MEMBER_PASSWORD = "mona's long enough password"


def invite_link(page: Any, server: Server, email: str) -> str:
    """An invitation from the owner's signed-in page, as Settings → Members makes one."""
    csrf = page.evaluate("window.fastpad.config.csrfToken")
    answer = page.request.post(f"{server.base_url}/v1/invitations", headers={"x-csrf-token": csrf},
                               data={"email": email, "role": "member", "idempotencyKey": str(uuid.uuid4())})
    assert answer.status == 201, answer.text()
    return answer.json()["link"]


def test_a_mention_reaches_the_member_s_inbox_and_opens_the_block_and_a_person_property_offers_members(
        device: Any, browser: Any, web_server: Server, api: Any) -> None:
    note_id = create_note(api, "Plan for the launch.", title="Launch plan")
    owner = device()
    home = owner.new_page()
    home.goto(f"{web_server.base_url}/")
    home.wait_for_function("() => window.fastpad?.config")
    email = f"mona-{uuid.uuid4().hex[:6]}@example.com"
    link = invite_link(home, web_server, email)

    joined = browser.new_context(viewport=VIEWPORT)
    joined.set_default_timeout(ACTION_TIMEOUT_MS)
    try:
        member = join_through(joined, link, MEMBER_NAME, MEMBER_PASSWORD)
        member.goto(f"{web_server.base_url}/inbox")
        member.wait_for_function("() => window.fastpad?.config")
        member_id = member.evaluate("window.fastpad.config.personId")
        expect(member.locator(".mentions")).to_contain_text("Nobody has mentioned you yet.")

        # The owner types @ and the first letters of her name: she is offered, with her email,
        # beside the notes; Enter picks her.
        page = open_note(owner, web_server, note_id)
        click_end_of_block(page, 0)
        page.keyboard.press("Enter")
        page.keyboard.type("Over to @Mon")
        offered = page.locator(".popup-item[data-kind='person']")
        expect(offered).to_have_count(1)
        expect(offered).to_contain_text(f"@{MEMBER_NAME}{email}")
        screenshot(page, "mention-offered")
        page.keyboard.press("Enter")
        page.keyboard.type(" for the numbers")
        wait_saved(page)
        mention = f"[@{MEMBER_NAME}](/people/{member_id})"
        assert f"Over to {mention} for the numbers" in server_markdown(api, note_id)
        block_id = api.get(f"/v1/notes/{note_id}").json()["blocks"][1]["id"]

        # Her open Inbox shows it without a reload (the change feed says a note was written), unread,
        # with who and where; opening it lands on the block, read.
        entry = member.locator(".mentions li[data-mention]")
        expect(entry).to_have_count(1)
        expect(entry).to_have_class("note-row mention unread")
        expect(entry.locator(".title")).to_have_text(f"{web_server.owner_email} mentioned you in Launch plan")
        expect(entry.locator(".excerpt")).to_have_text(f"Over to @{MEMBER_NAME} for the numbers")
        # The sidebar counts it with whatever else waits in the shared server's Inbox (proposals, captures).
        others = member.evaluate("() => window.fastpad.proposals.count + window.fastpad.index.ofType('Inbox').length")
        expect(member.locator(".sidebar").get_by_role("link", name="Inbox")).to_have_text(
            re.compile(rf"^Inbox\s*{others + 1}$"))
        screenshot(member, "mention-inbox")
        with member.expect_response(lambda r: "/v1/inbox/mentions/" in r.url and r.request.method == "PATCH") as read:
            entry.locator("a").click()
        assert read.value.status == 200 and read.value.json()["read"] is True
        member.wait_for_url(f"**/notes/{note_id}#{block_id}")
        member.wait_for_function(
            "id => document.activeElement?.closest('.block')?.dataset.id === id", arg=block_id)
        # The block's history names who typed it, where the caret is; her own new block names her.
        expect(member.locator(".block-author")).to_contain_text(f"Typed by {web_server.owner_email}")
        screenshot(member, "mention-opened")
        member.keyboard.press("End")
        member.keyboard.press("Enter")
        member.keyboard.type("On it.")
        wait_saved(member)
        expect(member.locator(".block-author")).to_contain_text(f"Typed by {MEMBER_NAME}")
        page.locator(".editor .block .text", has_text="On it.").click()
        expect(page.locator(".block-author")).to_contain_text(f"Typed by {MEMBER_NAME}")
        screenshot(page, "block-author")
        listed = member.request.get(f"{web_server.base_url}/v1/inbox/mentions").json()
        assert listed["unread"] == 0 and listed["items"][0]["block_id"] == block_id

        # A person property offers the members, by name and email, and stores the person's id.
        kind = f"Task{uuid.uuid4().hex[:6]}"
        schema = web_server.client(web_server.mint("notes:read,notes:write,schema:write", "--person",
                                                   web_server.owner_email, "--label", "tests: schema")["token"])
        defined = schema.post("/v1/types", json={"name": kind, "properties": [{"name": "owner", "kind": "person"}]})
        assert defined.status_code == 201, defined.text
        applied = schema.patch(f"/v1/notes/{note_id}/types", json={"add": [kind]})
        assert applied.status_code == 200, applied.text
        page.reload()
        chooser = page.locator(f"select#prop-{kind}-owner")
        expect(chooser.locator("option", has_text=f"{MEMBER_NAME} · {email}")).to_have_count(1)
        with page.expect_response(lambda r: f"/v1/notes/{note_id}/types" in r.url and r.request.method == "PATCH") as saved:
            chooser.select_option(member_id)
        assert saved.value.status == 200, saved.value.text()
        assert api.get(f"/v1/notes/{note_id}").json()["properties"][f"{kind}.owner"] == member_id
        assert f"{kind}.owner: {member_id}" in server_markdown(api, note_id)
        screenshot(page, "person-property")
        # A board grouped by the person property names its column by the person.
        board = schema.post("/v1/collections", json={"name": f"By owner {kind}", "layout": "board",
                                                     "query": {"type": kind, "group_by": f"{kind}.owner"}})
        assert board.status_code == 201, board.text
        page.goto(f"{web_server.base_url}/collections/{board.json()['id']}")
        expect(page.locator(f".board-column[data-group='{member_id}'] h4")).to_contain_text(MEMBER_NAME)
        screenshot(page, "person-board")
        # A value naming no member is refused, field by field.
        refused = schema.patch(f"/v1/notes/{note_id}/types", json={"properties": {f"{kind}.owner": "01J00000000000000000000000"}})
        assert refused.status_code == 422 and refused.json()["field_errors"][0]["code"] == "member"
        # Once she is removed the value stays, said as a former member's.
        removed = page.request.delete(f"{web_server.base_url}/v1/members/{member_id}", headers={
            "x-csrf-token": page.evaluate("window.fastpad.config.csrfToken"), "idempotency-key": str(uuid.uuid4())})
        assert removed.status == 200, removed.text()
        page.goto(f"{web_server.base_url}/notes/{note_id}")
        expect(page.locator(f"select#prop-{kind}-owner option:checked")).to_have_text("Former member")
        schema.close()
    finally:
        joined.close()
