"""A team in the app, in two Chromium contexts against a real ``fp serve``: the owner invites a
member from Settings → Members (the link shown once), the member joins through it and sees the
shared notes; both type into one note, the member's words reach the owner's open tab, and each
block's history names the person who typed it; the member renames themself and signs another of
their sessions out from Your account; the owner makes the member a viewer — after a
reload their editor is read-only and the server refuses their writes, naming the role; the owner
removes them — the member's open tab says "Session ended" at its next request, and the CLI token
minted for them answers 401."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.api.conftest import Server
from tests.web.conftest import ACTION_TIMEOUT_MS, VIEWPORT, screenshot, sign_in, signin_url
from tests.web.helpers import click_end_of_block, create_note, join_through, open_note, server_markdown, wait_saved

MEMBER_EMAIL = "teammate@example.com"
MEMBER_NAME = "Tess Teammate"
MEMBER_PASSWORD = "a teammate's long password"


def test_owner_invites_a_member_who_types_then_is_made_a_viewer_then_removed(
        device: Any, browser: Any, web_server: Server, api: Any) -> None:
    note_id = create_note(api, "The owner's opening line", title="Shared plan")
    owner = device()
    members = owner.new_page()
    members.goto(f"{web_server.base_url}/")
    members.get_by_role("link", name="Members").click()
    members.wait_for_url("**/settings/members")
    members.get_by_label("Email to invite").fill(MEMBER_EMAIL)
    members.get_by_label("Role for the invitee").select_option("member")
    members.get_by_role("button", name="Invite").click()
    link = members.get_by_label("Invitation link").input_value()
    assert link.startswith(f"{web_server.base_url}/invite/")
    expect(members.locator(".issued")).to_contain_text("sends no mail")  # no SMTP configured on this server
    expect(members.locator(".invitations li")).to_contain_text(MEMBER_EMAIL)
    screenshot(members, "team-invited")

    joined = browser.new_context(viewport=VIEWPORT)
    joined.set_default_timeout(ACTION_TIMEOUT_MS)
    try:
        join = join_through(joined, link, MEMBER_NAME, MEMBER_PASSWORD)
        join.goto(f"{web_server.base_url}/")
        expect(join.locator(".sidebar").get_by_role("link", name="Shared plan")).to_be_visible()
        member_id = join.evaluate("window.fastpad.config.personId")
        # A member sees the people but is offered none of the managing controls.
        join.get_by_role("link", name="Members").click()
        expect(join.locator(f"tr[data-person='{member_id}']")).to_contain_text("(you)")
        assert join.locator(".members select, .members button, .invite-form").count() == 0
        # Inviting someone who is already a member is refused with a sentence that says so.
        members.get_by_label("Email to invite").fill(MEMBER_EMAIL)
        members.get_by_role("button", name="Invite").click()
        expect(members.locator(".issued .error")).to_contain_text(f"{MEMBER_EMAIL} could not be invited: ")
        expect(members.locator(f"tr[data-person='{member_id}']")).to_contain_text(MEMBER_NAME)  # both lists read again
        expect(members.locator(".invitations li")).to_have_text("No invitation is waiting.")
        screenshot(members, "team-invite-refused")
        cli_token = web_server.mint("notes:read,notes:write", "--person", MEMBER_EMAIL, "--label", "teammate's CLI")["token"]

        # Both type into one note; each sees the other's words.
        owner_note = open_note(owner, web_server, note_id)
        member_note = open_note(joined, web_server, note_id)
        click_end_of_block(owner_note, 0)
        owner_note.keyboard.type(" (owner)")
        wait_saved(owner_note)
        click_end_of_block(member_note, 0)
        member_note.keyboard.press("Enter")
        member_note.keyboard.type("The member's reply")
        wait_saved(member_note)
        expect(owner_note.locator(".editor .block .text", has_text="The member's reply")).to_be_visible()
        expect(member_note.locator(".editor .block .text", has_text="(owner)")).to_be_visible()
        screenshot(owner_note, "team-owner-sees-member-text")

        owner_id = owner_note.evaluate("window.fastpad.config.personId")
        blocks = api.get(f"/v1/notes/{note_id}").json()["blocks"]
        authors = {block["text"]: api.get(f"/v1/notes/{note_id}/blocks/{block['id']}").json()["author"] for block in blocks}
        assert authors["The owner's opening line (owner)"]["id"] == owner_id
        assert authors["The member's reply"] == {"kind": "person", "id": member_id, "token_id": None, "name": MEMBER_NAME}

        # Your account: a new display name; Sessions lists this browser and another where they
        # signed in, and signs the other out.
        elsewhere = browser.new_context(viewport=VIEWPORT)
        try:
            other = elsewhere.new_page()
            other.goto(f"{web_server.base_url}/signin")
            other.get_by_label("Email").fill(MEMBER_EMAIL)
            other.get_by_label("Password").fill(MEMBER_PASSWORD)
            other.get_by_role("button", name="Sign in").click()
            other.wait_for_url(lambda url: "/signin" not in url)
            join.goto(f"{web_server.base_url}/settings/account")
            expect(join.get_by_label("Display name")).to_have_value(MEMBER_NAME)
            join.get_by_label("Display name").fill("Tess T.")
            join.get_by_role("button", name="Save name").click()
            expect(join.locator(".account [role=status]").first).to_contain_text("Your name is now “Tess T.”")
            expect(join.locator("tr[data-session]")).to_have_count(2)
            expect(join.locator("tr[data-current='yes']")).to_contain_text("Chrome on Linux · this one")
            screenshot(join, "team-account")
            join.locator("tr[data-current='no']").get_by_role("button", name="Sign out").click()
            expect(join.locator("tr[data-session]")).to_have_count(1)
            assert other.request.get(f"{web_server.base_url}/v1/account").status == 401
        finally:
            elsewhere.close()

        # The owner makes them a viewer: after a reload their editor is read-only, and the server
        # refuses a write from their session and from their CLI token, naming the role.
        members.reload()
        with members.expect_response(lambda r: f"/v1/members/{member_id}" in r.url and r.request.method == "PATCH") as changed:
            members.get_by_label("Role of Tess T.").select_option("viewer")
        assert changed.value.status == 200
        member_note.reload()
        member_note.wait_for_selector(".editor .block .text")
        expect(member_note.locator(".banner")).to_have_text("You can read and comment; a viewer cannot edit.")
        assert member_note.locator(".editor .block .text").evaluate_all("els => els.map(e => e.isContentEditable)") == [False, False]
        assert member_note.locator(".note-title").get_attribute("contenteditable") == "false"
        screenshot(member_note, "team-viewer-read-only")
        csrf = member_note.evaluate("window.fastpad.config.csrfToken")
        refused = member_note.request.post(f"{web_server.base_url}/v1/notes/{note_id}/ops", headers={"x-csrf-token": csrf},
                                           data={"ops": "AAAAAAAAAAA=", "expectedFrontier": api.get(f"/v1/notes/{note_id}").json()["frontier"]})
        assert refused.status == 403 and refused.json()["required_role"] == "member" and refused.json()["role"] == "viewer"
        with web_server.client(cli_token) as cli:
            assert cli.post("/v1/notes", json={"title": "mine"}).json()["required_role"] == "member"

        # The owner removes them: the member's open tab learns it at its next request.
        members.reload()
        members.once("dialog", lambda dialog: dialog.accept())
        with members.expect_response(lambda r: f"/v1/members/{member_id}" in r.url and r.request.method == "DELETE") as removed:
            members.locator(f"tr[data-person='{member_id}']").get_by_role("button", name="Remove").click()
        assert removed.value.status == 200
        expect(members.locator(f"tr[data-person='{member_id}']")).to_have_count(0)
        member_note.get_by_role("link", name="Your account").click()
        expect(member_note.locator(".session-ended")).to_have_text("Session ended — sign in again")
        assert member_note.get_by_role("link", name="sign in again").get_attribute("href").startswith("/signin?next=%2F")
        screenshot(member_note, "team-session-ended")
        with web_server.client(cli_token) as cli:
            assert cli.get("/v1/notes").status_code == 401
    finally:
        joined.close()


def test_an_ended_session_says_so_and_keeps_the_unsent_text_until_signed_in_again(
        context: Any, web_server: Server, api: Any) -> None:
    """Signed out elsewhere while a note is open: what is typed next is refused with a 401, the top
    bar says "Session ended — sign in again", the device log keeps the text, and once signed in
    again through that link (in a tab of its own) the open tab sends the text and the notice goes."""
    note_id = create_note(api, "Before the session ended", title="Kept on the device")
    page = context.new_page()
    page.goto(signin_url(web_server, f"/notes/{note_id}"))
    sign_in(page, web_server)
    page.wait_for_selector(".editor .block .text")
    wait_saved(page)
    mine = next(s for s in page.request.get(f"{web_server.base_url}/v1/sessions").json()["items"] if s["current"])
    csrf = page.evaluate("window.fastpad.config.csrfToken")
    assert page.request.delete(f"{web_server.base_url}/v1/sessions/{mine['id']}", headers={"x-csrf-token": csrf}).status == 204

    click_end_of_block(page, 0)
    page.keyboard.type(" and after")
    expect(page.locator(".session-ended")).to_have_text("Session ended — sign in again")
    expect(page.locator(".sync-status")).to_have_attribute("data-state", "session-ended")
    unsent = page.evaluate(f"async () => (await window.fastpad.store.log('{note_id}')).filter((entry) => !entry.acked).length")
    assert unsent > 0
    assert "and after" not in server_markdown(api, note_id)
    screenshot(page, "team-session-ended-unsent")

    # Signing in opens in another tab, so this one lives on and sends what it kept.
    with context.expect_page() as opened:
        page.get_by_role("link", name="sign in again").click()
    sign_in(opened.value, web_server)
    page.bring_to_front()
    page.evaluate("() => window.dispatchEvent(new Event('focus'))")
    wait_saved(page)
    expect(page.locator(".session-ended")).to_have_count(0)
    assert "Before the session ended and after" in server_markdown(api, note_id)
