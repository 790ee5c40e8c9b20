"""Hostile requests against a real server on both backends: text no backend stores, JSON nested past
any parser, CRDT updates that leave the note's schema, a replay under another token, and bodies
sent a byte at a time — each a typed 4xx on every route that takes it, with nothing written.
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from loro import ExportMode, LoroDoc, LoroList, LoroMap, LoroText

from fastpad.notes import NoteDocument
from fastpad.notes.ids import new_id
from tests.api.helpers import assert_problem, raw_http
from tests.hostile.conftest import Hostile

JSON = {"content-type": "application/json"}
UNSTORABLE = {"U+0000": "a\x00b", "a lone surrogate": "x\ud800"}
DEEP = b"[" * 10_000 + b"]" * 10_000


@pytest.fixture(scope="module")
def operations(owner: httpx.Client) -> list[tuple[str, str, dict[str, Any]]]:
    """Every (method, path, operation) of the server's OpenAPI document."""
    document = owner.get("/openapi.json").json()
    return [(method.upper(), path, operation) for path, item in document["paths"].items()
            for method, operation in item.items() if method in ("get", "post", "put", "patch", "delete")]


def _concrete(path: str) -> str:
    """A path template with every parameter filled (a ULID names nothing, which is fine: the body is
    refused before any route reads it)."""
    out, rest = "", path
    while "{" in rest:
        head, _, tail = rest.partition("{")
        out += head + new_id()
        rest = tail.partition("}")[2]
    return out + rest


def _json_bodied(operations: list[tuple[str, str, dict[str, Any]]]) -> Iterator[tuple[str, str]]:
    """Every operation taking a JSON body, but those that need a header this test does not send
    (they refuse before reading any body, so there is nothing of the body to judge)."""
    for method, path, operation in operations:
        needs_header = any(p["in"] == "header" and p.get("required") for p in operation.get("parameters", []))
        if "application/json" in operation.get("requestBody", {}).get("content", {}) and not needs_header:
            yield method, _concrete(path)


def test_unstorable_text_is_422_naming_the_field_on_every_route_that_takes_json(hostile: Hostile, owner, operations):
    routes = [*_json_bodied(operations), ("POST", "/mcp"), ("POST", "/v1/device/code")]
    assert len(routes) > 30, routes
    for name, text in UNSTORABLE.items():
        payload = json.dumps({"title": text, "nested": {"list": ["ok", text]}}).encode()  # json escapes both
        for method, path in routes:
            answer = owner.request(method, path, content=payload, headers=JSON)
            body = assert_problem(answer, 422, "validation-failed", hostile.base_url)
            refused = {(fe["field"], fe["code"]) for fe in body["field_errors"]}
            assert refused == {("title", "invalid_text"), ("nested.list[1]", "invalid_text")}, (name, method, path)


def test_unstorable_text_in_markdown_and_query_strings_is_refused_or_finds_nothing(hostile: Hostile, owner, operations):
    # Markdown reads U+0000 as U+FFFD (CommonMark's rule), hand-written or canonical, on both backends.
    for markdown in ("# T\n\na\x00b\n", f"# T {{#{new_id()}}}\n\na\x00b {{#{new_id()}}}\n"):
        answer = owner.post("/v1/notes", content=markdown.encode(), headers={"content-type": "text/markdown"})
        assert answer.status_code == 201, answer.text
        assert [b["text"] for b in answer.json()["blocks"]] == ["T", "a\ufffdb"]
    # Every string query parameter of every GET, with a NUL in it: never a 5xx (PostgreSQL refused it).
    tried = 0
    for method, path, operation in operations:
        if method != "GET":
            continue
        for parameter in operation.get("parameters", []):
            if parameter["in"] == "query" and _takes_text(parameter.get("schema", {})):
                answer = owner.get(_concrete(path), params={parameter["name"]: "a\x00b"})
                assert answer.status_code < 500, (path, parameter["name"], answer.text)
                tried += 1
    assert tried > 10


