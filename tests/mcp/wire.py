"""One JSON-RPC request to ``/mcp`` as raw HTTP, for the tests that look at the wire itself
(status codes, headers, exact bytes). Everything else uses the SDK clients."""

from __future__ import annotations

from typing import Any

import httpx

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


def post(url: str, token: str | None, method: str, params: dict[str, Any] | None = None, *, era: str = MODERN,
         headers: dict[str, str] | None = None) -> httpx.Response:
    """``method`` as one stateless request: the 2026-07-28 envelope (``_meta``, ``Mcp-Method``/``Mcp-Name``),
    or a 2025-11-25 request (the server is stateless, so no handshake is needed first)."""
    params = dict(params or {})
    sent = {"content-type": "application/json", "accept": "application/json, text/event-stream",
            "mcp-protocol-version": era}
    if era == MODERN:
        params["_meta"] = META
        sent["mcp-method"] = method
        if "name" in params:
            sent["mcp-name"] = params["name"]
    if token is not None:
        sent["authorization"] = f"Bearer {token}"
    sent.update(headers or {})
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return httpx.post(url, json=body, headers=sent, timeout=30)
