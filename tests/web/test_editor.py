"""The block editor in Chromium, judged by what a person does and what the server then holds.

Each test types, clicks and presses keys in a real browser against a real ``fp serve``,
then reads the note back over HTTP (the canonical Markdown, or the Loro op log) — the
server's copy is the judge, not the screen alone. Several devices of one person are
several browser contexts sharing one signed-in session.
"""

from __future__ import annotations

import base64
import re
import time
from typing import Any

import httpx
import pytest
from loro import ExportMode, LoroDoc

from tests.api.conftest import Server
from tests.web.conftest import ACTION_TIMEOUT_MS, VIEWPORT, screenshot, sign_in
from tests.web.helpers import (block_texts, click_end_of_block, create_note, op_log_atoms, open_note, screen_ids,
                               server_blocks, server_markdown, wait_saved)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

ANCHOR = re.compile(r"\{#[0-9A-HJKMNP-TV-Z]{26}\}")
MOD = "Control"  # Chromium on Linux: the editor's shortcuts use Ctrl


# ---------------------------------------------------------------------- typing every block type


def test_every_block_type_typed_in_the_browser_is_the_servers_canonical_markdown(device: Any, web_server: Server,
                                                                                 api: httpx.Client) -> None:
    page = device().new_page()
    page.goto(f"{web_server.base_url}/")
    page.get_by_role("button", name="New note").click()
    page.wait_for_selector(".note-title:focus")
    keyboard = page.keyboard
    keyboard.type("Every block")
    keyboard.press("Enter")  # to the first block
    keyboard.type("# A heading")
    keyboard.press("Enter")
    keyboard.type("Plain text with **bold** and a link.")
    keyboard.press("Enter")
    keyboard.type("- first bullet")
    keyboard.press("Enter")
    keyboard.press("Tab")
    keyboard.type("nested bullet")
    keyboard.press("Enter")
    keyboard.press("Enter")  # an empty nested item outdents
    keyboard.press("Enter")  # an empty item leaves the list
    keyboard.type("1. one")
    keyboard.press("Enter")
    keyboard.type("two")
    keyboard.press("Enter")
    keyboard.press("Enter")
    keyboard.type("[ ] open task")
    keyboard.press("Enter")
    keyboard.type("done task")
    keyboard.press("Enter")
    keyboard.press("Enter")
    keyboard.type("> a quote")
    keyboard.press("Enter")
    keyboard.press("Enter")
    keyboard.type("/callout")
    page.wait_for_selector(".popup-item.active")
    keyboard.press("Enter")
    keyboard.type("Mind the gap.")
    keyboard.press("Enter")
    keyboard.press("Enter")
    keyboard.type("```python")
    keyboard.press("Enter")
    keyboard.type("print('hi')")
    keyboard.press("Enter")
    keyboard.type("x = 1")
    keyboard.press(f"{MOD}+Enter")  # leaves the code block
    keyboard.type("---")
    keyboard.press("Enter")
    keyboard.type("/table")
    page.wait_for_selector(".popup-item.active")
    keyboard.press("Enter")
    keyboard.type("a \\| b")  # the body row's first cell, an escaped pipe inside
    page.locator(".block-task .task-box").nth(1).click()  # tick "done task"
    wait_saved(page)
    screenshot(page, "note-with-every-block-type")
    note_id = page.url.rsplit("/", 1)[1]
    expected = (
        "---\ntitle: Every block\n---\n\n"
        "# A heading {#ID}\n\n"
        "Plain text with **bold** and a link. {#ID}\n\n"
        "- first bullet {#ID}\n  - nested bullet {#ID}\n\n"
        "1. one {#ID}\n2. two {#ID}\n\n"
        "- [ ] open task {#ID}\n- [x] done task {#ID}\n\n"
        "> a quote {#ID}\n\n"
        "> [!note]\n> Mind the gap. {#ID}\n\n"
        "```python {#ID}\nprint('hi')\nx = 1\n```\n\n"
        "--- {#ID}\n\n"
        # A row's anchor goes inside its last cell (fastpad/notes/markdown.py).
        "| Column | Column {#ID} |\n| --- | --- |\n| a \\| b | {#ID}  |\n"
    )
    markdown = server_markdown(api, note_id)
    assert ANCHOR.sub("{#ID}", markdown) == expected
    blocks = server_blocks(api, note_id)
    assert len(ANCHOR.findall(markdown)) == len(blocks) == 14  # one anchor per block, each once
    assert len({block["id"] for block in blocks}) == len(blocks)
    assert all(block["origin"] == "human_typed" for block in blocks)

    page.reload()
    page.wait_for_selector(".editor .block")
    assert screen_ids(page) == [block["id"] for block in blocks]
    assert page.locator(".note-title").text_content() == "Every block"
    assert page.locator(".block-task .task-box").nth(1).is_checked()
    assert page.locator(".block-code .code-language").input_value() == "python"


