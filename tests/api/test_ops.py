"""POST /v1/notes/{id}/ops over HTTP: real Loro updates, stale frontiers, refused snapshots.

The client's copy of a note comes from GET /v1/notes/{id}/updates, as an
editor acting for a person gets it.
"""

from __future__ import annotations

import base64
import uuid

import pytest
from loro import EncodedBlobMode, ExportMode, LoroDoc

from fastpad.notes import NoteDocument

from tests.api.helpers import assert_problem


@pytest.fixture(scope="module")
def client_copy(owner):
    def copy(note_id: str) -> tuple[NoteDocument, str]:
        response = owner.get(f"/v1/notes/{note_id}/updates")
        assert response.status_code == 200, response.text
        return NoteDocument.load(response.content), response.headers["x-fastpad-frontier"]

    return copy


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _note(owner, *texts: str) -> dict:
    created = owner.post("/v1/notes", json={"title": "ops", "blocks": [{"text": t} for t in texts]})
    assert created.status_code == 201, created.text
    return created.json()


def test_an_update_applies_and_the_frontier_moves(owner, client_copy):
    note = _note(owner, "before")
    block_id = note["blocks"][0]["id"]
    doc, frontier = client_copy(note["id"])
    assert frontier == note["frontier"]
    doc.replace_text(block_id, "after, over HTTP")
    response = owner.post(f"/v1/notes/{note['id']}/ops", json={
        "ops": b64(doc.export_updates(frontier)), "peerId": "7", "expectedFrontier": frontier,
    })
    assert response.status_code == 200, response.text
    assert response.json()["note_id"] == note["id"]
    after = owner.get(f"/v1/notes/{note['id']}").json()
    assert after["frontier"] == response.json()["frontier"] != frontier
    assert after["blocks"][0]["text"] == "after, over HTTP"


def test_a_stale_frontier_is_409_naming_both_states_and_a_keyed_retry_replays(owner, client_copy, server):
    note = _note(owner, "one")
    block_id = note["blocks"][0]["id"]
    first_doc, frontier = client_copy(note["id"])
    second_doc, _ = client_copy(note["id"])
    first_doc.replace_text(block_id, "first writer")
    second_doc.replace_text(block_id, "second writer")
    key = str(uuid.uuid4())
    body = {"ops": b64(first_doc.export_updates(frontier)), "expectedFrontier": frontier, "idempotencyKey": key}
    applied = owner.post(f"/v1/notes/{note['id']}/ops", json=body)
    assert applied.status_code == 200, applied.text
    current = applied.json()["frontier"]

    stale = owner.post(f"/v1/notes/{note['id']}/ops", json={
        "ops": b64(second_doc.export_updates(frontier)), "expectedFrontier": frontier,
    })
    problem = assert_problem(stale, 409, "stale-frontier", server.base_url)
    assert problem["expected_frontier"] == frontier and problem["current_frontier"] == current
    assert problem["retryable"] is True

    # The first request retried under its key (a lost response): replayed, not stale.
    replay = owner.post(f"/v1/notes/{note['id']}/ops", json=body)
    assert replay.status_code == 200 and replay.content == applied.content
    assert replay.headers["idempotent-replayed"] == "true"
    assert owner.get(f"/v1/notes/{note['id']}").json()["blocks"][0]["text"] == "first writer"


def test_a_snapshot_sent_as_ops_is_refused_with_mode(owner, client_copy, server):
    note = _note(owner, "text")
    doc, frontier = client_copy(note["id"])
    raw = LoroDoc()
    raw.import_(doc.snapshot())
    raw.get_movable_list("blocks").get(0).container.get("text").container.insert(0, "x")
    update = raw.export(ExportMode.Updates(doc.loro.oplog_vv))
    snapshot = raw.export(ExportMode.Snapshot())
    refused = owner.post(f"/v1/notes/{note['id']}/ops", json={"ops": b64(snapshot), "expectedFrontier": frontier})
    problem = assert_problem(refused, 422, "validation-failed", server.base_url)
    assert problem["retryable"] is False
    assert {(fe["field"], fe["code"]) for fe in problem["field_errors"]} == {("ops", "mode")}
    assert owner.get(f"/v1/notes/{note['id']}").json()["frontier"] == frontier, "nothing applied"
    accepted = owner.post(f"/v1/notes/{note['id']}/ops", json={"ops": b64(update), "expectedFrontier": frontier})
    assert accepted.status_code == 200, accepted.text


def test_malformed_ops_and_frontiers_are_422(owner, server):
    note = _note(owner, "x")
    not_b64 = owner.post(f"/v1/notes/{note['id']}/ops", json={"ops": "%%%", "expectedFrontier": note["frontier"]})
    assert assert_problem(not_b64, 422, "validation-failed", server.base_url)["field_errors"][0]["code"] == "base64"
    garbage = owner.post(f"/v1/notes/{note['id']}/ops", json={"ops": b64(b"not loro"), "expectedFrontier": note["frontier"]})
    assert assert_problem(garbage, 422, "validation-failed", server.base_url)["field_errors"][0]["field"] == "ops"
    bad_frontier = owner.post(f"/v1/notes/{note['id']}/ops", json={"ops": b64(b"x"), "expectedFrontier": "v1"})
    codes = [fe["code"] for fe in assert_problem(bad_frontier, 422, "validation-failed", server.base_url)["field_errors"]]
    assert codes == ["malformed_frontier"]
    missing = owner.post(f"/v1/notes/{note['id']}/ops", json={"ops": b64(b"x")})
    assert assert_problem(missing, 422, "validation-failed", server.base_url)["field_errors"][0]["field"] == "expectedFrontier"


