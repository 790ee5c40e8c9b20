"""Presence in two Chromium contexts against a real ``fp serve``: two members who joined through
invitations (test_carets.py's ``people``), A and B, in one note the owner wrote.

When B opens the note A's top bar shows B's initials, B's name on hover and to a screen reader;
B's caret appears on A's screen as a bar in B's colour labelled with B's name, at B's place in the
text, and follows B's typing and B's selection; when B's tab closes, B is gone from A's screen.
How fast each of these arrives is measured in bench/web.py, not here: these wait on the screen.
"""

from __future__ import annotations

from typing import Any

import httpx
from playwright.sync_api import expect

from tests.api.conftest import Server
from tests.web.conftest import screenshot
from tests.web.helpers import create_note, open_note
from tests.web.test_carets import owner_session, people, put_caret  # noqa: F401  (fixtures: two members)

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
