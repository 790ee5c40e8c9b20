"""Request limits over a real socket: body size (413), slow bodies (408), JSON shape (422), rate (429)."""

from __future__ import annotations

import json
import math
import time
from collections import Counter


from fastpad.security.principals import PERSON_RATE_LIMIT
from tests.api.conftest import TEST_LIMITS
from tests.api.helpers import (assert_problem, assert_retry_after_frees_the_oldest, new_person, raw_http,
                               sign_in)

KIB, MIB = 1024, 1024 * 1024


def _head(method: str, path: str, length: int, token: str | None = None, ctype: str = "application/json") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: test", f"Content-Type: {ctype}", f"Content-Length: {length}"]
    if token:
        lines.append(f"Authorization: Bearer {token}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _problem(server, status, payload, slug):
    body = json.loads(payload)
    assert body["status"] == status and body["type"] == f"{server.base_url}/errors/{slug}"
    return body


def test_authenticated_bodies_are_capped_at_8_mib(server):
    token = server.token("owner")
    status, headers, payload, _ = raw_http(server.base_url, _head("POST", "/v1/notes", 8 * MIB + 1, token))
    assert status == 413 and headers["content-type"].startswith("application/problem+json")
    assert _problem(server, 413, payload, "payload-too-large")["max_bytes"] == 8 * MIB


def test_public_and_anonymous_bodies_are_capped_at_64_kib(server):
    status, _, payload, _ = raw_http(server.base_url, _head("POST", "/v1/session", 64 * KIB + 1))
    assert status == 413 and _problem(server, 413, payload, "payload-too-large")["max_bytes"] == 64 * KIB
    # An authenticated route without a credential gets the public cap too.
    status, _, payload, _ = raw_http(server.base_url, _head("POST", "/v1/notes", 100 * KIB))
    assert status == 413 and _problem(server, 413, payload, "payload-too-large")["max_bytes"] == 64 * KIB


def test_a_body_between_the_caps_is_accepted_with_a_credential(server, owner):
    text = "x" * (200 * KIB)
    created = owner.post("/v1/notes", json={"title": "big", "blocks": [{"type": "paragraph", "text": text}]})
    assert created.status_code == 201, created.text[:500]


def test_a_slow_large_body_gets_a_retryable_408(server):
    size = 200 * KIB
    floor = math.ceil(64 * KIB * size / (8 * MIB))
    token = server.token("owner")
    # Send 1 KiB of a 200 KiB body, then stall: the average falls under the floor at
    # 1024 / floor seconds (after the shrunk grace period), long before the deadline.
    status, headers, payload, elapsed = raw_http(
        server.base_url, _head("POST", "/v1/notes", size, token), b"{" + b" " * 1023
    )
    assert status == 408, payload
    body = _problem(server, 408, payload, "request-timeout")
    assert body["retryable"] is True and body["min_bytes_per_sec"] == floor
    assert TEST_LIMITS["body_grace_s"] <= elapsed < TEST_LIMITS["body_deadline_s"]


def test_arrays_over_10000_and_requests_over_50000_values_are_422(owner, server):
    many_blocks = [{"type": "paragraph", "text": ""} for _ in range(10_001)]
    response = owner.post("/v1/notes", json={"title": "wide", "blocks": many_blocks})
    body = assert_problem(response, 422, "validation-failed", server.base_url)
    assert {"field": "blocks", "code": "max_items"} == {k: body["field_errors"][0][k] for k in ("field", "code")}
    assert body["retryable"] is False

    properties = {f"p{i}": [0] * 9 for i in range(5_001)}  # 5,001 × 10 values
    body = assert_problem(owner.post("/v1/notes", json={"title": "deep", "properties": properties}),
                          422, "validation-failed", server.base_url)
    assert [fe["code"] for fe in body["field_errors"]] == ["max_values"]
    # Routes FastAPI parses get the same check.
    note_id = owner.post("/v1/notes", json={"title": "ops"}).json()["id"]
    ops = owner.post(f"/v1/notes/{note_id}/ops", json={"ops": "", "expectedFrontier": "fp1:AA", "x": [0] * 10_001})
    assert assert_problem(ops, 422, "validation-failed", server.base_url)["field_errors"][0]["code"] == "max_items"


def test_text_no_backend_can_store_is_422_wherever_the_json_carries_it(owner, server):
    # U+0000 (PostgreSQL refuses it in text and jsonb) and a lone surrogate (not UTF-8) were 500s.
    note_id = owner.post("/v1/notes", json={"title": "clean"}).json()["id"]
    for method, path, payload in [
        ("POST", "/v1/notes", b'{"title": "t", "properties": {"k": "a\\u0000b"}}'),
        ("POST", "/v1/notes", b'{"title": "t", "blocks": [{"text": "\\ud800"}]}'),
        ("POST", "/v1/links", b'{"source_note_id": "%s", "type": "cites", "target_title": "a\\u0000b"}' % note_id.encode()),
        ("POST", "/v1/session", b'{"email": "a\\u0000@example.com", "password": "x"}'),
    ]:
        response = owner.request(method, path, content=payload, headers={"content-type": "application/json"})
        body = assert_problem(response, 422, "validation-failed", server.base_url)
        assert [fe["code"] for fe in body["field_errors"]] == ["invalid_text"], (path, body)
    # A lookup by a name no topic can have finds nothing, rather than failing in PostgreSQL.
    assert_problem(owner.get("/v1/memory/a%00b"), 404, "not-found", server.base_url)


def test_field_errors_are_capped_at_50_with_a_count_of_the_rest(owner, server):
    blocks = [{"type": "no-such-type"} for _ in range(70)]
    body = assert_problem(owner.post("/v1/notes", json={"blocks": blocks}), 422, "validation-failed", server.base_url)
    assert len(body["field_errors"]) == 50 and body["field_errors_truncated"] == 20


def _timed(client, *args, **kwargs):
    """One request: (response, (sent, answered)) on the client's monotonic clock."""
    sent = time.monotonic()
    response = client.get(*args, **kwargs)
    return response, (sent, time.monotonic())


def test_rate_limit_per_token(server):
    limited = server.mint("notes:read", "--rate-limit", "5", "--label", "tests: rate limited")
    with server.client(limited["token"]) as client:
        first, oldest = _timed(client, "/v1/notes", params={"limit": 1})
        assert first.status_code == 200
        for _ in range(4):
            assert client.get("/v1/notes", params={"limit": 1}).status_code == 200
        refused, at = _timed(client, "/v1/notes", params={"limit": 1})
    body = assert_problem(refused, 429, "rate-limited", server.base_url)
    assert body["retryable"] is True and body["limit"] == 5 and body["window_ms"] == 60_000
    assert_retry_after_frees_the_oldest(body, oldest, at)
    assert int(refused.headers["retry-after"]) == math.ceil(body["retry_after_ms"] / 1000)
    # Another credential is unaffected.
    with server.client(server.token("reader")) as other:
        assert other.get("/v1/notes", params={"limit": 1}).status_code == 200


def test_a_person_gets_1200_requests_a_minute_across_their_session_and_two_cli_tokens(server):
    email, password = new_person(server)
    tokens = [server.mint("notes:read", "--person", email, "--label", f"tests: CLI {i}")["token"] for i in (1, 2)]
    with sign_in(server, email, password) as session, server.client(tokens[0]) as cli, \
            server.client(tokens[1]) as other_cli:
        clients = [session, cli, other_cli]
        first, oldest = _timed(session, "/v1/notes", params={"limit": 1})
        statuses = Counter([first.status_code])
        for i in range(1, PERSON_RATE_LIMIT):
            statuses[clients[i % 3].get("/v1/notes", params={"limit": 1}).status_code] += 1
        assert statuses == {200: PERSON_RATE_LIMIT}
        refusals = [_timed(client, "/v1/notes", params={"limit": 1}) for client in clients]
    for refused, at in refusals:
        body = assert_problem(refused, 429, "rate-limited", server.base_url)
        assert body["limit"] == PERSON_RATE_LIMIT
        assert_retry_after_frees_the_oldest(body, oldest, at)
