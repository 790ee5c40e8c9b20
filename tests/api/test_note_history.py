"""A note's history over real HTTP (``fp serve`` on SQLite and PostgreSQL): 50 edits by two
people as their editors send them (Loro updates), the timeline grouped into sessions per
author, the note as it was at version 10, restoring it — the whole note and one block — as a
new change by the restorer, and the typed refusals (a malformed or unknown version, agents)."""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator

import httpx
import pytest

from fastpad.notes import Block, NoteDocument, NoteMeta, new_id

from .conftest import Server
from .helpers import assert_problem, new_person
from .test_turns import HttpAgent

MARKDOWN = {"accept": "text/markdown"}


@pytest.fixture(scope="module")
def second_person(server: Server) -> Iterator[tuple[httpx.Client, str]]:
    """Another member of the workspace, signed in over HTTP: (client, person id)."""
    email, password = new_person(server)
    with server.client() as client:
        answer = client.post("/v1/session", json={"email": email, "password": password})
        assert answer.status_code == 201, answer.text
        client.headers["x-csrf-token"] = answer.json()["csrf_token"]
        yield client, answer.json()["principal_id"]


def save(client: httpx.Client, note_id: str, change: Callable[[NoteDocument], None]) -> str:
    """A person's editor: open the note's snapshot, edit it, send the update; the new frontier."""
    opened = client.get(f"/v1/notes/{note_id}/snapshot")
    assert opened.status_code == 200, opened.text
    frontier = opened.headers["x-fastpad-frontier"]
    doc = NoteDocument.load(opened.content)
    change(doc)
    sent = client.post(f"/v1/notes/{note_id}/ops", json={
        "ops": base64.b64encode(doc.export_updates(frontier)).decode(), "expectedFrontier": frontier})
    assert sent.status_code == 200, sent.text
    return sent.json()["frontier"]


def markdown(client: httpx.Client, note_id: str) -> str:
    answer = client.get(f"/v1/notes/{note_id}", headers=MARKDOWN)
    assert answer.status_code == 200, answer.text
    return answer.text


def edit_number(i: int) -> Callable[[NoteDocument], None]:
    """The i-th edit of the fifty: mostly typing, and now and then a new block, a deleted one
    or a rename, so a version differs from now in every way a note can."""
    def change(doc: NoteDocument) -> None:
        blocks = doc.blocks()
        if i % 10 == 3:
            doc.insert_after(blocks[-1].id, Block(None, "paragraph", f"Block added by edit {i}."))
        elif i % 10 == 7 and len(blocks) > 2:
            doc.delete(blocks[1].id)
        elif i % 10 == 9:
            doc.set_meta(NoteMeta(f"Plan, edit {i}", doc.meta.types, doc.meta.properties))
        else:
            target = blocks[i % len(blocks)]
            doc.replace_text(target.id, f"{target.text.split(' / ')[0]} / edit {i}")
    return change


def all_sessions(client: httpx.Client, note_id: str, limit: int) -> list[dict]:
    sessions, cursor = [], None
    while True:
        page = client.get(f"/v1/notes/{note_id}/history",
                          params={"limit": limit, **({"cursor": cursor} if cursor else {})})
        assert page.status_code == 200, page.text
        assert page.json()["compacted_before"] is None  # nothing is folded away yet
        sessions += page.json()["sessions"]
        cursor = page.json()["next_cursor"]
        if cursor is None:
            return sessions