def _takes_text(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "string" or any(_takes_text(option) for option in schema.get("anyOf", []))


def test_json_nested_10000_deep_is_422_before_any_parser_on_every_route(hostile: Hostile, owner, operations):
    routes = [*_json_bodied(operations), ("POST", "/mcp")]
    for method, path in routes:
        body = assert_problem(owner.request(method, path, content=DEEP, headers=JSON), 422, "validation-failed",
                              hostile.base_url)
        assert body["field_errors"][0]["code"] == "max_depth" and body["max_depth"] == 64, (method, path, body)
    # Unauthenticated routes too, and a body that does not say what it is.
    with hostile.client() as anonymous:
        for path in ("/v1/device/code", "/v1/session"):
            answer = anonymous.post(path, content=DEEP, headers=JSON)
            assert assert_problem(answer, 422, "validation-failed", hostile.base_url)["max_depth"] == 64
    answer = owner.post("/v1/notes/" + new_id() + "/rename", content=DEEP)
    assert answer.status_code == 422, answer.text
    # As deep as the limit allows is parsed and judged by the route as usual.
    nested: Any = "deep enough"
    for _ in range(60):
        nested = {"k": nested}
    created = owner.post("/v1/notes", json={"title": "nested", "properties": {"p": nested}})
    assert created.status_code == 201, created.text


# -- CRDT updates ------------------------------------------------------------------------------------


def _copy(owner: httpx.Client, note_id: str) -> tuple[LoroDoc, str]:
    response = owner.get(f"/v1/notes/{note_id}/updates")
    assert response.status_code == 200, response.text
    return NoteDocument.load(response.content).loro, response.headers["x-fastpad-frontier"]


def _new_root(doc: LoroDoc) -> None:
    evil = doc.get_map("evil")
    for i in range(5000):
        evil.insert(f"k{i}", i)


def _deep_value(doc: LoroDoc) -> None:
    value: Any = 1
    for _ in range(10_000):
        value = [value]
    doc.get_map("meta").get("properties").container.insert("deep", value)


def _new_block(doc: LoroDoc) -> None:
    block = doc.get_movable_list("blocks").insert_container(1, LoroMap())
    block.insert("id", new_id())
    block.insert("type", "paragraph")
    block.insert_container("text", LoroText()).insert(0, "a second paragraph")
    block.insert_container("attrs", LoroMap())


def _first_block(doc: LoroDoc) -> LoroMap:
    return doc.get_movable_list("blocks").get(0).container


OFF_SCHEMA: dict[str, tuple[Callable[[LoroDoc], None], str]] = {
    "a new root container with 5,000 entries": (_new_root, "evil"),
    "an integer title": (lambda doc: doc.get_map("meta").insert("title", 5), "meta.title"),
    "types as a text container": (lambda doc: doc.get_map("meta").insert_container("types", LoroText()), "meta.types"),
    "a key meta does not hold": (lambda doc: doc.get_map("meta").insert("owner", "me"), "meta.owner"),
    "a container as a property": (lambda doc: doc.get_map("meta").get("properties").container.insert_container(
        "p", LoroList()), "meta.properties.p"),
    "a property nested 10,000 deep": (_deep_value, "ops"),
    "a plain value as a block": (lambda doc: doc.get_movable_list("blocks").insert(1, "plain"), "blocks[1]"),
    "a block id that is not a ULID": (lambda doc: _first_block(doc).insert("id", 7), "blocks[0].id"),
    "a container among a block's attrs": (lambda doc: _first_block(doc).get("attrs").container.insert_container(
        "x", LoroMap()), "blocks[0].attrs.x"),
    "U+0000 typed into a block": (lambda doc: _first_block(doc).get("text").container.insert(0, "a\x00b"),
                                  "blocks[0].text"),
}


def test_a_crdt_update_outside_the_note_schema_is_422_naming_the_path_and_changes_nothing(hostile: Hostile, owner):
    created = owner.post("/v1/notes", json={"title": "schema", "types": ["Kind"], "properties": {"k": 1},
                                            "blocks": [{"text": "the first paragraph"}]})
    assert created.status_code == 201, created.text
    note_id = created.json()["id"]
    stored = owner.get(f"/v1/notes/{note_id}/updates").content
    for name, (attack, path) in OFF_SCHEMA.items():
        doc, frontier = _copy(owner, note_id)
        held = doc.oplog_vv
        attack(doc)
        doc.commit()
        update = base64.b64encode(doc.export(ExportMode.Updates(held))).decode()
        answer = owner.post(f"/v1/notes/{note_id}/ops", json={"ops": update, "expectedFrontier": frontier})
        body = assert_problem(answer, 422, "validation-failed", hostile.base_url)
        assert body["field_errors"][0]["code"] == "off_schema" and body["path"] == path, (name, body)
        assert owner.get(f"/v1/notes/{note_id}/updates").content == stored, name
    # What the schema admits still lands: a new block, typed text.
    doc, frontier = _copy(owner, note_id)
    held = doc.oplog_vv
    _new_block(doc)
    _first_block(doc).get("text").container.insert(0, "Still ")
    doc.commit()
    update = base64.b64encode(doc.export(ExportMode.Updates(held))).decode()
    landed = owner.post(f"/v1/notes/{note_id}/ops", json={"ops": update, "expectedFrontier": frontier})
    assert landed.status_code == 200, landed.text
    texts = [b["text"] for b in owner.get(f"/v1/notes/{note_id}").json()["blocks"]]
    assert texts == ["Still the first paragraph", "a second paragraph"]


# -- idempotency -------------------------------------------------------------------------------------


def test_replaying_another_tokens_idempotency_key_runs_as_its_own_request(hostile: Hostile, owner):
    """The same person's narrower tokens send a key and body another token used: they never get its
    recorded answer (a note outside their set), only their own."""
    elsewhere = owner.post("/v1/notes", json={"title": "outside the set"}).json()["id"]
    inside = owner.post("/v1/notes", json={"title": "inside the set"}).json()["id"]
    key = f"replay-{secrets.token_hex(6)}"
    rename = {"title": "Renamed by the broad token", "idempotencyKey": key}
    first = owner.post(f"/v1/notes/{elsewhere}/rename", json=rename)
    assert first.status_code == 200, first.text
    assert owner.post(f"/v1/notes/{elsewhere}/rename", json=rename).headers.get("idempotent-replayed") == "true"

    scoped = hostile.person_token(note_ids=[inside])
    reader = hostile.person_token("notes:read")
    with hostile.client(scoped) as narrow:
        answer = narrow.post(f"/v1/notes/{elsewhere}/rename", json=rename)
        assert_problem(answer, 403, "out-of-scope", hostile.base_url)
    with hostile.client(reader) as narrow:
        answer = narrow.post(f"/v1/notes/{elsewhere}/rename", json=rename)
        assert_problem(answer, 403, "insufficient-scope", hostile.base_url)
        created_key = f"create-{secrets.token_hex(6)}"
        assert owner.post("/v1/notes", json={"title": "made once", "idempotencyKey": created_key}).status_code == 201
        answer = narrow.post("/v1/notes", json={"title": "made once", "idempotencyKey": created_key})
        assert_problem(answer, 403, "insufficient-scope", hostile.base_url)
    assert "outside the set" not in answer.text and "Renamed" not in answer.text


# -- slow bodies --------------------------------------------------------------------------------------


def _head(path: str, token: str, *framing: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: test", "Content-Type: application/json",
             f"Authorization: Bearer {token}", *framing]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_a_body_sent_a_byte_at_a_time_is_cut_by_its_deadline_whatever_its_size_or_framing(hostile: Hostile):
    """One byte, then nothing (the limit of a byte a second): a small body and a chunked one are cut
    after the grace period with a retryable 408, like a large one (tests/api/test_limits.py)."""
    from tests.api.conftest import TEST_LIMITS

    for framing, first_byte in ((("Content-Length: 100",), b"{"), (("Transfer-Encoding: chunked",), b"1\r\n{\r\n")):
        status, _, payload, elapsed = raw_http(hostile.base_url, _head("/v1/notes", hostile.owner, *framing),
                                               first_byte)
        assert status == 408, payload
        body = json.loads(payload)
        assert body["type"].endswith("/errors/request-timeout") and body["retryable"] is True, body
        assert TEST_LIMITS["body_grace_s"] <= elapsed < TEST_LIMITS["body_deadline_s"], (framing, elapsed)
