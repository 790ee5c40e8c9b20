"""The OAuth 2.1 authorization server's machine endpoints (the service is ``fastpad.security.oauth``).

* ``GET /.well-known/oauth-authorization-server`` — RFC 8414 metadata, naming
  the endpoints below and the authorization endpoint (``/oauth/authorize``, a
  page: ``fastpad/web/authorize.py``).
* ``POST /oauth/register`` — Dynamic Client Registration (RFC 7591): JSON in,
  ``201`` with the client information out.
* ``POST /oauth/token`` — ``authorization_code`` (with the PKCE verifier) and
  ``refresh_token`` grants, form-encoded (RFC 6749 §4.1.3, §6).
* ``POST /oauth/revoke`` — RFC 7009.

A refusal is OAuth's own ``{"error", "error_description"}`` with status 400
(RFC 6749 §5.2, RFC 7591 §3.2.2); what is not OAuth's to say — a rate limit,
a body too large — stays a problem document. Nobody holds a credential here, so
each route is limited per client address (registrations as device-login
starts, 20 a minute; token and revocation requests as device polls, 60), and
every answer is ``no-store``. Browser-based clients (the MCP Inspector) call
these from another origin, so they answer CORS requests from anywhere: they
read no cookie, so nothing ambient can be borrowed.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from starlette.responses import JSONResponse, Response

from fastpad.api.routes.common import JSON, media_type
from fastpad.security.oauth import OAuthError, OAuthService, parameters, registration

router = APIRouter(tags=["oauth"])

METADATA_PATH = "/.well-known/oauth-authorization-server"
AUTHORIZE_PATH = "/oauth/authorize"
TOKEN_PATH = "/oauth/token"
REGISTER_PATH = "/oauth/register"
REVOKE_PATH = "/oauth/revoke"
FORM = "application/x-www-form-urlencoded"
# Any origin may call the credential-free OAuth and discovery routes; none of them reads a cookie.
CORS = {"access-control-allow-origin": "*"}
_PREFLIGHT = {**CORS, "access-control-allow-methods": "GET, POST, OPTIONS",
              "access-control-allow-headers": "authorization, content-type, mcp-protocol-version",
              "access-control-max-age": "600"}
_NO_STORE = {"cache-control": "no-store", "pragma": "no-cache", **CORS}


def service(request: Request) -> OAuthService:
    state = request.app.state
    return OAuthService(state.deployment.store, state.deployment.tokens, base_url=state.base_url)


def preflight() -> Response:
    """The answer to a CORS preflight (``OPTIONS``) on a credential-free route."""
    return Response(status_code=204, headers=_PREFLIGHT)


def _limit(request: Request, bucket: str, limit: int, what: str) -> None:
    address = request.client.host if request.client else "unknown"
    request.app.state.rate_limiter.hit(f"{bucket}:{address}", limit, what=what)


def _refusal(error: OAuthError) -> Response:
    return JSONResponse({"error": error.error, "error_description": error.detail}, status_code=400, headers=_NO_STORE)


async def _answer(request: Request, read: Callable[[Request], Awaitable[Any]],
                  handle: Callable[[OAuthService, Any], Any], *, status: int = 200) -> Response:
    """Read the body, hand it to the service off the event loop, and answer with its JSON (or nothing),
    or with the OAuth refusal either raised."""
    try:
        body = await run_in_threadpool(handle, service(request), await read(request))
    except OAuthError as refused:
        return _refusal(refused)
    if body is None:
        return Response(status_code=status, headers=_NO_STORE)
    return JSONResponse(body, status_code=status, headers=_NO_STORE)


async def _metadata(request: Request) -> Any:
    if media_type(request) != JSON:
        raise OAuthError(f"a registration is {JSON}", error="invalid_client_metadata")
    try:
        return json.loads(await request.body())
    except ValueError:
        raise OAuthError("the body is not valid JSON", error="invalid_client_metadata") from None


async def _form(request: Request) -> dict[str, str]:
    if media_type(request) != FORM:
        raise OAuthError(f"the body is {FORM}", error="invalid_request")
    try:
        return parameters((await request.body()).decode("utf-8"))
    except UnicodeDecodeError:
        raise OAuthError("the body is not UTF-8", error="invalid_request") from None


def _grant(oauth: OAuthService, fields: dict[str, str]) -> dict[str, Any]:
    common = {"client_id": fields.get("client_id"), "resource": fields.get("resource")}
    grant_type = fields.get("grant_type")
    if grant_type == "authorization_code":
        return oauth.exchange_code(code=fields.get("code"), redirect_uri=fields.get("redirect_uri"),
                                   code_verifier=fields.get("code_verifier"), **common).response()
    if grant_type == "refresh_token":
        return oauth.refresh(refresh_token=fields.get("refresh_token"), scope=fields.get("scope"), **common).response()
    raise OAuthError("grant_type is authorization_code or refresh_token", error="unsupported_grant_type")


def _revocation(oauth: OAuthService, fields: dict[str, str]) -> None:
    if not fields.get("token"):
        raise OAuthError("token is required", error="invalid_request")
    oauth.revoke(client_id=fields.get("client_id"), token=fields["token"])


@router.get(METADATA_PATH, summary="RFC 8414 authorization server metadata (OAuth 2.1 + PKCE + dynamic registration)")
async def authorization_server_metadata(request: Request) -> Response:
    base = request.app.state.base_url
    return JSONResponse({
        "issuer": base,
        "authorization_endpoint": base + AUTHORIZE_PATH,
        "token_endpoint": base + TOKEN_PATH,
        "registration_endpoint": base + REGISTER_PATH,
        "revocation_endpoint": base + REVOKE_PATH,
        "scopes_supported": list(request.app.state.scopes),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "authorization_response_iss_parameter_supported": True,
    }, headers=CORS)


@router.post(REGISTER_PATH, include_in_schema=False)
async def register(request: Request) -> Response:
    _limit(request, "oauth-register", request.app.state.limits.device_starts_per_window, "client registrations")
    return await _answer(request, _metadata, lambda oauth, metadata: registration(oauth.register(metadata)),
                         status=201)


@router.post(TOKEN_PATH, include_in_schema=False)
async def token(request: Request) -> Response:
    _limit(request, "oauth-token", request.app.state.limits.device_polls_per_window, "token requests")
    return await _answer(request, _form, _grant)


@router.post(REVOKE_PATH, include_in_schema=False)
async def revoke(request: Request) -> Response:
    _limit(request, "oauth-token", request.app.state.limits.device_polls_per_window, "token requests")
    return await _answer(request, _form, _revocation)


for _path in (METADATA_PATH, REGISTER_PATH, TOKEN_PATH, REVOKE_PATH):
    router.add_api_route(_path, preflight, methods=["OPTIONS"], include_in_schema=False)
