"""Presence in two Chromium contexts against a real ``fp serve``: two members who joined through
invitations (test_carets.py's ``people``), A and B, in one note the owner wrote.

When B opens the note A's top bar shows B's initials, B's name on hover and to a screen reader;
B's caret appears on A's screen as a bar in B's colour labelled with B's name, at B's place in the
text, and follows B's typing and B's selection; when B's tab closes, B is gone from A's screen.
How fast each of these arrives is measured in bench/web_presence.py, not here: these wait on the screen.

A tab that cannot say it leaves (its request lost) is dropped when its presence expires, while an
open tab's heartbeat keeps it shown past that: on a server of this module's own whose presence
lives ``TTL_S`` after a tab's last post (the ``presence_ttl_s`` limit), instead of 30 s.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.api.conftest import Server, start_server, stop
from tests.web.conftest import ACTION_TIMEOUT_MS, VIEWPORT, screenshot
from tests.web.helpers import create_note, open_note
from tests.web.test_carets import owner_session, people, put_caret  # noqa: F401  (fixtures: two members)

TTL_S = 2.0

# Where B's caret is drawn on A's screen, and where A's screen has the place in B's block that
# B's caret is at (the text's end there, as `offset` counts it): both in viewport pixels.
CARET_AT = """([name, index, offset]) => {
  const caret = [...document.querySelectorAll('.remote-caret')].find(c => c.textContent === name);
  const text = document.querySelectorAll('.editor .block .text')[index];
  if (!caret || !text) return false;
  const walker = document.createTreeWalker(text, NodeFilter.SHOW_TEXT);
  let node = walker.nextNode(), left = offset;
  while (node && left > node.data.length) { left -= node.data.length; node = walker.nextNode(); }
  if (!node) return false;
  const range = document.createRange();
  range.setStart(node, left);
  range.collapse(true);
  const want = range.getClientRects()[0], got = caret.getBoundingClientRect();
  return Math.abs(want.left - got.left) < 2 && Math.abs(want.top - got.top) < 2;
}"""


def test_b_opening_typing_selecting_and_closing_shows_on_as_screen(
        people: tuple[Any, Any], web_server: Server, api: httpx.Client) -> None:
    note_id = create_note(api, "Shared words for two people.\n\nA second paragraph.\n", title="Presence")
    a_context, b_context = people
    a = open_note(a_context, web_server, note_id)
    expect(a.locator(".presence .avatar")).to_have_count(0)

    b = open_note(b_context, web_server, note_id)
    bea = a.locator('.presence .avatar[title="Bea Member"]')
    expect(bea).to_have_text("BM")
    expect(bea).to_have_attribute("aria-label", "Bea Member")
    expect(b.locator('.presence .avatar[title="Ada Author"]')).to_have_text("AA")

    put_caret(b, 0, len("Shared"))
    a.wait_for_function(CARET_AT, arg=["Bea Member", 0, len("Shared")])
    b.keyboard.type(" and typed")
    a.wait_for_function(CARET_AT, arg=["Bea Member", 0, len("Shared and typed")])
    assert a.evaluate("window.fastpad.page.model.blockAt(0).text").startswith("Shared and typed words")

    # A types before B's caret: on A's screen B's caret moves on with B's text.
    put_caret(a, 0, 0)
    a.keyboard.type("Ada: ")
    a.wait_for_function(CARET_AT, arg=["Bea Member", 0, len("Ada: Shared and typed")])

    for _ in range(len("typed")):
        b.keyboard.press("Shift+ArrowLeft")
    selection = a.locator(".remote-selection")
    expect(selection.first).to_be_visible()
    a.wait_for_function(CARET_AT, arg=["Bea Member", 0, len("Ada: Shared and ")])
    screenshot(a, "presence-light")
    a.emulate_media(color_scheme="dark")
    screenshot(a, "presence-dark")

    b.close()
    expect(bea).to_have_count(0)
    expect(a.locator(".remote-caret")).to_have_count(0)
    expect(selection).to_have_count(0)


@pytest.fixture(scope="module")
def short_lived(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = start_server(tmp_path_factory.mktemp("presence-ttl"), "sqlite", limits={"presence_ttl_s": TTL_S})
    yield server
    stop(server.process)


def test_a_tab_that_cannot_say_it_leaves_is_dropped_when_its_presence_expires(browser: Any, short_lived: Server) -> None:
    """The owner on two devices: B's heartbeat keeps B shown on A past the ttl; then B's device goes
    offline and its tab closes, its leave lost, and A stops showing B when B's presence expires."""
    with short_lived.client(short_lived.token("owner")) as owner:
        note_id = create_note(owner, "Someone was here.\n", title="Expiry")
    contexts = []
    for _ in range(2):
        context = browser.new_context(viewport=VIEWPORT)
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        signed = context.request.post(f"{short_lived.base_url}/v1/session", data={
            "email": short_lived.owner_email, "password": short_lived.owner_password})
        assert signed.status == 201, signed.text()
        contexts.append(context)
    try:
        a = open_note(contexts[0], short_lived, note_id)
        b = open_note(contexts[1], short_lived, note_id)
        shown = a.locator(".presence .avatar")
        expect(shown).to_have_count(1)
        # Four heartbeats, one every third of the ttl, span more than it: B is still shown after them.
        for _ in range(4):
            with b.expect_request(lambda request: request.url.endswith("/presence") and request.method == "POST"):
                pass
        expect(shown).to_have_count(1)
        contexts[1].set_offline(True)  # B's leave, sent as its tab closes, cannot reach the server
        b.close()
        expect(shown).to_have_count(0)
    finally:
        for context in contexts:
            context.close()
