"""``POST /v1/notes`` with a client-chosen ``id``: how a note written in a browser before its author
had an account is adopted — once, under the id the browser gave it, with its block ids, as the
person's own typing. Both backends; the id held by another workspace is set up in the database."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from fastpad.deployment import open_deployment
from fastpad.notes.ids import new_id
from fastpad.store import utcnow

from tests.api.conftest import Server
from tests.api.helpers import assert_problem

NEIGHBOUR_EMAIL = "neighbour@example.com"
NEIGHBOUR_PASSWORD = "the neighbour's long password"


def _local_note(note_id: str) -> dict:
    return {"id": note_id, "title": "Before an account",
            "blocks": [{"id": new_id(), "type": "paragraph", "text": f"line {n}"} for n in range(3)]}


def test_a_chosen_id_creates_the_note_once_with_its_block_ids_as_the_persons_typing(signed_in, server):
    note_id = new_id()
    body = _local_note(note_id)
    created = signed_in.post("/v1/notes", json={**body, "idempotencyKey": f"adopt-{note_id}"})
    assert created.status_code == 201, created.text
    assert created.json()["id"] == note_id and created.headers["location"] == f"/v1/notes/{note_id}"
    blocks = signed_in.get(f"/v1/notes/{note_id}").json()["blocks"]
    assert [b["id"] for b in blocks] == [b["id"] for b in body["blocks"]]
    assert {b["origin"] for b in blocks} == {"human_typed"}

    # The same adoption under the same key (a lost answer) replays; under another key (another
    # tab, another session) it is refused as a note that exists, and nothing is written twice.
    replay = signed_in.post("/v1/notes", json={**body, "idempotencyKey": f"adopt-{note_id}"})
    assert replay.status_code == 201 and replay.headers.get("idempotent-replayed") == "true", replay.headers
    again = assert_problem(signed_in.post("/v1/notes", json={**body, "idempotencyKey": "another-tab"}),
                           409, "conflict", server.base_url)
    assert again["reason"] == "exists" and again["note_id"] == note_id
    listed = [n["id"] for n in signed_in.get("/v1/notes", params={"limit": 200}).json()["items"]]
    assert listed.count(note_id) == 1
    assert [b["id"] for b in signed_in.get(f"/v1/notes/{note_id}").json()["blocks"]] == [b["id"] for b in body["blocks"]]


def test_a_chosen_id_must_be_a_ulid_and_is_a_persons_only(signed_in, server):
    for bad in ("not-a-ulid", "01hzy3x6v0000000000000000a", "8" + "0" * 25):
        refused = assert_problem(signed_in.post("/v1/notes", json={"id": bad, "title": "x"}), 422,
                                 "validation-failed", server.base_url)
        assert [e["field"] for e in refused["field_errors"]] == ["id"], refused
    agent = server.mint("notes:read,notes:propose", "--label", "tests: client ids")["token"]
    with server.client(agent) as client:
        refused = assert_problem(client.post("/v1/notes", json={"id": new_id(), "title": "mine"}), 422,
                                 "validation-failed", server.base_url)
    assert [(e["field"], e["code"]) for e in refused["field_errors"]] == [("id", "person_only")]


@pytest.fixture(scope="module")
def neighbour(server: Server) -> Iterator[httpx.Client]:
    """A person of another workspace in the same database, signed in over HTTP."""
    deployment = open_deployment(server.data_dir, pool_size=1)
    try:
        workspace = new_id()
        with deployment.store.write(workspace) as tx:
            tx.insert_workspace("Neighbours", utcnow())
        deployment.people.create_person(workspace, NEIGHBOUR_EMAIL, password=NEIGHBOUR_PASSWORD, role="owner")
    finally:
        deployment.close()
    with server.client() as client:
        answer = client.post("/v1/session", json={"email": NEIGHBOUR_EMAIL, "password": NEIGHBOUR_PASSWORD})
        assert answer.status_code == 201, answer.text
        client.headers["x-csrf-token"] = answer.json()["csrf_token"]
        yield client


def test_an_id_another_workspace_holds_is_taken_and_reveals_nothing_of_it(signed_in, neighbour, server):
    note_id = new_id()
    assert signed_in.post("/v1/notes", json=_local_note(note_id)).status_code == 201
    taken = assert_problem(neighbour.post("/v1/notes", json=_local_note(note_id)), 409, "conflict", server.base_url)
    assert taken["reason"] == "id_taken" and "Before an account" not in str(taken)
    assert neighbour.get(f"/v1/notes/{note_id}").status_code == 404
    assert all(n["id"] != note_id for n in neighbour.get("/v1/notes").json()["items"])
    # Nothing half-written on either side: the neighbour's workspace can take a fresh id at once.
    assert neighbour.post("/v1/notes", json=_local_note(new_id())).status_code == 201
    assert signed_in.get(f"/v1/notes/{note_id}").json()["title"] == "Before an account"