def test_agents_never_write_ops_they_propose_and_auto_applied_text_stays_unreviewed(owner, client_copy, server):
    note = _note(owner, "human words")
    block_id = note["blocks"][0]["id"]
    doc, frontier = client_copy(note["id"])
    doc.replace_text(block_id, "agent words")
    body = {"ops": b64(doc.export_updates(frontier)), "expectedFrontier": frontier}
    plain = server.mint("notes:read,notes:write", "--label", "tests: agent")
    with server.client(plain["token"]) as agent:
        assert_problem(agent.post(f"/v1/notes/{note['id']}/ops", json=body), 403, "policy-denied", server.base_url)
    auto = server.mint("notes:read,notes:write,notes:propose", "--auto-apply", "--label", "tests: auto agent")
    with server.client(auto["token"]) as agent:
        refused = assert_problem(agent.post(f"/v1/notes/{note['id']}/ops", json=body), 403, "policy-denied",
                                 server.base_url)
        assert refused["reason"] == "agents_propose" and refused["next"] == f"POST /v1/notes/{note['id']}/proposals"
        assert owner.get(f"/v1/notes/{note['id']}").json()["blocks"][0]["text"] == "human words"
        # The auto-apply token's proposal is how its words land: at once, and listed on Agent activity.
        session = {"x-fastpad-session": agent.post("/v1/agent-sessions").json()["session"]}
        read = agent.get(f"/v1/notes/{note['id']}/handles", headers=session).json()
        proposed = agent.post(f"/v1/notes/{note['id']}/proposals", headers=session, json={
            "ops": [{"op": "replace_block", "handle": read["blocks"][0]["handle"], "text": "agent words"}],
            "expected_frontier": read["frontier"], "idempotency_key": str(uuid.uuid4())})
        assert proposed.status_code == 201, proposed.text
        assert (proposed.json()["status"], proposed.json()["authority"]) == ("accepted", "auto_apply")
    block = owner.get(f"/v1/notes/{note['id']}").json()["blocks"][0]
    assert (block["text"], block["origin"], block["review_state"]) == ("agent words", "agent_written", "unreviewed")


def test_updates_since_a_frontier_carry_only_what_is_new(owner, client_copy) -> None:
    note = _note(owner, "first")
    doc, frontier = client_copy(note["id"])
    doc.replace_text(doc.blocks()[0].id, "first, edited")
    sent = owner.post(f"/v1/notes/{note['id']}/ops", json={
        "ops": b64(doc.export_updates(frontier)), "expectedFrontier": frontier, "idempotencyKey": str(uuid.uuid4()),
    })
    assert sent.status_code == 200, sent.text
    since = owner.get(f"/v1/notes/{note['id']}/updates", params={"since": frontier})
    assert since.status_code == 200
    assert since.headers["x-fastpad-frontier"] == sent.json()["frontier"]
    replica, _ = client_copy(note["id"])
    assert len(since.content) < len(owner.get(f"/v1/notes/{note['id']}/updates").content)
    assert replica.blocks()[0].text == "first, edited"
    assert "app;dur=" in since.headers["server-timing"]


def test_a_snapshot_opens_the_same_note_an_update_replay_does_and_takes_updates_after_it(owner, client_copy) -> None:
    note = _note(owner, "snap", "shot")
    response = owner.get(f"/v1/notes/{note['id']}/snapshot")
    assert response.status_code == 200, response.text
    assert LoroDoc.decode_import_blob_meta(response.content, True).mode == EncodedBlobMode.Snapshot
    opened = NoteDocument.load(response.content)
    replayed, frontier = client_copy(note["id"])
    assert response.headers["x-fastpad-frontier"] == frontier == opened.frontier()
    assert opened.blocks() == replayed.blocks()
    opened.replace_text(opened.blocks()[0].id, "snap, edited")
    sent = owner.post(f"/v1/notes/{note['id']}/ops", json={"ops": b64(opened.export_updates(frontier)),
                                                         "expectedFrontier": frontier})
    assert sent.status_code == 200, sent.text
    assert owner.get(f"/v1/notes/{note['id']}").json()["blocks"][0]["text"] == "snap, edited"


@pytest.mark.parametrize("route", ["updates", "snapshot"])
def test_agents_get_no_raw_note_state(server, owner, route: str) -> None:
    note = _note(owner, "private words")
    with server.client(server.token("reader")) as reader:
        response = reader.get(f"/v1/notes/{note['id']}/{route}")
    assert_problem(response, 403, "policy-denied", server.base_url)