def test_fifty_edits_by_two_people_view_version_ten_and_restore_it(
        server: Server, owner: httpx.Client, second_person: tuple[httpx.Client, str]) -> None:
    other, other_id = second_person
    created = owner.post("/v1/notes", json={"title": "Plan", "blocks": [
        {"text": "Arrive Monday"}, {"text": "Museum Tuesday"}, {"text": "Leave Wednesday"}]})
    assert created.status_code == 201, created.text
    note = created.json()["id"]
    owner_id = owner.get(f"/v1/notes/{note}/history").json()["sessions"][0]["author"]["id"]

    frontiers, versions = [], []
    for i in range(1, 51):  # five edits by one person, then five by the other, …
        frontiers.append(save(owner if (i - 1) // 5 % 2 == 0 else other, note, edit_number(i)))
        versions.append(markdown(owner, note))
    now = markdown(owner, note)

    # The note as it was after edit 10, read-only: its Markdown, and each block against now.
    tenth = owner.get(f"/v1/notes/{note}", params={"at": frontiers[9]})
    assert tenth.status_code == 200, tenth.text
    assert tenth.json()["markdown"] == versions[9] != now
    assert tenth.json()["current_frontier"] == frontiers[-1]
    assert owner.get(f"/v1/notes/{note}", params={"at": frontiers[9]}, headers=MARKDOWN).text == versions[9]
    statuses = {d["status"] for d in tenth.json()["diff"]}
    assert {"changed", "removed", "added"} <= statuses, statuses
    assert markdown(owner, note) == now  # viewing changed nothing

    # The timeline, newest first: ten sessions of five edits, alternating people (the owner's
    # first session holds the create too).
    sessions = all_sessions(owner, note, limit=3)
    assert all_sessions(owner, note, limit=100) == sessions  # keyset pages add up to the whole
    assert [s["changes"] for s in sessions] == [5] * 9 + [6]
    assert [s["author"]["id"] for s in sessions] == [other_id, owner_id] * 5
    assert sessions[-1]["kinds"] == ["create", "ops"] and sessions[0]["kinds"] == ["ops"]
    assert all(s["author"]["kind"] == "person" and s["author"]["name"] for s in sessions)
    assert sessions[0]["frontier"] == frontiers[-1] and sessions[8]["frontier"] == frontiers[9]
    assert sessions[0]["frontier_before"] == frontiers[44] and sessions[-1]["frontier_before"] is None
    assert all(s["blocks_touched"] and s["proposal"] is None and not s["restore"] for s in sessions)

    # The other person restores version 10: the note reads as it did, as one new change of theirs.
    restored = other.post(f"/v1/notes/{note}/history:restore", json={"at": frontiers[9], "idempotencyKey": new_id()})
    assert restored.status_code == 200, restored.text
    assert restored.json()["changed"] and restored.json()["frontier"] != frontiers[-1]
    assert markdown(owner, note) == versions[9]
    after = all_sessions(owner, note, limit=100)
    assert after[0]["restore"] and after[0]["author"]["id"] == other_id and after[0]["changes"] == 1
    assert after[0]["kinds"] == ["version_restore"] and after[0]["frontier_before"] == frontiers[-1]
    assert after[1:] == sessions  # history is kept, nothing rewritten
    # Every version is still there to view, the latest before the restore too.
    assert owner.get(f"/v1/notes/{note}", params={"at": frontiers[-1]}, headers=MARKDOWN).text == now
    # Restoring the version it already reads as is no change at all.
    again = other.post(f"/v1/notes/{note}/history:restore", json={"at": frontiers[9]})
    assert again.status_code == 200 and not again.json()["changed"]


def test_restore_one_block_leaves_the_rest_as_it_is(
        server: Server, owner: httpx.Client, second_person: tuple[httpx.Client, str]) -> None:
    other, other_id = second_person
    created = owner.post("/v1/notes", json={"title": "Menu", "blocks": [{"text": "Soup"}, {"text": "Bread"},
                                                                         {"text": "Cake"}]})
    note = created.json()["id"]
    soup, bread, cake = (b["id"] for b in created.json()["blocks"])
    early = save(owner, note, lambda doc: doc.replace_text(soup, "Tomato soup"))
    save(other, note, lambda doc: doc.replace_text(soup, "Onion soup"))
    save(other, note, lambda doc: doc.replace_text(bread, "Sourdough"))
    save(other, note, lambda doc: doc.delete(cake))

    one = owner.post(f"/v1/notes/{note}/history:restore", json={"at": early, "block_id": soup})
    assert one.status_code == 200, one.text
    texts = [(b["id"], b["text"]) for b in owner.get(f"/v1/notes/{note}").json()["blocks"]]
    assert texts == [(soup, "Tomato soup"), (bread, "Sourdough")]
    # A block deleted since comes back under its own id, where it stood.
    back = owner.post(f"/v1/notes/{note}/history:restore", json={"at": early, "block_id": cake})
    assert back.status_code == 200, back.text
    texts = [(b["id"], b["text"]) for b in owner.get(f"/v1/notes/{note}").json()["blocks"]]
    assert texts == [(soup, "Tomato soup"), (bread, "Sourdough"), (cake, "Cake")]
    newest = owner.get(f"/v1/notes/{note}/history").json()["sessions"]
    assert [(s["restore"], s["blocks_touched"]) for s in newest[:2]] == [(True, [cake]), (True, [soup])]
    # A block the note did not have at that version is not found; nothing is written.
    assert_problem(owner.post(f"/v1/notes/{note}/history:restore", json={"at": early, "block_id": new_id()}),
                   404, "not-found", server.base_url)
    assert len(owner.get(f"/v1/notes/{note}/history").json()["sessions"]) == len(newest)


def test_a_malformed_or_unknown_version_is_a_typed_422(server: Server, owner: httpx.Client) -> None:
    note = owner.post("/v1/notes", json={"title": "A", "blocks": [{"text": "a"}]}).json()
    elsewhere = owner.post("/v1/notes", json={"title": "B", "blocks": [{"text": "b"}]}).json()
    # Not the shape of a frontier: the schema's pattern; the shape but not Loro's bytes, or a
    # version of another note: the service's codes. Each names `at`.
    unknown = save(owner, elsewhere["id"], lambda doc: doc.replace_text(doc.blocks()[0].id, "c"))
    for at, codes in (("yesterday", {"string_pattern_mismatch"}), ("fp1:!!", {"string_pattern_mismatch"}),
                      ("fp1:A", {"malformed_frontier"}), ("fp1:AAAA", {"malformed_frontier"}),
                      (unknown, {"unknown_frontier"})):
        for answer in (owner.get(f"/v1/notes/{note['id']}", params={"at": at}),
                       owner.post(f"/v1/notes/{note['id']}/history:restore", json={"at": at})):
            body = assert_problem(answer, 422, "validation-failed", server.base_url)
            [(field, code)] = [(e["field"], e["code"]) for e in body["field_errors"]]
            assert field.split(".")[-1] == "at" and code in codes, body
    assert_problem(owner.get(f"/v1/notes/{note['id']}/history", params={"cursor": "nope"}),
                   422, "validation-failed", server.base_url)


def test_an_agents_change_names_its_proposal_and_agents_neither_read_history_nor_restore(
        server: Server, owner: httpx.Client) -> None:
    created = owner.post("/v1/notes", json={"title": "Shared", "blocks": [{"text": "Ours."}]}).json()
    note, first = created["id"], created["frontier"]
    agent = HttpAgent(server, "notes:read,notes:propose", "--auto-apply", "--label", "tests: historian")
    read = agent.read(note)
    turn = agent.propose(note, [{"op": "insert_after", "handle": read["blocks"][0]["handle"], "text": "Theirs."}],
                         read["frontier"])
    assert turn.status_code == 201 and turn.json()["auto_applied"], turn.text

    newest = owner.get(f"/v1/notes/{note}/history").json()["sessions"][0]
    assert newest["author"]["kind"] == "agent" and newest["author"]["name"] == "tests: historian"
    assert newest["proposal"]["id"] == turn.json()["id"]
    assert newest["blocks_touched"] == turn.json()["landed_block_ids"]

    # A person who restores the agent's words does not make them their own: the rule of a save holds.
    (theirs,) = turn.json()["landed_block_ids"]
    landed = newest["frontier"]
    save(owner, note, lambda doc: doc.replace_text(theirs, "Theirs, edited."))
    restored = owner.post(f"/v1/notes/{note}/history:restore", json={"at": landed, "block_id": theirs})
    assert restored.status_code == 200 and restored.json()["changed"], restored.text
    block = owner.get(f"/v1/notes/{note}/blocks/{theirs}").json()
    assert (block["text"], block["origin"], block["review_state"]) == ("Theirs.", "agent_written", "unreviewed")
    newest = owner.get(f"/v1/notes/{note}/history").json()["sessions"][0]
    assert newest["restore"] and newest["author"]["kind"] == "person"

    for answer in (agent.client.get(f"/v1/notes/{note}/history"),
                   agent.client.get(f"/v1/notes/{note}", params={"at": first}),
                   agent.client.post(f"/v1/notes/{note}/history:restore", json={"at": first})):
        assert_problem(answer, 403, "policy-denied", server.base_url)
    assert owner.get(f"/v1/notes/{note}/history").json()["sessions"][0] == newest  # nothing restored


def test_a_viewer_reads_history_and_restores_nothing(server: Server, owner: httpx.Client) -> None:
    from fastpad.deployment import open_deployment

    email, password = f"viewer-{new_id()[-6:].lower()}@example.com", "viewer-password-1"
    with open_deployment(server.data_dir, pool_size=1) as deployment:
        deployment.people.create_person(server.workspace_id, email, password=password, role="viewer")
    created = owner.post("/v1/notes", json={"title": "Read me", "blocks": [{"text": "First."}]}).json()
    save(owner, created["id"], lambda doc: doc.replace_text(doc.blocks()[0].id, "Second."))
    with server.client() as viewer:
        answer = viewer.post("/v1/session", json={"email": email, "password": password})
        viewer.headers["x-csrf-token"] = answer.json()["csrf_token"]
        assert viewer.get(f"/v1/notes/{created['id']}/history").status_code == 200
        first = viewer.get(f"/v1/notes/{created['id']}", params={"at": created["frontier"]}, headers=MARKDOWN)
        assert first.status_code == 200 and "First." in first.text
        refused = viewer.post(f"/v1/notes/{created['id']}/history:restore", json={"at": created["frontier"]})
        assert refused.status_code == 403, refused.text
    assert owner.get(f"/v1/notes/{created['id']}").json()["blocks"][0]["text"] == "Second."