def test_enter_keeps_the_id_on_the_first_half_and_backspace_at_the_start_keeps_the_first_id(
        device: Any, web_server: Server, api: httpx.Client) -> None:
    note_id = create_note(api, "Hello world\n", title="Split and join")
    [original] = server_blocks(api, note_id)
    page = open_note(device(), web_server, note_id)
    page.locator(".editor .block .text").first.click()
    page.keyboard.press("Home")
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    wait_saved(page)
    first, second = server_blocks(api, note_id)
    assert (first["id"], first["text"]) == (original["id"], "Hello")
    assert second["text"] == " world" and second["id"] != original["id"]

    page.keyboard.press("Backspace")  # the caret is at the start of the tail
    wait_saved(page)
    [joined] = server_blocks(api, note_id)
    assert (joined["id"], joined["text"]) == (original["id"], "Hello world")


def test_copy_paste_mints_new_ids_and_cut_paste_moves_the_block(device: Any, web_server: Server,
                                                                 api: httpx.Client) -> None:
    note_id = create_note(api, "one\n\ntwo\n\nthree\n", title="Clipboard")
    one, two, three = (block["id"] for block in server_blocks(api, note_id))
    page = open_note(device(), web_server, note_id)
    texts = page.locator(".editor .block .text")
    texts.nth(0).click()
    page.keyboard.press("Home")
    page.keyboard.press("Shift+ArrowDown")  # past the block's last line: whole blocks, "one" and "two"
    page.wait_for_selector(".block.selected >> nth=1")
    page.keyboard.press(f"{MOD}+c")
    texts.nth(2).click()
    page.keyboard.press("End")
    page.keyboard.press(f"{MOD}+v")
    wait_saved(page)
    blocks = server_blocks(api, note_id)
    assert [block["text"] for block in blocks] == ["one", "two", "three", "one", "two"]
    assert [block["id"] for block in blocks[:3]] == [one, two, three]
    assert len({block["id"] for block in blocks}) == 5  # the copies are new blocks with new ids

    page.locator(".editor .block .text", has_text="two").first.click()
    page.keyboard.press("Escape")  # selects the block
    page.keyboard.press(f"{MOD}+x")
    page.locator(".editor .block .text", has_text="three").click()
    page.keyboard.press("End")
    page.keyboard.press(f"{MOD}+v")
    wait_saved(page)
    blocks = server_blocks(api, note_id)
    assert [block["text"] for block in blocks] == ["one", "three", "two", "one", "two"]
    assert [block["id"] for block in blocks[:3]] == [one, three, two]  # cut and pasted: moved, same id


# ---------------------------------------------------------------------- two devices


def test_two_devices_typing_in_one_paragraph_converge_on_screen_and_on_the_server(
        device: Any, web_server: Server, api: httpx.Client) -> None:
    note_id = create_note(api, "middle\n", title="Together")
    a = open_note(device(), web_server, note_id)
    b = open_note(device(), web_server, note_id)
    a.locator(".editor .block .text").first.click()
    a.keyboard.press("End")
    b.locator(".editor .block .text").first.click()
    b.keyboard.press("Home")
    for a_char, b_char in zip("aaaaaaaaaa", "bbbbbbbbbb"):  # interleaved, as two people typing at once
        a.keyboard.type(a_char)
        b.keyboard.type(b_char)
    wait_saved(a)
    wait_saved(b)
    expected = "bbbbbbbbbbmiddleaaaaaaaaaa"
    for page in (a, b):
        page.wait_for_function("t => window.fastpad.page.model.blocks()[0].text === t"
                               " && document.querySelector('.editor .block .text').textContent === t", arg=expected)
    assert [block["text"] for block in server_blocks(api, note_id)] == [expected]


