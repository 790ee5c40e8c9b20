"""What the browser tests do with the server and with a page: create a note over HTTP, open it
in a device, wait until the page says it is saved, read its blocks back from screen and server."""

from __future__ import annotations

from typing import Any

import httpx
from loro import LoroDoc, VersionVector

from tests.api.conftest import Server


def create_note(api: httpx.Client, markdown: str = "", title: str = "") -> str:
    response = api.post("/v1/notes", json={"title": title, "markdown": markdown})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def join_through(context: Any, link: str, name: str, password: str) -> Any:
    """A page of ``context`` that opened an invitation link and joined with ``name`` and ``password``."""
    page = context.new_page()
    page.goto(link)
    page.get_by_label("Display name").fill(name)
    page.get_by_label("Choose a password").fill(password)
    page.get_by_role("button", name="Join").click()
    page.wait_for_url(lambda url: "/invite/" not in url)
    return page


def server_markdown(api: httpx.Client, note_id: str) -> str:
    response = api.get(f"/v1/notes/{note_id}", headers={"accept": "text/markdown"})
    assert response.status_code == 200, response.text
    return response.text


def server_blocks(api: httpx.Client, note_id: str) -> list[dict]:
    return api.get(f"/v1/notes/{note_id}").json()["blocks"]


def open_note(context: Any, server: Server, note_id: str) -> Any:
    page = context.new_page()
    page.goto(f"{server.base_url}/notes/{note_id}")
    page.wait_for_selector(".editor .block .text")
    wait_saved(page)
    return page


def wait_saved(page: Any) -> None:
    """Until the top bar says Saved and nothing typed here is waiting for the server."""
    try:
        page.wait_for_function("() => document.querySelector('.sync-status')?.dataset.state === 'saved'"
                               " && window.fastpad?.page?.sync?.hasUnsent === false")
    except Exception as timeout:  # name what the page was stuck on: a bare timeout says nothing
        stuck = page.evaluate("""() => { const s = window.fastpad?.page?.sync; return s && {
            bar: document.querySelector('.sync-status')?.dataset.state, state: s.state, detail: s.detail,
            hasUnsent: s.hasUnsent, running: s.running, timer: Boolean(s.timer), halted: s.halted,
            fresh: s.fresh?.length, unsent: s.unsent?.length, needPull: s.needPull }; }""")
        raise AssertionError(f"the note never showed Saved: {stuck}") from timeout


def block_texts(page: Any) -> list[str]:
    return page.eval_on_selector_all(".editor .block .text", "els => els.map(e => window.fastpad.page.editor.model.block(e.closest('.block').dataset.id).text)")


def screen_ids(page: Any) -> list[str]:
    return page.eval_on_selector_all(".editor .block", "els => els.map(e => e.dataset.id)")


def click_end_of_block(page: Any, index: int) -> None:
    page.locator(".editor .block .text").nth(index).click()
    page.keyboard.press("End")


def op_log_atoms(api: httpx.Client, note_id: str, since: VersionVector | None = None) -> tuple[int, VersionVector]:
    """How many atoms (characters inserted or deleted, structure ops) the server's op log holds
    past ``since``, and its version now: an op that landed twice would count twice."""
    blob = api.get(f"/v1/notes/{note_id}/updates").content
    doc = LoroDoc()
    doc.import_(blob)
    now = doc.oplog_vv
    spans = now.diff(since or VersionVector()).retreat.inner()
    return sum(end - start for start, end in spans.values()), now
