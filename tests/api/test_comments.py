"""Comments over real HTTP (``fp serve`` on SQLite and PostgreSQL): a member comments on a range
of a note's text and the range follows through 50 remote edits around it; threads, replies,
edit and delete your own, resolve and reopen, each under an idempotency key; a viewer comments;
an @mention in a comment reaches the Inbox; an agent token comments only with notes:write and
never reads the threads here; the note's Markdown is unchanged by any of it. Each test speaks
from a loopback address of its own, as tests/api/test_team.py explains."""

from __future__ import annotations

import base64
import uuid
from contextlib import closing
from typing import Iterator

import httpx
import pytest

from fastpad.notes import NoteDocument
from fastpad.notes.mentions import person_mention

from .conftest import Server
from .test_team import assert_problem, client_from, join, sign_in


@pytest.fixture(scope="module")
def owner_session(server: Server) -> Iterator[httpx.Client]:
    with client_from(server, "127.0.0.60") as client:
        yield sign_in(client, server.owner_email, server.owner_password)


def key() -> dict[str, str]:
    return {"idempotency-key": str(uuid.uuid4())}


def write_note(client: httpx.Client, *texts: str) -> dict:
    answer = client.post("/v1/notes", json={"title": "Draft", "blocks": [{"type": "paragraph", "text": t} for t in texts]})
    assert answer.status_code == 201, answer.text
    return answer.json()


def remote_edit(client: httpx.Client, note_id: str, change) -> None:
    """Someone's edit as their editor sends it: Loro ops on their copy since its frontier."""
    copy = client.get(f"/v1/notes/{note_id}/updates")
    doc, frontier = NoteDocument.load(copy.content), copy.headers["x-fastpad-frontier"]
    change(doc)
    answer = client.post(f"/v1/notes/{note_id}/ops", json={
        "ops": base64.b64encode(doc.export_updates(frontier)).decode(), "peerId": "7", "expectedFrontier": frontier})
    assert answer.status_code == 200, answer.text


def markdown(client: httpx.Client, note_id: str) -> str:
    return client.get(f"/v1/notes/{note_id}", headers={"accept": "text/markdown"}).text


def test_a_range_comment_follows_50_remote_edits_and_a_thread_is_replied_resolved_and_reopened(
        server: Server, owner_session: httpx.Client) -> None:
    member, _ = join(server, owner_session, "127.0.0.61")
    with closing(member):
        note = write_note(owner_session, "alpha beta gamma delta")
        block_id = note["blocks"][0]["id"]
        before = markdown(owner_session, note["id"])
        headers = key()
        request = {"body": "Is this right?", "blockId": block_id, "start": 6, "end": 16}
        made = member.post(f"/v1/notes/{note['id']}/comments", json=request, headers=headers)
        assert made.status_code == 201, made.text
        thread = made.json()
        assert (thread["anchor"], thread["quote"], thread["range"]) == ("text", "beta gamma", {"start": 6, "end": 16})
        replayed = member.post(f"/v1/notes/{note['id']}/comments", json=request, headers=headers)
        assert replayed.json() == thread  # the same key: the first answer, no second thread
        assert markdown(owner_session, note["id"]) == before  # comments are not note content

        for step in range(50):
            def around(doc: NoteDocument, step: int = step) -> None:
                text = doc.block(block_id).text
                start = text.index("beta gamma")
                doc.insert_text(block_id, start if step % 2 else start + len("beta gamma"), f"[{step}]")
            remote_edit(owner_session, note["id"], around)

        [now] = member.get(f"/v1/notes/{note['id']}/comments").json()["items"]
        text = owner_session.get(f"/v1/notes/{note['id']}").json()["blocks"][0]["text"]
        assert text[now["range"]["start"]:now["range"]["end"]] == "beta gamma" and not now["on_deleted"]

        reply = member.post(f"/v1/notes/{note['id']}/comments", json={"body": "Yes.", "threadId": thread["id"]},
                            headers=key()).json()
        reply_id = reply["comments"][1]["id"]
        assert_problem(owner_session.patch(f"/v1/comments/{reply_id}", json={"body": "not mine"}, headers=key()),
                       403, "policy-denied")
        edited = member.patch(f"/v1/comments/{reply_id}", json={"body": "Yes, checked."}, headers=key())
        assert edited.json()["comments"][1]["body"] == "Yes, checked." and edited.json()["comments"][1]["edited_at"]
        resolved = owner_session.post(f"/v1/comments/{thread['id']}/resolve", headers=key()).json()
        assert resolved["resolved"] and member.get(f"/v1/notes/{note['id']}/comments?open=true").json()["items"] == []
        assert not member.post(f"/v1/comments/{reply_id}/reopen", headers=key()).json()["resolved"]
        assert member.delete(f"/v1/comments/{reply_id}", headers=key()).status_code == 204
        assert_problem(member.patch(f"/v1/comments/{reply_id}", json={"body": "gone"}, headers=key()), 404, "not-found")
        assert len(member.get(f"/v1/notes/{note['id']}/comments").json()["items"][0]["comments"]) == 1