def test_moving_blocks_on_one_device_while_editing_them_on_another_loses_and_doubles_nothing(
        device: Any, web_server: Server, api: httpx.Client) -> None:
    note_id = create_note(api, "one\n\ntwo\n\nthree\n\nfour\n", title="Reorder")
    ids = [block["id"] for block in server_blocks(api, note_id)]
    mover = open_note(device(), web_server, note_id)
    writer = open_note(device(), web_server, note_id)
    mover.locator(".editor .block .text").first.click()
    writer.locator(".editor .block .text").first.click()
    writer.keyboard.press("End")
    for step in range(3):  # "one" goes to the bottom, one block at a time, while it is being typed into
        mover.keyboard.press(f"{MOD}+Shift+ArrowDown")
        writer.keyboard.type(f" +{step}")
    writer.locator(".editor .block .text", has_text="three").click()
    writer.keyboard.press("End")
    writer.keyboard.type(" edited")
    wait_saved(mover)
    wait_saved(writer)
    blocks = server_blocks(api, note_id)
    assert sorted(block["id"] for block in blocks) == sorted(ids)  # none lost, none doubled
    texts = {block["id"]: block["text"] for block in blocks}
    assert texts[ids[0]] == "one +0 +1 +2"
    assert texts[ids[2]] == "three edited"
    server_order = [block["id"] for block in blocks]
    for page in (mover, writer):
        page.wait_for_function("ids => JSON.stringify([...document.querySelectorAll('.editor .block')]"
                               ".map(e => e.dataset.id)) === JSON.stringify(ids)", arg=server_order)


def test_undo_on_one_device_takes_back_only_its_own_typing(device: Any, web_server: Server,
                                                            api: httpx.Client) -> None:
    note_id = create_note(api, "shared\n", title="Undo")
    mine = open_note(device(), web_server, note_id)
    theirs = open_note(device(), web_server, note_id)
    mine.locator(".editor .block .text").first.click()
    mine.keyboard.press("End")
    mine.keyboard.type(" mine")
    wait_saved(mine)
    theirs.wait_for_function("() => window.fastpad.page.model.blocks()[0].text === 'shared mine'")
    theirs.locator(".editor .block .text").first.click()
    theirs.keyboard.press("Home")
    theirs.keyboard.type("theirs ")
    wait_saved(theirs)
    mine.wait_for_function("() => window.fastpad.page.model.blocks()[0].text === 'theirs shared mine'")
    mine.locator(".editor .block .text").first.click()
    for _ in range(3):  # more undos than this device made: never reaches the other's text
        mine.keyboard.press(f"{MOD}+z")
    wait_saved(mine)
    wait_saved(theirs)
    assert [block["text"] for block in server_blocks(api, note_id)] == ["theirs shared"]
    theirs.wait_for_function("() => document.querySelector('.editor .block .text').textContent === 'theirs shared'")



def test_undoing_a_split_leaves_every_later_block_editable_where_it_is(device: Any, web_server: Server,
                                                                       api: httpx.Client) -> None:
    """An undo that removes a block re-reads the editor's block index: typing afterwards lands in
    the block under the caret (a stale index once sent it to the position the undone block held)."""
    note_id = create_note(api, "first\n\nsecond\n\nthird\n", title="Undo a split")
    page = open_note(device(), web_server, note_id)
    click_end_of_block(page, 0)
    page.keyboard.press("Enter")
    page.keyboard.type("new")
    page.wait_for_function("() => document.querySelectorAll('.editor .block').length === 4")
    page.keyboard.press(f"{MOD}+z")
    page.keyboard.press(f"{MOD}+z")
    page.wait_for_function("() => document.querySelectorAll('.editor .block').length === 3")
    click_end_of_block(page, 2)
    page.keyboard.type(" and more")
    wait_saved(page)
    assert [block["text"] for block in server_blocks(api, note_id)] == ["first", "second", "third and more"]


