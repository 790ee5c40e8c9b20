"""Provenance where a person reads, over real HTTP (``fp serve`` on SQLite and PostgreSQL): a
note's marked blocks (an agent's unratified text, text from outside) with who and when and no
text; one block marked reviewed by a signed-in person and by no token; and rejecting part of a
proposal while the rest waits."""

from __future__ import annotations

import httpx

from fastpad.notes import new_id

from .conftest import Server
from .helpers import assert_problem
from .test_turns import HttpAgent, new_note


def test_an_auto_applied_block_is_marked_until_a_person_marks_it_reviewed(
        server: Server, owner: httpx.Client, signed_in: httpx.Client) -> None:
    note = new_note(owner, "The person's words.")
    agent = HttpAgent(server, "notes:read,notes:propose", "--auto-apply", "--label", "tests: margin writer")
    read = agent.read(note)
    turn = agent.propose(note, [{"op": "insert_after", "handle": read["blocks"][0]["handle"],
                                 "text": "Landed without review."}], read["frontier"])
    assert turn.status_code == 201 and turn.json()["auto_applied"], turn.text
    block_id = turn.json()["landed_block_ids"][0]

    marked = owner.get(f"/v1/notes/{note}/provenance").json()
    assert [b["block_id"] for b in marked["blocks"]] == [block_id]  # the person's own block is not marked
    (mark,) = marked["blocks"]
    assert (mark["origin"], mark["review_state"], mark["author"]["name"]) == (
        "agent_written", "unreviewed", "tests: margin writer")
    assert mark["written_at"] and "text" not in mark  # who and when, never the words

    # No token vouches for text, the agent's own least of all; the owner's CLI token neither.
    for token_client in (agent.client, owner):
        assert_problem(token_client.post(f"/v1/notes/{note}/blocks/{block_id}/mark-reviewed"), 403,
                       "policy-denied", server.base_url)
    assert owner.get(f"/v1/notes/{note}/blocks/{block_id}").json()["review_state"] == "unreviewed"

    reviewed = signed_in.post(f"/v1/notes/{note}/blocks/{block_id}/mark-reviewed")
    assert reviewed.status_code == 200, reviewed.text
    assert (reviewed.json()["origin"], reviewed.json()["review_state"]) == ("agent_written", "human_accepted")
    assert owner.get(f"/v1/notes/{note}/provenance").json()["blocks"] == []
    state = owner.get(f"/v1/notes/{note}/blocks/{block_id}").json()
    assert (state["origin"], state["review_state"]) == ("agent_written", "human_accepted")
    # Again changes nothing; a block the note does not hold is not found.
    again = signed_in.post(f"/v1/notes/{note}/blocks/{block_id}/mark-reviewed")
    assert again.status_code == 200 and again.json()["updated_at"] == reviewed.json()["updated_at"]
    assert_problem(signed_in.post(f"/v1/notes/{note}/blocks/{new_id()}/mark-reviewed"),
                   404, "not-found", server.base_url)


def test_captured_text_stays_marked_as_from_outside_once_reviewed(
        server: Server, owner: httpx.Client, signed_in: httpx.Client) -> None:
    captured = owner.post("/v1/capture", json={"text": "Clipped from a web page.", "idempotencyKey": "tests-margin-capture"})
    assert captured.status_code == 201, captured.text
    note = captured.json()["note_id"]
    (mark,) = owner.get(f"/v1/notes/{note}/provenance").json()["blocks"]
    assert (mark["origin"], mark["review_state"]) == ("inbound_untrusted", "unreviewed")
    signed_in.post(f"/v1/notes/{note}/blocks/{mark['block_id']}/mark-reviewed").raise_for_status()
    (after,) = owner.get(f"/v1/notes/{note}/provenance").json()["blocks"]
    assert (after["origin"], after["review_state"]) == ("inbound_untrusted", "human_accepted")


def test_rejecting_one_proposed_block_leaves_the_other_waiting(
        server: Server, owner: httpx.Client, signed_in: httpx.Client) -> None:
    note = new_note(owner, "First.", "Second.")
    agent = HttpAgent(server, "notes:read,notes:propose")
    read = agent.read(note)
    turn = agent.propose(note, [
        {"op": "insert_after", "handle": read["blocks"][0]["handle"], "text": "Wanted."},
        {"op": "insert_after", "handle": read["blocks"][1]["handle"], "text": "Unwanted."},
    ], read["frontier"]).json()
    wanted, unwanted = turn["pending_block_ids"]

    assert_problem(agent.client.post(f"/v1/turns/{turn['id']}/reject-some", json={"block_ids": [unwanted]}),
                   403, "policy-denied", server.base_url)
    not_waiting = assert_problem(signed_in.post(f"/v1/turns/{turn['id']}/reject-some",
                                                json={"block_ids": [read["blocks"][0]["id"]]}),
                                 422, "validation-failed", server.base_url)
    assert not_waiting["field_errors"][0]["code"] == "not_pending"

    rejected = signed_in.post(f"/v1/turns/{turn['id']}/reject-some", json={"block_ids": [unwanted]})
    assert rejected.status_code == 200, rejected.text
    assert (rejected.json()["status"], rejected.json()["pending_block_ids"]) == ("pending", [wanted])
    signed_in.post(f"/v1/turns/{turn['id']}/accept-some", json={"block_ids": [wanted]}).raise_for_status()
    decided = owner.get(f"/v1/turns/{turn['id']}").json()
    assert (decided["status"], decided["open"]) == ("partially_accepted", False)
    assert {d["block_id"]: d["state"] for d in decided["diffs"]} == {wanted: "landed", unwanted: "decided"}
    texts = [b["text"] for b in owner.get(f"/v1/notes/{note}").json()["blocks"]]
    assert texts == ["First.", "Wanted.", "Second."]
