"""Several workspaces in the app (Debian Chromium against a real ``fp serve``): a person creates a
workspace from the sidebar's switcher ("New workspace…"), lands in it empty, writes a note there,
and switches back and forth — each workspace shows its own notes only. A tab left open on the first
workspace keeps acting there after the other tab switched: a note it creates lands in the first.
A person who has an account joins a second workspace from its invitation by signing in."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from playwright.sync_api import expect

from tests.api.conftest import Server
from tests.web.conftest import ACTION_TIMEOUT_MS, VIEWPORT, screenshot, sign_in, signin_url
from tests.web.helpers import create_note


def titles_in_sidebar(page: Any) -> list[str]:
    return page.locator(".sidebar nav a[href^='/notes/'] span:first-child").all_inner_texts()


def test_a_person_creates_a_workspace_and_switches_between_two(browser: Any, web_server: Server, api: Any) -> None:
    first_title = f"First workspace plan {uuid.uuid4().hex[:4]}"
    create_note(api, "Only in the first workspace.", title=first_title)  # the owner's CLI token: the first workspace
    side_name = f"Side project {uuid.uuid4().hex[:4]}"
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    try:
        page = context.new_page()
        page.goto(signin_url(web_server, "/"))
        sign_in(page, web_server)
        switcher = page.get_by_label("Workspace", exact=True)
        expect(switcher).to_have_value(web_server.workspace_id)
        expect(page.locator(".sidebar nav")).to_contain_text(first_title)
        screenshot(page, "workspaces-first")

        # A tab left on the first workspace.
        left_open = context.new_page()
        left_open.goto(f"{web_server.base_url}/")
        expect(left_open.locator(".sidebar nav")).to_contain_text(first_title)

        switcher.select_option(label="New workspace…")
        page.wait_for_url("**/workspaces/new")
        page.get_by_label("Name").fill(side_name)
        screenshot(page, "workspaces-new")
        page.get_by_role("button", name="Create workspace").click()
        page.wait_for_function("() => window.fastpad?.config.workspaceId && "
                               f"window.fastpad.config.workspaceId !== '{web_server.workspace_id}'")
        side_id = page.evaluate("window.fastpad.config.workspaceId")
        expect(page.get_by_label("Workspace", exact=True)).to_have_value(side_id)
        expect(page.locator(".sidebar nav")).to_contain_text("No notes yet")
        assert first_title not in titles_in_sidebar(page)
        assert page.evaluate("window.fastpad.config.role") == "owner"

        # A note of its own in the new workspace.
        page.get_by_role("button", name="New note").click()
        page.wait_for_url("**/notes/*")
        page.locator(".note-title").fill("Side plan")
        page.keyboard.press("Enter")
        page.keyboard.type("Only in the side project.")
        expect(page.locator(".sidebar nav")).to_contain_text("Side plan")
        screenshot(page, "workspaces-side")

        # Back to the first: its notes, never the side project's.
        page.get_by_label("Workspace", exact=True).select_option(web_server.workspace_id)
        page.wait_for_function(f"() => window.fastpad?.config.workspaceId === '{web_server.workspace_id}'")
        expect(page.locator(".sidebar nav")).to_contain_text(first_title)
        assert "Side plan" not in titles_in_sidebar(page)
        screenshot(page, "workspaces-back-to-first")
        # And over once more: the side project's note is there, the first's is not.
        page.get_by_label("Workspace", exact=True).select_option(side_id)
        page.wait_for_function(f"() => window.fastpad?.config.workspaceId === '{side_id}'")
        expect(page.locator(".sidebar nav")).to_contain_text("Side plan")
        assert first_title not in titles_in_sidebar(page)

        # The tab left open still acts in the first workspace, though the browser's session moved.
        left_open.get_by_role("button", name="New note").click()
        left_open.wait_for_url("**/notes/*")
        made = left_open.url.rsplit("/", 1)[1]
        assert api.get(f"/v1/notes/{made}").status_code == 200  # the first workspace's CLI token reads it
        expect(left_open.locator(".sidebar nav")).to_contain_text(first_title)
        screenshot(left_open, "workspaces-tab-left-open")
        # Back where this server's other tests expect the owner (a sign-in opens the workspace last used).
        page.get_by_label("Workspace", exact=True).select_option(web_server.workspace_id)
        page.wait_for_function(f"() => window.fastpad?.config.workspaceId === '{web_server.workspace_id}'")
    finally:
        context.close()


def test_a_person_with_an_account_joins_a_second_workspace_by_signing_in(browser: Any, web_server: Server) -> None:
    """Pat has an account in the first workspace. Invited into another, the link's page names that
    workspace and asks only for Pat's password; Pat lands in it, with both in the switcher, and the
    browser's session in the first ends (it moved, as a switch moves it)."""
    tag = uuid.uuid4().hex[:4]
    pat, password = f"pat-{tag}@example.com", "Pat's long password"
    with httpx.Client(base_url=web_server.base_url, timeout=30) as owner:
        signed = owner.post("/v1/session", json={"email": web_server.owner_email, "password": web_server.owner_password})
        owner.headers["x-csrf-token"] = signed.json()["csrf_token"]
        first_link = owner.post("/v1/invitations", json={"email": pat, "idempotencyKey": tag + "1"}).json()["link"]
        with httpx.Client(base_url=web_server.base_url, timeout=30) as joining:  # Pat's account, signed out after
            joined = joining.post("/v1/invitations:accept", json={
                "token": first_link.rsplit("/", 1)[1], "display_name": "Pat", "password": password})
            assert joined.status_code == 201, joined.text
            joining.delete("/v1/session", headers={"x-csrf-token": joined.json()["csrf_token"]})
        second = owner.post("/v1/workspaces", json={"name": f"Second team {tag}", "idempotencyKey": tag}).json()
        link = owner.post("/v1/invitations", json={"email": pat, "role": "member", "idempotencyKey": tag + "2"},
                          headers={"x-fastpad-workspace": second["id"]}).json()["link"]
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    try:
        page = context.new_page()
        page.goto(signin_url(web_server, "/"))
        page.get_by_label("Email").fill(pat)
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_label("Workspace", exact=True)).to_have_value(web_server.workspace_id)

        page.goto(link)
        expect(page.locator("main, body").first).to_contain_text(f"join Second team {tag} as member")
        expect(page.locator("body")).to_contain_text("You have a Fastpad account with this address")
        assert page.get_by_label("Display name").count() == 0
        screenshot(page, "workspaces-join-with-account")
        page.get_by_label("Your Fastpad password").fill(password)
        page.get_by_role("button", name="Sign in and join").click()
        page.wait_for_function(f"() => window.fastpad?.config.workspaceId === '{second['id']}'")
        switcher = page.get_by_label("Workspace", exact=True)
        expect(switcher).to_have_value(second["id"])
        assert switcher.locator("option").all_inner_texts()[:2] == ["My workspace", f"Second team {tag}"]
        screenshot(page, "workspaces-joined-second")
        sessions = page.request.get(f"{web_server.base_url}/v1/sessions").json()["items"]
        assert [(s["workspace_id"], s["current"]) for s in sessions] == [(second["id"], True)]
    finally:
        context.close()
