"""Routes of the server-rendered pages: ``/signin``, ``/review/{turn_id}``, ``/agent-activity``,
``/settings/tokens`` (Settings → Agents & tokens).

Pages are for a person in a browser: the session cookie is the only credential
they take, and a page asked for without one redirects to ``/signin?next=…``.
Every form is a POST carrying a CSRF token in a hidden field: the session's
(``PeopleService.csrf_token``) once signed in; before that, the sign-in form's
token is the same HMAC over a random nonce kept in a short-lived cookie, so a
sign-in cannot be forged from another site either. A POST a browser says
came from another site (``Sec-Fetch-Site``, else ``Origin``: ``common.same_origin``)
is refused outright. Responses forbid framing (no clickjacking of an Accept
button) and caching.

Errors a service raises come back as the page again with the message and the
error's status, never as a JSON problem document.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from starlette.responses import Response

from fastpad.api.auth import SESSION_COOKIE
from fastpad.api.routes.session import limit_attempts
from fastpad.errors import Conflict, FastpadError, FieldError, NotFound, PolicyDenied, Unauthenticated, ValidationFailed
from fastpad.notes.ids import is_ulid
from fastpad.review.landing import CHOICES
from fastpad.security.agents import AgentDirectory, ManagedTokens, Revocation
from fastpad.security.principals import Principal
from fastpad.security.tokens import parse_duration
from fastpad.web import pages
from fastpad.web.common import (
    cross_site_refusal, csrf_ok, html_page, local_path, one, read_form, refusal_page, same_origin, secure, see_other,
    signed_in, to_signin,
)

router = APIRouter(include_in_schema=False)

SIGNIN_COOKIE = "fastpad_signin"  # the sign-in form's CSRF nonce
_ACTIONS = ("accept", "accept-some", "reject", "revert")


# ---------------------------------------------------------------------- sign-in



Session = tuple[Principal, str]  # the signed-in person and the session id


async def _form_post(request: Request, *, back: str) -> tuple[Session, dict[str, list[str]]] | Response:
    """A signed-in person's form POST with its CSRF token: (session, form), or the response refusing it."""
    if not same_origin(request):
        return cross_site_refusal(request, back)
    session = signed_in(request)
    if session is None:
        return to_signin(request)
    try:
        form = await read_form(request)
    except ValidationFailed as exc:
        return refusal_page(str(exc), exc.status)
    if not csrf_ok(request, session[1], form):
        return refusal_page("The form's CSRF token is missing or wrong; reload the page.", 403, back=back)
    return session, form

@router.get("/signin")
def signin_form(request: Request, next: str = "/") -> Response:
    target = local_path(next, "/")
    if signed_in(request) is not None:
        return see_other(target)
    nonce = secrets.token_urlsafe(24)
    csrf = request.app.state.deployment.people.csrf_token(_signin_subject(nonce))
    response = html_page(pages.signin_page(csrf, target, signup_open=_signup_open(request)))
    response.set_cookie(SIGNIN_COOKIE, nonce, max_age=3600, path="/signin", secure=secure(request), httponly=True,
                        samesite="strict")
    return response


@router.post("/signin")
async def signin(request: Request) -> Response:
    state = request.app.state
    people = state.deployment.people
    if not same_origin(request):
        return cross_site_refusal(request, "/signin")
    nonce = request.cookies.get(SIGNIN_COOKIE, "")
    try:
        form = await read_form(request)
        limit_attempts(request, "sign-in", one(form, "email"), state.limits.sign_in_per_window)
    except FastpadError as exc:
        return refusal_page(str(exc), exc.status, back="/signin")
    target = local_path(one(form, "next"), "/")
    token = one(form, "csrf_token")
    if not nonce or not people.check_csrf(_signin_subject(nonce), token):
        return refusal_page("The sign-in form expired; load it again.", 403,
                        back=f"/signin?next={quote(target, safe='/')}")
    email, password = one(form, "email"), one(form, "password")

    def open_session() -> str:
        return people.create_session(people.authenticate_password(email, password),
                                     user_agent=request.headers.get("user-agent", ""))[0]

    try:
        session_id = await run_in_threadpool(open_session)
    except Unauthenticated:
        csrf = people.csrf_token(_signin_subject(nonce))
        return html_page(pages.signin_page(csrf, target, error="Wrong email or password.", email=email,
                                           signup_open=_signup_open(request)), 401)
    response = see_other(target)
    response.set_cookie(SESSION_COOKIE, session_id, max_age=people.session_max_age_s, path="/",
                        secure=secure(request), httponly=True, samesite="lax")
    response.delete_cookie(SIGNIN_COOKIE, path="/signin")
    return response


