"""The OAuth authorization endpoint, ``/oauth/authorize``: a page, so it lives with the pages.

``GET`` checks the request (``OAuthService``), sends a signed-out browser to
``/signin`` and back, and shows the consent page (``web/consent.py``).
``POST`` is the person's decision: the session, its CSRF token and the origin
are checked as on every page form, the request is checked again from the
hidden fields, and the browser goes back to the client with ``code`` (or
``error=access_denied``), ``state`` and ``iss`` (RFC 9207).

A bad ``client_id`` or ``redirect_uri`` is shown on a page, never redirected:
the redirect URI is not known to be the client's (RFC 6749 §4.1.2.1). Every
other refusal goes back to the client as ``error=`` with ``error_description``.
"""

from __future__ import annotations

from urllib.parse import quote, urlencode, urlsplit

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from starlette.responses import RedirectResponse, Response

from fastpad.api.routes.oauth import AUTHORIZE_PATH, service
from fastpad.errors import FastpadError, ValidationFailed
from fastpad.security.oauth import AuthorizationRequest, OAuthError, OAuthService, echoed_state, parameters
from fastpad.security.principals import Principal
from fastpad.web.consent import SCOPE_FIELD, consent_page
from fastpad.web.common import (
    HEADERS, cross_site_refusal, csrf_ok, html_page, one, read_form, refusal_page, same_origin, see_other, signed_in,
)

router = APIRouter(include_in_schema=False)

# The authorization request's own parameters: what the consent form carries back.
CARRIED = ("response_type", "client_id", "redirect_uri", "state", "scope", "code_challenge", "code_challenge_method",
           "resource")


@router.get(AUTHORIZE_PATH)
async def authorize(request: Request) -> Response:
    oauth = service(request)
    try:
        params = parameters(request.url.query)
    except OAuthError as error:
        return _not_valid(error)
    checked = await _check(oauth, params)
    if not isinstance(checked, AuthorizationRequest):
        return checked
    session = await run_in_threadpool(signed_in, request)
    if session is None:
        return see_other(f"/signin?next={quote(AUTHORIZE_PATH + '?' + request.url.query, safe='/')}")
    return await _consent(request, oauth, session, checked, params)


@router.post(AUTHORIZE_PATH)
async def decide(request: Request) -> Response:
    if not same_origin(request):
        return cross_site_refusal(request)
    try:
        form = await read_form(request)
    except ValidationFailed as exc:
        return refusal_page(str(exc), exc.status)
    params = {name: one(form, name) for name in CARRIED if name in form}
    session = await run_in_threadpool(signed_in, request)
    if session is None:
        return see_other(f"/signin?next={quote(AUTHORIZE_PATH + '?' + urlencode(params), safe='/')}")
    if not csrf_ok(request, session[1], form):
        return refusal_page("The form's CSRF token is missing or wrong; reload the page.", 403)
    oauth = service(request)
    checked = await _check(oauth, params)
    if not isinstance(checked, AuthorizationRequest):
        return checked
    decision = one(form, "decision")
    if decision == "deny":
        return _back(oauth, checked.redirect_uri, checked.state,
                     error="access_denied", error_description="the person denied the request")
    if decision != "approve":
        return refusal_page("Choose Approve or Deny.", 422)
    try:
        code = await run_in_threadpool(oauth.approve, session[0], checked, form.get(SCOPE_FIELD, []))
    except ValidationFailed as exc:
        return await _consent(request, oauth, session, checked, params, message=str(exc), status=exc.status)
    except FastpadError as exc:
        return refusal_page(str(exc), exc.status)
    return _back(oauth, checked.redirect_uri, checked.state, code=code)


async def _check(oauth: OAuthService, params: dict[str, str]) -> AuthorizationRequest | Response:
    """The checked request, or the answer to a bad one: a page, or ``error=`` back to the client."""
    try:
        client, redirect_uri = await run_in_threadpool(oauth.redirect_target, params.get("client_id"),
                                                       params.get("redirect_uri"))
    except OAuthError as error:
        return _not_valid(error)
    try:
        return oauth.authorization_request(client, redirect_uri, params)
    except OAuthError as error:
        return _back(oauth, redirect_uri, echoed_state(params), error=error.error,
                     error_description=error.detail)


async def _consent(request: Request, oauth: OAuthService, session: tuple[Principal, str],
                   checked: AuthorizationRequest, params: dict[str, str], *, message: str | None = None,
                   status: int = 200) -> Response:
    principal, session_id = session
    try:
        consent = await run_in_threadpool(oauth.consent, principal, checked)
    except FastpadError as exc:
        return refusal_page(str(exc), exc.status)
    csrf = request.app.state.deployment.people.csrf_token(session_id)
    page = consent_page(consent, {name: params[name] for name in CARRIED if name in params}, csrf,
                        action=AUTHORIZE_PATH, message=message)
    response = html_page(page, status)
    # A browser holds a form's redirects to form-action too: after the decision it goes to the client.
    response.headers["content-security-policy"] = HEADERS["content-security-policy"].replace(
        "form-action 'self'", f"form-action 'self' {_source(checked.redirect_uri)}")
    return response


def _not_valid(error: OAuthError) -> Response:
    return refusal_page(f"This authorization link is not valid: {error.detail}.", 400)


def _back(oauth: OAuthService, redirect_uri: str, state: str | None, **answer: str) -> Response:
    """The browser back to the client (RFC 6749 §4.1.2), its registered query kept."""
    params = {**answer, **({"state": state} if state is not None else {}), "iss": oauth.issuer}
    separator = "&" if urlsplit(redirect_uri).query else "?"
    return RedirectResponse(redirect_uri + separator + urlencode(params), status_code=303,
                            headers={"cache-control": "no-store", "referrer-policy": HEADERS["referrer-policy"]})


def _source(redirect_uri: str) -> str:
    """The redirect URI as a CSP source: its origin, or its scheme where a host-source cannot say it."""
    parts = urlsplit(redirect_uri)
    if parts.scheme in ("http", "https") and parts.hostname and ":" not in parts.hostname:
        return f"{parts.scheme}://{parts.netloc}"
    return f"{parts.scheme}:"
