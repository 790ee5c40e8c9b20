"""Web sign-in: ``POST /v1/session`` sets the session cookie; ``GET /v1/session`` says whose it
is (and its CSRF token, for a page that outlived the session it was served under);
``DELETE /v1/session`` ends it; ``POST /v1/session/workspace`` moves it into another of the
person's workspaces (a new session there, the old one ended: a new cookie and CSRF token).

The cookie is HttpOnly, SameSite=Lax, and Secure whenever the server's base
URL is https. The CSRF token comes back in the body (never in a cookie) and
must accompany every cookie-authenticated mutation as ``x-csrf-token``.
Sign-in has no credential to count against, so it is rate limited per
client address and per account (the email it names).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from starlette.responses import JSONResponse, Response

from fastpad.api.auth import SESSION_COOKIE, Caller, authenticate
from fastpad.api.schemas import SessionIn, SessionOut, SwitchIn
from fastpad.errors import PolicyDenied

router = APIRouter(prefix="/v1/session", tags=["session"])


@router.post("", status_code=201, response_model=SessionOut, summary="Sign in with email and password",
             responses={429: {"description": "rate-limited: too many attempts from this address or for this account"}})
async def sign_in(request: Request, body: SessionIn) -> Response:
    limit_attempts(request, "sign-in", body.email, request.app.state.limits.sign_in_per_window)
    people = request.app.state.deployment.people
    principal = await run_in_threadpool(people.authenticate_password, body.email, body.password)
    return await open_session(request, principal)


def limit_attempts(request: Request, what: str, account: str, limit: int) -> None:
    """Count one attempt at ``what`` against the client's address and against the account it names
    (so neither many addresses at one account nor one address at many accounts gets far)."""
    limiter = request.app.state.rate_limiter
    address = request.client.host if request.client else "unknown"
    limiter.hit(f"{what}:address:{address}", limit, what=f"{what} attempts")
    limiter.hit(f"{what}:account:{account.strip().lower()}", limit, what=f"{what} attempts")


async def open_session(request: Request, principal: Any) -> Response:
    """A web session for a person who just proved who they are: 201 with its CSRF token, and the cookie."""
    people = request.app.state.deployment.people
    session_id, csrf_token = await run_in_threadpool(
        lambda: people.create_session(principal, user_agent=request.headers.get("user-agent", "")))
    return _with_cookie(request, principal, session_id, csrf_token)


def _with_cookie(request: Request, principal: Any, session_id: str, csrf_token: str) -> Response:
    """201 naming the session's person and workspace, with its CSRF token, setting its cookie."""
    state = request.app.state
    people = state.deployment.people
    response = JSONResponse(
        {
            "csrf_token": csrf_token,
            "workspace_id": principal.workspace_id,
            "principal_id": principal.principal_id,
            "kind": principal.kind,
            "scopes": sorted(principal.scopes),
        },
        status_code=201,
        headers={"cache-control": "no-store"},
    )
    response.set_cookie(
        SESSION_COOKIE,
        session_id,
        max_age=getattr(people, "session_max_age_s", None),
        path="/",
        secure=state.base_url.startswith("https://"),
        httponly=True,
        samesite="lax",
    )
    return response


@router.get("", response_model=SessionOut, summary="The signed-in session: whose it is and its CSRF token",
            responses={401: {"description": "unauthenticated: no session"},
                       403: {"description": "policy-denied: a bearer token has no session"}})
def current_session(request: Request, caller: Annotated[Caller, Depends(authenticate)]) -> Response:
    # Only the cookie's own session reads its CSRF token: a GET another site cannot read (no CORS).
    if caller.session_id is None:
        raise PolicyDenied(detail="a bearer token has no web session", extra={"reason": "not_a_session"})
    principal = caller.principal
    return JSONResponse(
        {
            "csrf_token": request.app.state.deployment.people.csrf_token(caller.session_id),
            "workspace_id": principal.workspace_id,
            "principal_id": principal.principal_id,
            "kind": principal.kind,
            "scopes": sorted(principal.scopes),
        },
        headers={"cache-control": "no-store"},
    )


@router.delete("", status_code=204, summary="Sign out (cookie sessions need x-csrf-token)")
def sign_out(request: Request, caller: Annotated[Caller, Depends(authenticate)]) -> Response:
    if caller.session_id is not None:
        request.app.state.deployment.people.end_session(caller.session_id)
    response = Response(status_code=204)
    response.delete_cookie(
        SESSION_COOKIE, path="/", secure=request.app.state.base_url.startswith("https://"),
        httponly=True, samesite="lax",
    )
    return response


@router.post("/workspace", status_code=201, response_model=SessionOut,
             summary="Switch this browser's session into another of your workspaces (a new cookie and CSRF token)",
             responses={403: {"description": "policy-denied: a bearer token stays in its one workspace"},
                        404: {"description": "not-found: no workspace of yours with this id"}})
async def switch_workspace(request: Request, body: SwitchIn,
                           caller: Annotated[Caller, Depends(authenticate)]) -> Response:
    if caller.session_id is None:
        raise PolicyDenied(detail="a token acts in the one workspace it was minted in; only a web session switches",
                           extra={"reason": "not_a_session"})
    people = request.app.state.deployment.people
    session_id, csrf_token = await run_in_threadpool(lambda: people.switch_session(
        caller.session_id, body.workspace_id, user_agent=request.headers.get("user-agent", "")))
    principal = await run_in_threadpool(people.session_principal, session_id)
    return _with_cookie(request, principal, session_id, csrf_token)