def test_a_long_note_shows_its_top_first_then_every_block_and_a_trashed_one_stays_read_only(
        device: Any, web_server: Server, api: httpx.Client) -> None:
    count = 300  # several of the editor's 64-block groups, the later ones rendered after the first frame
    note_id = create_note(api, "\n\n".join(f"Line {i}" for i in range(count)) + "\n", title="A long note")
    page = open_note(device(), web_server, note_id)
    page.wait_for_function(f"() => document.querySelectorAll('.editor .block').length === {count}")
    assert block_texts(page)[-1] == f"Line {count - 1}"
    click_end_of_block(page, count - 1)
    page.keyboard.type(" (the end)")
    wait_saved(page)
    assert server_blocks(api, note_id)[-1]["text"] == f"Line {count - 1} (the end)"

    assert api.post(f"/v1/notes/{note_id}/trash", json={}).status_code == 200
    trashed = device().new_page()
    trashed.goto(f"{web_server.base_url}/notes/{note_id}")
    trashed.wait_for_function(f"() => document.querySelectorAll('.editor .block').length === {count}")
    editable = trashed.eval_on_selector_all(".editor .block .text", "els => els.filter(e => e.isContentEditable).length")
    assert editable == 0


# ---------------------------------------------------------------------- links


@pytest.mark.parametrize("typed, target, written", [
    ("We follow the [[Quarter", "Quarterly roadmap", "We follow the [[Quarterly roadmap]] closely."),
    # "@ada lov", not "@ada": `@` offers people first, and other tests' members may be named Ada.
    ("We follow @ada lov", "Ada Lovelace", "We follow @[[Ada Lovelace]] closely."),
], ids=["double-bracket", "at-mention"])
def test_the_note_picker_links_a_note_and_the_target_shows_the_backlink_with_its_sentence(
        device: Any, web_server: Server, api: httpx.Client, typed: str, target: str, written: str) -> None:
    target_id = create_note(api, "The target's body.\n", title=target)
    source_id = create_note(api, "", title=f"Planning with {target}")
    page = open_note(device(), web_server, source_id)
    page.locator(".editor .block .text").first.click()
    page.keyboard.type(typed)
    page.wait_for_selector(f".popup-item.active:has-text('{target}')")
    page.keyboard.press("Enter")
    page.keyboard.type(" closely.")
    wait_saved(page)
    assert [block["text"] for block in server_blocks(api, source_id)] == [written]

    page.goto(f"{web_server.base_url}/notes/{target_id}")
    backlink = page.locator(".backlinks .backlink", has_text=f"Planning with {target}")
    backlink.wait_for()
    assert written in backlink.locator(".evidence").text_content()
    assert backlink.get_by_role("link").get_attribute("href") == f"/notes/{source_id}"


# ---------------------------------------------------------------------- sync under failure


def test_offline_edits_survive_a_reload_and_land_exactly_once(device: Any, web_server: Server,
                                                              api: httpx.Client) -> None:
    note_id = create_note(api, "before\n", title="Offline")
    context = device()
    page = open_note(context, web_server, note_id)
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")  # the shell is kept now
    atoms_before, version_before = op_log_atoms(api, note_id)
    context.set_offline(True)
    page.locator(".editor .block .text").first.click()
    page.keyboard.press("End")
    typed = " typed on a plane"
    page.keyboard.type(typed)
    page.keyboard.press("Enter")
    page.keyboard.type("second line")
    page.wait_for_selector(".sync-status[data-state='offline']")
    assert "No connection" in page.locator(".sync-status").text_content()
    screenshot(page, "offline")

    page.reload()  # still offline: the service worker serves the shell, this device the note and its queue
    page.wait_for_selector(".sync-status[data-state='offline']")
    assert block_texts(page) == ["before typed on a plane", "second line"]
    context.set_offline(False)
    wait_saved(page)
    assert [block["text"] for block in server_blocks(api, note_id)] == ["before typed on a plane", "second line"]
    atoms, _ = op_log_atoms(api, note_id, version_before)
    # Each character is one atom; the new block adds its map, id, type, text and attrs: landed once, not twice.
    assert atoms < 2 * (len(typed) + len("second line")), atoms
    assert server_markdown(api, note_id).count("typed on a plane") == 1


