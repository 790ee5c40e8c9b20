"""Publishing, clicked in a real browser: the person publishes from the note's page, an
anonymous browser reads the page (secrets masked, an unpublished note named but never linked),
and after Unpublish the address reads exactly as an id that never existed."""

from __future__ import annotations

from typing import Any

import httpx

from fastpad.notes import new_id
from tests.api.conftest import Server
from tests.web.conftest import VIEWPORT, screenshot
from tests.web.helpers import create_note, open_note

SECRET = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"


def test_publish_from_the_note_read_it_signed_out_then_unpublish(device: Any, browser: Any,
                                                                 web_server: Server, api: httpx.Client) -> None:
    private = create_note(api, "Only for me.\n", title="Private draft")
    note_id = create_note(api, f"Read [[Private draft]] later.\n\nThe key is {SECRET}.\n", title="Field guide")
    page = open_note(device(), web_server, note_id)
    page.get_by_role("button", name="Publish", exact=True).click()
    page.get_by_role("link", name="Public page").wait_for()
    assert "anyone with the link" in page.locator(".toast").last.text_content()

    outsider = browser.new_context(viewport=VIEWPORT)
    try:
        public = outsider.new_page()
        answer = public.goto(f"{web_server.base_url}/n/{note_id}")
        assert answer is not None and answer.status == 200
        assert public.locator("h1").text_content() == "Field guide"
        text = public.locator("article").text_content()
        assert "Read Private draft later." in text and SECRET not in text and "[redacted:" in text
        assert public.locator(f"a[href*='{private}']").count() == 0
        screenshot(public, "published-note")
        with httpx.Client(base_url=web_server.base_url) as anonymous:
            markdown = anonymous.get(f"/n/{note_id}", headers={"accept": "text/markdown"})
            assert markdown.status_code == 200 and markdown.text.startswith("---\ntitle: Field guide\n---\n")

        page.get_by_role("button", name="Unpublish").click()
        # exact: a role name matches as a substring, and "Unpublish" itself would satisfy the wait
        page.get_by_role("button", name="Publish", exact=True).wait_for()
        gone = public.goto(f"{web_server.base_url}/n/{note_id}")
        never = public.request.get(f"{web_server.base_url}/n/{new_id()}")
        assert gone is not None and gone.status == 404 and gone.body() == never.body()
    finally:
        outsider.close()