def test_deleting_the_commented_text_keeps_the_thread_and_bad_input_is_refused(
        server: Server, owner_session: httpx.Client) -> None:
    note = write_note(owner_session, "keep this, drop that")
    block_id = note["blocks"][0]["id"]
    url = f"/v1/notes/{note['id']}/comments"
    for body, status, slug in [
        ({"body": "x", "blockId": block_id, "start": 5, "end": 99}, 422, "validation-failed"),
        ({"body": "x", "blockId": block_id, "start": 5}, 422, "validation-failed"),
        ({"body": "", "blockId": block_id}, 422, "validation-failed"),
        ({"body": "x", "blockId": block_id, "threadId": block_id}, 422, "validation-failed"),
        ({"body": "x", "blockId": "01HZZZZZZZZZZZZZZZZZZZZZZZ"}, 404, "not-found"),
    ]:
        assert_problem(owner_session.post(url, json=body, headers=key()), status, slug)
    assert owner_session.get(url).json()["items"] == []  # nothing half-written

    thread = owner_session.post(url, json={"body": "drop it?", "blockId": block_id, "start": 11, "end": 20},
                                headers=key()).json()
    remote_edit(owner_session, note["id"], lambda doc: doc.delete_text(block_id, 9, 11))
    [kept] = owner_session.get(url).json()["items"]
    assert (kept["id"], kept["on_deleted"], kept["range"], kept["quote"]) == (thread["id"], True, None, "drop that")
    assert kept["comments"][0]["body"] == "drop it?"


def test_a_viewer_comments_and_a_mention_in_a_comment_reaches_the_inbox(
        server: Server, owner_session: httpx.Client) -> None:
    viewer, _ = join(server, owner_session, "127.0.0.62", role="viewer")
    member, _ = join(server, owner_session, "127.0.0.63")
    with closing(viewer), closing(member):
        member_id = member.get("/v1/account").json()["id"]
        note = write_note(owner_session, "a paragraph")
        made = viewer.post(f"/v1/notes/{note['id']}/comments", headers=key(), json={
            "body": f"{person_mention(member_id, 'Member')} have a look", "blockId": note["blocks"][0]["id"]})
        assert made.status_code == 201, made.text
        assert made.json()["comments"][0]["author"]["name"] == "Viewer"
        [entry] = member.get("/v1/inbox/mentions").json()["items"]
        comment_id = made.json()["id"]
        assert (entry["comment_id"], entry["url"]) == (comment_id, f"/notes/{note['id']}#comment-{comment_id}")
        assert entry["excerpt"].endswith("have a look")


def test_an_agent_comments_with_notes_write_only_and_reads_no_threads_here(
        server: Server, owner_session: httpx.Client) -> None:
    note = write_note(owner_session, "secret-free text the agent may quote")
    block_id = note["blocks"][0]["id"]
    url = f"/v1/notes/{note['id']}/comments"
    owner_session.post(url, json={"body": "a person's remark", "blockId": block_id}, headers=key())
    with server.client(server.mint("notes:read,notes:propose")["token"]) as reader:
        assert_problem(reader.post(url, json={"body": "may I?", "blockId": block_id}, headers=key()),
                       403, "insufficient-scope")
    with server.client(server.mint("notes:read,notes:write")["token"]) as writer:
        made = writer.post(url, json={"body": "An agent's remark", "blockId": block_id, "start": 0, "end": 6},
                           headers=key())
        assert made.status_code == 201, made.text
        shown = made.json()
        assert [c["author"]["kind"] for c in shown["comments"]] == ["agent"]
        assert shown["quote"] is None  # the note's text reaches an agent through fastpad_fetch only
        assert_problem(writer.get(url), 403, "policy-denied")
    authors = [c["author"]["kind"] for t in owner_session.get(url).json()["items"] for c in t["comments"]]
    assert authors == ["person", "agent"]
    activity = owner_session.get("/agent-activity")  # a person's page: the agent's comment is listed
    assert activity.status_code == 200 and "Comments by agents" in activity.text
    assert f'href="/notes/{note["id"]}#comment-{shown["id"]}"' in activity.text and "An agent&#x27;s remark" in activity.text