def test_a_key_typed_as_the_page_goes_away_is_kept_and_lands_once(device: Any, web_server: Server,
                                                                  api: httpx.Client) -> None:
    # A keystroke is logged on the device after the frame that shows it: closing the page at
    # once must not lose it, and a save that reached the server as the page went (its answer
    # read by nobody) must not leave the next page stuck resending it.
    note_id = create_note(api, "kept\n", title="Last key")
    context = device()
    page = open_note(context, web_server, note_id)
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    context.set_offline(True)
    page.locator(".editor .block .text").first.click()
    page.keyboard.press("End")
    page.keyboard.type("!")
    page.close()  # at once, as a tab is closed
    page = context.new_page()
    page.goto(f"{web_server.base_url}/notes/{note_id}")
    page.wait_for_selector(".sync-status[data-state='offline']")
    assert block_texts(page) == ["kept!"]
    context.set_offline(False)
    wait_saved(page)
    assert [block["text"] for block in server_blocks(api, note_id)] == ["kept!"]


def test_a_stale_frontier_after_a_concurrent_api_write_is_resolved_with_nothing_lost(
        device: Any, web_server: Server, api: httpx.Client) -> None:
    note_id = create_note(api, "browser text\n", title="Stale")
    context = device()
    # Cut the live feed's long polls, so this tab cannot learn of the API's write before it saves.
    context.route("**/v1/changes*", lambda route: route.abort() if "wait_ms" in route.request.url else route.continue_())
    page = open_note(context, web_server, note_id)
    statuses: list[int] = []
    page.on("response", lambda response: "/ops" in response.url and statuses.append(response.status))

    note = api.get(f"/v1/notes/{note_id}").json()
    doc = LoroDoc()
    doc.import_(api.get(f"/v1/notes/{note_id}/updates").content)
    before = doc.oplog_vv
    blocks = doc.get_movable_list("blocks")
    from loro import LoroMap, LoroText  # the API's writer: another client, building its own update
    block = blocks.insert_container(blocks.__len__(), LoroMap())
    block.insert("id", "01JB2K7Q9XN4M8YV3TD0FZ5ERW")
    block.insert("type", "paragraph")
    block.insert_container("text", LoroText()).insert(0, "api text")
    block.insert_container("attrs", LoroMap())
    doc.commit()
    update = doc.export(ExportMode.Updates(before))
    response = api.post(f"/v1/notes/{note_id}/ops", json={"ops": base64.b64encode(update).decode(),
                                                          "expectedFrontier": note["frontier"]})
    assert response.status_code == 200, response.text

    page.locator(".editor .block .text").first.click()
    page.keyboard.press("End")
    page.keyboard.type(" and more")
    wait_saved(page)
    assert 409 in statuses and statuses[-1] == 200
    assert [block["text"] for block in server_blocks(api, note_id)] == ["browser text and more", "api text"]
    page.wait_for_function("() => document.querySelectorAll('.editor .block').length === 2")


def test_a_wait_the_server_asks_for_is_honoured_and_not_cut_short_by_focus(device: Any, web_server: Server,
                                                                          api: httpx.Client) -> None:
    note_id = create_note(api, "busy\n", title="Retry after")
    context = device()
    page = open_note(context, web_server, note_id)
    posts: list[float] = []
    problem = ('{"type": "https://fastpad.ai/errors/rate-limited", "title": "Rate limited", "status": 429, '
               '"retryable": true, "retry_after_ms": 1500}')

    def first_refused(route: Any) -> None:
        posts.append(time.monotonic() * 1000)
        if len(posts) == 1:
            route.fulfill(status=429, content_type="application/problem+json", body=problem)
        else:
            route.continue_()

    page.route("**/v1/notes/*/ops", first_refused)
    page.locator(".editor .block .text").first.click()
    page.keyboard.press("End")
    page.keyboard.type(" later")
    page.wait_for_selector(".sync-status[data-state='rate-limited']")
    page.evaluate("() => { window.dispatchEvent(new Event('focus')); window.dispatchEvent(new Event('online')); }")
    wait_saved(page)
    assert len(posts) == 2 and posts[1] - posts[0] >= 1400, posts  # the server's 1.5 s, whatever the tab did
    assert [block["text"] for block in server_blocks(api, note_id)] == ["busy later"]


