"""Carets anchored in the CRDT, in two Chromium contexts against a real ``fp serve``: two members
of the owner's workspace who joined through invitations, A and B, in one note the owner wrote.

B's caret is held as Loro cursors across every change that reaches B's screen from outside (an
import, an undo, a redo), so when A inserts, deletes or splits before it, or moves B's block, B's
next keystrokes land right after B's own text. Each edit kind is tried 20 times in a row in one
note; a trial passes when B's whole text so far is one run in B's block with B's caret right after
it, on B's screen, and both people's notes converge. Undo and redo leave B's caret after the text
they put back, and a selection (in a block, or of whole blocks) stays on its text.

Typing is Playwright's real keyboard in each context. A's edit and B's next keystrokes overlap:
B goes on typing right after A's edit leaves A's tab, without waiting for it to arrive, and types
once more after it has (the signal: A's text on B's screen), so B's caret is used both while the
change is in flight and once it has landed.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api.conftest import Server
from tests.web.conftest import ACTION_TIMEOUT_MS, VIEWPORT, screenshot
from tests.web.helpers import create_note, open_note, server_blocks, wait_saved

TRIALS = 20

# B's caret: the block it is in, its offset in that block's text, and the block's text (the model's).
CARET = """() => {
  const selection = document.getSelection();
  const text = selection.focusNode?.parentElement?.closest('.text');
  const block = text?.closest('.block');
  if (!block) return null;
  const range = document.createRange();
  range.selectNodeContents(text);
  range.setEnd(selection.focusNode, selection.focusOffset);
  return {id: block.dataset.id, offset: range.toString().length, collapsed: selection.isCollapsed,
          text: window.fastpad.page.model.block(block.dataset.id).text, screen: text.textContent};
}"""


@pytest.fixture(scope="module")
def owner_session(web_server: Server) -> Iterator[httpx.Client]:
    """The owner signed in over HTTP, to invite people (a signed-in owner's right)."""
    with httpx.Client(base_url=web_server.base_url, timeout=30.0) as owner:
        signed = owner.post("/v1/session", json={"email": web_server.owner_email, "password": web_server.owner_password})
        assert signed.status_code == 201, signed.text
        owner.headers["x-csrf-token"] = signed.json()["csrf_token"]
        yield owner


@pytest.fixture
def people(browser: Any, web_server: Server, owner_session: httpx.Client) -> Iterator[tuple[Any, Any]]:
    """(A, B): browser contexts of two new members of the owner's workspace (the previous issue's
    people), each invited by the owner and joined through the link. New people for each test: two
    people typing as fast as these tests do make hundreds of requests a minute each, and a
    person's budget (1,200 a minute, shared by their session and CLI tokens) must not run out
    here or for the owner, whom the other browser tests are signed in as. A page error fails the test."""
    contexts, errors = [], []
    for name in ("Ada Author", "Bea Member"):
        email = f"{name.split()[0].lower()}-{uuid.uuid4().hex[:8]}@example.com"
        invited = owner_session.post("/v1/invitations", json={"email": email, "role": "member",
                                                               "idempotencyKey": str(uuid.uuid4())})
        assert invited.status_code == 201, invited.text
        context = browser.new_context(viewport=VIEWPORT)
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        contexts.append(context)
        joined = context.request.post(f"{web_server.base_url}/v1/invitations:accept", data={
            "token": invited.json()["link"].rsplit("/", 1)[1], "display_name": name, "password": f"{name}'s long password"})
        assert joined.status == 201, joined.text()
        context.on("weberror", lambda error: errors.append(str(error.error)))
        context.on("console", lambda message: message.type == "error"
                   and not message.text.startswith("Failed to load resource") and errors.append(message.text))
    yield contexts[0], contexts[1]
    for context in contexts:
        context.close()
    assert errors == [], errors


def caret(page: Any) -> dict | None:
    return page.evaluate(CARET)


def model_text(page: Any, index: int) -> str:
    return page.evaluate("i => window.fastpad.page.model.blockAt(i).text", index)


def wait_for_text(page: Any, predicate: str, arg: Any) -> None:
    """Until some block of the page's note, in its model and on its screen, satisfies `predicate`
    (a JS function of the block's text and `arg`)."""
    page.wait_for_function(f"""arg => [...document.querySelectorAll('.editor .block')].some(element => {{
        const text = window.fastpad.page.model.has(element.dataset.id) && window.fastpad.page.model.block(element.dataset.id).text;
        const screen = element.querySelector('.text')?.textContent;
        return text === screen && ({predicate})(text, arg); }})""", arg=arg)


def typed_at_caret(page: Any, typed: str) -> bool:
    """B's text is one run in the caret's block, on screen as in the model, with the caret right after it."""
    where = caret(page)
    return bool(where and where["collapsed"] and where["screen"] == where["text"] and typed in where["text"]
                and where["text"].index(typed) + len(typed) == where["offset"])


def open_both(people: tuple[Any, Any], web_server: Server, note_id: str) -> tuple[Any, Any]:
    a_context, b_context = people
    return open_note(a_context, web_server, note_id), open_note(b_context, web_server, note_id)


def put_caret(page: Any, block: int, offset: int) -> None:
    """Click into a block, then walk the caret to `offset` with the arrow keys, as a person would."""
    page.locator(".editor .block .text").nth(block).click()
    page.keyboard.press("Control+Home")
    for _ in range(offset):
        page.keyboard.press("ArrowRight")


def converge(a: Any, b: Any, api: httpx.Client, note_id: str) -> list[str]:
    wait_saved(a)
    wait_saved(b)
    texts = [block["text"] for block in server_blocks(api, note_id)]
    for page in (a, b):
        page.wait_for_function("texts => JSON.stringify(window.fastpad.page.model.blocks().map(b => b.text)) === JSON.stringify(texts)",
                               arg=texts)
    return texts


def test_a_inserting_before_bs_caret_while_b_types_leaves_bs_text_whole_at_bs_caret(
        people: tuple[Any, Any], web_server: Server, api: httpx.Client) -> None:
    lead = "Opening words. B writes here: "
    note_id = create_note(api, f"{lead}. Closing words.\n", title="Carets: insertions")
    a, b = open_both(people, web_server, note_id)
    put_caret(b, 0, len(lead))
    typed, passed, in_flight = "", 0, 0
    for trial in range(TRIALS):
        b.keyboard.type(f"b{trial:02d}")
        inserted = f"A{trial:02d} "
        a.locator(".editor .block .text").first.click()
        a.keyboard.press("Control+Home")
        a.keyboard.type(inserted)  # before B's caret, on A's screen and on its way to B
        b.keyboard.type(f"-{trial:02d}", delay=10)  # B goes on typing, A's insertion in flight
        in_flight += inserted not in model_text(b, 0)
        wait_for_text(b, "(text, inserted) => text.includes(inserted)", inserted)
        b.keyboard.type("+")  # and once more with it landed
        typed += f"b{trial:02d}-{trial:02d}+"
        passed += typed_at_caret(b, typed)
    screenshot(b, "carets-insertions-b")
    texts = converge(a, b, api, note_id)
    assert passed == TRIALS, f"B's text whole at B's caret in {passed}/{TRIALS} trials"
    assert texts == ["".join(f"A{t:02d} " for t in reversed(range(TRIALS))) + lead + typed + ". Closing words."]
    assert in_flight > 0, "every insertion had landed before B typed on: nothing was in flight"


def test_a_deleting_before_bs_caret_while_b_types_leaves_bs_text_whole_at_bs_caret(
        people: tuple[Any, Any], web_server: Server, api: httpx.Client) -> None:
    doomed = "".join(f"d{t:02d} " for t in range(TRIALS))
    lead = f"{doomed}B writes here: "
    note_id = create_note(api, f"{lead}. Closing words.\n", title="Carets: deletions")
    a, b = open_both(people, web_server, note_id)
    put_caret(b, 0, len(lead))
    typed, passed, in_flight = "", 0, 0
    for trial in range(TRIALS):
        b.keyboard.type(f"b{trial:02d}")
        a.locator(".editor .block .text").first.click()
        a.keyboard.press("Control+Home")
        for _ in range(4):
            a.keyboard.press("Shift+ArrowRight")
        a.keyboard.press("Backspace")  # "dNN " before B's caret, gone from A's screen
        b.keyboard.type(f"-{trial:02d}", delay=10)
        in_flight += model_text(b, 0).startswith(f"d{trial:02d} ")
        wait_for_text(b, "(text, gone) => !text.startsWith(gone)", f"d{trial:02d} ")
        b.keyboard.type("+")
        typed += f"b{trial:02d}-{trial:02d}+"
        passed += typed_at_caret(b, typed)
    screenshot(b, "carets-deletions-b")
    texts = converge(a, b, api, note_id)
    assert passed == TRIALS, f"B's text whole at B's caret in {passed}/{TRIALS} trials"
    assert texts == [f"B writes here: {typed}. Closing words."]
    assert in_flight > 0, "every deletion had landed before B typed on: nothing was in flight"


def test_a_splitting_bs_block_before_bs_caret_carries_bs_caret_into_the_tail(
        people: tuple[Any, Any], web_server: Server, api: httpx.Client) -> None:
    # A split copies the tail into a new block (the first half keeps the id), so B's caret cannot
    # ride on a cursor there: the editor follows B's own text into the tail. B types on once the
    # split has landed: keystrokes B makes while it is in flight are not in A's copy, and the
    # merge keeps them in the first half whatever the caret does.
    note_id = create_note(api, "Head words, then B: . Tail words.\n", title="Carets: splits")
    a, b = open_both(people, web_server, note_id)
    put_caret(b, 0, len("Head words, then B: "))
    passed = 0
    for trial in range(TRIALS):
        first, second = f"<b{trial:02d}", f"-{trial:02d}>"
        b.keyboard.type(first)
        wait_for_text(a, "(text, first) => text.includes(first)", first)
        block = trial  # B's block is the last one: each split adds a block before it
        a.evaluate("([block, first]) => { const editor = window.fastpad.page.editor;"
                   " const id = editor.model.ids()[block];"
                   " editor.focusBlock(id, editor.model.block(id).text.indexOf(first)); }", [block, first])
        a.keyboard.press("Enter")  # splits B's block right before B's text: B's text and caret go to the tail
        b.wait_for_function("n => document.querySelectorAll('.editor .block').length === n", arg=trial + 2)
        b.keyboard.type(second)
        where = caret(b)
        passed += typed_at_caret(b, first + second) and where["text"].startswith(first + second) \
            and where["id"] == b.evaluate("i => window.fastpad.page.model.ids()[i]", trial + 1)
    screenshot(b, "carets-splits-b")
    texts = converge(a, b, api, note_id)
    assert passed == TRIALS, f"B's text whole at B's caret in {passed}/{TRIALS} trials"
    assert texts == ["Head words, then B: "] + [f"<b{t:02d}-{t:02d}>" for t in range(TRIALS - 1)] \
        + [f"<b{TRIALS - 1:02d}-{TRIALS - 1:02d}>. Tail words."]


def test_undo_and_redo_leave_bs_caret_after_the_restored_text_with_a_editing_before_it(
        people: tuple[Any, Any], web_server: Server, api: httpx.Client) -> None:
    note_id = create_note(api, "Keep this sentence whole.\n", title="Carets: undo")
    a, b = open_both(people, web_server, note_id)

    def a_inserts(text: str) -> None:
        a.locator(".editor .block .text").first.click()
        a.keyboard.press("Control+Home")
        a.keyboard.type(text)
        wait_for_text(b, "(text, inserted) => text.startsWith(inserted)", text)

    def b_caret_after(fragment: str) -> None:
        where = caret(b)
        assert where and where["collapsed"] and fragment in where["text"], where
        assert where["offset"] == where["text"].index(fragment) + len(fragment), where

    # B deletes a word; A inserts before it; B's undo puts the word back with the caret after it.
    put_caret(b, 0, len("Keep this sentence"))
    for _ in range(len("sentence")):
        b.keyboard.press("Shift+ArrowLeft")
    b.keyboard.press("Backspace")
    a_inserts("A says: ")
    b.keyboard.press("Control+z")
    assert model_text(b, 0) == "A says: Keep this sentence whole."
    b_caret_after("Keep this sentence")
    b.keyboard.press("Control+Shift+z")  # redo: the word goes again, the caret where it was
    assert model_text(b, 0) == "A says: Keep this  whole."
    b_caret_after("A says: Keep this ")
    b.keyboard.press("Control+z")
    b_caret_after("Keep this sentence")

    # B types, undoes it; A inserts before it; B's redo puts the text back with the caret after it.
    b.keyboard.press("Control+End")
    b.keyboard.type(" again")
    b.keyboard.press("Control+z")
    assert model_text(b, 0) == "A says: Keep this sentence whole."
    b_caret_after("sentence whole.")
    a_inserts("A2 ")
    b.keyboard.press("Control+y")
    assert model_text(b, 0) == "A2 A says: Keep this sentence whole. again"
    b_caret_after(" again")
    b.keyboard.type("!")  # the next keystroke lands after the restored text
    screenshot(b, "carets-undo-b")
    assert converge(a, b, api, note_id) == ["A2 A says: Keep this sentence whole. again!"]


def test_bs_selection_in_a_block_and_across_blocks_stays_on_its_text_while_a_edits_before_it(
        people: tuple[Any, Any], web_server: Server, api: httpx.Client) -> None:
    note_id = create_note(api, "First block, pick me here.\n\nSecond block.\n\nThird block.\n", title="Carets: selections")
    a, b = open_both(people, web_server, note_id)
    selected_text = "() => document.getSelection().toString()"
    selected_blocks = ("() => [...document.querySelectorAll('.editor .block.selected')]"
                       ".map(e => window.fastpad.page.model.block(e.dataset.id).text)")

    def a_inserts(text: str) -> None:
        a.locator(".editor .block .text").first.click()
        a.keyboard.press("Control+Home")
        a.keyboard.type(text)
        wait_for_text(b, "(text, inserted) => text.startsWith(inserted)", text)

    # A selection inside a block: "pick me", while A types before it.
    put_caret(b, 0, len("First block, pick me"))
    for _ in range(len("pick me")):
        b.keyboard.press("Shift+ArrowLeft")
    assert b.evaluate(selected_text) == "pick me"
    for trial in range(5):
        a_inserts(f"A{trial} ")
        assert b.evaluate(selected_text) == "pick me", trial

    # A selection of whole blocks (Escape, Shift+ArrowDown): the second and third, while A opens
    # blocks above them (Enter at the very start of the first block).
    b.locator(".editor .block .text").nth(1).click()
    b.keyboard.press("Escape")
    b.keyboard.press("Shift+ArrowDown")
    assert b.evaluate(selected_blocks) == ["Second block.", "Third block."]
    for trial in range(5):
        a.locator(".editor .block .text").first.click()
        a.keyboard.press("Control+Home")
        a.keyboard.press("Enter")
        b.wait_for_function("n => document.querySelectorAll('.editor .block').length === n", arg=4 + trial)
        assert b.evaluate(selected_blocks) == ["Second block.", "Third block."], trial
    screenshot(b, "carets-selections-b")
    b.keyboard.press("Backspace")  # deletes the blocks B sees selected, wherever they are now
    texts = converge(a, b, api, note_id)
    assert texts == [""] * 5 + ["A4 A3 A2 A1 A0 First block, pick me here."]


def test_a_moving_bs_block_while_b_types_leaves_bs_text_whole_at_bs_caret(
        people: tuple[Any, Any], web_server: Server, api: httpx.Client) -> None:
    note_id = create_note(api, "Above.\n\nB writes here:\n\nBelow.\n", title="Carets: moves")
    a, b = open_both(people, web_server, note_id)
    put_caret(b, 1, len("B writes here:"))
    typed, passed = "", 0
    for trial in range(TRIALS):
        b.keyboard.type(f"b{trial:02d}")
        a.locator(".editor .block .text", has_text="B writes here").click()
        down = trial % 2 == 0
        a.keyboard.press("Control+Shift+ArrowDown" if down else "Control+Shift+ArrowUp")  # B's block, down or back up
        b.keyboard.type(f"-{trial:02d}", delay=10)
        b.wait_for_function("([down, text]) => window.fastpad.page.model.blockAt(down ? 2 : 1).text.startsWith(text)"
                            " && document.querySelectorAll('.editor .block .text')[down ? 2 : 1].textContent.startsWith(text)",
                            arg=[down, "B writes here"])
        b.keyboard.type("+")
        typed += f"b{trial:02d}-{trial:02d}+"
        passed += typed_at_caret(b, typed)
    texts = converge(a, b, api, note_id)
    assert passed == TRIALS, f"B's text whole at B's caret in {passed}/{TRIALS} trials"
    assert texts == ["Above.", f"B writes here:{typed}", "Below."]
