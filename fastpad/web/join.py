"""Pages for joining: ``/invite/{token}`` (an invitation link) and ``/signup`` (where sign-up is
open). Like ``/signin``, they are served to a browser with no session yet, and a POST that a
browser says came from another site is refused. The invitation's secret in the URL is the form's
own proof; the sign-up form carries a CSRF token over a nonce cookie, as the sign-in form does.
Success sets the session cookie and goes to the app; a refused form comes back as the page.
"""

from __future__ import annotations

import secrets

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from starlette.responses import Response

from fastpad.api.auth import SESSION_COOKIE
from fastpad.api.routes.session import limit_attempts
from fastpad.errors import FastpadError, PolicyDenied
from fastpad.security.invitations import InvitationGone
from fastpad.security.principals import Principal
from fastpad.web import pages
from fastpad.web.common import cross_site_refusal, html_page, one, read_form, refusal_page, same_origin, secure, see_other

router = APIRouter(include_in_schema=False)

SIGNUP_COOKIE = "fastpad_signup"  # the sign-up form's CSRF nonce


def _signed_in_response(request: Request, principal: Principal) -> Response:
    """The new session's cookie, sending the browser home; a session this browser held before (an
    existing account joining another workspace) ends, as a switch ends it."""
    people = request.app.state.deployment.people
    session_id, _ = people.create_session(principal, user_agent=request.headers.get("user-agent", ""))
    if request.cookies.get(SESSION_COOKIE):
        people.end_session(request.cookies[SESSION_COOKIE])
    response = see_other("/")
    response.set_cookie(SESSION_COOKIE, session_id, max_age=people.session_max_age_s, path="/",
                        secure=secure(request), httponly=True, samesite="lax")
    return response


@router.get("/invite/{token}")
def invitation_form(request: Request, token: str) -> Response:
    invitations = request.app.state.deployment.invitations
    try:
        invitation = invitations.open(token)
    except InvitationGone:
        return html_page(pages.invitation_gone_page(), 404)
    except PolicyDenied as exc:
        return refusal_page(str(exc), exc.status)
    return html_page(pages.invitation_page(token, invitation.email, invitation.role,
                                           workspace=invitation.workspace_name,
                                           has_account=invitations.account_exists(invitation.email)))


@router.post("/invite/{token}")
async def accept_invitation(request: Request, token: str) -> Response:
    if not same_origin(request):
        return cross_site_refusal(request, f"/invite/{token}")
    invitations = request.app.state.deployment.invitations
    try:
        form = await read_form(request)
        limit_attempts(request, "invitation", token, request.app.state.limits.join_per_window)
        principal = await run_in_threadpool(lambda: invitations.accept(
            token, display_name=one(form, "display_name"), password=one(form, "password")))
        return await run_in_threadpool(_signed_in_response, request, principal)
    except InvitationGone:
        return html_page(pages.invitation_gone_page(), 404)
    except FastpadError as exc:
        try:
            invitation = invitations.open(token)
        except FastpadError:
            return refusal_page(str(exc), exc.status)
        return html_page(pages.invitation_page(token, invitation.email, invitation.role, error=str(exc),
                                               workspace=invitation.workspace_name,
                                               has_account=invitations.account_exists(invitation.email)), exc.status)


def _signup_csrf(request: Request, nonce: str) -> str:
    return request.app.state.deployment.people.csrf_token(f"signup:{nonce}")


@router.get("/signup")
def signup_form(request: Request) -> Response:
    if request.app.state.deployment.invitations.signup != "open":
        return refusal_page("This server takes new people by invitation only; ask a member to invite you.", 403,
                            back="/signin")
    nonce = secrets.token_urlsafe(24)
    response = html_page(pages.signup_page(_signup_csrf(request, nonce)))
    response.set_cookie(SIGNUP_COOKIE, nonce, max_age=3600, path="/signup", secure=secure(request), httponly=True,
                        samesite="strict")
    return response


@router.post("/signup")
async def sign_up(request: Request) -> Response:
    if not same_origin(request):
        return cross_site_refusal(request, "/signup")
    nonce = request.cookies.get(SIGNUP_COOKIE, "")
    try:
        form = await read_form(request)
    except FastpadError as exc:
        return refusal_page(str(exc), exc.status, back="/signup")
    csrf = one(form, "csrf_token")
    if not nonce or not secrets.compare_digest(_signup_csrf(request, nonce), csrf):
        return refusal_page("The sign-up form expired; load it again.", 403, back="/signup")
    email, display_name = one(form, "email"), one(form, "display_name")
    try:
        limit_attempts(request, "sign-up", email, request.app.state.limits.join_per_window)
        principal = await run_in_threadpool(lambda: request.app.state.deployment.invitations.sign_up(
            email, one(form, "password"), display_name=display_name, workspace_name=one(form, "workspace_name")))
        response = await run_in_threadpool(_signed_in_response, request, principal)
    except FastpadError as exc:
        return html_page(pages.signup_page(csrf, error=str(exc), email=email, display_name=display_name), exc.status)
    response.delete_cookie(SIGNUP_COOKIE, path="/signup")
    return response