def test_a_note_trashed_while_open_keeps_the_text_and_says_so(device: Any, web_server: Server,
                                                              api: httpx.Client) -> None:
    note_id = create_note(api, "keep me\n", title="Trashed while open")
    page = open_note(device(), web_server, note_id)
    assert api.post(f"/v1/notes/{note_id}/trash", json={}).status_code == 200
    page.wait_for_selector(".sync-status[data-state='trashed']")
    assert "trash" in page.locator(".sync-status").text_content().lower()
    assert block_texts(page) == ["keep me"]
    page.get_by_role("button", name="Restore").click()
    page.wait_for_function("() => !document.querySelector('.banner').textContent.includes('trash')")
    page.locator(".editor .block .text").first.click()
    page.keyboard.press("End")
    page.keyboard.type(" again")
    wait_saved(page)
    assert [block["text"] for block in server_blocks(api, note_id)] == ["keep me again"]


def test_a_session_ended_elsewhere_keeps_the_text_and_says_to_sign_in(browser: Any, web_server: Server,
                                                                       api: httpx.Client) -> None:
    note_id = create_note(api, "draft\n", title="Session ends")
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    try:
        page = context.new_page()
        page.goto(f"{web_server.base_url}/notes/{note_id}")
        sign_in(page, web_server)
        page.wait_for_selector(".editor .block .text")
        wait_saved(page)
        other = context.new_page()  # the same session in another tab: sign out there
        other.goto(f"{web_server.base_url}/")
        other.get_by_role("button", name="Sign out").click()
        other.wait_for_url("**/signin")
        # Signing out leaves no copy of a note on this device, nor the app's cached shell —
        # only the edit still on its way (typed below, in the tab that outlived the session).
        kept = other.evaluate("""async () => {
            const db = await new Promise((ok, no) => { const r = indexedDB.open('fastpad'); r.onsuccess = () => ok(r.result); r.onerror = no; });
            const count = (name) => new Promise((ok) => { const r = db.transaction(name).objectStore(name).count(); r.onsuccess = () => ok(r.result); });
            return {notes: await count('notes'), caches: (await caches.keys()).length};
        }""")
        assert kept == {"notes": 0, "caches": 0}, kept
        page.locator(".editor .block .text").first.click()
        page.keyboard.press("End")
        page.keyboard.type(" continued")
        page.wait_for_selector(".sync-status[data-state='session-ended']")
        assert page.locator(".session-ended").text_content() == "Session ended — sign in again"
        assert block_texts(page) == ["draft continued"]
        other.goto(f"{web_server.base_url}/signin")
        sign_in(other, web_server)
        page.bring_to_front()
        page.evaluate("() => window.dispatchEvent(new Event('focus'))")
        wait_saved(page)
        assert [block["text"] for block in server_blocks(api, note_id)] == ["draft continued"]
    finally:
        context.close()


def test_an_oversize_paste_is_sent_in_smaller_updates_and_arrives_whole(device: Any, web_server: Server,
                                                                        api: httpx.Client) -> None:
    note_id = create_note(api, "start\n", title="Big paste")
    page = open_note(device(), web_server, note_id)
    statuses: list[int] = []
    page.on("response", lambda response: "/ops" in response.url and statuses.append(response.status))
    page.locator(".editor .block .text").first.click()
    page.keyboard.press("End")
    pasted = "0123456789" * 25_000  # 250,000 characters: past the 200,000 atoms one update may add
    page.evaluate("""text => {
        const data = new DataTransfer();
        data.setData('text/plain', text);
        document.activeElement.dispatchEvent(new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true}));
    }""", pasted)
    wait_saved(page)
    assert statuses[0] == 422 and statuses.count(200) >= 2 and statuses[-1] == 200
    [block] = server_blocks(api, note_id)
    assert block["text"] == "start" + pasted


def test_without_local_storage_the_editor_says_so_and_warns_before_a_reload_loses_work(
        device: Any, web_server: Server, api: httpx.Client) -> None:
    note_id = create_note(api, "volatile\n", title="Private window")
    context = device()
    # As a browser that blocks site data: IndexedDB refuses to open.
    context.add_init_script("Object.defineProperty(window, 'indexedDB', {get() { throw new DOMException('blocked', 'SecurityError'); }})")
    page = open_note(context, web_server, note_id)
    assert page.evaluate("() => window.fastpad.page.sync.persistent") is False
    context.set_offline(True)
    page.locator(".editor .block .text").first.click()
    page.keyboard.press("End")
    page.keyboard.type(" unsent")
    page.wait_for_selector(".sync-status[data-state='offline']")
    assert "do not reload" in page.locator(".sync-status").text_content()
    with page.expect_event("dialog") as asked:
        page.close(run_before_unload=True)  # the person tries to leave: the browser asks first
    assert asked.value.type == "beforeunload"
    asked.value.accept()


