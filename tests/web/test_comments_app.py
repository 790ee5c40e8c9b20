"""Comments in the app, two people in two Chromium contexts against a real ``fp serve``: Ada (a
member) selects words in a note and comments on them, mentioning Bea; the block shows a marker;
Bea, made a viewer, reads the thread, replies (a viewer comments) and finds the mention in her
Inbox; Ada types before the commented words and the thread still covers them; Ada edits her
comment (Bea is offered no Edit on it) and resolves the thread. The note's Markdown never
holds a comment."""

from __future__ import annotations

from typing import Any

import httpx

from tests.api.conftest import Server
from tests.web.conftest import screenshot
from tests.web.helpers import create_note, open_note, server_markdown, wait_saved
from tests.web.test_carets import owner_session, people  # noqa: F401 — the fixtures: two members, A and B

SELECT = """([blockIndex, from, to]) => {
  const text = document.querySelectorAll('.editor .block .text')[blockIndex];
  const range = document.createRange();
  range.setStart(text.firstChild, from);
  range.setEnd(text.firstChild, to);
  const selection = document.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
}"""


def account(context: Any, server: Server) -> dict:
    return context.request.get(f"{server.base_url}/v1/account").json()


def test_two_people_comment_reply_mention_edit_and_resolve(
        web_server: Server, owner_session: httpx.Client, people: tuple[Any, Any]) -> None:  # noqa: F811
    ada, bea = people
    bea_id = account(bea, web_server)["id"]
    note_id = create_note(owner_session, "alpha beta gamma delta\n\nSecond paragraph.\n", title="Reviewed plan")
    markdown = server_markdown(owner_session, note_id)

    page_a = open_note(ada, web_server, note_id)
    page_a.evaluate(SELECT, [0, 6, 16])
    page_a.get_by_role("button", name="Comment", exact=True).click()
    draft = page_a.locator(".comment-draft")
    assert draft.locator("q").inner_text() == "beta gamma"
    draft.get_by_label("Comment").fill(f"Is this right, [@Bea Member](/people/{bea_id})?")
    draft.get_by_role("button", name="Post").click()
    thread = page_a.locator(".comment-thread").first
    thread.locator(".comment-body").wait_for()
    assert thread.locator(".comment-anchor q").inner_text() == "beta gamma"
    page_a.locator(".editor .block").first.locator(".comment-marker", has_text="1").wait_for()

    member = next(m for m in owner_session.get("/v1/members").json()["items"] if m["id"] == bea_id)
    made_viewer = owner_session.patch(f"/v1/members/{bea_id}", json={"role": "viewer"})
    assert made_viewer.status_code == 200 and member["role"] == "member", made_viewer.text
    page_b = open_note(bea, web_server, note_id)
    page_b.get_by_text("You can read and comment").wait_for()
    thread_b = page_b.locator(".comment-thread").first
    thread_b.locator(".comment-body", has_text="Is this right, @Bea Member?").wait_for()  # a mention reads as a name
    assert thread_b.get_by_role("button", name="Edit").count() == 0  # Ada's comment is not Bea's to edit
    thread_b.get_by_label("Reply").fill("Yes, checked against the brief.")
    thread_b.get_by_role("button", name="Reply").click()
    thread_b.locator(".comment-body", has_text="Yes, checked").wait_for()
    [entry] = bea.request.get(f"{web_server.base_url}/v1/inbox/mentions").json()["items"]
    assert entry["comment_id"] == thread_b.get_attribute("data-thread")

    page_a.locator(".editor .block .text").first.click()
    page_a.keyboard.press("Home")
    page_a.keyboard.type("Now: ")
    wait_saved(page_a)
    [listed] = owner_session.get(f"/v1/notes/{note_id}/comments").json()["items"]
    text = owner_session.get(f"/v1/notes/{note_id}").json()["blocks"][0]["text"]
    assert text.startswith("Now: ") and text[listed["range"]["start"]:listed["range"]["end"]] == "beta gamma"

    page_a.reload()
    page_a.locator(".comment-thread .comment-body", has_text="Yes, checked").wait_for()  # Bea's reply reached Ada
    page_a.locator(".editor .block").first.locator(".comment-marker", has_text="2").wait_for()
    first = page_a.locator(".comment-thread .comment").first
    first.get_by_role("button", name="Edit").click()
    page_a.locator(".comment-edit textarea").fill("Is this right? Second look.")
    page_a.get_by_role("button", name="Save").click()
    page_a.locator(".comment-body", has_text="Second look").wait_for()
    screenshot(page_a, "comments-thread")
    page_a.locator(".comment-thread").first.get_by_role("button", name="Resolve").click()
    page_a.locator(".resolved-threads summary", has_text="Resolved · 1").wait_for()
    assert page_a.locator(".editor .comment-marker").count() == 0  # a resolved thread leaves no marker
    # Comments are not note content: the Markdown changed by Ada's typing alone.
    assert server_markdown(owner_session, note_id) == markdown.replace("alpha beta", "Now: alpha beta", 1)
