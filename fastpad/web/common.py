"""What every page route shares: the pages' security headers, the session, forms and CSRF.

Pages are for a person in a browser: the session cookie is the only credential
they take. Every form is a POST carrying a CSRF token in a hidden field, and a
POST a browser says came from another site is refused outright
(``same_origin``; every form route, ``/device`` and the OAuth consent included,
asks it). Responses forbid framing (no clickjacking of an Accept button) and
caching.
"""

from __future__ import annotations

from urllib.parse import parse_qs, quote, urlsplit

from fastapi import Request
from starlette.responses import HTMLResponse, RedirectResponse

from fastpad.api.auth import SESSION_COOKIE
from fastpad.errors import FieldError, Unauthenticated, ValidationFailed
from fastpad.security.principals import Principal
from fastpad.web import pages
from fastpad.web.html import Markup

FORM = "application/x-www-form-urlencoded"
MAX_FIELDS = 1000  # a review form carries one field per block and conflict
HEADERS = {
    "content-security-policy": "default-src 'none'; style-src 'self' 'unsafe-inline'; form-action 'self'; "
                               "frame-ancestors 'none'; base-uri 'none'",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    # Not no-referrer: under it Chromium sends ``Origin: null`` on a same-origin form POST, which
    # same_origin() must refuse. same-origin still sends no Referer to any other site.
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}
# What Sec-Fetch-Site says when the browser itself vouches for a request: sent by a page of this
# origin, or a navigation the person started (typed, bookmarked).
_OWN_SITE = ("same-origin", "none")


def html_page(markup: Markup, status: int = 200) -> HTMLResponse:
    return HTMLResponse(str(markup), status_code=status, headers=dict(HEADERS))


def see_other(path: str) -> RedirectResponse:
    return RedirectResponse(path, status_code=303, headers={"cache-control": "no-store"})


def local_path(path: str | None, default: str) -> str:
    """A redirect target on this site only: an absolute path, never ``//host`` or a scheme."""
    if not path or not path.startswith("/") or path.startswith("//") or "\\" in path or any(c < " " for c in path):
        return default
    return path


def secure(request: Request) -> bool:
    return request.app.state.base_url.startswith("https://")


def same_origin(request: Request) -> bool:
    """Whether a form POST came from one of this server's own pages, as far as a browser says.

    ``Sec-Fetch-Site`` is the browser's own word (a page cannot set it), so when it is there it
    decides. Otherwise ``Origin`` must be this server: the configured base URL, or the host the
    browser reached (``Origin: null`` is neither). A request with neither header is not from a
    browser; the session cookie and the CSRF field still guard it.
    """
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        return site in _OWN_SITE
    origin = request.headers.get("origin")
    if origin is None:
        return True
    if origin == "null":  # an opaque origin: a sandboxed frame, a file, a data: URL — never this server
        return False
    return _origin_of(origin) == _origin_of(request.app.state.base_url) or \
        urlsplit(origin).netloc == request.headers.get("host", "")


def _origin_of(url: str) -> str:
    parts = urlsplit(url.lower())
    return f"{parts.scheme}://{parts.netloc}"


def cross_site_refusal(request: Request, back: str = "/") -> HTMLResponse:
    """The answer to a form ``same_origin`` refused, in words: what happened and where to go instead."""
    base_url = request.app.state.base_url
    message = f"This form was sent from another site, so it was not accepted. Open Fastpad at {base_url} and try again."
    return html_page(pages.message_page("Sent from another site", message, back=base_url + local_path(back, "/")), 403)


def signed_in(request: Request) -> tuple[Principal, str] | None:
    session_id = request.cookies.get(SESSION_COOKIE)
    if not session_id:
        return None
    try:
        principal = request.app.state.deployment.people.session_principal(session_id)
    except Unauthenticated:
        return None
    state = request.app.state
    state.rate_limiter.hit(principal.rate_key, state.limits.rate_for(principal))
    return principal, session_id


def to_signin(request: Request) -> RedirectResponse:
    return see_other(f"/signin?next={quote(request.url.path, safe='/')}")


async def read_form(request: Request) -> dict[str, list[str]]:
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != FORM:
        raise ValidationFailed(detail=f"this form is sent as {FORM}",
                               field_errors=[FieldError("body", "media_type", FORM)])
    raw = await request.body()
    try:
        return parse_qs(raw.decode("utf-8"), keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValidationFailed(detail="the form could not be read",
                               field_errors=[FieldError("body", "form_invalid", str(exc))]) from exc


def one(form: dict[str, list[str]], name: str) -> str:
    return (form.get(name) or [""])[-1]


def csrf_ok(request: Request, session_id: str, form: dict[str, list[str]]) -> bool:
    people = request.app.state.deployment.people
    return people.check_csrf(session_id, one(form, "csrf_token"))


def refusal_page(message: str, status: int, back: str | None = None) -> HTMLResponse:
    return html_page(pages.message_page("Not done", message, back=back), status)
