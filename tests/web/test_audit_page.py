"""The Audit page in a real browser: after a few acts — a sign-in, a token minted and revoked
with the real ``fp``, an export — the owner opens Audit log from the sidebar and sees each of
them with who did it; the action filter narrows the table and lives in the address. A member
is neither offered the page nor shown it."""

from __future__ import annotations

from typing import Any

from fastpad.deployment import open_deployment
from tests.api.conftest import Server
from tests.web.conftest import VIEWPORT, screenshot

MEMBER = ("audit-page-member@example.com", "a member's long password")


def test_the_owner_sees_recent_acts_on_the_audit_page_and_filters_them(device: Any, web_server: Server) -> None:
    agent = web_server.mint("notes:read,notes:propose", "--label", "audit page: agent")
    web_server.fp("token", "revoke", "--data-dir", str(web_server.data_dir), agent["id"])
    exporter = web_server.mint("notes:read,export", "--person", web_server.owner_email, "--label", "audit page: cli")
    with web_server.client(exporter["token"]) as cli:
        assert cli.get("/v1/export").status_code == 200

    page = device().new_page()
    page.goto(f"{web_server.base_url}/")
    page.get_by_role("link", name="Audit log").click()
    page.wait_for_url("**/audit")
    minted = page.locator(f"tr[data-action='token.minted'][data-target='{agent['id']}']")
    minted.wait_for()
    assert "The operator (command line)" in minted.text_content() and "Minted a token" in minted.text_content()
    revoked = page.locator(f"tr[data-action='token.revoked'][data-target='{agent['id']}']")
    assert "Revoked a token" in revoked.text_content()
    exported = page.locator("tr[data-action='workspace.exported']").first
    assert "Exported the workspace" in exported.text_content() and web_server.owner_email in exported.text_content()
    assert page.locator("tr[data-action='session.signed_in']").count() >= 1
    screenshot(page, "audit")

    page.get_by_label("What").select_option("token.revoked")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**action=token.revoked**")
    page.locator(f"tr[data-action='token.revoked'][data-target='{agent['id']}']").wait_for()
    assert set(page.locator("tbody tr").evaluate_all("rows => rows.map(r => r.dataset.action)")) == {"token.revoked"}
    screenshot(page, "audit-filtered")


def test_a_member_is_not_offered_the_audit_log_and_is_refused_it(browser: Any, web_server: Server) -> None:
    """The shell tells the app the person's role: a member's sidebar has no Audit log, and the
    page itself, opened by its address, says which roles may read it."""
    deployment = open_deployment(web_server.data_dir, pool_size=1)
    try:
        deployment.people.create_person(web_server.workspace_id, MEMBER[0], password=MEMBER[1], role="member")
    finally:
        deployment.close()
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(f"{web_server.base_url}/signin?next=/audit")
        page.get_by_label("Email").fill(MEMBER[0])
        page.get_by_label("Password").fill(MEMBER[1])
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url("**/audit")
        page.get_by_text("for a workspace owner or admin").wait_for()
        assert page.get_by_role("link", name="Agents & tokens").is_visible()
        assert page.get_by_role("link", name="Audit log").count() == 0
        screenshot(page, "audit-member")
    finally:
        context.close()