# ---------------------------------------------------------------------- the shell


def test_the_palette_jumps_to_a_note_by_title_and_runs_commands(device: Any, web_server: Server,
                                                                api: httpx.Client) -> None:
    note_id = create_note(api, "Palette body\n", title="Zanzibar trip")
    page = device().new_page()
    page.goto(f"{web_server.base_url}/")
    page.wait_for_selector(".sidebar")
    page.keyboard.press(f"{MOD}+k")
    page.get_by_role("combobox", name="Command palette").fill("zanzi")
    page.wait_for_selector(".palette-list li.active:has-text('Zanzibar trip')")
    screenshot(page, "palette")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/notes/{note_id}")
    page.wait_for_selector(".editor .block .text")
    page.keyboard.press(f"{MOD}+k")
    page.get_by_role("combobox", name="Command palette").fill("inbox")
    page.keyboard.press("Enter")
    page.wait_for_url("**/inbox")

    # A renamed note is found by its former title too: the alias that [[links]] still resolve by.
    assert api.post(f"/v1/notes/{note_id}/rename", json={"title": "Tanzania trip"}).status_code == 200
    page.reload()
    page.wait_for_selector(".sidebar")
    page.keyboard.press(f"{MOD}+k")
    page.get_by_role("combobox", name="Command palette").fill("zanzi")
    page.wait_for_selector(".palette-list li.active:has-text('Tanzania trip'):has-text('Zanzibar trip')")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/notes/{note_id}")


def test_the_shell_lists_recent_notes_types_inbox_archive_and_trash(device: Any, web_server: Server,
                                                                    api: httpx.Client) -> None:
    typed = create_note(api, "---\ntypes: [Project]\n---\nA project.\n", title="Launch plan")
    archived = create_note(api, "Old.\n", title="Old idea")
    assert api.post(f"/v1/notes/{archived}/archive", json={}).status_code == 200
    page = device().new_page()
    page.goto(f"{web_server.base_url}/")
    page.locator(".nav a", has_text="Launch plan").wait_for()
    page.locator(".nav a", has_text="#Project").click()
    page.wait_for_url("**/types/Project")
    page.locator(".note-row", has_text="Launch plan").wait_for()
    page.locator(".nav a[href='/archive']").click()
    page.locator(".note-row", has_text="Old idea").wait_for()
    screenshot(page, "shell")

    page.get_by_role("search").get_by_role("searchbox").fill("project")
    page.keyboard.press("Enter")
    page.wait_for_url("**/search?q=project")
    page.locator(".results li", has_text="Launch plan").wait_for()

    page.goto(f"{web_server.base_url}/notes/{typed}")
    page.get_by_role("button", name="Move to trash").click()
    page.locator(".banner", has_text="trash").wait_for()
    page.locator(".nav a[href='/trash']").click()
    page.locator(".note-row", has_text="Launch plan").get_by_role("button", name="Restore").click()
    page.locator(".note-row", has_text="Launch plan").wait_for(state="detached")
    assert api.get(f"/v1/notes/{typed}").json()["trashed"] is False


def test_signed_out_the_app_sends_a_person_to_sign_in_and_back(context: Any, web_server: Server) -> None:
    page = context.new_page()
    page.goto(f"{web_server.base_url}/inbox")
    page.wait_for_url("**/signin?next=/inbox")
    sign_in(page, web_server)
    page.wait_for_url("**/inbox")
    page.wait_for_selector(".sidebar")


def test_on_a_phone_and_in_dark_mode_the_note_fits_and_reads(device: Any, web_server: Server,
                                                             api: httpx.Client) -> None:
    note_id = create_note(api, "# Small screen\n\nA paragraph long enough to wrap on a narrow phone screen.\n\n- item\n",
                          title="Phone")
    page = open_note(device(viewport={"width": 390, "height": 844}, color_scheme="dark", is_mobile=True,
                            has_touch=True), web_server, note_id)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    assert sum(int(part) for part in re.findall(r"\d+", background)[:3]) < 150, background  # dark
    assert not page.locator(".sidebar").is_visible() or page.locator(".sidebar").bounding_box()["x"] < 0
    screenshot(page, "phone-dark")
