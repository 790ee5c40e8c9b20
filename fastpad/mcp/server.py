"""Wiring: the SDK's low-level ``Server`` with the twelve tools, served at ``POST /mcp``.

:func:`mount` is the one line ``api/app.py`` calls: it adds the route and enters the
SDK session manager in the app's own lifespan. One ``Server`` answers both protocol
eras — the 2025-11-25 ``initialize`` handshake and the stateless 2026-07-28 revision
(``server/discover``, ``_meta`` on every request, ``Mcp-Method``/``Mcp-Name`` headers,
``resultType``, ``ttlMs``/``cacheScope``) — with no server-side MCP session.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from starlette.routing import Route

from fastpad import __version__
from fastpad.mcp.dispatch import Dispatcher
from fastpad.mcp.http import PATH, PRINCIPAL_STATE, McpEndpoint
from fastpad.mcp.identity import INSTRUCTIONS, SERVER_NAME
from fastpad.mcp.tools import TOOLS
from fastpad.security.principals import Principal


def build_server(dispatcher: Dispatcher) -> Server[Any]:
    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return dispatcher.list_tools(_principal(ctx))

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        return await dispatcher.call_tool(_principal(ctx), params.name, params.arguments)

    # Input schemas are static, so the 2026-07-28 transport can check Mcp-Param headers against them
    # without running tools/list for every call.
    schemas = {tool.name: tool.input_schema for tool in dispatcher.tools}
    return Server(SERVER_NAME, version=__version__, title="Fastpad", instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool, get_tool_input_schema=schemas.get)


def _principal(ctx: ServerRequestContext[Any]) -> Principal:
    """Who is calling: the HTTP gate put it in the request's state before the SDK saw the request."""
    request = ctx.request
    principal = request.scope.get("state", {}).get(PRINCIPAL_STATE) if request is not None else None
    if not isinstance(principal, Principal):
        raise MCPError(code=types.INVALID_REQUEST, message="no authenticated caller")
    return principal


def mount(app: Any) -> McpEndpoint:
    """Serve MCP at ``POST /mcp`` in the FastAPI ``app`` (built by ``api.app.create_app``)."""
    state = app.state
    dispatcher = Dispatcher(state.outbound_env, TOOLS)
    endpoint = McpEndpoint(dispatcher, build_server(dispatcher), max_body_bytes=state.limits.authenticated_body_bytes)
    # First, not last: a request is matched against the routes in order, and behind the HTTP API's
    # every MCP call was first checked against all of them (~140 checks, 0.36 ms of a call's server
    # time, issue 29). No other route matches /mcp, so the order changes no answer.
    app.router.routes.insert(0, Route(PATH, endpoint, methods=None))
    outer = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(parent: Any) -> AsyncIterator[Any]:
        async with outer(parent) as value, endpoint.running():
            yield value

    app.router.lifespan_context = lifespan
    return endpoint
