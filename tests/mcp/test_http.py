"""``POST /mcp`` at the HTTP layer: credentials, scopes, methods, Host/Origin, protocol faults."""

from __future__ import annotations

import httpx
import pytest

from fastpad.errors import PolicyDenied
from fastpad.mcp.http import Origins
from tests.api.helpers import assert_problem
from tests.mcp.conftest import McpServer
from tests.mcp.wire import LEGACY, MODERN, post


def test_no_credential_is_a_401_pointing_at_the_resource_metadata(mcp: McpServer) -> None:
    response = post(mcp.url, None, "tools/list")
    assert_problem(response, 401, "unauthenticated", mcp.base_url)
    metadata = f"{mcp.base_url}/.well-known/oauth-protected-resource"
    # The scope an OAuth client should ask for: an agent's default, not every scope there is.
    assert response.headers["www-authenticate"] == (
        f'Bearer resource_metadata="{metadata}", scope="notes:read notes:propose search:read graph:read"')


def test_a_rejected_credential_is_a_401_invalid_token(mcp: McpServer) -> None:
    for token in ("fpk_live_" + "A" * 43, "not-a-token"):
        response = post(mcp.url, token, "tools/list")
        assert_problem(response, 401, "unauthenticated", mcp.base_url)
        challenge = response.headers["www-authenticate"]
        assert challenge.startswith("Bearer resource_metadata=") and 'error="invalid_token"' in challenge
    revoked = mcp.mint("revoked", "notes:read")
    mcp.deployment.tokens.revoke(mcp.deployment.workspace_id, mcp.token_ids["revoked"])
    assert post(mcp.url, revoked, "tools/list").status_code == 401


def test_a_missing_scope_is_a_403_naming_every_scope_to_reauthorize_for(mcp: McpServer) -> None:
    for era in (MODERN, LEGACY):
        response = post(mcp.url, mcp.tokens["searcher"], "tools/call",
                        {"name": "fastpad_propose", "arguments": {}}, era=era)
        body = assert_problem(response, 403, "insufficient-scope", mcp.base_url)
        assert body["missing"] == ["notes:propose"]
        assert body["required"] == ["notes:read", "notes:propose", "search:read"]
        assert response.headers["www-authenticate"] == (
            'Bearer error="insufficient_scope", scope="notes:read notes:propose search:read", '
            f'resource_metadata="{mcp.base_url}/.well-known/oauth-protected-resource"'
        )


def test_only_post(mcp: McpServer) -> None:
    for method in ("GET", "DELETE", "PUT"):
        response = httpx.request(method, mcp.url, headers={"authorization": f"Bearer {mcp.tokens['agent']}",
                                                          "accept": "text/event-stream"}, timeout=10)
        assert_problem(response, 405, "method-not-allowed", mcp.base_url)
        assert response.headers["allow"] == "POST"


def test_host_and_origin_are_checked_before_anything_else(mcp: McpServer) -> None:
    token = mcp.tokens["agent"]
    port = mcp.base_url.rsplit(":", 1)[1]
    for origin in ("http://evil.example.com", f"http://evil.example.com:{port}", "null"):
        assert_problem(post(mcp.url, token, "tools/list", headers={"origin": origin}), 403, "policy-denied",
                       mcp.base_url)
    rebound = post(mcp.url, None, "tools/list", headers={"host": f"evil.example.com:{port}"})
    assert_problem(rebound, 403, "policy-denied", mcp.base_url)  # refused before asking for a credential
    for origin in (mcp.base_url, f"http://localhost:{port}"):
        assert post(mcp.url, token, "tools/list", headers={"origin": origin}).status_code == 200
    assert post(mcp.url, token, "tools/list", headers={"host": f"localhost:{port}"}).status_code == 200


def test_an_unknown_tool_is_a_protocol_fault(mcp: McpServer) -> None:
    for era in (MODERN, LEGACY):
        response = post(mcp.url, mcp.tokens["agent"], "tools/call", {"name": "fastpad_delete_everything",
                                                                      "arguments": {}}, era=era)
        assert response.json()["error"]["code"] == -32602


def test_both_eras_answer_from_one_stateless_endpoint(mcp: McpServer) -> None:
    token = mcp.tokens["agent"]
    init = post(mcp.url, token, "initialize", {"protocolVersion": LEGACY, "capabilities": {},
                                               "clientInfo": {"name": "t", "version": "0"}}, era=LEGACY)
    assert init.status_code == 200 and "mcp-session-id" not in init.headers
    assert init.json()["result"]["protocolVersion"] == LEGACY
    discover = post(mcp.url, token, "server/discover")
    result = discover.json()["result"]
    assert MODERN in result["supportedVersions"] and result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "fastpad"
    mismatch = post(mcp.url, token, "tools/list", headers={"mcp-method": "prompts/list"})
    assert mismatch.status_code == 400 and mismatch.json()["error"]["code"] == -32020


def test_a_public_server_takes_its_own_host_or_a_local_proxy_and_only_its_own_origin() -> None:
    origins = Origins("https://notes.example.com")

    def scope(host: str, origin: str | None = None) -> dict:
        headers = [(b"host", host.encode())] + ([(b"origin", origin.encode())] if origin else [])
        return {"headers": headers}

    for host in ("notes.example.com", "127.0.0.1:8765", "localhost:8765"):  # direct, or through a local proxy
        origins.check(scope(host))
    origins.check(scope("notes.example.com", "https://notes.example.com"))
    for refused in (scope("evil.example.com"), scope("notes.example.com", "http://localhost:3000"),
                    scope("notes.example.com", "https://evil.example.com")):
        with pytest.raises(PolicyDenied):
            origins.check(refused)
