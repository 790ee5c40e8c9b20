"""Several workspaces in the app (Debian Chromium against a real ``fp serve``): a person creates a
workspace from the sidebar's switcher ("New workspace…"), lands in it empty, writes a note there,
and switches back and forth — each workspace shows its own notes only. A tab left open on the first
workspace keeps acting there after the other tab switched: a note it creates lands in the first."""

from __future__ import annotations

import uuid
from typing import Any

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
    finally:
        context.close()
