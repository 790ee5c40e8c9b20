"""``POST /mcp``: the gate in front of the SDK's Streamable HTTP transport.

The SDK serves both protocol eras from one stateless, JSON-answering session
manager; this gate decides who may reach it, answering every refusal with the
API's own problem documents (``api.problems``, the one renderer):

1. ``Host`` and ``Origin`` (DNS-rebinding protection): ``Host`` must name this server
   (its base URL's host, or a loopback address — what a reverse proxy on the same
   machine sends, and never what a rebound page sends), and ``Origin``, when sent, must
   be the server's own origin — or, for a server on a loopback address, any loopback
   origin. Otherwise 403 ``policy-denied``.
2. Only ``POST``: anything else is 405 with ``Allow: POST`` (the handshake era would
   otherwise hold a GET open as an event stream nobody writes to).
3. ``Authorization: Bearer fpk_live_…`` → a ``Principal``. None or a rejected one is
   401 with ``WWW-Authenticate: Bearer resource_metadata="{base}/.well-known/oauth-protected-resource"``.
4. ``Content-Type: application/json``, or 415 ``unsupported-media-type`` (the SDK would answer a
   plain-text 400). A JSON body that is not a JSON-RPC message is the SDK's to answer, as JSON-RPC.
5. A ``tools/call`` of a tool the credential's scopes do not allow is 403
   ``insufficient_scope`` whose challenge names every scope to re-authorize for.

The principal rides in the request's ``state`` to the tool handlers.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import anyio.to_thread
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Message, Receive, Scope, Send

from fastpad.api.problems import MethodNotAllowed, UnsupportedMediaType, problem_response
from fastpad.errors import FastpadError, PolicyDenied, Unauthenticated
from fastpad.mcp.dispatch import Dispatcher, scope_refusal
from fastpad.security.principals import Principal

PATH = "/mcp"
JSON = "application/json"
PRINCIPAL_STATE = "fastpad.principal"
_LOOPBACK = ("localhost", "127.0.0.1", "[::1]")


class McpEndpoint:
    """The ASGI app mounted at ``/mcp``; :meth:`running` is entered in the app's lifespan."""

    def __init__(self, dispatcher: Dispatcher, manager_app: Any, *, max_body_bytes: int) -> None:
        self.dispatcher = dispatcher
        self.env = dispatcher.env
        self.origins = Origins(self.env.base_url)
        # Host, Origin and Content-Type are checked here, with problem documents.
        self.manager = StreamableHTTPSessionManager(
            app=manager_app, json_response=True, stateless=True, max_request_body_size=max_body_bytes,
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )

    def running(self) -> Any:
        return self.manager.run()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            self.origins.check(scope)
            if scope["method"] != "POST":
                raise MethodNotAllowed(detail=f"{scope['method']} is not allowed on {PATH}: MCP requests are POSTs",
                                       extra={"allow": ["POST"]})
            principal = await anyio.to_thread.run_sync(self._authenticate, scope)
            _check_media_type(scope)
            body = await _read_body(receive)
            self._check_tool_scope(principal, body)
        except FastpadError as error:
            await problem_response(error, self.env.base_url, instance=PATH)(scope, receive, send)
            return
        scope.setdefault("state", {})[PRINCIPAL_STATE] = principal
        await self.manager.handle_request(scope, _replay(body, receive), send)

    def _authenticate(self, scope: Scope) -> Principal:
        header = _header(scope, b"authorization")
        if header is None:
            raise Unauthenticated(detail="MCP needs a credential: Authorization: Bearer fpk_live_…")
        kind, _, token = header.partition(" ")
        if kind.lower() != "bearer" or not token.strip():
            raise Unauthenticated(detail="Authorization must be 'Bearer fpk_live_…'",
                                  extra={"credential_rejected": True})
        try:
            return self.env.deployment.tokens.authenticate(token.strip())
        except Unauthenticated as rejected:
            rejected.extra.setdefault("credential_rejected", True)
            raise

    def _check_tool_scope(self, principal: Principal, body: bytes) -> None:
        """A ``tools/call`` of a tool this credential may not see is refused at the HTTP layer, so an
        OAuth-aware client can step up; a malformed body is the SDK's to answer."""
        try:
            message = json.loads(body)
        except ValueError:
            return
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            return
        params = message.get("params")
        tool = self.dispatcher.by_name.get(params.get("name")) if isinstance(params, dict) else None
        refusal = scope_refusal(principal, tool) if tool is not None else None
        if refusal is not None:
            raise refusal


def _check_media_type(scope: Scope) -> None:
    media = (_header(scope, b"content-type") or "").split(";")[0].strip().lower()
    if media != JSON:
        raise UnsupportedMediaType(detail=f"POST {PATH} reads {JSON}, not {media or 'a body without Content-Type'}.",
                                   extra={"accepted": [JSON]})


class Origins:
    """Which ``Host`` and ``Origin`` headers reach this server (DNS-rebinding protection)."""

    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        self.host = parts.netloc.lower()
        self.origin = f"{parts.scheme}://{self.host}"
        self.loopback = (parts.hostname or "").lower() in ("localhost", "127.0.0.1", "::1")

    def check(self, scope: Scope) -> None:
        host = (_header(scope, b"host") or "").lower()
        if not (host == self.host or _is_loopback(host)):
            raise PolicyDenied(detail=f"Host {host or '(none)'} is not this server's", extra={"reason": "host"},
                               next_call=f"send requests to {self.origin}{PATH}")
        origin = _header(scope, b"origin")
        if origin is None:
            return  # not a browser: nothing to rebind
        origin = origin.lower()
        if origin == self.origin:
            return
        parts = urlsplit(origin)
        if self.loopback and parts.scheme in ("http", "https") and _is_loopback(parts.netloc):
            return
        raise PolicyDenied(detail=f"Origin {origin} may not call this server", extra={"reason": "origin"},
                           next_call=f"call {self.origin}{PATH} from a client, not from a web page")


def _is_loopback(netloc: str) -> bool:
    """``localhost``, ``127.0.0.1`` or ``[::1]``, with or without a port."""
    return any(netloc == name or netloc.startswith(name + ":") for name in _LOOPBACK)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


async def _read_body(receive: Receive) -> bytes:
    """The whole body (the app's body limiter has already capped its size and pace)."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
