"""`POST /v1/capture` over real HTTP on both backends, and `POST /v1/ask` refusing without a provider."""

from __future__ import annotations

import httpx

from tests.api.conftest import Server
from tests.api.helpers import assert_problem


def test_capture_creates_an_untrusted_inbox_note_once_per_key(server: Server, owner: httpx.Client):
    body = {"text": "# Read later\n\nhttps://example.com/paper", "idempotencyKey": "cap-route-1"}
    first = owner.post("/v1/capture", json=body)
    assert first.status_code == 201, first.text
    note_id = first.json()["note_id"]
    assert first.headers["location"] == f"/v1/notes/{note_id}" and first.json()["replayed"] is False
    note = owner.get(f"/v1/notes/{note_id}").json()
    assert note["title"] == "Read later" and note["types"] == ["Inbox"]
    assert {b["origin"] for b in note["blocks"]} == {"inbound_untrusted"}
    assert {b["review_state"] for b in note["blocks"]} == {"unreviewed"}

    replay = owner.post("/v1/capture", json=body)
    assert replay.status_code == 201 and replay.json()["note_id"] == note_id
    assert replay.headers["idempotent-replayed"] == "true"
    conflict = owner.post("/v1/capture", json={**body, "text": "something else"})
    assert_problem(conflict, 409, "idempotency-conflict", server.base_url)

    keyless = owner.post("/v1/capture", json={"text": "no key"})
    assert assert_problem(keyless, 422, "validation-failed", server.base_url)["field_errors"][0]["field"] == "idempotencyKey"
    blank = owner.post("/v1/capture", json={"text": "   ", "idempotencyKey": "cap-route-blank"})
    assert_problem(blank, 422, "validation-failed", server.base_url)
    with server.client(server.token("reader")) as reader:
        refused = reader.post("/v1/capture", json={"text": "x", "idempotencyKey": "cap-route-2"})
        assert_problem(refused, 403, "insufficient-scope", server.base_url)


def test_ask_refuses_with_a_typed_problem_until_a_provider_is_configured(server: Server, owner: httpx.Client):
    with server.client(server.mint("notes:read,search:read", "--label", "asks")["token"]) as agent:
        refused = agent.post("/v1/ask", json={"question": "What did we decide about the launch?"})
    body = assert_problem(refused, 503, "provider-not-configured", server.base_url)
    assert "search" in body["next"]
    assert_problem(owner.post("/v1/ask", json={"question": ""}), 422, "validation-failed", server.base_url)
