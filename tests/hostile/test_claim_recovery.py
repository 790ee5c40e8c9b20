"""A write that committed under its idempotency key but never answered — what a server killed between
its COMMIT and its response leaves behind — retried over HTTP on both backends: the retry writes
nothing and gets the answer rebuilt from what was written, and every later replay is that answer.

The crash is reproduced exactly rather than by chance (``test_write_crash.py`` kills a real server at
random moments): the service call runs in this process under the key's claim, as the route runs it,
on the server's own database, and no response is recorded — then the client retries.
"""

from __future__ import annotations

import base64
import secrets
import uuid
from typing import Any

import httpx

from fastpad.api.auth import Caller
from fastpad.api.idempotency import request_hash
from fastpad.notes import Block, NoteDocument, new_id
from fastpad.store.claims import Claim, claiming
from tests.hostile.conftest import Hostile

JSON = "application/json"


def _committed_unanswered(hostile: Hostile, path: str, body: dict[str, Any], key: str, write) -> Any:
    """Run ``write`` (the service call the route makes) under the claim the route would hold for
    ``body`` at ``path``, and record no response."""
    deployment = hostile.target.deployment
    principal = deployment.tokens.authenticate(hostile.owner)
    claim = Claim(principal.workspace_id, Caller(principal, "token", None, False).idempotency_principal, key,
                  request_hash("POST", path, JSON, body))
    with claiming(claim):
        result = write(principal)
    assert claim.committed
    return result


def _retry(owner: httpx.Client, path: str, body: dict[str, Any], key: str) -> httpx.Response:
    answer = owner.post(path, json={**body, "idempotencyKey": key})
    assert answer.headers.get("idempotent-replayed") == "true", answer.text
    again = owner.post(path, json={**body, "idempotencyKey": key})
    assert (again.status_code, again.content) == (answer.status_code, answer.content)  # recorded as rebuilt
    return answer


def test_a_created_note_whose_answer_was_lost_is_answered_not_created_again(hostile: Hostile, owner):
    title = f"Recovered {secrets.token_hex(4)}"
    body, key = {"title": title, "markdown": "body"}, str(uuid.uuid4())
    note = _committed_unanswered(hostile, "/v1/notes", body, key,
                                 lambda principal: hostile.target.deployment.notes.create(
                                     principal, title=title, markdown="body", types=(), properties={}))
    answer = _retry(owner, "/v1/notes", body, key)
    assert answer.status_code == 201 and answer.json()["id"] == note.id
    assert answer.headers["location"] == f"/v1/notes/{note.id}"
    found = owner.get("/v1/search", params={"q": title, "strategies": "lexical", "limit": 50}).json()["hits"]
    assert [hit["note_id"] for hit in found if hit["title"] == title] == [note.id]  # one note, not two


def test_ops_whose_answer_was_lost_are_acknowledged_not_refused_as_stale(hostile: Hostile, owner):
    created = owner.post("/v1/notes", json={"title": f"Ops {secrets.token_hex(4)}", "markdown": "start"}).json()
    updates = owner.get(f"/v1/notes/{created['id']}/updates")
    doc, frontier = NoteDocument.load(updates.content), updates.headers["x-fastpad-frontier"]
    doc.insert_after(doc.blocks()[-1].id, Block(new_id(), "paragraph", "landed once"))
    blob = doc.export_updates(frontier)
    body, key = {"ops": base64.b64encode(blob).decode(), "peerId": None, "expectedFrontier": frontier}, str(uuid.uuid4())
    path = f"/v1/notes/{created['id']}/ops"
    result = _committed_unanswered(hostile, path, body, key, lambda principal: hostile.target.deployment.notes.apply_ops(
        principal, created["id"], ops=blob, peer_id=None, expected_frontier=frontier))
    answer = _retry(owner, path, body, key)
    assert answer.status_code == 200 and answer.json() == {"note_id": created["id"], "frontier": result.frontier}
    texts = [b["text"] for b in owner.get(f"/v1/notes/{created['id']}").json()["blocks"]]
    assert texts.count("landed once") == 1


def test_a_route_that_cannot_rebuild_its_answer_names_what_was_written(hostile: Hostile, owner):
    created = owner.post("/v1/notes", json={"title": f"Before {secrets.token_hex(4)}", "markdown": "x"}).json()
    title, key = f"After {secrets.token_hex(4)}", str(uuid.uuid4())
    path = f"/v1/notes/{created['id']}/rename"
    _committed_unanswered(hostile, path, {"title": title}, key,
                          lambda principal: hostile.target.deployment.notes.rename(principal, created["id"], title))
    answer = _retry(owner, path, {"title": title}, key)
    assert answer.status_code == 200
    assert answer.json() == {"recovered": True,
                             "written": [{"kind": "rename", "note_id": created["id"], "subject_id": None}]}
    assert owner.get(f"/v1/notes/{created['id']}").json()["title"] == title