@router.post("/signout")
async def signout(request: Request) -> Response:
    if not same_origin(request):
        return cross_site_refusal(request)
    session = signed_in(request)
    if session is None:
        return see_other("/signin")
    try:
        form = await read_form(request)
    except ValidationFailed as exc:
        return refusal_page(str(exc), exc.status)
    if not csrf_ok(request, session[1], form):
        return refusal_page("The form's CSRF token is missing or wrong; reload the page.", 403)
    await run_in_threadpool(request.app.state.deployment.people.end_session, session[1])
    response = see_other("/signin")
    response.delete_cookie(SESSION_COOKIE, path="/", secure=secure(request), httponly=True, samesite="lax")
    return response


def _signup_open(request: Request) -> bool:
    return request.app.state.deployment.invitations.signup == "open"


def _signin_subject(nonce: str) -> str:
    # Namespaced so a sign-in token can never pass as a session's CSRF token.
    return f"signin:{nonce}"


# ---------------------------------------------------------------------- review


@router.get("/review/{turn_id}")
async def review_page(request: Request, turn_id: str) -> Response:
    session = signed_in(request)
    if session is None:
        return to_signin(request)
    return await _render_review(request, session, turn_id)


async def _render_review(request: Request, session: tuple[Principal, str], turn_id: str, *,
                         message: str | None = None, status: int = 200) -> Response:
    principal, session_id = session
    review_service = request.app.state.deployment.review
    try:
        if not is_ulid(turn_id):
            raise NotFound(detail=f"no turn {turn_id}")
        review = await run_in_threadpool(review_service.review, principal, turn_id)
    except FastpadError as exc:
        return refusal_page(str(exc), exc.status, back="/agent-activity")
    csrf = request.app.state.deployment.people.csrf_token(session_id)
    return html_page(pages.review_page(review, csrf, message=message), status)


@router.post("/review/{turn_id}/{action}")
async def review_action(request: Request, turn_id: str, action: str) -> Response:
    if action not in _ACTIONS:
        return refusal_page(f"There is no action {action!r} here.", 404)
    checked = await _form_post(request, back=f"/review/{turn_id}")
    if isinstance(checked, Response):
        return checked
    session, form = checked
    review_service = request.app.state.deployment.review
    principal = session[0]
    try:
        if not is_ulid(turn_id):
            raise NotFound(detail=f"no turn {turn_id}")
        call = _call(review_service, action, principal, turn_id, form)
        await run_in_threadpool(call)
    except (Conflict, ValidationFailed, PolicyDenied) as exc:
        # The turn is there; show it again with what went wrong (a merge conflict shows its merge view).
        return await _render_review(request, session, turn_id, message=str(exc), status=exc.status)
    except FastpadError as exc:
        return refusal_page(str(exc), exc.status, back="/agent-activity")
    return see_other(local_path(one(form, "next"), f"/review/{turn_id}"))


def _call(service: Any, action: str, principal: Principal, turn_id: str,
          form: dict[str, list[str]]) -> Callable[[], Any]:
    resolutions = {name.split(".", 1)[1]: one(form, name) for name in form if name.startswith("resolution.")}
    if any(choice not in CHOICES for choice in resolutions.values()):
        raise ValidationFailed(detail="choose mine, proposal or suggestion for each conflict",
                               field_errors=[FieldError("resolution", "invalid_choice", ", ".join(CHOICES))])
    if action == "accept":
        return lambda: service.accept(principal, turn_id, resolutions=resolutions)
    if action == "accept-some":
        try:
            op_indexes = [int(value) for value in form.get("op", [])]
        except ValueError as exc:
            raise ValidationFailed(detail="op is an op's number",
                                   field_errors=[FieldError("op", "invalid_type", "a number")]) from exc
        return lambda: service.accept(principal, turn_id, block_ids=form.get("block_id", []), op_indexes=op_indexes,
                                      resolutions=resolutions)
    return lambda: getattr(service, action)(principal, turn_id)


# ---------------------------------------------------------------------- agent activity


