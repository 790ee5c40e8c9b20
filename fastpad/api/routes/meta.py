"""Discovery routes, reachable without a credential: health, OpenAPI, RFC 9728 metadata, error pages.

The protected-resource metadata names this server as its own authorization
server (RFC 8414 metadata and endpoints: ``routes/oauth.py``), with the same
issuer and scopes, and answers CORS requests as those routes do.
"""

from __future__ import annotations

import json

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse, JSONResponse, Response

from fastpad import __version__
from fastpad.api import catalog
from fastpad.api.etag import none_match, strong_etag
from fastpad.api.negotiation import choose
from fastpad.api.problems import Unavailable
from fastpad.api.routes.oauth import CORS, preflight
from fastpad.api.schemas import Health, ProtectedResourceMetadata
from fastpad.errors import NotFound

router = APIRouter(tags=["discovery"])

MARKDOWN = "text/markdown; charset=utf-8"


@router.get("/health", response_model=Health, summary="Liveness plus a database round trip")
async def health(request: Request) -> Response:
    deployment = request.app.state.deployment
    try:
        await run_in_threadpool(deployment.store.ping)
    except Exception as exc:  # the database, not the request, is at fault
        raise Unavailable(
            detail="The database did not answer.", extra={"retry_after_ms": 1000}
        ) from exc
    return JSONResponse(
        {"status": "ok", "database": "ok", "version": __version__},
        headers={"cache-control": "no-store"},
    )


@router.get("/openapi.json", include_in_schema=False)
async def openapi_document(request: Request) -> Response:
    state = request.app.state
    if getattr(state, "openapi_bytes", None) is None:
        body = json.dumps(request.app.openapi(), sort_keys=True, separators=(",", ":")).encode()
        state.openapi_bytes, state.openapi_etag = body, strong_etag(body)
    headers = {"etag": state.openapi_etag, "cache-control": "no-cache"}
    if none_match(request.headers.get("if-none-match"), state.openapi_etag):
        return Response(status_code=304, headers=headers)
    return Response(state.openapi_bytes, media_type="application/json", headers=headers)


@router.get(
    "/.well-known/oauth-protected-resource",
    response_model=ProtectedResourceMetadata,
    summary="RFC 9728 protected-resource metadata",
)
async def protected_resource(request: Request, response: Response) -> ProtectedResourceMetadata:
    base = request.app.state.base_url
    response.headers.update(CORS)
    return ProtectedResourceMetadata(
        resource=base,
        authorization_servers=[base],
        scopes_supported=list(request.app.state.scopes),
        bearer_methods_supported=["header"],
        resource_name="Fastpad",
        resource_documentation=f"{base}/errors",
    )


router.add_api_route("/.well-known/oauth-protected-resource", preflight, methods=["OPTIONS"], include_in_schema=False)


@router.get("/errors", summary="The catalog of problem types", response_class=HTMLResponse)
async def error_index(request: Request) -> Response:
    base = request.app.state.base_url
    types = catalog.problem_types()
    if choose(request.headers.get("accept"), ["text/html", "text/markdown"]) == "text/markdown":
        return Response(catalog.render_index_markdown(types, base), media_type=MARKDOWN)
    return HTMLResponse(catalog.render_index_html(types, base))


@router.get("/errors/{slug}", summary="One problem type: what it means and what to do next", response_class=HTMLResponse)
async def error_page(slug: str, request: Request) -> Response:
    base = request.app.state.base_url
    problem_type = catalog.problem_types().get(slug)
    if problem_type is None:
        raise NotFound(detail=f"There is no problem type {slug!r}.", next_call="GET /errors for the catalog")
    if choose(request.headers.get("accept"), ["text/html", "text/markdown"]) == "text/markdown":
        return Response(catalog.render_markdown(problem_type, base), media_type=MARKDOWN)
    return HTMLResponse(catalog.render_html(problem_type, base))
