"""Idempotency keys: the first response replayed verbatim; a different body under the key is 409."""

from __future__ import annotations

import uuid

from tests.api.helpers import assert_problem


def _count(client) -> int:
    total, cursor = 0, None
    while True:
        page = client.get("/v1/notes", params={"limit": 200, **({"cursor": cursor} if cursor else {})}).json()
        total += len(page["items"])
        if not (cursor := page["next_cursor"]):
            return total


def test_same_key_same_body_replays_the_first_response(owner):
    key = str(uuid.uuid4())
    before = _count(owner)
    first = owner.post("/v1/notes", json={"title": "once", "idempotencyKey": key})
    second = owner.post("/v1/notes", json={"idempotencyKey": key, "title": "once"})  # same data, other order
    assert first.status_code == second.status_code == 201
    assert second.content == first.content, "byte-for-byte"
    assert second.headers["location"] == first.headers["location"]
    assert second.headers["content-type"] == first.headers["content-type"]
    assert second.headers.get("idempotent-replayed") == "true"
    assert _count(owner) == before + 1, "one note, not two"


def test_the_header_and_the_body_key_are_the_same_key(owner):
    key = str(uuid.uuid4())
    first = owner.post("/v1/notes", json={"title": "header"}, headers={"idempotency-key": key})
    second = owner.post("/v1/notes", json={"title": "header", "idempotencyKey": key})
    assert second.content == first.content


def test_same_key_different_body_is_409(owner, server):
    key = str(uuid.uuid4())
    assert owner.post("/v1/notes", json={"title": "a", "idempotencyKey": key}).status_code == 201
    conflict = owner.post("/v1/notes", json={"title": "b", "idempotencyKey": key})
    body = assert_problem(conflict, 409, "idempotency-conflict", server.base_url)
    assert body["retryable"] is False
    markdown = owner.post("/v1/notes", content=b"# b\n", headers={"content-type": "text/markdown", "idempotency-key": key})
    assert_problem(markdown, 409, "idempotency-conflict", server.base_url)


def test_lifecycle_mutations_replay(owner):
    note_id = owner.post("/v1/notes", json={"title": "archive me"}).json()["id"]
    key = str(uuid.uuid4())
    first = owner.post(f"/v1/notes/{note_id}/archive", json={"idempotencyKey": key})
    owner.post(f"/v1/notes/{note_id}/unarchive")
    replay = owner.post(f"/v1/notes/{note_id}/archive", headers={"idempotency-key": key})
    assert replay.status_code == 200 and replay.content == first.content
    assert owner.get(f"/v1/notes/{note_id}").json()["archived"] is False, "the replay did not archive again"


def test_keys_are_per_credential(server, owner):
    key = str(uuid.uuid4())
    first = owner.post("/v1/notes", json={"title": "mine", "idempotencyKey": key})
    assert owner.post("/v1/notes", json={"title": "mine", "idempotencyKey": key}).content == first.content
    # The same person through another credential replays nothing of the first one's: a replay
    # answers verbatim, and another token may reach less (tests/hostile/test_requests.py).
    other = server.mint("notes:read,notes:write", "--person", server.owner_email)
    with server.client(other["token"]) as client:
        own = client.post("/v1/notes", json={"title": "mine", "idempotencyKey": key})
        assert own.status_code == 201 and "idempotent-replayed" not in own.headers
        assert own.json()["id"] != first.json()["id"]
        assert client.post("/v1/notes", json={"title": "mine", "idempotencyKey": key}).content == own.content
    # Another principal's identical key is its own: no replay of someone else's response, no conflict.
    agent = server.mint("notes:read,notes:write", "--auto-apply", "--label", "tests: idempotency agent")
    with server.client(agent["token"]) as client:
        theirs = client.post("/v1/notes", json={"title": "theirs", "idempotencyKey": key})
    assert theirs.status_code == 201 and "idempotent-replayed" not in theirs.headers
    assert theirs.json()["id"] != first.json()["id"]


def test_failures_are_not_recorded(owner, server):
    key = str(uuid.uuid4())
    invalid = owner.post("/v1/notes", json={"title": "x", "blocks": [{"type": "nope"}], "idempotencyKey": key})
    assert_problem(invalid, 422, "validation-failed", server.base_url)
    fixed = owner.post("/v1/notes", json={"title": "x", "idempotencyKey": key})
    assert fixed.status_code == 201, "a refused request changed nothing, so its key is still free"
