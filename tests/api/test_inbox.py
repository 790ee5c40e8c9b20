"""A person's Inbox of mentions over real HTTP (``fp serve`` on SQLite and PostgreSQL): the
owner mentions a member and a viewer in a note; each finds it in ``GET /v1/inbox/mentions``
(who, which note and block, the link that opens it), pages by cursor, marks it read; writing
the mention again adds nothing; no agent token reaches an Inbox. Each test speaks from a
loopback address of its own, as tests/api/test_team.py explains."""

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
    with client_from(server, "127.0.0.50") as client:
        yield sign_in(client, server.owner_email, server.owner_password)


def key() -> dict[str, str]:
    return {"idempotency-key": str(uuid.uuid4())}


def write_note(client: httpx.Client, title: str, *texts: str) -> dict:
    answer = client.post("/v1/notes", json={"title": title, "blocks": [{"type": "paragraph", "text": t} for t in texts]})
    assert answer.status_code == 201, answer.text
    return answer.json()


def retype(client: httpx.Client, note_id: str, block_id: str, text: str) -> None:
    copy = client.get(f"/v1/notes/{note_id}/updates")
    doc, frontier = NoteDocument.load(copy.content), copy.headers["x-fastpad-frontier"]
    doc.replace_text(block_id, text)
    answer = client.post(f"/v1/notes/{note_id}/ops", json={
        "ops": base64.b64encode(doc.export_updates(frontier)).decode(), "peerId": "5", "expectedFrontier": frontier})
    assert answer.status_code == 200, answer.text


def test_a_mentioned_member_and_viewer_find_it_in_their_inbox_and_mark_it_read(
        server: Server, owner_session: httpx.Client) -> None:
    member, _ = join(server, owner_session, "127.0.0.51")
    viewer, _ = join(server, owner_session, "127.0.0.52", role="viewer")
    with closing(member), closing(viewer):
        member_id, viewer_id = (c.get("/v1/account").json()["id"] for c in (member, viewer))
        owner_name = owner_session.get("/v1/account").json()
        note = write_note(owner_session, "Standup", "intro",
                          f"{person_mention(member_id, 'Member')} and {person_mention(viewer_id, 'Viewer')}: read this")
        block_id = note["blocks"][1]["id"]

        for client in (member, viewer):
            page = client.get("/v1/inbox/mentions").json()
            assert page["unread"] == 1 and page["next_cursor"] is None
            [entry] = page["items"]
            assert (entry["note_id"], entry["block_id"], entry["note_title"], entry["url"]) == (
                note["id"], block_id, "Standup", f"/notes/{note['id']}#{block_id}")
            assert entry["mentioned_by"]["id"] == owner_name["id"] and entry["mentioned_by"]["kind"] == "person"
            assert entry["read"] is False
        assert owner_session.get("/v1/inbox/mentions").json()["items"] == []
        # An agent reading the note through the outbound path gets the mention as written — the
        # name it shows and the person's id, a relative link left alone — and no email.
        with server.client(server.mint("notes:read")["token"]) as agent:
            read = agent.get(f"/v1/notes/{note['id']}", headers={"accept": "text/markdown"})
            assert read.status_code == 200 and person_mention(member_id, "Member") in read.text
            assert "@example.com" not in read.text

        entry_id = member.get("/v1/inbox/mentions").json()["items"][0]["id"]
        # Nobody else marks it; the member does.
        assert_problem(viewer.patch(f"/v1/inbox/mentions/{entry_id}", json={"read": True}, headers=key()),
                       404, "not-found")
        marked = member.patch(f"/v1/inbox/mentions/{entry_id}", json={"read": True}, headers=key())
        assert marked.status_code == 200 and marked.json()["read"] is True, marked.text
        assert member.get("/v1/inbox/mentions", params={"unread": "true"}).json() == {
            "items": [], "unread": 0, "next_cursor": None}
        assert viewer.post("/v1/inbox/mentions:read-all", json={}, headers=key()).json() == {"marked": 1}


def test_pages_by_cursor_and_no_duplicate_for_the_same_block(server: Server, owner_session: httpx.Client) -> None:
    member, _ = join(server, owner_session, "127.0.0.53")
    with closing(member):
        member_id = member.get("/v1/account").json()["id"]
        mention = person_mention(member_id, "Member")
        notes = [write_note(owner_session, f"Note {i}", f"{i}: {mention}") for i in range(3)]
        # The same block retyped as the editor sends it (a Loro update), the mention removed, then
        # written back: still one entry for it.
        block_id = notes[0]["blocks"][0]["id"]
        for text in ("0: mention gone", f"0: back, {mention}"):
            retype(owner_session, notes[0]["id"], block_id, text)
        assert owner_session.post(f"/v1/notes/{notes[0]['id']}/rename", json={"title": "Renamed"}).status_code == 200
        first = member.get("/v1/inbox/mentions", params={"limit": 2}).json()
        second = member.get("/v1/inbox/mentions", params={"limit": 2, "cursor": first["next_cursor"]}).json()
        titles = [e["note_title"] for e in first["items"] + second["items"]]
        assert titles == ["Note 2", "Note 1", "Renamed"] and second["next_cursor"] is None
        assert_problem(member.get("/v1/inbox/mentions", params={"cursor": "nope"}), 422, "validation-failed")


def test_no_agent_token_reaches_an_inbox(server: Server) -> None:
    with server.client(server.mint("notes:read,notes:propose")["token"]) as agent:
        assert_problem(agent.get("/v1/inbox/mentions"), 403, "policy-denied")
        assert_problem(agent.post("/v1/inbox/mentions:read-all", json={}, headers=key()), 403, "policy-denied")
