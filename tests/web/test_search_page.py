"""The search page in a real browser: hits with the matched words marked (in the snippet and
the title), each hit's explanation a click away, and the type filter."""

from __future__ import annotations

import re
import secrets
from typing import Any

import httpx

from tests.api.conftest import Server
from tests.web.conftest import screenshot
from tests.web.helpers import create_note


def test_hits_explain_themselves_and_the_type_filter_narrows_them(device: Any, web_server: Server,
                                                                   api: httpx.Client) -> None:
    word = "heron" + secrets.token_hex(2)
    typed = create_note(api, f"---\ntypes: [Sighting]\n---\nA {word} stood in the reeds.\n", title=f"Estuary {word}")
    create_note(api, f"Notes on the {word} colony and its nests.\n", title=f"Colony {word}")
    page = device().new_page()
    page.goto(f"{web_server.base_url}/search?q={word}")
    page.locator(".hit").nth(1).wait_for()
    assert page.locator(".hit mark").first.text_content().lower() == word
    first = page.locator(".hit").first
    first.locator("summary", has_text="Why this result").click()
    # Which channels find a hit first depends on when its embedding lands; that each names its rank does not.
    assert re.search(r"(lexical|dense|graph|recency): rank \d+ \(adds 0\.\d+\)", first.locator(".why").text_content())
    screenshot(page, "search")

    # A word that stands only in a note's title finds it, marked in the title.
    titled = "plover" + secrets.token_hex(2)
    only_title = create_note(api, "Counts from the morning walk.\n", title=f"Field log {titled}")
    page.goto(f"{web_server.base_url}/search?q={titled}")
    hit = page.locator(f".hit[data-note='{only_title}']")
    hit.wait_for()
    assert hit.locator(".title mark").text_content() == titled
    hit.locator("summary", has_text="Why this result").click()
    assert f"Matched: {titled}" in hit.locator(".why").text_content()
    screenshot(page, "search-title")

    page.goto(f"{web_server.base_url}/search?q={word}")
    page.locator(".hit").nth(1).wait_for()
    page.get_by_label("Type").select_option("Sighting")
    page.get_by_role("button", name="Search", exact=True).click()
    page.wait_for_url("**type=Sighting**")
    page.locator(f".hit[data-note='{typed}']").wait_for()
    assert page.locator(".hit").count() == 1
