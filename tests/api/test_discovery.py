"""Routes reachable without a credential: health, OpenAPI (ETag/304), RFC 9728 metadata, error pages."""

from __future__ import annotations

import httpx

from tests.api.helpers import assert_problem


def test_health_round_trips_the_database(server):
    response = httpx.get(f"{server.base_url}/health")
    assert response.status_code == 200
    assert response.json()["status"] == "ok" and response.json()["database"] == "ok"


def test_openapi_is_31_with_a_strong_etag_and_304(server):
    with server.client() as client:
        first = client.get("/openapi.json")
        assert first.status_code == 200
        doc = first.json()
        assert doc["openapi"].startswith("3.1")
        etag = first.headers["etag"]
        assert etag.startswith('"') and etag.endswith('"'), "strong ETag"
        assert {"/v1/notes", "/v1/notes/{note_id}", "/v1/notes/{note_id}/ops", "/health"} <= doc["paths"].keys()
        ops = doc["paths"]["/v1/notes/{note_id}/ops"]["post"]
        assert "application/problem+json" in ops["responses"]["422"]["content"]
        assert doc["components"]["schemas"]["Problem"]
        mcp = doc["paths"]["/mcp"]["post"]  # served by the MCP SDK, documented all the same
        assert mcp["security"] == [{"bearer": []}] and "401" in mcp["responses"]
        assert "application/problem+json" in mcp["responses"]["401"]["content"]

        again = client.get("/openapi.json", headers={"if-none-match": etag})
        assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
        assert client.get("/openapi.json", headers={"if-none-match": f'"nope", W/{etag}'}).status_code == 304
        assert client.get("/openapi.json", headers={"if-none-match": '"nope"'}).status_code == 200
        assert client.get("/openapi.json").headers["etag"] == etag, "stable across requests"


def test_protected_resource_metadata(server):
    meta = httpx.get(f"{server.base_url}/.well-known/oauth-protected-resource").json()
    assert meta["resource"] == server.base_url
    assert meta["authorization_servers"] == [server.base_url]
    assert meta["bearer_methods_supported"] == ["header"]
    assert {"notes:read", "notes:write", "turns:accept"} <= set(meta["scopes_supported"])


def test_every_problem_type_uri_resolves(server):
    with server.client() as client:
        index = client.get("/errors", headers={"accept": "text/markdown"})
        assert index.status_code == 200
        for slug in ("validation-failed", "stale-frontier", "idempotency-conflict", "rate-limited",
                     "unauthenticated", "payload-too-large", "request-timeout", "not-found"):
            assert f"/errors/{slug}" in index.text
            page = client.get(f"/errors/{slug}")
            assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
            markdown = client.get(f"/errors/{slug}", headers={"accept": "text/markdown"})
            assert markdown.headers["content-type"].startswith("text/markdown")
            assert "**Next:**" in markdown.text
        assert_problem(client.get("/errors/no-such-problem"), 404, "not-found", server.base_url)


def test_unknown_routes_and_methods_are_problems(server):
    with server.client() as client:
        assert_problem(client.get("/v2/nothing"), 404, "not-found", server.base_url)
        body = assert_problem(client.put("/health"), 405, "method-not-allowed", server.base_url)
        assert "GET" in body["allow"]
