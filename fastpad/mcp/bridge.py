"""``fp mcp``: a local stdio MCP server that is a bridge to a Fastpad server's ``POST /mcp``.

A local client launches ``fp mcp`` (``command: "fp"``, ``args: ["mcp"]``) and speaks
either protocol era to it over stdio; the SDK's ``Server`` answers the handshake,
``ping`` and ``server/discover`` itself and hands ``tools/list`` and ``tools/call`` to
the server, with the credential ``fp login`` stored (keychain or a 0600 file) or
``FASTPAD_URL``/``FASTPAD_TOKEN``. The credential never reaches the client.

Upstream every request is one stateless 2026-07-28 POST (``_meta`` with the protocol
version and capabilities, ``Mcp-Method``/``Mcp-Name`` headers). What the server answers
passes through as it is — results already went through its outbound path. A refusal
the server sends as an HTTP problem document (401, a missing scope's 403, 429), or a
server that cannot be reached, becomes an ``isError`` result carrying that problem
document, so the model reads the same thing it would over HTTP.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import httpx2
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_METHOD_HEADER, MCP_NAME_HEADER, MCP_PROTOCOL_VERSION_HEADER, encode_header_value
from mcp_types.version import LATEST_MODERN_VERSION

from fastpad import __version__
from fastpad.api.problems import problem_body
from fastpad.cli.client import USER_AGENT, RemoteProblem, ServerUnreachable
from fastpad.cli.profiles import Target
from fastpad.errors import FastpadError, Unauthenticated
from fastpad.mcp.identity import INSTRUCTIONS, SERVER_NAME

BRIDGE_INFO = {"name": "fp-mcp", "version": __version__}


class Upstream:
    """The Fastpad server's ``/mcp``, one stateless request at a time."""

    def __init__(self, target: Target, *, timeout: float = 60.0) -> None:
        if not target.token:
            raise Unauthenticated(detail=f"no credential for {target.url}",
                                  next_call=f"fp login --url {target.url}, or set FASTPAD_TOKEN")
        self.target = target
        self.endpoint = target.url.rstrip("/") + "/mcp"
        self._ids = itertools.count(1)
        self._http = httpx2.AsyncClient(timeout=timeout, headers={
            "authorization": f"Bearer {target.token}", "user-agent": USER_AGENT,
            "accept": "application/json, text/event-stream", MCP_PROTOCOL_VERSION_HEADER: LATEST_MODERN_VERSION,
        })

    async def __aenter__(self) -> "Upstream":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._http.aclose()

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The result of one request; ``MCPError`` for a JSON-RPC error, ``RemoteProblem`` for an
        HTTP refusal, ``ServerUnreachable`` when nothing answered."""
        meta = {types.PROTOCOL_VERSION_META_KEY: LATEST_MODERN_VERSION,
                types.CLIENT_CAPABILITIES_META_KEY: {}, types.CLIENT_INFO_META_KEY: BRIDGE_INFO}
        body = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": {**params, "_meta": meta}}
        headers = {MCP_METHOD_HEADER: method}
        if "name" in params:
            headers[MCP_NAME_HEADER] = encode_header_value(params["name"])
        try:
            response = await self._http.post(self.endpoint, json=body, headers=headers)
        except httpx2.TimeoutException as exc:
            raise ServerUnreachable(detail=f"{self.target.url} did not answer in time ({exc})") from None
        except httpx2.TransportError as exc:
            raise ServerUnreachable(detail=f"cannot reach {self.target.url}: {exc}") from None
        media = response.headers.get("content-type", "")
        if media.startswith("application/problem+json"):
            raise RemoteProblem(response.json(), response.status_code)
        try:
            message = response.json()
        except ValueError:
            raise RemoteProblem({"type": f"http-{response.status_code}", "title": "Unexpected answer",
                                 "status": response.status_code, "detail": response.text[:500]},
                                response.status_code) from None
        if "error" in message:
            error = message["error"]
            raise MCPError(code=error.get("code", types.INTERNAL_ERROR), message=error.get("message", ""),
                           data=error.get("data"))
        return _without_envelope(message.get("result") or {})


def _without_envelope(result: dict[str, Any]) -> dict[str, Any]:
    """The result minus what belongs to the upstream exchange (the local server stamps its own)."""
    return {k: v for k, v in result.items() if k not in ("_meta", "resultType")}


def build_bridge(upstream: Upstream) -> Server[Any]:
    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        cursor = {"cursor": params.cursor} if params is not None and params.cursor else {}
        try:
            result = await upstream.request("tools/list", cursor)
        except FastpadError as error:
            raise MCPError(code=types.INTERNAL_ERROR, message=f"{error.slug}: {error}",
                           data=_document(error, upstream)) from None
        return types.ListToolsResult.model_validate(result)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            result = await upstream.request("tools/call", {"name": params.name, "arguments": params.arguments or {}})
        except FastpadError as error:
            document = _document(error, upstream)
            return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(document))],
                                        structured_content=document, is_error=True)
        return types.CallToolResult.model_validate(result)

    return Server(SERVER_NAME, version=__version__, title="Fastpad (fp mcp)", instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


def _document(error: FastpadError, upstream: Upstream) -> dict[str, Any]:
    """The server's own problem document, or one for a server that did not answer."""
    document = getattr(error, "document", None)
    return document if isinstance(document, dict) else problem_body(error, upstream.target.url)


async def serve_stdio(target: Target) -> None:
    """Bridge stdin/stdout to the server until the client closes stdin."""
    from mcp.server.stdio import stdio_server

    async with Upstream(target) as upstream, stdio_server() as (read, write):
        server = build_bridge(upstream)
        await server.run(read, write, server.create_initialization_options())


async def check(target: Target) -> dict[str, Any]:
    """What this credential reaches through ``/mcp``: who it is, its scopes and tools."""
    async with Upstream(target, timeout=30.0) as upstream:
        listed = await upstream.request("tools/list", {})
        found = await upstream.request("tools/call", {"name": "fastpad_capabilities", "arguments": {}})
    capabilities = found.get("structuredContent") or {}
    if found.get("isError"):
        raise RemoteProblem(capabilities, int(capabilities.get("status") or 500))
    return {
        "server": target.url, "endpoint": upstream.endpoint,
        "credential": "FASTPAD_TOKEN" if target.profile is None else f"profile {target.profile}",
        "identity": capabilities.get("identity"), "scopes": capabilities.get("scopes"),
        "writable": capabilities.get("writable"), "tools": [tool["name"] for tool in listed.get("tools", [])],
    }
