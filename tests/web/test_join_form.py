"""The invitation page filled in and submitted by clicking in Chromium against a real ``fp serve``:
the operator's ``fp user invite`` link, a display name and a password, Join — and the browser is
signed in as the invited role (checked over HTTP with the browser's own cookie); the same link
opened again shows the one page every used, expired or revoked link shows."""

from __future__ import annotations

import json

from playwright.sync_api import BrowserContext, expect

from tests.api.conftest import Server, run_fp


def test_an_invitee_joins_through_the_page(context: BrowserContext, web_server: Server) -> None:
    printed = json.loads(run_fp("user", "invite", "joiner@example.com", "--role", "member", "--data-dir",
                                str(web_server.data_dir), "--base-url", web_server.base_url, "--json").stdout)
    page = context.new_page()
    page.goto(printed["link"])
    expect(page.get_by_text("joiner@example.com")).to_be_visible()
    page.get_by_label("Display name").fill("Joiner")
    page.get_by_label("Choose a password").fill("short")
    page.get_by_role("button", name="Join").click()
    # The browser's own check (minlength) keeps a short password from being sent at all.
    assert "/invite/" in page.url
    page.get_by_label("Choose a password").fill("a long enough pass")
    page.get_by_role("button", name="Join").click()
    page.wait_for_url(lambda url: "/invite/" not in url)
    account = page.request.get(f"{web_server.base_url}/v1/account")
    assert account.ok and account.json()["role"] == "member" and account.json()["display_name"] == "Joiner"
    page.goto(printed["link"])
    expect(page.get_by_role("heading", name="Invitation not valid")).to_be_visible()
