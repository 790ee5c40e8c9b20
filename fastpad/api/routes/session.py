"""Web sign-in: ``POST /v1/session`` sets the session cookie; ``GET /v1/session`` says whose it
is (and its CSRF token, for a page that outlived the session it was served under);
``DELETE /v1/session`` ends it.

The cookie is HttpOnly, SameSite=Lax, and Secure whenever the server's base
URL is https. The CSRF token comes back in the body (never in a cookie) and
must accompany every cookie-authenticated mutation as ``x-csrf-token``.
Sign-in has no credential to count against, so it is rate limited per
client address.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from starlette.responses import JSONResponse, Response

from fastpad.api.auth import SESSION_COOKIE, Caller, authenticate
from fastpad.api.schemas import SessionIn, SessionOut
from fastpad.errors import PolicyDenied

router = APIRouter(prefix="/v1/session", tags=["session"])


@router.post("", status_code=201, response_model=SessionOut, summary="Sign in with email and password")
async def sign_in(request: Request, body: SessionIn) -> Response:
    state = request.app.state
    address = request.client.host if request.client else "unknown"
    state.rate_limiter.hit(f"sign-in:{address}", state.limits.sign_in_per_window, what="sign-in attempts")
    people = state.deployment.people

    def open_session() -> tuple[object, str, str]:
        principal = people.authenticate_password(body.email, body.password)
        session_id, csrf_token = people.create_session(principal)
        return principal, session_id, csrf_token

    principal, session_id, csrf_token = await run_in_threadpool(open_session)
    response = JSONResponse(
        {
            "csrf_token": csrf_token,
            "workspace_id": principal.workspace_id,  # type: ignore[attr-defined]
            "principal_id": principal.principal_id,  # type: ignore[attr-defined]
            "kind": principal.kind,  # type: ignore[attr-defined]
            "scopes": sorted(principal.scopes),  # type: ignore[attr-defined]
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