@router.get("/agent-activity")
async def activity_page(request: Request) -> Response:
    session = signed_in(request)
    if session is None:
        return to_signin(request)
    return await _render_activity(request, session)


async def _render_activity(request: Request, session: tuple[Principal, str], *, message: str | None = None,
                           status: int = 200) -> Response:
    principal, session_id = session
    try:
        items = await run_in_threadpool(request.app.state.deployment.review.activity, principal)
        comments = await run_in_threadpool(request.app.state.deployment.comments.by_agents, principal)
    except FastpadError as exc:
        return refusal_page(str(exc), exc.status)
    csrf = request.app.state.deployment.people.csrf_token(session_id)
    return html_page(pages.activity_page(items, csrf, comments=comments, message=message), status)


@router.post("/agent-activity/{turn_id}/reviewed")
async def mark_reviewed(request: Request, turn_id: str) -> Response:
    checked = await _form_post(request, back="/agent-activity")
    if isinstance(checked, Response):
        return checked
    session, _form = checked  # the form carries only its CSRF token
    try:
        if not is_ulid(turn_id):
            raise NotFound(detail=f"no turn {turn_id}")
        await run_in_threadpool(request.app.state.deployment.review.mark_reviewed, session[0], turn_id)
    except FastpadError as exc:
        return await _render_activity(request, session, message=str(exc), status=exc.status)
    return see_other("/agent-activity")


# ---------------------------------------------------------------------- settings: agents & tokens


def _directory(request: Request) -> AgentDirectory:
    deployment = request.app.state.deployment
    return AgentDirectory(deployment.store, deployment.tokens)


@router.get("/settings/tokens")
async def tokens_page(request: Request, revoked: str = "") -> Response:
    session = signed_in(request)
    if session is None:
        return to_signin(request)
    return await _render_tokens(request, session, revoked=revoked)


async def _render_tokens(request: Request, session: tuple[Principal, str], *, revoked: str = "",
                         message: str | None = None, status: int = 200) -> Response:
    principal, session_id = session
    directory = _directory(request)

    def load() -> tuple[ManagedTokens, Revocation | None]:
        try:
            revocation = directory.revocation(principal, revoked) if revoked else None
        except NotFound:  # a stale or hand-made ?revoked= names nothing to confirm; the list is still wanted
            revocation = None
        return directory.manageable(principal), revocation

    try:
        managed, revocation = await run_in_threadpool(load)
    except FastpadError as exc:
        return refusal_page(str(exc), exc.status)
    csrf = request.app.state.deployment.people.csrf_token(session_id)
    return html_page(pages.tokens_page(managed, csrf, revocation=revocation, message=message), status)


@router.post("/settings/tokens")
async def mint_token(request: Request) -> Response:
    """Mint an agent token, as ``fp token create`` does, minted by the signed-in person. The answer is
    a page, not a redirect: it carries the secret, which exists nowhere else to redirect to."""
    checked = await _form_post(request, back="/settings/tokens")
    if isinstance(checked, Response):
        return checked
    session, form = checked
    principal, session_id = session
    tokens = request.app.state.deployment.tokens
    try:
        expires_in = parse_duration(one(form, "expires"))
        plaintext, info = await run_in_threadpool(lambda: tokens.create(
            principal.workspace_id, scopes=form.get("scope", []), expires_in=expires_in,
            auto_apply=one(form, "auto_apply") == "on", label=one(form, "label"), minted_by=principal))
    except (ValidationFailed, PolicyDenied) as exc:
        return await _render_tokens(request, session, message=str(exc), status=exc.status)
    except FastpadError as exc:
        return refusal_page(str(exc), exc.status, back="/settings/tokens")
    csrf = request.app.state.deployment.people.csrf_token(session_id)
    return html_page(pages.minted_page(plaintext, info, csrf))


@router.post("/settings/tokens/{token_id}/revoke")
async def revoke_token(request: Request, token_id: str) -> Response:
    checked = await _form_post(request, back="/settings/tokens")
    if isinstance(checked, Response):
        return checked
    session, _form = checked  # the form carries only its CSRF token
    try:
        await run_in_threadpool(_directory(request).revoke, session[0], token_id)
    except FastpadError as exc:
        return refusal_page(str(exc), exc.status, back="/settings/tokens")
    return see_other(f"/settings/tokens?revoked={token_id}")  # the service accepted it, so it is a ULID
