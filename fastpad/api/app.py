"""The app factory: ``create_app(deployment, base_url=…, limits=…)``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from starlette.types import Scope

from fastpad import __version__
from fastpad.api import openapi, problems
from fastpad.api.agent_outbound import AgentOutboundMiddleware
from fastpad.api.auth import carries_credential
from fastpad.api.body_limits import BodyLimitMiddleware
from fastpad.api.idempotency import Idempotency
from fastpad.api.limits import Limits
from fastpad.api.ratelimit import InMemoryRateLimiter
from fastpad.api.timing import ServerTimingMiddleware
from fastpad.api.routes import links, meta, notes, session
from fastpad.api.routes import block_history, calendar, changes, memory, note_history
from fastpad.api.routes import search
from fastpad.api.routes import agents, ask, capture, device
from fastpad.api.routes import turns
from fastpad.api.routes import typed
from fastpad.api.routes import attachments, export, imports, placeholders, publishing
from fastpad.api.routes import oauth
from fastpad.api.routes import audit
from fastpad.api.routes import team, workspaces
from fastpad.api.routes import inbox
from fastpad.api.routes import comments
from fastpad.api.routes import presence
from fastpad.errors import FastpadError
from fastpad import mcp
from fastpad.mcp.env import McpEnv
from fastpad.web import app as web_app
from fastpad.web import authorize as web_authorize
from fastpad.web import join as web_join
from fastpad.web import routes as web_pages

# Routes reachable without a credential (the body cap there is 64 KiB).
PUBLIC_PATHS = frozenset({"/health", "/openapi.json", "/.well-known/oauth-protected-resource", "/errors",
                          "/v1/device/code", "/v1/device/token", "/device",
                          oauth.METADATA_PATH, oauth.REGISTER_PATH, oauth.TOKEN_PATH, oauth.REVOKE_PATH,
                          oauth.AUTHORIZE_PATH, team.ACCEPT_PATH, team.SIGNUP_PATH})
PUBLISHED = ("/n/", "/v1/public/")  # published notes, readable by anyone
PUBLIC_PREFIXES = ("/errors/", "/invite/", *PUBLISHED)
SIGN_IN = ("POST", "/v1/session")


def is_public(scope: Scope) -> bool:
    path = scope.get("path", "")
    return (
        path in PUBLIC_PATHS
        or path.startswith(PUBLIC_PREFIXES)
        or (scope.get("method"), path) == SIGN_IN
    )


def create_app(deployment: Any, *, base_url: str, limits: Limits | None = None) -> FastAPI:
    base_url = base_url.rstrip("/")
    limits = limits or Limits()

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        # What runs beside the server (the embedding worker) lives as long as the app.
        start, stop = getattr(deployment, "start_background", None), getattr(deployment, "stop_background", None)
        if start is not None:
            start()
        try:
            yield
        finally:
            if stop is not None:
                stop()

    app = FastAPI(
        lifespan=lifespan,
        title="Fastpad API",
        version=__version__,
        description="Notes as CRDT documents of blocks with stable ULIDs. Every failure is an RFC 9457 problem document.",
        openapi_url=None,  # served by routes/meta.py with a strong ETag
        docs_url=None,
        redoc_url=None,
    )
    app.state.deployment = deployment
    app.state.base_url = base_url
    app.state.limits = limits
    app.state.rate_limiter = InMemoryRateLimiter(window_s=limits.rate_window_s)
    app.state.idempotency = Idempotency(getattr(deployment, "idempotency", deployment.store))
    app.state.scopes = _scopes()
    app.state.openapi_bytes = None
    # The outbound policy per credential (redaction key, host allowlists): one for MCP and HTTP alike.
    app.state.outbound_env = McpEnv.from_deployment(deployment, base_url, app.state.rate_limiter)

    problems.install(app)
    app.include_router(meta.router)
    app.include_router(session.router)
    app.include_router(team.router)  # invitations, sign-up, members and roles, your account and sessions
    app.include_router(workspaces.router)  # the person's workspaces: list, create (switching is in session)
    app.include_router(notes.router)
    app.include_router(turns.router)  # proposals and review; the pages below link to this server
    app.include_router(web_pages.router)
    app.include_router(web_join.router)  # /invite/{token} and /signup: joining, before any session
    deployment.review.public_url = base_url
    app.include_router(links.router)
    app.include_router(search.router)
    app.include_router(typed.router)  # types, typed properties, structured query, collections
    for router in (device.router, capture.router, ask.router, agents.router):  # fp login, capture, ask, agents
        app.include_router(router)
    for router in (changes.router, block_history.router, note_history.router, calendar.router,
                   memory.router):  # feed, block history, note history, …
        app.include_router(router)
    app.include_router(export.router)  # the whole workspace in one read, for fp pull
    app.include_router(publishing.router)  # publish, unpublish, and the public pages anyone reads
    app.include_router(placeholders.router)  # a person expands a redaction placeholder
    app.include_router(imports.router)  # imports: upload, status, ledger, cancel, verify
    app.include_router(attachments.router)  # images and PDFs: uploaded, or stored by an import
    app.include_router(audit.router)  # the workspace audit log, for owners and admins
    app.include_router(inbox.router)  # a person's Inbox of mentions
    app.include_router(comments.router)  # comments on notes: threads anchored to blocks and text
    app.include_router(presence.router)  # who is in a note now: in memory, never stored
    deployment.presence.ttl_s = limits.presence_ttl_s
    app.include_router(oauth.router)  # the OAuth authorization server MCP clients sign in through …
    app.include_router(web_authorize.router)  # … and its authorization endpoint, a consent page
    app.include_router(web_app.router)  # the browser app: its shell, bundle and service worker
    mcp.mount(app)  # POST /mcp: the agent tools (fastpad/mcp), in this app's lifespan

    def render(error: FastpadError, scope: Scope) -> Any:
        return problems.problem_response(error, base_url, instance=scope.get("path"), close=True)

    # Inside the body limits and the timing, around every route: agents' answers leave through it.
    app.add_middleware(
        AgentOutboundMiddleware,
        policy_for=app.state.outbound_env.policy,
        refuse=lambda error, scope: problems.problem_response(error, base_url, instance=scope.get("path")),
        names_below=deployment.notes.names_below,
    )
    app.add_middleware(
        BodyLimitMiddleware,
        limits=limits,
        is_public=is_public,
        carries_credential=carries_credential,
        render=render,
    )

    # Added last: outermost, so it times everything but the published notes anyone may probe.
    app.add_middleware(ServerTimingMiddleware, untimed=lambda scope: scope.get("path", "").startswith(PUBLISHED))

    def build_openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = openapi.build(app, public_paths=PUBLIC_PATHS | {
                "/errors/{slug}", "/n/{note_id}", "/v1/public/notes/{note_id}"})
        return app.openapi_schema

    app.openapi = build_openapi  # type: ignore[method-assign]
    return app


def _scopes() -> tuple[str, ...]:
    from fastpad.security.scopes import ALL_SCOPES

    return tuple(ALL_SCOPES)
