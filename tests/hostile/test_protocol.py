"""Protocol edges on a real server, both backends: every 405 lists every method its path takes, and
every refusal at ``/mcp`` is a problem document."""

from __future__ import annotations

from tests.api.helpers import assert_problem
from tests.hostile.conftest import Hostile

METHODS = ("get", "post", "put", "patch", "delete")


def test_a_405_allows_every_method_the_openapi_document_gives_its_path(hostile: Hostile, owner):
    paths = owner.get("/openapi.json").json()["paths"]
    refused = 0
    for path, item in paths.items():
        declared = {method.upper() for method in item if method in METHODS}
        concrete = path.replace("{", "x").replace("}", "")
        for method in (m.upper() for m in METHODS if m not in item):
            answer = owner.request(method, concrete)
            if answer.status_code != 405:
                continue  # another route's path matched (a parameter took the literal), or a body check answered
            body = assert_problem(answer, 405, "method-not-allowed", hostile.base_url)
            allowed = {m.strip() for m in answer.headers["allow"].split(",")}
            assert declared <= allowed and set(body["allow"]) == allowed, (path, method, allowed, declared)
            refused += 1
    assert refused > 50, refused


def test_every_refusal_at_mcp_is_a_problem_document(hostile: Hostile, owner):
    for headers, content, status, slug in [
        ({}, b'{"jsonrpc": "2.0"}', 415, "unsupported-media-type"),  # no Content-Type
        ({"content-type": "text/plain"}, b"hello", 415, "unsupported-media-type"),
        ({"content-type": "application/json"}, b"[" * 10_000, 422, "validation-failed"),
        ({"content-type": "application/json"}, '{"m": "\\u0000"}'.encode(), 422, "validation-failed"),
    ]:
        assert_problem(owner.post("/mcp", content=content, headers=headers), status, slug, hostile.base_url)
    assert_problem(owner.put("/mcp"), 405, "method-not-allowed", hostile.base_url)
    with hostile.client() as anonymous:
        assert_problem(anonymous.post("/mcp", json={}), 401, "unauthenticated", hostile.base_url)
